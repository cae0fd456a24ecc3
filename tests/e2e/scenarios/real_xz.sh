#!/usr/bin/env bash
# A real multi-threaded compressor: `xz -T2 -c FILE` on ~5 MB of
# deterministic pseudo-random but compressible text, writing the compressed
# stream to its own stdout (redirected to a file).
#   - native and recorded outputs both decompress to the input;
#   - the replay's stdout is byte-identical to the recorded stdout, with the
#     recorded exit status.
# Usage: real_xz.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start real_xz "$@"
need_tool xz cmp
python=/usr/bin/python3
need_file "$python"

# Lines of words from a small vocabulary, chosen by a fixed-seed generator:
# compressible (about 4:1) but not trivially so.
"$python" - input.txt <<'PY' || fail "could not generate the input"
import random, sys
rng = random.Random(20261122)
words = ["record", "replay", "ptrace", "seccomp", "thread", "signal", "futex",
         "trace", "event", "frame", "divergence", "syscall", "scheduler",
         "clone", "execve", "mmap", "buffer", "%08x" % rng.getrandbits(32)]
out, size = [], 0
while size < 5 * 1024 * 1024:
    line = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14)))
    line += " %d\n" % rng.getrandbits(20)
    out.append(line)
    size += len(line)
open(sys.argv[1], "w").write("".join(out))
PY
size=$(stat -c %s input.txt)
[ "$size" -ge $((5 * 1024 * 1024)) ] || fail "input is only $size bytes"

bounded 120 xz -T2 -c input.txt >native.xz 2>native.err
native_status=$?
[ "$native_status" -eq 0 ] || fail "native xz exited $native_status: $(cat native.err)"
xz -dc native.xz | cmp -s - input.txt || fail "native output does not decompress to the input"

record 300 trace record.xz record.err xz -T2 -c input.txt
[ "$status" -eq 0 ] || fail "recorded xz exited $status: $(tail -n 10 record.err)"
xz -dc record.xz | cmp -s - input.txt || fail "recorded output does not decompress to the input"
[ "$(stat -c %s record.xz)" -lt $((size / 2)) ] || fail "recorded output is not compressed"
expect_check_complete trace

# Replay must not need the input file.
rm input.txt || fail "cannot delete input.txt"
expect_same_replay trace record.xz record.err 0 300
pass "$size bytes -> $(stat -c %s record.xz) bytes, replay identical"

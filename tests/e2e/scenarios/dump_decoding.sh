#!/usr/bin/env bash
# `repro dump` decodes syscalls strace-style. Records
# tests/programs/dump_decoding (raw syscalls: opens that succeed and fail,
# writes and reads, stat, rename, unlink, mkdir, mmap, a pipe, sockets, a
# signal) and checks:
#   - the dump lines from its marker access("dump-decoding-start") on are
#     those of dump_decoding.expected: paths, flags, modes, errno names,
#     the bytes written and read, struct fields, socket addresses, the
#     signal's name (after the run's own values are replaced: the temp
#     directory by DIR, pids by PID, addresses by ADDR, the pipe's id);
#   - `dump --json` parses, has one object per event, and each object's
#     "text" is its line of the text dump;
#   - --thread, --syscall, --from/--to filter the text lines too, and bad
#     values are usage errors (64) that say what is wrong.
# Usage: dump_decoding.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
expected=$(realpath "$(dirname "$0")/dump_decoding.expected")
scenario_start dump_decoding "$@"
program=$build_dir/tests/programs/dump_decoding
need_file "$program"
[ -f "$expected" ] || fail "the expected lines '$expected' are missing"
need_tool python3 diff

# Without the fast path, so each syscall is its own event in the order the
# program made it (the fast_path scenario checks the batches' lines).
bounded 60 "$repro" record --no-fast-path -o trace -- "$program" >rec.out 2>rec.err
status=$?
skip_unless_ptrace rec.err
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
bounded 60 "$repro" dump trace >dump.txt 2>dump.err || fail "dump failed: $(cat dump.err)"
start=$(grep -m 1 'access("dump-decoding-start", F_OK)' dump.txt | sed 's/^#\([0-9]*\) .*/\1/')
[ -n "$start" ] || fail "no marker access() in the dump: $(grep -c . dump.txt) lines"

# The run's own values: the temp directory, pids, addresses, the pipe's
# inode; and the preemption point where the signal came (its registers and
# hashes), which is not the decoding's business.
# Only the event lines (and schedule lines), without the header.
normalize() {
  grep -E '^(#[0-9]+ |--- )' | sed -e 's/^#[0-9]* /#N /' \
    -e 's#/tmp/repro-test-[A-Za-z0-9]\{6\}#DIR#g' \
    -e 's/0x7fff[0-9a-f]*/ADDR/g' \
    -e 's/\(gettid\|getpid\)() = [0-9]*/\1() = PID/' \
    -e 's/tgkill([0-9]*, [0-9]*,/tgkill(PID, PID,/' \
    -e 's/si_pid=[0-9]*, si_uid=[0-9]*/si_pid=PID, si_uid=UID/' \
    -e 's/pipe [0-9]*/pipe ID/g' \
    -e 's#files/[0-9a-f]*#files/ID#g' \
    -e '/ preempt at rip /d'
}
bounded 60 "$repro" dump --from "$start" trace 2>from.err | normalize >got.txt ||
  fail "dump --from $start failed: $(cat from.err)"
diff -u "$expected" got.txt >decoding.diff ||
  fail "the decoded lines differ from dump_decoding.expected:
$(cat decoding.diff)"

bounded 60 "$repro" dump --json trace >dump.json 2>json.err || fail "dump --json failed: $(cat json.err)"
events=$("$repro" check trace | sed -n 's/.*complete, \([0-9]*\) events.*/\1/p')
python3 - "$events" <<'PY' || fail "dump --json does not match the text dump"
import json, sys
events = int(sys.argv[1])
lines = [json.loads(line) for line in open("dump.json")]
assert lines[0]["kind"] == "header", lines[0]
every = lines[1:]
assert [e["index"] for e in every] == list(range(events)), (len(every), events)
text = [l.rstrip("\n") for l in open("dump.txt") if l.startswith("#") and not l.startswith("# ")]
assert [e["text"] for e in every] == text, "the JSON texts are not the dump's lines"
opens = [e for e in every if e["kind"] == "syscall" and e["syscall"] == "openat"
         and e["text"].endswith(", O_RDONLY) = -1 ENOENT (No such file or directory)")]
assert opens and opens[-1]["inputs"][0]["text"].endswith("/missing"), opens
PY

# Filters apply to the text lines as to the JSON objects.
bounded 60 "$repro" dump --syscall openat,access --from "$start" trace >some.txt 2>some.err ||
  fail "dump --syscall failed: $(cat some.err)"
[ "$(grep -c '^#[0-9]' some.txt)" -eq 4 ] ||
  fail "--syscall openat,access from the marker on shows $(grep -c '^#[0-9]' some.txt) events, not 4: $(grep '^#[0-9]' some.txt)"
grep -q '^#[0-9]* t0 syscall openat(AT_FDCWD, "/tmp/repro-test-[A-Za-z0-9]*/data.txt", O_RDONLY|O_CLOEXEC) = 3$' some.txt ||
  fail "no decoded O_RDONLY|O_CLOEXEC open: $(grep openat some.txt)"
bounded 60 "$repro" dump --thread t0 --from "$start" trace >t0.txt 2>t0.err ||
  fail "dump --thread t0 failed: $(cat t0.err)"
after_start=$(awk -v start="$start" '/^#[0-9]/ && substr($1, 2) + 0 >= start' dump.txt | wc -l)
[ "$(grep -c '^#[0-9]' t0.txt)" -eq "$after_start" ] ||
  fail "--thread t0 from the marker on shows $(grep -c '^#[0-9]' t0.txt) events, not $after_start"
bounded 60 "$repro" dump --thread 1 trace >none.txt 2>none.err ||
  fail "dump --thread 1 of a one-thread trace failed: $(cat none.err)"
[ "$(grep -c '^#[0-9]' none.txt)" -eq 0 ] || fail "--thread 1 shows events of a trace with one thread"
grep -q "none of the trace's $events events passes the filters" none.err ||
  fail "an empty result is not explained: $(cat none.err)"
check_usage_error() {
  local what=$1 pattern=$2
  shift 2
  bounded 60 "$repro" dump "$@" trace >bad.out 2>bad.err
  status=$?
  [ "$status" -eq 64 ] || fail "$what exited $status, not 64: $(cat bad.err)"
  grep -q -- "$pattern" bad.err || fail "$what: the error does not say '$pattern': $(cat bad.err)"
}
check_usage_error "--from after --to" "--from 9 is after --to 5" --from 9 --to 5
check_usage_error "an unknown syscall" "no syscall named 'opnat'" --syscall openat,opnat
check_usage_error "a thread that is not a number" "--thread" --thread t1x
pass "$(grep -c . got.txt) decoded lines as expected; --json has the $events events with their text; filters and bad values"

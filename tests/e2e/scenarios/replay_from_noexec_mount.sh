#!/usr/bin/env bash
# A trace on a file system mounted noexec still replays. Replay maps the
# loader and the libraries from the trace's copies of them; there they
# cannot be mapped executable, so replay falls back to anonymous memory
# filled with their bytes. The recorded program runs two CPU-bound threads
# (preemption points in hot loops, whose memory hashes cover the
# libraries' data) and forks a child that execs (a new loader and libc).
# The trace is copied onto a tmpfs mounted noexec in a private mount
# namespace; skipped (77) where such a namespace is not permitted.
# Usage: replay_from_noexec_mount.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start replay_from_noexec_mount "$@"
need_tool unshare mount cp bash
threads=$build_dir/tests/programs/cpu_bound_threads
need_file "$threads"

unshare --mount true 2>/dev/null || skip "no private mount namespace here (unshare --mount)"

cat >run.sh <<'SCRIPT'
"$threads" && bash -c 'echo child $((6 * 7))'
SCRIPT
record 120 trace record.out record.err env threads="$threads" bash run.sh
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -q '^child 42$' record.out || fail "the recorded child printed no 'child 42': $(cat record.out)"

# Inside the namespace: mount, prove noexec holds (a copy of true cannot
# run from there), copy the trace, replay it.
mkdir noexec
bounded 120 unshare --mount --propagation private bash -c '
  mount -t tmpfs -o noexec tmpfs noexec || exit 90
  cp "$(type -P true)" noexec/true && ! noexec/true 2>/dev/null || exit 91
  cp -r trace noexec/trace || exit 92
  exec "$1" replay noexec/trace' _ "$repro" >replay.out 2>replay.err
status=$?
[ "$status" -ne 90 ] || skip "cannot mount a tmpfs here: $(tail -n 1 replay.err)"
[ "$status" -ne 91 ] || fail "the tmpfs mounted noexec still runs programs"
[ "$status" -ne 92 ] || fail "cannot copy the trace onto the tmpfs"
[ "$status" -eq 0 ] || fail "replay from the noexec mount exited $status: $(tail -n 20 replay.err)"
cmp -s record.out replay.out ||
  fail "replay stdout differs from the recording: $(diff record.out replay.out | head -n 20)"
cmp -s <(program_stderr record.err) <(program_stderr replay.err) ||
  fail "replay stderr differs from the recording"
pass "replayed from a noexec mount, libraries filled in anonymous memory"

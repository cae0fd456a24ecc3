#!/usr/bin/env bash
# Records PROGRAM with repro, replays the trace, and checks that
#   - the recorded run behaves like a native run (same exit status, same
#     output except lines starting with "~ ", which hold values that differ
#     between any two runs), and ends with EXIT-SUCCESS;
#   - `repro check` accepts the trace and `repro dump` lists its syscalls;
#   - the replay prints byte-identical stdout and stderr and exits with the
#     same status as the recording.
# Usage: run_test.sh REPRO PROGRAM VARIANT [ARGS...]
#   VARIANT: default | no-pin (repro and the program not bound to one CPU:
#            other timings, other interleavings) | short-slices (1 ms time
#            slices: many preemptions)
# Exit 0 pass, 1 fail, 77 skip (ptrace not permitted here).
# On failure the work directory is kept and the replay command printed.
set -u
repro=$1 program=$2 variant=$3
shift 3
name=$(basename "$program")
work=$(mktemp -d "${TMPDIR:-/tmp}/repro-e2e-$name-XXXXXX")
trace="$work/trace"

record_flags=()
case "$variant" in
  default) ;;
  no-pin) record_flags=(--no-pin) ;;
  short-slices) record_flags=(--time-slice-ms 1) ;;
  *) echo "unknown variant '$variant'"; exit 2 ;;
esac

fail() {
  echo "FAIL [$name/$variant]: $*"
  echo "  work directory kept: $work"
  echo "  replay with: $repro replay --events $trace"
  exit 1
}
# repro's own lines on stderr ("repro: recording to ...") are not the program's.
program_stderr() { grep -v '^repro: ' "$1" || true; }
deterministic() { grep -v '^~ ' "$1" || true; }

cd "$work" || exit 1
"$program" "$@" >native.out 2>native.err
native_status=$?

"$repro" record -o "$trace" "${record_flags[@]}" -- "$program" "$@" >record.out 2>record.err
record_status=$?
if grep -q 'ptrace is not permitted' record.err; then
  echo "SKIP: ptrace is not permitted here"
  exit 77
fi
[ "$record_status" -eq "$native_status" ] ||
  fail "recorded exit status $record_status, native $native_status; stderr: $(tail -n 5 record.err)"
diff <(deterministic native.out) <(deterministic record.out) >record.diff ||
  fail "recorded output differs from native: $(head -n 20 record.diff)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"

"$repro" check "$trace" >check.out 2>&1 || fail "repro check: $(cat check.out)"
grep -q ': complete, ' check.out || fail "trace not complete: $(cat check.out)"
"$repro" dump "$trace" >dump.out 2>dump.err || fail "repro dump failed: $(tail -n 3 dump.err)"
grep -q ' syscall ' dump.out || fail "repro dump lists no syscalls"

"$repro" replay "$trace" >replay.out 2>replay.err
replay_status=$?
[ "$replay_status" -eq "$record_status" ] ||
  fail "replay exit status $replay_status, recorded $record_status: $(tail -n 30 replay.err)"
cmp -s record.out replay.out ||
  fail "replay stdout differs: $(diff record.out replay.out | head -n 20)"
cmp -s <(program_stderr record.err) <(program_stderr replay.err) ||
  fail "replay stderr differs: $(diff <(program_stderr record.err) <(program_stderr replay.err) | head -n 20)"

echo "PASS [$name/$variant]: $(grep -c . dump.out) trace lines, exit $record_status"
rm -rf "$work"
exit 0

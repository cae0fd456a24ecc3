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
#            slices: many preemptions) | tsc-patch (REPRO_TSC=patch:
#            rdtsc patched in the code, as on hosts that cannot trap it;
#            the trace must list patched sites) | tsc-patch-short-slices
#            (and slices measured in wall-clock time, REPRO_SLICE_CLOCK=wall,
#            as on a kernel without schedstat; REPRO_WCHAN=off, as where
#            /proc/TID/wchan names no sleeper) |
#            trap-to-patch (recorded trapping rdtsc, replayed patching it)
#            | patch-to-trap (the other way round) | chaos (the seeded
#            chaos scheduler, seed 1, slices of 1 to 9 ms) | no-fast-path
#            (record --no-fast-path: every syscall stops at repro, none is
#            logged by the preloaded library; the trace must hold no
#            syscall-batch event)
# Exit 0 pass, 1 fail, 77 skip (ptrace not permitted here).
# On failure the work directory is kept and the replay command printed.
set -u
repro=$1 program=$2 variant=$3
shift 3
name=$(basename "$program")
work=$(mktemp -d "${TMPDIR:-/tmp}/repro-e2e-$name-XXXXXX")
trace="$work/trace"

record_flags=()
# REPRO_TSC for the recording and for the replay (empty: as inherited).
record_tsc=${REPRO_TSC:-} replay_tsc=${REPRO_TSC:-}
slice_clock=${REPRO_SLICE_CLOCK:-}
wchan=${REPRO_WCHAN:-}
case "$variant" in
  default) ;;
  no-pin) record_flags=(--no-pin) ;;
  short-slices) record_flags=(--time-slice-ms 1) ;;
  tsc-patch) record_tsc=patch replay_tsc=patch ;;
  tsc-patch-short-slices)
    record_tsc=patch replay_tsc=patch slice_clock=wall wchan=off record_flags=(--time-slice-ms 1) ;;
  trap-to-patch) record_tsc=trap replay_tsc=patch ;;
  patch-to-trap) record_tsc=patch replay_tsc=trap ;;
  chaos) record_flags=(--chaos --seed 1 --time-slice-ms 5) ;;
  no-fast-path) record_flags=(--no-fast-path) ;;
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

REPRO_TSC=$record_tsc REPRO_SLICE_CLOCK=$slice_clock REPRO_WCHAN=$wchan "$repro" record -o "$trace" "${record_flags[@]}" -- "$program" "$@" \
  >record.out 2>record.err
record_status=$?
if grep -q 'ptrace is not permitted' record.err; then
  echo "SKIP: ptrace is not permitted here"
  exit 77
fi
if grep -q 'REPRO_TSC=trap, but this host does not trap rdtsc' record.err; then
  echo "SKIP: this host cannot trap rdtsc: $(grep -o 'does not trap rdtsc.*' record.err)"
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
if [ "$variant" = no-fast-path ] || [ "$variant" = chaos ]; then
  ! grep -q ' syscall-batch ' dump.out || fail "syscall-batch events without the fast path"
fi
if [ "$record_tsc" = patch ]; then
  # Every program here is dynamically linked: ld.so reads rdtsc at start.
  grep -q '^# rdtsc patched in the program.s code (tsc mode patch)' dump.out ||
    fail "the header does not say patching mode: $(grep '^# rdtsc' dump.out)"
  grep -q ' rdtsc-patch [0-9]* sites\? in .*/ld-linux' dump.out ||
    fail "no rdtsc sites patched in ld.so"
fi

REPRO_TSC=$replay_tsc "$repro" replay "$trace" >replay.out 2>replay.err
replay_status=$?
if grep -q 'REPRO_TSC=trap, but this host does not trap rdtsc' replay.err; then
  echo "SKIP: this host cannot trap rdtsc: $(grep -o 'does not trap rdtsc.*' replay.err)"
  rm -rf "$work"
  exit 77
fi
[ "$replay_status" -eq "$record_status" ] ||
  fail "replay exit status $replay_status, recorded $record_status: $(tail -n 30 replay.err)"
cmp -s record.out replay.out ||
  fail "replay stdout differs: $(diff record.out replay.out | head -n 20)"
cmp -s <(program_stderr record.err) <(program_stderr replay.err) ||
  fail "replay stderr differs: $(diff <(program_stderr record.err) <(program_stderr replay.err) | head -n 20)"

echo "PASS [$name/$variant]: $(grep -c . dump.out) trace lines, exit $record_status"
rm -rf "$work"
exit 0

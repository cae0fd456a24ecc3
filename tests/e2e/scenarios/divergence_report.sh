#!/usr/bin/env bash
# A replay that stops following the trace exits 75 with a report. The trace
# of scenario_divergence_getpid is edited by replacing its stored copy of the
# executable (DIR/files/<id>, named by the `exec` event in `repro dump`)
# with scenario_divergence_getppid, identical but for the syscall it makes.
# The replay must exit 75 and report the divergence: "diverged", the
# expected (recorded) getpid, the observed getppid, and a backtrace. Nothing
# outside the trace is modified (the stored copy may be a hard link).
# Usage: divergence_report.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start divergence_report "$@"
recorded_program=$build_dir/tests/e2e/scenarios/scenario_divergence_getpid
variant_program=$build_dir/tests/e2e/scenarios/scenario_divergence_getppid
need_file "$recorded_program"
need_file "$variant_program"
sums_before=$(sha256sum "$recorded_program" "$variant_program")

record 60 trace record.out record.err "$recorded_program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
expect_check_complete trace
bounded 60 "$repro" dump trace >dump.out 2>dump.err || fail "repro dump failed: $(tail -n 3 dump.err)"
grep -Eq ' syscall getpid\(\) = [0-9]+' dump.out || fail "the trace has no getpid syscall"
grep -Eq ' syscall getppid\(' dump.out && fail "the recorded program already calls getppid"

# The unedited trace replays (so the divergence below comes from the edit).
expect_same_replay trace record.out record.err 0 60

exec_line=$(grep -F " exec $recorded_program (file " dump.out | head -n 1)
[ -n "$exec_line" ] || fail "repro dump shows no 'exec $recorded_program (file ID)' event"
id=${exec_line##*(file }
id=${id%)}
[ -f "trace/files/$id" ] || fail "the exec event names file '$id', not in trace/files/"
cmp -s "trace/files/$id" "$recorded_program" ||
  fail "trace/files/$id is not a copy of $recorded_program"
cp --remove-destination "$variant_program" "trace/files/$id" || fail "cannot replace trace/files/$id"

replay 60 trace replay.out replay.err
[ "$status" -eq 75 ] ||
  fail "replay of the edited trace exited $status, not 75: $(tail -n 20 replay.err)"
grep -q 'diverged' replay.err || fail "no 'diverged' in the report: $(tail -n 20 replay.err)"
grep -Eq 'expected.*\bgetpid\b' replay.err ||
  fail "the report does not say getpid was expected: $(tail -n 20 replay.err)"
grep -Eq 'observed.*\bgetppid\b' replay.err ||
  fail "the report does not say getppid was observed: $(tail -n 20 replay.err)"
grep -qi 'backtrace' replay.err || fail "the report has no backtrace: $(tail -n 20 replay.err)"
# The syscall is made by libc's syscall(), called from main: the backtrace
# must unwind through libc to a frame named main.
grep -A 20 -i 'backtrace' replay.err | grep -Eq '#[0-9]+ 0x[0-9a-f]+ main( |$)' ||
  fail "the backtrace does not reach main: $(grep -A 20 -i backtrace replay.err)"
if grep -q 'after the syscall' replay.out; then
  fail "the diverged replay went on past the syscall: $(cat replay.out)"
fi

[ "$(sha256sum "$recorded_program" "$variant_program")" = "$sums_before" ] ||
  fail "the scenario programs outside the trace were modified"
pass "exit 75, $(grep -m1 'expected' replay.err | sed 's/^ *//'); $(grep -m1 'observed' replay.err | sed 's/^ *//')"

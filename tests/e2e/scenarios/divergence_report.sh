#!/usr/bin/env bash
# A replay that stops following the trace exits 75 with a report. The
# program (divergence_program.c) makes getpid when DIVERGENCE_SYSCALL is
# "getpid", getppid otherwise. Recorded with DIVERGENCE_SYSCALL=getpid, it
# replays; recorded so with `--redact-env DIVERGENCE_SYSCALL`, its replay
# gets filler in place of the value, makes getppid, and must exit 75 and
# report the divergence: "diverged", the expected (recorded) getpid, the
# observed getppid, and a backtrace. (Editing the trace's copy of the
# executable no longer gets that far: replay refuses a copy whose bytes do
# not match its content id, see damaged_file_copies.sh.)
# Usage: divergence_report.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start divergence_report "$@"
program=$build_dir/tests/e2e/scenarios/scenario_divergence
need_file "$program"
export DIVERGENCE_SYSCALL=getpid

record 60 plain record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
expect_check_complete plain
# The trace without redaction replays (so the divergence below comes from
# the value the replay lacks).
expect_same_replay plain record.out record.err 0 60

bounded 60 "$repro" record -o trace --redact-env '^DIVERGENCE_SYSCALL$' -- "$program" \
  >record.out 2>record.err
status=$?
skip_unless_ptrace record.err
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the redacted recording's output"
expect_check_complete trace
bounded 60 "$repro" dump trace >dump.out 2>dump.err || fail "repro dump failed: $(tail -n 3 dump.err)"
grep -Eq ' syscall getpid\(\) = [0-9]+' dump.out || fail "the trace has no getpid syscall"
grep -Eq ' syscall getppid\(' dump.out && fail "the recorded program already calls getppid"

replay 60 trace replay.out replay.err
[ "$status" -eq 75 ] ||
  fail "replay of the redacted trace exited $status, not 75: $(tail -n 20 replay.err)"
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

pass "exit 75, $(grep -m1 'expected' replay.err | sed 's/^ *//'); $(grep -m1 'observed' replay.err | sed 's/^ *//')"

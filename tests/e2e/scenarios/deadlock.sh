#!/usr/bin/env bash
# Deadlock detection (tracer/deadlock.h): when every thread sleeps in a wait
# only another recorded thread could end, `record` says so and ends the run
# instead of hanging; the trace replays to the same point.
#   1. futex (ABBA), pipe (two processes), wait4 (a parent waits for a
#      child that waits for it) and self (a thread relocking its mutex):
#      record exits 76 within seconds, its report names each thread's wait
#      and backtrace (the program's own functions); the trace is complete,
#      `dump` shows the deadlock event, and replay exits 76 with its own
#      report naming the same functions, 3 times out of 3.
#   2. No false report: threads and a child that are only slow (a mutex held
#      across a sleep, a pipe written after one, a child sleeping before its
#      exit), a wait a timer's signal handler ends, and a read of a pipe
#      whose writer is outside the recording: each records and exits 0.
# Usage: deadlock.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start deadlock "$@"
program=$build_dir/tests/e2e/scenarios/scenario_deadlock
need_file "$program"

# expect_deadlock MODE WAIT_REGEX FUNCTION: the mode deadlocks as described.
expect_deadlock() {
  local mode=$1 wait=$2 function=$3
  record 60 "$mode.trace" "$mode.out" "$mode.err" "$program" "$mode"
  [ "$status" -eq 76 ] || fail "$mode: record exited $status, not 76: $(tail -n 5 "$mode.err")"
  grep -q '^repro: deadlock: every thread waits for another recorded thread' "$mode.err" ||
    fail "$mode: no deadlock report: $(cat "$mode.err")"
  grep -qE "^repro: t[0-9]+ \(tid [0-9]+\) in $wait" "$mode.err" ||
    fail "$mode: the report does not name the wait '$wait': $(cat "$mode.err")"
  grep -qE "^repro:   #[0-9]+ 0x[0-9a-f]+ $function " "$mode.err" ||
    fail "$mode: no backtrace frame in $function: $(cat "$mode.err")"
  "$repro" check "$mode.trace" >check.out 2>&1 || fail "$mode: repro check: $(cat check.out)"
  grep -q ': complete, ' check.out || fail "$mode: the trace is not complete: $(cat check.out)"
  "$repro" dump "$mode.trace" >dump.out 2>&1 || fail "$mode: dump failed: $(tail -n 3 dump.out)"
  grep -qE '^#[0-9]+ t[0-9]+ deadlock' dump.out || fail "$mode: dump shows no deadlock event"
  for run in 1 2 3; do
    replay 60 "$mode.trace" replay.out replay.err
    [ "$status" -eq 76 ] || fail "$mode: replay $run exited $status, not 76: $(tail -n 5 replay.err)"
    grep -q '^repro: deadlock, as recorded: every thread waits' replay.err ||
      fail "$mode: replay $run gave no deadlock report: $(cat replay.err)"
    grep -qE "^repro:   #[0-9]+ 0x[0-9a-f]+ $function " replay.err ||
      fail "$mode: replay $run's backtraces miss $function: $(cat replay.err)"
    diff <(program_stderr "$mode.err"; cat "$mode.out") <(program_stderr replay.err; cat replay.out) \
      >/dev/null || fail "$mode: replay $run printed other program output"
  done
}

expect_deadlock futex 'futex (wait|lock) on 0x[0-9a-f]+ \(no timeout\)' abba_deadlock
grep -c '^repro: t[0-9]* (tid' futex.err | grep -qx 2 || fail "futex: not two threads in the report"
grep -qE 'lock_second_then_first' futex.err || fail "futex: the other thread's function is missing"
expect_deadlock pipe 'read from a pipe \(fd [0-9]+, inode [0-9]+\) whose writers are all recorded' pipe_cycle
! grep -q "leaving" pipe.err || fail "pipe: a notice of processes left running: $(cat pipe.err)"
expect_deadlock wait4 'wait4 for pid [0-9]+' wait_cycle
grep -qE 'in read from a pipe' wait4.err || fail "wait4: the child's read is not in the report"
expect_deadlock self 'futex (wait|lock) on 0x' self_deadlock

for mode in slow timer; do
  record 60 "$mode.trace" "$mode.out" "$mode.err" "$program" "$mode"
  [ "$status" -eq 0 ] || fail "$mode: record exited $status: $(tail -n 5 "$mode.err")"
  ! grep -q 'deadlock' "$mode.err" || fail "$mode: a false deadlock report: $(cat "$mode.err")"
  grep -qx 'EXIT-SUCCESS' "$mode.out" || fail "$mode: the program did not finish"
done

# `cat` reads a pipe whose writer (a subshell of this script) sleeps first.
(sleep 2; echo late) | bounded 60 "$repro" record -o outside.trace -- /bin/cat >outside.out 2>outside.err
status=$?
skip_unless_ptrace outside.err
[ "$status" -eq 0 ] || fail "outside: record exited $status: $(tail -n 5 outside.err)"
! grep -q 'deadlock' outside.err || fail "outside: a false deadlock report: $(cat outside.err)"
grep -qx 'late' outside.out || fail "outside: cat did not read what the writer wrote late"

pass "futex, pipe, wait4 and self deadlocks reported and replayed 3/3 (exit 76);" \
  "slow threads, a timer's wake-up and an outside writer gave no report"

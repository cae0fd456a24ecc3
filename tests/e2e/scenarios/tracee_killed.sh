#!/usr/bin/env bash
# The recorded program killed from outside with SIGKILL (`kill -9 PID`)
# while it runs. SIGKILL has no stop repro could see coming: the program is
# just gone. Two programs:
#   1. a shell loop printing a line every 50 ms (killed anywhere: in a
#      sleep's wait, between syscalls, in a vfork);
#   2. a vfork parent killed while its child has not exec'd yet (the child
#      borrows the dead parent's memory until it execs `echo child`);
#   3. a program creating 3000 threads that wait in pause(), killed while
#      it creates them, four times at different moments: its threads die
#      in their waits, its main thread in or around clone, and a thread it
#      was creating may die before repro heard of it.
# Each time: repro records to the end (the child of 2 still runs and
# prints), exits 137 (128 + SIGKILL) as the program's status, the trace is
# complete, and the replay ends the same way: status 137, same output.
# Usage: tracee_killed.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start tracee_killed "$@"
need_tool sh sleep
vfork_program=$build_dir/tests/e2e/scenarios/scenario_killed_in_vfork
threads_program=$build_dir/tests/e2e/scenarios/scenario_many_tasks
need_file "$vfork_program"
need_file "$threads_program"

# record_and_kill NAME DELAY PROGRAM...: records PROGRAM, which writes its pid
# to NAME.pid; kills that pid with SIGKILL DELAY seconds after it did; waits
# for repro and sets $status.
record_and_kill() {
  local name=$1 delay=$2 pid recorder
  shift 2
  start_background "$repro" record -o "trace-$name" -- "$@" >"$name.out" 2>"$name.err"
  recorder=$background_pid
  wait_for 30 test -s "$name.pid" || {
    skip_unless_ptrace "$name.err"
    fail "$name: the program did not start: $(tail -n 5 "$name.err")"
  }
  sleep "$delay"
  pid=$(cat "$name.pid")
  kill -KILL "$pid" || fail "$name: cannot kill the program (pid $pid)"
  wait_for 30 eval '! kill -0 "$recorder" 2>/dev/null' ||
    fail "$name: repro still runs 30 s after the program was killed"
  wait "$recorder"
  status=$?
  [ "$status" -eq 137 ] || fail "$name: record exited $status, not 137: $(tail -n 5 "$name.err")"
  grep -Eq 'terminate called|Segmentation|Aborted|internal error' "$name.err" &&
    fail "$name: repro failed: $(tail -n 5 "$name.err")"
  expect_check_complete "trace-$name"
  expect_same_replay "trace-$name" "$name.out" "$name.err" 137 60
}

loop='echo $$ >"$1"; i=0; while :; do i=$((i + 1)); echo "tick $i"; sleep 0.05; done'
record_and_kill loop 1 sh -c "$loop" sh "$work/loop.pid"
grep -q '^tick 3$' loop.out || fail "loop: the program printed less than 3 ticks: $(cat loop.out)"

record_and_kill vfork 0.3 "$vfork_program" "$work/vfork.pid"
[ "$(cat vfork.out)" = "$(printf 'before vfork\nchild')" ] ||
  fail "vfork: the output is not the parent's line and the child's: $(cat vfork.out)"

threads=
for delay in 0.2 0.5 0.8 1.1; do
  record_and_kill "threads-$delay" "$delay" "$threads_program" blocked 3000 "$work/threads-$delay.pid"
  threads+=" $(grep -c ' thread-start ' <("$repro" dump "trace-threads-$delay"))"
done

pass "killed in a loop after $(grep -c '^tick ' loop.out) ticks, in vfork, and with" \
  "$threads threads; all complete, status 137, replayed the same"

#!/usr/bin/env bash
# Processes the program leaves running when its first process exits
# (daemons, background jobs, stopped children): recording never hangs on
# them, says what it does, and the trace replays.
#   1. `sleep 60 &` with --linger 1: repro names the leftover, stops it
#      with SIGKILL after about a second, exits with the program's status;
#      the trace is complete and replays identical, twice.
#   2. A background job that ends by itself within the default linger: it
#      is recorded to its end (its late line is in the output), nothing is
#      stopped, and the replay prints both lines.
#   3. A leftover stopped by SIGSTOP, with --linger inf: no one recorded can
#      continue it, so repro stops it at once instead of waiting forever.
#   4. --linger inf and a running leftover: SIGINT to repro stops the
#      leftover; the recording ends complete with the program's status.
# Usage: leftover_processes.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start leftover_processes "$@"
need_tool sh sleep

# record_with LINGER NAME SCRIPT: records `sh -c SCRIPT` into trace-NAME.
record_with() {
  local linger=$1 name=$2 script=$3
  bounded 40 "$repro" record --linger "$linger" -o "trace-$name" -- sh -c "$script" \
    >"$name.out" 2>"$name.err"
  status=$?
  skip_unless_ptrace "$name.err"
}

started=$SECONDS
record_with 1 daemon 'sleep 60 & echo "started $!"; exit 3'
elapsed=$((SECONDS - started))
[ "$status" -eq 3 ] || fail "daemon: record exited $status, not the program's 3: $(cat daemon.err)"
((elapsed < 30)) || fail "daemon: record took ${elapsed}s: it waited for the leftover"
grep -q 'the program has exited, leaving 1 process running: [0-9]* (' daemon.err ||
  fail "daemon: no notice naming the leftover: $(cat daemon.err)"
grep -q 'stopping the process the program left running (SIGKILL)' daemon.err ||
  fail "daemon: no notice that the leftover was stopped: $(cat daemon.err)"
expect_check_complete trace-daemon
for run in 1 2; do
  expect_same_replay trace-daemon daemon.out daemon.err 3
done

record_with 10 late '(sleep 0.3; echo late) & echo early'
[ "$status" -eq 0 ] || fail "late: record exited $status: $(cat late.err)"
[ "$(cat late.out)" = "$(printf 'early\nlate')" ] ||
  fail "late: the background job was not recorded to its end: $(cat late.out)"
grep -q 'stopping the process' late.err && fail "late: repro stopped a job that ended by itself: $(cat late.err)"
expect_check_complete trace-late
expect_same_replay trace-late late.out late.err 0

record_with inf stopped 'sleep 60 & kill -STOP $!; echo stopped'
[ "$status" -eq 0 ] || fail "stopped: record exited $status: $(cat stopped.err)"
grep -q 'all are stopped by signals' stopped.err ||
  fail "stopped: repro did not say why it stopped the leftover: $(cat stopped.err)"
expect_check_complete trace-stopped
expect_same_replay trace-stopped stopped.out stopped.err 0

start_background "$repro" record --linger inf -o trace-interrupted -- \
  sh -c 'sleep 60 & echo waiting' >interrupted.out 2>interrupted.err
recorder_pid=$background_pid
wait_for 30 grep -q 'leaving 1 process running' interrupted.err ||
  fail "interrupted: no leftover notice: $(cat interrupted.err)"
kill -INT "$recorder_pid"
wait_for 30 eval '! kill -0 "$recorder_pid" 2>/dev/null' ||
  fail "interrupted: repro still runs 30 s after SIGINT"
wait "$recorder_pid"
status=$?
[ "$status" -eq 0 ] || fail "interrupted: record exited $status: $(cat interrupted.err)"
expect_check_complete trace-interrupted
expect_same_replay trace-interrupted interrupted.out interrupted.err 0

pass "a daemon stopped after --linger 1 (${elapsed}s), a job recorded to its end, a stopped" \
  "leftover stopped at once, SIGINT after the program's end; all complete and replayed"

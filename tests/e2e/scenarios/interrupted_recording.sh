#!/usr/bin/env bash
# A recording that does not finish leaves a readable, incomplete trace.
# The program is a shell loop that ignores SIGINT and prints a line every
# 50 ms, with a `sleep 300` child started in the background first. Two ways
# to stop recording it after about a second:
#   - SIGINT to repro twice: the first goes to the program (which ignores it,
#     so recording goes on), the second stops recording;
#   - SIGKILL to repro.
# Either way neither the program nor its background child outlives repro
# (checked by pid), and then:
#   - `repro check` says "incomplete, N valid events" with N > 0, exit 65;
#   - `repro dump` lists the N events;
#   - `repro replay` refuses the trace (exit 65);
#   - `repro replay --allow-incomplete` replays the recorded prefix: it prints
#     a nonempty prefix of the recorded output and neither diverges nor
#     crashes (its exit status is not otherwise specified: 137 when the trace
#     ends with the program killed by repro, 0 when it just stops).
# Usage: interrupted_recording.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start interrupted_recording "$@"
need_tool sh sleep

loop='trap "" INT; sleep 300 & echo $! >"$1.child"; echo $$ >"$1"; i=0; while :; do i=$((i + 1)); echo "tick $i"; sleep 0.05; done'

# start_recording NAME: records the loop into trace-NAME in the background;
# sets $recorder_pid and $program_pid once the program printed 3 lines.
start_recording() {
  local name=$1
  start_background "$repro" record -o "trace-$name" -- sh -c "$loop" sh "$work/$name.pid" \
    >"$name.out" 2>"$name.err"
  recorder_pid=$background_pid
  wait_for 30 eval '[ "$(grep -c "^tick " "$name.out")" -ge 3 ]' || {
    skip_unless_ptrace "$name.err"
    fail "$name: the recorded program printed no ticks: $(tail -n 5 "$name.err")"
  }
  program_pid=$(cat "$name.pid")
  child_pid=$(cat "$name.pid.child")
  sleep 1
}

# expect_no_tracee NAME: the program and its child are gone (20 s at most).
expect_no_tracee() {
  wait_gone "$program_pid" "$1: the recorded program, after repro stopped,"
  wait_gone "$child_pid" "$1: the program's background child, after repro stopped,"
}

# wait_gone PID WHAT: PID must exit within 20 s.
wait_gone() {
  wait_for 20 eval '! is_running "$1"' || {
    kill -KILL "$1" 2>/dev/null
    fail "$2 (pid $1) is still running"
  }
}

# check_incomplete NAME: the assertions on trace-NAME.
check_incomplete() {
  local name=$1 trace=trace-$1 events
  bounded 30 "$repro" check "$trace" >"$name.check" 2>&1
  status=$?
  [ "$status" -eq 65 ] || fail "$name: repro check exited $status, not 65: $(cat "$name.check")"
  events=$(sed -n 's/.*: incomplete, \([0-9][0-9]*\) valid events.*/\1/p' "$name.check")
  [ -n "$events" ] || fail "$name: repro check does not say 'incomplete, N valid events': $(cat "$name.check")"
  [ "$events" -gt 0 ] || fail "$name: repro check finds no valid events: $(cat "$name.check")"

  bounded 30 "$repro" dump "$trace" >"$name.dump" 2>"$name.dump.err"
  status=$?
  [ "$(grep -c '^#[0-9]* t[0-9]* ' "$name.dump")" -eq "$events" ] ||
    fail "$name: repro dump (exit $status) lists $(grep -c '^#[0-9]* t[0-9]* ' "$name.dump") events, check says $events: $(tail -n 3 "$name.dump.err")"
  grep -q ' syscall write(1, ' "$name.dump" || fail "$name: repro dump shows no write to stdout"

  replay 30 "$trace" "$name.replay.out" "$name.replay.err"
  [ "$status" -eq 65 ] ||
    fail "$name: repro replay of the incomplete trace exited $status, not 65: $(tail -n 5 "$name.replay.err")"
  [ ! -s "$name.replay.out" ] || fail "$name: the refused replay printed: $(head -n 3 "$name.replay.out")"

  replay 60 "$trace" "$name.prefix.out" "$name.prefix.err" --allow-incomplete
  # Any status but "corrupt" (65), "internal error" (70), "diverged" (75) or
  # a death by signal other than the SIGKILL (137) that ended the program.
  case "$status" in
    65 | 70 | 75 | 129 | 13[0-68-9] | 1[4-9][0-9] | 2[0-9][0-9])
      fail "$name: replay --allow-incomplete exited $status: $(tail -n 20 "$name.prefix.err")" \
        "$(replay_hint "$trace")" ;;
  esac
  grep -Eq 'terminate called|Segmentation|AddressSanitizer|runtime error' "$name.prefix.err" &&
    fail "$name: replay --allow-incomplete crashed: $(tail -n 20 "$name.prefix.err")"
  grep -q '^tick 1$' "$name.prefix.out" ||
    fail "$name: replay --allow-incomplete printed no ticks: $(tail -n 10 "$name.prefix.err")"
  cmp -s "$name.prefix.out" <(head -c "$(stat -c %s "$name.prefix.out")" "$name.out") ||
    fail "$name: replay --allow-incomplete printed what was not recorded:" \
      "$(diff "$name.out" "$name.prefix.out" | head -n 10)"
  summary+="$name: $events events, $(grep -c '^tick ' "$name.prefix.out") of $(grep -c '^tick ' "$name.out") ticks replayed (exit $status); "
}
summary=

# 1. SIGINT twice.
start_recording sigint
kill -INT "$recorder_pid"
ticks=$(grep -c '^tick ' sigint.out)
sleep 0.5
kill -0 "$recorder_pid" 2>/dev/null || fail "sigint: repro stopped at the first SIGINT: $(tail -n 5 sigint.err)"
[ "$(grep -c '^tick ' sigint.out)" -gt "$ticks" ] ||
  fail "sigint: the program stopped printing after the first SIGINT (which it ignores)"
kill -INT "$recorder_pid"
wait_gone "$recorder_pid" "sigint: repro, after the second SIGINT,"
wait "$recorder_pid" 2>/dev/null
expect_no_tracee sigint
[ -e trace-sigint/complete ] && fail "sigint: the interrupted trace is marked complete"
check_incomplete sigint

# 2. SIGKILL.
start_recording sigkill
kill -KILL "$recorder_pid"
wait "$recorder_pid" 2>/dev/null
expect_no_tracee sigkill
check_incomplete sigkill
pass "$summary"

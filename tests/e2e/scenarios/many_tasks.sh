#!/usr/bin/env bash
# Many tasks in one recording, each recorded and replayed with the same
# output and status, within a time limit:
#   1. 1000 threads alive at once (they meet at a barrier), then joined;
#   2. 1000 threads, 100 alive at a time;
#   3. 1000 children forked one after another, each exiting at once, then
#      all reaped by the parent (1000 zombies at the end).
# Usage: many_tasks.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start many_tasks "$@"
program=$build_dir/tests/e2e/scenarios/scenario_many_tasks
need_file "$program"

# run_case NAME EXPECTED_OUTPUT ARGS...: records and replays the program.
run_case() {
  local name=$1 expected=$2 started=$SECONDS
  shift 2
  record 60 "trace-$name" "$name.out" "$name.err" "$program" "$@"
  [ "$status" -eq 0 ] || fail "$name: record exited $status: $(tail -n 5 "$name.err")"
  [ "$(cat "$name.out")" = "$expected" ] || fail "$name: the program printed: $(cat "$name.out")"
  expect_check_complete "trace-$name"
  expect_same_replay "trace-$name" "$name.out" "$name.err" 0 60
  summary+="$name: $(grep -o 'recorded [0-9]* events' "$name.err"), $((SECONDS - started))s; "
}
summary=

run_case threads-all "$(printf 'threads=1000\nsum=499500\nEXIT-SUCCESS')" threads 1000 1000
run_case threads-100 "$(printf 'threads=1000\nsum=499500\nEXIT-SUCCESS')" threads 1000 100
run_case forks "$(printf 'children=1000\nsum=49500\nEXIT-SUCCESS')" forks 1000
pass "$summary"

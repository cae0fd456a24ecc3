#!/usr/bin/env bash
# The demo's flaky failure, caught once, fails the same way on every replay.
# examples/demo_racy_counter loses updates in some runs (exit 1, "N updates
# lost"). Record it until a recording shows lost updates (at most 20 tries),
# then replay that trace 20 times: every replay prints the identical
# lost-update line and exits 1.
# Usage: lost_update_20_of_20.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start lost_update_20_of_20 "$@"
demo=$build_dir/examples/demo_racy_counter
need_file "$demo"

caught=
for try in $(seq 20); do
  record 60 "trace-$try" "record-$try.out" "record-$try.err" "$demo"
  case "$status" in
    0) grep -q 'no update lost' "record-$try.out" ||
         fail "recording $try exited 0 but printed: $(cat "record-$try.out")" ;;
    1) grep -Eq '^counter = [0-9]+, expected 40000: [0-9]+ updates lost$' "record-$try.out" ||
         fail "recording $try exited 1 but printed: $(cat "record-$try.out") $(tail -n 5 "record-$try.err")"
       caught=$try
       break ;;
    *) fail "recording $try exited $status: $(tail -n 10 "record-$try.err")" ;;
  esac
done
[ -n "$caught" ] || fail "no lost update in 20 recordings"
trace=trace-$caught
expect_check_complete "$trace"

for run in $(seq 20); do
  expect_same_replay "$trace" "record-$caught.out" "record-$caught.err" 1 120
done
pass "recording $caught: '$(cat "record-$caught.out")'; 20 of 20 replays identical, exit 1"

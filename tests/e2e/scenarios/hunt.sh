#!/usr/bin/env bash
# repro hunt: records a program again and again under the chaos scheduler
# until a trigger fires, keeps that trace and confirms it replays the failure.
#   1. An order bug that needs one thread held at a syscall while the other
#      runs on (hunt_window_program.c): no plain recording of 10 shows it;
#      `hunt -n 1000` catches it, exits 0, keeps one trace, and that trace
#      replays the failure 5 times out of 5 (exit 1, "RACE").
#   2. The same with `--until output:RACE`, two jobs at once.
#   3. A program that does not fail: `hunt -n 5` exits 1, says so, keeps no
#      trace.
#   4. A bad trigger is a usage error (64).
#   6. Part 1's hunt also shrank the caught schedule: it says which change
#      points the failure needs, and names the racing pair: P's window
#      syscall (getppid, in p) and Q running on to the failure (in q); the
#      pair is kept in TRACE.race, and a smaller trace, if any, replays the
#      failure.
#   5. `--keep-going` (with --no-shrink) with triggers that every run fires (`exit`, or
#      `output:no race` for a run that passed): it goes through all 8 runs,
#      keeps all 8 traces, each confirmed by a replay, lists them, says
#      "8 failures in 8 runs" and exits 0.
# Usage: hunt.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start hunt "$@"
program=$build_dir/tests/e2e/scenarios/scenario_hunt_window
need_file "$program"

plain_failures=0
for run in $(seq 1 10); do
  rm -rf plain
  bounded 60 "$repro" record -o plain -- "$program" >plain.out 2>plain.err
  status=$?
  skip_unless_ptrace plain.err
  [ "$status" -eq 0 ] || plain_failures=$((plain_failures + 1))
done
[ "$plain_failures" -eq 0 ] ||
  echo "note: $plain_failures of 10 plain recordings failed (the bug is meant to need chaos)"

bounded 600 "$repro" hunt -n 1000 -j 1 --seed 1000 -o hunt1 -- "$program" >hunt1.out 2>hunt1.err
status=$?
[ "$status" -eq 0 ] || fail "hunt exited $status: $(tail -n 5 hunt1.err)"
grep -q 'caught `exit` (status 1) after [0-9]* runs, seed [0-9]*' hunt1.err ||
  fail "hunt did not say what it caught: $(cat hunt1.err)"
grep -q 'the replay fails the same way (status 1)' hunt1.err ||
  fail "hunt's own replay did not confirm: $(cat hunt1.err)"
runs=$(grep -o 'after [0-9]* runs' hunt1.err | grep -o '[0-9]*')
trace=$(sed -n 's/^repro: hunt: trace //p' hunt1.err)
[ -d "$trace" ] || fail "the kept trace '$trace' is not there"
[ "$(find hunt1 -maxdepth 1 -name 'seed-*' ! -name '*.min' -type d | wc -l)" -eq 1 ] ||
  fail "passing runs' traces were kept: $(ls hunt1)"
for run in 1 2 3 4 5; do
  replay 120 "$trace" replay.out replay.err
  [ "$status" -eq 1 ] || fail "replay $run of the caught trace exited $status"
  grep -q '^RACE$' replay.err || fail "replay $run of the caught trace printed no RACE"
done
grep -qE '^repro: hunt: shrinking \([0-9]+ recordings?\): the failure needs change points? [0-9, ]+ of [0-9]+' hunt1.err ||
  fail "no shrinking line naming the change points needed: $(cat hunt1.err)"
grep -qE '^repro: hunt:   t[0-9]+ ran last before the failure: getppid, in p at .*hunt_window_program.c:[0-9]+$' hunt1.err ||
  fail "the racing pair does not name P's window syscall: $(cat hunt1.err)"
grep -qE '^repro: hunt:   t[0-9]+ then ran on to the failure \(event #[0-9]+\), in q at .*hunt_window_program.c:[0-9]+$' hunt1.err ||
  fail "the racing pair does not name Q's check: $(cat hunt1.err)"
grep -q 'getppid, in p at' "$trace.race" || fail "the racing pair was not kept in $trace.race"
if [ -d "$trace.min" ]; then
  replay 120 "$trace.min" replay.out replay.err
  [ "$status" -eq 1 ] && grep -q '^RACE$' replay.err ||
    fail "the smaller trace does not replay the failure: status $status"
fi

bounded 600 "$repro" hunt -n 1000 -j 2 --seed 5000 --until 'output:RA.E' -o hunt2 -- "$program" \
  >hunt2.out 2>hunt2.err
status=$?
[ "$status" -eq 0 ] || fail "hunt --until output:RA.E exited $status: $(tail -n 5 hunt2.err)"
grep -q 'caught `output:RA.E`' hunt2.err || fail "the output trigger did not fire: $(cat hunt2.err)"
grep -q 'the replay fails the same way' hunt2.err || fail "not confirmed: $(cat hunt2.err)"

bounded 300 "$repro" hunt -n 5 -o hunt3 -- /bin/true >hunt3.out 2>hunt3.err
status=$?
[ "$status" -eq 1 ] || fail "a hunt that caught nothing exited $status: $(cat hunt3.err)"
grep -q 'no failure in 5 runs' hunt3.err || fail "it did not say so: $(cat hunt3.err)"
[ -z "$(find hunt3 -maxdepth 1 -name 'seed-*')" ] || fail "it kept traces: $(ls hunt3)"

bounded 60 "$repro" hunt --until 'signal:NOPE' -- /bin/true >bad.out 2>bad.err
status=$?
[ "$status" -eq 64 ] || fail "a bad trigger exited $status, not 64: $(cat bad.err)"
grep -q 'no such signal' bad.err || fail "a bad trigger's message: $(cat bad.err)"

# Every run fires one of the two triggers (a passing run prints "no race"),
# so --keep-going must keep all 8.
bounded 600 "$repro" hunt --keep-going --no-shrink -n 8 -j 2 --until exit --until 'output:no race' -o hunt5 \
  -- "$program" >hunt5.out 2>hunt5.err
status=$?
[ "$status" -eq 0 ] || fail "hunt --keep-going exited $status: $(tail -n 5 hunt5.err)"
grep -q '^repro: hunt: 8 failures in 8 runs$' hunt5.err ||
  fail "hunt --keep-going did not go through all 8 runs: $(cat hunt5.err)"
[ "$(grep -c '^repro: hunt: seed [0-9]*: `\(exit\|output:no race\)` (status [01]), trace hunt5/seed-[0-9]*: the replay fails the same way (status [01])$' hunt5.err)" -eq 8 ] ||
  fail "not every failure was listed and confirmed: $(cat hunt5.err)"
[ "$(find hunt5 -maxdepth 1 -name 'seed-*' -type d | wc -l)" -eq 8 ] ||
  fail "8 failures, but these traces are kept: $(ls hunt5)"
for trace in $(sed -n 's/^repro: hunt: seed [0-9]*: .*, trace \(.*\): the replay .*/\1/p' hunt5.err); do
  [ -d "$trace" ] || fail "the listed trace '$trace' is not there"
done

pass "window bug caught after $runs runs (plain recordings: $plain_failures of 10 failed)," \
  "replayed 5/5; output trigger; no failure in 5 runs says so; bad trigger 64;" \
  "--keep-going: 8 failures in 8 runs, all kept and confirmed; shrinking and the racing pair"

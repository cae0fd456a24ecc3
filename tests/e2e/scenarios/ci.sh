#!/usr/bin/env bash
# repro ci: runs a command natively; only when it fails, hunts that failure
# under chaos recording and keeps its trace; exits with the command's status.
#   1. A command that passes: status 0, nothing on stdout or stderr, no
#      output directory.
#   2. A flaky race (ci_flaky_program.c, fails natively about one run in
#      three): `repro ci` again until the native run fails (at most 200
#      times; a passing one must leave no directory), then: status 3, the
#      failure caught as `exit:3`, the trace there, confirmed by hunt's
#      replay and by one more replay of ours.
#   3. Commands that always fail: exit 3 is caught at the first recording
#      (status 3); abort() is caught as `signal:6` (status 134).
#   4. On GitHub Actions (GITHUB_ACTIONS=true, GITHUB_STEP_SUMMARY=FILE): a
#      `::notice` line on stdout and a summary line in FILE; when nothing is
#      caught (--until output:NEVER) a `::warning` line, status still 3.
#   5. SIGTERM to repro ci reaches the command, and repro does not hunt:
#      status 143, no directory.
#   6. A command that cannot be started: 127.
# Usage: ci.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start ci "$@"
program=$build_dir/tests/e2e/scenarios/scenario_ci_flaky
need_file "$program"

# 1. Passing: no overhead, nothing left behind.
bounded 60 "$repro" ci -o pass -- "$program" pass >pass.out 2>pass.err
status=$?
[ "$status" -eq 0 ] || fail "a passing command: status $status: $(cat pass.err)"
[ ! -e pass ] || fail "a passing command left an output directory: $(ls pass)"
[ ! -s pass.out ] && [ ! -s pass.err ] ||
  fail "a passing command made repro say something: $(cat pass.out pass.err)"

# 2. Flaky: loop until the native run fails.
attempts=0
status=0
while [ "$attempts" -lt 200 ]; do
  attempts=$((attempts + 1))
  rm -rf flaky
  bounded 600 "$repro" ci -n 100 -j 2 --seed 1 -o flaky -- "$program" >flaky.out 2>flaky.err
  status=$?
  skip_unless_ptrace flaky.err
  [ "$status" -ne 0 ] && break
  [ ! -e flaky ] || fail "native pass $attempts left an output directory: $(ls flaky)"
done
[ "$status" -ne 0 ] || fail "the flaky program passed natively $attempts times out of $attempts"
[ "$status" -eq 3 ] || fail "the flaky command: status $status, not its own 3: $(cat flaky.err)"
grep -q '^LOST$' flaky.err || fail "the native failure's stderr did not come through: $(cat flaky.err)"
grep -q "failed (exit status 3); caught \`exit:3\` after [0-9]* recordings\? (seed [0-9]*): trace" \
  flaky.err || fail "the flaky failure was not caught: $(cat flaky.err)"
grep -q 'repro: ci: the replay fails the same way (status 3)' flaky.err ||
  fail "the hunt's replay did not confirm: $(cat flaky.err)"
trace=$(sed -n 's/^repro: ci: replay it with: repro replay //p' flaky.err)
[ -n "$trace" ] && [ -d "$trace" ] || fail "the captured trace '$trace' is not there: $(cat flaky.err)"
replay 120 "$trace" replay.out replay.err
[ "$status" -eq 3 ] || fail "replaying the captured trace: status $status, not 3"
grep -q '^LOST$' replay.err || fail "replaying the captured trace printed no LOST"
flaky_runs=$(grep -o 'after [0-9]* recording' flaky.err | grep -o '[0-9]*')

# 3. Always failing: captured at once, the status kept.
bounded 300 "$repro" ci -n 10 -j 1 -o exit3 -- "$program" exit 3 >exit3.out 2>exit3.err
status=$?
[ "$status" -eq 3 ] || fail "exit 3: status $status: $(cat exit3.err)"
grep -q 'caught `exit:3` after 1 recording (seed' exit3.err ||
  fail "exit 3 was not caught at the first recording: $(cat exit3.err)"
[ -d "$(sed -n 's/^repro: ci: replay it with: repro replay //p' exit3.err)" ] ||
  fail "exit 3: no trace: $(cat exit3.err)"
[ ! -s exit3.out ] || fail "not on GitHub Actions, yet stdout got: $(cat exit3.out)"

bounded 300 "$repro" ci -n 10 -j 1 -o abort -- "$program" abort >abort.out 2>abort.err
status=$?
[ "$status" -eq 134 ] || fail "abort: status $status, not 134: $(cat abort.err)"
grep -q 'failed (killed by SIGABRT); caught `signal:6` after 1 recording' abort.err ||
  fail "abort was not caught as signal:6: $(cat abort.err)"
grep -q 'the replay fails the same way (status 134)' abort.err ||
  fail "abort: not confirmed: $(cat abort.err)"

# 4. GitHub Actions: a notice, or a warning when nothing was caught.
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$work/summary.md \
  bounded 300 "$repro" ci -n 10 -j 1 -o gha -- "$program" exit 3 >gha.out 2>gha.err
status=$?
[ "$status" -eq 3 ] || fail "on GitHub Actions: status $status: $(cat gha.err)"
grep -q '^::notice title=repro::`.*scenario_ci_flaky exit 3` failed (exit status 3); caught `exit:3` after 1 recording .*trace gha/seed-[0-9]*' gha.out ||
  fail "no ::notice workflow command on stdout: $(cat gha.out)"
[ "$(grep -c '^- repro ci: .*caught `exit:3`.*replay it with `repro replay gha/seed-[0-9]*`$' summary.md)" -eq 1 ] ||
  fail "no line in the step summary: $(cat summary.md)"

GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$work/summary.md \
  bounded 300 "$repro" ci -n 2 -j 1 --until output:NEVER -o ghw -- "$program" exit 3 >ghw.out 2>ghw.err
status=$?
[ "$status" -eq 3 ] || fail "on GitHub Actions, nothing caught: status $status: $(cat ghw.err)"
grep -q '^::warning title=repro::.*`output:NEVER` did not show in 2 recordings' ghw.out ||
  fail "no ::warning workflow command on stdout: $(cat ghw.out)"
[ "$(wc -l <summary.md)" -eq 2 ] && tail -n 1 summary.md | grep -q 'did not show in 2 recordings' ||
  fail "the step summary did not get the second line: $(cat summary.md)"
[ -z "$(find ghw -maxdepth 1 -name 'seed-*')" ] || fail "nothing caught, yet traces kept: $(ls ghw)"

# 5. SIGTERM is passed on to the command; no hunt follows.
# Started directly (not under `bounded`) so that the signal goes to repro
# itself; the command ends by itself within 60 s if it were not passed on.
"$repro" ci -o term -- "$program" sleep >term.out 2>term.err 9>&- &
ci_pid=$!
background_pids+=("$ci_pid")
# Its handlers are in place once the command has started.
wait_for 30 pgrep -P "$ci_pid" >/dev/null || fail "repro ci did not start the command"
kill -TERM "$ci_pid"
wait "$ci_pid"
status=$?
[ "$status" -eq 143 ] || fail "after SIGTERM: status $status, not 143: $(cat term.err)"
grep -q 'interrupted: not hunting' term.err || fail "after SIGTERM: $(cat term.err)"
[ ! -e term ] || fail "after SIGTERM it hunted: $(ls term)"

# 6. A command that is not there.
bounded 60 "$repro" ci -- "$work/no-such-command" >missing.out 2>missing.err
status=$?
[ "$status" -eq 127 ] || fail "a missing command: status $status, not 127: $(cat missing.err)"

pass "passing: 0, nothing kept; flaky: failed natively at attempt $attempts, caught after" \
  "$flaky_runs recordings, replayed; exit 3 and abort kept (3, 134); GitHub notice," \
  "warning and summary; SIGTERM passed on (143); missing command 127"

#!/usr/bin/env bash
# `repro report`: what happened in a recorded run, from the trace alone.
#   1. crash: a second thread segfaults in store_reading(). The report names
#      the signal, the faulting function and its source line (file:line),
#      the faulting instruction, both threads' backtraces (the main thread
#      in main, waiting in pthread_join) and their last events; --json
#      parses and holds the same; the trace replays (the failure-stacks
#      event changes nothing) and dump shows the event.
#      abort: raised inside libc, the report names the caller in the
#      program (check_reading, file:line), in text and JSON.
#   2. exit: a program exiting with status 3: the outcome and the failure
#      point (its exit_group) in text and JSON; the replay --stop-at
#      command it gives for backtraces shows main.
#   3. A run that exits 0 has no failure point.
#   4. A deadlock: the report says so, with the recorder's backtraces.
#   5. A trace that does not exist: one error line, exit 1.
# Usage: report.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
source_file=$(realpath "$(dirname "$0")/report_crash_program.c")
scenario_start report "$@"
need_tool python3
program=$build_dir/tests/e2e/scenarios/scenario_report_crash
deadlock_program=$build_dir/tests/e2e/scenarios/scenario_deadlock
need_file "$program"
need_file "$deadlock_program"
fault_line=$(grep -n '/\* the fault \*/' "$source_file" | cut -d: -f1)
[ -n "$fault_line" ] || fail "no fault line in $source_file"

# 1. A segfault in a second thread.
record 60 crash.trace crash.out crash.err "$program" crash
[ "$status" -eq 139 ] || fail "crash: record exited $status, not 139: $(tail -n 5 crash.err)"
bounded 60 "$repro" report crash.trace >report.txt 2>report.err ||
  fail "crash: report failed: $(cat report.err)"
expect_line() {  # FILE REGEX WHAT
  grep -qE "$2" "$1" || fail "$3: no line matching '$2' in: $(cat "$1")"
}
expect_line report.txt '^outcome  killed by SIGSEGV' "crash"
expect_line report.txt '^failure  t1 got SIGSEGV \(address not mapped\) at 0x0 \(event #[0-9]+\)$' "crash"
expect_line report.txt "^  in store_reading at /.*/report_crash_program\.c:$fault_line\$" "crash"
expect_line report.txt '^  faulting instruction 0x[0-9a-f]+: mov ' "crash"
expect_line report.txt '^  t1 \(tid [0-9]+\), which got the signal$' "crash"
expect_line report.txt "^    #0 0x[0-9a-f]+ store_reading at /.*/report_crash_program\.c:$fault_line " "crash"
expect_line report.txt '^    #[0-9]+ 0x[0-9a-f]+ worker at /.*/report_crash_program\.c:[0-9]+ ' "crash"
expect_line report.txt '^    #[0-9]+ 0x[0-9a-f]+ main at /.*/report_crash_program\.c:[0-9]+ ' "crash"
expect_line report.txt '^    t0 tid [0-9]+: events #0-#[0-9]+ \([0-9]+ events\), killed by SIGSEGV' "crash"
expect_line report.txt '^    t1 tid [0-9]+, started by t0: events #[0-9]+-#[0-9]+ \([0-9]+ events\), killed by SIGSEGV' "crash"
expect_line report.txt '^    #[0-9]+ t1 signal --- SIGSEGV \{si_signo=SIGSEGV, si_code=1, si_addr=NULL\} synchronous ---$' "crash: last events"
expect_line report.txt '^    #[0-9]+ t0 syscall-entered futex\(' "crash: last events"

bounded 60 "$repro" report --json crash.trace >report.json 2>report.err ||
  fail "crash: report --json failed: $(cat report.err)"
python3 - report.json "$fault_line" <<'PY' || fail "crash: the JSON does not hold what the text says: $(cat report.json)"
import json, sys
report = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
assert report["complete"] and report["outcome"]["signal"] == "SIGSEGV", report["outcome"]
assert [t["thread"] for t in report["processes"][0]["threads"]] == [0, 1]
failure = report["failure"]
assert failure["kind"] == "fatal-signal" and failure["signal"] == "SIGSEGV" and failure["thread"] == 1
location = failure["location"]
assert location["function"] == "store_reading", location
assert location["file"].endswith("/report_crash_program.c") and location["line"] == line, location
stacks = failure["stacks"]
assert stacks["instruction"].startswith("mov"), stacks["instruction"]
assert stacks["threads"][0]["thread"] == 1
assert stacks["threads"][0]["frames"][0]["function"] == "store_reading"
main_frames = [f["function"] for f in stacks["threads"][1]["frames"]]
assert "main" in main_frames, main_frames
last = {entry["thread"]: entry["events"] for entry in failure["last_events"]}
assert last[1][-1]["kind"] == "signal", last[1]
PY

replay 60 crash.trace replay.out replay.err
[ "$status" -eq 139 ] || fail "crash: replay exited $status, not 139: $(tail -n 5 replay.err)"
cmp -s crash.out replay.out || fail "crash: replay printed other output"
bounded 60 "$repro" dump crash.trace >dump.out 2>&1 || fail "crash: dump failed: $(tail -n 3 dump.out)"
expect_line dump.out '^#[0-9]+ t1 failure-stacks$' "crash: dump"
expect_line dump.out '^      #0 0x[0-9a-f]+ store_reading at ' "crash: dump"

# 1b. abort(): the signal is raised inside libc; the report names the
# program's own function that called abort.
abort_line=$(grep -n '/\* the abort \*/' "$source_file" | cut -d: -f1)
record 60 abort.trace abort.out abort.err "$program" abort
[ "$status" -eq 134 ] || fail "abort: record exited $status, not 134: $(tail -n 5 abort.err)"
bounded 60 "$repro" report abort.trace >abort.txt 2>report.err || fail "abort: report failed: $(cat report.err)"
expect_line abort.txt '^failure  t0 got SIGABRT \(sent by tkill or raise\) \(event #[0-9]+\)$' "abort"
expect_line abort.txt "^  in .*, called from check_reading at /.*/report_crash_program\.c:$abort_line\$" "abort"
expect_line abort.txt '^  stopped at 0x[0-9a-f]+: ' "abort"
bounded 60 "$repro" report --json abort.trace >abort.json 2>report.err || fail "abort: report --json failed"
python3 - abort.json "$abort_line" <<'PY' || fail "abort: the JSON does not hold what the text says: $(cat abort.json)"
import json, sys
location = json.load(open(sys.argv[1]))["failure"]["location"]
assert location["function"] == "check_reading" and location["line"] == int(sys.argv[2]), location
PY

# 2. A non-zero exit.
record 60 exit.trace exit.out exit.err "$program" exit
[ "$status" -eq 3 ] || fail "exit: record exited $status, not 3: $(tail -n 5 exit.err)"
bounded 60 "$repro" report exit.trace >exit.txt 2>report.err || fail "exit: report failed: $(cat report.err)"
expect_line exit.txt '^outcome  exited with status 3$' "exit"
expect_line exit.txt '^failure  the program exited with status 3 \(t0 at event #[0-9]+\)$' "exit"
expect_line exit.txt '^    #[0-9]+ t0 syscall exit_group\(3\)' "exit: last events"
# The command it suggests for backtraces works and shows main.
stop_at=$(sed -nE 's/.*`repro replay --stop-at ([0-9]+) exit\.trace`.*/\1/p' exit.txt)
[ -n "$stop_at" ] || fail "exit: no replay command for backtraces: $(cat exit.txt)"
replay 60 exit.trace stop.out stop.err --stop-at "$stop_at"
[ "$status" -eq 0 ] || fail "exit: replay --stop-at $stop_at exited $status: $(tail -n 5 stop.err)"
grep -qE '^repro:   #[0-9]+ 0x[0-9a-f]+ main at ' stop.err ||
  fail "exit: replay --stop-at $stop_at shows no backtrace in main: $(cat stop.err)"
bounded 60 "$repro" report --json exit.trace >exit.json 2>report.err || fail "exit: report --json failed"
python3 - exit.json <<'PY' || fail "exit: the JSON does not hold what the text says: $(cat exit.json)"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["outcome"]["exit_code"] == 3
assert report["failure"]["kind"] == "exit-status" and report["failure"]["exit_code"] == 3
PY

# 3. A run that succeeds.
record 60 true.trace true.out true.err /bin/true
[ "$status" -eq 0 ] || fail "true: record exited $status: $(tail -n 5 true.err)"
bounded 60 "$repro" report true.trace >true.txt 2>report.err || fail "true: report failed: $(cat report.err)"
expect_line true.txt '^outcome  exited with status 0$' "true"
expect_line true.txt '^no failure: ' "true"
bounded 60 "$repro" report --json true.trace >true.json 2>report.err || fail "true: report --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["failure"] is None and r["outcome"]["exit_code"] == 0' \
  true.json || fail "true: the JSON has a failure: $(cat true.json)"

# 4. A deadlock (the ABBA mutexes of deadlock.sh).
record 60 deadlock.trace deadlock.out deadlock.err "$deadlock_program" futex
[ "$status" -eq 76 ] || fail "deadlock: record exited $status, not 76: $(tail -n 5 deadlock.err)"
bounded 60 "$repro" report deadlock.trace >deadlock.txt 2>report.err ||
  fail "deadlock: report failed: $(cat report.err)"
expect_line deadlock.txt '^failure  deadlock at event #[0-9]+' "deadlock"
expect_line deadlock.txt '^    #[0-9]+ 0x[0-9a-f]+ abba_deadlock ' "deadlock"
expect_line deadlock.txt 'killed by SIGKILL \(repro ended the deadlock\)' "deadlock"
bounded 60 "$repro" report --json deadlock.trace >deadlock.json 2>report.err || fail "deadlock: report --json failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); f=r["failure"]; assert f["kind"] == "deadlock" and "abba_deadlock" in f["deadlock_report"]' \
  deadlock.json || fail "deadlock: the JSON does not hold the deadlock: $(cat deadlock.json)"

# 5. No such trace.
bounded 60 "$repro" report "$work/no-such-trace" >missing.out 2>missing.err
status=$?
[ "$status" -eq 1 ] || fail "missing trace: report exited $status, not 1: $(cat missing.err)"
grep -q '^repro: error: ' missing.err || fail "missing trace: no error line: $(cat missing.err)"

pass "report names store_reading at report_crash_program.c:$fault_line (text and JSON), both" \
  "threads' backtraces and last events; exit 3, exit 0 and a deadlock explained"

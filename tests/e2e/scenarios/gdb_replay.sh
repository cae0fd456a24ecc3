#!/usr/bin/env bash
# gdb on a replay: `repro replay --gdbserver 0` serves the replay of a
# racy program (tests/programs/gdb_counter.c) to gdb in batch mode, which
# breaks at report_total, prints the shared counter, sets a write
# watchpoint that triggers, and continues to the end. Twice: the two gdb
# sessions are identical but for the line naming the port, and show the
# recorded values. A second session stops at an event in the middle with
# `monitor run-to`, lists the threads there and kills the replay.
# Skipped (77) where gdb is not installed.
# Usage: gdb_replay.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start gdb_replay "$@"
program=$build_dir/tests/programs/gdb_counter
need_file "$program"
gdb=$(command -v gdb) || skip "gdb is not installed"

record 60 trace rec.out rec.err "$program"
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
count=$(sed -n 's/^~ count=\([0-9]*\)$/\1/p' rec.out)
[ -n "$count" ] || fail "the recording printed no count: $(cat rec.out)"

# serve NAME GDB_ARGS...: a replay served to one batch gdb; gdb's output
# in NAME.gdb, the server's in NAME.out and NAME.err, its status in $status.
serve() {
  local name=$1 port
  shift
  start_background "$repro" replay --gdbserver 0 trace >"$name.out" 2>"$name.err"
  local server=$background_pid
  wait_for 30 grep -q 'listening on' "$name.err" || fail "no gdb server: $(cat "$name.err")"
  port=$(sed -n 's/^repro: gdb server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$name.err")
  [ -n "$port" ] || fail "no port in: $(cat "$name.err")"
  bounded 300 "$gdb" -nx -batch -ex "target remote 127.0.0.1:$port" "$@" "$program" \
    >"$name.gdb" 2>&1 </dev/null
  wait_for 60 bash -c "! kill -0 $server 2>/dev/null" || fail "the server outlived gdb"
  wait "$server"
  status=$?
}

session=(-ex 'break report_total' -ex continue -ex 'print counter' -ex 'watch doubled'
  -ex continue -ex 'print doubled' -ex 'monitor event' -ex delete -ex continue)
for run in 1 2; do
  serve "run$run" "${session[@]}"
  [ "$status" -eq 0 ] || fail "replay under gdb (run $run) exited $status: $(tail -n 5 "run$run.err")"
  cmp -s rec.out "run$run.out" || fail "run $run printed other output: $(diff rec.out "run$run.out")"
done
# A line naming the port would differ between the runs (gdb 13 prints
# none in batch mode): the only lines left out of the comparison.
sed '/^Remote debugging using /d' run1.gdb >run1.cmp
sed '/^Remote debugging using /d' run2.gdb >run2.cmp
cmp -s run1.cmp run2.cmp || fail "the two gdb sessions differ: $(diff run1.cmp run2.cmp)"

expect() { grep -qE "$1" run1.gdb || fail "gdb did not show '$1': $(cat run1.gdb)"; }
expect "^Breakpoint 1, report_total \(total=$count\) at .*gdb_counter.c:[0-9]+"
expect "^\\\$1 = $count$"
expect "^Hardware watchpoint 2: doubled$"
expect "^Old value = 0$"
expect "^New value = $((2 * count))$"
expect "^main \(\) at .*gdb_counter.c:[0-9]+"
expect "^\\\$2 = $((2 * count))$"
expect "^the replay stands before event #[0-9]+ "
expect "exited normally\]$"

# Stop in the middle, where both workers run: the first event of thread t2.
"$repro" dump trace >dump.out 2>&1 || fail "dump: $(tail -n 3 dump.out)"
event=$(grep -E '^#[0-9]+ t2 ' dump.out | sed -n '2s/^#\([0-9]*\).*/\1/p')
[ -n "$event" ] || fail "no second event of t2 in: $(head -n 40 dump.out)"
serve middle -ex "monitor run-to $event" -ex continue -ex 'monitor event' -ex 'info threads' -ex kill
[ "$status" -eq 0 ] || fail "replay killed from gdb exited $status: $(tail -n 5 middle.err)"
grep -q "^the replay stands before event #$event " middle.gdb ||
  fail "monitor event does not say #$event: $(cat middle.gdb)"
threads=$(grep -cE '^[* ] +[0-9]+ +Thread ' middle.gdb)
[ "$threads" -eq 3 ] || fail "info threads lists $threads threads, not 3: $(cat middle.gdb)"
grep -q "gdb ended the replay before event #$event" middle.err ||
  fail "the server does not say where gdb ended it: $(cat middle.err)"
pass "break, print $count, watch 0 -> $((2 * count)), exit: identical twice; run-to #$event shows 3 threads"

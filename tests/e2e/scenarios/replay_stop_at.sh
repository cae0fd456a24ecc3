#!/usr/bin/env bash
# `repro replay --stop-at N` stops after event N and shows where each
# thread stands, with backtraces naming the program's own functions and
# its recorded path (not the trace's copy that replay runs); an N past the
# end of the trace is a usage error (64).
# Usage: replay_stop_at.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start replay_stop_at "$@"
program=$build_dir/tests/e2e/scenarios/scenario_deadlock
need_file "$program"

record 60 trace rec.out rec.err "$program" slow
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
"$repro" dump trace >dump.out 2>&1 || fail "dump: $(tail -n 3 dump.out)"
# The main thread's read of the pipe the other thread writes after a sleep
# (its byte shown, or its buffer's address when the bytes are the pipe's).
event=$(grep -E '^#[0-9]+ t0 syscall read\([0-9]+, (0x[0-9a-f]+|"[^"]*"), 1\)' dump.out | head -n 1 | sed 's/^#\([0-9]*\).*/\1/')
[ -n "$event" ] || fail "no read of t0 in the trace: $(grep -c . dump.out) lines"
replay 60 trace replay.out replay.err --stop-at "$event"
[ "$status" -eq 0 ] || fail "replay --stop-at $event exited $status: $(tail -n 3 replay.err)"
grep -q "^repro: stopped after event #$event:" replay.err || fail "no stop line: $(cat replay.err)"
grep -qE "^repro: t0 \(tid [0-9]+\) stopped" replay.err || fail "t0 is not described: $(cat replay.err)"
grep -qE "^repro:   #[0-9]+ 0x[0-9a-f]+ only_slow at .*deadlock_program.c:[0-9]+ \($program\)" replay.err ||
  fail "no frame of only_slow named with the recorded path: $(cat replay.err)"
grep -q 'read what a sleeping writer wrote' replay.out &&
  fail "replay went on past event $event"

replay 60 trace past.out past.err --stop-at 999999
[ "$status" -eq 64 ] || fail "--stop-at past the end exited $status, not 64: $(tail -n 3 past.err)"
grep -q 'none numbered 999999' past.err || fail "no message for a stop past the end: $(cat past.err)"
pass "stopped after event $event with t0 in only_slow; past the end: 64"

#!/usr/bin/env bash
# sched_yield hands the CPU over while recording. The program
# (sched_yield_turns_program.c) has two threads on one CPU take turns with
# sched_yield alone, counting turns taken out of turn. The recorder runs one
# thread at a time and switches at every yield, so each of five recordings
# must count 0 (natively the kernel's scheduler sometimes lets a yielding
# thread run on, so the native count is not checked); a thread that lowered
# its priority must run while main yields; each replay must print the same.
# Usage: sched_yield_turns.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start sched_yield_turns "$@"
program=$build_dir/tests/e2e/scenarios/scenario_sched_yield_turns
need_file "$program"

for run in 1 2 3 4 5; do
  record 60 trace$run record$run.out record$run.err "$program"
  [ "$status" -eq 0 ] || fail "recording $run exited $status: $(tail -n 5 record$run.err)"
  grep -qx 'EXIT-SUCCESS' record$run.out || fail "recording $run: no EXIT-SUCCESS: $(cat record$run.out)"
  grep -qx 'turns out of turn=0' record$run.out ||
    fail "recording $run: a thread ran out of turn after sched_yield: $(head -n 1 record$run.out)"
  replay 60 trace$run replay$run.out replay$run.err
  [ "$status" -eq 0 ] || fail "replay $run exited $status: $(tail -n 5 replay$run.err)"
  cmp -s record$run.out replay$run.out ||
    fail "replay $run printed other output: $(diff record$run.out replay$run.out | head -n 5)"
done
pass "5 recordings, every turn taken in turn after sched_yield, replays identical"

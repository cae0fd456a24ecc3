#!/usr/bin/env bash
# A thread's fatal signal ends the whole process while main stands parked at
# a syscall's exit (sibling_fatal_signal_program.c): the recording logs
# main's exit before the crashing thread's. Each of 3 recordings must end
# with SIGSEGV (139), and each must replay 3 times with the same status and
# no error of repro's (the kill has already woken main from its stop when
# replay comes to main's exit: there is nothing to resume).
# Usage: sibling_fatal_signal.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start sibling_fatal_signal "$@"
program=$build_dir/tests/e2e/scenarios/scenario_sibling_fatal_signal
need_file "$program"

for run in 1 2 3; do
  record 60 trace$run record$run.out record$run.err "$program"
  [ "$status" -eq 139 ] ||
    fail "recording $run exited $status, not 139: $(tail -n 5 record$run.err)"
  for again in 1 2 3; do
    replay 60 trace$run replay.out replay.err
    [ "$status" -eq 139 ] ||
      fail "replay $again of recording $run exited $status: $(tail -n 5 replay.err)" \
        "$(replay_hint trace$run)"
    ! grep -q '^repro: error' replay.err ||
      fail "replay $again of recording $run: $(cat replay.err)"
  done
done
pass "3 recordings ended by a thread's SIGSEGV, each replayed 3 times with status 139"

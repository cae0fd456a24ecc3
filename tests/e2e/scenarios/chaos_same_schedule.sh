#!/usr/bin/env bash
# `record --chaos --seed N` twice on the same program gives the same
# schedule: the same threads run, switch and block at the same syscalls,
# even where one thread wakes another (futex wakes, pipe writes, joins,
# wait4 on a child's exit), which the kernel completes at its own moment.
# Each program is recorded 3 times with one seed; the sequence of events
# (thread, kind, syscall) must be the same in all three. Programs that run
# long stretches without syscalls are left out: where a time slice ends in
# such code is a matter of the clock.
# Usage: chaos_same_schedule.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start chaos_same_schedule "$@"

# schedule TRACE: one line per event, without values that differ between
# runs (tids, times, addresses in results).
schedule() {
  "$repro" dump "$1" | grep -E '^#[0-9]' | awk '{print $2, $3, $4}' | sed 's/(.*//'
}

checked=""
for name in condvar_ping_pong mutex_counter pipe_roundtrip fork_wait \
  thread_create_join thread_exit_value; do
  program=$build_dir/tests/programs/$name
  need_file "$program"
  for run in 1 2 3; do
    rm -rf "$name.$run"
    bounded 120 "$repro" record -o "$name.$run" --chaos --seed 7 -- "$program" \
      >"$name.$run.out" 2>"$name.$run.err"
    status=$?
    skip_unless_ptrace "$name.$run.err"
    [ "$status" -eq 0 ] || fail "$name: recording $run exited $status: $(tail -n 3 "$name.$run.err")"
    schedule "$name.$run" >"$name.$run.schedule"
  done
  for run in 2 3; do
    diff "$name.1.schedule" "$name.$run.schedule" >"$name.$run.diff" ||
      fail "$name: recording $run with seed 7 took another schedule: $(head -n 12 "$name.$run.diff")"
  done
  checked="$checked $name ($(wc -l <"$name.1.schedule") events)"
done
pass "3 recordings with one seed, one schedule each:$checked"

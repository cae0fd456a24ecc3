#!/usr/bin/env bash
# A syscall whose effects repro does not record makes `record` warn at once,
# naming it, once per syscall however often it runs; replay then refuses the
# trace naming the same syscall. The program (unknown_effects_program.c)
# calls io_setup and io_destroy twice each (Linux AIO, rows marked
# Unsupported). Skipped (77) where io_setup fails natively (a kernel without
# CONFIG_AIO, or aio-max-nr reached).
# Usage: unknown_effects_warning.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start unknown_effects_warning "$@"
program=$build_dir/tests/e2e/scenarios/scenario_unknown_effects
need_file "$program"
why=$("$program" --probe) || skip "io_setup fails on this host ($why)"

record 60 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
for name in io_setup io_destroy; do
  line="repro: warning: $name has effects repro does not record; replay will refuse this trace"
  count=$(grep -cxF "$line" record.err)
  [ "$count" -eq 1 ] || fail "record warned $count times about $name, not once: $(cat record.err)"
done
warnings=$(grep -c 'has effects repro does not record' record.err)
[ "$warnings" -eq 2 ] || fail "record gave $warnings such warnings, not 2: $(cat record.err)"

replay 60 trace replay.out replay.err
[ "$status" -ne 0 ] || fail "replay of a trace with unknown effects succeeded"
grep -q 'io_setup(.*wrote memory that repro does not know how to record' replay.err ||
  fail "replay's refusal does not name io_setup: $(tail -n 5 replay.err)"
pass "one warning each for io_setup and io_destroy; replay refused: $(grep -m1 'io_setup' replay.err)"

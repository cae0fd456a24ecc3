#!/usr/bin/env bash
# rdtsc in code generated at run time (scenario_jit_rdtsc) is the one rdtsc
# patching mode cannot cover: there is no file to decode it from. Recorded
# trapping rdtsc, the trace holds its values and replays in trapping mode.
# Replayed in patching mode (a host that cannot trap), it runs unseen, and
# the divergence report must name that as the likely cause: code with no
# file behind it holding the bytes of rdtsc.
# Usage: jit_rdtsc.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start jit_rdtsc "$@"
program=$build_dir/tests/e2e/scenarios/scenario_jit_rdtsc
need_file "$program"

REPRO_TSC=trap bounded 60 "$repro" record -o trace -- "$program" >record.out 2>record.err
status=$?
skip_unless_ptrace record.err
if grep -q 'does not trap rdtsc' record.err; then
  skip "this host cannot trap rdtsc: $(grep -o 'does not trap rdtsc.*' record.err)"
fi
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
bounded 60 "$repro" dump trace >dump.out 2>dump.err || fail "repro dump failed: $(tail -n 3 dump.err)"
[ "$(grep -c ' rdtsc at ' dump.out)" -ge 2 ] || fail "the trapped rdtsc of the generated code is not in the trace"

REPRO_TSC=trap expect_same_replay trace record.out record.err 0 60

REPRO_TSC=patch replay 60 trace replay.out replay.err
[ "$status" -eq 75 ] ||
  fail "replay in patching mode exited $status, not 75: $(tail -n 20 replay.err)"
grep -q 'expected: rdtsc at 0x' replay.err ||
  fail "the report does not say an rdtsc was expected: $(tail -n 20 replay.err)"
grep -q 'no file behind it (generated at run time?)' replay.err ||
  fail "the report does not point at the generated code: $(tail -n 20 replay.err)"
grep -q 'holding the bytes of rdtsc at 0x' replay.err ||
  fail "the report does not name the rdtsc in the generated code: $(tail -n 20 replay.err)"
pass "recorded trapping, replayed trapping; replayed patching, the report names the generated code"

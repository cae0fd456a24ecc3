#!/usr/bin/env bash
# `repro bench`: native, recorded and replayed runs of a command side by
# side. With -n 3 it prints the three medians, the ratios and the trace's
# size; --json gives the same as one JSON object with 3 timings of each
# kind; a command that does not exist is one error line (status 1); a
# command whose recording ends otherwise than its native run is an error.
# Usage: bench_command.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start bench_command "$@"
program=$build_dir/tests/programs/pipe_roundtrip
need_file "$program"
need_tool python3

bounded 120 "$repro" bench -n 3 -- "$program" >text.out 2>text.err
status=$?
skip_unless_ptrace text.err
[ "$status" -eq 0 ] || fail "bench exited $status: $(tail -n 3 text.err)"
grep -q '^medians of 3 runs each:$' text.out || fail "no medians line: $(cat text.out)"
grep -qE '^  record +[0-9.]+ s +[0-9.]+x native$' text.out || fail "no record line: $(cat text.out)"
grep -qE '^  replay +[0-9.]+ s +[0-9.]+x native$' text.out || fail "no replay line: $(cat text.out)"
grep -qE '^  trace +[0-9.]+ MB +[0-9.]+ MB per second of native run time$' text.out ||
  fail "no trace line: $(cat text.out)"

bounded 120 "$repro" bench -n 3 --json -- "$program" >json.out 2>json.err
status=$?
[ "$status" -eq 0 ] || fail "bench --json exited $status: $(tail -n 3 json.err)"
python3 - json.out <<'PY' || fail "bench --json: $(cat json.out)"
import json, sys
figures = json.load(open(sys.argv[1]))
for kind in ("native_seconds", "record_seconds", "replay_seconds", "trace_bytes"):
    assert len(figures[kind]) == 3, kind
    assert all(value > 0 for value in figures[kind]), kind
assert figures["median"]["record_seconds"] > 0 and figures["record_ratio"] > 0
PY

bounded 60 "$repro" bench -n 2 -- no-such-command-here >missing.out 2>missing.err
status=$?
[ "$status" -eq 1 ] || fail "a missing command exited $status, not 1: $(cat missing.err)"
[ "$(grep -c '^repro: error: ' missing.err)" -eq 1 ] || fail "not one error line: $(cat missing.err)"

pass "medians, ratios and trace size of 3 runs; JSON with 3 of each; a missing command: 1"

#!/usr/bin/env bash
# A real shell pipeline: bash forks ls, sort and head connected by pipes.
# The recorded run prints what a native run prints; the replay prints the
# recorded bytes and exits with the recorded status.
# Usage: real_shell_pipeline.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start real_shell_pipeline "$@"
need_tool bash ls sort head

script='ls -l /usr/bin | sort | head'
bounded 60 bash -c "$script" >native.out 2>native.err
native_status=$?
[ -s native.out ] || fail "the native run printed nothing: $(head -n 5 native.err)"

record 120 trace record.out record.err bash -c "$script"
record_status=$status
[ "$record_status" -eq "$native_status" ] ||
  fail "recorded exit status $record_status, native $native_status: $(tail -n 5 record.err)"
cmp -s native.out record.out ||
  fail "recorded output differs from native: $(diff native.out record.out | head -n 20)"
cmp -s native.err <(program_stderr record.err) ||
  fail "recorded stderr differs from native: $(diff native.err <(program_stderr record.err) | head -n 20)"
expect_check_complete trace

expect_same_replay trace record.out record.err "$record_status"
pass "$(wc -l <record.out) lines, exit $record_status, replay identical"

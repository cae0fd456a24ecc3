#!/usr/bin/env bash
# A program that writes 1 GiB to /dev/null (4096 writes of 256 KiB of
# pseudo-random bytes) leaves a trace of a few MiB: what goes to /dev/null
# is never stored, since replay prints only what was written to the
# recording's stdout and stderr, and nobody saw these bytes.
#   1. to a /dev/null the program opens itself;
#   2. to its stdout, which is /dev/null (`repro record ... >/dev/null`):
#      the bytes are not kept as stdout output either.
# Each: record exits 0; the `events` file stays under 1 MiB and the whole
# trace (with its copies of the program and libc) under 8 MiB; the trace is
# complete and replays with status 0 and the program's stderr line.
# Usage: devnull_trace_size.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start devnull_trace_size "$@"
need_tool du
program=$build_dir/tests/e2e/scenarios/scenario_devnull_writer
need_file "$program"

# check_size NAME: the sizes of trace-NAME, in KiB, against the limits.
check_size() {
  local trace=trace-$1 events_kib trace_kib
  events_kib=$(du -k "$trace/events" | cut -f1)
  trace_kib=$(du -sk "$trace" | cut -f1)
  ((events_kib < 1024)) || fail "$1: the events file holds ${events_kib} KiB for 1 GiB written to /dev/null"
  ((trace_kib < 8192)) || fail "$1: the trace holds ${trace_kib} KiB for 1 GiB written to /dev/null"
  summary+="$1: trace ${trace_kib} KiB (events ${events_kib} KiB); "
}
summary=

record 120 trace-open open.out open.err "$program" 1024 open
[ "$status" -eq 0 ] || fail "open: record exited $status: $(tail -n 5 open.err)"
grep -q '^wrote 1024 MiB in 4096 writes$' open.err || fail "open: the program did not finish: $(cat open.err)"
check_size open
expect_check_complete trace-open
expect_same_replay trace-open open.out open.err 0

bounded 120 "$repro" record -o trace-stdout -- "$program" 1024 stdout >/dev/null 2>stdout.err
status=$?
skip_unless_ptrace stdout.err
[ "$status" -eq 0 ] || fail "stdout: record exited $status: $(tail -n 5 stdout.err)"
grep -q '^wrote 1024 MiB in 4096 writes$' stdout.err || fail "stdout: the program did not finish: $(cat stdout.err)"
check_size stdout
expect_check_complete trace-stdout
: >stdout.out  # what the recording's stdout showed: nothing
expect_same_replay trace-stdout stdout.out stdout.err 0

pass "$summary"

#!/usr/bin/env bash
# An AddressSanitizer program that leaks records and replays with its leak
# report. LeakSanitizer attaches to every thread with ptrace at exit, which
# repro emulates between recorded threads (tracer/record_ptrace.cc); without
# that the recording hung or the report said LeakSanitizer had failed. The
# program (asan_leak_program.c) has a thread blocked in the kernel and one
# at a syscall when the report is made. Checked: the native run and the
# recording report exactly the one 77-byte leak with the same status, and
# two replays print the same report and exit alike.
# Usage: asan_leak_report.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start asan_leak_report "$@"
program=$build_dir/tests/e2e/scenarios/scenario_asan_leak
need_file "$program"

bounded 60 "$program" >native.out 2>native.err
native_status=$?
check_report() {
  grep -q 'ERROR: LeakSanitizer: detected memory leaks' "$2" ||
    fail "$1: no leak report: $(tail -n 20 "$2")"
  grep -q 'SUMMARY: AddressSanitizer: 77 byte(s) leaked in 1 allocation(s)' "$2" ||
    fail "$1: the report is not the one 77-byte leak: $(grep -E 'leak|SUMMARY|Sanitizer' "$2")"
  grep -q 'in make_leak .*asan_leak_program.c' "$2" ||
    fail "$1: the report does not name make_leak: $(tail -n 20 "$2")"
}
check_report "native run" native.err
[ "$native_status" -ne 0 ] || fail "the native run exited 0 despite the leak"

record 120 trace record.out record.err "$program"
[ "$status" -eq "$native_status" ] ||
  fail "recording exited $status, natively $native_status: $(tail -n 20 record.err)"
check_report "recording" record.err
cmp -s native.out record.out || fail "recorded stdout differs: $(diff native.out record.out)"
# The one warning a host may add: that it cannot trap rdtsc (patching mode).
warnings=$(grep 'repro: warning' record.err | grep -v 'this host does not trap rdtsc')
[ -z "$warnings" ] || fail "record warned: $warnings"
expect_check_complete trace
for run in 1 2; do
  expect_same_replay trace record.out record.err "$status"
done
# Without PAGEMAP_SCAN (Linux < 6.7, or REPRO_PAGEMAP_SCAN=0) the recorder
# reads the page table entry by entry, 8 bytes per page of the shadow:
# preempting such a program is too slow to test (docs/recording.md).
kernel=$(uname -r)
major=${kernel%%.*} rest=${kernel#*.} minor=${rest%%.*}
if [ "${REPRO_PAGEMAP_SCAN:-}" = 0 ] || [ "$major" -lt 6 ] ||
  { [ "$major" -eq 6 ] && [ "$minor" -lt 7 ]; }; then
  skip "leak report recorded and replayed; the 1 ms-slice part needs PAGEMAP_SCAN" \
    "(kernel $kernel, REPRO_PAGEMAP_SCAN=${REPRO_PAGEMAP_SCAN:-unset})"
fi
# With 1 ms slices the threads are preempted, and every preemption hashes
# the process's writable memory, AddressSanitizer's terabytes of shadow
# included: only its populated pages may be read, or recording stalls.
bounded 120 "$repro" record --time-slice-ms 1 -o trace-short -- "$program" \
  >short.out 2>short.err
short_status=$?
[ "$short_status" -eq "$native_status" ] ||
  fail "recording with 1 ms slices exited $short_status: $(tail -n 20 short.err)"
check_report "recording with 1 ms slices" short.err
preempts=$("$repro" dump trace-short | grep -c ' preempt ')
[ "$preempts" -gt 0 ] || fail "no preemption in the recording with 1 ms slices"
expect_same_replay trace-short short.out short.err "$short_status"

pass "leak report (77 bytes, make_leak) native, recorded and replayed twice; status" \
  "$native_status; with 1 ms slices ($preempts preemptions) too"

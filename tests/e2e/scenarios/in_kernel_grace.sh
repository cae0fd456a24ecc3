#!/usr/bin/env bash
# A syscall the tables do not mark as blocking keeps the CPU for its thread:
# repro passes the CPU on only when the syscall has not returned after
# 2 ms (kInKernelGraceMs, docs/recording.md). A SIGCHLD left over from stops
# already handled used to end that wait at once, and plain recordings of
# tests/programs/racy/lost_update switched tellers at the clock_gettime in
# their race window in about half of the recordings (then lost updates).
# 20 plain recordings: at most 3 may show a switch there (a syscall can
# really take 2 ms on a busy host), and as many at most may lose updates.
# Usage: in_kernel_grace.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start in_kernel_grace "$@"
program=$build_dir/tests/programs/racy/lost_update
need_file "$program"

switched=0 lost=0
for run in $(seq 20); do
  rm -rf trace
  record 60 trace record.out record.err "$program"
  case "$status" in
    0) ;;
    1) grep -q 'lost update' record.err || fail "recording $run exited 1: $(tail -n 5 record.err)"
       lost=$((lost + 1)) ;;
    *) fail "recording $run exited $status: $(tail -n 5 record.err)" ;;
  esac
  bounded 60 "$repro" dump trace >dump.txt 2>dump.err || fail "repro dump failed: $(cat dump.err)"
  if grep -q 'syscall-entered clock_gettime' dump.txt; then
    switched=$((switched + 1))
  fi
done
[ "$switched" -le 3 ] ||
  fail "$switched of 20 plain recordings passed the CPU on inside a clock_gettime"
[ "$lost" -le 3 ] || fail "$lost of 20 plain recordings lost updates"
pass "20 plain recordings: $switched passed the CPU on inside clock_gettime, $lost lost updates"

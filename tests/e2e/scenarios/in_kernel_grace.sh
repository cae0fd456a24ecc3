#!/usr/bin/env bash
# A syscall the tables do not mark as blocking keeps the CPU for its thread:
# repro passes the CPU on only when the syscall has not returned after
# 2 ms (kInKernelGraceMs, docs/recording.md). A SIGCHLD left over from stops
# already handled used to end that wait at once: in plain recordings of
# tests/programs/racy/lost_update, a teller's first clock_gettime (right
# after the threads' start) often passed the CPU on (6 to 10 of 40 tellers),
# inside the race window, and updates were lost. 40 plain recordings,
# 80 tellers: at most 3 first clock_gettime calls may pass the CPU on (a
# syscall can really take 2 ms on a busy host), and at most 5 recordings
# may lose updates.
# Usage: in_kernel_grace.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start in_kernel_grace "$@"
program=$build_dir/tests/programs/racy/lost_update
need_file "$program"

switched=0 lost=0
for run in $(seq 40); do
  rm -rf trace
  record 60 trace record.out record.err "$program"
  case "$status" in
    0) ;;
    1) grep -q 'lost update' record.err || fail "recording $run exited 1: $(tail -n 5 record.err)"
       lost=$((lost + 1)) ;;
    *) fail "recording $run exited $status: $(tail -n 5 record.err)" ;;
  esac
  bounded 60 "$repro" dump trace >dump.txt 2>dump.err || fail "repro dump failed: $(cat dump.err)"
  # Each thread's first clock_gettime event: "syscall-entered" if it passed
  # the CPU on.
  firsts=$(awk '$4 ~ /^clock_gettime\(/ && !seen[$2]++ && $3 == "syscall-entered"' dump.txt | wc -l)
  switched=$((switched + firsts))
done
[ "$switched" -le 3 ] ||
  fail "$switched of 80 tellers passed the CPU on inside their first clock_gettime"
[ "$lost" -le 5 ] || fail "$lost of 40 plain recordings lost updates"
pass "40 plain recordings: $switched of 80 tellers passed the CPU on inside their first" \
  "clock_gettime, $lost recordings lost updates"

#!/usr/bin/env bash
# An mmap of a file whose memory the trace cannot hold (a TCP socket here;
# a device other than /dev/zero alike) does not stop the recording: the
# program runs to its end, repro exits with the program's status, and the
# mmap is recorded with effects unknown. Replay refuses that mmap with one
# error line naming it (exit 1), after the output that came before it.
# Skipped (77) where the kernel cannot map a TCP socket.
# Usage: mmap_special_file.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start mmap_special_file "$@"
program=$build_dir/tests/e2e/scenarios/scenario_mmap_socket
need_file "$program"
"$program" >native.out 2>&1
[ $? -eq 77 ] && skip "$(cat native.out)"

record 60 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status, not 0: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
expect_check_complete trace
grep -q 'syscall mmap(.*effects unknown' <("$repro" dump trace 2>&1) ||
  fail "the socket's mmap is not recorded with effects unknown: $("$repro" dump trace 2>&1 | grep mmap | tail -n 3)"

replay 60 trace replay.out replay.err
[ "$status" -eq 1 ] || fail "replay exited $status, not 1: $(tail -n 20 replay.err)"
grep -q '^repro: error: event #[0-9]*: mmap(.*replay refuses' replay.err ||
  fail "replay's error does not name the mmap: $(cat replay.err)"
[ ! -s replay.out ] || fail "replay printed output past the refused mmap: $(cat replay.out)"
pass "recorded to the end; replay refuses the mmap: $(grep '^repro: error' replay.err)"

#!/usr/bin/env bash
# A program that maps 1 GiB files holding a few bytes (a sparse file, a
# file with a 256 MiB hole, a memfd grown with ftruncate) leaves a trace of
# about what a small program leaves: the trace stores what the mappings
# hold, not their size (checked on the disk blocks it uses: the stored
# copies keep the files' sizes, with holes).
# Usage: sparse_mapping_trace_size.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start sparse_mapping_trace_size "$@"
need_tool du
program="$build_dir/tests/programs/mmap_sparse_huge"
need_file "$program"

record 120 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
expect_check_complete trace

# A small C program's trace holds the C library (about 2 MiB); 16 MiB
# leaves room for that and fails long before a copy of 1 GiB.
used_kib=$(du -sk trace | cut -f1)
[ "$used_kib" -lt 16384 ] || fail "the trace uses $used_kib KiB of disk"
expect_same_replay trace record.out record.err 0 120
pass "the trace uses $used_kib KiB of disk"

#!/usr/bin/env bash
# Patched syscall sites (core/patch/syscall_sites.h): the calls libc makes
# inside itself reach the fast path.
#   - a program that walks a directory with readdir, reads a file through
#     stdio while a second thread is blocked in a read of its own, and
#     takes a SIGALRM every 2 ms meanwhile (syscall_site_patching_program.c)
#     records with syscall-patch events in libc, its getdents64 calls on
#     the fast path, few stops, and prints what it prints natively;
#   - its replay prints the same, with the calls answered in the program
#     and, with REPRO_REPLAY_FAST_PATH=stop, each at a stop;
#   - with REPRO_SYSCALL_PATCHING=off nothing is patched, getdents64 stops
#     every time, and the replay prints the same too;
#   - ls -lR over a tree records with its readdir, stat and close calls on
#     the fast path and replays the same.
# Usage: syscall_site_patching.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start syscall_site_patching "$@"
program=$build_dir/tests/e2e/scenarios/scenario_syscall_site_patching
need_file "$program"
[ -e "$build_dir/librepro_preload.so" ] || skip "no fast-path library in $build_dir"

mkdir -p tree/sub
for i in $(seq 1 200); do echo "line $i" >"tree/file-$i"; done
seq 1 300 >lines
"$program" tree lines 50 >native.out 2>native.err || fail "the program failed natively: $(cat native.err)"
grep -q '^10150 entries' native.out || fail "unexpected native output: $(cat native.out)"

record 120 trace rec.out rec.err "$program" tree lines 50
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
# The last line depends on when the timer fired; the others must match.
cmp -s <(head -n 3 native.out) <(head -n 3 rec.out) || fail "recorded output differs: $(diff native.out rec.out)"
grep -q 'the handler last read 24$' rec.out || fail "the handler did not read while recorded: $(tail -n 1 rec.out)"
expect_check_complete trace
expect_same_replay trace rec.out rec.err 0
REPRO_REPLAY_FAST_PATH=stop expect_same_replay trace rec.out rec.err 0
bounded 120 "$repro" dump trace >dump.out 2>dump.err || fail "dump failed: $(cat dump.err)"
patches=$(grep -c '^#[0-9]* t[0-9]* syscall-patch site 0x[0-9a-f]* in .*/libc\.so\.6 now jumps to a stub at 0x' dump.out)
[ "$patches" -ge 3 ] || fail "only $patches syscall-patch events in libc: $(grep syscall-patch dump.out | head -n 3)"
fast_getdents=$(grep -c ' syscall getdents64([0-9]*, .*\[fast path\]$' dump.out)
slow_getdents=$(grep ' syscall getdents64(' dump.out | grep -vc '\[fast path\]$')
# 50 walks of 203 entries: at least 2 calls each (the entries, then 0).
[ "$fast_getdents" -ge 98 ] || fail "only $fast_getdents getdents64 calls on the fast path"
[ "$slow_getdents" -le 2 ] || fail "$slow_getdents getdents64 calls stopped (one may, before its site is patched)"
grep -q ' syscall read([0-9]*, ".*) = 1092 \[writes 1: 1092 bytes\] \[fast path\] \[from files/[0-9a-f]* at 0\]$' dump.out ||
  fail "no stdio read on the fast path, by reference to the file's copy"

# Without patching: every getdents64 stops, the output is the same.
REPRO_SYSCALL_PATCHING=off record 120 plain plain.out plain.err "$program" tree lines 50
[ "$status" -eq 0 ] || fail "record without patching exited $status: $(tail -n 3 plain.err)"
cmp -s <(head -n 3 native.out) <(head -n 3 plain.out) || fail "output without patching differs: $(diff native.out plain.out)"
expect_same_replay plain plain.out plain.err 0
bounded 120 "$repro" dump plain >plain.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
grep -q ' syscall-patch ' plain.dump && fail "REPRO_SYSCALL_PATCHING=off patched a site"
[ "$(grep ' syscall getdents64(' plain.dump | grep -vc '\[fast path\]$')" -ge 100 ] ||
  fail "without patching getdents64 did not stop"

# ls -lR: readdir, lstat, and the closes of directories, inside libc.
for i in 1 2 3 4 5; do mkdir -p "tree/sub/d$i"; echo "$i" >"tree/sub/d$i/f"; done
record 120 ls ls.out ls.err ls -lR tree
[ "$status" -eq 0 ] || fail "record of ls -lR exited $status: $(tail -n 3 ls.err)"
[ "$(grep -c '^-' ls.out)" -eq 205 ] || fail "ls -lR listed $(grep -c '^-' ls.out) files, not 205"
expect_same_replay ls ls.out ls.err 0
bounded 120 "$repro" dump ls >ls.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
grep -q ' syscall getdents64(.*\[fast path\]$' ls.dump || fail "ls's getdents64 is not on the fast path"
grep -q ' syscall openat(AT_FDCWD, "tree/sub/d[0-9]", [A-Z_|]*O_DIRECTORY[A-Z_|]*) = [0-9]* \[fast path\]$' ls.dump ||
  fail "ls's opendir is not on the fast path: $(grep ' openat(' ls.dump | tail -n 2)"
pass

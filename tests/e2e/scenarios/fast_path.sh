#!/usr/bin/env bash
# The in-process fast path (preload/librepro_preload.so):
#   - a program making 100,000 getppid() and 100,000 syscall(SYS_getppid)
#     calls in each of two threads and a forked child, and 20,000 preads and
#     some reads of a file in the parent and the child,
#     record with syscall-batch events holding them, and far fewer
#     ptrace stops than syscalls;
#   - its replay prints the same, both ways replay answers those calls:
#     in the program, from the replay queue (the default), and each at a
#     stop (REPRO_REPLAY_FAST_PATH=stop); and dump lists the batches' syscalls one
#     per line flagged "[fast path]" (and in --json);
#   - recorded with --no-fast-path the same program has no batch at all,
#     every syscall a stop of its own, and replays the same too;
#   - find -size and ls -l over a small tree stat each file on the fast path
#     (newfstatat, statx), and the trace keeps each path, as a stop would;
#     ls -l's extended attribute reads (its SELinux context, its ACL) are on
#     the fast path too, the trace keeping their path and attribute name,
#     and so are find's directory opens, fcntl calls and closes of
#     directories;
#   - the library learns what a descriptor is with a logged statx that
#     asks no time stamps, or, where statx is refused (run under a seccomp
#     filter that answers it ENOSYS), asks statx once and fstat after;
#   - the file_writes test program's writes to a regular file (write,
#     pwrite64, writev, pwritev, stdio's) are on the fast path, those to
#     stdout and to a copy of it are not (replay prints them), nor, once
#     the process maps a file shared (its mmap event tells the library),
#     any write: each stops after its mapped-file note, which replay
#     applies to its copy of the file;
#   - the file_opens test program's opens of regular files for reading,
#     and of a missing file, are on the fast path, and so are its closes,
#     after which its reads of 2 KiB are still stored by reference; its
#     opens of /proc, of a FIFO (a thread waits in it), with O_TRUNC, for
#     writing and of a symlink with O_NOFOLLOW are not;
#   - the pipe_bursts test program's pipe reads and writes are on the
#     fast path (RWF_NOWAIT) where the kernel supports it, and go to a
#     stop when the pipe is empty or full (a write's rest, after what a
#     full pipe took); REPRO_FAST_PATH_PIPES=off keeps them all at stops;
#   - the nonblocking_sockets test program's sends (sendmsg too), recvs,
#     reads and writes on sockets that cannot block, and its polls with a zero
#     timeout, are on the fast path; its echo thread's reads of a
#     blocking socket, and polls that may wait, are not;
#   - a statically linked program (no dynamic loader, so no preload)
#     records on the slow path and replays.
# Usage: fast_path.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start fast_path "$@"
need_tool python3
program=$build_dir/tests/e2e/scenarios/scenario_fast_path
need_file "$program"

# record_test_program NAME PROGRAM: records the test program PROGRAM as
# trace NAME, expects it to finish and to replay the same, and dumps the
# trace into NAME.dump.
record_test_program() {
  local name=$1 path=$build_dir/tests/programs/$2
  need_file "$path"
  record 120 "$name" "$name.out" "$name.err" "$path"
  [ "$status" -eq 0 ] || fail "record of $2 exited $status: $(tail -n 3 "$name.err")"
  grep -q '^EXIT-SUCCESS$' "$name.out" || fail "$2 did not finish: $(tail -n 3 "$name.out")"
  expect_same_replay "$name" "$name.out" "$name.err" 0
  bounded 60 "$repro" dump "$name" >"$name.dump" 2>dump.err || fail "dump of $name failed: $(cat dump.err)"
}

head -c 8192 /dev/urandom >data
record 120 trace rec.out rec.err "$program" 100000 data
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err) $(cat rec.out)"
grep -q 'ids consistent: 1 1, child: 0' rec.out || fail "the program saw wrong ids: $(cat rec.out)"
expect_check_complete trace
expect_same_replay trace rec.out rec.err 0
REPRO_REPLAY_FAST_PATH=stop expect_same_replay trace rec.out rec.err 0
bounded 120 "$repro" dump trace >dump.out 2>dump.err || fail "dump failed: $(cat dump.err)"
batches=$(grep -c '^#[0-9]* t[0-9]* syscall-batch ' dump.out)
fast=$(grep -c ' \[fast path\]$' dump.out)
fast_getppid=$(grep -c ' syscall getppid() = [0-9]* \[fast path\]$' dump.out)
stops=$(grep -c '^#[0-9]* t[0-9]* syscall ' dump.out)
[ "$batches" -gt 0 ] || fail "no syscall-batch event"
# Both threads and the child: 3 x 200,000 getppid, 2 x 20,000 file reads.
[ "$fast_getppid" -ge 600000 ] || fail "only $fast_getppid getppid calls on the fast path"
[ "$stops" -lt 2000 ] || fail "$stops syscalls stopped at repro (with $fast on the fast path)"
grep -q ' syscall pread64([0-9]*, ".*"\(\.\.\.\)\?, 512, [0-9]*) = 512 \[writes 1: 512 bytes\] \[fast path\]$' dump.out ||
  fail "no pread64 on the fast path"
bounded 120 "$repro" dump --json trace >dump.json 2>dump.err || fail "dump --json failed: $(cat dump.err)"
python3 - <<'PY' || fail "dump --json does not list the batches' syscalls"
import json
batches = [e for e in map(json.loads, open("dump.json")) if e.get("kind") == "syscall-batch"]
syscalls = [s for b in batches for s in b["syscalls"]]
assert sum(s["syscall"] == "getppid" for s in syscalls) >= 600000, len(syscalls)
assert any(s["syscall"] == "read" and s["output_bytes"] == 100 for s in syscalls)
PY

# Stats of a path: find -size (fstatat) and ls -l (statx) over a tree.
mkdir -p tree/sub
for i in 1 2 3 4 5 6 7 8 9 10; do echo "$i" >"tree/sub/file-$i"; done
record 120 stats stats.out stats.err sh -c 'find tree -type f -size -2k | sort; ls -l tree/sub | wc -l'
[ "$status" -eq 0 ] || fail "record of find and ls exited $status: $(tail -n 3 stats.err)"
[ "$(grep -c '^tree/sub/file-' stats.out)" -eq 10 ] || fail "find listed other files: $(cat stats.out)"
expect_same_replay stats stats.out stats.err 0
bounded 60 "$repro" dump stats >stats.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
for i in 1 2 3 4 5 6 7 8 9 10; do
  grep -q "syscall newfstatat([0-9]*, \"file-$i\", {st_mode=S_IFREG|.*\[fast path\]$" stats.dump ||
    fail "find's stat of file-$i is not on the fast path with its path: $(grep "file-$i" stats.dump | head -n 3)"
  grep -q "syscall statx(AT_FDCWD, \"tree/sub/file-$i\", .*\[fast path\]$" stats.dump ||
    fail "ls's statx of file-$i is not on the fast path with its path: $(grep "file-$i" stats.dump | head -n 3)"
done
grep -q ' syscall fcntl([0-9]*, F_DUPFD_CLOEXEC, .*\[fast path\]$' stats.dump ||
  fail "no F_DUPFD_CLOEXEC of find on the fast path: $(grep ' fcntl(' stats.dump | head -n 3)"
grep -q ' syscall openat([A-Z_0-9]*, "[a-z/-]*", [A-Z_|]*O_DIRECTORY[A-Z_|]*) = [0-9]* \[fast path\]$' stats.dump ||
  fail "no directory open of find on the fast path: $(grep ' openat(' stats.dump | head -n 3)"
grep -q ' syscall close([0-9]*) = 0 \[fast path\]$' stats.dump ||
  fail "no close on the fast path: $(grep ' close(' stats.dump | head -n 3)"
# ls asks each file's attributes until a file system says it keeps none.
grep -q 'syscall l\?getxattr("tree/sub/file-[0-9]*", "[a-z]*\.[a-z_.]*", .*\[fast path\]$' stats.dump ||
  fail "no extended attribute read of ls on the fast path with its path and name: $(grep 'xattr' stats.dump | head -n 3)"

# Writes: to a regular file on the fast path, to stdout (a file here) not.
record_test_program writes file_writes
# The library's probe before each call: statx without time stamps.
grep -q ' syscall statx([0-9]*, 0x[0-9a-f]*, AT_EMPTY_PATH, 0x301, 0x[0-9a-f]*) = 0 \[writes 1: 256 bytes\] \[fast path\]$' writes.dump ||
  fail "no statx probe on the fast path: $(grep -m 3 ' statx(' writes.dump)"
for call in 'write([0-9]*, 0x[0-9a-f]*, 3000) = 3000' 'write([0-9]*, 0x[0-9a-f]*, 4096) = 4096' \
    'pwrite64([0-9]*, 0x[0-9a-f]*, 2, [0-9a-fx]*) = 2' 'writev([0-9]*, 0x[0-9a-f]*, 3) = 60' \
    'pwritev([0-9]*, 0x[0-9a-f]*, 2, [0-9a-fx]*, 0) = 30'; do
  grep -q " syscall $call \[fast path\]$" writes.dump ||
    fail "no $call on the fast path: $(grep " syscall ${call%%(*}(" writes.dump | head -n 3)"
done
! grep -q ' syscall write\(v\)\?\((1\|20\), .*\[fast path\]' writes.dump ||
  fail "a write to stdout took the fast path: $(grep ' syscall write[v]*(\(1\|20\),.*fast path' writes.dump | head -n 3)"
grep -q ' syscall mmap(NULL, 8192, PROT_READ, MAP_SHARED, [0-9]*, 0) = 0x[0-9a-f]* \[writes 1: 4 bytes\]$' writes.dump ||
  fail "the shared mmap does not tell the library to stop its fast-path writes: $(grep MAP_SHARED writes.dump)"
grep -A1 ' mapped-file .*written.bin at 0x64 ' writes.dump | grep -q ' syscall write([0-9]*, "first", 5) = 5$' ||
  fail "the write into the shared mapping is not a stop after its mapped-file note: $(grep -A1 'written.bin at 0x64' writes.dump)"
bounded 60 "$repro" report --effects writes >writes.effects 2>report.err ||
  fail "report --effects failed: $(cat report.err)"
grep -q 'written.bin .*wrote 827602 bytes (786 writes)' writes.effects ||
  fail "report --effects does not count the fast-path writes: $(grep written.bin writes.effects)"

# Where the kernel refuses statx (ENOSYS before 4.11, EPERM in some
# containers), the library's probe asks once and uses fstat from then on.
deny=$build_dir/tests/e2e/scenarios/scenario_deny_syscall
need_file "$deny"
bounded 120 "$deny" statx ENOSYS "$repro" record -o nostatx -- "$build_dir/tests/programs/file_writes" \
  >nostatx.out 2>nostatx.err
[ "$?" -eq 0 ] || fail "record of file_writes without statx failed: $(tail -n 3 nostatx.err)"
cmp -s writes.out nostatx.out || fail "file_writes printed otherwise without statx"
expect_same_replay nostatx nostatx.out nostatx.err 0
bounded 60 "$repro" dump nostatx >nostatx.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
probes=$(grep -c ' syscall statx([0-9]*, 0x[0-9a-f]*, AT_EMPTY_PATH, 0x301, .*\[fast path\]$' nostatx.dump)
refused=$(grep -c ' syscall statx([0-9]*, 0x[0-9a-f]*, AT_EMPTY_PATH, 0x301, .*) = -1 ENOSYS .*\[fast path\]$' nostatx.dump)
[ "$probes" -eq 1 ] && [ "$refused" -eq 1 ] ||
  fail "the probe asked statx $probes times ($refused refused), not once: $(grep ' statx(' nostatx.dump | head -n 3)"
fast_fstats=$(grep -c ' syscall fstat([0-9]*, {st_mode=S_IFREG|.*\[fast path\]$' nostatx.dump)
fast_writes=$(grep -c ' syscall pwrite64(.*\[fast path\]$' nostatx.dump)
[ "$fast_fstats" -ge 400 ] && [ "$fast_writes" -ge 400 ] ||
  fail "without statx, $fast_fstats fstat probes and $fast_writes pwrite64 on the fast path"

record_test_program opens file_opens
# 100 rounds of open, openat and fopen of two regular files for reading.
fast_opens=$(grep -c ' syscall openat(.*, O_RDONLY[|A-Z_]*) = [0-9]* \[fast path\]$' opens.dump)
[ "$fast_opens" -ge 300 ] || fail "only $fast_opens opens for reading on the fast path"
# 20 rounds of four 2 KiB reads and a close on the fast path: the reads
# still by reference to the file's copy, found through the path the
# library logged before the close.
fast_closes=$(grep -c ' syscall close([0-9]*) = 0 \[fast path\]$' opens.dump)
[ "$fast_closes" -ge 300 ] || fail "only $fast_closes closes of regular files on the fast path"
by_reference=$(grep -c ' syscall read([0-9]*, .*, 2048) = 2048 .*\[fast path\] \[from files/' opens.dump)
[ "$by_reference" -ge 80 ] ||
  fail "only $by_reference of the 80 reads before a fast-path close stored by reference: $(grep ' syscall read(.*, 2048) = 2048' opens.dump | head -n 2)"
grep -q ' syscall openat(AT_FDCWD, ".*/missing", O_RDONLY|O_CLOEXEC) = -1 ENOENT .*\[fast path\]$' opens.dump ||
  fail "the open of a missing file is not on the fast path: $(grep '/missing' opens.dump)"
for path in /proc/self/status '.*/fifo' '.*/a", O_RDONLY|O_TRUNC' '.*/a", O_RDWR' '.*/link", O_RDONLY|O_NOFOLLOW'; do
  ! grep -q " syscall openat(AT_FDCWD, \"$path.*\[fast path\]$" opens.dump ||
    fail "an open the fast path must leave alone took it: $(grep " syscall openat(AT_FDCWD, \"$path" opens.dump)"
  grep -q "^#[0-9]* t[0-9]* syscall openat(AT_FDCWD, \"$path" opens.dump ||
    fail "no open of $path at a stop: $(grep -c ' syscall openat(' opens.dump) opens"
done

piper=$build_dir/tests/programs/pipe_bursts
record_test_program pipes pipe_bursts
# pipe_calls NAME RESULT: fast-path NAME calls (RWF_NOWAIT) with that result.
pipe_calls() { grep -c " syscall $1([0-9]*, 0x[0-9a-f]*, 1, -1, 0, 0x8) = $2 .*\\[fast path\\]$" pipes.dump; }
# Whether this kernel reads an empty pipe with RWF_NOWAIT (EAGAIN) or not
# at all (EOPNOTSUPP), as the recorder's probe asks.
pipe_nowait=$(python3 -c '
import errno, os
r, w = os.pipe()
try:
    os.preadv(r, [bytearray(1)], -1, os.RWF_NOWAIT)
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' 2>&1)
if [ "$pipe_nowait" = EAGAIN ]; then
  # 2 MB in 10 KB writes and 16 KB reads, 40 writes of 3,000 bytes, 200
  # round trips: most on the fast path; a full or empty pipe, at a stop.
  [ "$(pipe_calls pwritev2 '[0-9]*')" -ge 300 ] || fail "only $(pipe_calls pwritev2 '[0-9]*') pipe writes on the fast path"
  [ "$(pipe_calls preadv2 '[0-9]*')" -ge 200 ] || fail "only $(pipe_calls preadv2 '[0-9]*') pipe reads on the fast path"
  [ "$(pipe_calls preadv2 '-1 EAGAIN .*')" -ge 1 ] || fail "no pipe read found its pipe empty on the fast path"
  [ "$(pipe_calls pwritev2 '-1 EPIPE .*')" -eq 1 ] || fail "the write with no reader is not one EPIPE on the fast path"
  # The 300,000-byte write: what the pipe took at once, the rest at a stop.
  grep -A1 ' syscall pwritev2([0-9]*, 0x[0-9a-f]*, 1, -1, 0, 0x8) = 65536 \[fast path\]$' pipes.dump |
    grep -q ' syscall-entered write([0-9]*, 0x[0-9a-f]*, 0x393e0)' ||
    fail "the write larger than the pipe did not leave its rest (234464 bytes) to a stop: $(grep -B1 -A1 ' write(.*, 0x393e0)' pipes.dump | head -n 3)"
  REPRO_FAST_PATH_PIPES=off record 120 pipes-off pipes-off.out pipes-off.err "$piper"
  [ "$status" -eq 0 ] || fail "record of pipe_bursts with REPRO_FAST_PATH_PIPES=off exited $status"
  cmp -s pipes.out pipes-off.out || fail "pipe_bursts printed otherwise with REPRO_FAST_PATH_PIPES=off"
  expect_same_replay pipes-off pipes-off.out pipes-off.err 0
  bounded 60 "$repro" dump pipes-off >pipes-off.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
  ! grep -q ' syscall p\(read\|write\)v2(' pipes-off.dump ||
    fail "REPRO_FAST_PATH_PIPES=off left pipe calls on the fast path"
  summary_pipes="pipes on the fast path (RWF_NOWAIT) and off"
else
  ! grep -q ' syscall p\(read\|write\)v2(' pipes.dump ||
    fail "pipe calls on the fast path where the kernel has no RWF_NOWAIT for pipes ($pipe_nowait)"
  summary_pipes="pipes at stops (RWF_NOWAIT on a pipe here: $pipe_nowait)"
fi

record_test_program sockets nonblocking_sockets
# fast_calls NAME: how many NAME syscalls the dump shows on the fast path.
fast_calls() { grep -c " syscall $1(.* \[fast path\]$" sockets.dump; }
# 200 rounds of write, send, recv with MSG_PEEK, read and recv on the
# non-blocking pair; the MSG_DONTWAIT loops; 100 echoed messages; TCP.
[ "$(fast_calls sendto)" -ge 300 ] || fail "only $(fast_calls sendto) sends on the fast path"
[ "$(fast_calls recvfrom)" -ge 400 ] || fail "only $(fast_calls recvfrom) recvs on the fast path"
[ "$(fast_calls read)" -ge 200 ] || fail "only $(fast_calls read) socket reads on the fast path"
[ "$(fast_calls write)" -ge 200 ] || fail "only $(fast_calls write) socket writes on the fast path"
[ "$(fast_calls sendmsg)" -ge 45 ] || fail "only $(fast_calls sendmsg) sendmsg calls on the fast path"
[ "$(fast_calls poll)" -ge 5 ] && [ "$(fast_calls epoll_wait)" -ge 5 ] ||
  fail "polls with a zero timeout not on the fast path: $(grep -E ' syscall (poll|epoll_wait)\(' sockets.dump | head -n 3)"
! grep -Eq ' syscall (poll|epoll_wait)\(.*, [1-9][0-9]*\) = .*\[fast path\]$' sockets.dump ||
  fail "a poll that may wait took the fast path: $(grep -E ' syscall (poll|epoll_wait)\(.*, [1-9][0-9]*\) = .*fast path' sockets.dump | head -n 3)"
# The echo thread's reads of a blocking socket wait for the main thread.
! grep -q ' syscall read([0-9]*, .*, 64) = .*\[fast path\]$' sockets.dump ||
  fail "a read of a blocking socket took the fast path: $(grep ' syscall read(.*, 64) = .*fast path' sockets.dump | head -n 3)"
[ "$(grep -c '^#[0-9]* t1 syscall read([0-9]*, .*, 64) = ' sockets.dump)" -ge 100 ] ||
  fail "the echo thread's 100 blocking reads are not stops: $(grep ' t1 syscall read(' sockets.dump | head -n 3)"

# The same without the fast path (fewer calls: each one is a stop).
bounded 120 "$repro" record --no-fast-path -o slow -- "$program" 2000 data >slow.out 2>slow.err
status=$?
[ "$status" -eq 0 ] || fail "record --no-fast-path exited $status: $(tail -n 3 slow.err)"
expect_same_replay slow slow.out slow.err 0
bounded 120 "$repro" dump slow >slow.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
! grep -q ' syscall-batch \| \[fast path\]$' slow.dump || fail "--no-fast-path recorded batches"
slow_stops=$(grep -c ' syscall getppid() = ' slow.dump)
[ "$slow_stops" -ge 12000 ] || fail "--no-fast-path: only $slow_stops getppid stops"

# A static program: no dynamic loader reads LD_PRELOAD, all on the slow path.
if cc -static -O1 -o static_program -x c - <<'C' 2>/dev/null; then
#include <stdio.h>
#include <unistd.h>
int main(void) {
  long sum = 0;
  for (int i = 0; i < 1000; i++) sum += getppid() == getppid();
  printf("%ld\n", sum);
  return 0;
}
C
  record 120 static static.out static.err ./static_program
  [ "$status" -eq 0 ] || fail "static record exited $status: $(tail -n 3 static.err)"
  expect_same_replay static static.out static.err 0
  bounded 60 "$repro" dump static >static.dump 2>dump.err || fail "dump failed: $(cat dump.err)"
  ! grep -q ' syscall-batch ' static.dump || fail "batches from a static program"
  static_note=", a static program on the slow path"
else
  static_note=" (no static libc here: static program not tried)"
fi

pass "$fast syscalls in $batches batches, $stops stops; --no-fast-path: $slow_stops getppid stops; $summary_pipes$static_note"

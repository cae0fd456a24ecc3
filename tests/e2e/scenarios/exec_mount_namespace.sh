#!/usr/bin/env bash
# Exec in a private mount namespace of files only visible there: a program
# that unshares its mount namespace and runs copies of itself from a tmpfs
# (execve by path, execveat of an fd, execveat through a bind mount), and a
# shell under unshare(1) that runs a binary and a script from a tmpfs and
# execs one through a bind mount. Replay needs no namespace: it execs the
# trace's copies, and mount and unshare are answered from the trace. Each
# replays identical. Skipped (77) where such a namespace is not permitted.
# Usage: exec_mount_namespace.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start exec_mount_namespace "$@"
program=$build_dir/tests/e2e/scenarios/scenario_exec_mount_namespace
need_file "$program"

bounded 60 "$program" >native.out 2>native.err
native_status=$?
[ "$native_status" -ne 77 ] || skip "$(cat native.out)"
[ "$native_status" -eq 0 ] || fail "the native run exited $native_status: $(tail -n 5 native.err)"
record 120 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
cmp -s native.out record.out ||
  fail "recorded output differs from native: $(diff native.out record.out | head -n 20)"
expect_check_complete trace
expect_same_replay trace record.out record.err 0

need_tool unshare mount bash cp
mkdir tmpfs bind
cat >ns.sh <<'SCRIPT'
mount -t tmpfs tmpfs tmpfs || exit 90
cp /bin/echo tmpfs/echo2
tmpfs/echo2 "echo from the tmpfs"
printf '#!/bin/sh\necho "script on the tmpfs: $0"\n' >tmpfs/script.sh
chmod +x tmpfs/script.sh
tmpfs/script.sh
mount --bind tmpfs bind
cd bind && exec ./echo2 "exec through the bind mount"
SCRIPT
record 120 shell.trace shell.out shell.err unshare --mount --propagation private bash ns.sh
[ "$status" -ne 90 ] || fail "the tmpfs mounted for the program but not for the shell"
[ "$status" -eq 0 ] || fail "recorded shell exited $status: $(tail -n 5 shell.err)"
grep -q '^exec through the bind mount$' shell.out || fail "the shell printed: $(cat shell.out)"
expect_check_complete shell.trace
expect_same_replay shell.trace shell.out shell.err 0
pass "program and shell exec'd from a tmpfs and a bind mount in a new namespace, replays identical"

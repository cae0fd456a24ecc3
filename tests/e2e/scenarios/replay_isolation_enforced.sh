#!/usr/bin/env bash
# Replay isolation holds even when a syscall slips through emulation.
# isolation_client creates a file and talks to a TCP server on 127.0.0.1.
# After recording it, with the file removed and the server still
# listening, the test hook REPRO_REPLAY_EXECUTE_FOR_REAL makes replay run
# some syscalls for real, as an emulation bug would:
#   - isolated (REPRO_REPLAY_ISOLATION=namespace): `socket,connect` fails
#     with ENETUNREACH and `openat,close` with EROFS; replay reports the
#     divergence (status 75) naming that error; the server sees no
#     connection and no file appears or changes in the work directory;
#   - unisolated (REPRO_REPLAY_ISOLATION=off), the same hooks do leak: the
#     server sees a connection and the file is created. This half shows that
#     the first one tests something; replay also says, in one warning line,
#     that isolation is off.
# And where the host refuses the namespaces (simulated: unshare fails with
# EPERM under deny_syscall), `repro doctor` says replay-isolation DEGRADED,
# a replay says once that isolation is not enforced here and why, and
# replays as before; with REPRO_REPLAY_ISOLATION=namespace it refuses
# (status 1). The hooked half skips where this host cannot isolate.
# Usage: replay_isolation_enforced.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start replay_isolation_enforced "$@"
python=/usr/bin/python3
need_file "$python"
client=$build_dir/tests/e2e/scenarios/scenario_isolation_client
need_file "$client"
deny_syscall=$build_dir/tests/e2e/scenarios/scenario_deny_syscall
need_file "$deny_syscall"

start_background "$python" "$scenario_dir/tcp_server.py" port server.log
wait_for 20 test -s port || fail "the TCP server did not start"
port=$(cat port)
connections() { grep -c '^connection from' server.log; }

mkdir out
record 60 trace record.out record.err "$client" "$work/out/file" "$port"
[ "$status" -eq 0 ] || fail "recorded client exited $status: $(tail -n 5 record.err)"
[ -e out/file ] || fail "the recorded run did not create out/file"
wait_for 10 eval '[ "$(connections)" -eq 1 ]' ||
  fail "the server did not see the recorded connection: $(cat server.log)"
rm out/file

# A host that refuses the namespaces: replay (in the default mode, auto,
# whatever the caller set) goes on, and says so once.
bounded 60 "$deny_syscall" unshare EPERM "$repro" doctor >doctor-denied.out 2>&1
grep -q '^DEGRADED  *replay-isolation  *unshare(.*EPERM' doctor-denied.out ||
  fail "doctor does not see that unshare is refused: $(grep replay-isolation doctor-denied.out)"
REPRO_REPLAY_ISOLATION=auto bounded 60 "$deny_syscall" unshare EPERM "$repro" replay trace >denied.out 2>denied.err
[ $? -eq 0 ] || fail "replay where unshare is refused failed: $(tail -n 5 denied.err)"
cmp -s record.out denied.out || fail "replay where unshare is refused printed other output"
[ "$(grep -c '^repro: warning: replay isolation is not enforced here (unshare(.*): Operation not permitted)' denied.err)" -eq 1 ] ||
  fail "replay where unshare is refused did not say so once: $(cat denied.err)"
REPRO_REPLAY_ISOLATION=namespace bounded 60 "$deny_syscall" unshare EPERM "$repro" replay trace \
  >denied-required.out 2>denied-required.err
[ $? -eq 1 ] || fail "REPRO_REPLAY_ISOLATION=namespace replayed where unshare is refused"
grep -q 'REPRO_REPLAY_ISOLATION=namespace, but this host does not allow it' denied-required.err ||
  fail "REPRO_REPLAY_ISOLATION=namespace: no clear refusal: $(cat denied-required.err)"
[ ! -e out/file ] || fail "a replay where unshare is refused created out/file"

bounded 60 "$repro" doctor >doctor.out 2>&1
grep -q '^OK  *replay-isolation' doctor.out ||
  skip "replay cannot isolate the program here: $(grep replay-isolation doctor.out)"

# Replay's scratch directory goes under $TMPDIR: here, so that the check
# below sees every file the replays could have written.
mkdir tmp
export TMPDIR=$work/tmp

# snapshot: every file under $work but the replays' own outputs, with its
# size and modification time (of directories, only the name: replay makes
# and removes its scratch directory in tmp/).
snapshot() {
  find "$work" -path "$work/replay-*" -prune -o -path "$work/server.log" -prune -o \
    -path "$work/*.snapshot" -prune -o \
    -type d -printf '%p/\n' -o -printf '%p %s %T@\n' | sort
}
snapshot >before.snapshot

# replay_with NAME ISOLATION SYSCALLS: replays with the hook into replay-NAME.*.
replay_with() {
  REPRO_REPLAY_ISOLATION=$2 REPRO_REPLAY_EXECUTE_FOR_REAL=$3 \
    replay 60 trace "replay-$1.out" "replay-$1.err"
}
# expect_blocked NAME ERROR: the replay diverged at the hooked syscall,
# which failed with ERROR.
expect_blocked() {
  [ "$status" -eq 75 ] ||
    fail "isolated replay with $1 exited $status, not 75: $(tail -n 20 "replay-$1.err")"
  grep -q "^  observed: run for real (REPRO_REPLAY_EXECUTE_FOR_REAL): .*($2)" "replay-$1.err" ||
    fail "isolated replay with $1 did not fail with '$2': $(head -n 5 "replay-$1.err")"
}

replay_with connect namespace socket,connect
expect_blocked connect "Network is unreachable"
replay_with openat namespace openat,close,write
expect_blocked openat "Read-only file system"
sleep 0.5  # the time a leaked connection would take to reach server.log
[ "$(connections)" -eq 1 ] || fail "an isolated replay reached the server: $(cat server.log)"
[ ! -e out/file ] || fail "an isolated replay created out/file"
snapshot >after.snapshot
diff before.snapshot after.snapshot >snapshot.diff ||
  fail "isolated replays changed files: $(head -n 20 snapshot.diff)"

# Without isolation the same hooks leak: the test above can fail.
replay_with connect-off off socket,connect
[ "$(grep -c 'replay isolation is off' replay-connect-off.err)" -eq 1 ] ||
  fail "replay with REPRO_REPLAY_ISOLATION=off did not say so once: $(head -n 5 replay-connect-off.err)"
wait_for 10 eval '[ "$(connections)" -eq 2 ]' ||
  fail "unisolated replay with socket,connect did not reach the server: $(cat server.log)"
replay_with openat-off off openat,close,write
[ "$(cat out/file 2>/dev/null)" = "written by isolation_client" ] ||
  fail "unisolated replay with openat,close,write did not write out/file"
pass "hooked connect and openat fail isolated (ENETUNREACH, EROFS) and leak unisolated; refused namespaces: one warning, or a refusal with namespace"

#!/usr/bin/env bash
# The trace outgrows the space it has: recording stops with one clear error
# line, the program is not left running, and what was written stays
# readable (`check`: incomplete, exit 65; `dump` lists the valid events;
# `replay --allow-incomplete` replays them without crashing). The program
# reads 64 MiB of /dev/urandom (every byte read goes into the trace) and
# writes it to /dev/null.
#   1. A 6 MiB tmpfs as the trace's file system (a private mount namespace,
#      `unshare -m`): ENOSPC, "No space left on device".
#   2. RLIMIT_FSIZE of 8 MiB (`ulimit -f` in a subshell): EFBIG, "File too
#      large", where the kernel also sends SIGXFSZ, which must not kill
#      repro (status 153).
#   3. The program's own SIGXFSZ: a recorded shell sets `ulimit -f` and
#      writes past it; its child dies of SIGXFSZ as it does outside repro
#      (repro ignores SIGXFSZ, the program must not inherit that).
# Skips only if neither 1 nor 2 can be set up here.
# Usage: disk_full.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start disk_full "$@"
need_tool head sh cp

program='echo $$ >"$1"; exec head -c 64M /dev/urandom'

# check_stopped NAME REASON: the assertions after record (status in $status,
# the trace copied to trace-NAME).
check_stopped() {
  local name=$1 reason=$2 events pid
  [ "$status" -eq 1 ] || fail "$name: record exited $status, not 1: $(tail -n 5 "$name.err")"
  grep -Eq 'terminate called|Segmentation|Aborted|internal error|File size limit' "$name.err" &&
    fail "$name: repro crashed: $(tail -n 5 "$name.err")"
  grep -q "^repro: error: writing trace .*: $reason\$" "$name.err" ||
    fail "$name: no error line saying '$reason': $(cat "$name.err")"
  grep -q '^repro: the trace in .* is incomplete$' "$name.err" ||
    fail "$name: repro did not say the trace is incomplete: $(cat "$name.err")"
  pid=$(cat "$name.pid")
  wait_for 20 eval '! is_running "$pid"' || {
    kill -KILL "$pid"
    fail "$name: the program (pid $pid) still runs after repro stopped"
  }
  bounded 30 "$repro" check "trace-$name" >"$name.check" 2>&1
  status=$?
  [ "$status" -eq 65 ] || fail "$name: repro check exited $status, not 65: $(cat "$name.check")"
  events=$(sed -n 's/.*: incomplete, \([0-9][0-9]*\) valid events.*/\1/p' "$name.check")
  [ -n "$events" ] && [ "$events" -gt 0 ] ||
    fail "$name: repro check does not say 'incomplete, N valid events' with N > 0: $(cat "$name.check")"
  bounded 30 "$repro" dump "trace-$name" >"$name.dump" 2>"$name.dump.err"
  status=$?
  [ "$status" -eq 0 ] || fail "$name: repro dump exited $status: $(tail -n 3 "$name.dump.err")"
  [ "$(grep -c '^#[0-9]* t[0-9]* ' "$name.dump")" -eq "$events" ] ||
    fail "$name: repro dump lists $(grep -c '^#[0-9]* t[0-9]* ' "$name.dump") events, check says $events"
  replay 60 "trace-$name" "$name.replay.out" "$name.replay.err" --allow-incomplete
  case "$status" in
    65 | 70 | 75 | 129 | 13[0-68-9] | 1[4-9][0-9] | 2[0-9][0-9])
      fail "$name: replay --allow-incomplete exited $status: $(tail -n 10 "$name.replay.err")" \
        "$(replay_hint "trace-$name")" ;;
  esac
  summary+="$name: stopped after $events events ($reason); "
}
summary=
ran=0

# 1. A full tmpfs.
mkdir mnt
bounded 90 unshare -m sh -c '
  mount -t tmpfs -o size=6m tmpfs "$1" || exit 200
  "$2" record -o "$1/trace" -- sh -c "$3" sh "$4" >/dev/null 2>"$5"
  status=$?
  cp -a "$1/trace" "$6" || exit 201
  exit $status' sh "$work/mnt" "$repro" "$program" "$work/tmpfs.pid" "$work/tmpfs.err" \
  "$work/trace-tmpfs" 2>unshare.err
status=$?
if [ "$status" -eq 200 ] || { [ "$status" -ne 0 ] && [ ! -e tmpfs.err ]; }; then
  summary+="tmpfs: not possible here ($(head -n 1 unshare.err)); "
else
  [ "$status" -ne 201 ] || fail "tmpfs: cannot copy the trace out of the tmpfs"
  skip_unless_ptrace tmpfs.err
  check_stopped tmpfs 'No space left on device'
  ran=1
fi

# 2. RLIMIT_FSIZE.
(
  ulimit -f 8192 || exit 200
  exec timeout -k 5 90 "$repro" record -o trace-fsize -- sh -c "$program" sh "$work/fsize.pid" \
    >/dev/null 2>fsize.err
) 9>&-
status=$?
[ "$status" -ne 124 ] || fail "fsize: timed out after 90s"
if [ "$status" -eq 200 ]; then
  summary+="ulimit -f: not possible here; "
else
  skip_unless_ptrace fsize.err
  [ "$status" -ne 153 ] || fail "fsize: repro was killed by SIGXFSZ: $(cat fsize.err)"
  check_stopped fsize 'File too large'
  ran=1
fi
[ "$ran" -eq 1 ] || skip "neither a tmpfs in a private mount namespace nor ulimit -f works here"

# 3. The program's own file size limit.
script='ulimit -f 1 && head -c 100000 /dev/zero >big; echo "status $?"'
sh -c "$script" >native.out 2>/dev/null
rm -f big
record 60 trace-own own.out own.err sh -c "$script"
[ "$status" -eq 0 ] || fail "own: record exited $status: $(tail -n 5 own.err)"
cmp -s native.out own.out ||
  fail "own: the program's SIGXFSZ went otherwise when recorded: native $(cat native.out), recorded $(cat own.out)"
grep -q '^status 153$' own.out || fail "own: head did not die of SIGXFSZ: $(cat own.out)"
expect_check_complete trace-own
expect_same_replay trace-own own.out own.err 0
pass "${summary}the program's own SIGXFSZ as outside repro"

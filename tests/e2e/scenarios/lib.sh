# Helpers shared by the scenario tests (tests/e2e/scenarios/<name>.sh).
# Sourced, never run. A scenario starts with
#   source "$(dirname "$0")/lib.sh"
#   scenario_start NAME "$@"        # REPRO BUILD_DIR
# and ends with `pass "summary"`; on any failed assertion it calls
# `fail "reason"`. Both exit: 0 pass, 1 fail; 77 (skip) only when ptrace is
# not permitted here, or something else the scenario needs from the system
# (a private mount namespace): `skip "reason"`. The work directory ($work, also the current directory)
# is removed on success and kept, with its path printed, on failure.
#
# Every command that could hang runs under `bounded SECONDS ...`, and
# background processes started with `start_background` are killed (by pid)
# when the scenario exits, so a scenario never outlives its ctest TIMEOUT.
set -u

# This directory (the scenario scripts and their data files).
scenario_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scenario=unknown
work=
background_pids=()

# scenario_start NAME REPRO BUILD_DIR: checks the arguments and makes $work.
# Sets $repro and $build_dir (absolute paths).
scenario_start() {
  scenario=$1
  shift
  if [ $# -ne 2 ]; then
    echo "usage: $scenario.sh REPRO BUILD_DIR"
    exit 2
  fi
  repro=$(realpath "$1") || exit 2
  build_dir=$(realpath "$2") || exit 2
  if [ ! -x "$repro" ]; then
    echo "FAIL [$scenario]: repro '$1' is not an executable"
    exit 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/repro-scenario-$scenario-XXXXXX") || exit 1
  cd "$work" || exit 1
  # fd 9 is the scenario's own stdout, for verdicts given while stdout is
  # redirected (a timeout inside `bounded ... >FILE`). Commands run through
  # bounded and start_background do not inherit it.
  exec 9>&1
  trap stop_background EXIT
  trap 'fail "killed by SIGTERM"' TERM
  trap 'fail "interrupted by SIGINT"' INT
}

fail() {
  trap - TERM INT
  echo "FAIL [$scenario]: $*" >&9
  echo "  work directory kept: $work" >&9
  exit 1
}

pass() {
  echo "PASS [$scenario]: $*" >&9
  cd / && rm -rf "$work"
  exit 0
}

# need_tool NAME...: the scenario depends on these programs; a missing one is
# a failure (the scenarios test real programs and must not silently pass).
need_tool() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || fail "required program '$tool' is not installed"
  done
}

# need_file PATH: a file the build should have produced.
need_file() {
  [ -x "$1" ] || fail "'$1' does not exist or is not executable (build the tests first)"
}

# bounded SECONDS COMMAND...: runs COMMAND with a time limit and returns its
# status; a timeout is a failure (a hang is a bug, never a pass).
bounded() {
  local seconds=$1
  shift
  local started=$SECONDS status
  timeout -k 5 "$seconds" "$@" 9>&-
  status=$?
  # 124: timed out; 137 after the limit: it ignored SIGTERM and got SIGKILL.
  if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] && ((SECONDS - started >= seconds)); }; then
    fail "timed out after ${seconds}s: $*"
  fi
  return "$status"
}

skip() {
  echo "SKIP [$scenario]: $*" >&9
  cd / && rm -rf "$work"
  exit 77
}

# skip_unless_ptrace ERRFILE: after a `repro record`, turns "ptrace is not
# permitted" into a skip.
skip_unless_ptrace() {
  if grep -q 'ptrace is not permitted' "$1"; then
    skip "ptrace is not permitted here"
  fi
}

# record SECONDS TRACE OUT ERR PROGRAM [ARGS...]: `repro record` with stdout
# and stderr in OUT and ERR; sets $status. Skips if ptrace is not permitted.
record() {
  local seconds=$1 trace=$2 out=$3 err=$4
  shift 4
  bounded "$seconds" "$repro" record -o "$trace" -- "$@" >"$out" 2>"$err"
  status=$?
  skip_unless_ptrace "$err"
}

# replay SECONDS TRACE OUT ERR [REPLAY_FLAGS...]: `repro replay`; sets $status.
replay() {
  local seconds=$1 trace=$2 out=$3 err=$4
  shift 4
  bounded "$seconds" "$repro" replay "$@" "$trace" >"$out" 2>"$err"
  status=$?
}

# program_stderr FILE: FILE without repro's own "repro: ..." lines.
program_stderr() { grep -v '^repro: ' "$1" || true; }

# expect_check_complete TRACE: `repro check` accepts TRACE as complete.
expect_check_complete() {
  bounded 60 "$repro" check "$1" >"$work/check.out" 2>&1 ||
    fail "repro check $1 failed: $(cat "$work/check.out")"
  grep -q ': complete, ' "$work/check.out" ||
    fail "repro check $1 does not say complete: $(cat "$work/check.out")"
}

# expect_same_replay TRACE RECORD_OUT RECORD_ERR RECORD_STATUS [SECONDS]:
# replays TRACE into $work/replay.out and .err and asserts the same exit status,
# byte-identical stdout and identical program stderr.
expect_same_replay() {
  local trace=$1 rec_out=$2 rec_err=$3 rec_status=$4 seconds=${5:-120}
  local out=$work/replay.out err=$work/replay.err
  replay "$seconds" "$trace" "$out" "$err"
  [ "$status" -eq "$rec_status" ] ||
    fail "replay of $trace exited $status, recording $rec_status: $(tail -n 30 "$err")" \
      "$(replay_hint "$trace")"
  cmp -s "$rec_out" "$out" ||
    fail "replay stdout differs from the recording: $(diff "$rec_out" "$out" | head -n 20)" \
      "$(replay_hint "$trace")"
  cmp -s <(program_stderr "$rec_err") <(program_stderr "$err") ||
    fail "replay stderr differs from the recording:" \
      "$(diff <(program_stderr "$rec_err") <(program_stderr "$err") | head -n 20)"
}

replay_hint() { printf '\n  replay with: %s replay --events %s' "$repro" "$(realpath "$1")"; }

# start_background COMMAND...: runs COMMAND in the background, remembering its
# pid in $background_pid so that it is killed when the scenario exits.
start_background() {
  "$@" 9>&- &
  background_pid=$!
  background_pids+=("$background_pid")
}

# stop_pid PID: SIGTERM, then SIGKILL after 5 s; waits for it.
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

stop_background() {
  local pid
  for pid in "${background_pids[@]}"; do
    stop_pid "$pid"
  done
  background_pids=()
}

# is_running PID: PID is a process that has not ended. A zombie has ended:
# it waits only for its parent (init, for the orphans of a killed repro) to
# reap it.
is_running() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds;
# returns 1 if it never does within SECONDS.
wait_for() {
  local tenths=$(($1 * 10)) i
  shift
  for ((i = 0; i < tenths; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

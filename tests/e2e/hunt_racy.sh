#!/usr/bin/env bash
# A hunt must catch a racy program's bug, and the trace it keeps must replay
# the failure every time:
#   1. `repro hunt -n 1000 --until TRIGGER` exits 0, says what it caught and
#      that its own replay failed the same way;
#   2. the kept trace replays 10 times out of 10 with the recorded status
#      (and, for an output trigger, output that still matches).
# Usage: hunt_racy.sh REPRO PROGRAM TRIGGER
# Exit 0 pass, 1 fail, 77 skip (ptrace not permitted here).
set -u
repro=$1 program=$2 trigger=$3
name=$(basename "$program")
work=$(mktemp -d "${TMPDIR:-/tmp}/repro-hunt-$name-XXXXXX")
cd "$work" || exit 1

fail() {
  echo "FAIL [hunt/$name]: $*"
  echo "  work directory kept: $work"
  exit 1
}

timeout -k 5 800 "$repro" hunt -n 1000 --seed 1 --until "$trigger" -o hunt -- "$program" \
  >hunt.out 2>hunt.err
status=$?
if grep -q 'ptrace is not permitted' hunt.err; then
  echo "SKIP: ptrace is not permitted here"
  exit 77
fi
[ "$status" -eq 0 ] || fail "hunt exited $status: $(tail -n 5 hunt.err)"
caught=$(grep -o 'caught `[^`]*` (status [0-9]*) after [0-9]* runs' hunt.err) ||
  fail "hunt did not say what it caught: $(tail -n 5 hunt.err)"
grep -q 'the replay fails the same way' hunt.err ||
  fail "hunt's own replay did not confirm the failure: $(tail -n 5 hunt.err)"
recorded_status=$(echo "$caught" | sed 's/.*(status \([0-9]*\)).*/\1/')
trace=$(sed -n 's/^repro: hunt: trace //p' hunt.err)
[ -d "$trace" ] || fail "the kept trace '$trace' is not there"

pattern=
case "$trigger" in output:*) pattern=${trigger#output:} ;; esac
for run in $(seq 1 10); do
  timeout -k 5 120 "$repro" replay "$trace" >replay.out 2>replay.err
  status=$?
  [ "$status" -eq "$recorded_status" ] ||
    fail "replay $run exited $status, the recording $recorded_status: $(tail -n 3 replay.err)"
  if [ -n "$pattern" ]; then
    grep -v '^repro: ' replay.out replay.err | grep -qE "$pattern" ||
      fail "replay $run's output does not match '$pattern'"
  fi
done

rm -rf "$work"
echo "PASS [hunt/$name]: $caught; replayed 10/10 with status $recorded_status"

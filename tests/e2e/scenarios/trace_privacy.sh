#!/usr/bin/env bash
# A trace holds everything the program read, so it is private:
#   - recorded under umask 022, the trace directory and files/ are 0700,
#     header, events, trailer and the complete marker 0600, the copies in
#     files/ 0400 (one hard-linked to a read-only original keeps its bits);
#   - `record --redact-env REGEX` leaves matching variables' values out of
#     the header (grep finds no trace of the secret in it), while the program
#     still sees them set; `dump` shows each as redacted; `replay` says which
#     were left out in one line and still replays the program, which only
#     asked whether they were set, to the recorded output.
# Usage: trace_privacy.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start trace_privacy "$@"
program=$build_dir/tests/e2e/scenarios/scenario_env_probe
need_file "$program"
need_tool stat grep

secret=correct-horse-battery-staple-$RANDOM$RANDOM
umask 022
export PROBE_API_TOKEN=$secret PROBE_SESSION_KEY=$secret PROBE_PLAIN=visible
record 60 trace record.out record.err \
  "$program" PROBE_API_TOKEN PROBE_SESSION_KEY PROBE_PLAIN PROBE_UNSET
status_before=$status
# Same command, as record --redact-env; `record` in lib.sh passes no flags.
bounded 60 "$repro" record -o redacted --redact-env 'TOKEN$' --redact-env '^PROBE_SESSION_' -- \
  "$program" PROBE_API_TOKEN PROBE_SESSION_KEY PROBE_PLAIN PROBE_UNSET >redacted.out 2>redacted.err
redacted_status=$?
skip_unless_ptrace redacted.err
[ "$status_before" -eq 0 ] || fail "recorded run exited $status_before: $(tail -n 5 record.err)"
[ "$redacted_status" -eq 0 ] || fail "redacted recording exited $redacted_status: $(tail -n 5 redacted.err)"

# Modes.
mode() { stat -c %a "$1"; }
for dir in trace redacted; do
  [ "$(mode "$dir")" = 700 ] || fail "$dir has mode $(mode "$dir"), not 700"
  [ "$(mode "$dir/files")" = 700 ] || fail "$dir/files has mode $(mode "$dir/files"), not 700"
  for name in header events trailer complete; do
    [ "$(mode "$dir/$name")" = 600 ] || fail "$dir/$name has mode $(mode "$dir/$name"), not 600"
  done
  copies=0
  for copy in "$dir"/files/*; do
    copies=$((copies + 1))
    if [ "$(stat -c %h "$copy")" -gt 1 ]; then
      continue  # a hard link to a read-only original: the same inode, its own bits
    fi
    [ "$(mode "$copy")" = 400 ] || fail "$copy has mode $(mode "$copy"), not 400"
  done
  [ "$copies" -ge 2 ] || fail "$dir/files holds $copies copies, expected the program and libc"
done

# Without --redact-env the header holds the value; with it, not a byte of it.
grep -qF "$secret" trace/header || fail "the plain trace's header does not hold the environment"
if grep -qF "$secret" redacted/header; then
  fail "the header of the --redact-env trace holds the secret value"
fi
grep -q '"PROBE_API_TOKEN="' redacted/header || fail "the header lost the name PROBE_API_TOKEN"
grep -q '"PROBE_PLAIN=visible"' redacted/header || fail "the header lost PROBE_PLAIN's value"

# The program saw the real environment either way.
cmp -s record.out redacted.out ||
  fail "the program saw another environment under --redact-env: $(diff record.out redacted.out)"
grep -qx 'PROBE_API_TOKEN is set' redacted.out || fail "the program did not see PROBE_API_TOKEN"

bounded 60 "$repro" dump --header-only redacted >dump.out 2>&1 || fail "repro dump failed: $(cat dump.out)"
for name in PROBE_API_TOKEN PROBE_SESSION_KEY; do
  grep -q "^# env $name: value redacted (${#secret} bytes" dump.out ||
    fail "repro dump does not show $name redacted: $(grep '^# env' dump.out)"
done
if grep -q 'PROBE_PLAIN: value redacted' dump.out; then
  fail "repro dump shows PROBE_PLAIN redacted"
fi

# Replay: one line naming what was left out, then the recorded run.
expect_same_replay redacted redacted.out redacted.err 0 60
[ "$(grep -c 'leaves out the values of' "$work/replay.err")" -eq 1 ] ||
  fail "replay does not say once which values were left out: $(cat "$work/replay.err")"
grep 'leaves out the values of' "$work/replay.err" | grep -q 'PROBE_API_TOKEN, PROBE_SESSION_KEY' ||
  fail "replay's line does not name the redacted variables: $(cat "$work/replay.err")"
grep -q 'leaves out the values of PROBE_PLAIN\|PROBE_PLAIN,' "$work/replay.err" &&
  fail "replay names PROBE_PLAIN as redacted"
# A preemption point is found again by a hash of memory that covers the
# environment, so replay cannot get past one in a redacted trace: it must
# stop there with a clear message (never search for ever), and the preempt
# event must carry no page copies, which would hold the values.
spinner=$build_dir/tests/programs/spin_wait_pair
need_file "$spinner"
bounded 60 "$repro" record -o spin --redact-env TOKEN -- "$spinner" >spin.out 2>spin.err ||
  fail "recording spin_wait_pair failed: $(tail -n 5 spin.err)"
bounded 60 "$repro" dump spin >spin.dump 2>&1 || fail "repro dump spin failed: $(tail -n 3 spin.dump)"
if grep -Eq '^#[0-9]+ t[0-9]+ preempt ' spin.dump; then
  if grep -E '^#[0-9]+ t[0-9]+ preempt ' spin.dump | grep -q 'page cop'; then
    fail "a preempt event of the redacted trace carries page copies: $(grep ' preempt ' spin.dump | head -n 2)"
  fi
  replay 60 spin spin.replay.out spin.replay.err
  [ "$status" -eq 1 ] || fail "replay of the preempted redacted trace exited $status, not 1: $(tail -n 5 spin.replay.err)"
  grep -q 'cannot replay a preemption point of a trace recorded with --redact-env' spin.replay.err ||
    fail "replay does not say why it stops at the preemption point: $(tail -n 5 spin.replay.err)"
else
  expect_same_replay spin spin.out spin.err 0 60  # no preemption this time: nothing stands in the way
fi

pass "trace 700/600/400 under umask 022; --redact-env kept ${#secret}-byte values out of the header and replayed"

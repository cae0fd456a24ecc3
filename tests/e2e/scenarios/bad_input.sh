#!/usr/bin/env bash
# Bad input gives a clean error, never a crash or a hang:
#   - recording a program that does not exist: one "repro: ..." error line
#     naming it, nonzero status, no trace left behind as if it had run;
#   - replaying a trace directory that does not exist: exit 1 or 65;
#   - dump, check and replay of directories of random bytes (all random, and
#     a valid header with random events): exit 1 or 65;
#   - a complete trace whose `events` file is cut to half: `repro check`
#     exits 65, and replay and dump fail cleanly (exit 1 or 65);
#   - `record -o` an existing non-empty directory is refused, leaving the
#     directory as it was and not running the program.
# A crash is: killed by a signal (status >= 128), exit 70 (internal error),
# or a C++/sanitizer abort message. Every command runs with a time limit.
# Usage: bad_input.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start bad_input "$@"
need_tool head sha256sum

# run_repro NAME ARGS...: runs repro ARGS (30 s limit) into NAME.out/NAME.err; sets $status.
run_repro() {
  local name=$1
  shift
  bounded 30 "$repro" "$@" >"$name.out" 2>"$name.err"
  status=$?
}

# expect_clean_error NAME ALLOWED...: the last run_repro NAME exited with one
# of ALLOWED, said why (a "repro: " line on stderr, or `repro check`'s
# verdict on stdout), and did not crash.
expect_clean_error() {
  local name=$1 allowed
  shift
  grep -Eq 'terminate called|Segmentation|Aborted|AddressSanitizer|runtime error|core dumped' "$name.err" &&
    fail "$name: repro crashed (exit $status): $(head -n 5 "$name.err")"
  for allowed in "$@"; do
    if [ "$status" -eq "$allowed" ]; then
      grep -q '^repro: ' "$name.err" || grep -Eq ': (corrupt|incomplete)' "$name.out" ||
        fail "$name: exit $status without saying why: $(head -n 5 "$name.out" "$name.err")"
      return 0
    fi
  done
  fail "$name: exit $status, expected one of: $*; stderr: $(head -n 5 "$name.err")"
}

# 1. A program that does not exist.
run_repro record_missing record -o missing-trace -- /nonexistent
skip_unless_ptrace record_missing.err
[ "$status" -ne 0 ] || fail "recording /nonexistent exited 0"
expect_clean_error record_missing 1 64 65
[ "$(wc -l <record_missing.err)" -eq 1 ] ||
  fail "recording /nonexistent printed $(wc -l <record_missing.err) lines, not one: $(cat record_missing.err)"
grep -q '/nonexistent' record_missing.err ||
  fail "the error does not name /nonexistent: $(cat record_missing.err)"
[ ! -e missing-trace/complete ] || fail "recording /nonexistent left a complete trace"

# 2. A trace directory that does not exist.
run_repro replay_missing replay /nonexistent
expect_clean_error replay_missing 1 65
run_repro check_missing check /nonexistent
expect_clean_error check_missing 1 65

# 3. Directories of random bytes.
random_file() { head -c "$2" /dev/urandom >"$1" || fail "cannot write $1"; }
for n in 1 2 3 4 5; do
  dir=random-$n
  mkdir -p "$dir/files"
  random_file "$dir/header" $((n * 300))
  random_file "$dir/events" $((n * 4000))
  random_file "$dir/trailer" 200
  random_file "$dir/files/0123456789abcdef0123456789abcdef" 1000
  [ $((n % 2)) -eq 0 ] && touch "$dir/complete"
  for command in dump check replay; do
    run_repro "$command-$dir" "$command" "$dir"
    expect_clean_error "$command-$dir" 1 65
  done
done

# A real trace to damage.
record 60 trace record.out record.err ls -l /usr/bin
[ "$status" -eq 0 ] || fail "recording ls exited $status: $(tail -n 5 record.err)"
expect_check_complete trace
header=$(realpath trace/header)

# 4. A valid header with random events (complete, then incomplete).
for n in 1 2 3; do
  dir=random-events-$n
  mkdir -p "$dir/files"
  cp "$header" "$dir/header"
  random_file "$dir/events" $((n * 30000))
  if [ "$n" -ne 3 ]; then
    cp trace/trailer "$dir/trailer" && touch "$dir/complete"
  fi
  for command in dump check replay; do
    run_repro "$command-$dir" "$command" "$dir"
    expect_clean_error "$command-$dir" 1 65
  done
done

# 5. The events file cut to half.
cp -r trace truncated
size=$(stat -c %s truncated/events)
truncate -s $((size / 2)) truncated/events || fail "cannot truncate"
run_repro check-truncated check truncated
[ "$status" -eq 65 ] || fail "repro check of a half-truncated trace exited $status, not 65: $(cat check-truncated.out check-truncated.err)"
run_repro replay-truncated replay truncated
expect_clean_error replay-truncated 1 65
[ ! -s replay-truncated.out ] || fail "replay of the truncated trace printed: $(head -n 3 replay-truncated.out)"
run_repro dump-truncated dump truncated
expect_clean_error dump-truncated 1 65

# 6. -o pointing to an existing non-empty directory.
mkdir existing
echo "precious" >existing/data
before=$(ls -la existing; sha256sum existing/data)
run_repro record-existing record -o existing -- sh -c "touch '$work/program-ran'"
[ "$status" -ne 0 ] || fail "recording into an existing non-empty directory exited 0"
expect_clean_error record-existing 1 64 65
[ "$(ls -la existing; sha256sum existing/data)" = "$before" ] ||
  fail "recording into an existing directory changed it: $(ls -la existing)"
[ ! -e program-ran ] || fail "the program ran although the trace directory was refused"
pass "all bad input refused cleanly ($(cat check-truncated.out check-truncated.err | head -n 1))"

#!/usr/bin/env bash
# Bad input gives one clear line and a documented exit status (docs/cli.md),
# never a crash or a hang.
#   1. The trace verbs × kinds of damage: check, dump, dump --header-only,
#      replay and replay --allow-incomplete on a trace that is missing, a
#      file, an empty directory, zero-length files, truncated, corrupted,
#      extended, without its trailer or stored files, or of another format
#      version. Each (kind, verb) has its expected status in the table
#      below; "*" is a prefix replay, whose status is the program's where
#      the trace ends (anything but 65, 70, 75 or a signal). A failure
#      says why in exactly one line: one "repro: error: " line on stderr,
#      or `check`'s verdict on stdout.
#   2. Directories of random bytes (all random, and a valid header with
#      random events): exit 1 or 65.
#   3. The other verbs' bad arguments: record (a program that does not
#      exist, -o a non-empty directory or a file, options out of range),
#      hunt and ci (a program that does not exist, an unknown trigger),
#      doctor, syscalls, no verb or an unknown one.
#   4. `record -o` an existing non-empty directory is refused, leaving the
#      directory as it was and not running the program.
# A crash is: killed by a signal (status >= 128), exit 70 (internal error),
# or a C++/sanitizer abort message. Every command runs with a time limit.
# Usage: bad_input.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start bad_input "$@"
need_tool head sha256sum truncate sed dd

# run_repro NAME ARGS...: runs repro ARGS (30 s limit) into NAME.out/NAME.err; sets $status.
run_repro() {
  local name=$1
  shift
  bounded 30 "$repro" "$@" >"$name.out" 2>"$name.err"
  status=$?
}

# expect_no_crash NAME: the last run_repro NAME did not crash.
expect_no_crash() {
  grep -Eq 'terminate called|Segmentation|Aborted|AddressSanitizer|runtime error|core dumped|internal error' "$1.err" &&
    fail "$1: repro crashed (exit $status): $(head -n 5 "$1.err")"
  if [ "$status" -ge 128 ] || [ "$status" -eq 70 ]; then
    fail "$1: repro crashed (exit $status): $(head -n 5 "$1.err")"
  fi
  return 0
}

# expect_one_reason NAME: a failed run_repro NAME said why in one line.
expect_one_reason() {
  local errors
  errors=$(grep -c '^repro: error: ' "$1.err")
  if [ "$errors" -eq 0 ]; then
    [ "$(grep -Ec ': (corrupt|incomplete)' "$1.out")" -eq 1 ] && [ ! -s "$1.err" ] ||
      fail "$1: exit $status without saying why: $(head -n 5 "$1.out" "$1.err")"
  elif [ "$errors" -ne 1 ]; then
    fail "$1: $errors error lines: $(cat "$1.err")"
  fi
  # A bad command line also says where the usage is (docs/cli.md).
  grep -v '^repro: ' "$1.err" | grep -vx "run 'repro --help' for usage" | grep -q . &&
    fail "$1: more than one line on stderr: $(head -n 5 "$1.err")"
  return 0
}

# expect_clean_error NAME ALLOWED...: the last run_repro NAME exited with one
# of ALLOWED, said why in one line, and did not crash.
expect_clean_error() {
  local name=$1 allowed
  shift
  expect_no_crash "$name"
  for allowed in "$@"; do
    if [ "$status" -eq "$allowed" ]; then
      [ "$status" -eq 0 ] || expect_one_reason "$name"
      return 0
    fi
  done
  fail "$name: exit $status, expected one of: $*; stderr: $(head -n 5 "$name.err")"
}

# 1. The matrix. A real trace to damage: complete, several frames.
record 60 good record.out record.err ls -l /usr/bin
[ "$status" -eq 0 ] || fail "recording ls exited $status: $(tail -n 5 record.err)"
expect_check_complete good
events_bytes=$(stat -c %s good/events)
header_bytes=$(stat -c %s good/header)

# damage KIND: makes the damaged copy named KIND.
damage() {
  local kind=$1
  case "$kind" in
    missing) return ;;
    file) echo "not a trace" >file; return ;;
    empty-dir) mkdir empty-dir; return ;;
    zero-files)
      mkdir zero-files && : >zero-files/header && : >zero-files/events && : >zero-files/trailer &&
        : >zero-files/complete
      return ;;
    zero-files-incomplete)
      mkdir zero-files-incomplete && : >zero-files-incomplete/header &&
        : >zero-files-incomplete/events && : >zero-files-incomplete/incomplete
      return ;;
  esac
  cp -r good "$kind" || fail "cannot copy the trace"
  case "$kind" in
    zero-events) : >"$kind/events" ;;
    no-events) rm "$kind/events" ;;
    header-truncated) truncate -s $((header_bytes / 2)) "$kind/header" ;;
    header-garbage) head -c "$header_bytes" /dev/urandom >"$kind/header" ;;
    header-no-header) rm "$kind/header" ;;
    events-truncated) truncate -s $((events_bytes / 2)) "$kind/events" ;;
    events-truncated-incomplete)
      truncate -s $((events_bytes / 2)) "$kind/events"
      rm "$kind/complete" "$kind/trailer" && : >"$kind/incomplete" ;;
    events-corrupt)
      printf '\336\255\276\357\336\255\276\357' |
        dd of="$kind/events" bs=1 seek=$((events_bytes / 2)) conv=notrunc status=none ;;
    events-extended) head -c 5000 /dev/urandom >>"$kind/events" ;;
    trailer-missing) rm "$kind/trailer" ;;
    trailer-corrupt) echo '{"magic": "repro-trace", "format_' >"$kind/trailer" ;;
    trailer-wrong-count) sed -i 's/"event_count": [0-9]*/"event_count": 7/' "$kind/trailer" ;;
    version-new) sed -i 's/"format_version": [0-9]*/"format_version": 999/' "$kind/header" ;;
    version-old) sed -i 's/"format_version": [0-9]*/"format_version": 1/' "$kind/header" ;;
    files-missing) rm -r "$kind/files" ;;
    *) fail "unknown damage $kind" ;;
  esac
  [ $? -eq 0 ] || fail "cannot make the $kind trace"
}

# Expected statuses: check, dump, dump --header-only, replay, replay
# --allow-incomplete. `check` verifies files/ (missing copies: 65), `dump` does
# not need it (reads stored against a missing copy show where their bytes
# were); --header-only reads only the header (and, for a trace marked
# complete, the trailer).
matrix='
missing                      1  1  1  1  1
file                         1  1  1  1  1
empty-dir                    1  1  1  1  1
zero-files                   65 65 65 65 65
zero-files-incomplete        65 65 65 65 65
zero-events                  65 65 0  65 65
no-events                    65 65 65 65 65
header-truncated             65 65 65 65 65
header-garbage               65 65 65 65 65
header-no-header             65 65 65 65 65
events-truncated             65 65 0  65 65
events-truncated-incomplete  65 0  0  65 *
events-corrupt               65 65 0  65 65
events-extended              65 65 0  65 65
trailer-missing              65 65 65 65 65
trailer-corrupt              65 65 65 65 65
trailer-wrong-count          65 65 0  65 65
version-new                  65 65 65 65 65
version-old                  65 65 65 65 65
files-missing                65 0  0  65 65
'
verbs=(check dump "dump --header-only" replay "replay --allow-incomplete")
cases=0
while read -r kind expected_statuses; do
  [ -n "$kind" ] || continue
  damage "$kind"
  read -r -a expected <<<"$expected_statuses"
  for i in "${!verbs[@]}"; do
    read -r -a verb <<<"${verbs[$i]}"
    name="$kind.${verbs[$i]// /}"
    run_repro "$name" "${verb[@]}" "$kind"
    if [ "${expected[$i]}" = "*" ]; then
      expect_no_crash "$name"
      case "$status" in
        65 | 75) fail "$name: exit $status: $(head -n 5 "$name.err")" ;;
      esac
    else
      expect_clean_error "$name" "${expected[$i]}"
    fi
    # Damage inside `events`, or a count that disagrees with it, shows only
    # when replay reads that far; any other is refused before the program
    # runs.
    [ "${verb[0]}" != replay ] || [ "$status" -ne 65 ] || [ "$kind" = events-corrupt ] ||
      [ "$kind" = trailer-wrong-count ] || [ ! -s "$name.out" ] || fail "$name: the refused replay printed: $(head -n 3 "$name.out")"
    cases=$((cases + 1))
  done
done <<<"$matrix"
grep -q 'too new' version-new.check.err || fail "version-new: check does not say the version is too new: $(cat version-new.check.err)"
grep -q 'too old' version-old.check.err || fail "version-old: check does not say the version is too old: $(cat version-old.check.err)"
grep -q ': incomplete, [1-9][0-9]* valid events' events-truncated-incomplete.check.out ||
  fail "a trace cut in half and incomplete is not checked as incomplete with its valid events: $(cat events-truncated-incomplete.check.out)"

# 2. Directories of random bytes.
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
    cases=$((cases + 1))
  done
done
# A valid header with random events (complete, then incomplete).
for n in 1 2 3; do
  dir=random-events-$n
  mkdir -p "$dir/files"
  cp good/header "$dir/header"
  random_file "$dir/events" $((n * 30000))
  if [ "$n" -ne 3 ]; then
    cp good/trailer "$dir/trailer" && touch "$dir/complete"
  fi
  for command in dump check replay; do
    run_repro "$command-$dir" "$command" "$dir"
    expect_clean_error "$command-$dir" 1 65
    cases=$((cases + 1))
  done
done

# 3. The other verbs' bad arguments: NAME STATUS ARGS...
mkdir not-empty && echo "precious" >not-empty/data
while read -r name expected args; do
  [ -n "$name" ] || continue
  read -r -a argv <<<"$args"
  run_repro "$name" "${argv[@]}"
  expect_clean_error "$name" "$expected"
  cases=$((cases + 1))
done <<'EOF_ARGS'
record-no-program          64  record
record-missing-program     1   record -o missing-trace -- /nonexistent
record-not-executable      1   record -o not-executable-trace -- /etc/passwd
record-o-file              64  record -o file -- true
record-o-under-nothing     1   record -o /nonexistent/dir/trace -- true
record-bad-slice           64  record --time-slice-ms 0 -- true
record-bad-linger          64  record --linger soon -- true
record-seed-without-chaos  64  record --seed 3 -- true
hunt-no-program            64  hunt
hunt-missing-program       1   hunt -n 1 -o hunt-missing -- /nonexistent
hunt-bad-trigger           64  hunt --until bogus -- true
hunt-bad-runs              64  hunt -n 0 -- true
hunt-bad-shard             64  hunt --shard 3/2 -- true
ci-no-command              64  ci
ci-missing-command         127 ci -n 1 -o ci-missing -- /nonexistent
ci-bad-trigger             64  ci --until bogus -- false
doctor-bad-option          64  doctor --bogus
syscalls-unknown           64  syscalls no_such_syscall
syscalls-bad-number        64  syscalls 99999
dump-bad-option            64  dump --bogus good
check-two-traces           64  check good good
replay-bad-stop-at         64  replay --stop-at 99999999 good
no-verb                    64
unknown-verb               64  frobnicate
EOF_ARGS
[ "$(wc -l <record-missing-program.err)" -eq 1 ] ||
  fail "recording /nonexistent printed $(wc -l <record-missing-program.err) lines, not one: $(cat record-missing-program.err)"
grep -q '/nonexistent' record-missing-program.err ||
  fail "the error does not name /nonexistent: $(cat record-missing-program.err)"
[ ! -e missing-trace/complete ] || fail "recording /nonexistent left a complete trace"
[ "$(wc -l <hunt-missing-program.err)" -eq 1 ] ||
  fail "hunting /nonexistent printed more than its error: $(cat hunt-missing-program.err)"

# 4. -o pointing to an existing non-empty directory.
before=$(ls -la not-empty; sha256sum not-empty/data)
run_repro record-existing record -o not-empty -- sh -c "touch '$work/program-ran'"
expect_clean_error record-existing 64
[ "$(ls -la not-empty; sha256sum not-empty/data)" = "$before" ] ||
  fail "recording into an existing directory changed it: $(ls -la not-empty)"
[ ! -e program-ran ] || fail "the program ran although the trace directory was refused"
cases=$((cases + 1))
pass "$cases bad inputs refused cleanly with their documented statuses"

#!/usr/bin/env bash
# A set-user-ID or set-group-ID program under recording. The kernel does not
# raise the privileges of a traced process at exec, so the program runs with
# the ids it had. repro records it all the same and warns once per program:
#   repro: warning: 'PATH' is set-user-ID uid N (NAME): a traced program runs
#   without those privileges, ...
# and the replay repeats what was recorded. Checked with copies of `id` made
# set-user-ID nobody and set-group-ID to nobody's group (as root: natively
# they print 65534; recorded they print repro's own ids), started directly
# and from a shell. Not root: /usr/bin/passwd -S, which is set-user-ID root.
# Usage: setuid_program.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start setuid_program "$@"
need_tool id sh

# record_setid NAME EXPECTED_WARNING PROGRAM...: records PROGRAM into
# trace-NAME, expects one warning matching EXPECTED_WARNING, a complete
# trace and the same replay; sets $status.
record_setid() {
  local name=$1 warning=$2
  shift 2
  record 60 "trace-$name" "$name.out" "$name.err" "$@"
  [ "$(grep -c "^repro: warning: .* is set-.*: a traced program runs without those privileges" "$name.err")" -eq 1 ] ||
    fail "$name: not one set-id warning: $(cat "$name.err")"
  grep -q "$warning" "$name.err" || fail "$name: the warning does not say '$warning': $(cat "$name.err")"
  grep -Eq 'error|terminate called|Segmentation' "$name.err" && fail "$name: repro failed: $(cat "$name.err")"
  expect_check_complete "trace-$name"
  expect_same_replay "trace-$name" "$name.out" "$name.err" "$status"
}

if [ "$(id -u)" -ne 0 ]; then
  [ -u /usr/bin/passwd ] || skip "not root, and /usr/bin/passwd is not set-user-ID"
  record_setid passwd "'/usr/bin/passwd' is set-user-ID uid 0" /usr/bin/passwd -S
  pass "passwd -S recorded with a warning (status $status) and replayed the same"
fi

nobody_uid=$(id -u nobody 2>/dev/null) || skip "no user nobody"
nobody_gid=$(id -g nobody)
cp "$(command -v id)" suid-id && cp suid-id sgid-id || fail "cannot copy id"
chown nobody suid-id && chmod u+s suid-id || fail "cannot make suid-id set-user-ID nobody"
chgrp "$nobody_gid" sgid-id && chmod g+s sgid-id || fail "cannot make sgid-id set-group-ID"
[ "$(./suid-id -u)" = "$nobody_uid" ] ||
  skip "set-user-ID gives nothing in $work (mounted nosuid?): ./suid-id -u prints $(./suid-id -u)"

record_setid direct "'./suid-id' is set-user-ID uid $nobody_uid" ./suid-id -u
[ "$status" -eq 0 ] || fail "direct: record exited $status: $(cat direct.err)"
[ "$(cat direct.out)" = "$(id -u)" ] ||
  fail "direct: recorded ./suid-id -u printed $(cat direct.out), not repro's own uid $(id -u)"

record_setid shell "'./sgid-id' is set-group-ID gid $nobody_gid" sh -c './sgid-id -g; ./sgid-id -g'
[ "$status" -eq 0 ] || fail "shell: record exited $status: $(cat shell.err)"
[ "$(cat shell.out)" = "$(printf '%s\n%s' "$(id -g)" "$(id -g)")" ] ||
  fail "shell: recorded ./sgid-id -g printed $(cat shell.out), not repro's own gid twice"

# A program whose set-user-ID owner is the user recording it loses nothing.
cp "$(command -v id)" own-id && chmod u+s own-id || fail "cannot make own-id"
record 60 trace-own own.out own.err ./own-id -u
grep -q 'is set-' own.err && fail "own: a warning for a program that loses nothing: $(cat own.err)"
pass "set-user-ID and set-group-ID copies of id recorded with one warning each, run with" \
  "repro's ids, replayed the same; none for a program owned by the recording user"

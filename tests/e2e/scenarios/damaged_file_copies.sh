#!/usr/bin/env bash
# The copies in a trace's files/ are checked against their content ids. A
# small dynamically linked program is recorded, then, each time in a fresh
# copy of the trace, one copy is damaged: one byte of libc flipped, the
# executable cut to half, the ld.so.cache copy emptied, the libc copy deleted.
#   - `repro check` exits 65 and names the copy (its id and recorded path);
#   - `repro check --quick` hashes nothing: exit 0 saying so, except for the
#     deleted copy, which it still finds missing (exit 65);
#   - `repro replay` exits 65 with a message naming the copy and its
#     recorded path, rather than run the program on wrong bytes.
# Usage: damaged_file_copies.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start damaged_file_copies "$@"
program=$build_dir/tests/e2e/scenarios/scenario_env_probe
need_file "$program"
need_tool dd truncate cp

record 60 trace record.out record.err "$program" HOME
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
expect_check_complete trace
grep -q 'file copies verified' check.out ||
  fail "repro check does not say it verified the file copies: $(cat check.out)"

# copy_of PATTERN: the content id of the first exec or mapped-file event
# whose path matches PATTERN, and that path, as "ID PATH".
"$repro" dump trace >dump.out 2>dump.err || fail "repro dump failed: $(cat dump.err)"
copy_of() {
  sed -n "s,^#[0-9]* t[0-9]* \(exec\|mapped-file\) \($1\)\( at [0-9a-fx]*\)\? (file \([0-9a-f]\{32\}\))\$,\4 \2,p" \
    dump.out | head -n 1
}
read -r libc_id libc_path < <(copy_of '.*/libc\.so\.6')
read -r exe_id exe_path < <(copy_of "$program")
read -r cache_id cache_path < <(copy_of '/etc/ld\.so\.cache')
[ -n "$libc_id" ] || fail "no mapped libc.so.6 in the trace: $(grep -c mapped-file dump.out) mapped files"
[ -n "$exe_id" ] || fail "no exec of $program in the trace"
[ -n "$cache_id" ] || fail "no mapped /etc/ld.so.cache in the trace"

# damage NAME ID HOW: a copy of the trace as NAME, with files/ID damaged.
damage() {
  local name=$1 file=$1/files/$2
  cp -a trace "$name" || fail "cannot copy the trace"
  chmod u+w "$file" 2>/dev/null
  case $3 in
    flip) # one byte, well inside the file, turned into its complement
      local offset=$(($(stat -c %s "$file") / 2)) byte
      byte=$(od -An -tu1 -j "$offset" -N1 "$file" | tr -d ' ')
      printf "\\$(printf '%03o' $((255 - byte)))" |
        dd of="$file" bs=1 seek="$offset" conv=notrunc status=none ;;
    truncate) truncate -s $(($(stat -c %s "$file") / 2)) "$file" ;;
    empty) : >"$file" ;;
    delete) rm -f "$file" ;;
  esac || fail "$name: cannot damage $file"
}

# expect_refused NAME ID PATH WORD QUICK_STATUS: the assertions above for
# trace NAME whose copy ID (of recorded PATH) is WORD (damaged or missing).
expect_refused() {
  local name=$1 id=$2 path=$3 word=$4 quick_status=$5
  bounded 60 "$repro" check "$name" >"$name.check" 2>&1
  status=$?
  [ "$status" -eq 65 ] || fail "$name: repro check exited $status, not 65: $(cat "$name.check")"
  grep -F "$word copy of '$path'" "$name.check" | grep -qF "$id" ||
    fail "$name: repro check does not name the $word copy $id of $path: $(cat "$name.check")"

  bounded 60 "$repro" check --quick "$name" >"$name.quick" 2>&1
  status=$?
  [ "$status" -eq "$quick_status" ] ||
    fail "$name: repro check --quick exited $status, not $quick_status: $(cat "$name.quick")"
  if [ "$quick_status" -eq 0 ]; then
    grep -q 'not hashed: --quick' "$name.quick" ||
      fail "$name: repro check --quick does not say it skipped the hashing: $(cat "$name.quick")"
  fi

  replay 60 "$name" "$name.out" "$name.err"
  [ "$status" -eq 65 ] || fail "$name: replay exited $status, not 65: $(tail -n 5 "$name.err")"
  grep -F "the trace's copy of '$path' is $word" "$name.err" | grep -qF "$id" ||
    fail "$name: replay does not name the $word copy $id of $path: $(tail -n 5 "$name.err")"
}

damage flipped "$libc_id" flip
expect_refused flipped "$libc_id" "$libc_path" damaged 0
damage truncated "$exe_id" truncate
expect_refused truncated "$exe_id" "$exe_path" damaged 0
damage emptied "$cache_id" empty
expect_refused emptied "$cache_id" "$cache_path" damaged 0
damage deleted "$libc_id" delete
expect_refused deleted "$libc_id" "$libc_path" missing 65

# The intact trace still replays.
expect_same_replay trace record.out record.err 0 60
pass "a flipped byte, a truncated, an emptied and a deleted copy: check and replay refuse each"

#!/usr/bin/env bash
# `repro dump --json` and dump's filters:
#   - --json prints the header and then one JSON object per event, every
#     event of the trace (as many as `check` counts, numbered 0..N-1);
#   - --thread 1, --syscall write,exit_group, --from 5 --to 9 keep exactly
#     the events they name (checked against the unfiltered JSON);
#   - syscall events carry their inputs: the paths ld.so opened (libc.so.6),
#     the first bytes of the program's writes;
#   - an unknown syscall name is a usage error (64).
# Usage: dump_json.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start dump_json "$@"
program=$build_dir/tests/programs/thread_create_join
need_file "$program"
need_tool python3

record 60 trace rec.out rec.err "$program"
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
events=$("$repro" check trace | sed -n 's/.*complete, \([0-9]*\) events.*/\1/p')
[ -n "$events" ] || fail "check did not count the events: $("$repro" check trace)"
for filter in all thread syscall range; do
  case $filter in
    all) args=() ;;
    thread) args=(--thread 1) ;;
    syscall) args=(--syscall write,exit_group) ;;
    range) args=(--from 5 --to 9) ;;
  esac
  bounded 60 "$repro" dump --json "${args[@]}" trace >"$filter.json" 2>"$filter.err"
  status=$?
  [ "$status" -eq 0 ] || fail "dump --json ${args[*]} exited $status: $(cat "$filter.err")"
done
python3 - "$events" <<'PY' || fail "the JSON does not hold what it should"
import json, sys
events = int(sys.argv[1])
def load(name):
    lines = [json.loads(line) for line in open(name + ".json")]
    assert lines[0]["kind"] == "header" and lines[0]["complete"], lines[0]
    return lines[1:]
every = load("all")
assert [e["index"] for e in every] == list(range(events)), (len(every), events)
assert any(e["kind"] == "syscall" and e["syscall"] == "clone" for e in every)
assert all("thread" in e and "kind" in e for e in every)
syscalls = [e for e in every if e["kind"] == "syscall"]
assert all(isinstance(e["inputs"], list) for e in syscalls)
assert any(e["syscall"] == "openat" and e["result"] >= 0 and
           [(i["arg"], i["text"].endswith("/libc.so.6")) for i in e["inputs"]] == [(1, True)]
           for e in syscalls), "no openat of libc.so.6 with its path"
writes = [e for e in syscalls if e["syscall"] == "write" and e["args"][2] > 0]
assert writes and all(e["inputs"][0]["arg"] == 1 and
                      e["inputs"][0]["bytes"] == min(32, e["args"][2]) for e in writes), writes[:2]
def expect(name, keep):
    got = load(name)
    want = [e for e in every if keep(e)]
    assert got == want, (name, len(got), len(want))
    assert got, name
expect("thread", lambda e: e["thread"] == 1)
expect("syscall", lambda e: e["kind"] in ("syscall", "syscall-entered")
       and e["syscall"] in ("write", "exit_group"))
expect("range", lambda e: 5 <= e["index"] <= 9)
PY

bounded 60 "$repro" dump --syscall no_such_syscall trace >bad.out 2>bad.err
status=$?
[ "$status" -eq 64 ] || fail "an unknown syscall name exited $status, not 64: $(cat bad.err)"
pass "dump --json: header and $events events; --thread, --syscall, --from/--to filter exactly"

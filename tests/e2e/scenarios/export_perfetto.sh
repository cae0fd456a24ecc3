#!/usr/bin/env bash
# `repro export --perfetto`: the timeline of real recordings, checked against
# the events `repro dump --json` prints, for
#   - the lost-update race (racy/lost_update) under chaos scheduling: three
#     threads of one process, interleaved, one blocking in futex;
#   - fork_from_thread: a second process, forked by a secondary thread;
#   - pthread_kill_thread: signals;
#   - cpu_bound_threads with 1 ms slices: preemptions.
# For each: the JSON parses; there is one track per recorded thread, named
# tN, with the thread's recorded tid, in the pid of its process (a thread
# made with CLONE_THREAD shares its creator's, any other is a process of
# its own), and each process is named; every syscall, signal, preemption,
# thread start and exit of the trace is on its thread's track exactly once
# (by args.event), with the paths it read (args.input_argN); every B has its E on the same track, X slices lie inside
# the slice open around them, timestamps never go back on a track, the
# running slices of all tracks never overlap (one thread runs at a time)
# and together hold every event of a thread's turn. Also -o FILE, and the
# errors: no format named (64), no such trace (1).
# Usage: export_perfetto.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start export_perfetto "$@"
need_tool python3
racy=$build_dir/tests/programs/racy/lost_update
fork=$build_dir/tests/programs/fork_from_thread
signals=$build_dir/tests/programs/pthread_kill_thread
spin=$build_dir/tests/programs/cpu_bound_threads
for program in "$racy" "$fork" "$signals" "$spin"; do
  need_file "$program"
done

# record_and_export NAME [RECORD_FLAGS...] -- PROGRAM: NAME/ is the trace,
# NAME.events its dump --json, NAME.json the timeline.
record_and_export() {
  local name=$1
  shift
  bounded 120 "$repro" record -o "$name" "$@" >"$name.out" 2>"$name.err"
  status=$?
  skip_unless_ptrace "$name.err"
  # The race may or may not be lost in this run: the timeline is the same either way.
  [ "$status" -eq 0 ] || [ "$name" = racy ] || fail "record $name exited $status: $(tail -n 3 "$name.err")"
  bounded 60 "$repro" dump --json "$name" >"$name.events" 2>"$name.dump.err" ||
    fail "dump --json $name failed: $(cat "$name.dump.err")"
  bounded 60 "$repro" export --perfetto "$name" >"$name.json" 2>"$name.export.err" ||
    fail "export --perfetto $name failed: $(cat "$name.export.err")"
}

record_and_export racy --chaos --seed 262228473866868 --depth 3 --points 29 -- "$racy"
record_and_export fork -- "$fork"
record_and_export signals -- "$signals"
record_and_export spin --time-slice-ms 1 -- "$spin"

python3 - racy fork signals spin >check.out 2>&1 <<'PY' || fail "the timeline does not match the trace: $(tail -n 20 check.out)"
import json, sys
from collections import defaultdict

CLONE_THREAD = 0x10000
# What each kind of trace event becomes, and where its args.event is.
INSTANT = {"signal", "preempt", "thread-start", "thread-exit", "rdtsc", "exec", "mapped-file",
           "rdtsc-patch", "syscall-batch"}

def check(name):
    events = [json.loads(line) for line in open(name + ".events")][1:]
    timeline = json.load(open(name + ".json"))
    out = timeline["traceEvents"]
    assert timeline["otherData"]["clock"].startswith("logical"), timeline["otherData"]
    assert timeline["otherData"]["events"] == len(events), (timeline["otherData"], len(events))

    # Tracks: one per thread, grouped by process.
    starts = {e["thread"]: e for e in events if e["kind"] == "thread-start"}
    names = {(m["pid"], m["tid"]): m["args"]["name"] for m in out
             if m["ph"] == "M" and m["name"] == "thread_name"}
    assert len(names) == len([m for m in out if m["ph"] == "M" and m["name"] == "thread_name"]), \
        "a track is named twice"
    track_of = {}  # thread index -> (pid, tid)
    for (pid, tid), thread_name in names.items():
        track_of[int(thread_name[1:])] = (pid, tid)
    assert sorted(track_of) == sorted(starts), (sorted(track_of), sorted(starts))
    for thread, start in starts.items():
        pid, tid = track_of[thread]
        assert tid == start["recorded_tid"], (thread, tid, start)
        if start["clone_flags"] & CLONE_THREAD:
            assert pid == track_of[start["parent_thread"]][0], (thread, pid)
        else:
            assert pid == tid, (thread, pid, tid)
    pids = {pid for pid, _ in track_of.values()}
    named_processes = {m["pid"] for m in out if m["ph"] == "M" and m["name"] == "process_name"}
    assert named_processes == pids, (named_processes, pids)
    thread_of = {track: thread for thread, track in track_of.items()}
    tracks = set(track_of.values())
    for e in out:
        assert (e["pid"], e["tid"]) in tracks, ("an event off the threads' tracks", e)

    # Every event once, on its own thread's track.
    by_index = {e["index"]: e for e in events}
    seen = defaultdict(int)
    entered = set()  # threads inside a blocking syscall
    for e in out:
        if e["ph"] in ("X", "i") or (e["ph"] == "B" and e["name"] != "running"):
            index = e["args"]["event"]
            source = by_index[index]
            seen[index] += 1
            if source["kind"] != "deadlock":
                assert thread_of[(e["pid"], e["tid"])] == source["thread"], (e, source)
            if e["ph"] == "X" or e["ph"] == "B":
                assert source["kind"] in ("syscall", "syscall-entered"), (e, source)
                assert e["name"] == source["syscall"], (e, source)
    completions = set()
    inside = set()  # indices of events of a thread inside a blocking syscall
    for e in events:
        if e["kind"] == "syscall-entered":
            entered.add(e["thread"])
        elif e["kind"] == "syscall" and e["thread"] in entered:
            entered.discard(e["thread"])
            completions.add(e["index"])  # the E of its syscall-entered's slice
        elif e["thread"] in entered:
            inside.add(e["index"])
    for e in events:
        if e["kind"] in INSTANT or e["kind"] == "syscall-entered" or e["kind"] == "deadlock" or (
                e["kind"] == "syscall" and e["index"] not in completions):
            assert seen[e["index"]] == 1, ("event not exported once", seen[e["index"]], e)
    ends = [e for e in out if e["ph"] == "E" and "completed_at_event" in e["args"]]
    assert sorted(e["args"]["completed_at_event"] for e in ends) == sorted(completions)

    # What a syscall read (paths, mostly) is in its slice's args.
    syscall_args = {e["args"]["event"]: e["args"] for e in out if e["ph"] == "X"}
    syscall_args.update({e["args"]["completed_at_event"]: e["args"] for e in ends})
    inputs = 0
    for e in events:
        for given in e.get("inputs", []):
            raw = bytes.fromhex(given["hex"])
            if all(0x20 <= b < 0x7f and b != 0x5c for b in raw):
                assert syscall_args[e["index"]]["input_arg%d" % given["arg"]] == raw.decode(), e
                inputs += 1
    assert inputs > 0 or name != "racy", "no syscall input (the loader's paths) in the timeline"

    # Structure per track, in file order.
    last_ts = defaultdict(int)
    stacks = defaultdict(list)
    runs = []
    for e in out:
        if e["ph"] == "M":
            continue
        track = (e["pid"], e["tid"])
        assert e["ts"] >= last_ts[track], ("time goes back", e)
        last_ts[track] = e["ts"]
        if e["ph"] == "B":
            stacks[track].append((e, []))
        elif e["ph"] == "E":
            assert stacks[track], ("E without B", e)
            begin, inner = stacks[track].pop()
            for x in inner:
                assert begin["ts"] <= x["ts"] and x["ts"] + x["dur"] <= e["ts"], \
                    ("an X slice sticks out of the slice around it", begin, x, e)
            if begin["name"] == "running":
                runs.append((begin["ts"], e["ts"], track))
        elif e["ph"] == "X":
            assert e["dur"] > 0, e
            assert stacks[track], ("X outside any slice", e)
            stacks[track][-1][1].append(e)
    for track, stack in stacks.items():
        assert not stack, ("B without E", stack)
    runs.sort()
    for (b1, e1, t1), (b2, e2, t2) in zip(runs, runs[1:]):
        assert e1 <= b2, ("two threads run at once", (b1, e1, t1), (b2, e2, t2))
    running = set()
    for b, e, track in runs:
        running.update((ts, thread_of[track]) for ts in range(b, e))
    for e in events:
        if e["index"] in inside:
            continue  # a signal for a thread inside a syscall
        if e["kind"] == "syscall" and e["index"] not in completions or e["kind"] in (
                "signal", "preempt", "rdtsc", "exec", "mapped-file"):
            assert (e["index"], e["thread"]) in running, ("event outside a running slice", e)

    kinds = defaultdict(int)
    for e in events:
        kinds[e["kind"]] += 1
    return len(track_of), len(pids), kinds

summary = []
for name in sys.argv[1:]:
    threads, processes, kinds = check(name)
    summary.append(f"{name}: {threads} threads in {processes} processes, "
                   f"{kinds['syscall']} syscalls, {kinds['signal']} signals, "
                   f"{kinds['preempt']} preemptions")
    if name == "racy":
        assert threads == 3 and processes == 1, summary[-1]
        assert kinds["syscall-entered"] >= 1, kinds
    if name == "fork":
        assert processes == 2, summary[-1]
    if name == "signals":
        assert kinds["signal"] >= 1, kinds
    if name == "spin":
        assert kinds["preempt"] >= 2, kinds
print("; ".join(summary))
PY

bounded 60 "$repro" export --perfetto -o racy-file.json racy >file.out 2>file.err ||
  fail "export -o failed: $(cat file.err)"
[ ! -s file.out ] || fail "export -o wrote to stdout: $(head -c 200 file.out)"
cmp -s racy.json racy-file.json || fail "export -o wrote other JSON than to stdout"
grep -q 'wrote racy-file.json: ' file.err || fail "export -o did not say what it wrote: $(cat file.err)"

bounded 60 "$repro" export racy >noformat.out 2>noformat.err
status=$?
[ "$status" -eq 64 ] || fail "export without a format exited $status, not 64: $(cat noformat.err)"
bounded 60 "$repro" export --perfetto no-such-trace >missing.out 2>missing.err
status=$?
[ "$status" -ne 0 ] && grep -q 'repro: error: ' missing.err ||
  fail "export of a missing trace exited $status: $(cat missing.err)"
pass "export --perfetto: $(cat check.out)"

#!/usr/bin/env bash
# Reads from regular files are stored against one copy of the file in the
# trace's files/, not byte by byte:
#   - a 2 MB file of random bytes read three times costs one copy of it in
#     files/ and almost nothing in events, and the reads are marked
#     reads-file-copy in `dump --json`;
#   - the replay prints the same digests;
#   - a file the program changes between reads is read back right: the
#     reads after the change do not use the old copy, and replay shows the
#     changed content (cat writes to stdout, a file here, which it would
#     do with copy_file_range: the recorder answers that ENOSYS, so cat
#     falls back to read and write and replay prints what it printed);
#   - reads the preloaded library makes without a stop (dd's 4 KiB reads)
#     are stored the same way: out of their batch, marked fast-path; a
#     file rewritten at the same size between them, which their stat
#     without time stamps cannot tell, gets a second copy;
#   - data tar writes into a pipe and md5sum reads is stored once at most:
#     with the pipe at stops, the reads the recorder matched with the
#     writes store no bytes and replay fills them from the writes; on the
#     fast path, the writes store none;
#   - the copies are checked: a damaged copy makes replay refuse the trace
#     as damaged instead of replaying wrong bytes.
# Usage: file_reads_by_reference.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start file_reads_by_reference "$@"
need_tool python3
need_tool md5sum

head -c 2000000 /dev/urandom >data
record 120 trace rec.out rec.err sh -c 'for i in 1 2 3; do md5sum <data; done'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
[ "$(sort -u rec.out | wc -l)" -eq 1 ] || fail "three digests of one file differ: $(cat rec.out)"
expect_check_complete trace
expect_same_replay trace rec.out rec.err 0
events_size=$(stat -c %s trace/events)
[ "$events_size" -lt 200000 ] || fail "6 MB read from a file took $events_size bytes of events"
copies=$(find trace/files -size 2000000c | wc -l)
[ "$copies" -eq 1 ] || fail "$copies copies of the 2 MB file, not one"
bounded 60 "$repro" dump --json trace >dump.json 2>dump.err || fail "dump failed: $(cat dump.err)"
python3 - <<'PY' || fail "the reads of data are not stored by reference"
import json
events = [json.loads(line) for line in open("dump.json")][1:]
reads = [e for e in events if e["kind"] == "syscall" and e["syscall"] == "read"
         and e["result"] >= 4096]
by_copy = [e for e in reads if "reads-file-copy" in e["flags"]]
assert len(by_copy) >= 3 * 2000000 // 65536 and len(by_copy) == len(reads), (len(reads), len(by_copy))
assert len({e["file_copy"]["content_id"] for e in by_copy}) == 1, "one copy for all"
PY

# dd reads it in 4 KiB reads, which the in-process fast path makes without
# a stop: each comes out of its batch as a read stored by reference.
record 120 trace4 rec4.out rec4.err sh -c 'dd if=data bs=4k 2>/dev/null | md5sum'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec4.err)"
[ "$(cat rec4.out)" = "$(head -n 1 rec.out)" ] || fail "dd | md5sum printed another digest: $(cat rec4.out)"
expect_same_replay trace4 rec4.out rec4.err 0
bounded 60 "$repro" dump --json trace4 >dump4.json 2>dump4.err || fail "dump failed: $(cat dump4.err)"
python3 - <<'PY' || fail "dd's fast-path reads are not stored by reference"
import json
events = [json.loads(line) for line in open("dump4.json")][1:]
fast = [e for e in events if e["kind"] == "syscall" and e["syscall"] == "read"
        and "fast-path" in e["flags"]]
by_copy = [e for e in fast if "reads-file-copy" in e["flags"] and e["result"] == 4096]
assert len(by_copy) >= 2000000 // 4096, (len(fast), len(by_copy))
offsets = sorted(e["file_copy"]["offset"] for e in by_copy)
assert offsets == [4096 * i for i in range(len(offsets))], offsets[:5]
PY

# One recorded process pipes the file into another, in tar's 10 KiB
# records, with the pipe's reads and writes at stops
# (REPRO_FAST_PATH_PIPES=off): the reads of md5sum that the recorder
# matched with tar's writes store no bytes (a read that finishes before
# the write that fed it keeps its bytes, so not every read is matched: at
# least a quarter of the bytes must be, where a quiet machine matches
# nearly all).
REPRO_FAST_PATH_PIPES=off record 120 trace3 rec3.out rec3.err sh -c 'tar -cf - data | md5sum'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec3.err)"
expect_same_replay trace3 rec3.out rec3.err 0
bounded 60 "$repro" dump --json trace3 >dump3.json 2>dump3.err || fail "dump failed: $(cat dump3.err)"
python3 - <<'PY' || fail "the pipe's data is not stored by reference"
import json, os
events = [json.loads(line) for line in open("dump3.json")][1:]
calls = [e for e in events if e["kind"] == "syscall"]
fed = sum(e["result"] for e in calls if "feeds-pipe" in e["flags"])
read = sum(e["result"] for e in calls if "reads-pipe" in e["flags"])
assert fed >= 2000000, fed
assert read >= fed // 4, (fed, read)
assert all("pipe" in e for e in calls if "reads-pipe" in e["flags"])
size = os.stat("trace3/events").st_size
assert size < 2000000 - read + 300000, (size, read)
PY

# The same with the pipe on the fast path (where the kernel allows): tar's
# writes there store their results only, so the data is in the trace once
# at most, in md5sum's reads.
record 120 trace5 rec5.out rec5.err sh -c 'tar -cf - data | md5sum'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec5.err)"
cmp -s rec3.out rec5.out || fail "md5sum printed otherwise with the pipe on the fast path"
expect_same_replay trace5 rec5.out rec5.err 0
size=$(stat -c %s trace5/events)
[ "$size" -lt 2300000 ] || fail "the pipe's 2 MB take $size bytes of events with the fast path: stored twice?"

# The program rewrites the file between its reads.
printf 'first version\n%.0s' $(seq 200) >changing
record 120 trace2 rec2.out rec2.err sh -c \
  'cat changing; printf "second version\n%.0s" $(seq 300) >changing; cat changing; cat changing'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec2.err)"
[ "$(grep -c 'second version' rec2.out)" -eq 600 ] || fail "the program did not see its change"
printf 'third version\n' >changing  # after the recording: must not matter
expect_same_replay trace2 rec2.out rec2.err 0

# Rewritten at the same size between dd's 4 KiB reads on the fast path,
# whose stat of the file asks no time stamps (they would slow its writes
# down): the reads after the change do not match the old copy, so they
# take a new one, and replay shows the new content.
printf 'first version\n%.0s' $(seq 600) >same
record 120 trace6 rec6.out rec6.err sh -c \
  'dd if=same bs=4k 2>/dev/null; printf "other version\n%.0s" $(seq 600) >same; dd if=same bs=4k 2>/dev/null'
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec6.err)"
[ "$(grep -c '^first version$' rec6.out) $(grep -c '^other version$' rec6.out)" = "600 600" ] ||
  fail "dd did not print both versions: $(sort rec6.out | uniq -c)"
printf 'third version\n%.0s' $(seq 600) >same
expect_same_replay trace6 rec6.out rec6.err 0
bounded 60 "$repro" dump --json trace6 >dump6.json 2>dump6.err || fail "dump failed: $(cat dump6.err)"
python3 - <<'PY' || fail "the reads of the rewritten file are not stored against two copies"
import json
events = [json.loads(line) for line in open("dump6.json")][1:]
reads = [e for e in events if e["kind"] == "syscall" and e["syscall"] == "read"
         and e["result"] == 4096 and "fast-path" in e["flags"]]
ids = [e["file_copy"]["content_id"] for e in reads if "reads-file-copy" in e["flags"]]
assert len(reads) == 4 and len(ids) == 4, (len(reads), len(ids))
assert ids[0] == ids[1] != ids[2] == ids[3], ids
PY

# A damaged copy is found, not replayed.
copy=$(python3 -c '
import json
for line in open("dump.json"):
    e = json.loads(line)
    if "file_copy" in e:
        print(e["file_copy"]["content_id"]); break')
chmod u+w "trace/files/$copy"
printf 'XXXX' | dd of="trace/files/$copy" bs=1 seek=1000 conv=notrunc 2>/dev/null
replay 120 trace damaged.out damaged.err
[ "$status" -ne 0 ] || fail "replay used a damaged copy"
grep -q "$copy" damaged.err || fail "replay did not name the damaged copy: $(tail -n 5 damaged.err)"
pass

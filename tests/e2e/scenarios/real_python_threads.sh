#!/usr/bin/env bash
# Debian's CPython with several threads reading clocks and randomness:
# time.time(), time.monotonic(), random.random() (seeded from the OS at
# start-up) and os.urandom(). Lines starting with "~ " hold those values and
# the order the threads finished in; the rest is deterministic.
#   - recorded output has the native shape (deterministic lines identical);
#   - the "~ " values really differ between the native and recorded runs
#     (so they are nondeterministic and the replay cannot get them by luck);
#   - the replay prints the recorded bytes, "~ " lines included.
# Usage: real_python_threads.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start real_python_threads "$@"
python=/usr/bin/python3
need_file "$python"

cat >threads.py <<'PY'
import os
import queue
import random
import threading
import time

results = queue.Queue()
finished = []
lock = threading.Lock()

def work(index):
    total = 0
    for k in range(30000):
        total += k * (index + 1)
        if k % 5000 == 0:
            time.sleep(0.001)
    values = (time.time(), time.monotonic(), random.random(), os.urandom(8).hex())
    with lock:
        finished.append(index)
    results.put((index, total, values))

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
start_wall, start_mono = time.time(), time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
rows = sorted(results.get() for _ in threads)
print("threads joined:", len(rows))
for index, total, (wall, mono, rnd, ur) in rows:
    print("thread", index, "total", total)
    print("thread", index, "clocks in order:", start_wall <= wall and start_mono <= mono)
    print("thread", index, "random in [0,1):", 0.0 <= rnd < 1.0, "urandom hex chars:", len(ur))
    print("~ thread", index, "time", repr(wall), "monotonic", repr(mono), "random", repr(rnd), "urandom", ur)
print("~ finish order", finished)
print("~ main time", repr(time.time()), "monotonic", repr(time.monotonic()))
print("~ main random", repr(random.random()), "urandom", os.urandom(16).hex())
print("done")
PY

deterministic() { grep -v '^~ ' "$1" || true; }
nondeterministic() { grep '^~ ' "$1" | grep -v 'finish order' || true; }

bounded 60 "$python" threads.py >native.out 2>native.err
native_status=$?
[ "$native_status" -eq 0 ] || fail "native python3 exited $native_status: $(tail -n 5 native.err)"
grep -qx 'done' native.out || fail "native run did not finish: $(tail -n 5 native.out)"

record 180 trace record.out record.err "$python" threads.py
record_status=$status
[ "$record_status" -eq "$native_status" ] ||
  fail "recorded exit status $record_status, native $native_status: $(tail -n 10 record.err)"
diff <(deterministic native.out) <(deterministic record.out) >record.diff ||
  fail "recorded output differs from native: $(head -n 20 record.diff)"
[ "$(grep -c '^~ ' record.out)" -eq "$(grep -c '^~ ' native.out)" ] ||
  fail "recorded run prints a different number of '~ ' lines than native"
if cmp -s <(nondeterministic native.out) <(nondeterministic record.out); then
  fail "clock/random values of the recording equal the native run's: they are not being read"
fi
expect_check_complete trace

# The script is the program's input: replay must not need it.
rm threads.py || fail "cannot delete threads.py"
expect_same_replay trace record.out record.err "$record_status" 180
pass "$(grep -c '^~ ' record.out) nondeterministic lines replayed identically"

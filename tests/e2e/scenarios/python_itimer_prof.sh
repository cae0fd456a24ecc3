#!/usr/bin/env bash
# CPython profiled by ITIMER_PROF: a Python handler counts SIGPROF while the
# program works; at exit an atexit function puts SIGPROF back to SIG_DFL
# and spins, so the next tick kills the interpreter (status 128+27). The
# signals land in the interpreter's eval loop, whose registers repeat from
# one bytecode to the next: replay must find each point by memory, in good
# time. Recorded and replayed several times, since where the ticks land
# differs from run to run:
#   - every recording dies of SIGPROF after printing its lines;
#   - every replay prints the same bytes and dies the same way.
# Usage: python_itimer_prof.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start python_itimer_prof "$@"
python=/usr/bin/python3
[ -x "$python" ] || skip "$python is not installed"

cat >prof.py <<'PY'
import atexit
import signal

ticks = 0

def on_prof(signum, frame):
    global ticks
    ticks += 1

def die_of_sigprof():
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    spin = 0
    while True:
        spin += 1

signal.signal(signal.SIGPROF, on_prof)
signal.setitimer(signal.ITIMER_PROF, 0.002, 0.002)
atexit.register(die_of_sigprof)
total = 0
for i in range(150000):
    total += i * i % 7
print("total", total, flush=True)
print("ticks seen:", ticks > 0, flush=True)
PY

runs=5
sigprof_status=$((128 + 27))
for run in $(seq "$runs"); do
  record 120 "trace$run" "record$run.out" "record$run.err" "$python" prof.py
  [ "$status" -eq "$sigprof_status" ] ||
    fail "run $run: recorded exit status $status, not death by SIGPROF: $(tail -n 5 "record$run.err")"
  grep -qx 'ticks seen: True' "record$run.out" ||
    fail "run $run: the handler saw no tick: $(cat "record$run.out")"
  expect_check_complete "trace$run"
  expect_same_replay "trace$run" "record$run.out" "record$run.err" "$status" 180
done
pass "$runs recordings killed by SIGPROF at exit replayed identically"

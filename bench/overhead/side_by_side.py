#!/usr/bin/env python3
"""Whole-program overhead of repro, side by side with native and strace.

For each workload, in one run, alternating within every round:
  native                     the command as it is
  strace                     strace -f -o /dev/null CMD
  record --no-fast-path      repro record --no-fast-path -o T1 -- CMD
                             (n/a when `repro record --help` has no such flag)
  record                     repro record -o T2 -- CMD (the default)
  replay                     repro replay T2

Nothing is pinned beyond what repro does by default (it binds itself and
the program to one CPU); native and strace run where the kernel puts them.
Every run has a time limit (--timeout); a run that exceeds it is killed with
its process group and counted as failed. Times are wall-clock
(time.monotonic around the whole command, fork and exec included); stdout
goes to /dev/null, stdin is /dev/null.

Output, in --out DIR (default: bench-overhead-<UTC time> in the current
directory): table.md (medians, and medians of the per-round ratios to
native), runs.csv (every run), summary.csv and summary.json (one row per
workload), and trace sizes: bytes per event and MB of trace per second of
native run time, from the default recording.

Usage:
  side_by_side.py [--repro PATH] [--bench-dir DIR] [--rounds N]
                  [--timeout S] [--only REGEX] [--out DIR]
"""

import argparse
import csv
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))

PHASES = ["native", "strace", "record_no_fast_path", "record", "replay"]
RUN_FIELDS = ["workload", "round", "phase", "seconds", "status", "ok"]
PHASE_TITLES = {
    "native": "native",
    "strace": "strace -f",
    "record_no_fast_path": "record --no-fast-path",
    "record": "record",
    "replay": "replay",
}

# The fixed input of the xz workloads: 6 MiB of pseudo-random "words",
# compressible about 3:1, the same bytes on every machine.
XZ_INPUT_BYTES = 6 << 20

# The small C project of the make workload: 20 translation units.
MAKE_FILES = 20

PY_THREADS = r'''
import hashlib, queue, threading
work = queue.Queue()
results = []
lock = threading.Lock()
def worker():
    while True:
        item = work.get()
        if item is None:
            return
        digest = hashlib.sha256(item).digest()
        for _ in range(200):
            digest = hashlib.sha256(digest).digest()
        with lock:
            results.append(digest[0])
threads = [threading.Thread(target=worker) for _ in range(4)]
for t in threads:
    t.start()
for i in range(4000):
    work.put(i.to_bytes(8, "little"))
for _ in threads:
    work.put(None)
for t in threads:
    t.join()
print(len(results), sum(results))
'''


def make_xz_input(path):
    """Writes the xz workloads' input: deterministic, text-like."""
    import random

    rng = random.Random(20261129)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(5000)]
    with open(path, "w") as out:
        written = 0
        while written < XZ_INPUT_BYTES:
            line = " ".join(rng.choice(words) for _ in range(12)) + f" {rng.randint(0, 1 << 30)}\n"
            out.write(line)
            written += len(line)


def make_c_project(directory):
    """Writes a Makefile and MAKE_FILES small C files that call each other."""
    os.makedirs(directory, exist_ok=True)
    for i in range(MAKE_FILES):
        with open(os.path.join(directory, f"unit{i}.c"), "w") as f:
            f.write("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
            f.write(f"int unit{i}(int x) {{\n  int acc = x;\n")
            for j in range(40):
                f.write(f"  acc = acc * {j + 3} + (int)strlen(\"{i}-{j}\");\n")
            f.write("  return acc;\n}\n")
    with open(os.path.join(directory, "main.c"), "w") as f:
        f.write("#include <stdio.h>\n")
        for i in range(MAKE_FILES):
            f.write(f"int unit{i}(int);\n")
        f.write("int main(void) {\n  int s = 0;\n")
        for i in range(MAKE_FILES):
            f.write(f"  s += unit{i}(s);\n")
        f.write('  printf("%d\\n", s);\n  return 0;\n}\n')
    objects = " ".join(f"unit{i}.o" for i in range(MAKE_FILES)) + " main.o"
    with open(os.path.join(directory, "Makefile"), "w") as f:
        f.write("CC = cc\nCFLAGS = -O2\n")
        f.write(f"app: {objects}\n\t$(CC) -o $@ $^\n")
        f.write("%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n")


def workloads(bench_dir, scratch):
    """(name, argv, description) of every workload, in table order."""
    xz_input = os.path.join(scratch, "xz-input.txt")
    big_file = os.path.join(scratch, "big-file")
    project = os.path.join(scratch, "c-project")
    py_script = os.path.join(scratch, "py_threads.py")
    return [
        ("find_usr", ["sh", "-c", "find /usr -type f | wc -l"], "find /usr -type f | wc -l"),
        ("tar_pipe", ["sh", "-c", "tar -cf - /usr/share/doc 2>/dev/null | wc -c"],
         "tar -cf - /usr/share/doc | wc -c"),
        ("ls_lR", ["ls", "-lR", "/usr/include", "/usr/share"], "ls -lR /usr/include /usr/share"),
        ("make_j2", ["make", "-s", "-B", "-j2", "-C", project],
         f"make -B -j2 of {MAKE_FILES} + 1 small C files (cc -O2)"),
        ("xz_T2", ["xz", "-T2", "--block-size=1MiB", "-2", "-c", xz_input],
         "xz -T2 --block-size=1MiB -2 -c on 6 MiB of text"),
        ("xz_T1", ["xz", "-T1", "--block-size=1MiB", "-2", "-c", xz_input],
         "xz -T1 --block-size=1MiB -2 -c on 6 MiB of text"),
        ("py_threads", ["python3", py_script],
         "python3, 4 threads: queue + lock + 201 sha256 per item, 4,000 items"),
        ("getppid_loop", [os.path.join(bench_dir, "getppid_loop"), "200000"],
         "getppid_loop 200000 (syscall(SYS_getppid))"),
        ("file_rw_loop", [os.path.join(bench_dir, "file_rw_loop"), "20000"],
         "file_rw_loop 20000 (4 KiB pwrite + 4 KiB pread)"),
        ("cp_big", ["cp", big_file, big_file + ".copy"], "cp of a 256 MiB file"),
        ("cpu_hash", [os.path.join(bench_dir, "cpu_hash"), "40"],
         "cpu_hash 40 (FNV-1a over 8 MiB, 40 passes)"),
    ]


def prepare_inputs(scratch):
    make_xz_input(os.path.join(scratch, "xz-input.txt"))
    make_c_project(os.path.join(scratch, "c-project"))
    with open(os.path.join(scratch, "py_threads.py"), "w") as f:
        f.write(PY_THREADS)
    with open(os.path.join(scratch, "big-file"), "wb") as f:
        chunk = bytes(range(256)) * 4096  # 1 MiB
        for i in range(256):
            f.write(chunk[i:] + chunk[:i])


def timed(argv, timeout_s, cwd):
    """Runs argv; returns (seconds, status, stderr text). status is the exit
    code, 'timeout', or 'signal-N'."""
    err = tempfile.TemporaryFile(mode="w+")
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=err, cwd=cwd, start_new_session=True)
    try:
        rc = proc.wait(timeout=timeout_s)
        status = rc if rc >= 0 else f"signal-{-rc}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        status = "timeout"
    seconds = time.monotonic() - start
    err.seek(0)
    text = err.read()
    err.close()
    return seconds, status, text


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def machine():
    info = {"cpu": "?", "vendor": "?", "cores": os.cpu_count(), "kernel": os.uname().release}
    with open("/proc/cpuinfo") as f:
        text = f.read()
    m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
    info["cpu"] = m.group(1) if m else "?"
    m = re.search(r"^vendor_id\s*:\s*(.*)$", text, re.M)
    info["vendor"] = m.group(1) if m else "?"
    info["hypervisor_flag"] = bool(re.search(r"^flags\s*:.*\bhypervisor\b", text, re.M))
    for kind in ("vm", "container"):
        try:
            out = subprocess.run(["systemd-detect-virt", f"--{kind}"], capture_output=True,
                                 text=True).stdout.strip()
        except FileNotFoundError:
            out = "systemd-detect-virt not installed"
        info[f"virt_{kind}"] = out
    with open("/proc/loadavg") as f:
        info["loadavg_before"] = " ".join(f.read().split()[:3])
    return info


def median_or_none(values):
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repro", default=os.path.join(REPO_ROOT, "build-bench", "repro"))
    parser.add_argument("--bench-dir", default=None,
                        help="holds getppid_loop, file_rw_loop, cpu_hash "
                        "(default: bench/overhead next to --repro)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--only", default="", help="workloads whose name matches this regex")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    repro = os.path.abspath(args.repro)
    if not os.access(repro, os.X_OK):
        sys.exit(f"side_by_side.py: repro binary '{repro}' not found; build with:\n"
                 f"  cmake -S {REPO_ROOT} -B build-bench -DCMAKE_BUILD_TYPE=Release "
                 "-DREPRO_BUILD_BENCH=ON && cmake --build build-bench")
    bench_dir = os.path.abspath(args.bench_dir or
                                os.path.join(os.path.dirname(repro), "bench", "overhead"))
    for tool in ("strace", "xz", "make", "cc", "tar", "python3"):
        if shutil.which(tool) is None:
            sys.exit(f"side_by_side.py: '{tool}' not found in PATH")
    help_text = subprocess.run([repro, "record", "--help"], capture_output=True, text=True).stdout
    has_no_fast_path = "--no-fast-path" in help_text

    out_dir = args.out or datetime.datetime.now(datetime.timezone.utc).strftime(
        "bench-overhead-%Y%m%d-%H%M%S")
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="repro-side-by-side-")
    try:
        prepare_inputs(scratch)
        selected = [w for w in workloads(bench_dir, scratch) if re.search(args.only, w[0])]
        if not selected:
            sys.exit(f"side_by_side.py: --only '{args.only}' matches no workload")
        info = machine()
        info["repro"] = repro
        info["commit"] = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
        info["has_no_fast_path"] = has_no_fast_path
        info["rounds"] = args.rounds
        runs = []  # dicts: workload, round, phase, seconds, status, ok
        # runs.csv is written as the runs happen, so an interrupted run keeps them.
        runs_file = open(os.path.join(out_dir, "runs.csv"), "w", newline="")
        runs_writer = csv.DictWriter(runs_file, fieldnames=RUN_FIELDS)
        runs_writer.writeheader()

        def add_run(run):
            runs.append(run)
            runs_writer.writerow(run)
            runs_file.flush()

        sizes = {}  # workload -> list of (events, events_bytes, trace_bytes)
        failures = {}
        for rnd in range(1, args.rounds + 1):
            for name, argv, _ in selected:
                line = [f"round {rnd}/{args.rounds} {name}:"]
                native_s, native_status, _ = timed(argv, args.timeout, scratch)
                add_run(dict(workload=name, round=rnd, phase="native", seconds=native_s,
                                 status=native_status, ok=True))
                line.append(f"native {native_s:.3f}")

                s, st, _ = timed(["strace", "-f", "-o", "/dev/null"] + argv, args.timeout, scratch)
                add_run(dict(workload=name, round=rnd, phase="strace", seconds=s, status=st,
                                 ok=st == native_status))
                line.append(f"strace {s:.3f}")

                record_variants = [("record", [])]
                if has_no_fast_path:
                    record_variants.insert(0, ("record_no_fast_path", ["--no-fast-path"]))
                for phase, extra in record_variants:
                    trace = os.path.join(scratch, f"trace-{phase}")
                    shutil.rmtree(trace, ignore_errors=True)
                    s, st, err = timed([repro, "record"] + extra + ["-o", trace, "--"] + argv,
                                       args.timeout, scratch)
                    ok = st == native_status
                    add_run(dict(workload=name, round=rnd, phase=phase, seconds=s, status=st,
                                     ok=ok))
                    line.append(f"{phase} {s:.3f}" + ("" if ok else f" ({st})"))
                    if not ok:
                        failures.setdefault(name, f"{phase} round {rnd}: status {st}: "
                                            + err.strip().splitlines()[-1:][0][:200]
                                            if err.strip() else f"{phase}: status {st}")
                    if phase != "record":
                        shutil.rmtree(trace, ignore_errors=True)
                        continue
                    if ok:
                        m = re.search(r"recorded (\d+) events", err)
                        events = int(m.group(1)) if m else 0
                        sizes.setdefault(name, []).append(
                            (events, os.path.getsize(os.path.join(trace, "events")),
                             dir_bytes(trace)))
                        s, st2, err = timed([repro, "replay", trace], args.timeout, scratch)
                        rok = st2 == st
                        add_run(dict(workload=name, round=rnd, phase="replay", seconds=s,
                                         status=st2, ok=rok))
                        line.append(f"replay {s:.3f}" + ("" if rok else f" ({st2})"))
                        if not rok:
                            failures.setdefault(name, f"replay round {rnd}: status {st2}: "
                                                + (err.strip().splitlines() or [""])[-1][:200])
                    shutil.rmtree(trace, ignore_errors=True)
                # cp leaves its copy behind; make leaves objects: the next run redoes them.
                for leftover in (os.path.join(scratch, "big-file.copy"),):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
                print(" ".join(line), file=sys.stderr, flush=True)
        runs_file.close()
        with open("/proc/loadavg") as f:
            info["loadavg_after"] = " ".join(f.read().split()[:3])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    summary = []
    for name, argv, description in selected:
        row = {"workload": name, "command": description}
        native_by_round = {r["round"]: r["seconds"] for r in runs
                           if r["workload"] == name and r["phase"] == "native"}
        for phase in PHASES:
            mine = [r for r in runs if r["workload"] == name and r["phase"] == phase and r["ok"]]
            row[f"{phase}_s"] = median_or_none([r["seconds"] for r in mine])
            row[f"{phase}_ratio"] = (None if phase == "native" else median_or_none(
                [r["seconds"] / native_by_round[r["round"]] for r in mine
                 if native_by_round.get(r["round"])]))
            row[f"{phase}_runs"] = len(mine)
        if phase_missing := (not has_no_fast_path):
            row["record_no_fast_path_s"] = "n/a"
            row["record_no_fast_path_ratio"] = "n/a"
        del phase_missing
        size = sizes.get(name, [])
        if size:
            events = statistics.median(s[0] for s in size)
            events_bytes = statistics.median(s[1] for s in size)
            trace_bytes = statistics.median(s[2] for s in size)
            row["events"] = int(events)
            row["events_file_bytes"] = int(events_bytes)
            row["trace_bytes"] = int(trace_bytes)
            row["events_bytes_per_event"] = events_bytes / events if events else None
            row["trace_bytes_per_event"] = trace_bytes / events if events else None
            native = row["native_s"]
            row["trace_mb_per_native_s"] = trace_bytes / 1e6 / native if native else None
            row["events_mb_per_native_s"] = events_bytes / 1e6 / native if native else None
        row["failure"] = failures.get(name, "")
        summary.append(row)

    def cell_s(v):
        return v if isinstance(v, str) else ("FAILED" if v is None else f"{v:.3f}")

    def cell_r(v):
        return v if isinstance(v, str) else ("–" if v is None else f"{v:.2f}x")

    def cell_f(v, fmt):
        return "–" if v is None else format(v, fmt)

    lines = []
    lines.append(f"Machine: {info['vendor']} {info['cpu']}, {info['cores']} CPUs, "
                 f"kernel {info['kernel']}, vm: {info['virt_vm']}, container: "
                 f"{info['virt_container']}; load {info['loadavg_before']} before, "
                 f"{info['loadavg_after']} after; repro commit {info['commit']}; "
                 f"{args.rounds} rounds.")
    lines.append("")
    lines.append("Seconds (median) and ratio to native (median of the per-round ratios):")
    lines.append("")
    lines.append("| workload | " + " | ".join(PHASE_TITLES[p] for p in PHASES) + " |")
    lines.append("|---|" + "---:|" * len(PHASES))
    for row in summary:
        cells = [row["workload"]]
        for phase in PHASES:
            if phase == "native":
                cells.append(cell_s(row["native_s"]))
            elif isinstance(row[f"{phase}_s"], str):
                cells.append("n/a")
            else:
                cells.append(f"{cell_s(row[f'{phase}_s'])} ({cell_r(row[f'{phase}_ratio'])})")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Trace of the default recording (median over rounds): events, the `events` file, "
                 "the whole trace directory (with `files/`, the copies of mapped files):")
    lines.append("")
    lines.append("| workload | events | events file | bytes/event | trace dir | "
                 "trace bytes/event | trace MB per native s |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for row in summary:
        if "events" not in row:
            lines.append(f"| {row['workload']} | – | – | – | – | – | – |")
            continue
        lines.append(
            f"| {row['workload']} | {row['events']:,} | {row['events_file_bytes'] / 1e6:.2f} MB | "
            f"{cell_f(row['events_bytes_per_event'], '.2f')} | {row['trace_bytes'] / 1e6:.1f} MB | "
            f"{cell_f(row['trace_bytes_per_event'], '.1f')} | "
            f"{cell_f(row['trace_mb_per_native_s'], '.1f')} |")
    lines.append("")
    lines.append("Workloads:")
    lines.append("")
    for row in summary:
        lines.append(f"- `{row['workload']}`: {row['command']}"
                     + (f" — FAILED: {row['failure']}" if row["failure"] else ""))
    table = "\n".join(lines) + "\n"

    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    fields = sorted({k for row in summary for k in row}, key=lambda k: (k != "workload", k))
    with open(os.path.join(out_dir, "summary.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(summary)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"machine": info, "workloads": summary, "runs": runs}, f, indent=1)
    print(table)
    print(f"written to {out_dir}/ (table.md, runs.csv, summary.csv, summary.json)",
          file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

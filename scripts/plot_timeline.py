#!/usr/bin/python3
"""Draws the timeline that `repro export --perfetto` wrote as a PNG.

The same data as the Perfetto UI shows, for pages that cannot embed it
(docs/debugging.md): one row per thread, grouped by process; "running"
slices as bars, the syscalls inside them as ticks coloured by syscall,
blocking syscalls as hatched bars from entry to completion, signals,
preemptions and thread starts and exits as markers. The x axis is the
export's logical clock: one step per trace event.

Usage: scripts/plot_timeline.py TIMELINE.json OUT.png [--from N] [--to N]
           [--title TEXT] [--mark N:TEXT ...]

Needs matplotlib (Debian: apt-get install python3-matplotlib, which
installs it for /usr/bin/python3).
"""

import argparse
import json
import sys
from collections import Counter, defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
except ImportError:
    sys.exit("plot_timeline.py: needs matplotlib (apt-get install python3-matplotlib; "
             "run it with /usr/bin/python3)")

# Syscalls that get a colour of their own in the legend; the rest share grey.
MAX_NAMED_SYSCALLS = 7
# The height of one line of mark labels, in rows.
MARK_LINE = 0.3
PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def load(path):
    """Returns (tracks, slices, instants, other) of a trace-event JSON file.

    tracks: {(pid, tid): {"thread": name, "process": name, "order": (p, t)}}
    slices: [(track, name, cat, begin, end, args)], instants: [(track, name, cat, ts)].
    """
    with open(path) as f:
        timeline = json.load(f)
    tracks = defaultdict(lambda: {"thread": "?", "process": "?", "order": (0, 0)})
    process_names, process_order = {}, {}
    slices, instants, open_slices = [], [], defaultdict(list)
    for e in timeline["traceEvents"]:
        ph, track = e["ph"], (e["pid"], e["tid"])
        if ph == "M":
            if e["name"] == "thread_name":
                tracks[track]["thread"] = e["args"]["name"]
            elif e["name"] == "thread_sort_index":
                tracks[track]["thread_order"] = e["args"]["sort_index"]
            elif e["name"] == "process_name":
                process_names[e["pid"]] = e["args"]["name"]
            elif e["name"] == "process_sort_index":
                process_order[e["pid"]] = e["args"]["sort_index"]
        elif ph == "B":
            open_slices[track].append(e)
        elif ph == "E":
            begin = open_slices[track].pop()
            args = dict(begin.get("args", {}), **e.get("args", {}))
            slices.append((track, begin["name"], begin.get("cat", ""), begin["ts"], e["ts"], args))
        elif ph == "X":
            slices.append((track, e["name"], e.get("cat", ""), e["ts"], e["ts"] + e["dur"],
                           e.get("args", {})))
        elif ph in ("i", "I"):
            instants.append((track, e["name"], e.get("cat", ""), e["ts"]))
    for (pid, tid), info in tracks.items():
        info["process"] = process_names.get(pid, str(pid))
        info["order"] = (process_order.get(pid, pid), info.get("thread_order", tid))
    return dict(tracks), slices, instants, timeline.get("otherData", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline")
    parser.add_argument("output")
    parser.add_argument("--from", dest="start", type=float, default=None,
                        help="first event to show (default: the first)")
    parser.add_argument("--to", dest="end", type=float, default=None,
                        help="last event to show (default: the last)")
    parser.add_argument("--title", default=None)
    parser.add_argument("--mark", action="append", default=[], metavar="N:TEXT",
                        help="a dashed line at event N, labelled TEXT (repeatable)")
    options = parser.parse_args()

    tracks, slices, instants, other = load(options.timeline)
    step = other.get("microseconds_per_event", 1)
    start = 0 if options.start is None else options.start * step
    end = max([s[4] for s in slices] + [i[3] + step for i in instants] + [step])
    if options.end is not None:
        end = (options.end + 1) * step

    # Rows top to bottom in the export's order: process by process.
    rows = sorted(tracks, key=lambda t: tracks[t]["order"])
    row_of = {track: len(rows) - 1 - i for i, track in enumerate(rows)}
    syscall_counts = Counter(s[1] for s in slices if s[2] == "syscall")
    named = [name for name, _ in syscall_counts.most_common(MAX_NAMED_SYSCALLS)]
    colour_of = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(named)}

    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.75 * len(rows)))
    for track, name, cat, begin, finish, args in slices:
        y = row_of[track]
        if cat == "run":
            ax.broken_barh([(begin, finish - begin)], (y - 0.35, 0.7), facecolors="#fdd9a0",
                           edgecolors="#d08c1a", linewidth=0.8)
        elif cat.startswith("syscall,blocking"):
            ax.broken_barh([(begin, finish - begin)], (y - 0.2, 0.4), facecolors="white",
                           edgecolors="#666666", hatch="///", linewidth=0.8)
            ax.text((begin + finish) / 2, y + 0.27, f"{name} (blocked)", ha="center",
                    va="bottom", fontsize=8, color="#444444")
    for track, name, cat, begin, finish, args in slices:
        if cat == "syscall":
            ax.broken_barh([(begin + 0.1 * step, (finish - begin) * 0.8)],
                           (row_of[track] - 0.3, 0.4),
                           facecolors=colour_of.get(name, "#aaaaaa"), linewidth=0)
    markers = {"signal": ("*", "#d62728", 12), "preempt": ("v", "#ff7f0e", 8),
               "thread": ("|", "black", 14)}
    for track, name, cat, ts in instants:
        marker, colour, size = markers.get(cat, (".", "#555555", 5))
        ax.plot([ts + 0.5 * step], [row_of[track] + 0.2], marker=marker, color=colour,
                markersize=size, linestyle="none")

    # One line of labels per mark, above the rows, so that they never overlap.
    for i, mark in enumerate(options.mark):
        index, _, text = mark.partition(":")
        x = (float(index) + 0.5) * step
        ax.axvline(x, color="#d62728", linewidth=0.9, linestyle=":")
        ax.text(x, len(rows) - 0.45 + MARK_LINE * i, f" #{index} {text} ", fontsize=8,
                color="#d62728", va="bottom", ha="left" if x < (start + end) / 2 else "right")

    # Lines between processes.
    for upper, lower in zip(rows, rows[1:]):
        if upper[0] != lower[0]:
            ax.axhline(row_of[upper] - 0.5, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_yticks([row_of[t] for t in rows])
    ax.set_yticklabels([f"{tracks[t]['process']} {t[0]}\n{tracks[t]['thread']} (tid {t[1]})"
                        for t in rows], fontsize=9)
    ax.set_xlim(start, end)
    ax.set_ylim(-0.6, len(rows) - 0.4 + MARK_LINE * len(options.mark))
    ax.set_xlabel("event (logical clock: the trace records the order of events, not their time)")
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    handles = [Patch(facecolor="#fdd9a0", edgecolor="#d08c1a", label="running"),
               Patch(facecolor="white", edgecolor="#666666", hatch="///",
                     label="blocked in a syscall")]
    handles += [Patch(facecolor=colour_of[n], label=n) for n in named]
    if len(syscall_counts) > len(named):
        handles.append(Patch(facecolor="#aaaaaa", label="other syscalls"))
    handles += [Line2D([], [], marker=m, color=c, linestyle="none", markersize=s * 0.8, label=l)
                for l, (m, c, s) in (("signal", markers["signal"]),
                                     ("preempted", markers["preempt"]),
                                     ("thread start/exit", markers["thread"]),
                                     ("exec, mapped file, rdtsc", (".", "#555555", 5)))]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0),
              ncol=1 if len(rows) >= 6 else 2, fontsize=8, frameon=False)
    if options.title:
        ax.set_title(options.title, fontsize=11)
    fig.savefig(options.output, dpi=110, bbox_inches="tight")
    print(f"plot_timeline.py: wrote {options.output} ({len(rows)} threads, "
          f"{len(slices)} slices, {len(instants)} instants)")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Plots side_by_side.py's summary.json: the ratio to native of every
column, one group of bars per workload, on a log scale.

Usage: plot_side_by_side.py SUMMARY_JSON OUTPUT.(svg|png)

Needs matplotlib (Debian: apt-get install -y python3-matplotlib; the
shebang is /usr/bin/python3 so that Debian's module is found even where
another python3 comes first in PATH).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = [
    ("strace", "strace -f -o /dev/null", "#999999"),
    ("record_no_fast_path", "repro record --no-fast-path", "#f4a259"),
    ("record", "repro record", "#d1495b"),
    ("replay", "repro replay", "#2e86ab"),
]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = data["workloads"]
    columns = [c for c in COLUMNS
               if any(isinstance(r.get(f"{c[0]}_ratio"), (int, float)) for r in rows)]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    width = 0.8 / len(columns)
    for i, (key, label, colour) in enumerate(columns):
        xs, ys = [], []
        for j, row in enumerate(rows):
            value = row.get(f"{key}_ratio")
            if isinstance(value, (int, float)):
                xs.append(j + (i - (len(columns) - 1) / 2) * width)
                ys.append(value)
        bars = ax.bar(xs, ys, width, label=label, color=colour)
        for bar, y in zip(bars, ys):
            ax.annotate(f"{y:.3g}", (bar.get_x() + bar.get_width() / 2, y), ha="center",
                        va="bottom", fontsize=6, rotation=90, xytext=(0, 2),
                        textcoords="offset points")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["workload"] for r in rows], rotation=30, ha="right")
    ax.set_ylabel("time / native time (median of per-round ratios, log scale)")
    machine = data["machine"]
    ax.set_title(f"repro overhead per workload — {machine['cpu']}, {machine['cores']} CPUs, "
                 f"kernel {machine['kernel']}, {machine['rounds']} rounds, "
                 f"load {machine['loadavg_before']}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()

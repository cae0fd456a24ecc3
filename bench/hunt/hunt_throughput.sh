#!/usr/bin/env bash
# Hunt throughput: how many runs a second `repro hunt` makes on a small racy
# program (handoff_window.c), next to how many native runs a second the
# same host makes of it, JOBS at a time. Each round runs the program RUNS
# times natively (xargs -P JOBS), then `repro hunt --keep-going --no-shrink -n RUNS
# -j JOBS` on it, and prints both rates; at the end, the medians, their
# ratio and the machine it ran on.
#
# Usage: hunt_throughput.sh [--runs N] [--jobs J] [--rounds R]
#                           [--build DIR] [--repro PATH]
#   --runs N     runs per round, native and hunted (default 200)
#   --jobs J     runs at once, native and hunted (default 2)
#   --rounds R   rounds (default 3)
#   --build DIR  build dir configured with -DREPRO_BUILD_BENCH=ON, holding
#                bench/hunt/handoff_window (default: build-bench next to this
#                repository's top-level CMakeLists.txt)
#   --repro PATH the repro binary (default: DIR/repro)
#
# The hunt's time is the whole `repro hunt` command's wall-clock time: its
# first plain recording (which counts the syscalls to spread the change
# points over), the RUNS chaos recordings, the deletion of the passing
# traces, and the confirming replay of each failing one (--keep-going, so
# that a caught failure does not end the round early). stdout and stderr of
# native runs go to a scratch file, where a "RACE" line counts a native
# failure: there should be none.
#
# Exit status: 0 when it measured, 1 when a hunt failed, 64 on a bad command
# line, 2 if something needed is missing.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

usage() { sed -n '9,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() {
  echo "hunt_throughput.sh: $*" >&2
  exit 2
}

runs=200
jobs=2
rounds=3
build_dir="$repo_root/build-bench"
repro=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --jobs) jobs=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --rounds) rounds=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --build) build_dir=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --repro) repro=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    -h|--help) usage; exit 0 ;;
    *) echo "hunt_throughput.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
  esac
done
for value in "$runs" "$jobs" "$rounds"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] ||
    { echo "hunt_throughput.sh: --runs, --jobs and --rounds need positive integers" >&2; exit 64; }
done

[ -d "$build_dir" ] || die "build dir '$build_dir' not found; build with:
  cmake -S $repo_root -B $build_dir -DCMAKE_BUILD_TYPE=Release -DREPRO_BUILD_BENCH=ON &&
  cmake --build $build_dir --target repro hunt_handoff_window"
build_dir=$(cd "$build_dir" && pwd)
[ -n "$repro" ] || repro="$build_dir/repro"
[ -x "$repro" ] || die "repro binary '$repro' not found or not executable"
repro=$(cd "$(dirname "$repro")" && pwd)/$(basename "$repro")
program="$build_dir/bench/hunt/handoff_window"
[ -x "$program" ] || die "'$program' not found; configure '$build_dir' with -DREPRO_BUILD_BENCH=ON and build hunt_handoff_window"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/repro-hunt-bench-XXXXXX") || die "cannot create a scratch directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp" || die "cannot enter '$tmp'"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" -v e="$3" 'BEGIN { printf "%.1f", n / (e - s) }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "hunt throughput: $runs runs per round, $jobs at once, $rounds rounds"
echo "program: $program"
echo "repro:   $repro ($("$repro" --version 2>/dev/null))"
echo "commit:  $(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
echo "kernel:  $(uname -r)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
echo
printf '%-6s %12s %12s %10s %16s\n' round native/s hunt/s ratio 'hunt failures'

: >native_rates
: >hunt_rates
status=0
for round in $(seq "$rounds"); do
  started=$(now)
  seq "$runs" | xargs -P "$jobs" -n 1 "$program" >native.out 2>&1
  ended=$(now)
  native_failures=$(grep -c '^RACE$' native.out)
  native=$(rate "$runs" "$started" "$ended")

  rm -rf hunt
  started=$(now)
  "$repro" hunt --keep-going --no-shrink -n "$runs" -j "$jobs" --seed "$((round * 100000))" -o hunt \
    -- "$program" >hunt.out 2>hunt.err
  hunt_status=$?
  ended=$(now)
  if [ "$hunt_status" -gt 1 ] || grep -q '^repro: error' hunt.err; then
    echo "round $round: repro hunt failed (status $hunt_status): $(grep -m 1 'error' hunt.err)"
    status=1
    continue
  fi
  failures=$(sed -n 's/^repro: hunt: \([0-9]*\) failures\{0,1\} in .*/\1/p' hunt.err)
  hunted=$(rate "$runs" "$started" "$ended")
  echo "$native" >>native_rates
  echo "$hunted" >>hunt_rates
  note=""
  [ "$native_failures" -eq 0 ] || note="  (native failures: $native_failures)"
  printf '%-6s %12s %12s %10s %16s%s\n' "$round" "$native" "$hunted" \
    "$(awk -v n="$native" -v h="$hunted" 'BEGIN { printf "%.1fx", n / h }')" \
    "${failures:-0} of $runs" "$note"
done
[ -s hunt_rates ] || exit 1

native=$(median <native_rates)
hunted=$(median <hunt_rates)
echo
printf '%-6s %12s %12s %10s\n' median "$native" "$hunted" \
  "$(awk -v n="$native" -v h="$hunted" 'BEGIN { printf "%.1fx", n / h }')"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (after)"
exit "$status"

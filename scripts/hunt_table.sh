#!/usr/bin/env bash
# Measures how often the racy programs (tests/programs/racy) fail natively,
# under plain recording, and how many runs `repro hunt` takes to catch each
# one, and prints a markdown table with one row per program:
#   | program | bug | native failures | plain recordings failing |
#   | median runs to failure | p90 |
# A native run or a plain recording fails when the program exits non-zero
# or dies of a signal. Runs to failure come from HUNTS hunts of
#   repro hunt -n 1000 -j 2 --seed S --until TRIGGER
# with S = 1, 1001, 2001, ... (no two hunts share a seed), parsed from its
# "after N runs"; a hunt that catches nothing counts as ">1000". Median and
# p90 are nearest-rank percentiles. The trigger of each program is the one
# it is registered with in tests/programs/racy/CMakeLists.txt, the bug the
# one its README.md row names.
#
# Usage: scripts/hunt_table.sh [-b BUILD_DIR] [-n NATIVE_RUNS] [-p PLAIN_RUNS]
#                              [-H HUNTS] [NAME...]
#   -b  build directory (default: build in the source tree)
#   -n  native runs per program (default: 1000)
#   -p  plain recordings per program (default: 20)
#   -H  hunts per program (default: 10)
#   NAME  programs to measure (default: every one built in
#         BUILD_DIR/tests/programs/racy)
# Progress goes to stderr, the table to stdout.
set -u
source_dir=$(cd "$(dirname "$0")/.." && pwd)
racy_dir=$source_dir/tests/programs/racy
build=$source_dir/build native_runs=1000 plain_runs=20 hunts=10 hunt_runs=1000
usage() {
  sed -n '/^# Usage:/,/^# Progress/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit "${1:-64}"
}
while getopts 'b:n:p:H:h' option; do
  case $option in
    b) build=$OPTARG ;;
    n) native_runs=$OPTARG ;;
    p) plain_runs=$OPTARG ;;
    H) hunts=$OPTARG ;;
    h) usage 0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
for number in "$native_runs" "$plain_runs" "$hunts"; do
  [[ $number =~ ^[0-9]+$ ]] || usage
done
repro=$build/repro
programs=$build/tests/programs/racy
[ -x "$repro" ] || { echo "hunt_table: no $repro (build the repro target)" >&2; exit 1; }

# "NAME TRIGGER" per registered program; the trigger may be quoted.
registered() {
  awk '/^repro_racy_program\(/ {
         line = $0
         sub(/^repro_racy_program\([ \t]*/, "", line); sub(/\)[ \t]*$/, "", line)
         name = line; sub(/[ \t].*/, "", name)
         trigger = substr(line, length(name) + 1)
         sub(/^[ \t]+/, "", trigger); gsub(/^"|"$/, "", trigger)
         print name " " trigger
       }' "$racy_dir/CMakeLists.txt"
}

trigger_of() { registered | awk -v name="$1" '$1 == name { sub(/^[^ ]* /, ""); print; exit }'; }

# The Bug cell of the program's row in README.md.
bug_of() {
  awk -F'|' -v name="\`$1\`" '{ cell = $2; gsub(/^ +| +$/, "", cell) }
    cell == name { bug = $3; gsub(/^ +| +$/, "", bug); print bug; exit }' "$racy_dir/README.md"
}

# Nearest-rank percentile P of the numbers on stdin; ">LIMIT" stands for a
# hunt that caught nothing and sorts last.
percentile() {
  sed "s/^>.*/999999999/" | sort -n | awk -v p="$1" -v limit="$hunt_runs" '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "-"; exit }
      rank = int((p * NR + 99) / 100); if (rank < 1) rank = 1
      print (v[rank] == 999999999 ? ">" limit : v[rank])
    }'
}

if [ $# -eq 0 ]; then
  set --
  while read -r name _; do
    [ -x "$programs/$name" ] && set -- "$@" "$name"
  done < <(registered)
  [ $# -gt 0 ] || { echo "hunt_table: no racy program built in $programs" >&2; exit 1; }
fi

for name in "$@"; do
  if [ ! -x "$programs/$name" ] || [ -z "$(trigger_of "$name")" ]; then
    echo "hunt_table: $name is not a built, registered racy program" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/repro-hunt-table-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "| program | bug | native failures | plain recordings failing | median runs to failure | p90 |"
echo "|---|---|---|---|---|---|"
for name in "$@"; do
  program=$programs/$name
  trigger=$(trigger_of "$name")

  failures=0
  for ((run = 1; run <= native_runs; run++)); do
    { timeout -k 5 10 "$program" >/dev/null 2>&1; } 2>/dev/null || failures=$((failures + 1))
  done
  native="$failures of $native_runs"
  echo "hunt_table: $name: native $native" >&2

  failures=0 errors=0
  for ((run = 1; run <= plain_runs; run++)); do
    rm -rf "$work/plain"
    timeout -k 5 120 "$repro" record -o "$work/plain" -- "$program" >/dev/null 2>"$work/plain.err"
    status=$?
    if grep -q '^repro: error' "$work/plain.err"; then
      errors=$((errors + 1))
    elif [ "$status" -ne 0 ]; then
      failures=$((failures + 1))
    fi
  done
  plain="$failures of $plain_runs"
  [ "$errors" -eq 0 ] || plain="$plain ($errors recording errors)"
  echo "hunt_table: $name: plain recordings $plain" >&2

  : >"$work/runs"
  for ((hunt = 0; hunt < hunts; hunt++)); do
    seed=$((hunt * hunt_runs + 1))
    rm -rf "$work/hunt"
    timeout -k 5 3600 "$repro" hunt --no-shrink -n "$hunt_runs" -j 2 --seed "$seed" --until "$trigger" \
      -o "$work/hunt" -- "$program" >/dev/null 2>"$work/hunt.err"
    runs=$(tr '\r' '\n' <"$work/hunt.err" |
      sed -n 's/.*caught `.*` (status [0-9]*) after \([0-9]*\) runs.*/\1/p')
    if [ -z "$runs" ]; then
      runs=">$hunt_runs"
      last=$(tr '\r' '\n' <"$work/hunt.err" | grep -v '^$' | tail -n 1)
      echo "hunt_table: $name: a hunt caught nothing: $last" >&2
    fi
    echo "$runs" >>"$work/runs"
    echo "hunt_table: $name: hunt with seeds from $seed: $runs runs" >&2
  done
  median=$(percentile 50 <"$work/runs")
  p90=$(percentile 90 <"$work/runs")

  echo "| \`$name\` | $(bug_of "$name") | $native | $plain | $median | $p90 |"
done

#!/usr/bin/env bash
# Whole-program overhead of repro: times every workload natively, under
# `repro record` (with the in-process fast path, the default), under
# `repro replay` of the trace just recorded, under `repro record
# --no-fast-path` (every syscall a ptrace stop) and under
# `strace -f -o /dev/null`, alternating the five (native, record, replay,
# nofp-record, strace, native, record, ...) RUNS times, and prints the
# medians and the median per-run ratios as a plain-text table, with the
# machine it ran on.
#
# Usage: run_overhead.sh [--runs N] [--repro PATH] [--build DIR]
#                        [--timeout S] [--only REGEX] [--keep-failed DIR]
#   --runs N      rounds per workload (default 5)
#   --build DIR   build dir configured with -DREPRO_BUILD_BENCH=ON, holding
#                 bench/overhead/<workload> and timed_run (default: build-bench
#                 next to this repository's top-level CMakeLists.txt)
#   --repro PATH  the repro binary (default: DIR/repro)
#   --timeout S   time limit of one native, record or strace run (default 300);
#                 a replay gets max(30 s, 5 x that round's record time), capped
#                 at S, since replay should never take longer than record
#   --only REGEX  run only the workloads whose name matches REGEX (grep -E)
#   --keep-failed DIR  move the trace and stderr of each failed record or
#                 replay into DIR/<workload>-round<R>/ instead of deleting them
#
# Times are wall-clock, CLOCK_MONOTONIC, taken by timed_run around the command
# (fork and exec included). stdout of every run goes to /dev/null, stderr to a
# scratch file (the error lines of a failed run come from there), stdin is
# /dev/null. Traces go to a fresh directory under ${TMPDIR:-/tmp}, deleted
# after each round and on exit.
#
# A record run fails if its exit status differs from the native run's, a
# replay run if its status differs from the recording's, and either one if it
# times out. A failed workload is shown as FAILED in its row, with the phase,
# the round and the first error line. Its later rounds skip what failed (a
# hung replay would cost the time-out every round): after a failed replay they
# still time native, record and strace, after a failed record native and
# strace. Medians and ratios use the rounds that succeeded. The script always
# goes on with the other workloads.
#
# Exit status: 0 if every workload recorded and replayed, 1 if any FAILED,
# 64 on a bad command line, 2 if something needed is missing.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

usage() { sed -n '8,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() {
  echo "run_overhead.sh: $*" >&2
  exit 2
}

runs=5
build_dir="$repo_root/build-bench"
repro=""
timeout_s=300
only=""
keep_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --repro) repro=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --build) build_dir=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --timeout) timeout_s=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --only) only=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    --keep-failed) keep_dir=${2:-}; shift 2 || { usage >&2; exit 64; } ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_overhead.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "run_overhead.sh: --runs needs a positive integer" >&2; exit 64; }
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || { echo "run_overhead.sh: --timeout needs a positive integer" >&2; exit 64; }

# Absolute paths, since the runs happen in the scratch directory.
[ -d "$build_dir" ] || die "build dir '$build_dir' not found; build with:
  cmake -S $repo_root -B $build_dir -DCMAKE_BUILD_TYPE=Release -DREPRO_BUILD_BENCH=ON && cmake --build $build_dir"
build_dir=$(cd "$build_dir" && pwd)
if [ -n "$keep_dir" ]; then
  mkdir -p "$keep_dir" || die "cannot create '$keep_dir'"
  keep_dir=$(cd "$keep_dir" && pwd)
fi
[ -n "$repro" ] || repro="$build_dir/repro"
if [[ "$repro" == */* ]]; then
  repro="$(cd "$(dirname "$repro")" 2>/dev/null && pwd)/$(basename "$repro")"
else
  repro=$(command -v "$repro") || die "repro binary '$repro' not found in PATH"
fi
[ -x "$repro" ] || die "repro binary '$repro' not found or not executable"
bench_dir="$build_dir/bench/overhead"
timed_run="$bench_dir/timed_run"
[ -x "$timed_run" ] || die "'$timed_run' not found; configure '$build_dir' with -DREPRO_BUILD_BENCH=ON and build it"
have_strace=1
command -v strace >/dev/null 2>&1 || have_strace=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/repro-overhead-XXXXXX") || die "cannot create a scratch directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp" || die "cannot enter '$tmp'"

# The workloads, in table order. set_command NAME sets cmd=(...); the C
# workloads get their default sizes spelled out, so the table says what ran.
getppid_calls=1000000
workloads=(getppid_loop file_read_loop file_rw_loop cpu_hash cpu_threads mutex_ping_pong fork_exec
  many_threads signal_loop pipe_producer_consumer find_include tar_linux tar_linux_cat ls_doc)
set_command() {
  case "$1" in
    getppid_loop) cmd=("$bench_dir/getppid_loop" "$getppid_calls") ;;
    file_read_loop) cmd=("$bench_dir/file_read_loop" 100000) ;;
    file_rw_loop) cmd=("$bench_dir/file_rw_loop" 50000) ;;
    cpu_hash) cmd=("$bench_dir/cpu_hash" 40) ;;
    cpu_threads) cmd=("$bench_dir/cpu_threads" 2 60) ;;
    mutex_ping_pong) cmd=("$bench_dir/mutex_ping_pong" 10000) ;;
    fork_exec) cmd=("$bench_dir/fork_exec" 100 /bin/true) ;;
    many_threads) cmd=("$bench_dir/many_threads" 200 5) ;;
    signal_loop) cmd=("$bench_dir/signal_loop" 40000) ;;
    pipe_producer_consumer) cmd=("$bench_dir/pipe_producer_consumer" 32 4096) ;;
    find_include) cmd=(find /usr/include -name '*.h') ;;
    # GNU tar notices that its archive is /dev/null and then never reads the
    # files (it only stats them); tar_linux_cat makes it read them.
    tar_linux) cmd=(tar cf - /usr/include/linux) ;;
    tar_linux_cat) cmd=(sh -c 'tar cf - /usr/include/linux | cat') ;;
    ls_doc) cmd=(ls -lR /usr/share/doc) ;;
    *) return 1 ;;
  esac
}

selected=()
for w in "${workloads[@]}"; do
  if [ -z "$only" ] || grep -Eq -- "$only" <<<"$w"; then
    selected+=("$w")
  fi
done
[ ${#selected[@]} -gt 0 ] || { echo "run_overhead.sh: --only '$only' matches no workload" >&2; exit 64; }
for w in "${selected[@]}"; do
  set_command "$w"
  if [[ "${cmd[0]}" == /* ]] && [ ! -x "${cmd[0]}" ]; then
    die "workload '${cmd[0]}' not built; run: cmake --build $build_dir"
  fi
done

# --- the machine -----------------------------------------------------------
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
cores=$(nproc 2>/dev/null || grep -c '^processor' /proc/cpuinfo)
if grep -qw hypervisor /proc/cpuinfo; then
  virt="yes (hypervisor cpu flag)"
else
  virt="no hypervisor cpu flag (bare metal, or a hypervisor that hides it)"
fi
if command -v systemd-detect-virt >/dev/null 2>&1; then
  virt+="; systemd-detect-virt: vm $(systemd-detect-virt --vm 2>/dev/null)"
  virt+=", container $(systemd-detect-virt --container 2>/dev/null)"
fi
commit=$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$repo_root" --no-optional-locks diff --quiet HEAD -- 2>/dev/null; then
  commit+=" (working tree differs from it)"
fi
# The commit names the source tree, not the binary: say so when the binary is
# older than a source file (a stale build dir).
newer_source=$(find "$repo_root" \( -name 'build*' -o -name '.git' \) -prune -o -type f \
  \( -name '*.cc' -o -name '*.h' -o -name '*.c' -o -name '*.def' -o -name 'CMakeLists.txt' \) \
  -newer "$repro" -print 2>/dev/null | head -n 1)
[ -n "$newer_source" ] && commit+="; WARNING: the binary is older than ${newer_source#"$repo_root"/} (rebuild?)"
strace_version="not installed: strace column empty"
[ $have_strace -eq 1 ] && strace_version=$(strace -V 2>/dev/null | head -n 1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# --- measuring -------------------------------------------------------------
results="$tmp/results.tsv" # workload, round, phase, seconds, status
: >"$results"
declare -A failure # workload -> "phase|round|first error line"

# first_error_line FILE: the line of a failed run's stderr that says what
# went wrong: repro's own error line if there is one, else the last line.
first_error_line() {
  local line
  line=$(grep -m 1 -E '^repro: (error|fatal|internal)|[Ee]rror|diverg|panic|[Aa]bort' "$1" 2>/dev/null)
  [ -n "$line" ] || line=$(grep -v '^repro: recording to ' "$1" 2>/dev/null | tail -n 1)
  printf '%s' "${line:-(nothing on stderr)}" | tr '\t' ' ' | cut -c 1-200
}

# measure NAME ROUND PHASE LIMIT_S COMMAND...: runs COMMAND under timed_run;
# sets m_seconds and m_status ("timeout" or the exit status); stderr kept in
# $tmp/err.
measure() {
  local name=$1 round=$2 phase=$3 limit=$4
  shift 4
  rm -f "$tmp/time"
  "$timed_run" "$limit" "$tmp/time" "$@" </dev/null >/dev/null 2>"$tmp/err"
  if [ -s "$tmp/time" ]; then
    read -r m_seconds m_status <"$tmp/time"
  else
    m_seconds=0 m_status="no-result"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$phase" "$m_seconds" "$m_status" >>"$results"
}

describe_status() {
  case "$1" in
    timeout) echo "timed out after $2 s" ;;
    no-result) echo "timed_run gave no result" ;;
    signal-*) echo "killed by signal ${1#signal-} ($(kill -l "${1#signal-}" 2>/dev/null || echo '?'))" ;;
    *) echo "exit status $1" ;;
  esac
}

# keep_failed NAME ROUND TRACE: with --keep-failed, keeps TRACE (possibly
# incomplete) and the failed run's stderr for a post-mortem.
keep_failed() {
  [ -n "$keep_dir" ] || return 0
  local dest="$keep_dir/$1-round$2"
  rm -rf "$dest"
  mkdir -p "$dest" && cp "$tmp/err" "$dest/stderr"
  [ -e "$3" ] && mv "$3" "$dest/trace"
  echo "kept $dest" >&2
}

echo "repro overhead: ${#selected[@]} workloads x $runs rounds (progress on stderr)" >&2
for round in $(seq 1 "$runs"); do
  for w in "${selected[@]}"; do
    set_command "$w"
    line="round $round/$runs $w:"

    measure "$w" "$round" native "$timeout_s" "${cmd[@]}"
    native_status=$m_status
    line+=" native $m_seconds ($m_status)"

    if [ "${failure[$w]:-}" = "" ] || [ "${failure[$w]%%|*}" = replay ]; then
      trace="$tmp/trace-$w-$round"
      measure "$w" "$round" record "$timeout_s" "$repro" record -o "$trace" -- "${cmd[@]}"
      record_status=$m_status record_seconds=$m_seconds
      line+=" record $m_seconds ($m_status)"
      if [ "$record_status" != "$native_status" ]; then
        failure[$w]="record|$round|$(describe_status "$record_status" "$timeout_s") (native: $native_status): $(first_error_line "$tmp/err")"
        keep_failed "$w" "$round" "$trace"
      elif [ -z "${failure[$w]:-}" ]; then
        replay_limit=$(awk -v r="$record_seconds" -v cap="$timeout_s" \
          'BEGIN { l = int(5 * r) + 1; if (l < 30) l = 30; if (l > cap) l = cap; print l }')
        measure "$w" "$round" replay "$replay_limit" "$repro" replay "$trace"
        line+=" replay $m_seconds ($m_status)"
        if [ "$m_status" != "$record_status" ]; then
          failure[$w]="replay|$round|$(describe_status "$m_status" "$replay_limit") (recorded: $record_status): $(first_error_line "$tmp/err")"
          keep_failed "$w" "$round" "$trace"
        fi
      fi
      rm -rf "$trace"
      measure "$w" "$round" nofp "$timeout_s" "$repro" record --no-fast-path -o "$trace-nofp" -- "${cmd[@]}"
      line+=" nofp-record $m_seconds ($m_status)"
      rm -rf "$trace-nofp"
    fi

    if [ $have_strace -eq 1 ]; then
      measure "$w" "$round" strace "$timeout_s" strace -f -o /dev/null "${cmd[@]}"
      line+=" strace $m_seconds ($m_status)"
    fi
    [ -n "${failure[$w]:-}" ] && line+=" [${failure[$w]%%|*} FAILED]"
    echo "$line" >&2
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the report ------------------------------------------------------------
# median WORKLOAD PHASE: median seconds of the runs of PHASE that succeeded
# (native: any status; record/strace: the native status; replay: the
# recorded status of its round). Empty if there are none.
# median_ratio WORKLOAD A B: median over rounds of A/B, rounds where both
# succeeded.
stats() {
  awk -F'\t' -v w="$1" -v mode="$2" -v a="$3" -v b="${4:-}" '
    function median(arr, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
      return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
    }
    $1 == w { sec[$2, $3] = $4; st[$2, $3] = $5; rounds[$2] = 1 }
    END {
      n = 0
      for (r in rounds) {
        if (!((r, "native") in st)) continue
        ok["native"] = 1
        ok["record"] = ((r, "record") in st) && st[r, "record"] == st[r, "native"]
        ok["replay"] = ok["record"] && ((r, "replay") in st) && st[r, "replay"] == st[r, "record"]
        ok["strace"] = ((r, "strace") in st) && st[r, "strace"] == st[r, "native"]
        ok["nofp"] = ((r, "nofp") in st) && st[r, "nofp"] == st[r, "native"]
        if (mode == "median") {
          if (ok[a]) v[++n] = sec[r, a]
        } else if (ok[a] && ok[b] && sec[r, b] > 0) {
          v[++n] = sec[r, a] / sec[r, b]
        }
      }
      if (n > 0) printf "%.6f\n", median(v, n)
    }' "$results"
}

fmt_seconds() { [ -n "$1" ] && printf '%.4f' "$1" || printf '%s' "${2:--}"; }
fmt_ratio() { [ -n "$1" ] && printf '%.2f' "$1" || printf '%s' "${2:--}"; }

echo "repro whole-program overhead (bench/overhead/run_overhead.sh)"
echo "  cpu:         $cpu_model"
echo "  cores:       $cores online"
echo "  virtualised: $virt"
echo "  kernel:      $(uname -r)"
echo "  repro:       $repro, commit $commit"
echo "  strace:      $strace_version"
echo "  load avg:    $load_before before, $load_after after (other work on the machine skews times)"
echo "  date:        $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "  method:      $runs rounds, each native, record, replay, record --no-fast-path (nofp), strace"
echo "               in turn; wall-clock seconds"
echo "               (CLOCK_MONOTONIC); medians over rounds; ratios are medians of per-round ratios;"
echo "               repro pins itself and the program to one CPU (its default), native and strace"
echo "               are not pinned"
echo

any_failed=0
notes=()
header=(workload native record replay nofp strace rec/nat rep/nat nofp/nat strace/nat rep/rec)
fmt='%-23s %9s %9s %9s %9s %9s %8s %8s %8s %10s %8s  %s\n'
# shellcheck disable=SC2059
printf "$fmt" "${header[@]}" "" | sed 's/ *$//'
for w in "${selected[@]}"; do
  native=$(stats "$w" median native)
  record=$(stats "$w" median record)
  replay=$(stats "$w" median replay)
  strace_s=""
  [ $have_strace -eq 1 ] && strace_s=$(stats "$w" median strace)
  rec_nat=$(stats "$w" ratio record native)
  rep_nat=$(stats "$w" ratio replay native)
  str_nat=""
  [ $have_strace -eq 1 ] && str_nat=$(stats "$w" ratio strace native)
  rep_rec=$(stats "$w" ratio replay record)
  nofp=$(stats "$w" median nofp)
  nofp_nat=$(stats "$w" ratio nofp native)
  note=""
  record_cell=$(fmt_seconds "$record")
  replay_cell=$(fmt_seconds "$replay")
  if [ -n "${failure[$w]:-}" ]; then
    any_failed=1
    IFS='|' read -r f_phase f_round f_msg <<<"${failure[$w]}"
    note="$f_phase FAILED in round $f_round/$runs: $f_msg"
    replay_cell=FAILED
    [ "$f_phase" = record ] && record_cell=FAILED
    set_command "$w"
    notes+=("$w: $f_phase FAILED in round $f_round/$runs: $f_msg
    reproduce: $repro record -o T -- $(printf '%q ' "${cmd[@]}")&& $repro replay --events T 2>&1 | tail")
    [ -n "$keep_dir" ] && notes[-1]+="
    kept: $keep_dir/$w-round$f_round/"
  fi
  # shellcheck disable=SC2059
  printf "$fmt" "$w" "$(fmt_seconds "$native")" "$record_cell" "$replay_cell" \
    "$(fmt_seconds "$nofp")" "$(fmt_seconds "$strace_s")" "$(fmt_ratio "$rec_nat")" \
    "$(fmt_ratio "$rep_nat")" "$(fmt_ratio "$nofp_nat")" "$(fmt_ratio "$str_nat")" \
    "$(fmt_ratio "$rep_rec")" "$note" | sed 's/ *$//'
done

echo
echo "workload commands:"
for w in "${selected[@]}"; do
  set_command "$w"
  shown=("${cmd[@]}")
  [[ "${shown[0]}" == "$bench_dir"/* ]] && shown[0]=${shown[0]#"$build_dir"/}
  printf '  %-23s %s>/dev/null\n' "$w" "$(printf '%q ' "${shown[@]}")"
done

if [[ " ${selected[*]} " == *" getppid_loop "* ]]; then
  echo
  g_native=$(stats getppid_loop median native)
  per_call() { # median of PHASE, minus native, per getppid call, in microseconds
    local s
    s=$(stats getppid_loop median "$1")
    if [ -n "$s" ] && [ -n "$g_native" ]; then
      awk -v s="$s" -v n="$g_native" -v c="$getppid_calls" 'BEGIN { printf "%.2f us", (s - n) / c * 1e6 }'
    else
      printf 'n/a (%s failed)' "$1"
    fi
  }
  echo "per-syscall cost, getppid_loop ($getppid_calls calls), (median PHASE - median native) / calls:"
  echo "  native:  $(awk -v n="${g_native:-0}" -v c="$getppid_calls" 'BEGIN { printf "%.3f us", n / c * 1e6 }') per call (whole run / calls)"
  echo "  record:  $(per_call record)"
  echo "  replay:  $(per_call replay)"
  echo "  record --no-fast-path: $(per_call nofp)"
  [ $have_strace -eq 1 ] && echo "  strace:  $(per_call strace)"
fi

if [ ${#notes[@]} -gt 0 ]; then
  echo
  echo "failures:"
  for n in "${notes[@]}"; do
    echo "  $n"
  done
fi
exit $any_failed

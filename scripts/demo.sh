#!/usr/bin/env bash
# `make demo`: records a racy program whose result changes from run to run,
# then replays the trace several times and shows the same result every time.
set -u
repro=${1:-build/repro}
build=$(dirname "$repro")
program="$build/examples/demo_racy_counter"
work=$(mktemp -d "${TMPDIR:-/tmp}/repro-demo-XXXXXX")
trap 'rm -rf "$work"' EXIT

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say "1. The racy program, run natively five times (the result is flaky):"
for i in 1 2 3 4 5; do
  "$program"
done

say "2. Recorded once with repro:"
"$repro" record -o "$work/trace" -- "$program" 2>"$work/record.err" | tee "$work/recorded.out"
record_status=${PIPESTATUS[0]}
grep -v '^repro: recording' "$work/record.err" >&2
echo "(exit status $record_status)"

say "3. Replayed three times from the trace:"
for i in 1 2 3; do
  "$repro" replay "$work/trace" >"$work/replay.out" 2>"$work/replay.err"
  replay_status=$?
  cat "$work/replay.out"
  if ! cmp -s "$work/recorded.out" "$work/replay.out" || [ "$replay_status" -ne "$record_status" ]; then
    echo "replay $i differs from the recording (exit $replay_status):" >&2
    cat "$work/replay.err" >&2
    exit 1
  fi
done

say "Every replay reproduced the recorded outcome exactly (exit status $record_status)."
"$repro" check "$work/trace"
echo "Look inside a trace with: $repro dump TRACE"

#!/usr/bin/env bash
# Replay never prints output the program did not write. The program
# (output_divergence_program.c) prints an rdrand result, which the trace
# cannot hold, with one write(2). Replay reaches that write with other bytes
# in the program's buffer: it must exit 75 with a report that names the
# write to stdout and shows the recorded and the replayed bytes, and must
# not print the recorded line (the output stops before it). Skipped (77) on
# a CPU without rdrand (cpuid leaf 1, ecx bit 30).
# Usage: output_divergence.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start output_divergence "$@"
program=$build_dir/tests/e2e/scenarios/scenario_output_divergence
need_file "$program"
"$program" --has-rdrand || skip "this CPU has no rdrand (cpuid leaf 1, ecx bit 30)"

record 60 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
value=$(sed -n 's/^~ random=\([0-9a-f]\{16\}\)$/\1/p' record.out)
[ -n "$value" ] || fail "the recording did not print the random value: $(cat record.out)"

replay 60 trace replay.out replay.err
[ "$status" -eq 75 ] || fail "replay exited $status, not 75: $(tail -n 20 replay.err)"
[ "$(cat replay.out)" = "before the random line" ] ||
  fail "replay printed other output than the line before the divergence: $(cat replay.out)"
expected=$(grep -m1 '^ *expected:' replay.err)
observed=$(grep -m1 '^ *observed:' replay.err)
echo "$expected" | grep -q "write(1, .*) of \"~ random=$value\\\\n\" to stdout" ||
  fail "the report does not show the recorded write: $expected"
echo "$observed" | grep -q 'the program.s buffer holds "~ random=[0-9a-f]\{16\}\\n" (first difference at byte [0-9]*)' ||
  fail "the report does not show the replayed bytes: $observed"
echo "$observed" | grep -q "random=$value" && fail "the replayed bytes are the recorded ones: $observed"
pass "exit 75, $(echo "$expected" | sed 's/^ *//'); $(echo "$observed" | sed 's/^ *//')"

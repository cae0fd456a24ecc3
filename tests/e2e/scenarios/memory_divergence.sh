#!/usr/bin/env bash
# A replay whose memory differs at a preemption point says where. The
# program (memory_divergence_program.c) stores an rdrand result, which the
# trace cannot hold, in a .bss variable, then a profiling timer preempts it
# in a busy loop. Replay finds the loop's registers again but not its
# memory, runs on to the next syscall and must exit 75 with a report that
# names the variable (unrecorded_random), its section (.bss) and the
# program, and shows the recorded bytes (the recording printed the value
# after the loop) next to the replayed ones. Skipped (77) on a CPU without
# rdrand (cpuid leaf 1, ecx bit 30).
# Usage: memory_divergence.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start memory_divergence "$@"
program=$build_dir/tests/e2e/scenarios/scenario_memory_divergence
need_file "$program"
"$program" --has-rdrand || skip "this CPU has no rdrand (cpuid leaf 1, ecx bit 30)"

record 60 trace record.out record.err "$program"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
grep -qx 'EXIT-SUCCESS' record.out || fail "no EXIT-SUCCESS in the recorded output"
value=$(sed -n 's/^~ unrecorded_random=\([0-9a-f]\{16\}\)$/\1/p' record.out)
[ -n "$value" ] || fail "the recording did not print unrecorded_random: $(cat record.out)"

# The point to find again is the signal's: a preempt event before it.
bounded 60 "$repro" dump trace >dump.out 2>dump.err || fail "repro dump failed: $(tail -n 3 dump.err)"
grep -B1 ' signal --- SIGPROF\b' dump.out | grep -q ' preempt ' ||
  fail "the trace has no preempt event before the SIGPROF: $(grep -n 'preempt\|signal' dump.out)"

replay 120 trace replay.out replay.err
[ "$status" -eq 75 ] || fail "replay exited $status, not 75: $(tail -n 20 replay.err)"
observed=$(grep -m1 '^ *observed:' replay.err)
[ -n "$observed" ] || fail "the report has no 'observed:' line: $(tail -n 20 replay.err)"
echo "$observed" | grep -q 'differed in writable memory: first at 0x' ||
  fail "the report does not say where memory differed: $observed"
echo "$observed" | grep -Eq "unrecorded_random\+0x[0-7] in [^ ]*/scenario_memory_divergence \(\.bss\)" ||
  fail "the report does not name unrecorded_random in the program's .bss: $observed"

# "recorded 3a 1f 02, replayed 9c 44 01 (3 bytes of the page differ)": the
# recorded bytes are the printed value's, from the named offset.
offset=$(echo "$observed" | sed -n 's/.*unrecorded_random+0x\([0-7]\) in .*/\1/p')
recorded=$(echo "$observed" | sed -n 's/.*: recorded \([0-9a-f ]*\), replayed .*/\1/p')
replayed=$(echo "$observed" | sed -n 's/.*, replayed \([0-9a-f ]*\) ([0-9]* bytes\{0,1\} of the page differs\{0,1\}).*/\1/p')
[ -n "$recorded" ] && [ -n "$replayed" ] ||
  fail "the report does not show recorded and replayed bytes: $observed"
expected=$(echo "$value" | cut -c $((offset * 2 + 1))- | sed 's/../& /g')
case "$expected" in
  "$recorded"*) ;;
  *) fail "recorded bytes '$recorded' at offset $offset are not those of the printed value $value" ;;
esac
[ "$recorded" != "$replayed" ] || fail "recorded and replayed bytes are the same: $observed"
pass "exit 75, $(echo "$observed" | sed 's/^ *//')"

#!/usr/bin/env bash
# The recorded program runs with the speculation mitigations it has
# natively. Where the kernel mitigates Speculative Store Bypass for
# seccomp-filtered tasks (spec_store_bypass_disable=seccomp, its default on
# CPUs that need it), a plain seccomp filter would force the mitigation on
# (slower code, another prctl answer); repro's is installed with
# SECCOMP_FILTER_FLAG_SPEC_ALLOW (core/seccomp/seccomp_filter.cc):
#   - grep reads the same Speculation_Store_Bypass line in its
#     /proc/self/status recorded, with and without the fast path, as
#     natively, and the replay prints it again;
#   - with REPRO_SECCOMP_SPEC_ALLOW=off it reads "force mitigated": the
#     check above can tell.
# Skips (77) where the kernel does not mitigate SSB through seccomp.
# Usage: spec_store_bypass.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start spec_store_bypass "$@"
vulnerability=/sys/devices/system/cpu/vulnerabilities/spec_store_bypass
state=$(cat "$vulnerability" 2>/dev/null)
case "$state" in
  *seccomp*) ;;
  *) skip "this kernel does not mitigate Speculative Store Bypass for seccomp-filtered tasks ($vulnerability: ${state:-missing})" ;;
esac

line() { grep '^Speculation_Store_Bypass:' /proc/self/status; }
native=$(line) || fail "no Speculation_Store_Bypass line in /proc/self/status"

record 60 trace rec.out rec.err grep '^Speculation_Store_Bypass:' /proc/self/status
[ "$status" -eq 0 ] || fail "record exited $status: $(tail -n 3 rec.err)"
[ "$(cat rec.out)" = "$native" ] || fail "recorded: '$(cat rec.out)', natively: '$native'"
expect_same_replay trace rec.out rec.err 0

bounded 60 "$repro" record --no-fast-path -o plain -- grep '^Speculation_Store_Bypass:' /proc/self/status \
  >plain.out 2>plain.err || fail "record --no-fast-path failed: $(tail -n 3 plain.err)"
[ "$(cat plain.out)" = "$native" ] || fail "recorded without the fast path: '$(cat plain.out)', natively: '$native'"

REPRO_SECCOMP_SPEC_ALLOW=off bounded 60 "$repro" record -o forced -- grep '^Speculation_Store_Bypass:' \
  /proc/self/status >forced.out 2>forced.err || fail "record with REPRO_SECCOMP_SPEC_ALLOW=off failed: $(tail -n 3 forced.err)"
grep -q 'force mitigated' forced.out ||
  fail "with REPRO_SECCOMP_SPEC_ALLOW=off the filter did not force the mitigation: '$(cat forced.out)'"
pass

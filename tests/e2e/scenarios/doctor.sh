#!/usr/bin/env bash
# `repro doctor` describes the host in a shape scripts can rely on:
#   - `--json` prints one JSON object with every check (name, status OK /
#     DEGRADED / MISSING, needed as a bool, found, consequence), the cpu
#     (vendor not empty), the kernel (release equal to `uname -r`), tsc_mode
#     (trap or patch) and a verdict; the exit status is 0 exactly when no
#     needed check is MISSING, 1 otherwise;
#   - the rdtsc-trap check agrees with tsc_mode (OK if and only if trap);
#   - REPRO_TSC=patch makes tsc_mode patch;
#   - the text output has one line per check, starting with its status word
#     and its name, in the JSON's order, and ends with the verdict.
# It passes on hosts where repro cannot record too: the doctor must still
# say so. Usage: doctor.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start doctor "$@"
need_tool python3 uname

checks="ptrace seccomp-inherited seccomp-trace seccomp-user-notif disable-aslr rdtsc-trap"
checks+=" cpuid-faulting perf-counters hw-breakpoints cpu-pinning replay-isolation pipe-nowait"

# run_doctor NAME ARGS...: `repro doctor ARGS` into NAME.out/NAME.err; sets
# $status, which must be 0 or 1.
run_doctor() {
  local name=$1
  shift
  bounded 60 "$repro" doctor "$@" >"$name.out" 2>"$name.err"
  status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 1 ] ||
    fail "repro doctor $* exited $status: $(head -n 5 "$name.err")"
}

# The host's own answer: REPRO_TSC as the suite may set it for the whole
# run (REPRO_TSC=patch make test) is tested on its own below.
unset REPRO_TSC
run_doctor json --json
# validate_json FILE EXIT_STATUS: prints the problems, one per line.
validate_json() {
  python3 -c '
import json, sys
path, exit_status, release, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
problems = []
try:
    doc = json.load(open(path))
except ValueError as e:
    print("not JSON: %s" % e)
    sys.exit()
checks = doc.get("checks")
if not isinstance(checks, list):
    print("no checks list")
    sys.exit()
seen = [c.get("name") for c in checks]
if seen != names:
    problems.append("check names %s, expected %s" % (seen, names))
for c in checks:
    if c.get("status") not in ("OK", "DEGRADED", "MISSING"):
        problems.append("%s: status %r" % (c.get("name"), c.get("status")))
    if not isinstance(c.get("needed"), bool):
        problems.append("%s: needed %r is not a bool" % (c.get("name"), c.get("needed")))
    for field in ("found", "consequence"):
        if not isinstance(c.get(field), str) or not c.get(field):
            problems.append("%s: %s is empty" % (c.get("name"), field))
if doc.get("tsc_mode") not in ("trap", "patch"):
    problems.append("tsc_mode %r" % doc.get("tsc_mode"))
if not doc.get("cpu", {}).get("vendor"):
    problems.append("cpu vendor is empty")
if doc.get("kernel", {}).get("release") != release:
    problems.append("kernel release %r, uname -r says %r" % (doc.get("kernel", {}).get("release"), release))
if not isinstance(doc.get("verdict"), str) or not doc.get("verdict").startswith("repro "):
    problems.append("verdict %r" % doc.get("verdict"))
blocked = any(c.get("needed") is True and c.get("status") == "MISSING" for c in checks)
if exit_status != (1 if blocked else 0):
    problems.append("exit status %d, but a needed check is %s" % (exit_status, "MISSING" if blocked else "never MISSING"))
if doc.get("can_record") is not (not blocked):
    problems.append("can_record %r disagrees with the checks" % doc.get("can_record"))
rdtsc = [c for c in checks if c.get("name") == "rdtsc-trap"]
if rdtsc and (rdtsc[0].get("status") == "OK") != (doc.get("tsc_mode") == "trap"):
    problems.append("rdtsc-trap is %s but tsc_mode is %s" % (rdtsc[0].get("status"), doc.get("tsc_mode")))
for p in problems:
    print(p)
' "$1" "$2" "$(uname -r)" "$checks"
}
problems=$(validate_json json.out "$status")
[ -z "$problems" ] || fail "repro doctor --json: $problems"$'\n'"$(cat json.out)"

# REPRO_TSC=patch forces patching mode whatever the host does.
REPRO_TSC=patch run_doctor patch --json
mode=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tsc_mode"])' patch.out) ||
  fail "REPRO_TSC=patch repro doctor --json printed no JSON: $(head -n 5 patch.out)"
[ "$mode" = patch ] || fail "REPRO_TSC=patch: tsc_mode is '$mode', not patch"

# The text: one line per check, in order, "STATUS name ...", then the verdict.
run_doctor text
[ "$status" -eq "$(python3 -c 'import json, sys; print(0 if json.load(open(sys.argv[1]))["can_record"] else 1)' json.out)" ] ||
  fail "repro doctor exited $status, repro doctor --json said otherwise"
status_lines=$(grep -E '^(OK|DEGRADED|MISSING) ' text.out | awk '{print $2}' | tr '\n' ' ')
[ "$status_lines" = "$checks " ] ||
  fail "text check lines name '$status_lines', expected '$checks': $(cat text.out)"
tail -n 1 text.out | grep -Eq '^repro (works here|cannot record here)' ||
  fail "the text does not end with a verdict: $(tail -n 1 text.out)"
grep -q '^kernel ' text.out || fail "no kernel line: $(cat text.out)"
grep -q '^cpu ' text.out || fail "no cpu line: $(cat text.out)"

pass "$(tail -n 1 text.out) (tsc mode $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tsc_mode"])' json.out))"

#!/usr/bin/env bash
# Scripts run through their #! interpreter, which the kernel starts with an
# argv of its own (interpreter, script path, then the script's arguments):
# a script as the recorded program, one run by bash -c, one that finds its
# directory with dirname "$0", scripts running scripts (also a script whose
# interpreter is itself a script), exec /bin/sh -c from a script, a script
# that runs itself, and a shim on PATH (a bash script named python3 that
# execs the real one, as version managers install). Each is recorded, prints
# what a native run prints, and replays identical.
# Usage: shell_scripts.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start shell_scripts "$@"
need_tool bash sh env dirname

mkdir -p scripts/sub shim
cat >scripts/hello.sh <<'EOF'
#!/bin/sh
echo "hello.sh: \$0=$0 \$#=$# args: $*"
EOF
cat >scripts/sub/where.sh <<'EOF'
#!/bin/bash
here=$(dirname "$0")
echo "where.sh: dirname \$0 is $here"
read -r line <"$here/data.txt"
echo "$line"
EOF
echo "data next to where.sh" >scripts/sub/data.txt
cat >scripts/outer.sh <<'EOF'
#!/bin/bash
echo "outer.sh: start"
"$(dirname "$0")/hello.sh" from outer
sh "$(dirname "$0")/hello.sh" through sh
"$(dirname "$0")/sub/where.sh"
echo "outer.sh: end"
EOF
# An interpreter that is itself a script: the kernel puts both in argv.
cat >scripts/interp.sh <<'EOF'
#!/bin/sh -e
echo "interp.sh: \$0=$0 args: $*"
EOF
printf '#!%s/scripts/interp.sh -x\nthis line is never run\n' "$work" >scripts/chained
cat >scripts/exec_sh.sh <<'EOF'
#!/bin/sh
exec /bin/sh -c 'echo "in sh -c: \$0=$0 \$1=$1"; "$1" after exec' sh-name "$(dirname "$0")/hello.sh"
EOF
cat >scripts/again.sh <<'EOF'
#!/bin/bash
if [ "$1" != again ]; then
  echo "again.sh: first run"
  "$0" again
  echo "again.sh: second run exited $?"
else
  echo "again.sh: running again as $0"
  exit 4
fi
EOF
chmod +x scripts/*.sh scripts/sub/*.sh scripts/chained

# The case's command, run natively, then recorded and replayed.
run_case() {
  local name=$1
  shift
  bounded 60 "$@" >"$name.native.out" 2>"$name.native.err"
  local native_status=$?
  [ -s "$name.native.out" ] || fail "$name: the native run printed nothing: $(head -n 5 "$name.native.err")"
  record 120 "$name.trace" "$name.record.out" "$name.record.err" "$@"
  local record_status=$status
  [ "$record_status" -eq "$native_status" ] ||
    fail "$name: recorded exit status $record_status, native $native_status: $(tail -n 5 "$name.record.err")"
  cmp -s "$name.native.out" "$name.record.out" ||
    fail "$name: recorded output differs from native: $(diff "$name.native.out" "$name.record.out" | head -n 20)"
  expect_check_complete "$name.trace"
  expect_same_replay "$name.trace" "$name.record.out" "$name.record.err" "$record_status"
  cases=$((cases + 1))
}
cases=0

run_case program ./scripts/hello.sh one two
run_case bash_c bash -c './scripts/hello.sh three; echo "bash -c: $?"'
run_case dirname scripts/sub/where.sh
run_case nested ./scripts/outer.sh
run_case chained ./scripts/chained last-arg
run_case exec_sh ./scripts/exec_sh.sh
run_case self ./scripts/again.sh

# The real python3, behind whatever shims this host has.
if python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$python" ]; then
  cat >shim/python3 <<EOF
#!/usr/bin/env bash
set -e
program="\${0##*/}"
exec "$python" "\$@"
EOF
  chmod +x shim/python3
  run_case shim env PATH="$work/shim:$PATH" bash -c \
    'python3 -c "import sys; print(\"python says\", sys.argv[1:])" shimmed'
  shim_note=", shim"
else
  shim_note=" (no python3 here: no shim case)"
fi

pass "$cases cases recorded and replayed identical$shim_note"

#!/usr/bin/env bash
# A trace is self-contained: after recording `sum input.dat` (a private copy
# of sha256sum, run from a temporary path, reading a relative path), the
# input and the program binary are deleted; the replay still prints the
# recorded checksum line, also from another working directory with an empty
# environment (`env -i`).
# Usage: replay_after_files_deleted.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start replay_after_files_deleted "$@"
need_tool sha256sum env head

mkdir bin data elsewhere
cp "$(command -v sha256sum)" bin/sum || fail "cannot copy sha256sum"
head -c 300000 /dev/urandom >data/input.dat || fail "cannot make the input"
expected=$(cd data && sha256sum input.dat) || fail "native sha256sum failed"

cd data || fail "no data directory"
record 60 ../trace ../record.out ../record.err "$work/bin/sum" input.dat
cd "$work" || fail "cannot return to the work directory"
[ "$status" -eq 0 ] || fail "recorded run exited $status: $(tail -n 5 record.err)"
[ "$(cat record.out)" = "$expected" ] ||
  fail "recorded output '$(cat record.out)', native '$expected'"
grep -q "exec $work/bin/sum " <("$repro" dump trace 2>&1) ||
  fail "repro dump shows no exec of $work/bin/sum"
expect_check_complete trace

rm -f data/input.dat bin/sum
[ ! -e data/input.dat ] && [ ! -e bin/sum ] || fail "could not delete the input and the binary"

expect_same_replay trace record.out record.err 0 60

# Another working directory (where input.dat does not exist either) and an
# empty environment: no PATH, HOME or TMPDIR.
cd elsewhere || fail "no elsewhere directory"
bounded 60 env -i "$repro" replay "$work/trace" >../envi.out 2>../envi.err
status=$?
cd "$work" || fail "cannot return to the work directory"
[ "$status" -eq 0 ] || fail "replay under env -i from elsewhere exited $status: $(tail -n 20 envi.err)"
cmp -s record.out envi.out ||
  fail "replay under env -i from elsewhere printed '$(cat envi.out)', recorded '$(cat record.out)'"
pass "checksum replayed without its input or binary, also under env -i"

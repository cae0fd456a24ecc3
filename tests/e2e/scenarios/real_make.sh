#!/usr/bin/env bash
# A real parallel build: `make -j2` compiles six C files with gcc (cc1, as,
# collect2, ld: many processes, pipes and files) and runs the result.
#   - the recorded build prints what a native build prints (commands may
#     start in another order under -j2, so lines are compared sorted) and
#     produces a working program;
#   - after `make clean` the replay prints the recorded bytes with the
#     recorded status, and creates no object file, no program and nothing
#     else: replay does not touch the outside world.
# Usage: real_make.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start real_make "$@"
need_tool make cc

mkdir project
names=(ant bee cow dog eel)
for i in 0 1 2 3 4; do
  n=${names[$i]}
  cat >project/$n.c <<C
#include "parts.h"
int $n(int x) {
  int acc = $((i + 1));
  for (int k = 0; k < x; k++) acc = acc * 31 + k + $((i * 7));
  return acc & 0xffff;
}
C
  echo "int $n(int x);" >>project/parts.h
done
cat >project/main.c <<'C'
#include <stdio.h>
#include "parts.h"
int main(void) {
  printf("ant %d bee %d cow %d dog %d eel %d\n", ant(10), bee(20), cow(30), dog(40), eel(50));
  return 0;
}
C
cat >project/Makefile <<'MK'
OBJS = ant.o bee.o cow.o dog.o eel.o main.o
all: run
run: parts
	./parts
parts: $(OBJS)
	cc -o $@ $(OBJS)
%.o: %.c parts.h
	cc -O1 -c -o $@ $<
clean:
	rm -f $(OBJS) parts
.PHONY: all run clean
MK
cd project || fail "no project directory"
build_outputs() { find . -name '*.o' -o -name parts -type f; }

bounded 120 make -j2 >../native.out 2>../native.err
native_status=$?
[ "$native_status" -eq 0 ] || fail "native make exited $native_status: $(tail -n 5 ../native.err)"
grep -q '^ant [0-9-]* bee' ../native.out || fail "native build did not run the program"
expected_run=$(grep '^ant ' ../native.out)
bounded 60 make clean >/dev/null 2>&1 || fail "make clean failed"
[ -z "$(build_outputs)" ] || fail "make clean left $(build_outputs)"

record 300 ../trace ../record.out ../record.err make -j2
record_status=$status
[ "$record_status" -eq "$native_status" ] ||
  fail "recorded make exited $record_status, native $native_status: $(tail -n 10 ../record.err)"
diff <(sort ../native.out) <(sort ../record.out) >../record.diff ||
  fail "recorded make output differs from native (sorted): $(head -n 20 ../record.diff)"
[ "$(./parts)" = "$expected_run" ] || fail "the recorded build's program prints '$(./parts)'"
[ "$(build_outputs | wc -l)" -eq 7 ] || fail "the recorded build made: $(build_outputs)"
bounded 60 make clean >/dev/null 2>&1 || fail "make clean failed"
[ -z "$(build_outputs)" ] || fail "make clean left $(build_outputs)"
# Replay needs none of the inputs either: the sources and the Makefile go.
rm -f ./*.c ./*.h Makefile || fail "cannot delete the project's sources"
snapshot() { find . -printf '%p %y %s %T@\n' | sort; }
snapshot >../before-replay.ls
expect_check_complete ../trace

# Replay from inside the project, where a real make would rebuild everything.
expect_same_replay ../trace ../record.out ../record.err "$record_status" 300
[ -z "$(build_outputs)" ] || fail "replay created files in the project: $(build_outputs)"
snapshot >../after-replay.ls
diff ../before-replay.ls ../after-replay.ls >../replay-ls.diff ||
  fail "replay changed the project directory: $(head -n 10 ../replay-ls.diff)"
pass "$(wc -l <../record.out) lines of make output; replay, with the sources deleted, created no files"

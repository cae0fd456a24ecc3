/* Scenario program for divergence_report.sh, built twice: with
 * DIVERGENCE_SYSCALL=SYS_getpid (scenario_divergence_getpid, the one that is
 * recorded) and with DIVERGENCE_SYSCALL=SYS_getppid
 * (scenario_divergence_getppid, swapped into the trace in place of the
 * recorded executable). The two binaries differ only in that one constant, so
 * a replay of the second follows the trace up to that syscall and then must
 * report a divergence naming both. */
#include "test_util.h"

#ifndef DIVERGENCE_SYSCALL
#error "build with -DDIVERGENCE_SYSCALL=SYS_getpid or SYS_getppid"
#endif

int main(void) {
  test_init();
  say("before the syscall\n");
  long r = syscall(DIVERGENCE_SYSCALL);
  check(r > 0);
  say("after the syscall\n");
  finish();
  return 0;
}

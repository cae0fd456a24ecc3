/* Scenario program for divergence_report.sh: makes getpid when the
 * environment variable DIVERGENCE_SYSCALL is "getpid", getppid otherwise.
 * Recorded with DIVERGENCE_SYSCALL=getpid and `--redact-env
 * DIVERGENCE_SYSCALL`, it is replayed with filler in place of the value, so
 * the replay follows the trace up to that syscall and then must report a
 * divergence naming both. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
  test_init();
  say("before the syscall\n");
  const char *choice = getenv("DIVERGENCE_SYSCALL");
  long r = syscall(choice != NULL && strcmp(choice, "getpid") == 0 ? SYS_getpid : SYS_getppid);
  check(r > 0);
  say("after the syscall\n");
  finish();
  return 0;
}

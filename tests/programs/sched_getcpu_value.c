/* sched_getcpu() and the raw getcpu syscall report a cpu that is in the
 * affinity mask; pinning the thread to one allowed cpu makes both report that
 * cpu. Cpu numbers are printed with "~ ". */
#include "test_util.h"

#include <sched.h>

int main(void) {
  test_init();
  cpu_set_t mask;
  CPU_ZERO(&mask);
  check(sched_getaffinity(0, sizeof mask, &mask) == 0);
  int allowed = CPU_COUNT(&mask);
  check(allowed >= 1);

  int cpu = sched_getcpu();
  check(cpu >= 0 && cpu < CPU_SETSIZE);
  check(CPU_ISSET(cpu, &mask));
  unsigned raw_cpu = 9999, node = 9999;
  check(syscall(SYS_getcpu, &raw_cpu, &node, NULL) == 0);
  check(raw_cpu < CPU_SETSIZE && CPU_ISSET(raw_cpu, &mask));
  check(node < 1024);
  say("sched_getcpu and getcpu: a cpu from the affinity mask\n");

  /* Pin to the highest allowed cpu; then both must report it. */
  int target = -1;
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET(i, &mask)) target = i;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(target, &one);
  check(sched_setaffinity(0, sizeof one, &one) == 0);
  sched_yield();
  check(sched_getcpu() == target);
  check(syscall(SYS_getcpu, &raw_cpu, NULL, NULL) == 0 && (int)raw_cpu == target);
  say("pinned to one cpu: both report it\n");
  check(sched_setaffinity(0, sizeof mask, &mask) == 0);

  cpu_set_t empty;
  CPU_ZERO(&empty);
  errno = 0;
  check(sched_setaffinity(0, sizeof empty, &empty) == -1 && errno == EINVAL);
  say("empty affinity mask: EINVAL\n");
  say_nondet_num("cpu", cpu);
  say_nondet_num("getcpu", raw_cpu);
  say_nondet_num("allowed cpus", allowed);
  say_nondet_num("pinned to", target);
  finish();
  return 0;
}

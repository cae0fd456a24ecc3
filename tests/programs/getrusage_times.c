/* getrusage: after burning ~20 ms of CPU, RUSAGE_SELF and RUSAGE_THREAD show
 * user+system time of at least that much and a positive max RSS; after a
 * child that burns CPU is reaped, RUSAGE_CHILDREN includes it. Values are
 * printed with "~ ". */
#include "test_util.h"

#include <sys/resource.h>
#include <sys/wait.h>

static long long cpu_ns(clockid_t clk) {
  struct timespec ts;
  check(clock_gettime(clk, &ts) == 0);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void burn_ms(long ms) {
  long long start = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  volatile unsigned long x = 0;
  for (int rounds = 0; cpu_ns(CLOCK_THREAD_CPUTIME_ID) - start < ms * 1000000ll; rounds++) {
    check(rounds < 100000);
    for (int k = 0; k < 200000; k++) x += (unsigned long)k;
  }
  (void)x;
}

static long long tv_us(struct timeval tv) { return (long long)tv.tv_sec * 1000000 + tv.tv_usec; }

int main(void) {
  test_init();
  burn_ms(20);
  struct rusage self, thread, children;
  check(getrusage(RUSAGE_SELF, &self) == 0);
  check(getrusage(RUSAGE_THREAD, &thread) == 0);
  long long self_us = tv_us(self.ru_utime) + tv_us(self.ru_stime);
  long long thread_us = tv_us(thread.ru_utime) + tv_us(thread.ru_stime);
  /* Accounting granularity can shave a little off: allow 15 of the 20 ms. */
  check(self_us >= 15000);
  check(thread_us >= 15000);
  check(self.ru_maxrss > 0);
  say("RUSAGE_SELF and RUSAGE_THREAD: >= 15 ms CPU, maxrss > 0\n");

  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    burn_ms(20);
    _exit(0);
  }
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(getrusage(RUSAGE_CHILDREN, &children) == 0);
  long long child_us = tv_us(children.ru_utime) + tv_us(children.ru_stime);
  check(child_us >= 15000);
  check(children.ru_maxrss > 0);
  say("RUSAGE_CHILDREN after reaping a busy child: >= 15 ms CPU\n");

  errno = 0;
  check(getrusage(12345, &self) == -1 && errno == EINVAL);
  say("invalid who: EINVAL\n");
  say_nondet_num("self cpu us", self_us);
  say_nondet_num("thread cpu us", thread_us);
  say_nondet_num("children cpu us", child_us);
  say_nondet_num("maxrss KiB", self.ru_maxrss);
  finish();
  return 0;
}

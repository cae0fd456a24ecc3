/* A profiling timer (setitimer(ITIMER_PROF), every 2 ms of CPU time)
 * interrupts a CPU-bound loop built only of short instructions and a
 * branch, with no syscall inside, until its handler has run 25 times. The
 * signals land anywhere in the loop; none of its instructions is five bytes
 * long, so a point at them cannot be watched by one moved instruction. */
#include "test_util.h"

#include <signal.h>
#include <stdint.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_prof(int sig) {
  (void)sig;
  ticks++;
}

/* Counts the odd numbers in [0, n): inc, test, je, inc, cmp, jb. */
static uint64_t count_odd(uint64_t n) {
  uint64_t i = 0, odd = 0;
  __asm__ volatile(
      "1: inc %0\n\t"
      "test $1, %b0\n\t"
      "jz 2f\n\t"
      "inc %1\n\t"
      "2: cmp %2, %0\n\t"
      "jb 1b\n\t"
      : "+r"(i), "+r"(odd)
      : "r"(n)
      : "cc");
  return odd;
}

int main(void) {
  set_handler(SIGPROF, on_prof, 0);
  struct itimerval it = {{0, 2000}, {0, 2000}};
  check(setitimer(ITIMER_PROF, &it, NULL) == 0);
  int chunks = 0;
  uint64_t odd = 0;
  while (ticks < 25) {
    check(++chunks < 100000); /* 100000 chunks of 1M turns: minutes of CPU */
    odd += count_odd(1000000);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  check(setitimer(ITIMER_PROF, &off, NULL) == 0);
  check(odd == (uint64_t)chunks * 500000);
  say("the profiling timer interrupted the loop at least 25 times\n");
  say_nondet_num("ticks", ticks);
  say_nondet_num("chunks of 1M turns", chunks);
  finish();
  return 0;
}

/* Scenario program for memory_divergence.sh: a divergence in memory alone.
 *
 * rdrand cannot be trapped, so its result is not in the trace: the program
 * stores one in a global variable (in .bss), then spins in a loop that a
 * profiling timer interrupts once. The recorder names the point of that
 * signal by registers and a hash of writable memory; on replay the
 * registers match at that point but memory does not (unrecorded_random
 * holds another value), so replay runs past it to the next syscall and
 * reports a divergence that must say where memory differed. The value is
 * printed only after the loop, so the recording's output tells the test
 * which bytes the report must show as recorded.
 *
 * With --has-rdrand it only says whether this CPU has rdrand (exit 0) or
 * not (exit 1). */
#include "test_util.h"

#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>

static volatile uint64_t unrecorded_random;
static volatile sig_atomic_t ticks;

static void on_prof(int sig) {
  (void)sig;
  ticks++;
}

/* The random value goes straight to memory, and the register it passed
 * through is cleared: the registers at the preemption point must be the
 * recorded ones, so that only memory differs. */
static void store_unrecorded_random(void) {
  __asm__ volatile(
      "1: rdrand %%rax\n\t"
      "jnc 1b\n\t" /* no random number ready yet: try again */
      "movq %%rax, %0\n\t"
      "xorl %%eax, %%eax\n\t"
      : "=m"(unrecorded_random)
      :
      : "rax", "cc");
}

/* About 0.2 s of CPU: long enough for the 10 ms timer to fire inside it
 * even on a slow machine, with a count that ends it on replay too (where
 * the signal is only delivered once the point is found). */
static uint64_t spin(uint64_t turns) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < turns; i++) {
    sum += i;
    __asm__ volatile("" : "+r"(sum));
  }
  return sum;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--has-rdrand") == 0) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_RDRND) ? 0 : 1;
  }
  test_init();
  store_unrecorded_random();
  set_handler(SIGPROF, on_prof, 0);
  struct itimerval once = {{0, 0}, {0, 10000}};
  check(setitimer(ITIMER_PROF, &once, NULL) == 0);
  const uint64_t turns = 400000000;
  uint64_t sum = spin(turns);
  check(sum == turns * (turns - 1) / 2);
  check(ticks == 1);
  uint64_t value = unrecorded_random;
  say_nondet_bytes("unrecorded_random", &value, sizeof value);
  say("the profiling timer interrupted the loop\n");
  finish();
  return 0;
}

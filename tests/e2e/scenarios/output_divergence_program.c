/* Scenario program for output_divergence.sh: output that replay cannot
 * reproduce. rdrand cannot be trapped, so its result is not in the trace;
 * the program prints one as hex with one write(2), straight from a
 * register to the buffer, with no syscall in between. Replay hands the
 * program the same syscall results, so it reaches the same write with other
 * bytes in its buffer: replay must report that, not print the recorded line.
 *
 * With --has-rdrand it only says whether this CPU has rdrand (exit 0) or
 * not (exit 1). */
#include "test_util.h"

#include <cpuid.h>
#include <stdint.h>

static uint64_t unrecorded_random(void) {
  uint64_t value;
  __asm__ volatile(
      "1: rdrand %0\n\t"
      "jnc 1b\n\t" /* no random number ready yet: try again */
      : "=r"(value)
      :
      : "cc");
  return value;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--has-rdrand") == 0) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_RDRND) ? 0 : 1;
  }
  test_init();
  say("before the random line\n");
  uint64_t value = unrecorded_random();
  say_nondet_bytes("random", &value, sizeof value); /* fixed length: the same write(2) */
  say("after the random line\n");
  finish();
  return 0;
}

/* Code generated at run time that reads the time stamp counter: a JIT
 * writes "rdtsc; shl $32, %rdx; or %rdx, %rax; ret" into anonymous
 * executable memory and calls it. Trapping mode records that rdtsc like
 * any other; patching mode cannot (no file to decode it from), which
 * replay must say when it is the cause of a divergence. */
#include "test_util.h"

#include <string.h>
#include <sys/mman.h>

int main(void) {
  test_init();
  static const unsigned char kCode[] = {
      0x0f, 0x31,             /* rdtsc */
      0x48, 0xc1, 0xe2, 0x20, /* shl $32, %rdx */
      0x48, 0x09, 0xd0,       /* or %rdx, %rax */
      0xc3,                   /* ret */
  };
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
  check(page != MAP_FAILED);
  memcpy(page, kCode, sizeof kCode);
  uint64_t (*read_tsc)(void) = (uint64_t(*)(void))page;
  uint64_t first = read_tsc();
  uint64_t second = read_tsc();
  check(second > first);
  say("generated code read the time stamp counter twice, increasing\n");
  say_nondet_num("tsc", (long long)first);
  finish();
  return 0;
}

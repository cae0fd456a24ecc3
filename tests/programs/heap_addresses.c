/* Where memory comes from: small and large malloc blocks, an anonymous mmap,
 * a stack local and a global. Addresses are printed with "~ " (ASLR); the
 * checks are on alignment, distinctness and usability. */
#include "test_util.h"

#include <sys/mman.h>

static int global_var = 1;

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  char *small1 = malloc(24);
  char *small2 = malloc(100);
  char *large = malloc(1 << 20);
  char *mm = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int local = 2;
  check(small1 && small2 && large && mm != MAP_FAILED);
  check(((uintptr_t)small1 & 15) == 0 && ((uintptr_t)small2 & 15) == 0 && ((uintptr_t)large & 15) == 0);
  check(((uintptr_t)mm % ps) == 0);
  say("malloc results are 16-byte aligned, mmap result page aligned\n");
  /* Blocks do not overlap. */
  check(small2 >= small1 + 24 || small2 + 100 <= small1);
  check(large + (1 << 20) <= small1 || large >= small2 + 100 || large + (1 << 20) <= small2);
  memset(small1, 1, 24);
  memset(small2, 2, 100);
  memset(large, 3, 1 << 20);
  memset(mm, 4, 3 * ps);
  check(small1[23] == 1 && small2[0] == 2 && large[(1 << 20) - 1] == 3 && mm[3 * ps - 1] == 4);
  say("blocks are distinct and writable\n");
  check((uintptr_t)&local != (uintptr_t)&global_var);

  say_nondet_hex("malloc(24)", (uintptr_t)small1);
  say_nondet_hex("malloc(100)", (uintptr_t)small2);
  say_nondet_hex("malloc(1MiB)", (uintptr_t)large);
  say_nondet_hex("mmap(3 pages)", (uintptr_t)mm);
  say_nondet_hex("stack local", (uintptr_t)&local);
  say_nondet_hex("global", (uintptr_t)&global_var);
  say_nondet_hex("main", (uintptr_t)&main);

  free(small1);
  free(small2);
  free(large);
  check(munmap(mm, 3 * ps) == 0);
  finish();
  return 0;
}

/* Anonymous private mappings: zero-filled, writable, partially unmappable;
 * MAP_FIXED_NOREPLACE maps into the hole at exactly the requested address and
 * refuses (EEXIST) to overlap an existing mapping; MAP_FIXED replaces pages. */
#include "test_util.h"

#include <sys/mman.h>

#define NPAGES 16

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = NPAGES * ps;
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(p != MAP_FAILED);
  check(((uintptr_t)p % ps) == 0);
  for (size_t i = 0; i < len; i++) check(p[i] == 0);
  say("fresh mapping is zero-filled\n");

  unsigned long long sum = 0;
  for (size_t i = 0; i < len; i++) p[i] = (unsigned char)(i * 7 + i / ps);
  for (size_t i = 0; i < len; i++) {
    check(p[i] == (unsigned char)(i * 7 + i / ps));
    sum += p[i];
  }
  say_num("pattern checksum", (long long)sum);

  /* Punch a hole of two pages in the middle. */
  unsigned char *hole = p + 5 * ps;
  check(munmap(hole, 2 * ps) == 0);
  unsigned char *q = mmap(hole, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                          -1, 0);
  check(q == hole);
  for (size_t i = 0; i < 2 * ps; i++) check(q[i] == 0);
  say("MAP_FIXED_NOREPLACE filled the hole at the requested address, zeroed\n");
  /* Neighbours untouched. */
  check(p[5 * ps - 1] == (unsigned char)((5 * ps - 1) * 7 + 4));
  check(p[7 * ps] == (unsigned char)((7 * ps) * 7 + 7));

  errno = 0;
  void *r = mmap(p, ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  check(r == MAP_FAILED && errno == EEXIST);
  say("MAP_FIXED_NOREPLACE over a mapping: EEXIST\n");

  r = mmap(p, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  check(r == p);
  check(p[0] == 0 && p[ps - 1] == 0);
  check(p[ps] == (unsigned char)(ps * 7 + 1));
  say("MAP_FIXED replaced the first page with zeroes\n");

  errno = 0;
  check(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED && errno == EINVAL);
  say("zero-length mmap: EINVAL\n");

  check(munmap(p, len) == 0);
  say_nondet_hex("mapping", (uintptr_t)p);
  finish();
  return 0;
}

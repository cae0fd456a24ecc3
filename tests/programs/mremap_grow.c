/* mremap grows a mapping (moving it if needed, keeping the contents, new
 * pages zeroed), shrinks it, moves it to a fixed address with MREMAP_FIXED,
 * and fails with ENOMEM when it may not move and the next page is taken. */
#include "test_util.h"

#include <sys/mman.h>

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(p != MAP_FAILED);
  for (size_t i = 0; i < ps; i++) p[i] = (unsigned char)(i * 3);

  unsigned char *g = mremap(p, ps, 8 * ps, MREMAP_MAYMOVE);
  check(g != MAP_FAILED);
  for (size_t i = 0; i < ps; i++) check(g[i] == (unsigned char)(i * 3));
  for (size_t i = ps; i < 8 * ps; i++) check(g[i] == 0);
  memset(g + ps, 0x5a, 7 * ps);
  say("grown 1 -> 8 pages: old contents kept, new pages zero\n");

  unsigned char *s = mremap(g, 8 * ps, 2 * ps, 0);
  check(s == g);
  check(s[ps] == 0x5a && s[0] == 0);
  say("shrunk 8 -> 2 pages in place\n");

  /* Reserve a target and move there. */
  unsigned char *target = mmap(NULL, 4 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(target != MAP_FAILED);
  unsigned char *moved = mremap(s, 2 * ps, 4 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  check(moved == target);
  check(moved[1] == 3 && moved[ps + 1] == 0x5a && moved[3 * ps] == 0);
  say("moved to a fixed address with MREMAP_FIXED, contents kept\n");

  /* Growing in place into an occupied page fails. */
  unsigned char *two = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(two != MAP_FAILED);
  check(mprotect(two + ps, ps, PROT_READ) == 0); /* a separate mapping next door */
  errno = 0;
  check(mremap(two, ps, 2 * ps, 0) == MAP_FAILED && errno == ENOMEM);
  say("grow in place over a neighbour without MREMAP_MAYMOVE: ENOMEM\n");

  check(munmap(moved, 4 * ps) == 0);
  check(munmap(two, 2 * ps) == 0);
  say_nondet_hex("first", (uintptr_t)p);
  say_nondet_hex("grown", (uintptr_t)g);
  finish();
  return 0;
}

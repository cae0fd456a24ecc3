/* mremap of a range that was mapped by two mmaps the kernel merged into
 * one mapping: adjacent anonymous mappings, adjacent private mappings of
 * consecutive parts of a file, adjacent shared mappings of a file, and two
 * anonymous mappings merged by an mprotect that made their protections
 * equal. The moved or grown mapping keeps the bytes of both. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>

static size_t ps;

/* Two adjacent mappings, A then B; returns A. */
static unsigned char *two_mappings(int prot_b, int flags, int fd, off_t offset) {
  unsigned char *a = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, flags, fd, offset);
  check(a != MAP_FAILED);
  /* Make room behind A for B, then map B there. */
  check(munmap(a + 2 * ps, 2 * ps) == 0);
  unsigned char *b = mmap(a + 2 * ps, 2 * ps, prot_b, flags | MAP_FIXED, fd,
                          fd < 0 ? 0 : offset + (off_t)(2 * ps));
  check(b == a + 2 * ps);
  return a;
}

static void fill(unsigned char *p, size_t n, unsigned char seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 13);
}

static int same(const unsigned char *p, size_t n, unsigned char seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed + i * 13)) return 0;
  return 1;
}

int main(void) {
  test_init();
  ps = (size_t)sysconf(_SC_PAGESIZE);

  /* Anonymous: grow across both, moving. */
  unsigned char *a = two_mappings(PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  fill(a, 4 * ps, 1);
  unsigned char *g = mremap(a, 4 * ps, 16 * ps, MREMAP_MAYMOVE);
  check(g != MAP_FAILED);
  check(same(g, 4 * ps, 1));
  check(g[15 * ps] == 0);
  say("two merged anonymous mappings grown as one\n");
  check(munmap(g, 16 * ps) == 0);

  /* Merged by mprotect: B starts read-only, then becomes writable. */
  a = two_mappings(PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(mprotect(a + 2 * ps, 2 * ps, PROT_READ | PROT_WRITE) == 0);
  fill(a, 4 * ps, 2);
  unsigned char *spot = mmap(NULL, 4 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(spot != MAP_FAILED);
  g = mremap(a, 4 * ps, 4 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, spot);
  check(g == spot);
  check(same(g, 4 * ps, 2));
  say("two anonymous mappings merged by mprotect moved as one\n");
  check(munmap(g, 4 * ps) == 0);

  char dir[64], path[128];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "file");
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  unsigned char bytes[4096 * 8];
  check(ps * 8 <= sizeof bytes);
  fill(bytes, 8 * ps, 3);
  check(write(fd, bytes, 8 * ps) == (ssize_t)(8 * ps));

  /* Private file mappings of consecutive parts: shrink across both, then
   * move what is left. */
  a = two_mappings(PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)ps);
  check(same(a, 4 * ps, (unsigned char)(3 + ps * 13)));
  a[0] = 0xaa;
  g = mremap(a, 4 * ps, 3 * ps, 0);
  check(g == a);
  spot = mmap(NULL, 3 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(spot != MAP_FAILED);
  g = mremap(a, 3 * ps, 3 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, spot);
  check(g == spot);
  check(g[0] == 0xaa && same(g + 1, 3 * ps - 1, (unsigned char)(3 + (ps + 1) * 13)));
  say("two merged private file mappings shrunk and moved as one\n");
  check(munmap(g, 3 * ps) == 0);


  /* Shared file mappings: grow in place is not possible here (the file
   * ends), move across both; stores still reach the file. */
  a = two_mappings(PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  spot = mmap(NULL, 4 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(spot != MAP_FAILED);
  g = mremap(a, 4 * ps, 4 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, spot);
  check(g == spot);
  check(same(g, 4 * ps, 3));
  g[3 * ps] = 0x55;
  unsigned char c = 0;
  check(pread(fd, &c, 1, (off_t)(3 * ps)) == 1 && c == 0x55);
  say("two merged shared file mappings moved as one; stores reach the file\n");
  check(munmap(g, 4 * ps) == 0);

  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

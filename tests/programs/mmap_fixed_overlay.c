/* MAP_FIXED mappings laid over part of an existing mapping replace just
 * that part: anonymous memory inside a private file mapping, another part
 * of the file inside it, a file inside anonymous memory, and anonymous and
 * file mappings inside a shared file mapping (whose other pages stay
 * shared with the file). A MAP_GROWSDOWN mapping grows when the page below
 * it is touched. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>

static size_t ps;

static unsigned char pattern(size_t offset) { return (unsigned char)(offset * 7 + offset / 4096); }

/* Whether page `page` of mapping `p` holds page `file_page` of the file. */
static int file_page(const unsigned char *p, size_t page, size_t file_page_index) {
  for (size_t i = 0; i < ps; i++)
    if (p[page * ps + i] != pattern(file_page_index * ps + i)) return 0;
  return 1;
}

static int zero_page(const unsigned char *p, size_t page) {
  for (size_t i = 0; i < ps; i++)
    if (p[page * ps + i] != 0) return 0;
  return 1;
}

int main(void) {
  test_init();
  ps = (size_t)sysconf(_SC_PAGESIZE);
  char dir[64], path[128];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "file");
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  unsigned char bytes[8 * 4096];
  check(ps <= 4096);
  for (size_t i = 0; i < 8 * ps; i++) bytes[i] = pattern(i);
  check(write(fd, bytes, 8 * ps) == (ssize_t)(8 * ps));

  /* Private file mapping of pages 0-5, then overlays. */
  unsigned char *p = mmap(NULL, 6 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  check(p != MAP_FAILED);
  p[0] = 0xee; /* a private change before the overlays */
  check(mmap(p + ps, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        p + ps);
  check(mmap(p + 3 * ps, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)(6 * ps)) ==
        p + 3 * ps);
  check(p[0] == 0xee);
  check(zero_page(p, 1) && file_page(p, 2, 2) && file_page(p, 3, 6) && file_page(p, 4, 7) &&
        file_page(p, 5, 5));
  p[ps + 1] = 1;
  say("private file mapping: anonymous and other file pages laid over parts of it\n");

  /* A file mapping inside anonymous memory. */
  unsigned char *a = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(a != MAP_FAILED);
  memset(a, 0x11, 4 * ps);
  check(mmap(a + 2 * ps, ps, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)ps) == a + 2 * ps);
  check(a[0] == 0x11 && a[ps] == 0x11 && file_page(a, 2, 1) && a[3 * ps] == 0x11);
  say("file page laid over anonymous memory\n");

  /* Shared file mapping of pages 0-3 with a private anonymous page and a
   * private file page over pages 1 and 2: stores to pages 0 and 3 still
   * reach the file, those to the overlays do not. */
  unsigned char *s = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  check(s != MAP_FAILED);
  check(mmap(s + ps, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        s + ps);
  check(mmap(s + 2 * ps, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == s + 2 * ps);
  s[0] = 0xa0;
  s[1] = 0xb0;     /* file page 0, before the private page over page 2 is copied: */
  s[ps] = 0xa1;
  s[2 * ps] = 0xa2; /* this store copies file page 0 as it is now */
  s[3 * ps] = 0xa3;
  s[2] = 0xc0;     /* after the copy: the private page does not see it */
  unsigned char c[4] = {0};
  for (int i = 0; i < 4; i++) check(pread(fd, &c[i], 1, (off_t)(i * ps)) == 1);
  check(c[0] == 0xa0 && c[1] == pattern(ps) && c[2] == pattern(2 * ps) && c[3] == 0xa3);
  check(s[2 * ps] == 0xa2 && s[2 * ps + 1] == 0xb0 && s[2 * ps + 2] == pattern(2));
  say("shared file mapping: stores reach the file except through the overlays\n");

  /* A mapping that grows down when the page below it is touched. */
  unsigned char *space = mmap(NULL, 16 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(space != MAP_FAILED);
  check(munmap(space, 16 * ps) == 0);
  volatile unsigned char *down = mmap(space + 12 * ps, 2 * ps, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, -1, 0);
  check(down == space + 12 * ps);
  down[0] = 5;
  down[-1] = 6; /* the page below: the mapping grows */
  check(down[-1] == 6 && down[0] == 5);
  say("MAP_GROWSDOWN mapping grew by a page\n");

  check(munmap(p, 6 * ps) == 0);
  check(munmap(a, 4 * ps) == 0);
  check(munmap(s, 4 * ps) == 0);
  check(munmap(space, 16 * ps) == 0);
  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

/* A file mapped MAP_SHARED: stores through the mapping are seen by read(2)
 * (and after msync), writes through write(2) are seen in the mapping, and a
 * second shared mapping of the same file sees the first one's stores. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "shared.bin");
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(ftruncate(fd, (off_t)(2 * ps)) == 0);

  char *m = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *m2 = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, fd, 0);
  check(m != MAP_FAILED && m2 != MAP_FAILED && m != m2);
  check(m[0] == 0 && m[2 * ps - 1] == 0);
  say("ftruncated file maps as zeroes\n");

  memcpy(m + 10, "through-the-mapping", 19);
  memcpy(m + ps, "second page", 11);
  check(msync(m, 2 * ps, MS_SYNC) == 0);
  char buf[32] = {0};
  check(pread(fd, buf, 19, 10) == 19 && memcmp(buf, "through-the-mapping", 19) == 0);
  check(pread(fd, buf, 11, (off_t)ps) == 11 && memcmp(buf, "second page", 11) == 0);
  say("stores through the mapping are visible to pread\n");
  check(memcmp(m2 + 10, "through-the-mapping", 19) == 0);
  say("a second shared mapping sees them too\n");

  check(pwrite(fd, "via-write", 9, 100) == 9);
  check(memcmp(m + 100, "via-write", 9) == 0);
  check(memcmp(m2 + 100, "via-write", 9) == 0);
  say("pwrite is visible in both mappings\n");

  check(munmap(m, 2 * ps) == 0);
  check(munmap(m2, 2 * ps) == 0);
  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

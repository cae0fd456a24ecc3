/* A file written with write(2) is mapped MAP_PRIVATE: the mapping shows the
 * file's bytes (also at a page offset, and zero past EOF within the last
 * page); stores into the private mapping do not reach the file. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "data.bin");

  size_t size = 2 * ps + 100;
  unsigned char *buf = malloc(size);
  check(buf != NULL);
  for (size_t i = 0; i < size; i++) buf[i] = (unsigned char)(i % 251);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(write(fd, buf, size) == (ssize_t)size);

  unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  check(m != MAP_FAILED);
  check(memcmp(m, buf, size) == 0);
  /* The rest of the last page reads as zero. */
  for (size_t i = size; i < 3 * ps; i++) check(m[i] == 0);
  say_num("mapped bytes match the file", (long long)size);

  unsigned char *off = mmap(NULL, ps, PROT_READ, MAP_PRIVATE, fd, (off_t)ps);
  check(off != MAP_FAILED);
  check(memcmp(off, buf + ps, ps) == 0);
  say("mapping at offset one page matches\n");

  /* Copy-on-write: the file keeps its bytes. */
  memset(m, 0xAB, 64);
  unsigned char back[64];
  check(pread(fd, back, sizeof back, 0) == (ssize_t)sizeof back);
  check(memcmp(back, buf, sizeof back) == 0);
  check(m[0] == 0xAB && m[64] == buf[64]);
  say("private store not visible in the file\n");

  struct stat st;
  check(fstat(fd, &st) == 0 && st.st_size == (off_t)size);
  check(munmap(off, ps) == 0);
  check(munmap(m, size) == 0);
  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  free(buf);
  finish();
  return 0;
}

/* Writes to regular files of every kind, in bursts without another
 * syscall between them (so that the fast path logs them in one batch):
 * write, pwrite, writev, pwritev and O_APPEND writes interleaved with
 * reads at the file position (whose bytes the trace may keep by reference
 * to a copy of the file, which the writes keep changing); stdio's fwrite;
 * a forked child writing the same file; writes through a duplicate of
 * stdout, whose bytes replay must print; and write(2), writev, pwritev
 * and pwrite to a file that is mapped shared (the mapping must see them,
 * in replay too). */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

enum { kBlock = 3000 };

static void fill(char *buf, size_t n, char seed) {
  for (size_t i = 0; i < n; i++) {
    buf[i] = (char)(seed + (char)(i % 23));
  }
}

static unsigned long file_checksum(int fd, off_t *size) {
  static char buf[65536];
  unsigned long sum = 0;
  off_t total = 0;
  ssize_t n;
  while ((n = pread(fd, buf, sizeof buf, total)) > 0) {
    sum = sum * 7 + checksum(0, buf, (size_t)n);
    total += n;
  }
  check(n == 0);
  *size = total;
  return sum;
}

static void interleaved(const char *path) {
  static char a[kBlock], b[kBlock], got[kBlock];
  fill(a, sizeof a, 'a');
  fill(b, sizeof b, 'A');
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0);
  for (int round = 0; round < 50; round++) {
    check(write(fd, a, kBlock) == kBlock);
    check(write(fd, b, kBlock) == kBlock);
    check(lseek(fd, -kBlock, SEEK_CUR) == (off_t)(2 * kBlock * round + kBlock));
    check(read(fd, got, kBlock) == kBlock && memcmp(got, b, kBlock) == 0);
    check(pwrite(fd, "pw", 2, (off_t)(2 * kBlock * round)) == 2);
    check(pread(fd, got, kBlock, (off_t)(2 * kBlock * round)) == kBlock);
    check(got[0] == 'p' && got[1] == 'w' && memcmp(got + 2, a + 2, kBlock - 2) == 0);
  }
  /* Twice each: the first call from a libc site is the one that gets the
   * site patched. */
  struct iovec iov[3] = {{a, 10}, {b, 20}, {a, 30}};
  off_t end = lseek(fd, 0, SEEK_END);
  check(writev(fd, iov, 3) == 60);
  check(writev(fd, iov, 3) == 60);
  check(pwritev(fd, iov, 2, end + 200) == 30);
  check(pwritev(fd, iov, 2, end + 230) == 30);
  check(lseek(fd, 0, SEEK_CUR) == end + 120);
  check(pread(fd, got, 260, end) == 260);
  for (int i = 0; i < 2; i++) {
    const char *v = got + 60 * i;
    check(memcmp(v, a, 10) == 0 && memcmp(v + 10, b, 20) == 0 && memcmp(v + 30, a, 30) == 0);
    const char *p = got + 200 + 30 * i;
    check(memcmp(p, a, 10) == 0 && memcmp(p + 10, b, 20) == 0);
  }
  check(memcmp(got + 120, "\0\0\0\0", 4) == 0);
  off_t size;
  unsigned long sum = file_checksum(fd, &size);
  say_num("interleaved: size", size);
  say_hex("interleaved: checksum", sum);
  check(close(fd) == 0);

  int append = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  check(append >= 0);
  for (int i = 0; i < 100; i++) {
    check(write(append, "appended line\n", 14) == 14);
  }
  check(close(append) == 0);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  sum = file_checksum(fd, &size);
  check(size == end + 260 + 1400);
  say_hex("after 100 appends: checksum", sum);
  check(close(fd) == 0);
}

static void with_stdio(const char *path) {
  static char block[8192];
  FILE *f = fopen(path, "w");
  check(f != NULL);
  for (int i = 0; i < 64; i++) {
    fill(block, sizeof block, (char)('0' + i % 10));
    check(fwrite(block, 1, sizeof block, f) == sizeof block);
  }
  check(fclose(f) == 0);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  off_t size;
  unsigned long sum = file_checksum(fd, &size);
  check(size == 64 * (off_t)sizeof block);
  say_hex("fwrite of 512 KiB: checksum", sum);
  check(close(fd) == 0);
}

static void shared_mapping(const char *path) {
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(ftruncate(fd, (off_t)(2 * ps)) == 0);
  char *m = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, fd, 0);
  check(m != MAP_FAILED);
  check(lseek(fd, 100, SEEK_SET) == 100);
  check(write(fd, "first", 5) == 5);
  check(write(fd, "-second", 7) == 7);
  check(memcmp(m + 100, "first-second", 12) == 0);
  say("write at the position is seen in the shared mapping\n");
  struct iovec iov[2] = {{"vec", 3}, {"tor", 3}};
  check(writev(fd, iov, 2) == 6);
  check(memcmp(m + 112, "vector", 6) == 0);
  check(pwritev(fd, iov, 2, (off_t)ps + 1) == 6);
  check(memcmp(m + ps + 1, "vector", 6) == 0);
  say("writev and pwritev are seen in the shared mapping\n");
  check(pwrite(fd, "positioned", 10, (off_t)ps + 50) == 10);
  check(memcmp(m + ps + 50, "positioned", 10) == 0);
  say("pwrite is seen in the shared mapping\n");
  check(munmap(m, 2 * ps) == 0);
  check(close(fd) == 0);
}

static void through_stdout_copy(void) {
  int copy = fcntl(1, F_DUPFD_CLOEXEC, 20);
  check(copy >= 20);
  for (int i = 0; i < 3; i++) {
    check(write(copy, "line through a copy of stdout\n", 30) == 30);
  }
  struct iovec iov[2] = {{"writev through ", 15}, {"a copy of stdout\n", 17}};
  check(writev(copy, iov, 2) == 32);
  check(close(copy) == 0);
}

static void forked_writer(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    for (int i = 0; i < 200; i++) {
      if (pwrite(fd, "child", 5, (off_t)(10 * i)) != 5) {
        _exit(1);
      }
    }
    _exit(0);
  }
  int status = 0;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int i = 0; i < 200; i++) {
    check(pwrite(fd, "dad", 3, (off_t)(10 * i + 5)) == 3);
  }
  off_t size;
  unsigned long sum = file_checksum(fd, &size);
  check(size == 10 * 199 + 8);
  say_hex("parent and child writes: checksum", sum);
  check(close(fd) == 0);
}

int main(void) {
  test_init();
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "written.bin");
  interleaved(path);
  with_stdio(path);
  forked_writer(path);
  through_stdout_copy();
  shared_mapping(path);  /* last: the process's writes take the slow path from then on */
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

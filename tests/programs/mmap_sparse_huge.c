/* Mappings far larger than what they hold: a 1 GiB sparse file mapped
 * whole (private and shared) and in part at a high offset, a file with a
 * large hole between two written ends, and a 1 GiB memfd (ftruncate)
 * mapped shared with a child. Only a few pages are touched; the rest reads
 * zeros. Recording stores only what the mappings hold, and the memory hash
 * at the child's SIGCHLD reads only what the memfd holds, so it all takes
 * about as long as a small program. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define GIB (1024L * 1024 * 1024)

static unsigned long sum_pages(const volatile unsigned char *p, long length, long step) {
  unsigned long sum = 0;
  for (long i = 0; i < length; i += step) sum += p[i] * (unsigned long)(i / step + 1);
  return sum;
}

int main(void) {
  test_init();
  long ps = sysconf(_SC_PAGESIZE);
  char dir[64], path[128];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "sparse");

  /* 1 GiB sparse file: a few bytes at its start, middle and end. */
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(ftruncate(fd, GIB) == 0);
  check(pwrite(fd, "head", 4, 0) == 4);
  check(pwrite(fd, "middle", 6, GIB / 2 + 100) == 6);
  check(pwrite(fd, "tail", 4, GIB - 4) == 4);

  unsigned char *priv = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  check(priv != MAP_FAILED);
  check(memcmp(priv, "head", 4) == 0 && memcmp(priv + GIB / 2 + 100, "middle", 6) == 0 &&
        memcmp(priv + GIB - 4, "tail", 4) == 0);
  check(priv[GIB / 4] == 0 && priv[3 * GIB / 4 + 5] == 0);
  priv[GIB / 4] = 42; /* private: not in the file */
  say("1 GiB sparse file mapped private: data where written, zeros in the holes\n");

  volatile unsigned char *shared = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  check(shared != MAP_FAILED);
  check(shared[GIB / 4] == 0 && shared[0] == 'h');
  shared[GIB / 8] = 'S';
  char c = 0;
  check(pread(fd, &c, 1, GIB / 8) == 1 && c == 'S');
  say("1 GiB sparse file mapped shared: a store reaches the file\n");

  /* Only one page, far into the file. */
  unsigned char *part = mmap(NULL, (size_t)ps, PROT_READ, MAP_PRIVATE, fd, GIB / 2);
  check(part != MAP_FAILED);
  check(memcmp(part + 100, "middle", 6) == 0 && part[0] == 0);
  say("one page of it mapped at offset 512 MiB\n");
  check(munmap(part, (size_t)ps) == 0);
  check(munmap(priv, GIB) == 0);
  check(munmap((void *)shared, GIB) == 0);
  check(close(fd) == 0);
  check(unlink(path) == 0);

  /* A file with a large hole: written at both ends only, mapped whole,
   * and a mapping that reaches past its end. */
  path_join(path, sizeof path, dir, "holes");
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(pwrite(fd, "start", 5, 0) == 5);
  check(pwrite(fd, "end", 3, 256L * 1024 * 1024) == 3);
  long length = 256L * 1024 * 1024 + 2 * ps;
  unsigned char *holes = mmap(NULL, (size_t)length, PROT_READ, MAP_PRIVATE, fd, 0);
  check(holes != MAP_FAILED);
  check(memcmp(holes, "start", 5) == 0 && memcmp(holes + 256L * 1024 * 1024, "end", 3) == 0);
  check(holes[128L * 1024 * 1024] == 0 && holes[256L * 1024 * 1024 + 3] == 0);
  long long sum = (long long)sum_pages(holes, 256L * 1024 * 1024 + 1, 1024 * 1024);
  say_num("file with a 256 MiB hole: sum of one byte per MiB", sum);
  check(munmap(holes, (size_t)length) == 0);
  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);

  /* A 1 GiB memfd, shared with a child. */
  fd = (int)syscall(SYS_memfd_create, "huge", 1 /* MFD_CLOEXEC */);
  check(fd >= 0);
  check(ftruncate(fd, GIB) == 0);
  volatile unsigned char *mem = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  check(mem != MAP_FAILED);
  mem[0] = 1;
  mem[GIB - 1] = 2;
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    if (mem[0] != 1 || mem[GIB - 1] != 2) _exit(1);
    mem[GIB / 2] = 3;
    _exit(0);
  }
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(mem[GIB / 2] == 3);
  /* A second mapping of a part of it sees the same pages. */
  volatile unsigned char *again = mmap(NULL, (size_t)ps, PROT_READ, MAP_SHARED, fd, GIB / 2);
  check(again != MAP_FAILED && again[0] == 3);
  check(pread(fd, &c, 1, GIB - 1) == 1 && c == 2);
  say("1 GiB memfd mapped shared: parent and child see each other's stores\n");
  check(munmap((void *)again, (size_t)ps) == 0);
  check(munmap((void *)mem, GIB) == 0);
  check(close(fd) == 0);
  finish();
  return 0;
}

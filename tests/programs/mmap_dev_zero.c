/* mmap of /dev/zero: MAP_PRIVATE gives private zero-filled memory (like
 * MAP_ANONYMOUS), MAP_SHARED gives zero-filled memory shared with children
 * forked afterwards. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
  check(fd >= 0);

  unsigned char *priv = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  check(priv != MAP_FAILED);
  int zero = 1;
  for (size_t i = 0; i < 4 * ps; i++) zero &= priv[i] == 0;
  check(zero);
  say("private /dev/zero mapping reads zeros\n");
  for (size_t i = 0; i < 4 * ps; i += 97) priv[i] = (unsigned char)(i * 7);

  /* An offset into /dev/zero is allowed and still reads zeros. */
  unsigned char *at = mmap(NULL, ps, PROT_READ, MAP_PRIVATE, fd, 16 * (off_t)ps);
  check(at != MAP_FAILED);
  check(at[0] == 0 && at[ps - 1] == 0);
  say("private /dev/zero mapping at an offset reads zeros\n");

  volatile long *shared = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  check(shared != MAP_FAILED);
  check(shared[0] == 0 && shared[ps / sizeof(long)] == 0);
  shared[0] = 7;

  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    if (shared[0] != 7) _exit(1);
    for (int i = 1; i <= 50; i++) shared[i] = i * 3;
    priv[0] = 0xee; /* private: the parent must not see it */
    shared[0] = 8;
    _exit(0);
  }
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(shared[0] == 8);
  long sum = 0;
  for (int i = 1; i <= 50; i++) sum += shared[i];
  say_num("parent sees the child's writes to shared /dev/zero memory, sum", sum);
  check(priv[0] == 0);
  say("the child's write to private /dev/zero memory stays its own\n");

  /* Reading /dev/zero after mapping it still works like a read. */
  char buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  check(read(fd, buf, sizeof buf) == (ssize_t)sizeof buf && buf[0] == 0 && buf[7] == 0);

  unsigned sum_priv = 0;
  for (size_t i = 0; i < 4 * ps; i++) sum_priv += priv[i];
  say_num("private sum", sum_priv);
  check(munmap(priv, 4 * ps) == 0);
  check(munmap(at, ps) == 0);
  check(munmap((void *)shared, 2 * ps) == 0);
  check(close(fd) == 0);
  finish();
  return 0;
}

/* A MAP_SHARED anonymous mapping is shared between parent and forked child in
 * both directions, while a MAP_PRIVATE one is copy-on-write after fork. */
#include "test_util.h"

#include <sys/mman.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  volatile long *shared = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  volatile long *priv = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(shared != MAP_FAILED && priv != MAP_FAILED);
  shared[0] = 11; /* written before fork: the child must see it */
  priv[0] = 22;

  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    if (shared[0] != 11 || priv[0] != 22) _exit(1);
    for (int i = 1; i <= 100; i++) shared[i] = i * i;
    priv[0] = 99;
    shared[0] = 12;
    _exit(0);
  }
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  say("child saw the values written before fork\n");
  check(shared[0] == 12);
  long sum = 0;
  for (int i = 1; i <= 100; i++) {
    check(shared[i] == i * i);
    sum += shared[i];
  }
  say_num("parent sees child's shared writes, sum", sum);
  check(priv[0] == 22);
  say("child's MAP_PRIVATE write not visible to parent\n");

  /* And the other direction, in a second child that waits for us. */
  int p[2];
  check(pipe(p) == 0);
  pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char c;
    if (read(p[0], &c, 1) != 1) _exit(2);
    _exit(shared[200] == 4242 ? 0 : 3);
  }
  close(p[0]);
  shared[200] = 4242;
  check(write(p[1], "g", 1) == 1);
  close(p[1]);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  say("child sees parent's shared write made after fork\n");
  check(munmap((void *)shared, ps) == 0);
  check(munmap((void *)priv, ps) == 0);
  finish();
  return 0;
}

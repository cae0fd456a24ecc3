/* fork() three children that exit with distinct codes; the parent reaps one
 * with waitpid(pid) and the rest with wait(), and checks every status. Then
 * waitpid on a non-child fails with ECHILD. */
#include "test_util.h"

#include <sys/wait.h>

int main(void) {
  test_init();
  pid_t pids[3];
  for (int i = 0; i < 3; i++) {
    pids[i] = fork();
    check(pids[i] >= 0);
    if (pids[i] == 0) {
      /* The child has a new pid and its parent is us. */
      _exit(getppid() == getpid() ? 99 : 10 + i);
    }
  }
  int status = 0;
  check(waitpid(pids[1], &status, 0) == pids[1]);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 11);
  say("waitpid(child 1): exited 11\n");

  int got[3] = {0, 0, 0};
  got[1] = 1;
  for (int n = 0; n < 2; n++) {
    pid_t p = wait(&status);
    check(p > 0);
    int idx = p == pids[0] ? 0 : p == pids[2] ? 2 : -1;
    check(idx >= 0 && !got[idx]);
    got[idx] = 1;
    check(WIFEXITED(status) && WEXITSTATUS(status) == 10 + idx);
  }
  say("wait() reaped child 0 (exited 10) and child 2 (exited 12)\n");
  errno = 0;
  check(wait(&status) == -1 && errno == ECHILD);
  say("wait() with no children: ECHILD\n");
  errno = 0;
  check(waitpid(1, &status, WNOHANG) == -1 && errno == ECHILD);
  say("waitpid(1): ECHILD\n");
  say_nondet_num("child 0 pid", pids[0]);
  finish();
  return 0;
}

/* Job control seen through waitpid: a child stopped by SIGSTOP is reported
 * with WUNTRACED (WIFSTOPPED), resumed by SIGCONT is reported with WCONTINUED
 * (WIFCONTINUED), and then exits normally. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  int go[2];
  check(pipe(go) == 0);
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(go[1]);
    raise(SIGSTOP);
    /* Resumed: wait for the parent's go-ahead, then exit. */
    char c;
    check(read(go[0], &c, 1) == 1);
    _exit(9);
  }
  close(go[0]);
  int status;
  check(waitpid(pid, &status, WUNTRACED) == pid);
  check(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
  say("child stopped by SIGSTOP\n");

  check(kill(pid, SIGCONT) == 0);
  check(waitpid(pid, &status, WCONTINUED) == pid);
  check(WIFCONTINUED(status));
  say("child continued by SIGCONT\n");

  check(write(go[1], "g", 1) == 1);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 9);
  say_num("child exited", WEXITSTATUS(status));
  finish();
  return 0;
}

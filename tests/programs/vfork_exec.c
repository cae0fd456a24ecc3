/* vfork() then execve(): the parent stays suspended until the child execs
 * (it sees the child's last store) and then reaps the exec'd program's exit
 * status. Also a vfork child whose execve fails and _exits. */
#include "test_util.h"

#include <sys/wait.h>

extern char **environ;

static volatile int child_reached_exec;

static int run(const char *path) {
  child_reached_exec = 0;
  pid_t pid = vfork();
  check(pid >= 0);
  if (pid == 0) {
    char *argv[] = {(char *)path, NULL};
    child_reached_exec = 1; /* shares our memory until execve */
    execve(path, argv, environ);
    _exit(127);
  }
  /* vfork guarantees the child has exec'd or exited by now. */
  check(child_reached_exec == 1);
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status));
  return WEXITSTATUS(status);
}

int main(void) {
  test_init();
  int rc = run("/bin/true");
  check(rc == 0);
  say_num("/bin/true exited", rc);
  rc = run("/bin/false");
  check(rc == 1);
  say_num("/bin/false exited", rc);
  rc = run("/nonexistent/program");
  check(rc == 127);
  say_num("failed execve child exited", rc);
  finish();
  return 0;
}

/* Children end in different ways; waitpid() statuses are decoded with
 * WIFEXITED/WEXITSTATUS and WIFSIGNALED/WTERMSIG, and waitid() reports the
 * same through siginfo (CLD_EXITED / CLD_KILLED). */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

enum how { EXIT0, EXIT3, EXIT255, KILL_TERM, KILL_KILL, KILL_USR1 };

static pid_t spawn(enum how h) {
  pid_t pid = fork();
  check(pid >= 0);
  if (pid != 0) return pid;
  switch (h) {
    case EXIT0: _exit(0);
    case EXIT3: _exit(3);
    case EXIT255: _exit(255);
    case KILL_TERM: raise(SIGTERM); break;
    case KILL_KILL: kill(getpid(), SIGKILL); break;
    case KILL_USR1: raise(SIGUSR1); break;
  }
  _exit(100); /* the signal should have killed us */
}

static void report(const char *what, int status) {
  struct line l;
  line_init(&l);
  line_str(&l, what);
  line_str(&l, ": ");
  if (WIFEXITED(status)) {
    line_str(&l, "exited ");
    line_num(&l, WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    line_str(&l, "killed by signal ");
    line_num(&l, WTERMSIG(status));
  } else {
    line_str(&l, "other");
  }
  line_say(&l);
}

int main(void) {
  test_init();
  int status;
  pid_t pid;

  pid = spawn(EXIT0);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && !WIFSIGNALED(status) && WEXITSTATUS(status) == 0);
  report("_exit(0)", status);

  pid = spawn(EXIT3);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  report("_exit(3)", status);

  pid = spawn(EXIT255);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 255);
  report("_exit(255)", status);

  pid = spawn(KILL_TERM);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFSIGNALED(status) && !WIFEXITED(status) && WTERMSIG(status) == SIGTERM);
  report("raise(SIGTERM)", status);

  pid = spawn(KILL_KILL);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  report("kill(self, SIGKILL)", status);

  /* waitid reports the same through siginfo. */
  pid = spawn(KILL_USR1);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  check(waitid(P_PID, (id_t)pid, &si, WEXITED) == 0);
  check(si.si_pid == pid && si.si_signo == SIGCHLD);
  check(si.si_code == CLD_KILLED && si.si_status == SIGUSR1);
  say("waitid after raise(SIGUSR1): CLD_KILLED status SIGUSR1\n");

  pid = spawn(EXIT3);
  memset(&si, 0, sizeof si);
  check(waitid(P_PID, (id_t)pid, &si, WEXITED) == 0);
  check(si.si_code == CLD_EXITED && si.si_status == 3);
  say("waitid after _exit(3): CLD_EXITED status 3\n");

  /* WNOHANG with a live child returns 0. */
  int p[2];
  check(pipe(p) == 0);
  pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char c;
    read(p[0], &c, 1); /* until the parent closes its end */
    _exit(5);
  }
  close(p[0]);
  check(waitpid(pid, &status, WNOHANG) == 0);
  say("waitpid(WNOHANG) on a live child: 0\n");
  close(p[1]);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 5);
  report("child released by pipe EOF", status);
  finish();
  return 0;
}

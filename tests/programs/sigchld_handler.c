/* A SA_SIGINFO SIGCHLD handler sees each child's exit: si_code CLD_EXITED,
 * si_pid and si_status. SIGCHLD is blocked around fork and the parent waits
 * for the handler with sigsuspend before reaping, so each line is
 * deterministic. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t handled;
static volatile pid_t last_pid;
static volatile int last_code, last_status;

static void on_sigchld(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  check(sig == SIGCHLD);
  last_pid = si->si_pid;
  last_code = si->si_code;
  last_status = si->si_status;
  handled++;
}

int main(void) {
  test_init();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigchld;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGCHLD, &sa, NULL) == 0);

  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGCHLD);
  check(sigprocmask(SIG_BLOCK, &block, &old) == 0);
  sigset_t waitmask = old;
  sigdelset(&waitmask, SIGCHLD);

  for (int i = 1; i <= 3; i++) {
    int before = handled;
    pid_t pid = fork();
    check(pid >= 0);
    if (pid == 0) _exit(20 + i);
    for (int tries = 0; handled == before; tries++) {
      check(tries < 100);
      sigsuspend(&waitmask); /* returns -1/EINTR after the handler ran */
    }
    check(handled == before + 1);
    check(last_pid == pid);
    check(last_code == CLD_EXITED);
    check(last_status == 20 + i);
    int status;
    check(waitpid(pid, &status, 0) == pid);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 20 + i);
    struct line l;
    line_init(&l);
    line_str(&l, "SIGCHLD for child ");
    line_num(&l, i);
    line_str(&l, ": CLD_EXITED status ");
    line_num(&l, last_status);
    line_say(&l);
  }
  check(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
  say_num("handler calls", handled);
  finish();
  return 0;
}

/* A forked child sends SIGUSR1 to its parent. The parent keeps SIGUSR1
 * blocked until it waits in sigsuspend(), so the handler runs exactly there;
 * si_pid names the child. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

static volatile int got;
static volatile pid_t sender;
static volatile int code;

static void on_usr1(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  sender = si->si_pid;
  code = si->si_code;
  got++;
}

int main(void) {
  test_init();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_usr1;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGUSR1, &sa, NULL) == 0);

  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  check(sigprocmask(SIG_BLOCK, &block, &old) == 0);

  pid_t parent = getpid();
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    check(getppid() == parent);
    check(kill(parent, SIGUSR1) == 0);
    _exit(0);
  }
  sigset_t waitmask = old;
  sigdelset(&waitmask, SIGUSR1);
  for (int tries = 0; got == 0; tries++) {
    check(tries < 100); /* other signals (SIGCHLD is ignored by default) do not wake us */
    int r = sigsuspend(&waitmask);
    check(r == -1 && errno == EINTR);
  }
  check(got == 1);
  check(sender == pid);
  check(code == SI_USER);
  say("parent got SIGUSR1 from the child in sigsuspend (SI_USER)\n");

  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
  say("child exited 0\n");
  finish();
  return 0;
}

/* kill(getpid(), SIGUSR1), tgkill and raise() with a handler installed: for a
 * single-threaded process with the signal unblocked, the handler has run by
 * the time the call returns. si_code and si_pid identify the sender. */
#include "test_util.h"

#include <signal.h>

static volatile int calls;
static volatile int last_code;
static volatile pid_t last_pid;

static void on_usr1(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  check(sig == SIGUSR1);
  last_code = si->si_code;
  last_pid = si->si_pid;
  calls++;
}

int main(void) {
  test_init();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_usr1;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGUSR1, &sa, NULL) == 0);

  for (int i = 1; i <= 3; i++) {
    check(kill(getpid(), SIGUSR1) == 0);
    check(calls == i); /* delivered before kill() returned */
    check(last_code == SI_USER);
    check(last_pid == getpid());
  }
  say("kill(getpid(), SIGUSR1) x3: handler ran before each kill returned, SI_USER\n");

  check(syscall(SYS_tgkill, getpid(), tu_gettid(), SIGUSR1) == 0);
  check(calls == 4);
  check(last_code == SI_TKILL);
  say("tgkill(self): handler ran, SI_TKILL\n");

  check(raise(SIGUSR1) == 0);
  check(calls == 5);
  say_num("handler calls", calls);

  /* Signal 0 only checks that we may signal the target. */
  check(kill(getpid(), 0) == 0);
  check(calls == 5);
  say("kill(getpid(), 0): no signal delivered\n");
  finish();
  return 0;
}

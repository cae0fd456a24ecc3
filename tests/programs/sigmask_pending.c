/* A blocked signal stays pending (sigpending shows it) and its handler runs
 * when it is unblocked, before sigprocmask returns. A standard signal raised
 * twice while blocked is delivered once; a real-time one is queued twice. */
#include "test_util.h"

#include <signal.h>

static volatile int usr1_calls, rt_calls;

static void on_usr1(int sig) {
  (void)sig;
  usr1_calls++;
}

static void on_rt(int sig) {
  (void)sig;
  rt_calls++;
}

static int is_pending(int sig) {
  sigset_t p;
  check(sigpending(&p) == 0);
  return sigismember(&p, sig);
}

int main(void) {
  test_init();
  set_handler(SIGUSR1, on_usr1, 0);
  set_handler(SIGRTMIN, on_rt, 0);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGRTMIN);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
  check(!is_pending(SIGUSR1));

  check(raise(SIGUSR1) == 0);
  check(raise(SIGUSR1) == 0);
  check(raise(SIGRTMIN) == 0);
  check(raise(SIGRTMIN) == 0);
  check(usr1_calls == 0 && rt_calls == 0);
  check(is_pending(SIGUSR1));
  check(is_pending(SIGRTMIN));
  check(!is_pending(SIGUSR2));
  say("blocked: handlers not run, SIGUSR1 and SIGRTMIN pending\n");

  check(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
  check(usr1_calls == 1);
  check(rt_calls == 2);
  check(!is_pending(SIGUSR1));
  check(!is_pending(SIGRTMIN));
  say_num("SIGUSR1 handler calls after unblock", usr1_calls);
  say_num("SIGRTMIN handler calls after unblock", rt_calls);

  /* SIGKILL and SIGSTOP cannot be blocked: sigprocmask silently drops them. */
  sigset_t kill_set, cur;
  sigemptyset(&kill_set);
  sigaddset(&kill_set, SIGKILL);
  sigaddset(&kill_set, SIGSTOP);
  check(sigprocmask(SIG_BLOCK, &kill_set, &cur) == 0);
  check(sigprocmask(SIG_BLOCK, NULL, &cur) == 0);
  check(!sigismember(&cur, SIGKILL) && !sigismember(&cur, SIGSTOP));
  say("SIGKILL/SIGSTOP not blockable\n");
  finish();
  return 0;
}

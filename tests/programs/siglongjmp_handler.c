/* A signal handler leaves with siglongjmp. With sigsetjmp(env, 1) the signal
 * mask saved at sigsetjmp is restored (the handled signal is unblocked again);
 * with sigsetjmp(env, 0) it is not (the signal stays blocked, as it was during
 * the handler). */
#include "test_util.h"

#include <setjmp.h>
#include <signal.h>

static sigjmp_buf env;
static volatile int jumps;

static void on_usr1(int sig) {
  (void)sig;
  jumps++;
  siglongjmp(env, jumps);
}

static int usr1_blocked(void) {
  sigset_t cur;
  check(sigprocmask(SIG_BLOCK, NULL, &cur) == 0);
  return sigismember(&cur, SIGUSR1);
}

int main(void) {
  test_init();
  set_handler(SIGUSR1, on_usr1, 0);

  volatile int reached_after_raise = 0;
  int r = sigsetjmp(env, 1);
  if (r == 0) {
    raise(SIGUSR1);
    reached_after_raise = 1;
  }
  check(r == 1);
  check(!reached_after_raise);
  check(!usr1_blocked());
  say("sigsetjmp(env, 1): came back with 1, SIGUSR1 unblocked again\n");

  r = sigsetjmp(env, 0);
  if (r == 0) {
    raise(SIGUSR1);
    reached_after_raise = 1;
  }
  check(r == 2);
  check(!reached_after_raise);
  check(usr1_blocked());
  say("sigsetjmp(env, 0): came back with 2, SIGUSR1 still blocked\n");

  /* While blocked, a new SIGUSR1 stays pending; unblocking delivers it. */
  r = sigsetjmp(env, 1);
  if (r == 0) {
    check(raise(SIGUSR1) == 0);
    check(jumps == 2);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL); /* handler jumps from here */
    check(!"handler did not run on unblock");
  }
  check(r == 3);
  /* The mask saved by this sigsetjmp had SIGUSR1 blocked. */
  check(usr1_blocked());
  say("pending SIGUSR1 delivered on unblock, jump restored the blocked mask\n");
  say_num("jumps", jumps);
  finish();
  return 0;
}

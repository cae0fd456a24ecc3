/* Integer division by zero (and INT_MIN / -1) raises SIGFPE with si_code
 * FPE_INTDIV; the handler leaves with siglongjmp since returning would re-run
 * the faulting division. */
#include "test_util.h"

#include <limits.h>
#include <setjmp.h>
#include <signal.h>

static sigjmp_buf env;
static volatile int fpe_count;
static volatile int fpe_code;
static volatile int fpe_addr_set;

static void on_fpe(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  check(sig == SIGFPE);
  fpe_count++;
  fpe_code = si->si_code;
  fpe_addr_set = si->si_addr != NULL;
  siglongjmp(env, 1);
}

/* Operands go through volatile globals and a non-inlined function so the
 * compiler cannot fold (or drop, as undefined behaviour) the division. */
static volatile int num, den;

static __attribute__((noinline)) int divide(int a, int b) {
  num = a;
  den = b;
  return num / den;
}

int main(void) {
  test_init();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fpe;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGFPE, &sa, NULL) == 0);

  volatile int result = -1;
  if (sigsetjmp(env, 1) == 0) {
    result = divide(10, 0);
    check(!"division by zero did not trap");
  }
  check(fpe_count == 1);
  check(fpe_code == FPE_INTDIV);
  check(fpe_addr_set);
  check(result == -1);
  say("10 / 0: SIGFPE FPE_INTDIV\n");

  if (sigsetjmp(env, 1) == 0) {
    result = divide(INT_MIN, -1);
    check(!"INT_MIN / -1 did not trap");
  }
  check(fpe_count == 2);
  check(fpe_code == FPE_INTDIV);
  say("INT_MIN / -1: SIGFPE FPE_INTDIV\n");

  /* SIGFPE is unblocked again (the mask was saved by sigsetjmp). */
  sigset_t cur;
  check(sigprocmask(SIG_BLOCK, NULL, &cur) == 0);
  check(!sigismember(&cur, SIGFPE));
  result = divide(10, 3);
  check(result == 3);
  say_num("10 / 3", result);
  say_num("SIGFPE count", fpe_count);
  finish();
  return 0;
}

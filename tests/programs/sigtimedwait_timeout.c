/* sigtimedwait: with nothing pending it times out with EAGAIN after about the
 * timeout; with a pending blocked signal it returns at once with its number
 * and siginfo; sigwaitinfo picks up a signal queued earlier. */
#include "test_util.h"

#include <signal.h>

int main(void) {
  test_init();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);

  struct timespec to = {0, 15 * 1000000};
  siginfo_t si;
  long long t0 = now_ns();
  errno = 0;
  check(sigtimedwait(&set, &si, &to) == -1 && errno == EAGAIN);
  check(now_ns() - t0 >= 10 * 1000000ll);
  say("nothing pending: EAGAIN after the 15 ms timeout\n");

  check(kill(getpid(), SIGUSR2) == 0);
  memset(&si, 0, sizeof si);
  check(sigtimedwait(&set, &si, &to) == SIGUSR2);
  check(si.si_signo == SIGUSR2 && si.si_code == SI_USER && si.si_pid == getpid());
  say("pending SIGUSR2: returned at once with SI_USER\n");

  union sigval v = {.sival_int = 99};
  check(sigqueue(getpid(), SIGUSR1, v) == 0);
  memset(&si, 0, sizeof si);
  check(sigwaitinfo(&set, &si) == SIGUSR1);
  check(si.si_code == SI_QUEUE && si.si_value.sival_int == 99);
  say("sigwaitinfo: SIGUSR1 with value 99\n");

  struct timespec zero = {0, 0};
  errno = 0;
  check(sigtimedwait(&set, &si, &zero) == -1 && errno == EAGAIN);
  say("zero timeout, nothing pending: EAGAIN\n");
  finish();
  return 0;
}

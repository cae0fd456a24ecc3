/* A blocked signal is read as a struct signalfd_siginfo from a signalfd
 * (ssi_signo, ssi_code, ssi_pid, ssi_int for sigqueue); with nothing pending
 * a non-blocking signalfd read fails with EAGAIN. */
#include "test_util.h"

#include <signal.h>
#include <sys/signalfd.h>

int main(void) {
  test_init();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGRTMIN);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
  int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  check(fd >= 0);

  struct signalfd_siginfo si;
  errno = 0;
  check(read(fd, &si, sizeof si) == -1 && errno == EAGAIN);
  say("nothing pending: EAGAIN\n");

  check(kill(getpid(), SIGUSR1) == 0);
  union sigval v = {.sival_int = 77};
  check(sigqueue(getpid(), SIGRTMIN, v) == 0);

  memset(&si, 0, sizeof si);
  check(read(fd, &si, sizeof si) == sizeof si);
  check(si.ssi_signo == SIGUSR1);
  check(si.ssi_code == SI_USER);
  check(si.ssi_pid == (uint32_t)getpid());
  say("read SIGUSR1 (SI_USER, our pid)\n");

  memset(&si, 0, sizeof si);
  check(read(fd, &si, sizeof si) == sizeof si);
  check(si.ssi_signo == (uint32_t)SIGRTMIN);
  check(si.ssi_code == SI_QUEUE);
  check(si.ssi_int == 77);
  say_num("read SIGRTMIN with value", si.ssi_int);

  errno = 0;
  check(read(fd, &si, sizeof si) == -1 && errno == EAGAIN);
  sigset_t pending;
  check(sigpending(&pending) == 0);
  check(!sigismember(&pending, SIGUSR1) && !sigismember(&pending, SIGRTMIN));
  say("all consumed: EAGAIN, nothing pending\n");
  /* A buffer smaller than one record is refused. */
  check(kill(getpid(), SIGUSR1) == 0);
  char small[8];
  errno = 0;
  check(read(fd, small, sizeof small) == -1 && errno == EINVAL);
  say("short buffer: EINVAL\n");
  check(close(fd) == 0);
  finish();
  return 0;
}

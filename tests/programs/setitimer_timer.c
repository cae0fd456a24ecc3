/* setitimer(ITIMER_REAL) with a 10 ms interval delivers SIGALRM periodically;
 * the program sleeps in short nanosleeps (interrupted by the ticks) until it
 * has counted 5 ticks, then disarms the timer and checks getitimer.
 * (No alarm() safety net here: alarm shares ITIMER_REAL. The wait is bounded
 * by an iteration limit instead.) */
#include "test_util.h"

#include <signal.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
  (void)sig;
  ticks++;
}

int main(void) {
  set_handler(SIGALRM, on_alarm, 0);

  struct itimerval it = {{0, 10000}, {0, 10000}};
  check(setitimer(ITIMER_REAL, &it, NULL) == 0);
  struct itimerval cur;
  check(getitimer(ITIMER_REAL, &cur) == 0);
  check(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_usec == 10000);

  long long start = now_ns();
  int sleeps = 0, interrupted = 0;
  while (ticks < 5) {
    check(++sleeps < 2000); /* 2000 x 2 ms: far beyond 5 ticks of 10 ms */
    struct timespec ts = {0, 2 * 1000000};
    if (nanosleep(&ts, NULL) == -1) {
      check(errno == EINTR);
      interrupted++;
    }
  }
  long long elapsed = now_ns() - start;
  struct itimerval off = {{0, 0}, {0, 0}};
  check(setitimer(ITIMER_REAL, &off, NULL) == 0);
  int final_ticks = ticks;
  check(getitimer(ITIMER_REAL, &cur) == 0);
  check(cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);
  /* 5 ticks of 10 ms each cannot take less than ~40 ms. */
  check(elapsed >= 40 * 1000000ll);
  check(final_ticks >= 5);
  say("counted at least 5 SIGALRM ticks\n");
  say("timer disarmed\n");
  say_nondet_num("ticks", final_ticks);
  say_nondet_num("sleeps", sleeps);
  say_nondet_num("interrupted sleeps", interrupted);
  say_nondet_num("elapsed ms", elapsed / 1000000);
  finish();
  return 0;
}

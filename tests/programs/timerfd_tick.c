/* A periodic CLOCK_MONOTONIC timerfd (10 ms): blocking reads return the
 * number of expirations (at least 1 each) until 3 have accumulated;
 * timerfd_gettime shows the interval; after disarming, a non-blocking read
 * gives EAGAIN. Also an absolute one-shot timer in the past fires at once. */
#include "test_util.h"

#include <sys/timerfd.h>

int main(void) {
  test_init();
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  check(fd >= 0);
  struct itimerspec its = {{0, 10 * 1000000}, {0, 10 * 1000000}};
  long long t0 = now_ns();
  check(timerfd_settime(fd, 0, &its, NULL) == 0);
  struct itimerspec cur;
  check(timerfd_gettime(fd, &cur) == 0);
  check(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_nsec == 10 * 1000000);
  say("armed: 10 ms interval\n");

  uint64_t total = 0;
  int reads = 0;
  while (total < 3) {
    check(++reads <= 3);
    uint64_t n = 0;
    check(read(fd, &n, sizeof n) == sizeof n);
    check(n >= 1);
    total += n;
  }
  long long elapsed = now_ns() - t0;
  check(elapsed >= 25 * 1000000ll);
  say("blocking reads accumulated at least 3 expirations\n");
  say_nondet_num("expirations", (long long)total);
  say_nondet_num("reads", reads);
  say_nondet_num("elapsed ms", elapsed / 1000000);

  struct itimerspec off = {{0, 0}, {0, 0}};
  check(timerfd_settime(fd, 0, &off, NULL) == 0);
  check(timerfd_gettime(fd, &cur) == 0);
  check(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);
  close(fd);

  fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  check(fd >= 0);
  uint64_t n;
  errno = 0;
  check(read(fd, &n, sizeof n) == -1 && errno == EAGAIN);
  say("disarmed: EAGAIN\n");

  struct timespec now;
  check(clock_gettime(CLOCK_MONOTONIC, &now) == 0);
  struct itimerspec past = {{0, 0}, {now.tv_sec > 1 ? now.tv_sec - 1 : 0, 1}};
  check(timerfd_settime(fd, TFD_TIMER_ABSTIME, &past, NULL) == 0);
  n = 0;
  check(read(fd, &n, sizeof n) == sizeof n && n == 1);
  say("absolute one-shot in the past: fired once\n");
  close(fd);
  finish();
  return 0;
}

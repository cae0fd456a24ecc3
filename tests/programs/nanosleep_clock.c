/* Sleeping: nanosleep and clock_nanosleep (relative and TIMER_ABSTIME) sleep
 * at least as long as asked, measured on CLOCK_MONOTONIC; invalid arguments
 * give EINVAL. Measured durations are printed with "~ ". */
#include "test_util.h"

int main(void) {
  test_init();
  long long t0 = now_ns();
  struct timespec req = {0, 10 * 1000000};
  check(nanosleep(&req, NULL) == 0);
  long long t1 = now_ns();
  check(t1 - t0 >= 10 * 1000000ll);
  say("nanosleep(10 ms): slept at least 10 ms\n");

  req.tv_nsec = 5 * 1000000;
  check(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == 0);
  long long t2 = now_ns();
  check(t2 - t1 >= 5 * 1000000ll);
  say("clock_nanosleep(relative 5 ms): slept at least 5 ms\n");

  struct timespec deadline;
  check(clock_gettime(CLOCK_MONOTONIC, &deadline) == 0);
  long long target = (long long)deadline.tv_sec * 1000000000ll + deadline.tv_nsec + 8 * 1000000ll;
  deadline.tv_sec = target / 1000000000ll;
  deadline.tv_nsec = target % 1000000000ll;
  check(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == 0);
  long long t3 = now_ns();
  check(t3 >= target);
  say("clock_nanosleep(TIMER_ABSTIME): woke after the deadline\n");

  /* A deadline in the past returns at once. */
  deadline.tv_sec = 0;
  deadline.tv_nsec = 0;
  check(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == 0);
  say("deadline in the past: returned at once\n");

  struct timespec bad = {0, 1000000000};
  errno = 0;
  check(nanosleep(&bad, NULL) == -1 && errno == EINVAL);
  /* clock_nanosleep returns the error number instead of setting errno. */
  check(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL) == EINVAL);
  check(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL) == EINVAL);
  say("tv_nsec = 1e9 or a thread CPU clock: EINVAL\n");
  say_nondet_num("nanosleep us", (t1 - t0) / 1000);
  say_nondet_num("relative us", (t2 - t1) / 1000);
  say_nondet_num("absolute us", (t3 - t2) / 1000);
  finish();
  return 0;
}

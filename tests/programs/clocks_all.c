/* clock_gettime on every common clock (REALTIME, MONOTONIC, BOOTTIME,
 * PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID, REALTIME_COARSE, MONOTONIC_COARSE,
 * MONOTONIC_RAW): values are printed with "~ "; the monotonic clocks and the
 * CPU clocks never go backwards across some work; clock_getres works; an
 * invalid clock id gives EINVAL. */
#include "test_util.h"

struct clk {
  clockid_t id;
  const char *name;
  int monotonic;
};

static const struct clk clocks[] = {
    {CLOCK_REALTIME, "CLOCK_REALTIME", 0},
    {CLOCK_MONOTONIC, "CLOCK_MONOTONIC", 1},
    {CLOCK_BOOTTIME, "CLOCK_BOOTTIME", 1},
    {CLOCK_PROCESS_CPUTIME_ID, "CLOCK_PROCESS_CPUTIME_ID", 1},
    {CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID", 1},
    {CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE", 0},
    {CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE", 1},
    {CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW", 1},
};

static long long ts_ns(const struct timespec *ts) { return (long long)ts->tv_sec * 1000000000ll + ts->tv_nsec; }

int main(void) {
  test_init();
  long long first[ARRAY_SIZE(clocks)];
  for (size_t i = 0; i < ARRAY_SIZE(clocks); i++) {
    struct timespec ts;
    check(clock_gettime(clocks[i].id, &ts) == 0);
    check(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
    first[i] = ts_ns(&ts);
  }
  /* Burn some CPU so the CPU-time clocks advance too. */
  volatile unsigned long x = 0;
  for (unsigned long k = 0; k < 2000000; k++) x += k;
  (void)x;
  for (size_t i = 0; i < ARRAY_SIZE(clocks); i++) {
    struct timespec ts, res;
    check(clock_gettime(clocks[i].id, &ts) == 0);
    long long second = ts_ns(&ts);
    if (clocks[i].monotonic) check(second >= first[i]);
    check(second > 0);
    check(clock_getres(clocks[i].id, &res) == 0);
    check(ts_ns(&res) > 0);
    struct line l;
    line_init(&l);
    line_str(&l, clocks[i].name);
    line_str(&l, clocks[i].monotonic ? ": ok, did not go backwards" : ": ok");
    line_say(&l);
    line_init(&l);
    line_str(&l, clocks[i].name);
    line_str(&l, " first=");
    line_num(&l, first[i]);
    line_str(&l, " second=");
    line_num(&l, second);
    line_str(&l, " res=");
    line_num(&l, ts_ns(&res));
    line_say_nondet(&l);
  }
  /* The CPU clocks really advanced across the loop. */
  struct timespec ts;
  check(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0);
  check(ts_ns(&ts) > first[3]);
  say("process CPU time advanced across the busy loop\n");
  errno = 0;
  check(clock_gettime((clockid_t)1000, &ts) == -1 && errno == EINVAL);
  say("clock id 1000: EINVAL\n");
  finish();
  return 0;
}

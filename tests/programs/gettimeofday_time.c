/* gettimeofday() and time(): both report the wall clock, agree with each
 * other and with CLOCK_REALTIME to within a couple of seconds, tv_usec is in
 * range, and time(&t) stores what it returns. Values are printed with "~ ". */
#include "test_util.h"

#include <sys/time.h>

int main(void) {
  test_init();
  struct timeval tv1, tv2;
  check(gettimeofday(&tv1, NULL) == 0);
  time_t t_ret, t_stored = 0;
  t_ret = time(&t_stored);
  check(t_ret != (time_t)-1 && t_ret == t_stored);
  struct timespec rt;
  check(clock_gettime(CLOCK_REALTIME, &rt) == 0);
  check(gettimeofday(&tv2, NULL) == 0);

  check(tv1.tv_usec >= 0 && tv1.tv_usec < 1000000);
  check(tv2.tv_usec >= 0 && tv2.tv_usec < 1000000);
  /* After 2020-01-01: the clock is set. */
  check(tv1.tv_sec > 1577836800);
  check(t_ret >= tv1.tv_sec - 1 && t_ret <= tv2.tv_sec + 1);
  check(rt.tv_sec >= tv1.tv_sec - 1 && rt.tv_sec <= tv2.tv_sec + 1);
  long long d = ((long long)tv2.tv_sec - tv1.tv_sec) * 1000000 + (tv2.tv_usec - tv1.tv_usec);
  check(d >= -2000000 && d < 2000000);
  say("gettimeofday, time and CLOCK_REALTIME agree within a second\n");

  /* The raw syscalls, bypassing the vDSO. */
  struct timeval tv3;
  check(syscall(SYS_gettimeofday, &tv3, NULL) == 0);
  check(tv3.tv_sec >= tv1.tv_sec - 1);
  long raw_t = syscall(SYS_time, NULL);
  check(raw_t >= tv1.tv_sec - 1);
  say("raw gettimeofday and time syscalls agree\n");

  struct line l;
  line_init(&l);
  line_str(&l, "gettimeofday=");
  line_num(&l, tv1.tv_sec);
  line_char(&l, '.');
  line_num(&l, tv1.tv_usec);
  line_str(&l, " time=");
  line_num(&l, t_ret);
  line_str(&l, " raw=");
  line_num(&l, raw_t);
  line_say_nondet(&l);
  finish();
  return 0;
}

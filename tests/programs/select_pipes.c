/* select() over pipes: only fds with data stay set in the read set, write
 * ends are writable; with nothing ready the timeout expires, select returns 0
 * and Linux updates the timeval; a closed fd gives EBADF. */
#include "test_util.h"

#include <sys/select.h>

int main(void) {
  test_init();
  int a[2], b[2], c[2];
  check(pipe(a) == 0 && pipe(b) == 0 && pipe(c) == 0);
  int maxfd = a[0];
  int all[] = {a[0], a[1], b[0], b[1], c[0], c[1]};
  for (size_t i = 0; i < ARRAY_SIZE(all); i++)
    if (all[i] > maxfd) maxfd = all[i];

  check(write(b[1], "data", 4) == 4);
  fd_set rd, wr;
  FD_ZERO(&rd);
  FD_ZERO(&wr);
  FD_SET(a[0], &rd);
  FD_SET(b[0], &rd);
  FD_SET(c[0], &rd);
  FD_SET(c[1], &wr);
  struct timeval tv = {1, 0};
  int n = select(maxfd + 1, &rd, &wr, NULL, &tv);
  check(n == 2);
  check(!FD_ISSET(a[0], &rd) && FD_ISSET(b[0], &rd) && !FD_ISSET(c[0], &rd));
  check(FD_ISSET(c[1], &wr));
  say("read set: only the pipe with data; write set: the write end\n");

  char buf[8];
  check(read(b[0], buf, sizeof buf) == 4);
  FD_ZERO(&rd);
  FD_SET(a[0], &rd);
  FD_SET(b[0], &rd);
  tv.tv_sec = 0;
  tv.tv_usec = 20000;
  long long t0 = now_ns();
  n = select(maxfd + 1, &rd, NULL, NULL, &tv);
  check(n == 0);
  check(now_ns() - t0 >= 15 * 1000000ll);
  check(!FD_ISSET(a[0], &rd) && !FD_ISSET(b[0], &rd));
  check(tv.tv_sec == 0 && tv.tv_usec == 0);
  say("20 ms timeout: 0 ready, timeval updated to 0\n");

  int bad = c[0];
  close(c[0]);
  FD_ZERO(&rd);
  FD_SET(bad, &rd);
  tv.tv_sec = 1;
  tv.tv_usec = 0;
  errno = 0;
  check(select(bad + 1, &rd, NULL, NULL, &tv) == -1 && errno == EBADF);
  say("closed fd in the set: EBADF\n");
  close(a[0]);
  close(a[1]);
  close(b[0]);
  close(b[1]);
  close(c[1]);
  finish();
  return 0;
}

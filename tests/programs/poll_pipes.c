/* poll() over pipes: readable pipes get POLLIN, an empty one nothing, a
 * closed writer gives POLLHUP, a closed descriptor POLLNVAL, write ends are
 * POLLOUT; a timeout with nothing ready returns 0. */
#include "test_util.h"

#include <poll.h>

int main(void) {
  test_init();
  int a[2], b[2], c[2];
  check(pipe(a) == 0 && pipe(b) == 0 && pipe(c) == 0);
  check(write(b[1], "x", 1) == 1);
  check(close(c[1]) == 0);
  int closed_fd = dup(a[0]);
  check(closed_fd >= 0 && close(closed_fd) == 0);

  struct pollfd fds[5] = {
      {.fd = a[0], .events = POLLIN},  {.fd = b[0], .events = POLLIN}, {.fd = c[0], .events = POLLIN},
      {.fd = closed_fd, .events = POLLIN}, {.fd = a[1], .events = POLLOUT},
  };
  int n = poll(fds, 5, 1000);
  check(n == 4);
  check(fds[0].revents == 0);
  check(fds[1].revents == POLLIN);
  check(fds[2].revents & POLLHUP);
  check(fds[3].revents == POLLNVAL);
  check(fds[4].revents == POLLOUT);
  say("empty: none; data: POLLIN; closed writer: POLLHUP; bad fd: POLLNVAL; write end: POLLOUT\n");

  /* Negative fds are ignored. */
  fds[3].fd = -1;
  fds[4].fd = -1;
  char ch;
  check(read(b[0], &ch, 1) == 1);
  close(c[0]);
  fds[2].fd = -1;
  long long t0 = now_ns();
  n = poll(fds, 5, 20);
  check(n == 0);
  check(now_ns() - t0 >= 15 * 1000000ll);
  say("20 ms timeout with nothing ready: 0\n");

  check(write(a[1], "y", 1) == 1);
  n = poll(fds, 2, 0);
  check(n == 1 && fds[0].revents == POLLIN && fds[1].revents == 0);
  say("after write to first pipe: 1 ready\n");
  close(a[0]);
  close(a[1]);
  close(b[0]);
  close(b[1]);
  finish();
  return 0;
}

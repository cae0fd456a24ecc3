/* epoll over three pipes: only the pipes with data are reported, with the
 * user data we registered; level-triggered readiness repeats until drained,
 * edge-triggered reports once per new write; EPOLLHUP after the writer
 * closes; a zero timeout with nothing ready returns 0. */
#include "test_util.h"

#include <sys/epoll.h>

#define NPIPES 3

static int pipes[NPIPES][2];

static int wait_ready(int ep, int timeout_ms, int *mask_out, uint32_t *events_out) {
  struct epoll_event evs[8];
  int n = epoll_wait(ep, evs, 8, timeout_ms);
  check(n >= 0);
  int mask = 0;
  for (int i = 0; i < n; i++) {
    check(evs[i].data.u32 < NPIPES);
    mask |= 1 << evs[i].data.u32;
    if (events_out) events_out[evs[i].data.u32] = evs[i].events;
  }
  *mask_out = mask;
  return n;
}

int main(void) {
  test_init();
  int ep = epoll_create1(EPOLL_CLOEXEC);
  check(ep >= 0);
  for (int i = 0; i < NPIPES; i++) {
    check(pipe(pipes[i]) == 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (i == 2) ev.events |= EPOLLET;
    check(epoll_ctl(ep, EPOLL_CTL_ADD, pipes[i][0], &ev) == 0);
  }
  int mask;
  check(wait_ready(ep, 0, &mask, NULL) == 0);
  say("nothing written: 0 ready\n");

  check(write(pipes[0][1], "ab", 2) == 2);
  check(write(pipes[2][1], "cd", 2) == 2);
  check(wait_ready(ep, 1000, &mask, NULL) == 2);
  check(mask == 0x5);
  say("wrote to pipes 0 and 2: pipes 0 and 2 ready\n");

  /* Read one byte from each: level-triggered pipe 0 stays ready, the
   * edge-triggered pipe 2 is not reported again without a new write. */
  char c;
  check(read(pipes[0][0], &c, 1) == 1 && c == 'a');
  check(read(pipes[2][0], &c, 1) == 1 && c == 'c');
  check(wait_ready(ep, 0, &mask, NULL) == 1);
  check(mask == 0x1);
  say("after partial reads: level-triggered pipe 0 still ready, edge-triggered pipe 2 not\n");

  check(write(pipes[2][1], "e", 1) == 1);
  check(wait_ready(ep, 1000, &mask, NULL) == 2);
  check(mask == 0x5);
  say("new write re-arms the edge-triggered pipe\n");

  check(read(pipes[0][0], &c, 1) == 1 && c == 'b');
  char buf[8];
  check(read(pipes[2][0], buf, sizeof buf) == 2);
  check(wait_ready(ep, 0, &mask, NULL) == 0);
  say("drained: 0 ready\n");

  check(close(pipes[1][1]) == 0);
  uint32_t events[NPIPES] = {0};
  check(wait_ready(ep, 1000, &mask, events) == 1);
  check(mask == 0x2 && (events[1] & EPOLLHUP));
  say("writer of pipe 1 closed: EPOLLHUP\n");

  check(epoll_ctl(ep, EPOLL_CTL_DEL, pipes[1][0], NULL) == 0);
  errno = 0;
  check(epoll_ctl(ep, EPOLL_CTL_DEL, pipes[1][0], NULL) == -1 && errno == ENOENT);
  say("second EPOLL_CTL_DEL: ENOENT\n");
  long long t0 = now_ns();
  check(wait_ready(ep, 20, &mask, NULL) == 0);
  check(now_ns() - t0 >= 15 * 1000000ll);
  say("20 ms timeout with nothing ready: 0\n");
  close(ep);
  finish();
  return 0;
}

/* AF_UNIX socketpairs: a SOCK_STREAM pair carries requests to a helper thread
 * and replies back; a SOCK_DGRAM pair keeps message boundaries; shutdown of
 * one side gives EOF on the other. */
#include "test_util.h"

#include <pthread.h>
#include <sys/socket.h>

static void *echo_server(void *arg) {
  int fd = *(int *)arg;
  for (;;) {
    char buf[128];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    check(n > 0);
    for (ssize_t i = 0; i < n; i++) buf[i] = (char)(buf[i] + 1);
    check(send(fd, buf, (size_t)n, 0) == n);
  }
  close(fd);
  return NULL;
}

int main(void) {
  test_init();
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  pthread_t t;
  check(pthread_create(&t, NULL, echo_server, &sv[1]) == 0);
  const char *reqs[] = {"HAL", "abc", "0123"};
  for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
    size_t len = strlen(reqs[i]);
    check(send(sv[0], reqs[i], len, 0) == (ssize_t)len);
    char buf[16] = {0};
    size_t got = 0;
    while (got < len) {
      ssize_t n = recv(sv[0], buf + got, len - got, 0);
      check(n > 0);
      got += (size_t)n;
    }
    struct line l;
    line_init(&l);
    line_str(&l, reqs[i]);
    line_str(&l, " -> ");
    line_str(&l, buf);
    line_say(&l);
  }
  check(shutdown(sv[0], SHUT_WR) == 0);
  check(pthread_join(t, NULL) == 0);
  char c;
  check(recv(sv[0], &c, 1, 0) == 0);
  say("server saw EOF after shutdown, we see EOF after its close\n");
  close(sv[0]);

  int dg[2];
  check(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) == 0);
  check(send(dg[0], "one", 3, 0) == 3);
  check(send(dg[0], "three", 5, 0) == 5);
  char buf[64];
  check(recv(dg[1], buf, sizeof buf, 0) == 3 && memcmp(buf, "one", 3) == 0);
  check(recv(dg[1], buf, sizeof buf, 0) == 5 && memcmp(buf, "three", 5) == 0);
  errno = 0;
  check(recv(dg[1], buf, sizeof buf, MSG_DONTWAIT) == -1 && errno == EAGAIN);
  say("SOCK_DGRAM pair: 2 datagrams of 3 and 5 bytes, then EAGAIN\n");
  close(dg[0]);
  close(dg[1]);
  finish();
  return 0;
}

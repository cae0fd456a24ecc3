/* TCP over 127.0.0.1 with an ephemeral port: a server thread accepts one
 * connection and echoes 64 KiB back; the client checks every byte, the
 * addresses seen by both sides, and EOF after the server closes. */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>

#define TOTAL (64 * 1024)

static int listen_fd;
static struct sockaddr_in server_peer; /* the client address seen by accept */

static void *server(void *arg) {
  (void)arg;
  socklen_t len = sizeof server_peer;
  int c = accept4(listen_fd, (struct sockaddr *)&server_peer, &len, SOCK_CLOEXEC);
  check(c >= 0);
  char buf[8192];
  long echoed = 0;
  for (;;) {
    ssize_t n = recv(c, buf, sizeof buf, 0);
    if (n == 0) break;
    check(n > 0);
    ssize_t off = 0;
    while (off < n) {
      ssize_t w = send(c, buf + off, (size_t)(n - off), 0);
      check(w > 0);
      off += w;
    }
    echoed += n;
  }
  check(echoed == TOTAL);
  close(c);
  return NULL;
}

int main(void) {
  test_init();
  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(listen_fd >= 0);
  int one = 1;
  check(setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  check(bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) == 0);
  socklen_t alen = sizeof addr;
  check(getsockname(listen_fd, (struct sockaddr *)&addr, &alen) == 0);
  check(addr.sin_port != 0);
  check(listen(listen_fd, 4) == 0);
  pthread_t t;
  check(pthread_create(&t, NULL, server, NULL) == 0);

  int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(c >= 0);
  struct timeval tv = {10, 0};
  check(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
  check(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
  check(connect(c, (struct sockaddr *)&addr, sizeof addr) == 0);
  struct sockaddr_in peer, me;
  alen = sizeof peer;
  check(getpeername(c, (struct sockaddr *)&peer, &alen) == 0);
  check(peer.sin_port == addr.sin_port && peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
  alen = sizeof me;
  check(getsockname(c, (struct sockaddr *)&me, &alen) == 0);
  say("connected to 127.0.0.1:<ephemeral>\n");

  static unsigned char out[TOTAL], in[TOTAL];
  for (int i = 0; i < TOTAL; i++) out[i] = (unsigned char)(i * 31 + (i >> 8));
  /* Send in chunks and read the echo as we go, so neither side's buffers fill. */
  long sent = 0, got = 0;
  while (got < TOTAL) {
    if (sent < TOTAL) {
      size_t chunk = TOTAL - sent < 8192 ? (size_t)(TOTAL - sent) : 8192;
      ssize_t w = send(c, out + sent, chunk, 0);
      check(w > 0);
      sent += w;
    }
    while (got < sent) {
      ssize_t n = recv(c, in + got, (size_t)(TOTAL - got), 0);
      check(n > 0);
      got += n;
    }
  }
  check(memcmp(in, out, TOTAL) == 0);
  say_num("echoed bytes", got);
  check(shutdown(c, SHUT_WR) == 0);
  char x;
  check(recv(c, &x, 1, 0) == 0);
  say("EOF after server closed\n");
  check(pthread_join(t, NULL) == 0);
  check(server_peer.sin_port == me.sin_port);
  check(server_peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
  say("server saw our address and port\n");
  close(c);
  close(listen_fd);
  say_nondet_num("server port", ntohs(addr.sin_port));
  say_nondet_num("client port", ntohs(me.sin_port));
  finish();
  return 0;
}

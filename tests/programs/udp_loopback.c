/* UDP over 127.0.0.1: datagrams keep their boundaries and arrive with the
 * sender's address; a datagram larger than the buffer is truncated and
 * recvmsg reports MSG_TRUNC; connect() filters other senders. */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int bound_socket(struct sockaddr_in *addr) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  check(fd >= 0);
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check(bind(fd, (struct sockaddr *)addr, sizeof *addr) == 0);
  socklen_t len = sizeof *addr;
  check(getsockname(fd, (struct sockaddr *)addr, &len) == 0);
  check(addr->sin_port != 0);
  struct timeval tv = {5, 0};
  check(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
  return fd;
}

int main(void) {
  test_init();
  struct sockaddr_in a_addr, b_addr, c_addr;
  int a = bound_socket(&a_addr);
  int b = bound_socket(&b_addr);
  int c = bound_socket(&c_addr);

  const char *msgs[] = {"ping", "a somewhat longer datagram", "!"};
  for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
    size_t len = strlen(msgs[i]);
    check(sendto(a, msgs[i], len, 0, (struct sockaddr *)&b_addr, sizeof b_addr) == (ssize_t)len);
  }
  for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
    char buf[128];
    struct sockaddr_in from;
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(b, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
    check(n == (ssize_t)strlen(msgs[i]));
    check(memcmp(buf, msgs[i], (size_t)n) == 0);
    check(from.sin_port == a_addr.sin_port && from.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    say_num("datagram bytes", n);
  }
  say("each datagram came from the sender's address\n");

  /* Truncation. */
  char big[100];
  memset(big, 'q', sizeof big);
  check(sendto(a, big, sizeof big, 0, (struct sockaddr *)&b_addr, sizeof b_addr) == sizeof big);
  char small[10];
  struct iovec iov = {small, sizeof small};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  ssize_t n = recvmsg(b, &mh, 0);
  check(n == sizeof small);
  check(mh.msg_flags & MSG_TRUNC);
  say("100-byte datagram into 10 bytes: MSG_TRUNC\n");

  /* A connected UDP socket only receives from its peer. */
  check(connect(b, (struct sockaddr *)&a_addr, sizeof a_addr) == 0);
  check(sendto(c, "from c", 6, 0, (struct sockaddr *)&b_addr, sizeof b_addr) == 6);
  check(sendto(a, "from a", 6, 0, (struct sockaddr *)&b_addr, sizeof b_addr) == 6);
  char buf[16];
  n = recv(b, buf, sizeof buf, 0);
  check(n == 6 && memcmp(buf, "from a", 6) == 0);
  errno = 0;
  check(recv(b, buf, sizeof buf, MSG_DONTWAIT) == -1 && errno == EAGAIN);
  say("connected socket: only the peer's datagram arrived\n");
  close(a);
  close(b);
  close(c);
  finish();
  return 0;
}

/* Socket calls that cannot block, which the fast path takes, beside ones
 * that can, which it leaves alone: read, write, send and recv on
 * non-blocking stream sockets (data, EAGAIN when empty, MSG_PEEK); send
 * with MSG_DONTWAIT on a blocking socket until its buffer is full
 * (EAGAIN), then drained the same way; a datagram cut short with
 * MSG_TRUNC; a thread blocked in read on a blocking socket, woken by
 * writes to the other end; and TCP over loopback with non-blocking
 * sockets; poll and epoll_wait with a zero timeout; sendmsg, passing a
 * descriptor along too. Prints checksums and
 * what each part saw, the same on every run. */
#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Waits until `fd` is readable (poll, which may block: the slow path). */
static void wait_readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  check(poll(&p, 1, 5000) == 1);
}

static void stream_pair(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  char buf[4096], got[4096];
  errno = 0;
  check(read(sv[1], got, sizeof got) == -1 && errno == EAGAIN);
  errno = 0;
  check(recv(sv[1], got, sizeof got, 0) == -1 && errno == EAGAIN);
  unsigned long sum = 0;
  for (int round = 0; round < 200; round++) {
    fill_letters(buf, 1000, (unsigned)round);
    check(write(sv[0], buf, 1000) == 1000);
    check(send(sv[0], buf, 500, 0) == 500);
    check(recv(sv[1], got, 10, MSG_PEEK) == 10 && memcmp(got, buf, 10) == 0);
    check(read(sv[1], got, 1000) == 1000 && memcmp(got, buf, 1000) == 0);
    check(recv(sv[1], got, sizeof got, 0) == 500 && memcmp(got, buf, 500) == 0);
    sum = checksum(sum, got, 500);
  }
  say_hex("non-blocking stream pair: checksum", sum);
  check(close(sv[0]) == 0);
  errno = 0;
  check(read(sv[1], got, sizeof got) == 0);
  say("read after the peer closed: end of file\n");
  check(close(sv[1]) == 0);
}

static void dontwait_until_full(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  int small = 4096;
  check(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
  char buf[1024];
  fill_letters(buf, sizeof buf, 3);
  long sent = 0;
  for (;;) {
    ssize_t n = send(sv[0], buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      check(errno == EAGAIN || errno == EWOULDBLOCK);
      break;
    }
    sent += n;
    check(sent < (1 << 24));
  }
  check(sent > 0);
  long received = 0;
  char got[1024];
  for (;;) {
    ssize_t n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
    if (n < 0) {
      check(errno == EAGAIN);
      break;
    }
    received += n;
  }
  check(received == sent);
  say("MSG_DONTWAIT filled a blocking socket until EAGAIN and drained it\n");
  check(close(sv[0]) == 0 && close(sv[1]) == 0);
}

static void truncated_datagram(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  char buf[300];
  fill_letters(buf, sizeof buf, 11);
  check(send(sv[0], buf, sizeof buf, 0) == (ssize_t)sizeof buf);
  char got[100];
  check(recv(sv[1], got, sizeof got, MSG_TRUNC) == (ssize_t)sizeof buf);
  check(memcmp(got, buf, sizeof got) == 0);
  errno = 0;
  check(recv(sv[1], got, sizeof got, 0) == -1 && errno == EAGAIN);
  say("MSG_TRUNC: a 300-byte datagram read into 100 bytes says 300\n");
  check(close(sv[0]) == 0 && close(sv[1]) == 0);
}

struct echo {
  int fd;
  int rounds;
};

/* Blocks in read on a blocking socket (the slow path) and answers each
 * message with send(MSG_DONTWAIT). */
static void *echo_main(void *arg) {
  struct echo *e = arg;
  char buf[64];
  for (int i = 0; i < e->rounds; i++) {
    ssize_t n = read(e->fd, buf, sizeof buf);
    if (n <= 0 || send(e->fd, buf, (size_t)n, MSG_DONTWAIT) != n) {
      return (void *)1;
    }
  }
  return NULL;
}

static void woken_reader(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  check(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK) == 0);
  struct echo e = {sv[1], 100};
  pthread_t thread;
  check(pthread_create(&thread, NULL, echo_main, &e) == 0);
  unsigned long sum = 0;
  for (int i = 0; i < e.rounds; i++) {
    char msg[32], got[32];
    size_t n = (size_t)(8 + i % 20);
    fill_letters(msg, n, (unsigned)i);
    check(write(sv[0], msg, n) == (ssize_t)n);
    wait_readable(sv[0]);
    check(read(sv[0], got, sizeof got) == (ssize_t)n && memcmp(got, msg, n) == 0);
    sum = checksum(sum, got, n);
  }
  void *result;
  check(pthread_join(thread, &result) == 0 && result == NULL);
  say_hex("100 messages echoed by a thread blocked in read: checksum", sum);
  check(close(sv[0]) == 0 && close(sv[1]) == 0);
}

static void tcp_loopback(void) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(listener >= 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check(bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0);
  socklen_t len = sizeof addr;
  check(getsockname(listener, (struct sockaddr *)&addr, &len) == 0);
  check(listen(listener, 1) == 0);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(client >= 0);
  check(connect(client, (struct sockaddr *)&addr, sizeof addr) == 0);
  int server = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  check(server >= 0);
  check(fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK) == 0);
  char buf[2000], got[2000];
  unsigned long sum = 0;
  for (int i = 0; i < 50; i++) {
    fill_letters(buf, sizeof buf, (unsigned)i);
    check(send(client, buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    size_t have = 0;
    while (have < sizeof buf) {
      wait_readable(server);
      ssize_t n = recv(server, got + have, sizeof got - have, 0);
      check(n > 0);
      have += (size_t)n;
    }
    check(memcmp(got, buf, sizeof buf) == 0);
    sum = checksum(sum, got, sizeof got);
  }
  say_hex("TCP over loopback, non-blocking: checksum", sum);
  check(close(client) == 0 && close(server) == 0 && close(listener) == 0);
}

/* poll and epoll_wait with a zero timeout, which never wait: three times
 * each way (the first call from a libc site gets it patched). */
static void zero_timeouts(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  check(ep >= 0);
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  ev.data.u64 = 0x1234567890ull;
  check(epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev) == 0);
  struct pollfd p = {sv[1], POLLIN, 0};
  struct epoll_event out[4];
  for (int i = 0; i < 3; i++) {
    check(poll(&p, 1, 0) == 0 && p.revents == 0);
    check(epoll_wait(ep, out, 4, 0) == 0);
  }
  check(write(sv[0], "x", 1) == 1);
  for (int i = 0; i < 3; i++) {
    p.revents = 0;
    check(poll(&p, 1, 0) == 1 && (p.revents & POLLIN));
    memset(out, 0, sizeof out);
    check(epoll_wait(ep, out, 4, 0) == 1);
    check(out[0].data.u64 == 0x1234567890ull && (out[0].events & EPOLLIN));
  }
  char c;
  check(read(sv[1], &c, 1) == 1 && c == 'x');
  check(epoll_wait(ep, out, 4, 0) == 0);
  say("poll and epoll_wait with a zero timeout: nothing, then the one readable socket\n");
  check(close(ep) == 0 && close(sv[0]) == 0 && close(sv[1]) == 0);
}

/* sendmsg on a non-blocking socket: two iovecs per message, then one
 * that passes a descriptor along (SCM_RIGHTS), read back with recvmsg. */
static void message_sends(void) {
  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  unsigned long sum = 0;
  for (int i = 0; i < 50; i++) {
    char head[8], body[24];
    fill_letters(head, sizeof head, (unsigned)i);
    fill_letters(body, sizeof body, (unsigned)i + 100);
    struct iovec iov[2] = {{head, sizeof head}, {body, sizeof body}};
    struct msghdr mh = {0};
    mh.msg_iov = iov;
    mh.msg_iovlen = 2;
    check(sendmsg(sv[0], &mh, 0) == 32);
    char got[32];
    check(recv(sv[1], got, sizeof got, 0) == 32);
    check(memcmp(got, head, 8) == 0 && memcmp(got + 8, body, 24) == 0);
    sum = checksum(sum, got, sizeof got);
  }
  int passed = dup(sv[0]);
  check(passed >= 0);
  char byte = 'f';
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr mh = {0};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof control.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &passed, sizeof passed);
  check(sendmsg(sv[0], &mh, MSG_DONTWAIT) == 1);
  check(close(passed) == 0);
  char got_byte = 0;
  struct iovec in = {&got_byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } received;
  struct msghdr rh = {0};
  rh.msg_iov = &in;
  rh.msg_iovlen = 1;
  rh.msg_control = received.buf;
  rh.msg_controllen = sizeof received.buf;
  check(recvmsg(sv[1], &rh, MSG_CMSG_CLOEXEC) == 1 && got_byte == 'f');
  struct cmsghdr *r = CMSG_FIRSTHDR(&rh);
  check(r != NULL && r->cmsg_type == SCM_RIGHTS);
  int fd;
  memcpy(&fd, CMSG_DATA(r), sizeof fd);
  check(fcntl(fd, F_GETFL) >= 0 && close(fd) == 0);
  say_hex("50 sendmsg of two iovecs, and a descriptor passed along: checksum", sum);
  check(close(sv[0]) == 0 && close(sv[1]) == 0);
}

int main(void) {
  test_init();
  stream_pair();
  dontwait_until_full();
  truncated_datagram();
  woken_reader();
  tcp_loopback();
  zero_timeouts();
  message_sends();
  finish();
  return 0;
}

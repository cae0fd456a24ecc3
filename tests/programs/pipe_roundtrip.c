/* Messages go parent -> child -> parent through two pipes (the child
 * upper-cases them); closing the write end gives EOF; a full non-blocking pipe
 * returns EAGAIN; pipe2(O_CLOEXEC) sets FD_CLOEXEC. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/wait.h>

static const char *const messages[] = {"hello", "record and replay", "x", "last message"};

static ssize_t read_exact(int fd, char *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

int main(void) {
  test_init();
  int to_child[2], to_parent[2];
  check(pipe2(to_child, O_CLOEXEC) == 0);
  check(pipe2(to_parent, O_CLOEXEC) == 0);
  check(fcntl(to_child[0], F_GETFD) == FD_CLOEXEC);

  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    for (;;) {
      unsigned char len;
      ssize_t n = read_exact(to_child[0], (char *)&len, 1);
      if (n == 0) break; /* EOF: parent closed */
      check(n == 1);
      char buf[256];
      check(read_exact(to_child[0], buf, len) == len);
      for (int i = 0; i < len; i++)
        if (buf[i] >= 'a' && buf[i] <= 'z') buf[i] = (char)(buf[i] - 'a' + 'A');
      check(write(to_parent[1], &len, 1) == 1);
      check(write(to_parent[1], buf, len) == len);
    }
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
  for (size_t m = 0; m < ARRAY_SIZE(messages); m++) {
    unsigned char len = (unsigned char)strlen(messages[m]);
    check(write(to_child[1], &len, 1) == 1);
    check(write(to_child[1], messages[m], len) == len);
    unsigned char rlen;
    char buf[257];
    check(read_exact(to_parent[0], (char *)&rlen, 1) == 1);
    check(rlen == len);
    check(read_exact(to_parent[0], buf, rlen) == rlen);
    buf[rlen] = 0;
    struct line l;
    line_init(&l);
    line_str(&l, "sent '");
    line_str(&l, messages[m]);
    line_str(&l, "' got '");
    line_str(&l, buf);
    line_str(&l, "'");
    line_say(&l);
  }
  close(to_child[1]);
  char c;
  check(read(to_parent[0], &c, 1) == 0);
  say("EOF after the child exited\n");
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(to_parent[0]);

  /* Fill a non-blocking pipe. */
  int p[2];
  check(pipe2(p, O_NONBLOCK) == 0);
  char chunk[4096];
  memset(chunk, 'z', sizeof chunk);
  long total = 0;
  for (int i = 0; i < 1024; i++) {
    ssize_t n = write(p[1], chunk, sizeof chunk);
    if (n < 0) {
      check(errno == EAGAIN);
      break;
    }
    total += n;
  }
  check(total > 0 && total < 1024l * 4096);
  int cap = fcntl(p[1], F_GETPIPE_SZ);
  check(cap > 0 && total <= cap);
  say("full non-blocking pipe: EAGAIN\n");
  say_nondet_num("pipe capacity", cap);
  close(p[0]);
  close(p[1]);
  finish();
  return 0;
}

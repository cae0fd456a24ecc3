/* A chain of three forked processes connected by pipes: the parent sends a
 * number into the first pipe, each child reads it, transforms it and passes it
 * on, and the parent reads the final value from the last pipe. */
#include "test_util.h"

#include <sys/wait.h>

#define STAGES 3

static int read_full(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

int main(void) {
  test_init();
  int pipes[STAGES + 1][2];
  for (int i = 0; i <= STAGES; i++) check(pipe(pipes[i]) == 0);
  pid_t pids[STAGES];
  for (int s = 0; s < STAGES; s++) {
    pids[s] = fork();
    check(pids[s] >= 0);
    if (pids[s] == 0) {
      /* Keep only our input (pipe s) and output (pipe s+1). */
      for (int i = 0; i <= STAGES; i++) {
        if (i != s) close(pipes[i][0]);
        if (i != s + 1) close(pipes[i][1]);
      }
      long v;
      check(read_full(pipes[s][0], &v, sizeof v) == 0);
      v = v * 10 + (s + 1);
      check(write(pipes[s + 1][1], &v, sizeof v) == sizeof v);
      /* The upstream writer closed: EOF. */
      char extra;
      check(read(pipes[s][0], &extra, 1) == 0);
      _exit(0);
    }
  }
  for (int i = 0; i <= STAGES; i++) {
    if (i != STAGES) close(pipes[i][0]);
    if (i != 0) close(pipes[i][1]);
  }
  long v = 7;
  check(write(pipes[0][1], &v, sizeof v) == sizeof v);
  close(pipes[0][1]);
  long result = 0;
  check(read_full(pipes[STAGES][0], &result, sizeof result) == 0);
  check(result == 7123);
  for (int s = 0; s < STAGES; s++) {
    int status;
    check(waitpid(pids[s], &status, 0) == pids[s]);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  char extra;
  check(read(pipes[STAGES][0], &extra, 1) == 0);
  say_num("sent", 7);
  say_num("received", result);
  finish();
  return 0;
}

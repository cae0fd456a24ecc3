/* Writing to a pipe whose read end is closed: with SIGPIPE ignored the write
 * fails with EPIPE; with a handler the handler runs and the write fails with
 * EPIPE; with the default action a child is killed by SIGPIPE. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

static volatile int sigpipe_calls;

static void on_pipe(int sig) {
  (void)sig;
  sigpipe_calls++;
}

static int broken_pipe(void) {
  int p[2];
  check(pipe(p) == 0);
  check(close(p[0]) == 0);
  return p[1];
}

int main(void) {
  test_init();
  set_handler(SIGPIPE, SIG_IGN, 0);
  int w = broken_pipe();
  errno = 0;
  check(write(w, "x", 1) == -1 && errno == EPIPE);
  close(w);
  say("SIG_IGN: write -> EPIPE\n");

  set_handler(SIGPIPE, on_pipe, 0);
  w = broken_pipe();
  errno = 0;
  check(write(w, "xy", 2) == -1 && errno == EPIPE);
  check(sigpipe_calls == 1);
  close(w);
  say("handler: handler ran once, write -> EPIPE\n");

  set_handler(SIGPIPE, SIG_DFL, 0);
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    w = broken_pipe();
    write(w, "z", 1);
    _exit(0); /* not reached */
  }
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE);
  say("SIG_DFL: child killed by SIGPIPE\n");
  finish();
  return 0;
}

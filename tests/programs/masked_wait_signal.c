/* pselect6, ppoll and epoll_pwait with a signal mask, as event loops use
 * them (make, for one): SIGUSR1 stays blocked except while the program
 * waits, a child sends it, and the wait ends with EINTR after the handler
 * ran. The handler sees the wait's mask (SIGUSR2 blocked, SIGUSR1 blocked
 * by delivery itself); afterwards the old mask is back. */
#include "test_util.h"

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>

static volatile sig_atomic_t handled;
static volatile sig_atomic_t usr2_blocked_in_handler;

static void on_usr1(int sig) {
  (void)sig;
  sigset_t now;
  sigprocmask(SIG_SETMASK, NULL, &now);
  usr2_blocked_in_handler = sigismember(&now, SIGUSR2);
  handled++;
}

static void send_usr1_from_child(void) {
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    check(kill(getppid(), SIGUSR1) == 0);
    _exit(0);
  }
  int status;
  /* The signal stays pending (blocked) until the wait below. */
  check(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
}

static void check_after(const char *name, int before) {
  check(handled == before + 1);
  check(usr2_blocked_in_handler == 1);
  sigset_t now;
  check(sigprocmask(SIG_SETMASK, NULL, &now) == 0);
  check(sigismember(&now, SIGUSR1) == 1 && sigismember(&now, SIGUSR2) == 0);
  say(name);
  say(": EINTR after the handler ran under the wait's mask; old mask back\n");
}

int main(void) {
  test_init();
  set_handler(SIGUSR1, on_usr1, 0);

  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  check(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0);
  sigset_t wait_mask; /* SIGUSR1 let through, SIGUSR2 blocked */
  sigemptyset(&wait_mask);
  sigaddset(&wait_mask, SIGUSR2);

  int p[2];
  check(pipe(p) == 0); /* never written: only the signal ends the waits */

  int before = handled;
  send_usr1_from_child();
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(p[0], &readable);
  errno = 0;
  check(pselect(p[0] + 1, &readable, NULL, NULL, NULL, &wait_mask) == -1 && errno == EINTR);
  check_after("pselect", before);

  before = handled;
  send_usr1_from_child();
  struct pollfd pfd = {.fd = p[0], .events = POLLIN};
  errno = 0;
  check(ppoll(&pfd, 1, NULL, &wait_mask) == -1 && errno == EINTR);
  check_after("ppoll", before);

  before = handled;
  send_usr1_from_child();
  int ep = epoll_create1(EPOLL_CLOEXEC);
  check(ep >= 0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]};
  check(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
  struct epoll_event out;
  errno = 0;
  check(epoll_pwait(ep, &out, 1, -1, &wait_mask) == -1 && errno == EINTR);
  check_after("epoll_pwait", before);

  /* Nothing pending: a timeout ends the wait, the mask never mattered. */
  struct timespec short_wait = {0, 1000000};
  check(pselect(p[0] + 1, &readable, NULL, NULL, &short_wait, &wait_mask) == 0);
  say("pselect with nothing pending: timeout\n");
  finish();
  return 0;
}

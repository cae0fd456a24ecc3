/* Blocked signals that are pending when a process calls execve stay
 * pending in the new image, and so does the signal mask. A child blocks
 * SIGUSR1, SIGTSTP (a stop signal) and SIGRTMIN, raises them (SIGRTMIN twice,
 * with values) and execs this program again; the new image finds them
 * pending, installs handlers and unblocks them: they run in signal number
 * order the kernel picks (printed), the real-time ones FIFO with their values. A second child blocks
 * SIGUSR2 and SIGTSTP and execs while its parent sends it both: whenever
 * they land (before, during or after the exec), the new image takes them
 * from its pending set. A third child is sent SIGSTOP as it execs: it stops
 * (in the old image, the exec or the new one) until SIGCONT. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

static char order[16];
static volatile int order_len;
static int rt_values[4];
static volatile int rt_count;
static volatile pid_t usr2_sender;

static void on_signal(int sig, siginfo_t *info, void *context) {
  (void)context;
  if (order_len < (int)sizeof order - 1) {
    order[order_len++] = sig == SIGUSR1 ? 'U' : sig == SIGTSTP ? 'T' : sig == SIGUSR2 ? 'V' : 'R';
  }
  if (sig == SIGRTMIN && rt_count < 4) {
    rt_values[rt_count++] = info->si_value.sival_int;
  }
  if (sig == SIGUSR2) {
    usr2_sender = info->si_pid;
  }
}

static void catch_signal(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  check(sigaction(sig, &sa, NULL) == 0);
}

static int is_pending(int sig) {
  sigset_t p;
  check(sigpending(&p) == 0);
  return sigismember(&p, sig);
}

static int is_blocked(int sig) {
  sigset_t m;
  check(sigprocmask(SIG_BLOCK, NULL, &m) == 0);
  return sigismember(&m, sig);
}

static void exec_self(const char *mode) {
  char *args[] = {"exec_pending_signal", (char *)mode, NULL};
  execv("/proc/self/exe", args);
  check(!"execv failed");
}

/* The new image of the first child: its signals wait for it. */
static int after_exec_raised(void) {
  check(is_blocked(SIGUSR1) && is_blocked(SIGTSTP) && is_blocked(SIGRTMIN));
  check(is_pending(SIGUSR1) && is_pending(SIGTSTP) && is_pending(SIGRTMIN));
  check(!is_pending(SIGUSR2));
  say("after exec: SIGUSR1, SIGTSTP and SIGRTMIN still blocked and pending\n");
  catch_signal(SIGUSR1);
  catch_signal(SIGTSTP);
  catch_signal(SIGRTMIN);
  check(order_len == 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTSTP);
  sigaddset(&set, SIGRTMIN);
  check(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
  order[order_len] = '\0';
  struct line l;
  line_init(&l);
  line_str(&l, "after unblock: handlers ran in order ");
  line_str(&l, order);
  line_str(&l, ", SIGRTMIN values ");
  for (int i = 0; i < rt_count; i++) {
    line_num(&l, rt_values[i]);
    line_str(&l, i + 1 < rt_count ? "," : "\n");
  }
  line_say(&l);
  check(order_len == 4 && rt_count == 2 && rt_values[0] == 11 && rt_values[1] == 22);
  check(!is_pending(SIGUSR1) && !is_pending(SIGTSTP) && !is_pending(SIGRTMIN));
  return 0;
}

/* The new image of the second child: SIGUSR2 and SIGTSTP come from the
 * parent, pending already or a little later. */
static int after_exec_sent(void) {
  check(is_blocked(SIGUSR2) && is_blocked(SIGTSTP));
  catch_signal(SIGUSR2);
  catch_signal(SIGTSTP);
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGUSR2);
  sigaddset(&wanted, SIGTSTP);
  for (int i = 0; i < 2000 && !(is_pending(SIGUSR2) && is_pending(SIGTSTP)); i++) {
    sleep_ms(1);
  }
  check(is_pending(SIGUSR2) && is_pending(SIGTSTP));
  check(sigprocmask(SIG_UNBLOCK, &wanted, NULL) == 0);
  order[order_len] = '\0';
  check(order_len == 2 && strchr(order, 'V') != NULL && strchr(order, 'T') != NULL);
  check(usr2_sender == getppid());
  struct line l;
  line_init(&l);
  line_str(&l, "after exec: SIGUSR2 and SIGTSTP from the parent ran on unblock (");
  line_str(&l, order);
  line_str(&l, "), sender is the parent\n");
  line_say(&l);
  return 0;
}

static void wait_ok(pid_t child) {
  int status;
  check(waitpid(child, &status, 0) == child);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
  test_init();
  if (argc == 2 && strcmp(argv[1], "raised") == 0) {
    return after_exec_raised();
  }
  if (argc == 2 && strcmp(argv[1], "sent") == 0) {
    return after_exec_sent();
  }
  if (argc == 2 && strcmp(argv[1], "stopped") == 0) {
    return 0;
  }

  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGTSTP);
    sigaddset(&set, SIGRTMIN);
    check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    union sigval value;
    value.sival_int = 11;
    check(sigqueue(getpid(), SIGRTMIN, value) == 0);
    value.sival_int = 22;
    check(sigqueue(getpid(), SIGRTMIN, value) == 0);
    check(raise(SIGTSTP) == 0);
    check(kill(getpid(), SIGUSR1) == 0);
    exec_self("raised");
  }
  wait_ok(child);
  say("child with raised signals: exited 0\n");

  int go[2];
  check(pipe(go) == 0);
  child = fork();
  check(child >= 0);
  if (child == 0) {
    close(go[0]);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGTSTP);
    check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    check(write(go[1], "x", 1) == 1);
    exec_self("sent");
  }
  close(go[1]);
  char c;
  check(read(go[0], &c, 1) == 1);
  check(kill(child, SIGUSR2) == 0);
  check(kill(child, SIGTSTP) == 0);
  wait_ok(child);
  say("child sent signals around its exec: exited 0\n");

  child = fork();
  check(child >= 0);
  if (child == 0) {
    exec_self("stopped");
  }
  check(kill(child, SIGSTOP) == 0);
  int status;
  check(waitpid(child, &status, WUNTRACED) == child);
  check(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
  check(kill(child, SIGCONT) == 0);
  wait_ok(child);
  say("child sent SIGSTOP as it execs: stopped, continued, exited 0\n");
  finish();
  return 0;
}

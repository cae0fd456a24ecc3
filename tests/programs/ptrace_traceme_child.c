/* A child that asks its parent to trace it (PTRACE_TRACEME), as a test
 * harness or a small debugger starts its target. The parent waits for each
 * stop before the child gets there (its wait blocks) and decides:
 *   1. SIGUSR1 raised by the child stops it; the parent reads the signal
 *      (GETSIGINFO: SIGUSR1, SI_TKILL, the child's pid) and a word of the
 *      child's memory, then drops the signal: the handler does not run;
 *   2. SIGUSR1 again: this time the parent passes it on and the handler
 *      runs once;
 *   3. SIGSTOP raised by the child stops it for the parent, which drops it:
 *      the child goes on instead of stopping;
 *   4. the child execs /bin/true: the kernel stops it with SIGTRAP, the
 *      parent continues it, and it exits 0.
 * Under recording all of this is emulated by repro between recorded
 * processes. */
#include "test_util.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

static volatile sig_atomic_t handled;
static volatile long progress;

static void on_usr1(int signal) {
  (void)signal;
  handled++;
}

static void child(void) {
  check(signal(SIGUSR1, on_usr1) != SIG_ERR);
  check(ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0);
  progress = 1;
  check(raise(SIGUSR1) == 0); /* dropped by the parent */
  if (handled != 0) _exit(10);
  progress = 2;
  check(raise(SIGUSR1) == 0); /* passed on */
  if (handled != 1) _exit(11);
  check(raise(SIGSTOP) == 0); /* dropped: no stop */
  progress = 3;
  execl("/bin/true", "true", (char *)NULL);
  _exit(12);
}

static int stopped_by(pid_t pid) {
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFSTOPPED(status));
  return WSTOPSIG(status);
}

int main(void) {
  test_init();
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    child();
  }

  say_num("stop 1", stopped_by(pid));
  siginfo_t info;
  check(ptrace(PTRACE_GETSIGINFO, pid, NULL, &info) == 0);
  check(info.si_signo == SIGUSR1 && info.si_code == SI_TKILL && info.si_pid == pid);
  errno = 0;
  check(ptrace(PTRACE_PEEKDATA, pid, (void *)&progress, NULL) == 1 && errno == 0);
  int status;
  check(waitpid(pid, &status, WNOHANG) == 0); /* a stop is reported once */
  check(ptrace(PTRACE_CONT, pid, NULL, NULL) == 0);
  say("dropped SIGUSR1\n");

  say_num("stop 2", stopped_by(pid));
  check(ptrace(PTRACE_PEEKDATA, pid, (void *)&progress, NULL) == 2);
  check(ptrace(PTRACE_CONT, pid, NULL, (void *)SIGUSR1) == 0);
  say("passed SIGUSR1 on\n");

  say_num("stop 3", stopped_by(pid));
  check(ptrace(PTRACE_CONT, pid, NULL, NULL) == 0);
  say("dropped SIGSTOP\n");

  say_num("stop 4 (exec)", stopped_by(pid));
  check(ptrace(PTRACE_CONT, pid, NULL, NULL) == 0);

  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status));
  say_num("child exit status", WEXITSTATUS(status));
  check(WEXITSTATUS(status) == 0);
  finish();
  return 0;
}

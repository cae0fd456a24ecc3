/* Raw clone(2) with CLONE_VM|CLONE_VFORK|SIGCHLD and a separate stack: the
 * child is a new process sharing our memory; the parent is suspended until it
 * exits, then sees its store and reaps its exit status. */
#include "clone_raw.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define NO_SSP __attribute__((no_stack_protector))
#endif
#endif
#ifndef NO_SSP
#define NO_SSP
#endif

static char child_stack[64 * 1024] __attribute__((aligned(16)));
static volatile long shared_value;
static volatile long child_pid, child_ppid;

static NO_SSP int child_fn(void *arg) {
  child_pid = raw_syscall3(SYS_getpid, 0, 0, 0);
  child_ppid = raw_syscall3(SYS_getppid, 0, 0, 0);
  /* Spend a little time so a parent that was wrongly resumed early would
   * miss the store below. */
  for (volatile int i = 0; i < 200000; i++) {
  }
  shared_value = (long)arg;
  return 7;
}

int main(void) {
  test_init();
  long pid = clone_raw(CLONE_VM | CLONE_VFORK | SIGCHLD, child_stack + sizeof child_stack, NULL, NULL, NULL,
                       child_fn, (void *)42l);
  check(pid > 0);
  /* CLONE_VFORK: we only get here after the child exited. */
  check(shared_value == 42);
  say_num("shared value after clone returned", shared_value);
  check(child_pid == pid);
  check(child_ppid == getpid());
  say("child was a new process whose parent is us\n");
  int status;
  check(waitpid((pid_t)pid, &status, 0) == pid);
  check(WIFEXITED(status));
  check(WEXITSTATUS(status) == 7);
  say_num("child exit status", WEXITSTATUS(status));
  finish();
  return 0;
}

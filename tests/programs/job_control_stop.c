/* A child stopped by SIGSTOP really stops: its counter in shared memory
 * stays still while it is stopped, waitpid(WNOHANG) reports no change of
 * state in the meantime, and after SIGCONT the counter moves again.
 * Debuggers and shells (Ctrl-Z, fg) rely on this. */
#include "test_util.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  atomic_long *counter =
      mmap(NULL, sizeof *counter, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  check(counter != MAP_FAILED);
  atomic_store(counter, 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    for (;;) {
      atomic_fetch_add(counter, 1);
      sched_yield(); /* a syscall per turn: the recorder can switch here */
    }
  }
  while (atomic_load(counter) < 100) {
    sched_yield();
  }
  check(kill(child, SIGSTOP) == 0);
  int status;
  check(waitpid(child, &status, WUNTRACED) == child);
  check(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
  say("child stopped\n");

  long at_stop = atomic_load(counter);
  for (int i = 0; i < 20; i++) {
    sleep_ms(5);
    check(waitpid(child, &status, WNOHANG | WUNTRACED | WCONTINUED) == 0);
  }
  long later = atomic_load(counter);
  say_num("counter moved while stopped", later - at_stop);
  check(later == at_stop);

  check(kill(child, SIGCONT) == 0);
  check(waitpid(child, &status, WCONTINUED) == child);
  check(WIFCONTINUED(status));
  say("child continued\n");
  while (atomic_load(counter) < later + 100) {
    sched_yield();
  }
  say("counter moves again\n");
  check(kill(child, SIGKILL) == 0);
  check(waitpid(child, &status, 0) == child);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  finish();
  return 0;
}

/* SIGKILL ends a process that waits in vfork() for its child, and the
 * child too: a victim process vforks a child that sleeps before it would
 * exit; the parent kills the victim's process group meanwhile and sees
 * both die of SIGKILL. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  int ready[2];
  check(pipe(ready) == 0);
  pid_t victim = fork();
  check(victim >= 0);
  if (victim == 0) {
    check(setpgid(0, 0) == 0);
    check(write(ready[1], "v", 1) == 1);
    pid_t child = vfork();
    if (child == 0) {
      sleep_ms(5000); /* the victim stays in vfork all this while */
      _exit(0);
    }
    _exit(1); /* never reached: killed in vfork */
  }
  char byte;
  check(read(ready[0], &byte, 1) == 1);
  sleep_ms(100); /* the victim is in vfork by now */
  check(kill(-victim, SIGKILL) == 0);
  int status;
  check(waitpid(victim, &status, 0) == victim);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  say("the process waiting in vfork died of SIGKILL\n");
  finish();
  return 0;
}

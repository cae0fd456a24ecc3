/* clone(2) with flag sets the kernel refuses, with and without CLONE_VFORK:
 * each fails with EINVAL and no thread or process is made. Then a valid
 * vfork-style clone still works. A failed clone is an ordinary result: the
 * replay must see the same failure and go on. */
#include "test_util.h"

#include <sched.h>
#include <sys/wait.h>

static long raw_clone(unsigned long flags) { return syscall(SYS_clone, flags, 0, 0, 0, 0); }

static void expect_einval(const char *name, unsigned long flags) {
  errno = 0;
  long result = raw_clone(flags);
  check(result == -1);
  check(errno == EINVAL);
  struct line l;
  line_init(&l);
  line_str(&l, name);
  line_str(&l, ": EINVAL");
  line_say(&l);
}

int main(void) {
  test_init();
  /* CLONE_SIGHAND needs CLONE_VM; CLONE_THREAD needs CLONE_SIGHAND;
   * CLONE_FS cannot be shared with a new user namespace. */
  expect_einval("vfork|sighand without vm", CLONE_VFORK | CLONE_SIGHAND | SIGCHLD);
  expect_einval("sighand without vm", CLONE_SIGHAND | SIGCHLD);
  expect_einval("thread without sighand", CLONE_VM | CLONE_THREAD);
  expect_einval("vfork|newuser|fs", CLONE_VFORK | CLONE_NEWUSER | CLONE_FS | SIGCHLD);

  pid_t child = vfork();
  if (child == 0) {
    _exit(7);
  }
  check(child > 0);
  int status;
  check(waitpid(child, &status, 0) == child);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 7);
  say("vfork after the failures: exit 7\n");
  finish();
  return 0;
}

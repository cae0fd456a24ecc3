/* For the tracee_killed scenario: writes its pid to the file argv[1],
 * prints a line, then vforks a child that sleeps a second before it execs
 * `echo child`. The scenario kills the parent with SIGKILL during that
 * second, while it waits in vfork for the exec. */
#include "test_util.h"

#include <fcntl.h>

int main(int argc, char **argv) {
  check(argc == 2);
  char pid_text[32];
  int n = snprintf(pid_text, sizeof pid_text, "%d\n", (int)getpid());
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  tu_write_all(fd, pid_text, (size_t)n);
  check(close(fd) == 0);
  say("before vfork\n");
  pid_t child = vfork();
  if (child == 0) {
    /* Only syscalls here: the child borrows the parent's memory. */
    struct timespec second = {1, 0};
    syscall(SYS_nanosleep, &second, NULL);
    char *const args[] = {"echo", "child", NULL};
    execv("/bin/echo", args);
    _exit(127);
  }
  check(child > 0);
  struct timespec minute = {60, 0};
  nanosleep(&minute, NULL); /* killed before it ends */
  say("not killed\n");
  return 1;
}

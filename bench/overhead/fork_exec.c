/* Many processes: COUNT times (default 100) fork, exec /bin/true in the child,
 * and wait for it.  Each exec maps a new image (loader, libc), so this
 * measures process creation, exec and the recording of mapped files.  See
 * fork_exec.md. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 100;
  const char *program = argc > 2 ? argv[2] : "/bin/true";
  int ok = 0;
  for (int i = 0; i < count; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      execl(program, program, (char *)NULL);
      _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ok++;
    }
  }
  printf("fork_exec: %d of %d children of %s exited 0\n", ok, count, program);
  return ok == count ? 0 : 1;
}

/* The ways to exec other than execve of a path, each leading to the next
 * stage of this program (named by argv[1]):
 *   execveat of a directory fd and a relative path -> "dirfd"
 *   execveat(fd, "", AT_EMPTY_PATH) of an O_PATH fd -> "empty"
 *   fexecve of an fd opened on the program         -> "fexecve"
 *   in children: fexecve of a memfd holding a copy of /bin/true, and of a
 *   memfd holding a shell script (run as /dev/fd/N by its interpreter)
 *   fexecve of a memfd holding a copy of the program -> "memfd"
 *   execv of /proc/self/exe                         -> "reexec"
 *   in a child: execve with a NULL argv (the kernel makes it {""})
 *   posix_spawn of /bin/sh -c, waited for.
 * Every stage checks that it got the argv it was given. */
#include "test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

static void next_stage_argv(char **out, char *argv0, char *stage) {
  out[0] = argv0;
  out[1] = stage;
  out[2] = NULL;
}

/* A memfd holding a copy of the file at `path`. */
static int memfd_copy(const char *path) {
  int in = open(path, O_RDONLY);
  check(in >= 0);
  int out = memfd_create("exec-variants-copy", 0);
  check(out >= 0);
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0) {
    check(write(out, buf, (size_t)n) == n);
  }
  check(n == 0);
  close(in);
  return out;
}

/* Runs `fd` with fexecve in a child, which exits with `code` if it fails. */
static int fexecve_in_child(int fd, char *const *args) {
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    fexecve(fd, args, environ);
    _exit(99);
  }
  int status = 0;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status));
  return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
  test_init();
  char *args[3];
  if (argc == 1 && argv[0][0] == '\0') {
    say("stage null argv: argc=1, argv[0] empty\n");
    _exit(5);
  }
  const char *stage = argc >= 2 ? argv[1] : "";
  check(argc <= 2);

  if (argc == 1) {
    say("start\n");
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    check(len > 0);
    self[len] = 0;
    char *slash = strrchr(self, '/');
    check(slash != NULL);
    *slash = 0;
    int dir = open(self, O_PATH | O_DIRECTORY);
    check(dir >= 0);
    next_stage_argv(args, argv[0], "dirfd");
    syscall(SYS_execveat, dir, slash + 1, args, environ, 0);
    check(!"execveat of a dirfd and a relative path returned");
  }
  if (strcmp(stage, "dirfd") == 0) {
    say("stage dirfd: execveat(dirfd, relative path)\n");
    int fd = open("/proc/self/exe", O_PATH);
    check(fd >= 0);
    next_stage_argv(args, argv[0], "empty");
    syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
    check(!"execveat with AT_EMPTY_PATH returned");
  }
  if (strcmp(stage, "empty") == 0) {
    say("stage empty: execveat(fd, \"\", AT_EMPTY_PATH)\n");
    int fd = open("/proc/self/exe", O_RDONLY);
    check(fd >= 0);
    next_stage_argv(args, argv[0], "fexecve");
    fexecve(fd, args, environ);
    check(!"fexecve returned");
  }
  if (strcmp(stage, "fexecve") == 0) {
    say("stage fexecve: fexecve(fd)\n");
    int bin_true = memfd_copy("/bin/true");
    char *true_args[] = {"true", NULL};
    say_num("memfd copy of /bin/true exited", fexecve_in_child(bin_true, true_args));
    close(bin_true);

    int script = memfd_create("exec-variants-script", 0);
    check(script >= 0);
    const char text[] = "#!/bin/sh\necho \"memfd script: $# arguments, first $1\"\nexit 3\n";
    check(write(script, text, sizeof text - 1) == (ssize_t)sizeof text - 1);
    char *script_args[] = {"script", "one", "two", NULL};
    say_num("memfd script exited", fexecve_in_child(script, script_args));
    close(script);

    int copy = memfd_copy("/proc/self/exe");
    next_stage_argv(args, argv[0], "memfd");
    fexecve(copy, args, environ);
    check(!"fexecve of a memfd returned");
  }
  if (strcmp(stage, "memfd") == 0) {
    say("stage memfd: fexecve(memfd copy of the program)\n");
    next_stage_argv(args, argv[0], "reexec");
    execv("/proc/self/exe", args);
    check(!"execv of /proc/self/exe returned");
  }
  check(strcmp(stage, "reexec") == 0);
  say("stage reexec: execv(/proc/self/exe)\n");
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    syscall(SYS_execve, "/proc/self/exe", NULL, environ);
    _exit(99);
  }
  int status = 0;
  check(waitpid(pid, &status, 0) == pid);
  say_num("execve with a NULL argv exited", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

  char *sh_args[] = {"/bin/sh", "-c", "echo sh -c says $0", NULL};
  check(posix_spawn(&pid, "/bin/sh", NULL, NULL, sh_args, environ) == 0);
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  say("posix_spawn of /bin/sh -c exited 0\n");
  finish();
  return 0;
}

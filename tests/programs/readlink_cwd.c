/* getcwd, chdir/fchdir and readlink on /proc/self/{exe,cwd}: the executable
 * path is absolute and names this program; after chdir into a fresh directory
 * getcwd and /proc/self/cwd agree with it; readlink truncates silently to the
 * buffer size and fails with EINVAL on a non-link. Paths are printed with
 * "~ " since they depend on where things live. */
#include "test_util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>

static void say_nondet_path(const char *label, const char *path) {
  struct line l;
  line_init(&l);
  line_str(&l, label);
  line_str(&l, ": ");
  line_str(&l, path);
  line_say_nondet(&l);
}

int main(void) {
  test_init();
  char cwd[PATH_MAX];
  check(getcwd(cwd, sizeof cwd) == cwd);
  check(cwd[0] == '/');
  say_nondet_path("initial cwd", cwd);

  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  check(n > 0 && n < (ssize_t)sizeof exe - 1);
  exe[n] = 0;
  check(exe[0] == '/');
  const char *base = strrchr(exe, '/') + 1;
  check(strcmp(base, "readlink_cwd") == 0);
  say("/proc/self/exe is absolute and ends in /readlink_cwd\n");
  say_nondet_path("exe", exe);

  char small[4];
  memset(small, '#', sizeof small);
  check(readlink("/proc/self/exe", small, sizeof small) == sizeof small);
  check(memcmp(small, exe, sizeof small) == 0);
  say("readlink into 4 bytes: truncated to 4, no terminator\n");

  int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  check(home >= 0);
  char dir[32];
  test_mkdtemp(dir);
  char real[PATH_MAX];
  check(realpath(dir, real) == real);
  check(chdir(dir) == 0);
  char now[PATH_MAX];
  check(getcwd(now, sizeof now) == now);
  check(strcmp(now, real) == 0);
  char proc_cwd[PATH_MAX];
  n = readlink("/proc/self/cwd", proc_cwd, sizeof proc_cwd - 1);
  check(n > 0);
  proc_cwd[n] = 0;
  check(strcmp(proc_cwd, real) == 0);
  say("after chdir: getcwd == /proc/self/cwd == the new directory\n");
  say_nondet_path("new cwd", now);

  errno = 0;
  check(getcwd(small, sizeof small) == NULL && errno == ERANGE);
  say("getcwd into 4 bytes: ERANGE\n");

  check(fchdir(home) == 0);
  check(getcwd(now, sizeof now) == now);
  check(strcmp(now, cwd) == 0);
  say("fchdir back: cwd restored\n");

  errno = 0;
  check(readlink(dir, exe, sizeof exe) == -1 && errno == EINVAL);
  say("readlink on a directory: EINVAL\n");
  check(rmdir(dir) == 0);
  close(home);
  finish();
  return 0;
}

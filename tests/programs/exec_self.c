/* The program re-executes itself through /proc/self/exe with an extra
 * argument and an environment variable; the second incarnation keeps the pid,
 * sees the argument and variable, and that an O_CLOEXEC descriptor was closed
 * while a plain one survived. */
#include "test_util.h"

#include <fcntl.h>

extern char **environ;

int main(int argc, char **argv) {
  test_init();
  if (argc >= 2 && strcmp(argv[1], "second") == 0) {
    check(argc == 5);
    say("second incarnation: argv[1]=second\n");
    const char *v = getenv("REPRO_EXEC_SELF");
    check(v != NULL && strcmp(v, "hello") == 0);
    say("second incarnation: REPRO_EXEC_SELF=hello\n");
    check(atol(argv[2]) == getpid());
    say("second incarnation: same pid as the first\n");
    int keep = atoi(argv[3]), gone = atoi(argv[4]);
    check(fcntl(keep, F_GETFD) == 0);
    errno = 0;
    check(fcntl(gone, F_GETFD) == -1 && errno == EBADF);
    say("second incarnation: plain fd kept, O_CLOEXEC fd closed\n");
    finish();
    return 0;
  }
  check(argc == 1);
  say("first incarnation\n");
  int keep = open("/dev/null", O_RDONLY);
  int gone = open("/dev/null", O_RDONLY | O_CLOEXEC);
  check(keep >= 0 && gone >= 0);
  char pidbuf[24], keepbuf[24], gonebuf[24];
  struct line l;
  line_init(&l);
  line_num(&l, getpid());
  l.buf[l.len] = 0;
  memcpy(pidbuf, l.buf, l.len + 1);
  line_init(&l);
  line_num(&l, keep);
  l.buf[l.len] = 0;
  memcpy(keepbuf, l.buf, l.len + 1);
  line_init(&l);
  line_num(&l, gone);
  l.buf[l.len] = 0;
  memcpy(gonebuf, l.buf, l.len + 1);
  char *nargv[] = {argv[0], "second", pidbuf, keepbuf, gonebuf, NULL};
  check(setenv("REPRO_EXEC_SELF", "hello", 1) == 0);
  execve("/proc/self/exe", nargv, environ);
  check(!"execve returned");
  return 1;
}

/* File descriptor plumbing: dup shares the open file (and its status flags),
 * dup2 onto an open fd replaces it, dup3 sets O_CLOEXEC (and refuses
 * oldfd == newfd), F_DUPFD picks an fd >= its argument, F_GETFD/F_SETFD and
 * F_GETFL/F_SETFL round-trip flags, closed fds give EBADF. */
#include "test_util.h"

#include <fcntl.h>

int main(void) {
  test_init();
  int p[2];
  check(pipe(p) == 0);
  check(write(p[1], "abcdef", 6) == 6);

  int d = dup(p[0]);
  check(d >= 0 && d != p[0]);
  char c;
  check(read(p[0], &c, 1) == 1 && c == 'a');
  check(read(d, &c, 1) == 1 && c == 'b');
  say("dup: both fds read from the same pipe ('a' then 'b')\n");

  int target = open("/dev/null", O_RDONLY);
  check(target >= 0);
  check(dup2(p[0], target) == target);
  check(read(target, &c, 1) == 1 && c == 'c');
  check(dup2(target, target) == target);
  say("dup2 onto an open fd replaced it\n");

  int e = dup3(p[0], target + 5, O_CLOEXEC);
  check(e == target + 5);
  check(fcntl(e, F_GETFD) == FD_CLOEXEC);
  check(fcntl(d, F_GETFD) == 0);
  errno = 0;
  check(dup3(e, e, 0) == -1 && errno == EINVAL);
  say("dup3: O_CLOEXEC set, oldfd == newfd gives EINVAL\n");

  int f = fcntl(p[0], F_DUPFD, 100);
  check(f >= 100);
  int g = fcntl(p[0], F_DUPFD_CLOEXEC, 100);
  check(g > f && fcntl(g, F_GETFD) == FD_CLOEXEC);
  say("F_DUPFD and F_DUPFD_CLOEXEC: fds >= 100\n");

  check(fcntl(d, F_SETFD, FD_CLOEXEC) == 0 && fcntl(d, F_GETFD) == FD_CLOEXEC);
  int fl = fcntl(p[0], F_GETFL);
  check(fl >= 0 && !(fl & O_NONBLOCK) && (fl & O_ACCMODE) == O_RDONLY);
  check(fcntl(p[0], F_SETFL, fl | O_NONBLOCK) == 0);
  /* Status flags live in the open file description: shared with dups. */
  check(fcntl(d, F_GETFL) & O_NONBLOCK);
  check(read(d, &c, 1) == 1 && c == 'd');
  check(read(d, &c, 1) == 1 && c == 'e');
  check(read(d, &c, 1) == 1 && c == 'f');
  errno = 0;
  check(read(d, &c, 1) == -1 && errno == EAGAIN);
  say("O_NONBLOCK set on one fd shows on its dup; empty pipe: EAGAIN\n");

  int closed = dup(p[0]);
  check(close(closed) == 0);
  errno = 0;
  check(fcntl(closed, F_GETFD) == -1 && errno == EBADF);
  errno = 0;
  check(dup2(closed, 50) == -1 && errno == EBADF);
  say("closed fd: EBADF\n");
  close(d);
  close(e);
  close(f);
  close(g);
  close(target);
  close(p[0]);
  close(p[1]);
  finish();
  return 0;
}

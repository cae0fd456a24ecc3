/* Failing syscalls return -1 with the right errno and change nothing: EBADF,
 * EFAULT (bad user pointers for both input and output buffers), ENOENT,
 * EINVAL, ENOTDIR, EISDIR, ENOSYS for an unknown syscall number, ESPIPE,
 * ECHILD, ESRCH. A tracer must record these without touching memory. */
#include "test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define EXPECT_ERR(call, err)                 \
  do {                                        \
    errno = 0;                                \
    long r_ = (long)(call);                   \
    check(r_ == -1 && errno == (err));        \
    say(#call " -> " #err "\n");              \
  } while (0)

/* Through a volatile so the compiler does not see (and warn about) it. */
static void *volatile bad_ptr = (void *)16;

int main(void) {
  test_init();
  char buf[16];
  int p[2];
  check(pipe(p) == 0);
  /* A descriptor number that is certainly closed (nothing is opened later). */
  int closed = fcntl(p[0], F_DUPFD, 200);
  check(closed >= 200 && close(closed) == 0);
  check(write(p[1], "abc", 3) == 3);

  EXPECT_ERR(read(closed, buf, 1), EBADF);
  EXPECT_ERR(write(closed, "x", 1), EBADF);
  EXPECT_ERR(read(p[0], bad_ptr, 3), EFAULT);
  /* The failed read did not consume the data. */
  check(read(p[0], buf, 3) == 3 && memcmp(buf, "abc", 3) == 0);
  EXPECT_ERR(write(p[1], bad_ptr, 3), EFAULT);
  EXPECT_ERR(open((const char *)bad_ptr, O_RDONLY), EFAULT);
  EXPECT_ERR(syscall(SYS_stat, "/", (struct stat *)bad_ptr), EFAULT);
  EXPECT_ERR(open("/nonexistent-repro-path/x", O_RDONLY), ENOENT);
  EXPECT_ERR(open("/dev/null/x", O_RDONLY), ENOTDIR);
  EXPECT_ERR(open("/", O_WRONLY), EISDIR);
  EXPECT_ERR(lseek(p[0], 0, SEEK_SET), ESPIPE);
  EXPECT_ERR(lseek(p[0], 0, 12345), EINVAL);
  EXPECT_ERR(syscall(100000), ENOSYS);
  EXPECT_ERR(waitpid(-1, NULL, WNOHANG), ECHILD);
  EXPECT_ERR(kill(0x3ffffff0, 0), ESRCH);
  EXPECT_ERR(fcntl(p[0], 0x7fff), EINVAL);
  close(p[0]);
  close(p[1]);
  finish();
  return 0;
}

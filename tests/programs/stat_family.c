/* The stat family through raw syscalls: stat follows a symlink, lstat does
 * not (S_ISLNK, size = target length), fstat on an open fd, newfstatat with a
 * directory fd (with and without AT_SYMLINK_NOFOLLOW, and AT_EMPTY_PATH),
 * statx with STATX_BASIC_STATS. All agree on inode and size. Errors: ENOENT,
 * EBADF, ENOTDIR. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/stat.h>

int main(void) {
  test_init();
  char dir[32], file[256], linkpath[256];
  test_mkdtemp(dir);
  path_join(file, sizeof file, dir, "target.dat");
  path_join(linkpath, sizeof linkpath, dir, "link");
  int fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  check(fd >= 0);
  char data[123];
  memset(data, 'd', sizeof data);
  check(write(fd, data, sizeof data) == sizeof data);
  check(fchmod(fd, 0640) == 0); /* independent of the umask */
  check(symlink("target.dat", linkpath) == 0);

  struct stat st_stat, st_lstat, st_fstat, st_at, st_at_nofollow, st_empty;
  check(syscall(SYS_stat, linkpath, &st_stat) == 0);
  check(S_ISREG(st_stat.st_mode) && st_stat.st_size == 123);
  check((st_stat.st_mode & 07777) == 0640);
  say("stat(link): regular file, 123 bytes, mode 0640\n");

  check(syscall(SYS_lstat, linkpath, &st_lstat) == 0);
  check(S_ISLNK(st_lstat.st_mode) && st_lstat.st_size == (off_t)strlen("target.dat"));
  check(st_lstat.st_ino != st_stat.st_ino);
  say_num("lstat(link): symlink, size", st_lstat.st_size);

  check(syscall(SYS_fstat, fd, &st_fstat) == 0);
  check(st_fstat.st_ino == st_stat.st_ino && st_fstat.st_dev == st_stat.st_dev && st_fstat.st_size == 123);
  check(st_fstat.st_nlink == 1);
  say("fstat(fd): same inode, 123 bytes, 1 link\n");

  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  check(dfd >= 0);
  check(syscall(SYS_newfstatat, dfd, "link", &st_at, 0) == 0);
  check(st_at.st_ino == st_stat.st_ino);
  check(syscall(SYS_newfstatat, dfd, "link", &st_at_nofollow, AT_SYMLINK_NOFOLLOW) == 0);
  check(st_at_nofollow.st_ino == st_lstat.st_ino && S_ISLNK(st_at_nofollow.st_mode));
  check(syscall(SYS_newfstatat, fd, "", &st_empty, AT_EMPTY_PATH) == 0);
  check(st_empty.st_ino == st_stat.st_ino);
  say("newfstatat: follows by default, not with AT_SYMLINK_NOFOLLOW; AT_EMPTY_PATH = fstat\n");

  struct statx stx;
  memset(&stx, 0, sizeof stx);
  check(syscall(SYS_statx, dfd, "target.dat", 0, STATX_BASIC_STATS, &stx) == 0);
  check((stx.stx_mask & (STATX_INO | STATX_SIZE | STATX_TYPE)) == (STATX_INO | STATX_SIZE | STATX_TYPE));
  check(stx.stx_ino == st_stat.st_ino && stx.stx_size == 123 && S_ISREG(stx.stx_mode));
  check(stx.stx_nlink == 1);
  say("statx: same inode, 123 bytes\n");

  /* A hard link bumps st_nlink. */
  char hard[256];
  path_join(hard, sizeof hard, dir, "hard");
  check(link(file, hard) == 0);
  check(syscall(SYS_fstat, fd, &st_fstat) == 0 && st_fstat.st_nlink == 2);
  say("after link(): st_nlink=2\n");

  char missing[256];
  path_join(missing, sizeof missing, dir, "missing");
  errno = 0;
  check(syscall(SYS_stat, missing, &st_stat) == -1 && errno == ENOENT);
  int closed_fd = dup(fd);
  check(closed_fd >= 0 && close(closed_fd) == 0);
  errno = 0;
  check(syscall(SYS_fstat, closed_fd, &st_stat) == -1 && errno == EBADF);
  char through_file[300];
  path_join(through_file, sizeof through_file, file, "x");
  errno = 0;
  check(syscall(SYS_stat, through_file, &st_stat) == -1 && errno == ENOTDIR);
  say("errors: ENOENT, EBADF, ENOTDIR\n");
  say_nondet_num("inode", (long long)st_fstat.st_ino);

  check(close(fd) == 0 && close(dfd) == 0);
  check(unlink(hard) == 0 && unlink(linkpath) == 0 && unlink(file) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

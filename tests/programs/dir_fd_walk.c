/* The descriptor traffic of a directory walk (find, fts): each directory
 * opened with O_DIRECTORY, its flags read (F_GETFL) and set (F_SETFD), a
 * copy made above a floor (F_DUPFD_CLOEXEC, F_DUPFD), the files in it
 * opened, read and closed, the directories closed, a symlink to one read
 * (readlink, readlinkat); the fast path takes the directory opens, the
 * fcntl calls, the closes of directories and the symlink reads. Closing a
 * closed descriptor gives EBADF; closing a pipe end (slow path) still
 * lets the reader see the end of the file. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/stat.h>

#define DIRS 6
#define FILES 5
#define ROUNDS 40

int main(void) {
  test_init();
  char root[32];
  test_mkdtemp(root);
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  check(root_fd >= 0);
  for (int d = 0; d < DIRS; d++) {
    char name[16] = "dir-0";
    name[4] = (char)('0' + d);
    check(mkdirat(root_fd, name, 0700) == 0);
    int dir_fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    check(dir_fd >= 0);
    for (int f = 0; f < FILES; f++) {
      char file[16] = "file-0";
      file[5] = (char)('0' + f);
      int fd = openat(dir_fd, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      check(fd >= 0);
      check(write(fd, file, 6) == 6);
      check(close(fd) == 0);
    }
    check(close(dir_fd) == 0);
  }

  char link_path[256];
  path_join(link_path, sizeof link_path, root, "link");
  check(symlinkat("dir-3", root_fd, "link") == 0);
  for (int round = 0; round < ROUNDS; round++) {
    char target[64];
    memset(target, 0, sizeof target);
    check(readlinkat(root_fd, "link", target, sizeof target) == 5 && memcmp(target, "dir-3", 5) == 0);
    memset(target, 0, sizeof target);
    check(readlink(link_path, target, 3) == 3 && memcmp(target, "dir", 3) == 0 && target[3] == 0);
    check(readlinkat(root_fd, "dir-3", target, sizeof target) == -1 && errno == EINVAL);
    check(readlink(root, target, sizeof target) == -1 && errno == EINVAL);
  }
  say("readlink: the target, cut at the buffer's size; EINVAL for a directory\n");
  check(unlinkat(root_fd, "link", 0) == 0);

  unsigned long sum = 0;
  int copies_above_floor = 0;
  for (int round = 0; round < ROUNDS; round++) {
    for (int d = 0; d < DIRS; d++) {
      char name[16] = "dir-0";
      name[4] = (char)('0' + d);
      int dir_fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
      check(dir_fd >= 0);
      int flags = fcntl(dir_fd, F_GETFL);
      check(flags >= 0 && (flags & O_DIRECTORY) && (flags & O_NONBLOCK));
      check(fcntl(dir_fd, F_GETFD) == 0);
      check(fcntl(dir_fd, F_SETFD, FD_CLOEXEC) == 0);
      check(fcntl(dir_fd, F_GETFD) == FD_CLOEXEC);
      int copy = fcntl(dir_fd, F_DUPFD_CLOEXEC, 20);
      check(copy >= 20);
      int plain = fcntl(copy, F_DUPFD, 3);
      check(plain >= 3 && fcntl(plain, F_GETFD) == 0);
      copies_above_floor += copy >= 20;
      check(close(dir_fd) == 0);
      check(close(plain) == 0);
      for (int f = 0; f < FILES; f++) {
        char file[16] = "file-0";
        file[5] = (char)('0' + f);
        int fd = openat(copy, file, O_RDONLY | O_CLOEXEC);
        check(fd >= 0);
        char data[8];
        check(read(fd, data, sizeof data) == 6 && memcmp(data, file, 6) == 0);
        sum = sum * 31 + (unsigned char)data[5];
        check(close(fd) == 0);
        check(close(fd) == -1 && errno == EBADF);
      }
      check(close(copy) == 0);
    }
  }
  say_num("directories walked", ROUNDS * DIRS);
  say_num("copies above the floor", copies_above_floor);
  say_hex("checksum", sum);

  int p[2];
  check(pipe(p) == 0);
  check(fcntl(p[0], F_GETFL) == O_RDONLY);
  check(write(p[1], "x", 1) == 1);
  check(close(p[1]) == 0);
  char c;
  check(read(p[0], &c, 1) == 1 && c == 'x');
  check(read(p[0], &c, 1) == 0);
  check(close(p[0]) == 0);
  say("pipe: closed writer seen as end of file\n");

  for (int d = 0; d < DIRS; d++) {
    char name[16] = "dir-0";
    name[4] = (char)('0' + d);
    int dir_fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    check(dir_fd >= 0);
    for (int f = 0; f < FILES; f++) {
      char file[16] = "file-0";
      file[5] = (char)('0' + f);
      check(unlinkat(dir_fd, file, 0) == 0);
    }
    check(close(dir_fd) == 0);
    check(unlinkat(root_fd, name, AT_REMOVEDIR) == 0);
  }
  check(close(root_fd) == 0);
  check(rmdir(root) == 0);
  finish();
  return 0;
}

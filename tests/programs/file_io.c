/* Regular-file I/O on a fresh file: write, lseek (SET/CUR/END, past EOF to
 * make a hole), read, pread/pwrite (which leave the offset alone),
 * ftruncate (shrink and extend with zeros), fstat sizes, O_APPEND, unlink. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/stat.h>

static off_t file_size(int fd) {
  struct stat st;
  check(fstat(fd, &st) == 0);
  return st.st_size;
}

int main(void) {
  test_init();
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "file.txt");
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  check(fd >= 0);
  errno = 0;
  check(open(path, O_RDWR | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST);

  check(write(fd, "hello world", 11) == 11);
  check(lseek(fd, 0, SEEK_CUR) == 11);
  check(file_size(fd) == 11);
  say("wrote 11 bytes\n");

  check(lseek(fd, 6, SEEK_SET) == 6);
  char buf[64] = {0};
  check(read(fd, buf, sizeof buf) == 5 && memcmp(buf, "world", 5) == 0);
  check(read(fd, buf, sizeof buf) == 0);
  say("lseek(6) + read: 'world', then EOF\n");

  check(pwrite(fd, "W", 1, 6) == 1);
  check(lseek(fd, 0, SEEK_CUR) == 11);
  memset(buf, 0, sizeof buf);
  check(pread(fd, buf, 11, 0) == 11 && memcmp(buf, "hello World", 11) == 0);
  check(lseek(fd, 0, SEEK_CUR) == 11);
  say("pwrite/pread: 'hello World', offset unchanged\n");

  check(lseek(fd, 4, SEEK_END) == 15);
  check(write(fd, "!", 1) == 1);
  check(file_size(fd) == 16);
  memset(buf, 'x', sizeof buf);
  check(pread(fd, buf, 16, 0) == 16);
  check(buf[11] == 0 && buf[14] == 0 && buf[15] == '!');
  say("write 4 past EOF: hole reads as zeros, size 16\n");

  check(ftruncate(fd, 5) == 0);
  check(file_size(fd) == 5);
  check(ftruncate(fd, 8) == 0);
  memset(buf, 'x', sizeof buf);
  check(pread(fd, buf, sizeof buf, 0) == 8);
  check(memcmp(buf, "hello\0\0\0", 8) == 0);
  say("ftruncate 5 then 8: 'hello' + 3 zeros\n");

  int afd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  check(afd >= 0);
  check(lseek(afd, 0, SEEK_SET) == 0);
  check(write(afd, "END", 3) == 3);
  check(file_size(fd) == 11);
  check(pread(fd, buf, 3, 8) == 3 && memcmp(buf, "END", 3) == 0);
  close(afd);
  say("O_APPEND write went to the end despite lseek(0)\n");

  errno = 0;
  check(lseek(fd, -1, SEEK_SET) == -1 && errno == EINVAL);
  say("lseek to -1: EINVAL\n");

  check(close(fd) == 0);
  errno = 0;
  check(read(fd, buf, 1) == -1 && errno == EBADF);
  check(unlink(path) == 0);
  errno = 0;
  check(open(path, O_RDONLY) == -1 && errno == ENOENT);
  say("after unlink: ENOENT\n");
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

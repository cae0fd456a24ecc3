/* Extended attributes through libc, whose reads the preloaded library
 * makes on the fast path: a user attribute set on a file is read back by
 * path, through a symlink (getxattr follows it, lgetxattr asks the link
 * itself), and by descriptor; size 0 asks for the size; a buffer too small
 * gives ERANGE, a missing name ENODATA, a missing file ENOENT. Where the
 * file system keeps no user attributes (ENOTSUP) the reads are still made
 * and checked to fail alike. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/xattr.h>

#define NAME "user.repro.colour"
#define VALUE "ultramarine-42"

static void say_result(const char *what, long result) {
  struct line l;
  line_init(&l);
  line_str(&l, what);
  line_str(&l, ": ");
  if (result < 0) {
    line_str(&l, tu_errno_text(errno));
  } else {
    line_num(&l, result);
  }
  line_str(&l, "\n");
  line_say(&l);
}

int main(void) {
  test_init();
  char dir[32], file[256], link_path[256], missing[256];
  test_mkdtemp(dir);
  path_join(file, sizeof file, dir, "painted.txt");
  path_join(link_path, sizeof link_path, dir, "link");
  path_join(missing, sizeof missing, dir, "missing");
  int fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  check(fd >= 0);
  check(symlink("painted.txt", link_path) == 0);

  int supported = setxattr(file, NAME, VALUE, strlen(VALUE), 0) == 0;
  check(supported || errno == ENOTSUP);
  if (!supported) {
    say_nondet("user attributes unsupported here");
  }
  char value[64];
  for (int round = 0; round < 200; round++) {
    memset(value, 0, sizeof value);
    long size = getxattr(file, NAME, NULL, 0);
    long by_path = getxattr(file, NAME, value, sizeof value);
    long through_link = getxattr(link_path, NAME, value, sizeof value);
    long by_fd = fgetxattr(fd, NAME, value, sizeof value);
    long of_link = lgetxattr(link_path, NAME, value, sizeof value);
    int of_link_errno = errno;
    long too_small = getxattr(file, NAME, value, 4);
    int too_small_errno = errno;
    long no_name = getxattr(file, "user.repro.none", value, sizeof value);
    int no_name_errno = errno;
    long no_file = lgetxattr(missing, NAME, value, sizeof value);
    int no_file_errno = errno;
    if (supported) {
      long length = (long)strlen(VALUE);
      check(size == length && by_path == length && through_link == length && by_fd == length);
      check(memcmp(value, VALUE, strlen(VALUE)) == 0);
      /* Symlinks carry no user attributes. */
      check(of_link < 0 && (of_link_errno == EPERM || of_link_errno == ENODATA));
      check(too_small < 0 && too_small_errno == ERANGE);
      check(no_name < 0 && no_name_errno == ENODATA);
    } else {
      check(size < 0 && by_path < 0 && through_link < 0 && by_fd < 0 && of_link < 0);
      check(too_small < 0 && no_name < 0);
      (void)of_link_errno;
      (void)too_small_errno;
      (void)no_name_errno;
    }
    check(no_file < 0 && no_file_errno == ENOENT);
    if (round == 0) {
      say_result("lgetxattr of a missing file", no_file);
    }
  }
  if (supported) {
    long size = getxattr(file, NAME, value, sizeof value);
    struct line l;
    line_init(&l);
    check(size > 0 && size < (long)sizeof value);
    value[size] = '\0';
    line_str(&l, "value read back: ");
    line_str(&l, value);
    line_str(&l, "\n");
    line_say(&l);
    check(removexattr(file, NAME) == 0);
    check(getxattr(file, NAME, value, sizeof value) < 0 && errno == ENODATA);
    say("removed: ENODATA after\n");
  }
  check(close(fd) == 0);
  check(unlink(link_path) == 0);
  check(unlink(file) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

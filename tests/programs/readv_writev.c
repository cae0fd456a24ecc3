/* Scatter/gather I/O on a file: writev of three buffers, readv back into
 * differently sized buffers, preadv/pwritev at an offset (file offset
 * unchanged), a readv that hits EOF part-way through its last buffer, and
 * EINVAL for an impossible total length. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/uio.h>

int main(void) {
  test_init();
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "vec.txt");
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  check(fd >= 0);

  char a[] = "alpha-", b[] = "beta-", c[] = "gamma";
  struct iovec out[3] = {{a, 6}, {b, 5}, {c, 5}};
  check(writev(fd, out, 3) == 16);
  say("writev of 6+5+5 bytes: 16\n");

  char x[3], y[10], z[8];
  memset(z, 0, sizeof z);
  struct iovec in[3] = {{x, sizeof x}, {y, sizeof y}, {z, sizeof z}};
  check(lseek(fd, 0, SEEK_SET) == 0);
  check(readv(fd, in, 3) == 16); /* only 3 bytes land in z */
  check(memcmp(x, "alp", 3) == 0 && memcmp(y, "ha-beta-ga", 10) == 0 && memcmp(z, "mma", 3) == 0);
  say("readv into 3+10+8 bytes: 16, split 'alp' 'ha-beta-ga' 'mma'\n");

  char p1[] = "XY", p2[] = "Z";
  struct iovec pout[2] = {{p1, 2}, {p2, 1}};
  check(pwritev(fd, pout, 2, 6) == 3);
  check(lseek(fd, 0, SEEK_CUR) == 16);
  char q[6] = {0};
  struct iovec pin[1] = {{q, 5}};
  check(preadv(fd, pin, 1, 4) == 5);
  check(memcmp(q, "a-XYZ", 5) == 0);
  check(lseek(fd, 0, SEEK_CUR) == 16);
  say("pwritev/preadv at offsets: 'a-XYZ', file offset unchanged\n");

  errno = 0;
  struct iovec bad[1] = {{x, (size_t)-1}};
  check(readv(fd, bad, 1) == -1 && errno == EINVAL);
  say("readv with an impossible length: EINVAL\n");
  check(close(fd) == 0);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

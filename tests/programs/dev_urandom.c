/* Reading /dev/urandom: reads are never short, two 32-byte draws differ
 * (printed in hex with "~ "), and a 4096-byte read is roughly uniform. */
#include "test_util.h"

#include <fcntl.h>

int main(void) {
  test_init();
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  unsigned char a[32], b[32];
  check(read(fd, a, sizeof a) == sizeof a);
  check(read(fd, b, sizeof b) == sizeof b);
  check(memcmp(a, b, sizeof a) != 0);
  say("two 32-byte reads: different\n");
  say_nondet_bytes("first", a, sizeof a);
  say_nondet_bytes("second", b, sizeof b);

  unsigned char big[4096];
  check(read(fd, big, sizeof big) == sizeof big);
  unsigned long hist[4] = {0};
  for (size_t i = 0; i < sizeof big; i++) hist[big[i] >> 6]++;
  /* Each quarter of the byte range gets about 1024 of 4096 bytes. */
  for (int i = 0; i < 4; i++) check(hist[i] > 700 && hist[i] < 1350);
  say("4096-byte read looks uniform\n");
  close(fd);
  finish();
  return 0;
}

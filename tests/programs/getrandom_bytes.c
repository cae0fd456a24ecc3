/* The getrandom syscall fills the buffer (printed in hex with "~ "); two
 * 32-byte draws differ; GRND_NONBLOCK works once the pool is ready; invalid
 * flags give EINVAL and a bad buffer EFAULT. */
#include "test_util.h"

#include <sys/random.h>

int main(void) {
  test_init();
  unsigned char a[32], b[32];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  check(syscall(SYS_getrandom, a, sizeof a, 0) == sizeof a);
  check(getrandom(b, sizeof b, GRND_NONBLOCK) == sizeof b);
  check(memcmp(a, b, sizeof a) != 0);
  int nonzero = 0;
  for (size_t i = 0; i < sizeof a; i++) nonzero |= a[i];
  check(nonzero);
  say("two 32-byte draws: filled and different\n");
  say_nondet_bytes("first", a, sizeof a);
  say_nondet_bytes("second", b, sizeof b);

  errno = 0;
  check(syscall(SYS_getrandom, a, sizeof a, 0x1000) == -1 && errno == EINVAL);
  say("invalid flags: EINVAL\n");
  errno = 0;
  check(syscall(SYS_getrandom, (void *)8, 16, 0) == -1 && errno == EFAULT);
  say("bad buffer: EFAULT\n");
  check(syscall(SYS_getrandom, a, 0, 0) == 0);
  say("zero length: 0\n");
  finish();
  return 0;
}

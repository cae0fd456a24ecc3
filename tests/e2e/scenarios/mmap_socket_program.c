/* Maps what no trace can hold: a TCP socket (its receive queue, for
 * TCP_ZEROCOPY_RECEIVE; any process may map one, read-only and shared).
 * The kernel changes such memory behind the program's back. Prints
 * whether the mmap succeeded. */
#include "test_util.h"

#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

int main(void) {
  test_init();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(fd >= 0);
  void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    say("the kernel refuses to map a TCP socket\n");
    return 77;
  }
  say("mapped a TCP socket\n");
  check(munmap(p, 4096) == 0);
  check(close(fd) == 0);
  finish();
  return 0;
}

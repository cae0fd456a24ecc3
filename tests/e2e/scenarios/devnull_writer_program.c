/* Writes MIB mebibytes to /dev/null in 256 KiB writes, for the
 * devnull_trace_size scenario.
 *   devnull_writer_program MIB open: to a /dev/null it opens itself;
 *   devnull_writer_program MIB stdout: to its stdout (the scenario makes it
 *     /dev/null).
 * The buffer holds pseudo-random bytes, so that a trace that kept them could
 * not compress them away. Prints how much it wrote on stderr. */
#include "test_util.h"

#include <fcntl.h>

enum { kChunkBytes = 256 * 1024 };
static unsigned char chunk[kChunkBytes];

int main(int argc, char **argv) {
  check(argc == 3);
  long mib = atol(argv[1]);
  check(mib > 0);
  int fd = STDOUT_FILENO;
  if (strcmp(argv[2], "open") == 0) {
    fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    check(fd >= 0);
  } else {
    check(strcmp(argv[2], "stdout") == 0);
  }
  uint64_t state = 88172645463325252ull;
  for (size_t i = 0; i < sizeof chunk; i++) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    chunk[i] = (unsigned char)state;
  }
  long writes = mib * (1024 * 1024 / kChunkBytes);
  for (long i = 0; i < writes; i++) {
    chunk[0] = (unsigned char)i; /* each write differs a little */
    check(write(fd, chunk, sizeof chunk) == (ssize_t)sizeof chunk);
  }
  char line[64];
  int n = snprintf(line, sizeof line, "wrote %ld MiB in %ld writes\n", mib, writes);
  tu_write_all(STDERR_FILENO, line, (size_t)n);
  return 0;
}

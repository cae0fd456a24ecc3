/* File read loop: ITERATIONS (default 100,000) 4 KiB preads of a 1 MiB
 * temporary file written once at the start (unlinked right after creation,
 * so nothing is left behind). Reads only: with the fast path every pread
 * (and the fstat before it) runs in the program without a stop.  See
 * file_read_loop.md. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kBlockBytes = 4096, kBlocks = 256 };

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 100000;
  const char *tmpdir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/repro-file-read-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  unlink(path);

  static unsigned char block[kBlockBytes];
  for (int b = 0; b < kBlocks; b++) {
    memset(block, b, sizeof block);
    if (pwrite(fd, block, sizeof block, (off_t)b * kBlockBytes) != (ssize_t)sizeof block) {
      perror("pwrite");
      return 1;
    }
  }
  uint64_t checksum = 0;
  for (long i = 0; i < iterations; i++) {
    ssize_t n = pread(fd, block, sizeof block, (off_t)((i * 7) % kBlocks) * kBlockBytes);
    if (n < 0) {
      perror("pread");
      return 1;
    }
    for (ssize_t j = 0; j < n; j += 512) {
      checksum = checksum * 31 + block[j];
    }
  }
  close(fd);
  printf("file_read_loop: %ld reads, checksum=%016llx\n", iterations, (unsigned long long)checksum);
  return 0;
}

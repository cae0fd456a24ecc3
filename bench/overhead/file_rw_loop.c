/* File I/O loop: ITERATIONS (default 50,000) rounds of one 4 KiB pwrite and
 * one 4 KiB pread on a 1 MiB temporary file (unlinked right after creation,
 * so nothing is left behind).  Two syscalls per round, and every pread's
 * 4 KiB of data must be stored in the trace.  See file_rw_loop.md. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kBlockBytes = 4096, kBlocks = 256 };

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 50000;
  const char *tmpdir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/repro-file-rw-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  unlink(path);

  static unsigned char out[kBlockBytes], in[kBlockBytes];
  uint64_t checksum = 0;
  for (long i = 0; i < iterations; i++) {
    memset(out, (int)(i & 0xff), sizeof out);
    out[0] = (unsigned char)(i >> 8);
    off_t write_off = (off_t)(i % kBlocks) * kBlockBytes;
    off_t read_off = (off_t)((i * 7) % kBlocks) * kBlockBytes;
    if (pwrite(fd, out, sizeof out, write_off) != (ssize_t)sizeof out) {
      perror("pwrite");
      return 1;
    }
    ssize_t n = pread(fd, in, sizeof in, read_off);
    if (n < 0) {
      perror("pread");
      return 1;
    }
    for (ssize_t j = 0; j < n; j += 512) {
      checksum = checksum * 31 + in[j];
    }
  }
  close(fd);
  printf("file_rw_loop: %ld rounds, checksum=%016llx\n", iterations, (unsigned long long)checksum);
  return 0;
}

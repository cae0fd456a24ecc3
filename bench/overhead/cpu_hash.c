/* CPU-bound, one thread: fill an 8 MiB buffer from a xorshift generator, then
 * hash it PASSES times (default 40) with 64-bit FNV-1a, byte by byte.  About
 * 0.5 s natively and a few dozen syscalls in all (loader, one mmap, one
 * write).  See cpu_hash.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kBufferBytes = 8 << 20 };

static uint64_t fnv1a(const unsigned char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h = (h ^ p[i]) * 0x100000001b3ULL;
  }
  return h;
}

int main(int argc, char **argv) {
  int passes = argc > 1 ? atoi(argv[1]) : 40;
  unsigned char *buf = malloc(kBufferBytes);
  if (!buf) {
    return 1;
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < kBufferBytes; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (unsigned char)x;
  }
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int p = 0; p < passes; p++) {
    h = fnv1a(buf, kBufferBytes, h);
  }
  printf("cpu_hash: %d passes over %d bytes, hash=%016llx\n", passes, kBufferBytes,
         (unsigned long long)h);
  free(buf);
  return 0;
}

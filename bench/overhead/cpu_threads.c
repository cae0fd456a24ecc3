/* CPU-bound, several threads: THREADS (default 2) threads each hash their own
 * 4 MiB buffer PASSES times (default 60) with 64-bit FNV-1a, independently,
 * and are joined at the end.  Natively they run in parallel on the cores;
 * recorded, repro runs one tracee thread at a time and switches between them
 * only at time-slice preemptions.  See cpu_threads.md. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kBufferBytes = 4 << 20, kMaxThreads = 16 };

struct worker {
  pthread_t thread;
  int index;
  int passes;
  uint64_t hash;
};

static void *work(void *arg) {
  struct worker *w = arg;
  unsigned char *buf = malloc(kBufferBytes);
  if (!buf) {
    return NULL;
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL + (uint64_t)w->index;
  for (size_t i = 0; i < kBufferBytes; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (unsigned char)x;
  }
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int p = 0; p < w->passes; p++) {
    for (size_t i = 0; i < kBufferBytes; i++) {
      h = (h ^ buf[i]) * 0x100000001b3ULL;
    }
  }
  w->hash = h;
  free(buf);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int passes = argc > 2 ? atoi(argv[2]) : 60;
  if (threads < 1 || threads > kMaxThreads) {
    fprintf(stderr, "cpu_threads: THREADS must be 1..%d\n", kMaxThreads);
    return 2;
  }
  struct worker workers[kMaxThreads];
  for (int i = 0; i < threads; i++) {
    workers[i] = (struct worker){.index = i, .passes = passes};
    if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) {
      return 1;
    }
  }
  uint64_t combined = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(workers[i].thread, NULL);
    combined ^= workers[i].hash;
  }
  printf("cpu_threads: %d threads x %d passes, hash=%016llx\n", threads, passes,
         (unsigned long long)combined);
  return 0;
}

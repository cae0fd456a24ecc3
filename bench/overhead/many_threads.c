/* Many threads: ROUNDS times (default 5), create THREADS short threads
 * (default 200) all at once, then join them all.  Each thread does a few
 * microseconds of arithmetic and returns.  Measures clone, thread exit and
 * join, and the scheduler's handling of many runnable threads.  See
 * many_threads.md. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxThreads = 1000 };

static void *work(void *arg) {
  uint64_t x = (uint64_t)(uintptr_t)arg + 1;
  for (int i = 0; i < 2000; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  return (void *)(uintptr_t)(x >> 48);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 200;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (threads < 1 || threads > kMaxThreads) {
    fprintf(stderr, "many_threads: THREADS must be 1..%d\n", kMaxThreads);
    return 2;
  }
  static pthread_t ids[kMaxThreads];
  uint64_t sum = 0;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < threads; i++) {
      if (pthread_create(&ids[i], NULL, work, (void *)(uintptr_t)i) != 0) {
        perror("pthread_create");
        return 1;
      }
    }
    for (int i = 0; i < threads; i++) {
      void *result;
      pthread_join(ids[i], &result);
      sum += (uint64_t)(uintptr_t)result;
    }
  }
  printf("many_threads: %d rounds of %d threads, sum=%llu\n", rounds, threads,
         (unsigned long long)sum);
  return 0;
}

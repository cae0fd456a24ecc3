/* Two threads compute hashes over their own buffers for a few hundred
 * milliseconds each, without a single syscall, while the other is ready:
 * the recorder must preempt them inside their hot loops, many times with
 * short time slices, and replay must find each of those points again
 * (cheaply: see docs/replaying.md, "Preemption points"). Each thread
 * also bumps a shared atomic counter as it goes, so the interleaving shows
 * in memory the other thread reads. */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define BUFFER_WORDS 4096
#define ROUNDS 40000

static atomic_ulong progress;

struct job {
  uint64_t seed;
  uint64_t buffer[BUFFER_WORDS];
  uint64_t hash;
  unsigned long progress_seen; /* the other thread's share, as seen */
};

static void *crunch(void *arg) {
  struct job *job = arg;
  uint64_t x = job->seed;
  for (int i = 0; i < BUFFER_WORDS; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    job->buffer[i] = x;
  }
  uint64_t h = 1469598103934665603ull;
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < BUFFER_WORDS; i++) {
      h = (h ^ job->buffer[i]) * 1099511628211ull;
      job->buffer[i] = h >> 3;
    }
    job->progress_seen = atomic_fetch_add(&progress, 1);
  }
  job->hash = h;
  return NULL;
}

static struct job jobs[2] = {{.seed = 0x9e3779b97f4a7c15ull}, {.seed = 0xbf58476d1ce4e5b9ull}};

int main(void) {
  test_init();
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) {
    check(pthread_create(&threads[i], NULL, crunch, &jobs[i]) == 0);
  }
  for (int i = 0; i < 2; i++) {
    check(pthread_join(threads[i], NULL) == 0);
  }
  check(atomic_load(&progress) == 2 * ROUNDS);
  say_hex("hash of thread 0", jobs[0].hash);
  say_hex("hash of thread 1", jobs[1].hash);
  /* Where each thread stood when it finished depends on the interleaving. */
  say_nondet_num("counter at thread 0's last round", (long)jobs[0].progress_seen);
  say_nondet_num("counter at thread 1's last round", (long)jobs[1].progress_seen);
  finish();
  return 0;
}

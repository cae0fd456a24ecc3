/* N threads increment a shared counter under a pthread mutex; the total must
 * be exact. */
#include "test_util.h"

#include <pthread.h>

#define NTHREADS 4
#define ITERS 5000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long per_thread[NTHREADS];

static void *worker(void *arg) {
  long idx = (long)arg;
  for (int i = 0; i < ITERS; i++) {
    check(pthread_mutex_lock(&lock) == 0);
    long c = counter; /* deliberately a read-modify-write: the lock makes it safe */
    counter = c + 1;
    per_thread[idx]++;
    check(pthread_mutex_unlock(&lock) == 0);
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t threads[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) check(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (int i = 0; i < NTHREADS; i++) check(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < NTHREADS; i++) check(per_thread[i] == ITERS);
  check(counter == (long)NTHREADS * ITERS);
  say_num("threads", NTHREADS);
  say_num("counter", counter);
  /* trylock on a held mutex fails with EBUSY. */
  check(pthread_mutex_lock(&lock) == 0);
  check(pthread_mutex_trylock(&lock) == EBUSY);
  check(pthread_mutex_unlock(&lock) == 0);
  say("trylock on held mutex: EBUSY\n");
  finish();
  return 0;
}

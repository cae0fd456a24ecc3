/* Four threads increment one counter with atomic fetch-add and track a
 * maximum with a compare-and-swap loop; both results must be exact. */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define NTHREADS 4
#define ITERS 50000

static atomic_long counter;
static atomic_long maximum;

static void *worker(void *arg) {
  long me = (long)arg;
  for (long i = 0; i < ITERS; i++) {
    long v = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1;
    if (i % 64 == 0 || i == ITERS - 1) {
      long cur = atomic_load(&maximum);
      while (v > cur && !atomic_compare_exchange_weak(&maximum, &cur, v)) {
      }
    }
  }
  (void)me;
  return NULL;
}

int main(void) {
  test_init();
  pthread_t threads[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) check(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (int i = 0; i < NTHREADS; i++) check(pthread_join(threads[i], NULL) == 0);
  check(atomic_load(&counter) == (long)NTHREADS * ITERS);
  /* The thread that did the very last increment saw the total and stored it. */
  check(atomic_load(&maximum) == (long)NTHREADS * ITERS);
  say_num("counter", atomic_load(&counter));
  say_num("maximum", atomic_load(&maximum));
  finish();
  return 0;
}

/* A deliberate data race: two threads do a non-atomic counter++ 100000 times
 * each, yielding every 1000 iterations. Lost updates make the final count
 * vary, so it is printed with "~ "; only its bounds are checked. A replay must
 * reproduce the recorded count exactly. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>

#define ITERS 100000

static volatile long counter;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 1; i <= ITERS; i++) {
    counter++;
    if (i % 1000 == 0) sched_yield();
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t a, b;
  check(pthread_create(&a, NULL, worker, NULL) == 0);
  check(pthread_create(&b, NULL, worker, NULL) == 0);
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, NULL) == 0);
  long c = counter;
  check(c > 0 && c <= 2 * ITERS);
  say("count within (0, 200000]\n");
  say_nondet_num("count", c);
  say_nondet_num("lost updates", 2 * ITERS - c);
  finish();
  return 0;
}

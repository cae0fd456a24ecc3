/* A data race to look at in gdb (tests/e2e/scenarios/gdb_replay.sh): two
 * threads do a non-atomic counter++ 2000 times each, yielding every 500
 * iterations, so updates get lost and the total varies from run to run.
 * report_total() is the function the scenario breaks at; `doubled` is
 * written once, after it, for a watchpoint to catch. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>

#define ITERS 2000

volatile long counter;
volatile long doubled;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 1; i <= ITERS; i++) {
    counter++;
    if (i % 500 == 0) sched_yield();
  }
  return NULL;
}

__attribute__((noinline)) void report_total(long total) {
  check(total > 0 && total <= 2 * ITERS);
  say("count within (0, 4000]\n");
  say_nondet_num("count", total);
}

int main(void) {
  test_init();
  pthread_t a, b;
  check(pthread_create(&a, NULL, worker, NULL) == 0);
  check(pthread_create(&b, NULL, worker, NULL) == 0);
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, NULL) == 0);
  report_total(counter);
  doubled = 2 * counter;
  say_nondet_num("doubled", doubled);
  finish();
  return 0;
}

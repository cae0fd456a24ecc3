/* One thread spins on an atomic flag WITHOUT making syscalls while the other
 * does some work, publishes the result and then sets the flag. A tracer that
 * runs one thread at a time must preempt the spinner for this to finish.
 * (The alarm(20) safety net turns a starved spinner into a failure.) */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int flag;
static unsigned long long result; /* published before flag, read after it */

static unsigned long long work(void) {
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < 300000; i++) {
    h ^= (unsigned long long)i;
    h *= 1099511628211ull;
  }
  return h;
}

static void *setter(void *arg) {
  (void)arg;
  result = work();
  atomic_store_explicit(&flag, 1, memory_order_release);
  return NULL;
}

int main(void) {
  test_init();
  pthread_t t;
  check(pthread_create(&t, NULL, setter, NULL) == 0);
  unsigned long long spins = 0;
  while (!atomic_load_explicit(&flag, memory_order_acquire)) {
    __builtin_ia32_pause();
    spins++;
  }
  unsigned long long seen = result;
  check(pthread_join(t, NULL) == 0);
  check(seen == work());
  say("spinner saw the flag\n");
  say_hex("published result", seen);
  say_nondet_num("spins", (long long)spins);
  finish();
  return 0;
}

/* __thread variables start from their initialiser in every thread and are
 * private to it; pthread_key_create destructors run at thread exit with the
 * thread's own value. */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define NTHREADS 3

static __thread long tls_counter = 5;
static __thread char tls_name[16] = "init";
static pthread_key_t key;
static atomic_long destructor_sum;
static atomic_int destructor_calls;
static long values[NTHREADS];
static uintptr_t addrs[NTHREADS];

static void destructor(void *v) {
  atomic_fetch_add(&destructor_sum, (long)v);
  atomic_fetch_add(&destructor_calls, 1);
}

static void *worker(void *arg) {
  long idx = (long)arg;
  check(tls_counter == 5);
  check(strcmp(tls_name, "init") == 0);
  for (long i = 0; i <= idx; i++) tls_counter += 10;
  tls_name[0] = (char)('a' + idx);
  check(pthread_getspecific(key) == NULL);
  check(pthread_setspecific(key, (void *)(100 + idx)) == 0);
  /* Give the other threads a chance to run and (wrongly) clobber our copy. */
  sched_yield();
  check(tls_name[0] == 'a' + idx);
  check(pthread_getspecific(key) == (void *)(100 + idx));
  values[idx] = tls_counter;
  addrs[idx] = (uintptr_t)&tls_counter;
  return NULL;
}

int main(void) {
  test_init();
  check(pthread_key_create(&key, destructor) == 0);
  tls_counter = 1;
  pthread_t threads[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) check(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (int i = 0; i < NTHREADS; i++) check(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < NTHREADS; i++) {
    check(values[i] == 5 + 10 * (i + 1));
    check(addrs[i] != (uintptr_t)&tls_counter);
    for (int j = 0; j < i; j++) check(addrs[i] != addrs[j]);
    struct line l;
    line_init(&l);
    line_str(&l, "thread ");
    line_num(&l, i);
    line_str(&l, " tls_counter=");
    line_num(&l, values[i]);
    line_say(&l);
    say_nondet_hex("tls address", addrs[i]);
  }
  check(tls_counter == 1);
  check(strcmp(tls_name, "init") == 0);
  say_num("main tls_counter", tls_counter);
  check(atomic_load(&destructor_calls) == NTHREADS);
  check(atomic_load(&destructor_sum) == 100 + 101 + 102);
  say_num("destructor calls", atomic_load(&destructor_calls));
  say_num("destructor value sum", atomic_load(&destructor_sum));
  check(pthread_key_delete(key) == 0);
  finish();
  return 0;
}

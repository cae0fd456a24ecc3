/* A thread's exit value reaches pthread_join three ways: returned from the
 * start routine, passed to pthread_exit() from a nested call, and
 * PTHREAD_CANCELED for a thread cancelled while blocked in a cancellation
 * point (glibc cancels with an internal real-time signal). */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int sleeper_started;

static void *returns_value(void *arg) { return (void *)((long)arg * 2); }

static void nested_exit(long v) {
  pthread_exit((void *)(v + 1000));
}

static void *calls_pthread_exit(void *arg) {
  nested_exit((long)arg);
  return NULL; /* not reached */
}

static void *blocks_forever(void *arg) {
  (void)arg;
  int fds[2];
  check(pipe(fds) == 0);
  atomic_store(&sleeper_started, 1);
  char c;
  /* read() is a cancellation point; nobody ever writes. */
  for (;;) read(fds[0], &c, 1);
  return NULL;
}

int main(void) {
  test_init();
  pthread_t t;
  void *ret;

  check(pthread_create(&t, NULL, returns_value, (void *)21l) == 0);
  check(pthread_join(t, &ret) == 0);
  check((long)ret == 42);
  say_num("returned from start routine", (long)ret);

  check(pthread_create(&t, NULL, calls_pthread_exit, (void *)7l) == 0);
  check(pthread_join(t, &ret) == 0);
  check((long)ret == 1007);
  say_num("passed to pthread_exit", (long)ret);

  check(pthread_create(&t, NULL, blocks_forever, NULL) == 0);
  for (int i = 0; !atomic_load(&sleeper_started); i++) {
    check(i < 2000);
    sleep_ms(1);
  }
  check(pthread_cancel(t) == 0);
  check(pthread_join(t, &ret) == 0);
  check(ret == PTHREAD_CANCELED);
  say("cancelled thread: PTHREAD_CANCELED\n");
  finish();
  return 0;
}

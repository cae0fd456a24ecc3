/* A signal aimed at one thread with pthread_kill runs its handler in that
 * thread (the handler sees the target's tid), even though another thread
 * (main) also has the signal unblocked. */
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static atomic_int handler_tid;
static atomic_int target_tid;
static atomic_int stop;

static void on_usr1(int sig) {
  (void)sig;
  atomic_store(&handler_tid, (int)tu_gettid());
}

static void *target(void *arg) {
  (void)arg;
  atomic_store(&target_tid, (int)tu_gettid());
  /* Sleep in short naps until told to stop (bounded by the alarm). */
  while (!atomic_load(&stop)) sleep_ms(1);
  return NULL;
}

int main(void) {
  test_init();
  set_handler(SIGUSR1, on_usr1, 0);

  pthread_t t;
  check(pthread_create(&t, NULL, target, NULL) == 0);
  for (int i = 0; atomic_load(&target_tid) == 0; i++) {
    check(i < 2000);
    sleep_ms(1);
  }
  check(pthread_kill(t, SIGUSR1) == 0);
  for (int i = 0; atomic_load(&handler_tid) == 0; i++) {
    check(i < 2000);
    sleep_ms(1);
  }
  check(atomic_load(&handler_tid) == atomic_load(&target_tid));
  check(atomic_load(&handler_tid) != getpid());
  say("handler ran in the target thread\n");

  /* And to ourselves: pthread_kill(self) runs it here before returning. */
  atomic_store(&handler_tid, 0);
  check(pthread_kill(pthread_self(), SIGUSR1) == 0);
  check(atomic_load(&handler_tid) == getpid());
  say("pthread_kill(self): handler ran in main before returning\n");

  atomic_store(&stop, 1);
  check(pthread_join(t, NULL) == 0);
  /* Signal 0 checks the thread exists. */
  check(pthread_kill(pthread_self(), 0) == 0);
  finish();
  return 0;
}

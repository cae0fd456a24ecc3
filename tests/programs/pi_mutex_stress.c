/* Priority-inheritance mutexes under contention: 4 threads take a
 * PTHREAD_PRIO_INHERIT mutex 3000 times each (futex LOCK_PI/UNLOCK_PI when
 * contended, trylock now and then: TRYLOCK_PI), yielding inside the
 * critical section so that others block on it. Then raw
 * FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI: two waiters on a condition
 * word are requeued onto a PI futex the main thread holds, and take it in
 * turn. The kernel writes the PI futex words itself (owner tid,
 * FUTEX_WAITERS); the totals are exact. */
#include "test_util.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#define THREADS 4
#define ROUNDS 3000

static pthread_mutex_t mutex;
static long counter;
static long in_section;
static atomic_long trylock_busy;

static void *contend(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < ROUNDS; i++) {
    if (i % 7 == 3) {
      int r = pthread_mutex_trylock(&mutex);
      if (r == EBUSY) {
        atomic_fetch_add(&trylock_busy, 1);
        check(pthread_mutex_lock(&mutex) == 0);
      } else {
        check(r == 0);
      }
    } else {
      check(pthread_mutex_lock(&mutex) == 0);
    }
    check(in_section == 0);
    in_section = id + 1;
    counter++;
    if (i % 50 == 0) {
      sched_yield(); /* others pile up on the mutex */
    }
    check(in_section == id + 1);
    in_section = 0;
    check(pthread_mutex_unlock(&mutex) == 0);
  }
  return NULL;
}

/* ---- requeue-PI with raw futexes ---- */

static _Atomic uint32_t cond_word;
static _Atomic uint32_t pi_word;
static atomic_int waiters_ready;
static long requeue_sum;

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val, long val2,
                  _Atomic uint32_t *uaddr2, uint32_t val3) {
  return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void pi_unlock(void) {
  uint32_t tid = (uint32_t)tu_gettid();
  uint32_t expected = tid;
  if (!atomic_compare_exchange_strong(&pi_word, &expected, 0)) {
    check(futex(&pi_word, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, 0, NULL, 0) == 0);
  }
}

static void *requeue_waiter(void *arg) {
  long id = (long)arg;
  uint32_t seen = atomic_load(&cond_word);
  atomic_fetch_add(&waiters_ready, 1);
  long r;
  do {
    r = futex(&cond_word, FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, seen, 0, &pi_word, 0);
    if (r != 0) {
      /* The word moved on before we slept: wait with the new value. */
      check(errno == EAGAIN || errno == EINTR);
      seen = atomic_load(&cond_word);
    }
  } while (r != 0);
  /* Back from the requeue: we own the PI futex. */
  check((atomic_load(&pi_word) & FUTEX_TID_MASK) == (uint32_t)tu_gettid());
  requeue_sum += id;
  pi_unlock();
  return NULL;
}

static void requeue_pi(void) {
  /* The main thread holds the PI futex while the waiters are requeued. */
  uint32_t zero = 0;
  check(atomic_compare_exchange_strong(&pi_word, &zero, (uint32_t)tu_gettid()));
  pthread_t t[2];
  for (long i = 0; i < 2; i++) {
    check(pthread_create(&t[i], NULL, requeue_waiter, (void *)(i + 1)) == 0);
  }
  while (atomic_load(&waiters_ready) < 2) {
    sched_yield();
  }
  /* Let them reach the kernel (a waiter that is late sees EAGAIN and
   * waits again with the new value). */
  long requeued = 0;
  for (int round = 0; requeued < 2 && round < 2000; round++) {
    uint32_t value = atomic_fetch_add(&cond_word, 1) + 1;
    /* nr_wake must be 1 for the PI requeue; the rest are requeued. */
    long r = futex(&cond_word, FUTEX_CMP_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 1, 2, &pi_word, value);
    check(r >= 0);
    requeued += r;
    if (requeued < 2) {
      usleep(1000);
    }
  }
  check(requeued == 2);
  say("requeue-pi: both waiters requeued onto the PI futex\n");
  pi_unlock();
  for (int i = 0; i < 2; i++) {
    check(pthread_join(t[i], NULL) == 0);
  }
  check(atomic_load(&pi_word) == 0);
  say_num("requeue-pi: waiters took the PI futex, id sum", requeue_sum);
}

int main(void) {
  test_init();
  pthread_mutexattr_t attr;
  check(pthread_mutexattr_init(&attr) == 0);
  check(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) == 0);
  check(pthread_mutex_init(&mutex, &attr) == 0);
  int protocol = -1;
  check(pthread_mutexattr_getprotocol(&attr, &protocol) == 0 && protocol == PTHREAD_PRIO_INHERIT);

  pthread_t threads[THREADS];
  for (long i = 0; i < THREADS; i++) {
    check(pthread_create(&threads[i], NULL, contend, (void *)i) == 0);
  }
  for (int i = 0; i < THREADS; i++) {
    check(pthread_join(threads[i], NULL) == 0);
  }
  check(counter == (long)THREADS * ROUNDS);
  say_num("pi mutex: counter", counter);
  say_nondet_num("pi mutex: trylocks that found it busy", atomic_load(&trylock_busy));

  /* A held PI mutex: trylock by its owner is EBUSY (not recursive). */
  check(pthread_mutex_lock(&mutex) == 0);
  check(pthread_mutex_trylock(&mutex) == EBUSY);
  check(pthread_mutex_unlock(&mutex) == 0);
  check(pthread_mutex_destroy(&mutex) == 0);

  requeue_pi();
  finish();
  return 0;
}

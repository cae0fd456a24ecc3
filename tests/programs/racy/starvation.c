/* starvation: a ring buffer whose producer never checks for room.
 *
 * The producer builds ITEMS items (about a millisecond of work each),
 * stamps each with clock_gettime() and puts it in a ring of SLOTS slots,
 * then calls sched_yield() so that the consumer "keeps up" (the bug: a
 * yield is no promise, it should wait while the ring is full). The
 * consumer takes the items in order, yielding while the ring is empty, and
 * checks each one's sequence number.
 *
 * It fails ("item N overwritten" on stderr, exit 1) only if the consumer
 * falls more than SLOTS items behind: held for over SLOTS of the
 * producer's steps, each making two syscalls. Natively that takes the
 * consumer off the CPU for some 16 ms while the producer runs on (with
 * 40 us items, stalls of 1 ms that a busy machine gives all the time made
 * it fail in 2 runs of 3). A plain recording switches at every yield, so
 * the two alternate item by item; a chaos schedule that starves the
 * consumer for a long stretch finds it. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>

#define SLOTS 16
#define ITEMS 40
#define WORK_ROUNDS 1000000 /* about 1 ms of work per item here (-O1) */

struct item {
  long seq;
  unsigned long value;
  struct timespec stamp;
};

static struct item ring[SLOTS];
static long head; /* items put in the ring so far */
static int consumer_running;

static unsigned long build(long seq) {
  unsigned long h = 1469598103934665603ul ^ (unsigned long)seq;
  for (int i = 0; i < WORK_ROUNDS; i++) {
    h = (h ^ (unsigned long)i) * 1099511628211ul;
  }
  return h;
}

static void *producer(void *arg) {
  (void)arg;
  /* Start once the consumer runs: thread start-up is not the bug. */
  while (!__atomic_load_n(&consumer_running, __ATOMIC_ACQUIRE)) {
    sched_yield();
  }
  for (long seq = 0; seq < ITEMS; seq++) {
    struct item *slot = &ring[seq % SLOTS];
    unsigned long value = build(seq);
    check(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &slot->stamp) == 0);
    slot->value = value;
    slot->seq = seq;
    __atomic_store_n(&head, seq + 1, __ATOMIC_RELEASE);
    sched_yield();
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  __atomic_store_n(&consumer_running, 1, __ATOMIC_RELEASE);
  for (long seq = 0; seq < ITEMS; seq++) {
    while (__atomic_load_n(&head, __ATOMIC_ACQUIRE) <= seq) {
      sched_yield();
    }
    struct timespec now;
    check(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now) == 0);
    const struct item *slot = &ring[seq % SLOTS];
    if (slot->seq != seq) {
      struct line l;
      line_init(&l);
      line_str(&l, "item ");
      line_num(&l, seq);
      line_str(&l, " overwritten before it was consumed (the slot holds item ");
      line_num(&l, slot->seq);
      line_str(&l, ")\n");
      tu_write_all(2, l.buf, l.len);
      _exit(1);
    }
    sched_yield();
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t p, c;
  check(pthread_create(&p, NULL, producer, NULL) == 0);
  check(pthread_create(&c, NULL, consumer, NULL) == 0);
  check(pthread_join(p, NULL) == 0);
  check(pthread_join(c, NULL) == 0);
  say("every item consumed before its slot was reused\n");
  finish();
  return 0;
}

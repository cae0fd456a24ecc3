/* depth2_order: a record published before it is complete.
 *
 * The producer fills one status record in its 3rd of 8 steps: it stores the
 * sequence number, publishes the record, and only then asks uname() for the
 * host name and seals the record with its checksum (the bug: publishing
 * belongs after the seal). The consumer looks at the published record in
 * its 6th of 8 steps and checks the seal. Each step makes a syscall.
 *
 * It fails ("torn record" on stderr, exit 1) only if the consumer's 6th
 * step falls between the producer's publish and its seal: the producer held
 * at uname() while the consumer runs on. Natively the producer, started
 * first, is done long before the consumer's 6th step. A plain recording
 * runs one thread to its end or switches where neither is in the middle of
 * anything; two ordering constraints, one preemption at one syscall, is
 * what a depth-2 chaos schedule finds. */
#include "test_util.h"

#include <pthread.h>
#include <sys/utsname.h>

#define STEPS 8
#define PUBLISH_STEP 3
#define CHECK_STEP 6

struct record {
  long seq;
  char host[sizeof(((struct utsname *)0)->nodename)];
  unsigned long seal;
};

static struct record slot;
static struct record *volatile published;

static unsigned long seal_of(const struct record *r) {
  unsigned long h = 1469598103934665603ul ^ (unsigned long)r->seq;
  for (size_t i = 0; i < sizeof r->host; i++) {
    h = (h ^ (unsigned char)r->host[i]) * 1099511628211ul;
  }
  return h | 1;  /* never 0, the seal of a record not sealed yet */
}

static void *producer(void *arg) {
  (void)arg;
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_getpid);
    if (step == PUBLISH_STEP) {
      slot.seq = step;
      published = &slot;
      struct utsname name;
      check(uname(&name) == 0);
      memcpy(slot.host, name.nodename, sizeof slot.host);
      slot.seal = seal_of(&slot);
    }
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_getppid);
    if (step == CHECK_STEP) {
      struct record *r = published;
      if (r != NULL && r->seal != seal_of(r)) {
        static const char msg[] = "torn record: the consumer read a record not sealed yet\n";
        tu_write_all(2, msg, sizeof msg - 1);
        _exit(1);
      }
    }
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t p, q;
  check(pthread_create(&p, NULL, producer, NULL) == 0);
  check(pthread_create(&q, NULL, consumer, NULL) == 0);
  check(pthread_join(p, NULL) == 0);
  check(pthread_join(q, NULL) == 0);
  check(published == &slot && slot.seal == seal_of(&slot));
  say("no torn record\n");
  finish();
  return 0;
}

/* three_thread_order: a job dispatched to a session opened but not yet
 * configured.
 *
 * Three threads of 8 steps, each step a syscall:
 *   A (opener)     opens the session in its 2nd step, reads its limits with
 *                  getrlimit() in the 3rd and 4th, and only then marks it
 *                  configured (the bug: it should open it last);
 *   C (client)     submits a job in its 5th step if the session is open;
 *   B (dispatcher) in its 3rd step dispatches a submitted job, which needs
 *                  a configured session.
 * It fails ("unconfigured session" on stderr, exit 1) only in the order
 * A opens, then C submits, then B dispatches, all before A marks the
 * session configured: A held inside its two steps while C runs ahead of B
 * by more than two steps. Natively the threads start tens of microseconds
 * apart and each finishes in a few, in the order created. Running each
 * thread to its end, in any order, never splits A's steps; running them in
 * alternation has B's 3rd step before C's 5th. */
#include "test_util.h"

#include <pthread.h>
#include <sys/resource.h>

#define STEPS 8

struct session {
  volatile int open;
  volatile int configured;
  volatile int jobs;
  struct rlimit files, stack;
};

static struct session session;

static void *opener(void *arg) {
  (void)arg;
  for (int step = 1; step <= STEPS; step++) {
    if (step == 3) {
      check(getrlimit(RLIMIT_NOFILE, &session.files) == 0);
    } else if (step == 4) {
      check(getrlimit(RLIMIT_STACK, &session.stack) == 0);
      session.configured = 1;
    } else {
      syscall(SYS_getpid);
    }
    if (step == 2) {
      session.open = 1;
    }
  }
  return NULL;
}

static void *dispatcher(void *arg) {
  (void)arg;
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_getppid);
    if (step == 3 && session.jobs > 0 && !session.configured) {
      static const char msg[] = "job dispatched to an unconfigured session\n";
      tu_write_all(2, msg, sizeof msg - 1);
      _exit(1);
    }
  }
  return NULL;
}

static void *client(void *arg) {
  (void)arg;
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_gettid);
    if (step == 5 && session.open) {
      session.jobs++;
    }
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t a, b, c;
  check(pthread_create(&a, NULL, opener, NULL) == 0);
  check(pthread_create(&b, NULL, dispatcher, NULL) == 0);
  check(pthread_create(&c, NULL, client, NULL) == 0);
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, NULL) == 0);
  check(pthread_join(c, NULL) == 0);
  check(session.open && session.configured);
  say("no job dispatched to an unconfigured session\n");
  finish();
  return 0;
}

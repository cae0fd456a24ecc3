/* Check then use: a server thread handles requests on the current session:
 * it checks that the shared session pointer is not NULL, reads the time
 * (clock_gettime: the vDSO natively, a syscall when recorded), and then
 * stamps and counts the request through the pointer, which it reads again.
 * A closer thread closes the session once half the requests are served: it
 * sets the pointer to NULL and frees the session. If the close comes
 * between the check and the use, the server dereferences NULL and dies of
 * SIGSEGV. Each request spends most of its time preparing the reply,
 * outside that window, so natively the close seldom lands in it (see
 * docs/hunting.md); a scheduler that switches threads at the clock call
 * shows it. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>

struct session {
  long requests;
  struct timespec last_request;
};

/* Requests the server handles, and loop turns per reply (the work done
 * outside the window): more turns make the crash rarer natively. */
#define REQUESTS 40
#ifndef REPLY_TURNS
#define REPLY_TURNS 5000
#endif

/* Not static: the code that opens sessions would live in other files. */
struct session *current;
static volatile long served;
static volatile unsigned long sink;

static void work(long turns) {
  for (long i = 0; i < turns; i++) sink += (unsigned long)i;
}

static void *server(void *arg) {
  (void)arg;
  long handled = 0;
  for (int i = 0; i < REQUESTS; i++) {
    work(REPLY_TURNS);
    if (current != NULL) { /* BUG: checked here, read again below */
      struct timespec now;
      check(clock_gettime(CLOCK_REALTIME, &now) == 0);
      current->last_request = now;
      current->requests++;
      handled++;
    }
    served++;
  }
  return (void *)handled;
}

static void *closer(void *arg) {
  (void)arg;
  while (served < REQUESTS / 2) sched_yield();
  struct session *closing = current;
  current = NULL;
  free(closing);
  return NULL;
}

int main(void) {
  test_init();
  current = calloc(1, sizeof *current);
  check(current != NULL);
  pthread_t a, b;
  check(pthread_create(&a, NULL, server, NULL) == 0);
  check(pthread_create(&b, NULL, closer, NULL) == 0);
  void *handled;
  check(pthread_join(a, &handled) == 0);
  check(pthread_join(b, NULL) == 0);
  say_nondet_num("requests handled before the close", (long)handled);
  finish();
  return 0;
}

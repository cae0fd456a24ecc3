/* Check then use: a server thread handles requests on the current session,
 * checking that the shared session pointer is not NULL, logging the request
 * (a write(2)), and then counting it through the pointer, which it reads
 * again. A closer thread closes the session meanwhile: it sets the pointer
 * to NULL and frees the session. If the close comes between the check and
 * the use, the server dereferences NULL and dies of SIGSEGV. Each request
 * spends most of its time preparing the reply, outside that window, so
 * natively the close seldom lands in it (see docs/hunting.md); a scheduler
 * that switches threads at the log write shows it. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>

struct session {
  long requests;
};

/* Requests the server handles, and loop turns per reply (the work done
 * outside the window): more turns make the crash rarer natively. */
#define REQUESTS 40
#ifndef REPLY_TURNS
#define REPLY_TURNS 20000
#endif
/* The closer works about half as long as the server before it closes. */
#define CLOSE_AFTER_TURNS (REQUESTS * REPLY_TURNS / 2)

static struct session *current;
static int log_fd;
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
      static const char entry[] = "request handled\n";
      tu_write_all(log_fd, entry, sizeof entry - 1);
      current->requests++;
      handled++;
    }
  }
  return (void *)handled;
}

static void *closer(void *arg) {
  (void)arg;
  work(CLOSE_AFTER_TURNS);
  struct session *closing = current;
  current = NULL;
  free(closing);
  return NULL;
}

int main(void) {
  test_init();
  log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  check(log_fd >= 0);
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

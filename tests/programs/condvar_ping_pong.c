/* Two threads take strict turns through a mutex + condition variable; each
 * appends its letter to a log. Strict alternation makes the log deterministic. */
#include "test_util.h"

#include <pthread.h>

#define ROUNDS 20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn; /* 0: ping's turn, 1: pong's turn */
static char log_buf[2 * ROUNDS + 1];
static int log_len;

struct player {
  int me;
  char letter;
};

static void *play(void *arg) {
  struct player *p = (struct player *)arg;
  for (int r = 0; r < ROUNDS; r++) {
    check(pthread_mutex_lock(&lock) == 0);
    while (turn != p->me) check(pthread_cond_wait(&cond, &lock) == 0);
    log_buf[log_len++] = p->letter;
    turn = 1 - p->me;
    check(pthread_cond_broadcast(&cond) == 0);
    check(pthread_mutex_unlock(&lock) == 0);
  }
  return NULL;
}

int main(void) {
  test_init();
  struct player ping = {0, 'P'}, pong = {1, 'Q'};
  pthread_t a, b;
  /* Start pong first so that it usually has to wait for ping. */
  check(pthread_create(&b, NULL, play, &pong) == 0);
  check(pthread_create(&a, NULL, play, &ping) == 0);
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, NULL) == 0);
  check(log_len == 2 * ROUNDS);
  for (int i = 0; i < log_len; i++) check(log_buf[i] == (i % 2 == 0 ? 'P' : 'Q'));
  log_buf[log_len] = 0;
  struct line l;
  line_init(&l);
  line_str(&l, "log ");
  line_str(&l, log_buf);
  line_say(&l);

  /* A timed wait that nobody signals times out. */
  struct timespec deadline;
  check(clock_gettime(CLOCK_REALTIME, &deadline) == 0);
  deadline.tv_nsec += 5 * 1000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000;
  }
  check(pthread_mutex_lock(&lock) == 0);
  int rc;
  do rc = pthread_cond_timedwait(&cond, &lock, &deadline);
  while (rc == 0); /* spurious wake-ups are allowed */
  check(rc == ETIMEDOUT);
  check(pthread_mutex_unlock(&lock) == 0);
  say("timedwait without signal: ETIMEDOUT\n");
  finish();
  return 0;
}

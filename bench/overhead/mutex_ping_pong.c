/* Thread ping-pong: two threads hand a token back and forth ROUNDS times
 * (default 10,000) through one mutex and one condition variable, in strict
 * alternation.  Every handoff is a futex wake of a sleeping thread, so this
 * measures the cost of switching between tracee threads.  See
 * mutex_ping_pong.md. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn; /* 0: ping's turn, 1: pong's turn */
static long rounds;
static long handoffs;

static void *play(void *arg) {
  int me = (int)(long)arg;
  for (long r = 0; r < rounds; r++) {
    pthread_mutex_lock(&lock);
    while (turn != me) {
      pthread_cond_wait(&cond, &lock);
    }
    handoffs++;
    turn = 1 - me;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 10000;
  pthread_t ping, pong;
  if (pthread_create(&pong, NULL, play, (void *)1L) != 0 ||
      pthread_create(&ping, NULL, play, (void *)0L) != 0) {
    return 1;
  }
  pthread_join(ping, NULL);
  pthread_join(pong, NULL);
  printf("mutex_ping_pong: %ld rounds, %ld handoffs\n", rounds, handoffs);
  return handoffs == 2 * rounds ? 0 : 1;
}

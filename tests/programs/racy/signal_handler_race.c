/* Signal handler race: the main loop moves a two-word position (x, y) along
 * the diagonal, x == y: it stores x, reads the clock to time the move (the
 * vDSO natively, a syscall when recorded), then stores y. A sampler thread
 * interrupts it now and then with SIGUSR1 (pthread_kill), and the handler,
 * like a sampling profiler's, reads the position. Nothing keeps the
 * handler from running between the two stores: then it sees x != y. Each
 * step spends most of its time computing, outside that window, so natively
 * a sample seldom lands in it (see docs/hunting.md); a scheduler that
 * switches threads at the clock call, so that the signal comes when the
 * main thread resumes there, shows it. A torn sample prints "signal
 * handler race" on stderr and exits 1. */
#include "test_util.h"

#include <pthread.h>

/* Steps of the main loop, loop turns of computing per step (outside the
 * window: more make a torn sample rarer natively), samples taken (fewer
 * make it rarer too), and how far apart. */
#define STEPS 100
#ifndef STEP_TURNS
#define STEP_TURNS 20000
#endif
#ifndef SAMPLES
#define SAMPLES 16
#endif
#define SAMPLE_EVERY_US 100

struct position {
  volatile long x;
  volatile long y;
};

static struct position position;
static volatile sig_atomic_t torn, torn_x, torn_y;
static volatile unsigned long sink;
static struct timespec moved_at;
static pthread_t main_thread;

static void on_sample(int sig) {
  (void)sig;
  long x = position.x, y = position.y;
  if (x != y && !torn) {
    torn_x = x;
    torn_y = y;
    torn = 1;
  }
}

static void *sampler(void *arg) {
  (void)arg;
  for (int i = 0; i < SAMPLES; i++) {
    struct timespec pause = {0, SAMPLE_EVERY_US * 1000l};
    nanosleep(&pause, NULL);
    check(pthread_kill(main_thread, SIGUSR1) == 0);
  }
  return NULL;
}

int main(void) {
  test_init();
  main_thread = pthread_self();
  set_handler(SIGUSR1, on_sample, SA_RESTART);
  pthread_t s;
  check(pthread_create(&s, NULL, sampler, NULL) == 0);
  for (long step = 1; step <= STEPS; step++) {
    for (long i = 0; i < STEP_TURNS; i++) sink += (unsigned long)i;
    position.x = step; /* BUG: the handler may run between these stores */
    check(clock_gettime(CLOCK_MONOTONIC, &moved_at) == 0);
    position.y = step;
  }
  check(pthread_join(s, NULL) == 0);
  if (torn) {
    struct line l;
    line_init(&l);
    line_str(&l, "signal handler race: the handler saw x=");
    line_num(&l, torn_x);
    line_str(&l, ", y=");
    line_num(&l, torn_y);
    line_char(&l, '\n');
    tu_write_all(2, l.buf, l.len);
    return 1;
  }
  say("no torn sample\n");
  finish();
  return 0;
}

/* 16 short-lived threads, created and joined in batches of 4; each leaves a
 * value in its slot. */
#include "test_util.h"

#include <pthread.h>

#define TOTAL 16
#define BATCH 4

static long slots[TOTAL];
static pid_t tids[TOTAL];

static void *worker(void *arg) {
  long i = (long)arg;
  long v = 0;
  for (long k = 0; k < 1000 * (i + 1); k++) v += k % 7;
  slots[i] = v;
  tids[i] = tu_gettid();
  return NULL;
}

int main(void) {
  test_init();
  for (int b = 0; b < TOTAL / BATCH; b++) {
    pthread_t threads[BATCH];
    for (int j = 0; j < BATCH; j++) check(pthread_create(&threads[j], NULL, worker, (void *)(long)(b * BATCH + j)) == 0);
    for (int j = 0; j < BATCH; j++) check(pthread_join(threads[j], NULL) == 0);
    say_num("batch done", b);
  }
  long sum = 0;
  for (int i = 0; i < TOTAL; i++) {
    long expect = 0;
    for (long k = 0; k < 1000 * (i + 1); k++) expect += k % 7;
    check(slots[i] == expect);
    check(tids[i] != 0 && tids[i] != getpid());
    sum += slots[i];
  }
  /* Threads of one batch ran at the same time, so their tids differ. */
  for (int b = 0; b < TOTAL / BATCH; b++)
    for (int j = 0; j < BATCH; j++)
      for (int k = 0; k < j; k++) check(tids[b * BATCH + j] != tids[b * BATCH + k]);
  say_num("threads", TOTAL);
  say_num("sum", sum);
  finish();
  return 0;
}

// The bundled demo: two threads add to one counter without a lock.
//
// Each thread reads the counter, sometimes yields the CPU, and writes back
// what it read plus one. When the other thread runs in between, one of the
// two additions is lost. How many are lost changes from run to run: a
// flaky failure. The program exits 1 when updates were lost.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { kThreads = 2, kIterations = 20000, kYieldEvery = 97 };

static volatile long counter;

static void* add(void* arg) {
  long id = (long)arg;
  for (long i = 0; i < kIterations; i++) {
    long seen = counter;
    if ((i + id * 13) % kYieldEvery == 0) {
      sched_yield();  // the race window: another thread may run here
    }
    counter = seen + 1;
  }
  return NULL;
}

int main(void) {
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; t++) {
    pthread_create(&threads[t], NULL, add, (void*)t);
  }
  for (long t = 0; t < kThreads; t++) {
    pthread_join(threads[t], NULL);
  }
  long expected = (long)kThreads * kIterations;
  printf("counter = %ld, expected %ld: ", counter, expected);
  if (counter != expected) {
    printf("%ld updates lost\n", expected - counter);
    return 1;
  }
  printf("no update lost\n");
  return 0;
}

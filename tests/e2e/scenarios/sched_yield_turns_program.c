/* Scenario program for sched_yield_turns.sh. Two threads on one CPU take
 * turns through sched_yield alone: each counts the turns on which the other
 * had not run the loop body last, then yields. A recorder that runs one
 * thread at a time and hands the CPU over at every yield keeps that count
 * at 0; the kernel mostly does on one CPU, but not always (CFS may pick
 * the yielding thread again), so the count is printed, not checked here.
 * Then a thread that lowers its own priority (setpriority) must still get
 * the CPU from a main thread that yields until it has run. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>

enum { kTurns = 200 };
enum who { kPing, kPong };

static pthread_barrier_t both_started;
static atomic_int ready[2];
static volatile enum who last_ran;
static atomic_int first_done;
static atomic_int out_of_turn;

static void take_turns(enum who me) {
  enum who other = me == kPing ? kPong : kPing;
  pthread_barrier_wait(&both_started);
  atomic_store(&ready[me], 1);
  do {
    sched_yield();
  } while (!atomic_load(&ready[other]));
  /* The first thread here makes the other one "last", so it goes first. */
  int expected = 0;
  if (atomic_compare_exchange_strong(&first_done, &expected, 1)) {
    last_ran = other;
  }
  for (int i = 0; i < kTurns; i++) {
    if (last_ran != other) {
      atomic_fetch_add(&out_of_turn, 1);
    }
    last_ran = me;
    sched_yield();
  }
}

static void *pong(void *arg) {
  (void)arg;
  take_turns(kPong);
  return NULL;
}

static atomic_int low_priority_ran;

static void *low_priority(void *arg) {
  (void)arg;
  check(setpriority(PRIO_PROCESS, 0, 4) == 0);
  atomic_store(&low_priority_ran, 1);
  return NULL;
}

int main(void) {
  test_init();
  cpu_set_t one_cpu;
  CPU_ZERO(&one_cpu);
  CPU_SET(0, &one_cpu);
  check(sched_setaffinity(0, sizeof one_cpu, &one_cpu) == 0);

  check(pthread_barrier_init(&both_started, NULL, 2) == 0);
  pthread_t t;
  check(pthread_create(&t, NULL, pong, NULL) == 0);
  take_turns(kPing);
  check(pthread_join(t, NULL) == 0);
  say_num("turns out of turn", atomic_load(&out_of_turn));

  check(pthread_create(&t, NULL, low_priority, NULL) == 0);
  long yields = 0;
  while (!atomic_load(&low_priority_ran)) {
    sched_yield();
    yields++;
    check(yields < 1000000);
  }
  check(pthread_join(t, NULL) == 0);
  say("the lower-priority thread ran\n");
  finish();
  return 0;
}

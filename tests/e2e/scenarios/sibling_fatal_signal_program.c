/* Scenario program for sibling_fatal_signal.sh: a thread dies of SIGSEGV
 * while main stands at a syscall's exit. Main yields (the recorder hands
 * the CPU over at every sched_yield) until the new thread has crashed; the
 * crash ends the whole process with main still parked where it yielded. */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static void *crash(void *arg) {
  (void)arg;
  *(volatile int *)0 = 1;
  return NULL;
}

int main(void) {
  alarm(20);
  pthread_t t;
  if (pthread_create(&t, NULL, crash, NULL) != 0) return 2;
  /* Bounded: natively the crash comes within a few yields. */
  for (int i = 0; i < 1000000; i++) sched_yield();
  return 3;
}

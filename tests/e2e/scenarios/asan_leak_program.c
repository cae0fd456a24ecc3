/* Scenario program for asan_leak_report.sh, built with
 * -fsanitize=address. At exit LeakSanitizer clones a helper task that
 * attaches with ptrace to every thread of the process, reads their
 * registers and scans their stacks. Three threads are alive then: main,
 * one blocked in a read of a pipe (inside the kernel), and one taking
 * turns with sched_yield (stopped at a syscall). Exactly one block leaks
 * (77 bytes); one is reachable from a global and one only from the blocked
 * thread's stack, so a report that names more than the 77 bytes means the
 * helper saw wrong registers or stacks. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int never_written[2];
void *volatile reachable_from_global;
static void *volatile lost;
static volatile int yielder_started;

static void *blocked_reader(void *arg) {
  /* Kept alive in this frame only, while the thread waits in read(). */
  char *volatile held_by_stack = malloc(55);
  memset(held_by_stack, 'x', 55);
  *(volatile int *)arg = 1;
  char byte;
  (void)!read(never_written[0], &byte, 1);
  return held_by_stack;
}

static void *yielder(void *arg) {
  (void)arg;
  yielder_started = 1;
  for (;;) {
    sched_yield();
  }
  return NULL;
}

__attribute__((noinline)) static void make_leak(void) {
  lost = malloc(77);
  memset(lost, 'y', 77);
  lost = NULL; /* the only pointer to it is dropped here */
}

int main(void) {
  if (pipe(never_written) != 0) {
    return 2;
  }
  reachable_from_global = malloc(33);
  volatile int reader_started = 0;
  pthread_t reader, spinner;
  pthread_create(&reader, NULL, blocked_reader, (void *)&reader_started);
  pthread_create(&spinner, NULL, yielder, NULL);
  while (!reader_started || !yielder_started) {
    sched_yield();
  }
  make_leak();
  printf("threads started, one block lost\n");
  fflush(stdout);
  return 0; /* LeakSanitizer runs at exit and reports the 77 bytes */
}

/* For the report scenario: how a run ended, for `repro report` to explain.
 *   crash: a second thread writes through a null pointer in
 *          store_reading() (SIGSEGV) while the main thread waits for it in
 *          pthread_join;
 *   abort: check_reading() finds a bad value and calls abort() (SIGABRT,
 *          raised inside libc);
 *   exit:  the program prints and exits with status 3. */
#include "test_util.h"

#include <pthread.h>

static int *volatile reading_slot; /* null: nobody set it */

/* noinline: the report must name this function and its line. */
__attribute__((noinline)) static void store_reading(int value) {
  *reading_slot = value; /* the fault */
}

__attribute__((noinline)) static void check_reading(int value) {
  if (value != 42) {
    abort(); /* the abort */
  }
}

static void *worker(void *arg) {
  (void)arg;
  say("worker: storing the reading\n");
  store_reading(42);
  return NULL;
}

int main(int argc, char **argv) {
  check(argc == 2);
  if (strcmp(argv[1], "exit") == 0) {
    say("exiting with status 3\n");
    return 3;
  }
  if (strcmp(argv[1], "abort") == 0) {
    check_reading(argc);
  }
  check(strcmp(argv[1], "crash") == 0);
  pthread_t thread;
  check(pthread_create(&thread, NULL, worker, NULL) == 0);
  check(pthread_join(thread, NULL) == 0);
  say("not reached\n");
  return 0;
}

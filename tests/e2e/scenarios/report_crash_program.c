/* For the report scenario: how a run ended, for `repro report` to explain.
 *   crash: a second thread waits until the main thread sleeps in
 *          pthread_join, then writes through a null pointer in
 *          store_reading() (SIGSEGV);
 *   abort: check_reading() finds a bad value and calls abort() (SIGABRT,
 *          raised inside libc);
 *   exit:  the program prints and exits with status 3. */
#include "test_util.h"

#include <fcntl.h>
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

/* The first bytes of /proc/self/task/TID/NAME, or "" when unreadable. */
static void read_task_file(pid_t tid, const char *name, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
  out[0] = '\0';
  int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    ssize_t n = read(fd, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
  }
}

/* Returns once the main thread sleeps in a futex wait (its pthread_join),
   so the report finds it there; gives up after 10 s. */
static void wait_for_main_to_join(void) {
  pid_t main_tid = getpid();
  for (int tries = 0; tries < 10000; ++tries) {
    char syscall_line[128];
    char stat_line[256];
    read_task_file(main_tid, "syscall", syscall_line, sizeof syscall_line);
    read_task_file(main_tid, "stat", stat_line, sizeof stat_line);
    const char *state = strrchr(stat_line, ')'); /* ") S ..." */
    if (atoi(syscall_line) == SYS_futex && state != NULL && state[1] == ' ' && state[2] == 'S') {
      return;
    }
    usleep(1000);
  }
}

static void *worker(void *arg) {
  (void)arg;
  wait_for_main_to_join();
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

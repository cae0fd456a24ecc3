/* Scenario program for ci.sh. With no argument, a flaky race: three threads
 * start together, each makes a few syscalls and then writes its number to
 * `last`; the program fails (exit 3, "LOST" on stderr) when thread 0 wrote
 * last. Which thread that is depends on the schedule: natively it is
 * thread 0 in about a third to a half of the runs here (the share moves
 * with the host's load), under `record --chaos` in about a quarter of the
 * seeds. Other modes give fixed ends:
 *   pass: exit 0;  exit N: exit N;  abort: abort();  sleep: sleep 60 s. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int go;
static atomic_int last = -1;

static void *worker(void *arg) {
  int id = (int)(long)arg;
  while (!atomic_load(&go)) {
    syscall(SYS_sched_yield);
  }
  for (int i = 0; i < 3; i++) {
    syscall(SYS_getpid);
  }
  atomic_store(&last, id);
  return NULL;
}

static int race(void) {
  pthread_t threads[3];
  for (long i = 0; i < 3; i++) {
    pthread_create(&threads[i], NULL, worker, (void *)i);
  }
  atomic_store(&go, 1);
  for (int i = 0; i < 3; i++) {
    pthread_join(threads[i], NULL);
  }
  if (atomic_load(&last) == 0) {
    (void)!write(2, "LOST\n", 5);
    return 3;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    return race();
  }
  if (strcmp(argv[1], "exit") == 0 && argc == 3) {
    return atoi(argv[2]);
  }
  if (strcmp(argv[1], "abort") == 0) {
    abort();
  }
  if (strcmp(argv[1], "sleep") == 0) {
    sleep(60);
    return 0;
  }
  return 0;
}

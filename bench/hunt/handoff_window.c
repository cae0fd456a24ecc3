/* Hunt throughput workload (hunt_throughput.sh): two threads of 40 steps,
 * one syscall each, with an order bug. The writer marks its state busy
 * around the syscall of its 2nd step; the reader, which starts once the
 * writer has, fails (exit 1, "RACE" on stderr) if it finds it busy in its
 * 40th step. Natively the writer is long past its 2nd step by then: only a
 * preemption of the writer inside that one syscall while the reader runs
 * 38 steps shows the bug (none of 3000 native runs one at a time; about 1
 * in 1000 to 10000 two at a time on a loaded 2-core host). A chaos schedule
 * that drops the writer's priority at that syscall's exit shows it in about
 * 1 run in 100. Small on purpose: a hunt's cost per run is then mostly
 * repro's own. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STEPS 40
#define WRITER_BUSY_STEP 2
#define READER_CHECK_STEP 40

static atomic_int started;
static atomic_int busy;

static void *writer(void *arg) {
  (void)arg;
  atomic_store(&started, 1);
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_getppid);
    if (step == WRITER_BUSY_STEP) {
      atomic_store(&busy, 1);
      syscall(SYS_getpid);
      atomic_store(&busy, 0);
    }
  }
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  while (!atomic_load(&started)) {
    syscall(SYS_sched_yield);
  }
  for (int step = 1; step <= STEPS; step++) {
    syscall(SYS_getppid);
    if (step == READER_CHECK_STEP && atomic_load(&busy)) {
      (void)!write(2, "RACE\n", 5);
      _exit(1);
    }
  }
  return NULL;
}

int main(void) {
  pthread_t w, r;
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&r, NULL, reader, NULL);
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  return 0;
}

/* Order violation: main starts a loader thread that sizes a shared config
 * from the system (sysinfo, getrlimit, sched_getaffinity) and fills it in;
 * main waits until the loader has started (a semaphore the loader posts
 * first thing), then starts a worker thread that uses the config, assuming
 * the loader, already running, is done with it by then. Nothing makes the
 * worker wait for the config itself. The loader has a head start of a
 * thread creation, which natively is nearly always enough (see
 * docs/hunting.md; with 20000 loop turns of work after its syscalls it
 * failed in 0.8 to 2% of runs here, without in 0.4%); a scheduler that
 * holds the loader at one of its syscalls while main and the worker run on
 * shows the bug. The worker then counts 0 items at scale 0: a wrong total
 * prints "order violation" on stderr and exits 1. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

struct config {
  long scale;
  long items;
  long cpus;
  long max_files;
};

#define SCALE 3
#define ITEMS 100

static struct config config;
static sem_t loader_started;

static void *loader(void *arg) {
  (void)arg;
  check(sem_post(&loader_started) == 0);
  struct sysinfo system;
  check(sysinfo(&system) == 0);
  struct rlimit files;
  check(getrlimit(RLIMIT_NOFILE, &files) == 0);
  cpu_set_t cpus;
  check(sched_getaffinity(0, sizeof cpus, &cpus) == 0);
  config.cpus = CPU_COUNT(&cpus);
  config.max_files = (long)files.rlim_cur;
  config.items = ITEMS;
  config.scale = SCALE;
  return NULL;
}

static void *worker(void *arg) {
  (void)arg;
  /* BUG: assumes the loader has filled in the config by now */
  long total = 0;
  for (long i = 0; i < config.items; i++) total += config.scale;
  return (void *)total;
}

int main(void) {
  test_init();
  check(sem_init(&loader_started, 0, 0) == 0);
  pthread_t a, b;
  check(pthread_create(&a, NULL, loader, NULL) == 0);
  while (sem_wait(&loader_started) != 0) check(errno == EINTR);
  check(pthread_create(&b, NULL, worker, NULL) == 0);
  void *total;
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, &total) == 0);
  long expected = (long)SCALE * ITEMS;
  if ((long)total != expected) {
    struct line l;
    line_init(&l);
    line_str(&l, "order violation: the worker read the config before the loader set it (total ");
    line_num(&l, (long)total);
    line_str(&l, ", expected ");
    line_num(&l, expected);
    line_str(&l, ")\n");
    tu_write_all(2, l.buf, l.len);
    return 1;
  }
  say_num("total", (long)total);
  finish();
  return 0;
}

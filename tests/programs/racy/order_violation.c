/* Order violation: main starts a loader thread that reads the settings and
 * fills in a shared config, then a worker thread that reads its items and
 * then uses the config, assuming the loader, started first, is done with
 * it. Nothing makes the worker wait. The loader makes fewer reads (the
 * read(2)s of a file) than the worker, so natively it nearly always comes
 * first (see docs/hunting.md); a scheduler that runs the worker first
 * shows the bug. The worker then scales its items by 0: a wrong total
 * prints "order violation" on stderr and exits 1. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>

struct config {
  long scale;
  long items;
};

/* Reads the loader makes before it publishes the config, and the worker
 * before it uses it: the closer, the more often the worker comes first
 * natively. */
#define SETTINGS_READS 2
#ifndef ITEM_READS
#define ITEM_READS 16
#endif
#define SCALE 3
#define ITEMS 100

static struct config config;
static int zero_fd;

static void read_file(int reads) {
  char buf[64];
  for (int i = 0; i < reads; i++) check(read(zero_fd, buf, sizeof buf) == sizeof buf);
}

static void *loader(void *arg) {
  (void)arg;
  read_file(SETTINGS_READS);
  config.items = ITEMS;
  config.scale = SCALE;
  return NULL;
}

static void *worker(void *arg) {
  (void)arg;
  read_file(ITEM_READS);
  /* BUG: assumes the loader has filled in the config by now */
  long total = 0;
  for (long i = 0; i < config.items; i++) total += config.scale;
  return (void *)total;
}

int main(void) {
  test_init();
  zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  check(zero_fd >= 0);
  pthread_t a, b;
  check(pthread_create(&a, NULL, loader, NULL) == 0);
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

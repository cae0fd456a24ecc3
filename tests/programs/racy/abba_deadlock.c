/* ABBA deadlock: a transfer thread takes the `from` lock then the `to`
 * lock; an audit thread, once, takes them in the other order. If the
 * audit takes `to` while the transfer holds `from` and has not yet taken
 * `to`, each waits for the other forever. The transfer opens that window
 * around one syscall (a log write to /dev/null); natively the audit almost
 * never lands in it. No alarm() watchdog: a timer that could end the wait
 * would keep repro from calling it a deadlock. Natively a run that
 * deadlocks hangs (measure with `timeout`). */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t from = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t to = PTHREAD_MUTEX_INITIALIZER;
static int log_fd;
static long moved;

static void *transfer(void *arg) {
  (void)arg;
  for (int step = 0; step < 30; step++) {
    pthread_mutex_lock(&from);
    if (step == 25) {
      check(write(log_fd, "moving\n", 7) == 7);  /* the window: `from` held, `to` not yet */
    }
    pthread_mutex_lock(&to);
    moved++;
    pthread_mutex_unlock(&to);
    pthread_mutex_unlock(&from);
    syscall(SYS_getpid);
  }
  return NULL;
}

static void *audit(void *arg) {
  (void)arg;
  for (int step = 0; step < 30; step++) {
    syscall(SYS_getpid);
    if (step == 15) {
      pthread_mutex_lock(&to);  /* the wrong order, once */
      syscall(SYS_getppid);
      pthread_mutex_lock(&from);
      pthread_mutex_unlock(&from);
      pthread_mutex_unlock(&to);
    }
  }
  return NULL;
}

int main(void) {
  log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  check(log_fd >= 0);
  pthread_t a, b;
  check(pthread_create(&a, NULL, transfer, NULL) == 0);
  check(pthread_create(&b, NULL, audit, NULL) == 0);
  check(pthread_join(a, NULL) == 0);
  check(pthread_join(b, NULL) == 0);
  say_num("moved", moved);
  finish();
  return 0;
}

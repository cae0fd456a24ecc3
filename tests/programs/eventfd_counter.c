/* eventfd: writes add to the counter and a read returns and resets it; in
 * EFD_SEMAPHORE mode each read returns 1; an empty non-blocking eventfd gives
 * EAGAIN; a thread's write wakes a blocked reader. */
#include "test_util.h"

#include <pthread.h>
#include <sys/eventfd.h>

static int efd_thread;

static void *writer(void *arg) {
  (void)arg;
  sleep_ms(5);
  uint64_t v = 42;
  check(write(efd_thread, &v, sizeof v) == sizeof v);
  return NULL;
}

int main(void) {
  test_init();
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  check(fd >= 0);
  uint64_t v;
  errno = 0;
  check(read(fd, &v, sizeof v) == -1 && errno == EAGAIN);
  say("empty: EAGAIN\n");
  v = 3;
  check(write(fd, &v, sizeof v) == sizeof v);
  v = 4;
  check(write(fd, &v, sizeof v) == sizeof v);
  v = 0;
  check(read(fd, &v, sizeof v) == sizeof v && v == 7);
  say_num("write 3, write 4, read", (long long)v);
  errno = 0;
  check(read(fd, &v, sizeof v) == -1 && errno == EAGAIN);
  char small[4];
  errno = 0;
  check(read(fd, small, sizeof small) == -1 && errno == EINVAL);
  say("read resets to 0; 4-byte read: EINVAL\n");
  close(fd);

  int sem = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
  check(sem >= 0);
  for (int i = 0; i < 3; i++) check(read(sem, &v, sizeof v) == sizeof v && v == 1);
  errno = 0;
  check(read(sem, &v, sizeof v) == -1 && errno == EAGAIN);
  say("EFD_SEMAPHORE initval 3: three reads of 1, then EAGAIN\n");
  close(sem);

  efd_thread = eventfd(0, EFD_CLOEXEC);
  check(efd_thread >= 0);
  pthread_t t;
  check(pthread_create(&t, NULL, writer, NULL) == 0);
  v = 0;
  check(read(efd_thread, &v, sizeof v) == sizeof v); /* blocks until the write */
  check(v == 42);
  check(pthread_join(t, NULL) == 0);
  say_num("blocking read woken by thread's write", (long long)v);
  close(efd_thread);
  finish();
  return 0;
}

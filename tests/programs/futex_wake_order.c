/* Raw futex(2): three waiters are put to sleep one after another on the same
 * word (each confirmed asleep in FUTEX_WAIT through /proc before the next one
 * starts), then woken one at a time with FUTEX_WAKE(1). Each wake must wake
 * exactly one sleeper; a wake with no sleepers returns 0; FUTEX_WAIT with a
 * stale value fails with EAGAIN and a timed wait times out. The kernel does not
 * promise which sleeper a wake picks, so the wake order is printed with "~ ". */
#include "test_util.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>

#define NWAITERS 3

static atomic_int tokens; /* the futex word the waiters sleep on */
static atomic_int done;   /* how many waiters have run after their wake-up */
static atomic_int tids[NWAITERS];
static int order[NWAITERS];

static long futex(atomic_int *uaddr, int op, int val, const struct timespec *timeout) {
  return syscall(SYS_futex, (int *)uaddr, op, val, timeout, NULL, 0);
}

static void *waiter(void *arg) {
  int idx = (int)(long)arg;
  atomic_store(&tids[idx], (int)tu_gettid());
  for (;;) {
    int t = atomic_load(&tokens);
    if (t > 0) {
      if (atomic_compare_exchange_strong(&tokens, &t, t - 1)) break;
      continue;
    }
    struct timespec ts = {5, 0};
    long r = futex(&tokens, FUTEX_WAIT_PRIVATE, 0, &ts);
    check(r == 0 || errno == EAGAIN || errno == EINTR);
  }
  int slot = atomic_load(&done);
  order[slot] = idx;
  atomic_store(&done, slot + 1);
  futex(&done, FUTEX_WAKE_PRIVATE, 1, NULL);
  return NULL;
}

static int read_small_file(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = 0;
  return (int)n;
}

/* True when thread tid is sleeping ('S') inside futex(uaddr, ...). */
static int asleep_on(pid_t tid, void *uaddr) {
  char path[64], buf[512];
  struct line l;
  line_init(&l);
  line_str(&l, "/proc/self/task/");
  line_num(&l, tid);
  line_str(&l, "/stat");
  l.buf[l.len] = 0;
  memcpy(path, l.buf, l.len + 1);
  if (read_small_file(path, buf, sizeof buf) <= 0) return 0;
  char *paren = strrchr(buf, ')');
  if (!paren || paren[1] != ' ' || paren[2] != 'S') return 0;

  line_init(&l);
  line_str(&l, "/proc/self/task/");
  line_num(&l, tid);
  line_str(&l, "/syscall");
  l.buf[l.len] = 0;
  memcpy(path, l.buf, l.len + 1);
  if (read_small_file(path, buf, sizeof buf) <= 0) return 0;
  line_init(&l);
  line_num(&l, SYS_futex);
  line_char(&l, ' ');
  line_hex(&l, (unsigned long)uaddr);
  line_char(&l, ' ');
  l.buf[l.len] = 0;
  return strncmp(buf, l.buf, l.len) == 0;
}

int main(void) {
  test_init();
  pthread_t threads[NWAITERS];
  int polls = 0;
  for (long i = 0; i < NWAITERS; i++) {
    check(pthread_create(&threads[i], NULL, waiter, (void *)i) == 0);
    int tries = 0;
    while (atomic_load(&tids[i]) == 0 || !asleep_on(atomic_load(&tids[i]), &tokens)) {
      check(++tries < 5000);
      sleep_ms(1);
    }
    polls += tries;
    struct line l;
    line_init(&l);
    line_str(&l, "waiter ");
    line_num(&l, i);
    line_str(&l, " asleep in FUTEX_WAIT");
    line_say(&l);
  }
  say_nondet_num("polls", polls);

  /* Expected value mismatch: EAGAIN without sleeping. */
  errno = 0;
  check(futex(&tokens, FUTEX_WAIT_PRIVATE, 1, NULL) == -1 && errno == EAGAIN);
  say("FUTEX_WAIT with stale value: EAGAIN\n");
  /* Nobody wakes this one. */
  atomic_int lonely = 0;
  struct timespec short_ts = {0, 2 * 1000000};
  errno = 0;
  check(futex(&lonely, FUTEX_WAIT_PRIVATE, 0, &short_ts) == -1 && errno == ETIMEDOUT);
  say("FUTEX_WAIT with timeout: ETIMEDOUT\n");

  for (int k = 0; k < NWAITERS; k++) {
    atomic_fetch_add(&tokens, 1);
    long woken = futex(&tokens, FUTEX_WAKE_PRIVATE, 1, NULL);
    check(woken == 1);
    int tries = 0;
    for (;;) {
      int d = atomic_load(&done);
      if (d == k + 1) break;
      check(d == k);
      check(++tries < 100);
      struct timespec ts = {0, 50 * 1000000};
      long r = futex(&done, FUTEX_WAIT_PRIVATE, d, &ts);
      check(r == 0 || errno == EAGAIN || errno == EINTR || errno == ETIMEDOUT);
    }
    struct line l;
    line_init(&l);
    line_str(&l, "wake ");
    line_num(&l, k);
    line_str(&l, ": woke ");
    line_num(&l, woken);
    line_say(&l);
  }
  check(futex(&tokens, FUTEX_WAKE_PRIVATE, 1, NULL) == 0);
  say("wake with no sleepers: 0\n");
  for (int i = 0; i < NWAITERS; i++) check(pthread_join(threads[i], NULL) == 0);

  int seen[NWAITERS] = {0};
  struct line l;
  line_init(&l);
  line_str(&l, "wake order:");
  for (int i = 0; i < NWAITERS; i++) {
    check(order[i] >= 0 && order[i] < NWAITERS && !seen[order[i]]);
    seen[order[i]] = 1;
    line_char(&l, ' ');
    line_num(&l, order[i]);
  }
  line_say_nondet(&l);
  finish();
  return 0;
}

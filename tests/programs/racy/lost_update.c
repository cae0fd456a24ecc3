/* Lost update: two tellers deposit into one account with no lock. A deposit
 * reads the balance, writes a log record (a write(2)), and stores the
 * balance it read plus one: a deposit the other teller makes between that
 * read and that store is overwritten. The tellers start one after the
 * other and each makes few deposits, so natively they rarely run at the
 * same time (0.5% of runs here, see docs/hunting.md); a scheduler that
 * switches threads at the log write shows it. The final balance is checked:
 * a wrong one prints "lost update" on stderr and exits 1. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>

#define TELLERS 2
/* Deposits per teller: more makes the tellers overlap more often natively. */
#ifndef DEPOSITS
#define DEPOSITS 30
#endif

static long balance;
static int log_fd;

static void log_deposit(long seen) {
  struct line l;
  line_init(&l);
  line_str(&l, "deposit 1 onto ");
  line_num(&l, seen);
  line_char(&l, '\n');
  tu_write_all(log_fd, l.buf, l.len);
}

static void *teller(void *arg) {
  (void)arg;
  for (int i = 0; i < DEPOSITS; i++) {
    long seen = balance; /* BUG: read, log, store, with no lock held */
    log_deposit(seen);
    balance = seen + 1;
  }
  return NULL;
}

int main(void) {
  test_init();
  log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  check(log_fd >= 0);
  pthread_t tellers[TELLERS];
  for (int i = 0; i < TELLERS; i++) check(pthread_create(&tellers[i], NULL, teller, NULL) == 0);
  for (int i = 0; i < TELLERS; i++) check(pthread_join(tellers[i], NULL) == 0);
  long expected = (long)TELLERS * DEPOSITS;
  if (balance != expected) {
    struct line l;
    line_init(&l);
    line_str(&l, "lost update: balance ");
    line_num(&l, balance);
    line_str(&l, ", expected ");
    line_num(&l, expected);
    line_char(&l, '\n');
    tu_write_all(2, l.buf, l.len);
    return 1;
  }
  say_num("balance", balance);
  finish();
  return 0;
}

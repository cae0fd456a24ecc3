/* Lost update: two tellers deposit into one account with no lock. A deposit
 * checks the amount (some computing), reads the balance, stamps the deposit
 * with the time (clock_gettime: the vDSO natively, a syscall when
 * recorded), and stores the balance it read plus one: a deposit the other
 * teller makes between that read and that store is overwritten. The window
 * is a small part of each deposit, so natively an update is seldom lost
 * even when both tellers run at once (see docs/hunting.md); a scheduler
 * that switches threads at the clock call shows it. The final balance is
 * checked: a wrong one prints "lost update" on stderr and exits 1. */
#include "test_util.h"

#include <pthread.h>

#define TELLERS 2
#define DEPOSITS 10
/* Loop turns of checking per deposit, outside the window: fewer make a lost
 * update likelier natively. The second teller checks half as long again,
 * so that the tellers' windows drift past each other instead of staying
 * in step (in step, a third of the runs lost updates here). */
#ifndef CHECK_TURNS
#define CHECK_TURNS 200000
#endif

static long balance;
static struct timespec last_deposit;

static void *teller(void *arg) {
  long turns = CHECK_TURNS + (long)arg * CHECK_TURNS / 2;
  volatile unsigned long checked = 0; /* the teller's own: no shared line */
  for (int i = 0; i < DEPOSITS; i++) {
    for (long turn = 0; turn < turns; turn++) checked += (unsigned long)turn;
    long seen = balance; /* BUG: read, stamp, store, with no lock held */
    struct timespec now;
    check(clock_gettime(CLOCK_REALTIME, &now) == 0);
    last_deposit = now;
    balance = seen + 1;
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t tellers[TELLERS];
  for (long i = 0; i < TELLERS; i++) {
    check(pthread_create(&tellers[i], NULL, teller, (void *)i) == 0);
  }
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

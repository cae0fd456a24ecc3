/* sigqueue() carries a value to a SA_SIGINFO handler (si_code SI_QUEUE,
 * si_value, si_pid). Blocked real-time signals are all queued; on unblock the
 * lowest-numbered signal goes first and each signal's instances arrive in the
 * order they were sent. */
#include "test_util.h"

#include <signal.h>

#define MAXREC 8

static volatile int nrec;
static int rec_sig[MAXREC];
static int rec_val[MAXREC];
static volatile int bad_info;

static void on_rt(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  if (si->si_code != SI_QUEUE || si->si_pid != getpid() || si->si_signo != sig) bad_info = 1;
  if (nrec < MAXREC) {
    rec_sig[nrec] = sig;
    rec_val[nrec] = si->si_value.sival_int;
  }
  nrec++;
}

int main(void) {
  test_init();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_rt;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  /* Block both RT signals while a handler runs, so deliveries don't nest. */
  sigaddset(&sa.sa_mask, SIGRTMIN);
  sigaddset(&sa.sa_mask, SIGRTMIN + 1);
  check(sigaction(SIGRTMIN, &sa, NULL) == 0);
  check(sigaction(SIGRTMIN + 1, &sa, NULL) == 0);

  /* Unblocked: delivered immediately with its value. */
  union sigval v = {.sival_int = 5};
  check(sigqueue(getpid(), SIGRTMIN, v) == 0);
  check(nrec == 1 && rec_sig[0] == SIGRTMIN && rec_val[0] == 5 && !bad_info);
  say("sigqueue(SIGRTMIN, 5): delivered at once with SI_QUEUE and value 5\n");
  nrec = 0;

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  sigaddset(&set, SIGRTMIN + 1);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
  int order[][2] = {{1, 100}, {0, 10}, {1, 200}, {0, 20}, {0, 30}};
  for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
    v.sival_int = order[i][1];
    check(sigqueue(getpid(), SIGRTMIN + order[i][0], v) == 0);
  }
  check(nrec == 0);
  check(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
  check(nrec == 5);
  check(!bad_info);
  static const int want_sig[] = {0, 0, 0, 1, 1};
  static const int want_val[] = {10, 20, 30, 100, 200};
  for (int i = 0; i < 5; i++) {
    check(rec_sig[i] == SIGRTMIN + want_sig[i]);
    check(rec_val[i] == want_val[i]);
    struct line l;
    line_init(&l);
    line_str(&l, "delivery ");
    line_num(&l, i);
    line_str(&l, ": SIGRTMIN+");
    line_num(&l, rec_sig[i] - SIGRTMIN);
    line_str(&l, " value ");
    line_num(&l, rec_val[i]);
    line_say(&l);
  }
  finish();
  return 0;
}

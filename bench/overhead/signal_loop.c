/* Signals: COUNT times (default 40,000) send SIGUSR1 to ourselves with
 * kill(2) and let a handler count it.  Each round is one kill, one signal
 * delivery (a signal-delivery stop when traced) and one rt_sigreturn.  See
 * signal_loop.md. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig) {
  (void)sig;
  handled++;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 40000;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) {
    perror("sigaction");
    return 1;
  }
  pid_t self = getpid();
  for (long i = 0; i < count; i++) {
    if (kill(self, SIGUSR1) != 0) {
      perror("kill");
      return 1;
    }
  }
  printf("signal_loop: sent %ld, handled %ld\n", count, (long)handled);
  return handled == count ? 0 : 1;
}

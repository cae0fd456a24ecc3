/* Scenario program for hunt.sh: an order bug no plain recording shows.
 * Thread P opens a window around one syscall in its 3rd step; thread Q
 * checks the window in its 6th step and fails (exit 1, "RACE" on stderr)
 * if it finds it open. Each step is a syscall. Natively Q almost never
 * lands in the window (0 in 2000 runs here); round robin keeps the threads
 * in step, and running each to the end never splits the window. Only a
 * scheduler that holds P at the window's syscall while Q runs on finds it. */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int window;

static void *p(void *arg) {
  (void)arg;
  for (int step = 1; step <= 5; step++) {
    syscall(SYS_getpid);
    if (step == 3) {
      window = 1;
      syscall(SYS_getppid);
      window = 0;
    }
  }
  return NULL;
}

static void *q(void *arg) {
  (void)arg;
  for (int step = 1; step <= 8; step++) {
    syscall(SYS_getpid);
    if (step == 6 && window) {
      (void)!write(2, "RACE\n", 5);
      _exit(1);
    }
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, p, NULL);
  pthread_create(&b, NULL, q, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  (void)!write(1, "no race\n", 8);
  return 0;
}

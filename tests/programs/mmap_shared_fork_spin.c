/* A MAP_SHARED anonymous mapping written after fork by both sides while
 * both run: parent and child take turns through a word of it, each
 * spinning (no syscall) until the other has written its turn, and each
 * appends to a log in the same mapping. The log shows the turns in order. */
#include "test_util.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define TURNS 12

struct shared {
  volatile int turn; /* whose turn: even parent, odd child */
  volatile char log[2 * TURNS + 1];
};

static void take_turns(struct shared *s, int me, char mark) {
  for (int i = me; i < 2 * TURNS; i += 2) {
    while (s->turn != i) {
      /* a pure spin (alarm(20) bounds it): repro sees it spin */
    }
    s->log[i] = mark;
    __atomic_store_n(&s->turn, i + 1, __ATOMIC_SEQ_CST);
  }
}

int main(void) {
  test_init();
  struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  check(s != MAP_FAILED);
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    take_turns(s, 1, 'c');
    _exit(0);
  }
  take_turns(s, 0, 'p');
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  s->log[2 * TURNS] = '\n';
  say((const char *)s->log);
  check(s->turn == 2 * TURNS);
  check(munmap(s, sizeof *s) == 0);
  finish();
  return 0;
}

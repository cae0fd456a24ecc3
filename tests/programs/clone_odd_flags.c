/* Raw clone(2) with the flag set of a thread but our own stack and our own
 * fake TLS block: CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|
 * CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID. The
 * child (no glibc allowed) checks %fs points at the fake TLS, opens a file
 * descriptor in the shared table and reports its pid/tid through shared
 * memory; the parent waits for the kernel to clear the tid word at exit. */
#include "clone_raw.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>

#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define NO_SSP __attribute__((no_stack_protector))
#endif
#endif
#ifndef NO_SSP
#define NO_SSP
#endif

struct fake_tls {
  struct fake_tls *self; /* x86-64 TLS ABI: %fs:0 holds the TCB's own address */
  char pad[4096 - sizeof(void *)];
};

static struct fake_tls tls_block __attribute__((aligned(64)));
static char child_stack[64 * 1024] __attribute__((aligned(16)));
static volatile int tid_word;

static volatile long child_pid, child_tid, child_fd = -1;
static volatile int child_tls_ok;
static volatile int child_ran;

static NO_SSP int child_fn(void *arg) {
  struct fake_tls *self;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(self));
  child_tls_ok = (self == &tls_block) && arg == (void *)&tls_block;
  child_pid = raw_syscall3(SYS_getpid, 0, 0, 0);
  child_tid = raw_syscall3(SYS_gettid, 0, 0, 0);
  child_fd = raw_syscall3(SYS_open, (long)"/dev/null", O_RDONLY, 0);
  child_ran = 1;
  return 0;
}

int main(void) {
  test_init();
  tls_block.self = &tls_block;
  unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                        CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
  long tid = clone_raw(flags, child_stack + sizeof child_stack, (int *)&tid_word, (int *)&tid_word, &tls_block,
                       child_fn, &tls_block);
  check(tid > 0);
  check(tid != getpid());
  /* CLONE_PARENT_SETTID stored the tid before clone returned... unless the
   * child already ran and exited, in which case CLONE_CHILD_CLEARTID zeroed it. */
  int w = tid_word;
  check(w == tid || w == 0);
  int tries = 0;
  while ((w = tid_word) != 0) {
    check(w == tid);
    check(++tries < 200);
    struct timespec ts = {0, 50 * 1000000};
    long r = syscall(SYS_futex, (int *)&tid_word, FUTEX_WAIT, w, &ts, NULL, 0);
    check(r == 0 || errno == EAGAIN || errno == EINTR || errno == ETIMEDOUT);
  }
  say("tid word cleared at child exit\n");
  check(child_ran);
  check(child_tls_ok);
  say("child ran with the fake TLS block\n");
  check(child_pid == getpid());
  check(child_tid == tid);
  say("child shares our pid (CLONE_THREAD) and has its own tid\n");
  check(child_fd >= 0);
  check(fcntl((int)child_fd, F_GETFD) >= 0);
  check(close((int)child_fd) == 0);
  say("fd opened by the child is in our table (CLONE_FILES)\n");
  say_nondet_num("child tid", tid);
  finish();
  return 0;
}

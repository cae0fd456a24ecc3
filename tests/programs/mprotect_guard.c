/* mprotect turns pages read-only or inaccessible: reads of a read-only page
 * work, a write faults (SIGSEGV, SEGV_ACCERR, recovered with siglongjmp)
 * without changing the data; a PROT_NONE guard page faults on read; after
 * mprotect back to read-write the write succeeds. */
#include "test_util.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

static sigjmp_buf env;
static void *volatile fault_addr;
static volatile int fault_code;
static volatile int faults;

static void on_segv(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  fault_addr = si->si_addr;
  fault_code = si->si_code;
  faults++;
  siglongjmp(env, 1);
}

/* Returns 1 if the store faulted. */
static int try_write(volatile char *p, char v) {
  if (sigsetjmp(env, 1) == 0) {
    *p = v;
    return 0;
  }
  return 1;
}

static int try_read(volatile char *p, char *out) {
  if (sigsetjmp(env, 1) == 0) {
    *out = *p;
    return 0;
  }
  return 1;
}

int main(void) {
  test_init();
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  char *p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(p != MAP_FAILED);
  memset(p, 'a', 3 * ps);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGSEGV, &sa, NULL) == 0);

  check(mprotect(p + ps, ps, PROT_READ) == 0);
  char c = 0;
  check(try_read(p + ps + 10, &c) == 0 && c == 'a');
  say("read-only page: read ok\n");
  check(try_write(p + ps + 10, 'b') == 1);
  check(fault_addr == p + ps + 10 && fault_code == SEGV_ACCERR);
  check(p[ps + 10] == 'a');
  say("read-only page: write faulted (SEGV_ACCERR), data unchanged\n");
  check(try_write(p + 10, 'b') == 0 && p[10] == 'b');
  say("neighbouring page still writable\n");

  check(mprotect(p + 2 * ps, ps, PROT_NONE) == 0);
  check(try_read(p + 2 * ps, &c) == 1);
  check(fault_addr == p + 2 * ps && fault_code == SEGV_ACCERR);
  say("PROT_NONE guard page: read faulted\n");

  check(mprotect(p + ps, 2 * ps, PROT_READ | PROT_WRITE) == 0);
  check(try_write(p + ps + 10, 'c') == 0 && p[ps + 10] == 'c');
  check(try_write(p + 2 * ps, 'd') == 0 && p[2 * ps] == 'd');
  say("after mprotect(RW): writes ok\n");

  errno = 0;
  check(mprotect(p + 1, ps, PROT_READ) == -1 && errno == EINVAL);
  say("unaligned mprotect: EINVAL\n");
  check(faults == 2);
  say_num("faults", faults);
  check(munmap(p, 3 * ps) == 0);
  finish();
  return 0;
}

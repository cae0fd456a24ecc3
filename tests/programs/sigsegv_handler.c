/* A deliberate write to a PROT_NONE page raises SIGSEGV; the SA_SIGINFO
 * handler checks si_addr/si_code, makes the page writable with mprotect and
 * returns, so the faulting instruction is restarted and succeeds. */
#include "test_util.h"

#include <signal.h>
#include <sys/mman.h>

static char *page;
static long page_size;
static volatile int faults;
static volatile int fault_code;
static void *volatile fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  check(sig == SIGSEGV);
  faults++;
  fault_addr = si->si_addr;
  fault_code = si->si_code;
  char *a = (char *)si->si_addr;
  check(a >= page && a < page + page_size);
  check(mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE) == 0);
}

int main(void) {
  test_init();
  page_size = sysconf(_SC_PAGESIZE);
  page = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(page != MAP_FAILED);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGSEGV, &sa, NULL) == 0);

  volatile char *target = page + 100;
  *target = 'x'; /* faults once, then succeeds */
  check(faults == 1);
  check(fault_addr == (void *)(page + 100));
  check(fault_code == SEGV_ACCERR);
  check(page[100] == 'x');
  say_num("faults", faults);
  say_num("fault offset in page", (char *)fault_addr - page);
  say("si_code=SEGV_ACCERR\n");
  say("store completed after the handler fixed the protection\n");

  /* No more faults now. */
  page[200] = 'y';
  check(faults == 1 && page[200] == 'y');
  check(munmap(page, (size_t)page_size) == 0);
  finish();
  return 0;
}

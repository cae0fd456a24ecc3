/* A handler installed with SA_ONSTACK runs on the alternate signal stack set
 * with sigaltstack (the address of one of its locals lies inside it, and
 * sigaltstack reports SS_ONSTACK there); a handler without SA_ONSTACK runs on
 * the normal stack. */
#include "test_util.h"

#include <signal.h>
#include <sys/mman.h>

#define ALT_SIZE (64 * 1024)

static char *alt_base;
static volatile int onstack_ok, onstack_flag_ok, offstack_ok;

static int on_alt_stack(const void *p) { return (const char *)p >= alt_base && (const char *)p < alt_base + ALT_SIZE; }

static void on_usr1(int sig) {
  (void)sig;
  volatile int local = 1;
  onstack_ok = on_alt_stack((const void *)&local);
  stack_t cur;
  check(sigaltstack(NULL, &cur) == 0);
  onstack_flag_ok = (cur.ss_flags & SS_ONSTACK) != 0;
}

static void on_usr2(int sig) {
  (void)sig;
  volatile int local = 2;
  offstack_ok = !on_alt_stack((const void *)&local);
}

int main(void) {
  test_init();
  alt_base = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(alt_base != MAP_FAILED);
  stack_t ss = {.ss_sp = alt_base, .ss_flags = 0, .ss_size = ALT_SIZE};
  check(sigaltstack(&ss, NULL) == 0);

  set_handler(SIGUSR1, on_usr1, SA_ONSTACK);
  set_handler(SIGUSR2, on_usr2, 0);

  check(raise(SIGUSR1) == 0);
  check(onstack_ok);
  check(onstack_flag_ok);
  say("SA_ONSTACK handler ran on the alternate stack (SS_ONSTACK set)\n");

  check(raise(SIGUSR2) == 0);
  check(offstack_ok);
  say("plain handler ran on the normal stack\n");

  stack_t cur;
  check(sigaltstack(NULL, &cur) == 0);
  check(!(cur.ss_flags & SS_ONSTACK));
  check(cur.ss_sp == alt_base && cur.ss_size == ALT_SIZE);
  say("outside handlers: not on the alternate stack\n");

  /* Too small a stack is refused. */
  stack_t tiny = {.ss_sp = alt_base, .ss_flags = 0, .ss_size = 64};
  errno = 0;
  check(sigaltstack(&tiny, NULL) == -1 && errno == ENOMEM);
  say("sigaltstack with 64 bytes: ENOMEM\n");

  stack_t disable = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
  check(sigaltstack(&disable, NULL) == 0);
  check(munmap(alt_base, ALT_SIZE) == 0);
  say_nondet_hex("alt stack", (uintptr_t)alt_base);
  finish();
  return 0;
}

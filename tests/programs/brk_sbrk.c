/* The program break: sbrk(n) returns the old break and extends the heap by n
 * writable zero bytes; the raw brk syscall reports the current break, refuses
 * to move below the data segment (returns the old value) and shrinks it. */
#include "test_util.h"

int main(void) {
  test_init();
  char *start = sbrk(0);
  check(start != (void *)-1);
  long raw = syscall(SYS_brk, 0);
  check((char *)raw == start);
  say("sbrk(0) == brk(0)\n");

  char *old = sbrk(4 * 4096);
  check(old == start);
  char *now = sbrk(0);
  check(now == start + 4 * 4096);
  for (int i = 0; i < 4 * 4096; i++) check(old[i] == 0);
  memset(old, 0x77, 4 * 4096);
  check(old[4 * 4096 - 1] == 0x77);
  say("sbrk(16384): returned old break, 16384 zeroed writable bytes\n");

  /* The raw syscall returns the (unchanged) break when asked to go too low. */
  long r = syscall(SYS_brk, 4096);
  check((char *)r == now);
  say("brk(4096): refused, break unchanged\n");

  check(brk(start + 4096) == 0);
  check(sbrk(0) == start + 4096);
  check(start[4095] == 0x77);
  say("brk() shrank the heap to one page, contents kept\n");

  check(brk(start) == 0);
  check(sbrk(0) == start);
  say_nondet_hex("initial break", (uintptr_t)start);
  finish();
  return 0;
}

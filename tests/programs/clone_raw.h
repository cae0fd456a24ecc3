/* A raw clone(2) for tests that need flag combinations glibc does not offer.
 * The child starts on its own stack, calls fn(arg) and then exits (the
 * exit(2) syscall, i.e. only this task) with fn's return value. The child must
 * not use glibc: its TLS may be fake and its stack is not a pthread's. Use
 * the raw_syscall*() helpers. */
#ifndef REPRO_TESTS_PROGRAMS_CLONE_RAW_H
#define REPRO_TESTS_PROGRAMS_CLONE_RAW_H

#include "test_util.h"

static TU_UNUSED long raw_syscall3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret; /* -errno on failure */
}

static TU_UNUSED long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

/* Returns the child's tid in the parent, or -errno. */
static TU_UNUSED long clone_raw(unsigned long flags, void *stack_top, int *ptid, int *ctid, void *tls,
                                int (*fn)(void *), void *arg) {
  void **sp = (void **)((uintptr_t)stack_top & ~(uintptr_t)15);
  *--sp = arg;
  *--sp = (void *)fn;
  long ret;
  register long r10 __asm__("r10") = (long)ctid;
  register long r8 __asm__("r8") = (long)tls;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      /* child: fn and arg are on top of the new stack */
      "xor %%ebp, %%ebp\n\t"
      "pop %%rax\n\t"
      "pop %%rdi\n\t"
      "call *%%rax\n\t"
      "mov %%eax, %%edi\n\t"
      "mov %[exit_nr], %%eax\n\t"
      "syscall\n\t"
      "hlt\n\t"
      "1:\n\t"
      : "=a"(ret)
      : "a"((long)SYS_clone), "D"(flags), "S"(sp), "d"(ptid), "r"(r10), "r"(r8), [exit_nr] "i"(SYS_exit)
      : "rcx", "r11", "memory");
  return ret;
}

#endif

/* A parent that inspects its child with ptrace, as a crash reporter or a
 * debugger does: PTRACE_ATTACH, wait for the stop, read registers
 * (GETREGS and GETREGSET NT_PRSTATUS, which must agree), read a word of the
 * child's memory (PEEKDATA), detach, then SEIZE + INTERRUPT for a second
 * look. The child must not run while stopped: its counter, read through
 * PEEKDATA twice around a pause, stays the same. Under recording all of
 * this is emulated by repro between recorded processes. */
#include "test_util.h"

#include <elf.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

static volatile long counter;
static volatile long magic;

static long peek(pid_t child, volatile long *address) {
  errno = 0;
  long word = ptrace(PTRACE_PEEKDATA, child, (void *)address, NULL);
  check(errno == 0);
  return word;
}

static void look_while_stopped(pid_t child) {
  struct user_regs_struct regs, regset_regs;
  check(ptrace(PTRACE_GETREGS, child, NULL, &regs) == 0);
  struct iovec iov = {&regset_regs, sizeof regset_regs};
  check(ptrace(PTRACE_GETREGSET, child, (void *)NT_PRSTATUS, &iov) == 0);
  check(iov.iov_len == sizeof regset_regs);
  check(memcmp(&regs, &regset_regs, sizeof regs) == 0);
  check(regs.rsp != 0 && regs.rip != 0);
  check(peek(child, &magic) == 0x5eed);
  long before = peek(child, &counter);
  sleep_ms(20);
  check(peek(child, &counter) == before); /* it does not run while stopped */
  say("child inspected while stopped\n");
}

int main(void) {
  test_init();
  int ready[2];
  check(pipe(ready) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    magic = 0x5eed;
    check(write(ready[1], "r", 1) == 1);
    for (;;) {
      counter++;
      sched_yield();
    }
  }
  char byte;
  check(read(ready[0], &byte, 1) == 1);

  check(ptrace(PTRACE_ATTACH, child, NULL, NULL) == 0);
  int status;
  check(waitpid(child, &status, __WALL) == child);
  say_num("attach stop signal", WIFSTOPPED(status) ? WSTOPSIG(status) : -1);
  check(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
  check(waitpid(child, &status, __WALL | WNOHANG) == 0); /* reported once */
  look_while_stopped(child);
  check(ptrace(PTRACE_DETACH, child, NULL, NULL) == 0);

  errno = 0;
  check(ptrace(PTRACE_PEEKDATA, child, (void *)&magic, NULL) == -1 && errno == ESRCH);
  check(ptrace(PTRACE_SEIZE, child, NULL, NULL) == 0);
  check(ptrace(PTRACE_INTERRUPT, child, NULL, NULL) == 0);
  check(waitpid(child, &status, __WALL) == child);
  check(WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP);
  say("seize and interrupt stop\n");
  look_while_stopped(child);
  check(ptrace(PTRACE_DETACH, child, NULL, NULL) == 0);

  check(kill(child, SIGKILL) == 0);
  check(waitpid(child, &status, 0) == child);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  finish();
  return 0;
}

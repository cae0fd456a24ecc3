/* Syscall storm: COUNT (default 1,000,000) getppid() calls through syscall(2),
 * so that libc cannot cache or batch them, and nothing else.  Every call is a
 * tracer stop when recorded, so (record time - native time) / COUNT is the
 * cost of one intercepted syscall.  See getppid_loop.md. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000000;
  long ppid_sum = 0;
  for (long i = 0; i < count; i++) {
    ppid_sum += syscall(SYS_getppid);
  }
  /* The parent does not change, so the sum is count * ppid; print only
   * whether that held, so that the output is the same on every run. */
  long ppid = syscall(SYS_getppid);
  printf("getppid_loop: %ld calls, consistent=%d\n", count, ppid_sum == count * ppid);
  return ppid_sum == count * ppid ? 0 : 1;
}

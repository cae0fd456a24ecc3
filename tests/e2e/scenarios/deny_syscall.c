/* Scenario helper: runs a command where one syscall fails with a given
 * errno, as on a host whose kernel lacks it (ENOSYS) or in a container
 * whose seccomp profile refuses it (EPERM): unshare(2) for
 * replay_isolation_enforced.sh, statx(2) for fast_path.sh.
 * Usage: deny_syscall unshare|statx EPERM|ENOSYS COMMAND [ARGS...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int syscall_named(const char *name) {
  if (strcmp(name, "unshare") == 0) {
    return SYS_unshare;
  }
  if (strcmp(name, "statx") == 0) {
    return SYS_statx;
  }
  return -1;
}

static int errno_named(const char *name) {
  if (strcmp(name, "EPERM") == 0) {
    return EPERM;
  }
  if (strcmp(name, "ENOSYS") == 0) {
    return ENOSYS;
  }
  return -1;
}

int main(int argc, char **argv) {
  int number = argc > 1 ? syscall_named(argv[1]) : -1;
  int error = argc > 2 ? errno_named(argv[2]) : -1;
  if (argc < 4 || number < 0 || error < 0) {
    fprintf(stderr, "usage: deny_syscall unshare|statx EPERM|ENOSYS COMMAND [ARGS...]\n");
    return 2;
  }
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)number, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)error),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("deny_syscall: installing the filter");
    return 126;
  }
  execvp(argv[3], argv + 3);
  perror("deny_syscall: exec");
  return 127;
}

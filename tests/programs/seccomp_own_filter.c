/* A program that restricts its own syscalls with seccomp, as sandboxes do:
 *  - an ERRNO filter answers getppid with a made-up errno;
 *  - a TRAP filter turns uname into SIGSYS, whose siginfo names the syscall
 *    and whose handler sees the arguments in the saved registers;
 *  - TSYNC puts a filter on every thread at once: a second thread that was
 *    already running sees getpriority fail afterwards;
 *  - a KILL_PROCESS filter in a forked child ends it with SIGSYS;
 *  - a child whose filter vetoes execve keeps running its own code.
 * Each of these acts in the kernel before repro's own filter, so replay
 * must install the same filters to reproduce them. */
#include "test_util.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <ucontext.h>

enum { kErrnoGetppid = 42 };

/* Allow everything but syscall `nr`, which gets `action`. */
static void install(int nr, unsigned action, unsigned flags) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  check(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program) == 0);
}

static volatile sig_atomic_t sigsys_count;
static volatile long sigsys_syscall;
static volatile long sigsys_arg0;

static void on_sigsys(int sig, siginfo_t *info, void *context) {
  (void)sig;
  ucontext_t *uc = context;
  sigsys_count++;
  sigsys_syscall = info->si_syscall;
  sigsys_arg0 = uc->uc_mcontext.gregs[REG_RDI];
  uc->uc_mcontext.gregs[REG_RAX] = -ENOTSUP; /* the result the program sees */
}

static pthread_barrier_t started;
static pthread_barrier_t filtered;
static pthread_barrier_t checked;

static void *other_thread(void *arg) {
  (void)arg;
  errno = 0;
  check(getpriority(PRIO_PROCESS, 0) != -1 || errno == 0);
  pthread_barrier_wait(&started);
  pthread_barrier_wait(&filtered);
  errno = 0;
  int result = getpriority(PRIO_PROCESS, 0);
  say_num("thread getpriority after tsync", result);
  say_num("thread getpriority errno", errno);
  check(result == -1 && errno == EACCES);
  pthread_barrier_wait(&checked);
  return NULL;
}

int main(void) {
  test_init();
  check(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);

  /* A child killed by its own filter. */
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    install(SYS_getuid, SECCOMP_RET_KILL_PROCESS, 0);
    (void)getuid();
    _exit(99); /* not reached */
  }
  int status;
  check(waitpid(child, &status, 0) == child);
  say_num("killed child signal", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);

  /* A child whose filter vetoes exec. */
  child = fork();
  check(child >= 0);
  if (child == 0) {
    install(SYS_execve, SECCOMP_RET_ERRNO | EPERM, 0);
    char *argv[] = {"/bin/true", NULL};
    execv("/bin/true", argv);
    _exit(errno == EPERM ? 7 : 8);
  }
  check(waitpid(child, &status, 0) == child);
  say_num("vetoed exec child status", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 7);

  /* ERRNO: getppid's raw result is the negated errno. */
  install(SYS_getppid, SECCOMP_RET_ERRNO | kErrnoGetppid, 0);
  long raw = syscall(SYS_getppid);
  say_num("getppid", raw);
  say_num("getppid errno", errno);
  check(raw == -1 && errno == kErrnoGetppid);

  /* TRAP: SIGSYS with the syscall and its arguments. */
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  check(sigaction(SIGSYS, &action, NULL) == 0);
  install(SYS_uname, SECCOMP_RET_TRAP, 0);
  struct utsname name;
  long trapped = syscall(SYS_uname, &name);
  say_num("uname result", trapped);
  say_num("sigsys count", sigsys_count);
  say_num("sigsys syscall", sigsys_syscall);
  check(trapped == -1 && errno == ENOTSUP);
  check(sigsys_count == 1 && sigsys_syscall == SYS_uname);
  check(sigsys_arg0 == (long)&name);

  /* TSYNC: one filter for every thread of the process. */
  check(pthread_barrier_init(&started, NULL, 2) == 0);
  check(pthread_barrier_init(&filtered, NULL, 2) == 0);
  check(pthread_barrier_init(&checked, NULL, 2) == 0);
  pthread_t thread;
  check(pthread_create(&thread, NULL, other_thread, NULL) == 0);
  pthread_barrier_wait(&started);
  install(SYS_getpriority, SECCOMP_RET_ERRNO | EACCES, SECCOMP_FILTER_FLAG_TSYNC);
  pthread_barrier_wait(&filtered);
  pthread_barrier_wait(&checked);
  check(pthread_join(thread, NULL) == 0);

  /* Syscalls the filters let through still work and are recorded. */
  check(getpid() > 0);
  finish();
  return 0;
}

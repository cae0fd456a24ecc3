/* Process and thread ids: getpid and getppid are stable, the main thread's
 * tid equals the pid, other threads share the pid but have distinct tids,
 * glibc's gettid() matches the raw syscall, and a child's getppid() is us.
 * The numbers themselves are printed with "~ ". */
#include "test_util.h"

#include <pthread.h>
#include <sys/wait.h>

#define NTHREADS 3

struct ids {
  pid_t pid, tid, raw_tid;
};

static struct ids seen[NTHREADS];

static void *worker(void *arg) {
  struct ids *s = (struct ids *)arg;
  s->pid = getpid();
  s->tid = gettid();
  s->raw_tid = (pid_t)syscall(SYS_gettid);
  return NULL;
}

int main(void) {
  test_init();
  pid_t pid = getpid(), ppid = getppid();
  check(pid > 0 && ppid > 0 && pid != ppid);
  check(gettid() == pid);
  check(syscall(SYS_getpid) == pid);
  say("main thread: tid == pid\n");

  pthread_t threads[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) check(pthread_create(&threads[i], NULL, worker, &seen[i]) == 0);
  for (int i = 0; i < NTHREADS; i++) check(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < NTHREADS; i++) {
    check(seen[i].pid == pid);
    check(seen[i].tid == seen[i].raw_tid);
    check(seen[i].tid != pid);
  }
  say("threads: same pid, own tid, gettid() == syscall(SYS_gettid)\n");

  int p[2];
  check(pipe(p) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    pid_t ids[2] = {getpid(), getppid()};
    check(write(p[1], ids, sizeof ids) == sizeof ids);
    _exit(0);
  }
  pid_t ids[2];
  check(read(p[0], ids, sizeof ids) == sizeof ids);
  int status;
  check(waitpid(child, &status, 0) == child);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(ids[0] == child && ids[1] == pid);
  say("child: getpid() == fork's return, getppid() == our pid\n");
  check(getpid() == pid && getppid() == ppid);
  say("pid and ppid unchanged\n");

  say_nondet_num("pid", pid);
  say_nondet_num("ppid", ppid);
  for (int i = 0; i < NTHREADS; i++) say_nondet_num("thread tid", seen[i].tid);
  say_nondet_num("child pid", child);
  finish();
  return 0;
}

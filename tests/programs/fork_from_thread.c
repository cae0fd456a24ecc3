/* fork() from a secondary thread: the child contains only a copy of the
 * forking thread (one thread, tid == its pid) and sees memory as of the fork;
 * the forking thread reaps it and its later stores stay in the parent. */
#include "test_util.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>

static volatile int marker;
static int child_exit_code = -1;

static int count_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static void *forker(void *arg) {
  (void)arg;
  marker = 17;
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    int ok = count_threads() == 1 && tu_gettid() == getpid() && marker == 17;
    _exit(ok ? 0 : 1);
  }
  marker = 18; /* not visible to the child */
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status));
  child_exit_code = WEXITSTATUS(status);
  return NULL;
}

int main(void) {
  test_init();
  pthread_t t;
  check(pthread_create(&t, NULL, forker, NULL) == 0);
  check(pthread_join(t, NULL) == 0);
  check(child_exit_code == 0);
  say("child of a secondary thread: one thread, tid == pid, memory as of fork\n");
  check(marker == 18);
  say("parent: sees the forking thread's later store\n");
  finish();
  return 0;
}

/* Thread names: prctl(PR_SET_NAME) and pthread_setname_np change what
 * PR_GET_NAME and /proc/self/task/<tid>/comm report; names are truncated to
 * 15 bytes; each thread has its own. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>

static void read_comm(pid_t tid, char *out, size_t size) {
  struct line l;
  line_init(&l);
  line_str(&l, "/proc/self/task/");
  line_num(&l, tid);
  line_str(&l, "/comm");
  l.buf[l.len] = 0;
  int fd = open(l.buf, O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  ssize_t n = read(fd, out, size - 1);
  check(n > 0);
  close(fd);
  if (out[n - 1] == '\n') n--;
  out[n] = 0;
}

static char thread_saw[16];
static pid_t thread_tid;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stage;

static void *worker(void *arg) {
  (void)arg;
  thread_tid = gettid();
  check(prctl(PR_GET_NAME, thread_saw) == 0);
  pthread_mutex_lock(&lock);
  stage = 1;
  pthread_cond_broadcast(&cond);
  while (stage != 2) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  test_init();
  char name[32];
  check(prctl(PR_SET_NAME, "repro-main") == 0);
  memset(name, 0, sizeof name);
  check(prctl(PR_GET_NAME, name) == 0);
  check(strcmp(name, "repro-main") == 0);
  read_comm(gettid(), name, sizeof name);
  check(strcmp(name, "repro-main") == 0);
  say("PR_SET_NAME repro-main: PR_GET_NAME and comm agree\n");

  check(prctl(PR_SET_NAME, "a-very-long-thread-name") == 0);
  check(prctl(PR_GET_NAME, name) == 0);
  check(strcmp(name, "a-very-long-thr") == 0);
  say("long name truncated to 15 bytes: a-very-long-thr\n");

  pthread_t t;
  check(pthread_create(&t, NULL, worker, NULL) == 0);
  pthread_mutex_lock(&lock);
  while (stage != 1) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  /* A new thread inherits the creator's name. */
  check(strcmp(thread_saw, "a-very-long-thr") == 0);
  say("new thread inherited the name\n");
  check(pthread_setname_np(t, "worker-1") == 0);
  read_comm(thread_tid, name, sizeof name);
  check(strcmp(name, "worker-1") == 0);
  check(prctl(PR_GET_NAME, name) == 0);
  check(strcmp(name, "a-very-long-thr") == 0);
  say("pthread_setname_np renamed only the other thread: worker-1\n");
  pthread_mutex_lock(&lock);
  stage = 2;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
  check(pthread_join(t, NULL) == 0);
  check(pthread_setname_np(pthread_self(), "0123456789abcdef") == ERANGE);
  say("pthread_setname_np with 16 chars: ERANGE\n");
  finish();
  return 0;
}

/* Many short-lived threads or processes, for the many_tasks scenario.
 *   many_tasks_program threads N BATCH: creates N threads in batches of
 *     BATCH; the threads of a batch are all alive at once (they meet at a
 *     barrier with the main thread), then each adds its number into a
 *     shared sum under a mutex and calls getpid() once; all are joined.
 *   many_tasks_program forks N: forks N children, each exits at once with
 *     status (its number % 100); then the parent reaps them all, in
 *     whatever order they come, and sums the statuses.
 *   many_tasks_program blocked N PIDFILE: writes its pid to PIDFILE, then
 *     creates N threads that each wait in pause() forever, printing a line
 *     every 100, then waits too. The tracee_killed scenario kills it with
 *     SIGKILL while it creates them.
 * Prints the count and the sum, which are the same on every run. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t batch_barrier;
static long thread_sum;

static void *thread_main(void *arg) {
  long number = (long)arg;
  pthread_barrier_wait(&batch_barrier);
  check(syscall(SYS_getpid) > 0);
  pthread_mutex_lock(&lock);
  thread_sum += number;
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void run_threads(long count, long batch) {
  pthread_t *threads = calloc((size_t)batch, sizeof *threads);
  check(threads != NULL);
  pthread_attr_t attr;
  check(pthread_attr_init(&attr) == 0);
  /* Small stacks: BATCH threads at once need BATCH stacks. */
  check(pthread_attr_setstacksize(&attr, 64 * 1024) == 0);
  long created = 0;
  while (created < count) {
    long n = count - created < batch ? count - created : batch;
    check(pthread_barrier_init(&batch_barrier, NULL, (unsigned)n + 1) == 0);
    for (long i = 0; i < n; i++) {
      check(pthread_create(&threads[i], &attr, thread_main, (void *)(created + i)) == 0);
    }
    pthread_barrier_wait(&batch_barrier);
    for (long i = 0; i < n; i++) {
      check(pthread_join(threads[i], NULL) == 0);
    }
    check(pthread_barrier_destroy(&batch_barrier) == 0);
    created += n;
  }
  free(threads);
  say_num("threads", created);
  say_num("sum", thread_sum);
}

static void run_forks(long count) {
  long sum = 0;
  for (long i = 0; i < count; i++) {
    pid_t child = fork();
    check(child >= 0);
    if (child == 0) {
      _exit((int)(i % 100));
    }
  }
  for (long i = 0; i < count; i++) {
    int status = 0;
    check(wait(&status) > 0);
    check(WIFEXITED(status));
    sum += WEXITSTATUS(status);
  }
  check(wait(NULL) == -1 && errno == ECHILD);
  say_num("children", count);
  say_num("sum", sum);
}

static void *blocked_main(void *arg) {
  (void)arg;
  for (;;) {
    pause();
  }
  return NULL;
}

static void run_blocked(long count, const char *pid_file) {
  char pid_text[32];
  int n = snprintf(pid_text, sizeof pid_text, "%d\n", (int)getpid());
  int fd = open(pid_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0);
  tu_write_all(fd, pid_text, (size_t)n);
  check(close(fd) == 0);
  pthread_attr_t attr;
  check(pthread_attr_init(&attr) == 0);
  check(pthread_attr_setstacksize(&attr, 64 * 1024) == 0);
  check(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
  for (long i = 1; i <= count; i++) {
    pthread_t thread;
    check(pthread_create(&thread, &attr, blocked_main, NULL) == 0);
    if (i % 100 == 0) {
      say_num("threads", i);
    }
  }
  for (;;) {
    pause();
  }
}

int main(int argc, char **argv) {
  /* No test_init(): its alarm(20) would race the recording of 1000 tasks;
   * the scenario bounds the time instead. */
  check(argc >= 3);
  long count = atol(argv[2]);
  check(count > 0);
  if (strcmp(argv[1], "blocked") == 0) {
    check(argc == 4);
    run_blocked(count, argv[3]);
  } else if (strcmp(argv[1], "threads") == 0) {
    check(argc == 4);
    run_threads(count, atol(argv[3]));
  } else {
    check(strcmp(argv[1], "forks") == 0);
    run_forks(count);
  }
  finish();
  return 0;
}

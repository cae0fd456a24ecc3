/* A child stopped by SIGSTOP really stops: its counter in shared memory
 * stays still while it is stopped, waitpid(WNOHANG) reports no change of
 * state in the meantime, and after SIGCONT the counter moves again.
 * The child's second thread, blocked in a read of a pipe, stops too: a
 * byte written while it is stopped is taken only after SIGCONT. Then the
 * same with SIGTSTP (Ctrl-Z), whose default action also stops.
 * Debuggers and shells (Ctrl-Z, fg) rely on this. */
#include "test_util.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* Shared with the child: its loop's counter, and the bytes its reader
 * thread has taken from the pipe. */
struct shared {
  atomic_long counter;
  atomic_long bytes_read;
};
static struct shared *shared;
static int pipe_fds[2];

static void *reader(void *arg) {
  (void)arg;
  char byte;
  while (read(pipe_fds[0], &byte, 1) == 1) {
    atomic_fetch_add(&shared->bytes_read, 1);
  }
  return NULL;
}

static void stop_and_continue(pid_t child, int stop_signal) {
  while (atomic_load(&shared->counter) < 100) {
    sched_yield();
  }
  check(kill(child, stop_signal) == 0);
  int status;
  check(waitpid(child, &status, WUNTRACED) == child);
  check(WIFSTOPPED(status) && WSTOPSIG(status) == stop_signal);
  say_num("child stopped by", stop_signal);

  long at_stop = atomic_load(&shared->counter);
  long read_at_stop = atomic_load(&shared->bytes_read);
  check(write(pipe_fds[1], "x", 1) == 1); /* the reader is stopped: no one takes it */
  for (int i = 0; i < 20; i++) {
    sleep_ms(5);
    check(waitpid(child, &status, WNOHANG | WUNTRACED | WCONTINUED) == 0);
  }
  long later = atomic_load(&shared->counter);
  say_num("counter moved while stopped", later - at_stop);
  say_num("bytes read while stopped", atomic_load(&shared->bytes_read) - read_at_stop);
  check(later == at_stop);
  check(atomic_load(&shared->bytes_read) == read_at_stop);

  check(kill(child, SIGCONT) == 0);
  check(waitpid(child, &status, WCONTINUED) == child);
  check(WIFCONTINUED(status));
  say("child continued\n");
  while (atomic_load(&shared->counter) < later + 100 ||
         atomic_load(&shared->bytes_read) == read_at_stop) {
    sched_yield();
  }
  say("counter moves again, the byte is read\n");
  atomic_store(&shared->counter, 0);
}

int main(void) {
  test_init();
  shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  check(shared != MAP_FAILED);
  check(pipe(pipe_fds) == 0);
  /* The child leads a process group of its own, whose parent (we) is in
   * another group of the same session: the group is not orphaned, where
   * the kernel would discard SIGTSTP, however this test is started. */
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    check(setpgid(0, 0) == 0);
    pthread_t thread;
    check(pthread_create(&thread, NULL, reader, NULL) == 0);
    for (;;) {
      atomic_fetch_add(&shared->counter, 1);
      sched_yield(); /* a syscall per turn: the recorder can switch here */
    }
  }
  check(setpgid(child, child) == 0 || errno == EACCES); /* EACCES: it did so first */
  stop_and_continue(child, SIGSTOP);
  stop_and_continue(child, SIGTSTP);
  int status;
  check(kill(child, SIGKILL) == 0);
  check(waitpid(child, &status, 0) == child);
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  finish();
  return 0;
}

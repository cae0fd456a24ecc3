/* Deadlocks of every kind the recorder detects, and waits that only look
 * like one. Usage: deadlock_program MODE
 *   futex   two threads each hold one mutex and lock the other's (ABBA)
 *   pipe    two processes each read a pipe only the other writes
 *   wait4   a parent waits for its child, which reads a pipe only the
 *           parent writes
 *   self    one thread locks a mutex it already holds
 *   slow    threads and a child that only take their time: a mutex held
 *           across a sleep, a pipe written after one, a child that sleeps
 *           before it exits (no deadlock; exits 0)
 *   timer   the only thread waits on a semaphore a SIGALRM handler posts
 *           (no deadlock; exits 0)
 * The deadlocking modes never end by themselves: no alarm() watchdog, which
 * would be a timer that could end the wait. */
#include "test_util.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Named in the backtraces the scenario checks. */
#define NOINLINE __attribute__((noinline))

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static NOINLINE void *lock_second_then_first(void *arg) {
  (void)arg;
  pthread_mutex_lock(&second);
  pthread_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&first);
  return NULL;
}

static NOINLINE void abba_deadlock(void) {
  pthread_barrier_init(&both_hold_one, NULL, 2);
  pthread_t other;
  check(pthread_create(&other, NULL, lock_second_then_first, NULL) == 0);
  pthread_mutex_lock(&first);
  pthread_barrier_wait(&both_hold_one);
  say("both threads hold one lock\n");
  pthread_mutex_lock(&second);
  say("unreachable\n");
}

static void read_one(int fd) {
  char byte;
  check(read(fd, &byte, 1) == 1);
}

static NOINLINE void pipe_cycle(void) {
  int to_child[2], to_parent[2];
  check(pipe(to_child) == 0 && pipe(to_parent) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    close(to_child[1]);
    read_one(to_child[0]);  /* the parent writes only after its own read */
    check(write(to_parent[1], "x", 1) == 1);
    _exit(0);
  }
  close(to_parent[1]);
  say("each process reads first\n");
  read_one(to_parent[0]);
  check(write(to_child[1], "x", 1) == 1);
  say("unreachable\n");
}

static NOINLINE void wait_cycle(void) {
  int to_child[2];
  check(pipe(to_child) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    read_one(to_child[0]);  /* the parent writes only after its wait */
    _exit(0);
  }
  say("the parent waits before it writes\n");
  int status;
  check(waitpid(child, &status, 0) == child);
  check(write(to_child[1], "x", 1) == 1);
  say("unreachable\n");
}

static NOINLINE void self_deadlock(void) {
  pthread_mutex_lock(&first);
  say("locking a held mutex again\n");
  pthread_mutex_lock(&first);
  say("unreachable\n");
}

static void pause_for(long milliseconds) {
  struct timespec pause = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

static int slow_pipe[2];

static void *hold_then_write(void *arg) {
  (void)arg;
  pthread_mutex_lock(&first);
  pthread_barrier_wait(&both_hold_one);
  pause_for(1200);
  pthread_mutex_unlock(&first);
  pause_for(1200);
  check(write(slow_pipe[1], "x", 1) == 1);
  return NULL;
}

static NOINLINE void only_slow(void) {
  pthread_barrier_init(&both_hold_one, NULL, 2);
  check(pipe(slow_pipe) == 0);
  pthread_t other;
  check(pthread_create(&other, NULL, hold_then_write, NULL) == 0);
  pthread_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&first); /* until the other thread wakes up */
  pthread_mutex_unlock(&first);
  say("got the mutex after its holder slept\n");
  read_one(slow_pipe[0]);
  say("read what a sleeping writer wrote\n");
  check(pthread_join(other, NULL) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    pause_for(1200);
    _exit(7);
  }
  int status;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 7);
  say("waited for a sleeping child\n");
}

static sem_t posted;

static void post(int signal) {
  (void)signal;
  sem_post(&posted);
}

static NOINLINE void timer_wakes(void) {
  check(sem_init(&posted, 0, 0) == 0);
  check(signal(SIGALRM, post) != SIG_ERR);
  alarm(2);
  while (sem_wait(&posted) != 0) {
    check(errno == EINTR);
  }
  say("a timer's signal handler posted the semaphore\n");
}

int main(int argc, char **argv) {
  check(argc == 2);
  const char *mode = argv[1];
  if (strcmp(mode, "futex") == 0) abba_deadlock();
  else if (strcmp(mode, "pipe") == 0) pipe_cycle();
  else if (strcmp(mode, "wait4") == 0) wait_cycle();
  else if (strcmp(mode, "self") == 0) self_deadlock();
  else if (strcmp(mode, "slow") == 0) only_slow();
  else if (strcmp(mode, "timer") == 0) timer_wakes();
  else check(!"unknown mode");
  finish();
  return 0;
}

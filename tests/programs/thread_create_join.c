/* pthread_create + pthread_join: each thread sums its own range of numbers and
 * hands the result back through its argument; join order is fixed, so the
 * output is deterministic. */
#include "test_util.h"

#include <pthread.h>

#define NTHREADS 3

struct job {
  long long from, to;
  long long sum;
  pid_t tid;
};

static void *worker(void *arg) {
  struct job *j = (struct job *)arg;
  long long s = 0;
  for (long long i = j->from; i <= j->to; i++) s += i;
  j->sum = s;
  j->tid = tu_gettid();
  return arg;
}

int main(void) {
  test_init();
  struct job jobs[NTHREADS];
  pthread_t threads[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    jobs[i].from = i * 1000 + 1;
    jobs[i].to = (i + 1) * 1000;
    jobs[i].sum = -1;
    jobs[i].tid = 0;
    check(pthread_create(&threads[i], NULL, worker, &jobs[i]) == 0);
  }
  long long total = 0;
  for (int i = 0; i < NTHREADS; i++) {
    void *ret = NULL;
    check(pthread_join(threads[i], &ret) == 0);
    check(ret == &jobs[i]);
    long long expect = (jobs[i].from + jobs[i].to) * (jobs[i].to - jobs[i].from + 1) / 2;
    check(jobs[i].sum == expect);
    check(jobs[i].tid != 0 && jobs[i].tid != getpid());
    struct line l;
    line_init(&l);
    line_str(&l, "thread ");
    line_num(&l, i);
    line_str(&l, " summed ");
    line_num(&l, jobs[i].from);
    line_str(&l, "..");
    line_num(&l, jobs[i].to);
    line_str(&l, " = ");
    line_num(&l, jobs[i].sum);
    line_say(&l);
    total += jobs[i].sum;
  }
  check(total == 3000ll * 3001 / 2);
  say_num("total", total);
  /* Joining an already-joined thread is undefined; joining self is EDEADLK. */
  check(pthread_join(pthread_self(), NULL) == EDEADLK);
  say("join self: EDEADLK\n");
  finish();
  return 0;
}

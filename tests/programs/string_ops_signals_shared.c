/* String instructions (rep movsb, rep stosb) on MAP_SHARED memory, in two
 * threads and a forked child at once, while signals with handlers
 * interrupt them: ITIMER_PROF in both processes, and SIGUSR1 sent by the
 * parent to the child. A signal can land in the middle of a string
 * instruction (rip stays on it, rcx counts what is left). Each worker
 * fills its own area of the shared mapping, copies it to a second area
 * and checks the copy; the totals and checksums are exact, the signal
 * counts vary (printed with "~ "). */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

#define AREA_BYTES (1u << 20) /* 1 MiB: a rep movsb of it takes tens of us */
#define WORKERS 3             /* two threads of the parent, one child */
/* Enough rounds that a hundred or more signals land inside string
 * instructions, where the recording delivers them as they stand (a step
 * would run one iteration), and slices end inside them (run to their end
 * with a breakpoint). */
#define ROUNDS 1000

static unsigned char *shared;
static unsigned long *child_sum; /* in the shared mapping, past the areas */
static volatile sig_atomic_t prof_ticks, usr1_ticks;

static void on_prof(int sig) {
  (void)sig;
  prof_ticks++;
}

static void on_usr1(int sig) {
  (void)sig;
  usr1_ticks++;
}

static void rep_stosb(void *dst, int byte, size_t n) {
  __asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(byte) : "memory");
}

static void rep_movsb(void *dst, const void *src, size_t n) {
  __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

/* Worker w owns areas 2w (filled) and 2w + 1 (the copy). Returns a checksum. */
static unsigned long work(int w) {
  unsigned char *fill = shared + (size_t)(2 * w) * AREA_BYTES;
  unsigned char *copy = fill + AREA_BYTES;
  unsigned long sum = 0;
  for (int round = 0; round < ROUNDS; round++) {
    int byte = (w * 37 + round) & 0xff;
    rep_stosb(fill, byte, AREA_BYTES);
    fill[round * 4099 % AREA_BYTES] = (unsigned char)(byte ^ 0x5a);
    rep_movsb(copy, fill, AREA_BYTES);
    for (size_t i = 0; i < AREA_BYTES; i += 4096) {
      size_t at = i + (size_t)round % 4096;
      check(copy[at] == fill[at]);
      sum = sum * 31 + copy[at];
    }
  }
  return sum;
}

static void *thread_main(void *arg) {
  return (void *)work((int)(long)arg);
}

static void start_prof_timer(void) {
  struct itimerval every = {{0, 500}, {0, 500}};
  check(setitimer(ITIMER_PROF, &every, NULL) == 0);
}

static void stop_prof_timer(void) {
  struct itimerval off = {{0, 0}, {0, 0}};
  check(setitimer(ITIMER_PROF, &off, NULL) == 0);
}

int main(void) {
  test_init();
  size_t bytes = (size_t)2 * WORKERS * AREA_BYTES + 4096;
  shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  check(shared != MAP_FAILED);
  child_sum = (unsigned long *)(shared + bytes - 4096);
  set_handler(SIGPROF, on_prof, SA_RESTART);
  set_handler(SIGUSR1, on_usr1, SA_RESTART);

  int ready[2];
  check(pipe(ready) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    close(ready[0]);
    start_prof_timer();
    check(write(ready[1], "r", 1) == 1);
    unsigned long sum = work(2);
    stop_prof_timer();
    *child_sum = sum; /* the parent reads it after waiting */
    _exit(0);
  }
  close(ready[1]);
  char c;
  check(read(ready[0], &c, 1) == 1);
  start_prof_timer();
  pthread_t thread;
  check(pthread_create(&thread, NULL, thread_main, (void *)1L) == 0);
  /* SIGUSR1 at the child while it works, then the main thread's share. */
  int sent = 0;
  for (int i = 0; i < 20; i++) {
    sent += kill(child, SIGUSR1) == 0;
    usleep(200);
  }
  unsigned long sums[WORKERS];
  sums[0] = work(0);
  void *result;
  check(pthread_join(thread, &result) == 0);
  stop_prof_timer();
  sums[1] = (unsigned long)result;
  int status;
  check(waitpid(child, &status, 0) == child);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  sums[2] = *child_sum;
  for (int w = 0; w < WORKERS; w++) {
    struct line l;
    line_init(&l);
    line_str(&l, "worker ");
    line_num(&l, w);
    line_str(&l, " checksum ");
    line_hex(&l, sums[w]);
    line_str(&l, "\n");
    line_say(&l);
  }
  say_nondet_num("SIGPROF in the parent", prof_ticks);
  say_nondet_num("SIGUSR1 sent to the child", sent);
  check(munmap(shared, bytes) == 0);
  finish();
  return 0;
}

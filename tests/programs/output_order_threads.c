/* Threads writing to stdout at the same time: the replay must print their
 * lines in the order the recording did, every time. stdout is a file or a
 * pipe; the recorder lets a thread into a write that may block and runs
 * another meanwhile, so it must keep two writes to the same object from
 * overlapping, or the trace's order is not the kernel's.
 *   1. Four threads leave a barrier together and each print five lines.
 *   2. A writer thread sends numbered messages through a pipe to a reader
 *      thread; both print their progress.
 *   3. After EXIT-SUCCESS, a thread prints a last line while the main
 *      thread exits the process: the line is in the output or not, and
 *      the replay must say the same as the recording.
 * The order differs between native runs, so those lines start with "~ ". */
#include "test_util.h"

#include <pthread.h>

enum { kPrinters = 4, kLinesEach = 5, kMessages = 10 };

static pthread_barrier_t start_together;
static int message_pipe[2];

static void *printer(void *arg) {
  long n = (long)arg;
  pthread_barrier_wait(&start_together);
  for (int i = 0; i < kLinesEach; i++) {
    struct line l;
    line_init(&l);
    line_str(&l, "thread ");
    line_num(&l, n);
    line_str(&l, " line ");
    line_num(&l, i);
    line_say_nondet(&l);
  }
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  for (int i = 0; i < kMessages; i++) {
    char c = (char)i;
    check(write(message_pipe[1], &c, 1) == 1);
    say_nondet_num("wrote", i);
  }
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  for (int i = 0; i < kMessages; i++) {
    char c;
    check(read(message_pipe[0], &c, 1) == 1);
    check(c == (char)i);
    say_nondet_num("read", i);
  }
  return NULL;
}

static void *last_words(void *arg) {
  (void)arg;
  say_nondet("a thread's line as the process exits");
  return NULL;
}

int main(void) {
  test_init();
  pthread_t threads[kPrinters];
  check(pthread_barrier_init(&start_together, NULL, kPrinters) == 0);
  for (long i = 0; i < kPrinters; i++) {
    check(pthread_create(&threads[i], NULL, printer, (void *)i) == 0);
  }
  for (int i = 0; i < kPrinters; i++) {
    check(pthread_join(threads[i], NULL) == 0);
  }
  say("printers done\n");

  check(pipe(message_pipe) == 0);
  pthread_t w, r;
  check(pthread_create(&r, NULL, reader, NULL) == 0);
  check(pthread_create(&w, NULL, writer, NULL) == 0);
  check(pthread_join(w, NULL) == 0);
  check(pthread_join(r, NULL) == 0);
  say("pipe pair done\n");

  finish();
  pthread_t late;
  check(pthread_create(&late, NULL, last_words, NULL) == 0);
  _exit(0); /* the process ends whether or not the thread has printed */
}

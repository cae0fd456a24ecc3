/* Stack overflow, in child processes: the stack runs into its limit (main
 * thread) or its guard page (a thread). With a SIGSEGV handler on an
 * alternate signal stack, the handler runs there and siglongjmps out;
 * without an alternate stack, or without a handler, the child dies of
 * SIGSEGV. The parent reports how each child ended. Each child first
 * lowers its stack limit, which decides where its stack overflows. */
#include "test_util.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define ALT_SIZE (64 * 1024)

static sigjmp_buf escape;
static volatile int handled;
static char alt_stack[ALT_SIZE];
static volatile int deepest;

/* Never false: the condition only keeps the compiler from calling the
 * recursion infinite, which it is meant to be. */
static volatile int keep_going = 1;

static int recurse(int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  deepest = depth;
  return keep_going ? recurse(depth + 1) + frame[0] : frame[0];
}

static void on_segv(int sig) {
  (void)sig;
  volatile char here;
  /* The handler must be running on the alternate stack. */
  if ((char *)&here < alt_stack || (char *)&here >= alt_stack + ALT_SIZE) _exit(10);
  handled++;
  siglongjmp(escape, 1);
}

static void use_alt_stack(void) {
  stack_t ss = {.ss_sp = alt_stack, .ss_size = ALT_SIZE, .ss_flags = 0};
  check(sigaltstack(&ss, NULL) == 0);
  set_handler(SIGSEGV, on_segv, SA_ONSTACK);
}

/* Overflows the calling thread's stack; returns 0 after the handler
 * escaped from the overflow. */
static int overflow_and_escape(void) {
  if (sigsetjmp(escape, 1) == 0) {
    recurse(0);
    return 1;
  }
  return handled == 1 ? 0 : 2;
}

static void *thread_overflow(void *arg) {
  (void)arg;
  use_alt_stack(); /* per thread */
  return (void *)(long)overflow_and_escape();
}

/* What each child does. */
enum mode { kMainAltStack, kThreadAltStack, kNoAltStack, kNoHandler, kTwice };

static int child(enum mode mode) {
  /* A small stack limit keeps the overflow quick. */
  struct rlimit limit = {.rlim_cur = 256 * 1024, .rlim_max = RLIM_INFINITY};
  check(setrlimit(RLIMIT_STACK, &limit) == 0);
  switch (mode) {
    case kMainAltStack: {
      use_alt_stack();
      int result = overflow_and_escape();
      /* How deep it got depends on the stack limit set above (and on the
       * size of the environment). */
      say_nondet_num("overflowed at depth", deepest);
      return result;
    }
    case kTwice:
      /* After escaping once, the stack is usable again and overflows
       * again the same way. */
      use_alt_stack();
      if (overflow_and_escape() != 0) return 3;
      handled = 0;
      return overflow_and_escape();
    case kThreadAltStack: {
      pthread_attr_t attr;
      pthread_t thread;
      void *result;
      check(pthread_attr_init(&attr) == 0);
      check(pthread_attr_setstacksize(&attr, 128 * 1024) == 0);
      check(pthread_create(&thread, &attr, thread_overflow, NULL) == 0);
      check(pthread_join(thread, &result) == 0);
      return (int)(long)result;
    }
    case kNoAltStack:
      /* The handler cannot run without a stack: the kernel kills the
       * process with SIGSEGV. */
      set_handler(SIGSEGV, on_segv, 0);
      recurse(0);
      return 4;
    case kNoHandler:
      recurse(0);
      return 5;
  }
  return 6;
}

static void run(const char *name, enum mode mode) {
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) _exit(child(mode));
  int status;
  check(waitpid(pid, &status, 0) == pid);
  struct line l;
  line_init(&l);
  line_str(&l, name);
  if (WIFEXITED(status)) {
    line_str(&l, ": exited with status ");
    line_num(&l, WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    line_str(&l, ": killed by signal ");
    line_num(&l, WTERMSIG(status));
  }
  line_str(&l, "\n");
  line_say(&l);
}

int main(void) {
  test_init();
  run("main stack, handler on the alternate stack", kMainAltStack);
  run("main stack, overflowed twice", kTwice);
  run("thread stack, handler on the alternate stack", kThreadAltStack);
  run("main stack, handler without an alternate stack", kNoAltStack);
  run("main stack, no handler", kNoHandler);
  finish();
  return 0;
}

/* Processes that die of a signal before main, or right after they start:
 * an ELF constructor that faults (SIGSEGV), one that calls abort()
 * (SIGABRT), a .preinit_array function that raises SIGTERM before libc's
 * constructors run, a child killed by its parent right after fork, and
 * one killed right after (or during) its exec. The parent sees each one's
 * death by the right signal. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

/* The mode the child was exec'd with, read in the constructors from argv
 * (glibc passes argc, argv and envp to them). */
static int mode_is(int argc, char **argv, const char *mode) {
  return argc == 2 && strcmp(argv[1], mode) == 0;
}

static void early_preinit(int argc, char **argv, char **envp) {
  (void)envp;
  if (mode_is(argc, argv, "preinit-sigterm")) {
    kill(getpid(), SIGTERM);
  }
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) =
    early_preinit;

__attribute__((constructor)) static void constructor(int argc, char **argv, char **envp) {
  (void)envp;
  if (mode_is(argc, argv, "ctor-segv")) {
    *(volatile int *)16 = 1;
  }
  if (mode_is(argc, argv, "ctor-abort")) {
    abort();
  }
}

static pid_t spawn_self(const char *mode) {
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    char *args[] = {"fatal_signal_in_init", (char *)mode, NULL};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  return child;
}

static void expect_signal(pid_t child, int sig, const char *what) {
  int status;
  check(waitpid(child, &status, 0) == child);
  check(WIFSIGNALED(status));
  check(WTERMSIG(status) == sig);
  struct line l;
  line_init(&l);
  line_str(&l, what);
  line_str(&l, ": killed by ");
  line_str(&l, sigabbrev_np(WTERMSIG(status)));
  line_str(&l, "\n");
  line_say(&l);
}

int main(int argc, char **argv) {
  test_init();
  if (mode_is(argc, argv, "wait")) {
    for (;;) {
      pause();
    }
  }
  if (argc == 2) {
    return 3; /* a constructor should have ended this image */
  }
  expect_signal(spawn_self("ctor-segv"), SIGSEGV, "constructor writing to address 16");
  expect_signal(spawn_self("ctor-abort"), SIGABRT, "constructor calling abort");
  expect_signal(spawn_self("preinit-sigterm"), SIGTERM, "preinit function raising SIGTERM");

  /* Killed by the parent at once: before or after the child ran at all. */
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    for (;;) {
      pause();
    }
  }
  check(kill(child, SIGTERM) == 0);
  expect_signal(child, SIGTERM, "child sent SIGTERM right after fork");

  /* Killed around its exec: in the old image, the exec or the new one. */
  child = spawn_self("wait");
  check(kill(child, SIGINT) == 0);
  expect_signal(child, SIGINT, "child sent SIGINT while it execs");
  child = spawn_self("wait");
  check(kill(child, SIGKILL) == 0);
  expect_signal(child, SIGKILL, "child sent SIGKILL while it execs");
  finish();
  return 0;
}

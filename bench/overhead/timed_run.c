/* timed_run: the stopwatch of run_overhead.sh, not a workload.
 *
 *   timed_run TIMEOUT_S RESULT_FILE PROGRAM [ARGS...]
 *
 * Runs PROGRAM (looked up in PATH) with the inherited stdin/stdout/stderr, in
 * its own process group, waits for it, and writes one line to RESULT_FILE:
 *
 *   <elapsed seconds, CLOCK_MONOTONIC, 9 decimals> <status>
 *
 * where <status> is the exit code, "signal-N" if PROGRAM was killed by signal
 * N, or "timeout" if it ran longer than TIMEOUT_S seconds (0: no limit), in
 * which case its whole process group is killed with SIGKILL.  SIGINT, SIGTERM
 * and SIGHUP are forwarded to the group.  Exits with PROGRAM's status (124 on
 * time-out, 127 if it could not be started).
 *
 * A C helper rather than bash's EPOCHREALTIME: that is CLOCK_REALTIME (it can
 * jump), and this also gives the time-out and the group kill in one place. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out;
static volatile pid_t child_pid;

static void on_alarm(int sig) {
  (void)sig;
  timed_out = 1;
}

static void forward(int sig) {
  if (child_pid > 0) {
    kill(-child_pid, sig);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: timed_run TIMEOUT_S RESULT_FILE PROGRAM [ARGS...]\n");
    return 64;
  }
  unsigned timeout_s = (unsigned)strtoul(argv[1], NULL, 10);
  const char *result_path = argv[2];

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_alarm; /* no SA_RESTART: waitpid must return EINTR */
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_handler = forward;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  double start_s = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    perror("timed_run: fork");
    return 127;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    execvp(argv[3], argv + 3);
    fprintf(stderr, "timed_run: cannot run '%s': %s\n", argv[3], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also here, so that a kill before the child's own call works */
  child_pid = pid;
  if (timeout_s > 0) {
    alarm(timeout_s);
  }

  int status = 0;
  int killed = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, 0);
    if (r == pid) {
      break;
    }
    if (r < 0 && errno != EINTR) {
      perror("timed_run: waitpid");
      return 127;
    }
    if (timed_out && !killed) {
      kill(-pid, SIGKILL);
      killed = 1;
    }
  }
  double elapsed_s = now_s() - start_s;
  alarm(0);
  /* Whatever the group left behind (daemonised children of a killed run). */
  if (killed) {
    kill(-pid, SIGKILL);
  }

  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE *out = fopen(result_path, "w");
  if (!out) {
    fprintf(stderr, "timed_run: cannot write '%s': %s\n", result_path, strerror(errno));
    return 127;
  }
  if (killed) {
    fprintf(out, "%.9f timeout\n", elapsed_s);
  } else if (WIFSIGNALED(status)) {
    fprintf(out, "%.9f signal-%d\n", elapsed_s, WTERMSIG(status));
  } else {
    fprintf(out, "%.9f %d\n", elapsed_s, code);
  }
  fclose(out);
  return killed ? 124 : code;
}

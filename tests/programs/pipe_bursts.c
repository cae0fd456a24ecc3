/* Pipes in every state a read or write can find them, so that the fast
 * path's pipe calls (which must never wait) meet each: a child process
 * streaming 2 MB through a pipe in 10 KB writes to a parent reading 16 KB
 * at a time (a full pipe, an empty one); one 300 KB write, more than the
 * pipe holds, while the reader drains it (part written at once, the rest
 * waiting); writes of 3,000 bytes that fill the pipe's slots before its
 * bytes; a non-blocking pipe read when empty (EAGAIN, as the program
 * asked); end of file; a write with no reader left (EPIPE, SIGPIPE
 * ignored); and two threads of one process talking through two pipes.
 * Prints checksums and what each part saw, the same on every run. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

/* Writes all of `n` bytes (a blocking pipe write does, unless interrupted). */
static void write_all(int fd, const char *buf, size_t n) {
  check(write(fd, buf, n) == (ssize_t)n);
}

/* Reads until end of file; the checksum of everything read, its size in *total. */
static unsigned long read_to_end(int fd, size_t chunk, long *total) {
  static char buf[65536];
  unsigned long sum = 0;
  *total = 0;
  for (;;) {
    ssize_t n = read(fd, buf, chunk);
    check(n >= 0);
    if (n == 0) {
      return sum;
    }
    sum = checksum(sum, buf, (size_t)n);
    *total += n;
  }
}

static void child_stream(void) {
  int p[2];
  check(pipe(p) == 0);
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    close(p[0]);
    char buf[10240];
    for (int i = 0; i < 200; i++) {
      fill_letters(buf, sizeof buf, (unsigned)i);
      write_all(p[1], buf, sizeof buf);
    }
    _exit(0);
  }
  close(p[1]);
  long total;
  unsigned long sum = read_to_end(p[0], 16384, &total);
  close(p[0]);
  int status;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct line l;
  line_init(&l);
  line_str(&l, "a child streamed ");
  line_num(&l, total);
  line_str(&l, " bytes: ");
  line_hex(&l, sum);
  line_say(&l);
}

static void write_larger_than_pipe(void) {
  int p[2];
  check(pipe(p) == 0);
  pid_t child = fork();
  check(child >= 0);
  static char big[300000];
  fill_letters(big, sizeof big, 5);
  if (child == 0) {
    close(p[1]);
    long total;
    unsigned long sum = read_to_end(p[0], 4096, &total);
    _exit(total == (long)sizeof big && sum == checksum(0, big, sizeof big) ? 0 : 1);
  }
  close(p[0]);
  write_all(p[1], big, sizeof big);
  close(p[1]);
  int status;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  say_hex("one 300000-byte write, read whole by a child: checksum", checksum(0, big, sizeof big));
}

struct drain {
  int fd;
  long total;
  unsigned long sum;
};

static void *drain_main(void *arg) {
  struct drain *d = arg;
  d->sum = read_to_end(d->fd, 1000, &d->total);
  return NULL;
}

static void slot_filling_writes(void) {
  int p[2];
  check(pipe(p) == 0);
  struct drain d = {p[0], 0, 0};
  pthread_t thread;
  check(pthread_create(&thread, NULL, drain_main, &d) == 0);
  char buf[3000];
  unsigned long sum = 0;
  for (int i = 0; i < 40; i++) {
    fill_letters(buf, sizeof buf, (unsigned)i * 3);
    write_all(p[1], buf, sizeof buf);
    sum = checksum(sum, buf, sizeof buf);
  }
  close(p[1]);
  check(pthread_join(thread, NULL) == 0);
  close(p[0]);
  check(d.total == 40 * 3000 && d.sum == sum);
  say_hex("40 writes of 3000 bytes through a thread: checksum", sum);
}

static void nonblocking_and_ends(void) {
  int p[2];
  check(pipe2(p, O_NONBLOCK) == 0);
  char buf[64];
  errno = 0;
  check(read(p[0], buf, sizeof buf) == -1 && errno == EAGAIN);
  write_all(p[1], "abc", 3);
  check(read(p[0], buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0);
  close(p[1]);
  check(read(p[0], buf, sizeof buf) == 0);
  close(p[0]);
  check(pipe(p) == 0);
  close(p[0]);
  signal(SIGPIPE, SIG_IGN);
  errno = 0;
  check(write(p[1], "x", 1) == -1 && errno == EPIPE);
  close(p[1]);
  signal(SIGPIPE, SIG_DFL);
  say("non-blocking read of an empty pipe: EAGAIN; end of file; no reader: EPIPE\n");
}

struct ping {
  int in, out, rounds;
};

static void *pong_main(void *arg) {
  struct ping *p = arg;
  char buf[32];
  for (int i = 0; i < p->rounds; i++) {
    ssize_t n = read(p->in, buf, sizeof buf);
    if (n <= 0 || write(p->out, buf, (size_t)n) != n) {
      return (void *)1;
    }
  }
  return NULL;
}

static void threads_ping_pong(void) {
  int there[2], back[2];
  check(pipe(there) == 0 && pipe(back) == 0);
  struct ping p = {there[0], back[1], 200};
  pthread_t thread;
  check(pthread_create(&thread, NULL, pong_main, &p) == 0);
  unsigned long sum = 0;
  for (int i = 0; i < p.rounds; i++) {
    char msg[16], got[16];
    int n = snprintf(msg, sizeof msg, "ping %d", i);
    write_all(there[1], msg, (size_t)n);
    check(read(back[0], got, sizeof got) == n && memcmp(got, msg, (size_t)n) == 0);
    sum = checksum(sum, got, (size_t)n);
  }
  void *status;
  check(pthread_join(thread, &status) == 0 && status == NULL);
  close(there[0]);
  close(there[1]);
  close(back[0]);
  close(back[1]);
  say_hex("200 round trips between two threads: checksum", sum);
}

int main(void) {
  test_init();
  child_stream();
  write_larger_than_pipe();
  slot_filling_writes();
  nonblocking_and_ends();
  threads_ping_pong();
  finish();
  return 0;
}

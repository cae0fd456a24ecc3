/* Opens of every kind side by side, so that the fast path's opens of
 * regular files for reading stand among the ones it must leave alone:
 * open, openat and fopen of regular files for reading, in a loop, each
 * followed by a read and a close; reads of 2 KiB (kept by reference to a
 * copy of the file) each file closed after them; a file replaced by rename between two
 * opens of its name; a missing file (ENOENT, on the fast path too) and
 * O_NOFOLLOW on a symlink (ELOOP, which is not); a file of /proc; a FIFO opened without O_NONBLOCK by a thread,
 * which waits in the open until the main thread opens the other end (on
 * the fast path the recording would hang there); and opens for writing
 * and with O_TRUNC. Prints what each part read, the same on every run. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0);
  check(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  check(close(fd) == 0);
}

/* The first `n` bytes of `path`, read through a fresh open. */
static ssize_t read_file(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  ssize_t got = read(fd, buf, n);
  check(close(fd) == 0);
  return got;
}

static void reading_loop(const char *dir, const char *a, const char *b) {
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  check(dirfd >= 0);
  unsigned long sum = 0;
  char buf[256];
  for (int round = 0; round < 100; round++) {
    ssize_t n = read_file(a, buf, sizeof buf);
    check(n > 0);
    sum = checksum(sum, buf, (size_t)n);
    int fd = openat(dirfd, "b", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    check(fd >= 0);
    n = pread(fd, buf, sizeof buf, round % 5);
    check(n > 0);
    sum = checksum(sum, buf, (size_t)n);
    check(close(fd) == 0);
    FILE *f = fopen(b, "r");
    check(f != NULL);
    check(fgets(buf, sizeof buf, f) != NULL);
    sum = checksum(sum, buf, strlen(buf));
    check(fclose(f) == 0);
  }
  check(close(dirfd) == 0);
  say_hex("100 rounds of open, openat and fopen for reading: checksum", sum);
}

/* Reads of 2 KiB, long enough for the trace to keep them by reference to
 * a copy of the file, each file closed right after: 20 rounds. */
static void read_then_close(const char *dir) {
  char path[256];
  path_join(path, sizeof path, dir, "c");
  static char text[8192];
  for (size_t i = 0; i < sizeof text; i++) {
    text[i] = (char)('A' + i % 53 % 26);
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0 && write(fd, text, sizeof text) == (ssize_t)sizeof text && close(fd) == 0);
  unsigned long sum = 0;
  for (int round = 0; round < 20; round++) {
    fd = open(path, O_RDONLY | O_CLOEXEC);
    check(fd >= 0);
    char buf[2048];
    for (int part = 0; part < 4; part++) {
      check(read(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
      check(memcmp(buf, text + part * 2048, sizeof buf) == 0);
      sum = checksum(sum, buf, sizeof buf);
    }
    check(close(fd) == 0);
  }
  check(unlink(path) == 0);
  say_hex("20 rounds of four 2 KiB reads and a close: checksum", sum);
}

static void replaced_by_rename(const char *dir, const char *a) {
  char next[256], buf[64] = {0};
  path_join(next, sizeof next, dir, "a.next");
  check(read_file(a, buf, sizeof buf - 1) > 0);
  write_file(next, "the second a\n");
  check(rename(next, a) == 0);
  memset(buf, 0, sizeof buf);
  check(read_file(a, buf, sizeof buf - 1) == 13);
  say("after rename: ");
  say(buf);
}

static void failing_opens(const char *dir, const char *a) {
  char link[256], missing[256];
  path_join(link, sizeof link, dir, "link");
  path_join(missing, sizeof missing, dir, "missing");
  check(symlink(a, link) == 0);
  errno = 0;
  check(open(link, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) == -1 && errno == ELOOP);
  char buf[64];
  check(read_file(link, buf, sizeof buf) > 0);  /* followed without O_NOFOLLOW */
  errno = 0;
  check(open(missing, O_RDONLY | O_CLOEXEC) == -1 && errno == ENOENT);
  check(unlink(link) == 0);
  say("O_NOFOLLOW on a symlink: ELOOP; a missing file: ENOENT\n");
}

static void proc_file(void) {
  char buf[512];
  ssize_t n = read_file("/proc/self/status", buf, sizeof buf - 1);
  check(n > 0);
  buf[n] = 0;
  check(strncmp(buf, "Name:\tfile_opens\n", 17) == 0);
  say("/proc/self/status names the program\n");
}

struct fifo_reader {
  const char *path;
  char got[32];
};

/* Waits in open until the writer comes (a FIFO opened without O_NONBLOCK). */
static void *read_fifo(void *arg) {
  struct fifo_reader *r = arg;
  int fd = open(r->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return (void *)1;
  }
  ssize_t n = read(fd, r->got, sizeof r->got - 1);
  close(fd);
  return n == 6 ? NULL : (void *)2;
}

static void fifo_open_waits(const char *dir) {
  char path[256];
  path_join(path, sizeof path, dir, "fifo");
  check(mkfifo(path, 0600) == 0);
  struct fifo_reader r = {path, {0}};
  pthread_t thread;
  check(pthread_create(&thread, NULL, read_fifo, &r) == 0);
  int fd = open(path, O_WRONLY | O_CLOEXEC);  /* waits for the reader's open */
  check(fd >= 0);
  check(write(fd, "hello\n", 6) == 6);
  check(close(fd) == 0);
  void *status;
  check(pthread_join(thread, &status) == 0 && status == NULL);
  say("through the FIFO: ");
  say(r.got);
  check(unlink(path) == 0);
}

static void writing_opens(const char *a) {
  int fd = open(a, O_RDONLY | O_TRUNC | O_CLOEXEC);  /* read-only, yet it truncates */
  check(fd >= 0);
  check(close(fd) == 0);
  struct stat st;
  check(stat(a, &st) == 0 && st.st_size == 0);
  fd = open(a, O_RDWR | O_CLOEXEC);
  check(fd >= 0);
  check(write(fd, "rewritten\n", 10) == 10);
  check(close(fd) == 0);
  char buf[32] = {0};
  check(read_file(a, buf, sizeof buf - 1) == 10);
  say("O_TRUNC and O_RDWR: ");
  say(buf);
}

int main(void) {
  test_init();
  char dir[32], a[256], b[256];
  test_mkdtemp(dir);
  path_join(a, sizeof a, dir, "a");
  path_join(b, sizeof b, dir, "b");
  write_file(a, "the first a: some text to read back\n");
  write_file(b, "b holds another line of text\n");
  reading_loop(dir, a, b);
  read_then_close(dir);
  replaced_by_rename(dir, a);
  failing_opens(dir, a);
  proc_file();
  fifo_open_waits(dir);
  writing_opens(a);
  check(unlink(a) == 0 && unlink(b) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

/* execve() called from a secondary thread while another thread is still
 * running: the kernel kills the other threads, the exec'ing thread takes over
 * the process (same pid), and the new image starts single-threaded. */
#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>

extern char **environ;

static char pidbuf[24];
static char *self_path;

static void *sleeper(void *arg) {
  (void)arg;
  for (;;) sleep_ms(10); /* killed by the exec */
  return NULL;
}

static void *execer(void *arg) {
  (void)arg;
  char *argv[] = {self_path, "after-exec", pidbuf, NULL};
  execve("/proc/self/exe", argv, environ);
  check(!"execve returned");
  return NULL;
}

/* Threads in /proc/self/task that are not zombies: under a tracer, threads
 * killed by the exec can linger as zombies until the tracer reaps them. */
static int count_live_threads(void) {
  DIR *d = opendir("/proc/self/task");
  check(d != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], buf[512];
    struct line l;
    line_init(&l);
    line_str(&l, "/proc/self/task/");
    line_str(&l, e->d_name);
    line_str(&l, "/stat");
    memcpy(path, l.buf, l.len);
    path[l.len] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue; /* already gone */
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) continue;
    buf[r] = 0;
    char *paren = strrchr(buf, ')');
    if (paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X')) continue;
    n++;
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  test_init();
  if (argc == 3 && strcmp(argv[1], "after-exec") == 0) {
    check(atol(argv[2]) == getpid());
    say("new image: same pid\n");
    check(count_live_threads() == 1);
    check(tu_gettid() == getpid());
    say("new image: single live thread, tid == pid\n");
    finish();
    return 0;
  }
  check(argc == 1);
  self_path = argv[0];
  struct line l;
  line_init(&l);
  line_num(&l, getpid());
  memcpy(pidbuf, l.buf, l.len);
  pidbuf[l.len] = 0;
  pthread_t s, e;
  check(pthread_create(&s, NULL, sleeper, NULL) == 0);
  check(count_live_threads() == 2);
  say("old image: 2 threads, a secondary thread calls execve\n");
  check(pthread_create(&e, NULL, execer, NULL) == 0);
  /* Main waits; the exec kills it. */
  for (;;) sleep_ms(10);
}

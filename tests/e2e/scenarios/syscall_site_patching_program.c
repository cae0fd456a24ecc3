// Calls libc makes inside itself, which reach the fast path only through
// patched syscall sites (core/patch/syscall_sites.h):
//   - readdir over a directory of N files, many times (getdents64, and
//     opendir's open, fstat and closedir's close);
//   - a second thread blocked in read() on a pipe while the main thread
//     reads a regular file through stdio, the same read site of libc:
//     the recorder must not patch a site a thread stands inside;
//   - a SIGALRM handler, every 2 ms, while the main thread reads through
//     stdio: signals land inside the fast path's calls. The handler stops
//     the timer after 100 signals: a recorder slower than 2 ms a signal
//     (a sanitizer build) would otherwise run nothing but the handler.
// It prints what it saw, so a replay that went elsewhere prints otherwise.
// Usage: syscall_site_patching_program DIR FILE ROUNDS
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int pipe_fds[2];
static const char* file_path;
static volatile sig_atomic_t handler_lines;

static void* pipe_reader(void* arg) {
  (void)arg;
  char buffer[64];
  ssize_t n = read(pipe_fds[0], buffer, sizeof buffer - 1);
  buffer[n > 0 ? n : 0] = '\0';
  printf("thread read %zd bytes from the pipe: %s\n", n, buffer);
  return NULL;
}

// Lines of FILE, read through stdio (libc's internal read).
static long count_lines(void) {
  FILE* file = fopen(file_path, "r");
  if (file == NULL) {
    return -1;
  }
  long lines = 0;
  char line[256];
  while (fgets(line, sizeof line, file) != NULL) {
    ++lines;
  }
  fclose(file);
  return lines;
}

// Reads the file's first bytes (pread is async-signal-safe, stdio is not)
// and counts the newlines in them.
static int handler_fd = -1;
static int alarms_left = 100;
static void on_alarm(int signal) {
  (void)signal;
  if (--alarms_left == 0) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
  }
  char buffer[64];
  ssize_t n = pread(handler_fd, buffer, sizeof buffer, 0);
  int lines = 0;
  for (ssize_t i = 0; i < n; ++i) {
    lines += buffer[i] == '\n';
  }
  handler_lines = lines;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DIR FILE ROUNDS\n", argv[0]);
    return 2;
  }
  file_path = argv[2];
  int rounds = atoi(argv[3]);

  long entries = 0;
  unsigned long name_sum = 0;
  for (int round = 0; round < rounds; ++round) {
    DIR* dir = opendir(argv[1]);
    if (dir == NULL) {
      perror("opendir");
      return 1;
    }
    struct dirent* entry;
    while ((entry = readdir(dir)) != NULL) {
      ++entries;
      for (const char* c = entry->d_name; *c != '\0'; ++c) {
        name_sum += (unsigned char)*c;
      }
    }
    closedir(dir);
  }
  printf("%ld entries, names sum %lu\n", entries, name_sum);

  if (pipe(pipe_fds) != 0) {
    perror("pipe");
    return 1;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, pipe_reader, NULL);
  usleep(20000);  // let it block in its read
  long lines = 0;
  for (int i = 0; i < 20; ++i) {
    lines += count_lines();
  }
  printf("main read %ld lines while the thread waited\n", lines);
  if (write(pipe_fds[1], "hello", 5) != 5) {
    perror("write");
    return 1;
  }
  pthread_join(thread, NULL);

  handler_fd = open(file_path, O_RDONLY);
  signal(SIGALRM, on_alarm);
  struct itimerval timer = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_REAL, &timer, NULL);
  long total = 0;
  for (int i = 0; i < 300; ++i) {
    total += count_lines();
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("main read %ld lines with the timer; the handler last read %d\n", total,
         (int)handler_lines);
  return 0;
}

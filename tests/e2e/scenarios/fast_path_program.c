/* The syscalls the preloaded fast-path library makes without a stop:
 * COUNT getppid() and syscall(SYS_getppid), COUNT / 10 reads and preads of
 * FILE, gettid and clock reads, in two threads and a forked child. Prints
 * only what every run prints the same (sums and checks). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long count;
static const char* path;

static unsigned long file_checksum(void) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror("open");
    exit(2);
  }
  unsigned long sum = 0;
  char buffer[512];
  for (long i = 0; i < count / 10; i++) {
    ssize_t n = pread(fd, buffer, sizeof buffer, (i * 37) % 4096);
    for (ssize_t j = 0; j < n; j++) {
      sum = sum * 31 + (unsigned char)buffer[j];
    }
  }
  ssize_t n;
  while ((n = read(fd, buffer, 100)) > 0) {
    for (ssize_t j = 0; j < n; j++) {
      sum = sum * 31 + (unsigned char)buffer[j];
    }
  }
  close(fd);
  return sum;
}

static int ids_consistent(void) {
  long ppid = getppid();
  int same = 1;
  for (long i = 0; i < count; i++) {
    same &= getppid() == ppid && syscall(SYS_getppid) == ppid;
  }
  same &= gettid() == syscall(SYS_gettid) && getpid() == syscall(SYS_getpid);
  struct timespec a, b;
  struct timeval tv;
  clock_gettime(CLOCK_MONOTONIC, &a);
  gettimeofday(&tv, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  same &= b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
  return same;
}

static void* thread_main(void* arg) {
  (void)arg;
  return (void*)(long)ids_consistent();
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s COUNT FILE\n", argv[0]);
    return 2;
  }
  count = atol(argv[1]);
  path = argv[2];
  pthread_t thread;
  pthread_create(&thread, NULL, thread_main, NULL);
  int same = ids_consistent();
  void* thread_same;
  pthread_join(thread, &thread_same);
  unsigned long sum = file_checksum();
  pid_t child = fork();
  if (child == 0) {
    _exit(ids_consistent() && file_checksum() == sum ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("ids consistent: %d %d, child: %d, checksum %lx\n", same, (int)(long)thread_same,
         WIFEXITED(status) ? WEXITSTATUS(status) : -1, sum);
  return same && thread_same && status == 0 ? 0 : 1;
}

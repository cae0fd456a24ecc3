/* Pipe between two processes: a forked producer writes MIB mebibytes
 * (default 32) into a pipe in CHUNK-byte writes (default 4096); the parent
 * reads it all, checks the byte pattern and waits for the child.  The pipe
 * fills and empties all the time, so the two processes block on each other;
 * every byte read is stored in the trace.  See pipe_producer_consumer.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMaxChunk = 1 << 20 };

int main(int argc, char **argv) {
  long total_bytes = (argc > 1 ? atol(argv[1]) : 32) << 20;
  long chunk_bytes = argc > 2 ? atol(argv[2]) : 4096;
  if (chunk_bytes < 1 || chunk_bytes > kMaxChunk) {
    fprintf(stderr, "pipe_producer_consumer: CHUNK must be 1..%d\n", kMaxChunk);
    return 2;
  }
  static unsigned char buf[kMaxChunk];
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    close(fds[0]);
    long sent = 0;
    while (sent < total_bytes) {
      long n = total_bytes - sent < chunk_bytes ? total_bytes - sent : chunk_bytes;
      for (long i = 0; i < n; i++) {
        buf[i] = (unsigned char)((sent + i) % 251);
      }
      ssize_t w = write(fds[1], buf, (size_t)n);
      if (w <= 0) {
        _exit(1);
      }
      sent += w;
    }
    _exit(0);
  }
  close(fds[1]);
  long received = 0, bad = 0;
  for (;;) {
    ssize_t n = read(fds[0], buf, (size_t)chunk_bytes);
    if (n < 0) {
      perror("read");
      return 1;
    }
    if (n == 0) {
      break;
    }
    for (ssize_t i = 0; i < n; i++) {
      bad += buf[i] != (unsigned char)((received + i) % 251);
    }
    received += n;
  }
  int status;
  waitpid(pid, &status, 0);
  int child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("pipe_producer_consumer: received %ld bytes, %ld bad, producer %s\n", received, bad,
         child_ok ? "ok" : "failed");
  return received == total_bytes && bad == 0 && child_ok ? 0 : 1;
}

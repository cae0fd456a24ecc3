/* The syscalls `repro dump` decodes strace-style, each made once with raw
 * syscall() so the C library cannot change which syscall or flags appear:
 * paths (an open with O_RDONLY|O_CLOEXEC, one that fails with ENOENT), the
 * bytes written and read, a stat struct, a pipe's fd pair, socket
 * addresses (AF_UNIX, AF_INET), mmap's prot and flags, lseek's whence, a
 * signal. tests/e2e/scenarios/dump_decoding.sh compares the dump of the
 * syscalls from the marker access("dump-decoding-start") on with
 * tests/e2e/scenarios/dump_decoding.expected. */
#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

int main(void) {
  test_init();
  /* The fds below must be the same in every run, whatever the caller left
   * open (a test harness may leave fd 3 open). */
  check(syscall(SYS_close_range, 3, ~0u, 0) == 0);
  set_handler(SIGUSR1, on_signal, 0);
  umask(022);
  char dir[32];
  test_mkdtemp(dir);
  char data[256], missing[256], renamed[256], sub[256], sock_path[256];
  path_join(data, sizeof data, dir, "data.txt");
  path_join(missing, sizeof missing, dir, "missing");
  path_join(renamed, sizeof renamed, dir, "renamed.txt");
  path_join(sub, sizeof sub, dir, "sub");
  path_join(sock_path, sizeof sock_path, dir, "no-socket");

  check(syscall(SYS_access, "dump-decoding-start", F_OK) == -1 && errno == ENOENT);

  int fd = (int)syscall(SYS_openat, AT_FDCWD, data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0);
  const char text[] = "hello, decoder\n\tand a tab and a byte \x01 past 32";
  check(syscall(SYS_write, fd, text, sizeof text - 1) == (long)sizeof text - 1);
  check(syscall(SYS_close, fd) == 0);

  fd = (int)syscall(SYS_openat, AT_FDCWD, data, O_RDONLY | O_CLOEXEC);
  check(fd >= 0);
  struct stat st;
  check(syscall(SYS_fstat, fd, &st) == 0 && st.st_size == (off_t)sizeof text - 1);
  char buf[64];
  check(syscall(SYS_read, fd, buf, 5) == 5 && memcmp(buf, "hello", 5) == 0);
  check(syscall(SYS_lseek, fd, 0, SEEK_SET) == 0);
  check(syscall(SYS_pread64, fd, buf, 2, 3) == 2 && memcmp(buf, "lo", 2) == 0);
  check(syscall(SYS_close, fd) == 0);

  check(syscall(SYS_openat, AT_FDCWD, missing, O_RDONLY) == -1 && errno == ENOENT);
  check(syscall(SYS_newfstatat, AT_FDCWD, data, &st, 0) == 0 && S_ISREG(st.st_mode));
  check(syscall(SYS_renameat, AT_FDCWD, data, AT_FDCWD, renamed) == 0);
  check(syscall(SYS_unlinkat, AT_FDCWD, renamed, 0) == 0);
  check(syscall(SYS_mkdirat, AT_FDCWD, sub, 0755) == 0);
  check(syscall(SYS_unlinkat, AT_FDCWD, sub, AT_REMOVEDIR) == 0);

  void* page = (void*)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(page != MAP_FAILED);
  check(syscall(SYS_munmap, page, 4096) == 0);

  int fds[2];
  check(syscall(SYS_pipe2, fds, O_CLOEXEC) == 0);
  check(syscall(SYS_write, fds[1], "ping", 4) == 4);
  check(syscall(SYS_read, fds[0], buf, sizeof buf) == 4 && memcmp(buf, "ping", 4) == 0);
  check(syscall(SYS_close, fds[0]) == 0 && syscall(SYS_close, fds[1]) == 0);

  int unix_fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(unix_fd >= 0);
  struct sockaddr_un unix_addr;
  memset(&unix_addr, 0, sizeof unix_addr);
  unix_addr.sun_family = AF_UNIX;
  strcpy(unix_addr.sun_path, sock_path);
  check(syscall(SYS_connect, unix_fd, &unix_addr, sizeof unix_addr) == -1 && errno == ENOENT);
  check(syscall(SYS_close, unix_fd) == 0);

  int udp = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
  check(udp >= 0);
  struct sockaddr_in discard;
  memset(&discard, 0, sizeof discard);
  discard.sin_family = AF_INET;
  discard.sin_port = htons(9);
  discard.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check(syscall(SYS_sendto, udp, "x", 1, 0, &discard, sizeof discard) == 1);
  check(syscall(SYS_close, udp) == 0);

  check(syscall(SYS_tgkill, getpid(), tu_gettid(), SIGUSR1) == 0);
  check(got_signal == SIGUSR1);
  check(syscall(SYS_rmdir, dir) == 0);
  finish();
  return 0;
}

/* Scenario program for isolation.sh: acts on the outside world.
 * Usage: isolation_client FILE PORT
 * Creates FILE (it must not exist) with one line in it, connects to
 * 127.0.0.1:PORT, sends "ping\n", half-closes, and prints the server's whole
 * reply on one line. A replay must print the same reply without a server,
 * and must create no FILE. */
#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv) {
  test_init();
  check(argc == 3);
  const char *path = argv[1];
  int port = atoi(argv[2]);
  check(port > 0 && port < 65536);

  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  check(fd >= 0);
  static const char text[] = "written by isolation_client\n";
  check(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  check(close(fd) == 0);
  say("created the file\n");

  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(sock >= 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check(connect(sock, (struct sockaddr *)&addr, sizeof addr) == 0);
  say("connected\n");
  static const char request[] = "ping\n";
  check(write(sock, request, sizeof request - 1) == (ssize_t)(sizeof request - 1));
  check(shutdown(sock, SHUT_WR) == 0);

  char reply[512];
  size_t len = 0;
  for (;;) {
    check(len < sizeof reply);
    ssize_t n = read(sock, reply + len, sizeof reply - len);
    check(n >= 0);
    if (n == 0) break;
    len += (size_t)n;
  }
  check(close(sock) == 0);
  check(len > 0 && reply[len - 1] == '\n');
  reply[len - 1] = '\0';

  struct line l;
  line_init(&l);
  line_str(&l, "reply: ");
  line_str(&l, reply);
  line_say(&l);
  finish();
  return 0;
}

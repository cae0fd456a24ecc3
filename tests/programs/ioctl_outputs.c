/* ioctl commands that write through their argument: on a pseudo-terminal from
 * posix_openpt (TIOCGPTN, TIOCGPTLCK, TCGETS after TCSETS, TIOCSWINSZ then
 * TIOCGWINSZ, TIOCEXCL then TIOCGEXCL, TIOCPKT then TIOCGPKT, FIONREAD and
 * TIOCOUTQ with pending bytes, TIOCGPGRP and TIOCGSID of a controlling
 * terminal in a child session), on a pipe (FIONREAD, FIONBIO, FIOCLEX,
 * FIONCLEX, FIOQSIZE fails) and on sockets (SIOCGIFINDEX, SIOCGIFNAME,
 * SIOCGIFFLAGS, SIOCGIFMTU, SIOCGIFCONF for the loopback interface, SIOCINQ on
 * a UDP socket). */
#include "test_util.h"

#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/sockios.h>
#include <termios.h>

static void terminal(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  check(master >= 0);
  int locked = -1;
  check(ioctl(master, TIOCGPTLCK, &locked) == 0);
  say_num("TIOCGPTLCK before unlockpt", locked);
  check(grantpt(master) == 0 && unlockpt(master) == 0);
  check(ioctl(master, TIOCGPTLCK, &locked) == 0);
  say_num("TIOCGPTLCK after unlockpt", locked);
  unsigned int number = 0xffffffffu;
  check(ioctl(master, TIOCGPTN, &number) == 0);
  check(number != 0xffffffffu);
  say_nondet_num("TIOCGPTN", number);
  char name[64];
  check(ptsname_r(master, name, sizeof name) == 0);
  int slave = open(name, O_RDWR | O_NOCTTY);
  check(slave >= 0);

  struct termios tio;
  check(tcgetattr(slave, &tio) == 0);
  tio.c_lflag &= ~(ICANON | ECHO);
  tio.c_cc[VMIN] = 1;
  tio.c_cc[VTIME] = 3;
  check(tcsetattr(slave, TCSANOW, &tio) == 0);
  struct termios again;
  memset(&again, 0, sizeof again);
  check(tcgetattr(slave, &again) == 0);
  say_num("TCGETS after TCSETS: ICANON", !!(again.c_lflag & ICANON));
  say_num("TCGETS after TCSETS: ECHO", !!(again.c_lflag & ECHO));
  say_num("TCGETS after TCSETS: VTIME", again.c_cc[VTIME]);

  struct winsize ws = {.ws_row = 33, .ws_col = 101, .ws_xpixel = 0, .ws_ypixel = 0};
  check(ioctl(master, TIOCSWINSZ, &ws) == 0);
  memset(&ws, 0, sizeof ws);
  check(ioctl(slave, TIOCGWINSZ, &ws) == 0);
  say_num("TIOCGWINSZ rows", ws.ws_row);
  say_num("TIOCGWINSZ cols", ws.ws_col);

  int flag = -1;
  check(ioctl(slave, TIOCEXCL) == 0);
  check(ioctl(slave, TIOCGEXCL, &flag) == 0);
  say_num("TIOCGEXCL after TIOCEXCL", flag);
  check(ioctl(slave, TIOCNXCL) == 0);
  check(ioctl(slave, TIOCGEXCL, &flag) == 0);
  say_num("TIOCGEXCL after TIOCNXCL", flag);

  int on = 1;
  check(ioctl(master, TIOCPKT, &on) == 0);
  flag = -1;
  check(ioctl(master, TIOCGPKT, &flag) == 0);
  say_num("TIOCGPKT after TIOCPKT", flag);
  on = 0;
  check(ioctl(master, TIOCPKT, &on) == 0);

  /* Bytes written to the master wait on the slave's input queue. */
  check(write(master, "12345", 5) == 5);
  int queued = -1;
  for (int i = 0; i < 100 && queued != 5; ++i) {
    check(ioctl(slave, FIONREAD, &queued) == 0);
    if (queued != 5) sleep_ms(2);
  }
  say_num("FIONREAD on the slave", queued);
  int out = -1;
  check(ioctl(master, TIOCOUTQ, &out) == 0);
  say_num("TIOCOUTQ on the master", out);

  /* Not our controlling terminal. */
  pid_t group = 0;
  errno = 0;
  check(ioctl(slave, TIOCGPGRP, &group) == -1 && errno == ENOTTY);
  say("TIOCGPGRP of a terminal we do not control: ENOTTY\n");

  /* A child in a new session takes it as controlling terminal. */
  pid_t child = fork();
  check(child >= 0);
  if (child == 0) {
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0) _exit(10);
    pid_t pgrp = 0, sid = 0;
    if (ioctl(slave, TIOCGPGRP, &pgrp) != 0 || pgrp != getpid()) _exit(11);
    if (ioctl(slave, TIOCGSID, &sid) != 0 || sid != getpid()) _exit(12);
    if (ioctl(slave, TIOCNOTTY) != 0) _exit(13);
    _exit(0);
  }
  int status = 0;
  check(waitpid(child, &status, 0) == child);
  say_num("child session: TIOCSCTTY, TIOCGPGRP, TIOCGSID, TIOCNOTTY exit", WEXITSTATUS(status));
  close(slave);
  close(master);
}

static void pipe_commands(void) {
  int p[2];
  check(pipe(p) == 0);
  check(write(p[1], "abcdefg", 7) == 7);
  int n = -1;
  check(ioctl(p[0], FIONREAD, &n) == 0);
  say_num("FIONREAD on a pipe", n);
  int on = 1;
  check(ioctl(p[0], FIONBIO, &on) == 0);
  check((fcntl(p[0], F_GETFL) & O_NONBLOCK) != 0);
  char buf[16];
  check(read(p[0], buf, sizeof buf) == 7);
  errno = 0;
  check(read(p[0], buf, sizeof buf) == -1 && errno == EAGAIN);
  say("FIONBIO: empty pipe read EAGAIN\n");
  check(ioctl(p[0], FIOCLEX) == 0);
  check(fcntl(p[0], F_GETFD) == FD_CLOEXEC);
  check(ioctl(p[0], FIONCLEX) == 0);
  check(fcntl(p[0], F_GETFD) == 0);
  say("FIOCLEX, FIONCLEX: close-on-exec set and cleared\n");
  loff_t size = 0;
  errno = 0;
  check(ioctl(p[0], FIOQSIZE, &size) == -1 && errno == ENOTTY);
  say("FIOQSIZE on a pipe: ENOTTY\n");
  close(p[0]);
  close(p[1]);
}

static void socket_commands(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  check(s >= 0);
  struct ifreq req;
  memset(&req, 0, sizeof req);
  strcpy(req.ifr_name, "lo");
  check(ioctl(s, SIOCGIFINDEX, &req) == 0);
  int index = req.ifr_ifindex;
  check(index > 0);
  memset(&req, 0, sizeof req);
  req.ifr_ifindex = index;
  check(ioctl(s, SIOCGIFNAME, &req) == 0);
  say("SIOCGIFINDEX then SIOCGIFNAME: ");
  say(req.ifr_name);
  say("\n");
  check(ioctl(s, SIOCGIFFLAGS, &req) == 0);
  say_num("SIOCGIFFLAGS lo: IFF_LOOPBACK", !!(req.ifr_flags & IFF_LOOPBACK));
  check(ioctl(s, SIOCGIFMTU, &req) == 0);
  check(req.ifr_mtu > 0);
  say("SIOCGIFMTU lo: positive\n");

  struct ifreq all[16];
  struct ifconf conf = {.ifc_len = sizeof all, .ifc_req = all};
  memset(all, 0, sizeof all);
  check(ioctl(s, SIOCGIFCONF, &conf) == 0);
  int found = 0;
  for (size_t i = 0; i < conf.ifc_len / sizeof(struct ifreq); ++i) {
    if (strcmp(all[i].ifr_name, "lo") == 0) found = 1;
  }
  say_num("SIOCGIFCONF lists lo", found);

  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  check(bind(s, (struct sockaddr *)&addr, sizeof addr) == 0);
  socklen_t len = sizeof addr;
  check(getsockname(s, (struct sockaddr *)&addr, &len) == 0);
  check(sendto(s, "datagram", 8, 0, (struct sockaddr *)&addr, sizeof addr) == 8);
  int waiting = -1;
  check(ioctl(s, SIOCINQ, &waiting) == 0);
  say_num("SIOCINQ on a UDP socket", waiting);
  close(s);
}

int main(void) {
  test_init();
  terminal();
  pipe_commands();
  socket_commands();
  finish();
  return 0;
}

/* SCM_RIGHTS: a forked child opens a file and sends the descriptor to the
 * parent over a unix socketpair; the parent receives a new fd number that
 * refers to the same open file (it shares the offset the child left). */
#include "test_util.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>

int main(void) {
  test_init();
  char dir[32], path[256];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "passed.txt");
  int wfd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  check(wfd >= 0);
  check(write(wfd, "0123456789", 10) == 10);
  check(close(wfd) == 0);

  int sv[2];
  check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(sv[0]);
    int fd = open(path, O_RDONLY);
    check(fd >= 0);
    char skip[4];
    check(read(fd, skip, 4) == 4); /* leave the offset at 4 */
    char payload = 'F';
    struct iovec iov = {&payload, 1};
    union {
      struct cmsghdr h;
      char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    check(sendmsg(sv[1], &mh, 0) == 1);
    close(fd);
    _exit(0);
  }
  close(sv[1]);
  char payload = 0;
  struct iovec iov = {&payload, 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.buf;
  mh.msg_controllen = sizeof ctl.buf;
  check(recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) == 1);
  check(payload == 'F');
  check(!(mh.msg_flags & MSG_CTRUNC));
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  check(cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS);
  check(cm->cmsg_len == CMSG_LEN(sizeof(int)));
  int got;
  memcpy(&got, CMSG_DATA(cm), sizeof got);
  check(got >= 0 && got != sv[0]);
  check(fcntl(got, F_GETFD) == FD_CLOEXEC);
  say("received one fd via SCM_RIGHTS (MSG_CMSG_CLOEXEC set FD_CLOEXEC)\n");

  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  check(lseek(got, 0, SEEK_CUR) == 4);
  char rest[16] = {0};
  check(read(got, rest, sizeof rest) == 6 && memcmp(rest, "456789", 6) == 0);
  say("it shares the child's offset: read '456789'\n");
  close(got);
  close(sv[0]);
  check(unlink(path) == 0);
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

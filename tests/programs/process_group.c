/* Process groups and sessions in forked children: a child starts in our
 * group, setpgid(0, 0) makes it a group leader, a group leader cannot
 * setsid() (EPERM), and a fresh child's setsid() makes it leader of a new
 * session and group. The parent also moves a child with setpgid(pid, pid). */
#include "test_util.h"

#include <sys/wait.h>

static void reap_ok(pid_t pid) {
  int status;
  check(waitpid(pid, &status, 0) == pid);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  test_init();
  pid_t my_pgid = getpgid(0);
  pid_t my_sid = getsid(0);
  /* 0 when the group or session leader lives outside our pid namespace
   * (a container, a CI sandbox). */
  check(my_pgid >= 0 && my_sid >= 0);
  check(getpgrp() == my_pgid);

  pid_t pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    check(getpgid(0) == my_pgid);
    check(getsid(0) == my_sid);
    check(setpgid(0, 0) == 0);
    check(getpgid(0) == getpid());
    check(getpgrp() == getpid());
    errno = 0;
    check(setsid() == -1 && errno == EPERM);
    _exit(0);
  }
  reap_ok(pid);
  say("child: inherited group, setpgid(0,0) made it leader, setsid() then EPERM\n");

  pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    pid_t sid = setsid();
    check(sid == getpid());
    check(getsid(0) == getpid());
    check(getpgid(0) == getpid());
    /* A session leader cannot change its group. */
    errno = 0;
    check(setpgid(0, my_pgid) == -1 && errno == EPERM);
    _exit(0);
  }
  reap_ok(pid);
  say("child: setsid() made a new session and group led by the child\n");

  /* The parent moves a child into its own group; the child waits on a pipe
   * until the parent has done so, then checks. */
  int p[2];
  check(pipe(p) == 0);
  pid = fork();
  check(pid >= 0);
  if (pid == 0) {
    close(p[1]);
    char c;
    check(read(p[0], &c, 1) == 1);
    check(getpgid(0) == getpid());
    _exit(0);
  }
  close(p[0]);
  check(setpgid(pid, pid) == 0);
  check(getpgid(pid) == pid);
  check(write(p[1], "x", 1) == 1);
  close(p[1]);
  reap_ok(pid);
  say("parent: setpgid(child, child) moved the child to its own group\n");

  check(getpgid(0) == my_pgid && getsid(0) == my_sid);
  errno = 0;
  check(getpgid(pid) == -1 && errno == ESRCH);
  say("getpgid of a reaped child: ESRCH\n");
  say_nondet_num("pgid", my_pgid);
  say_nondet_num("sid", my_sid);
  finish();
  return 0;
}

/* Exec of files only visible in a private mount namespace: the program
 * enters a new mount namespace (as root), mounts a tmpfs, copies itself
 * there and runs the copy, which execs the copy again by execveat of an
 * O_PATH fd (AT_EMPTY_PATH), then through a bind mount of the tmpfs by
 * execveat of a directory fd and a relative name. The last stage unmounts
 * and removes what it made. Exits 77 where the namespace or the mount is
 * not permitted. Stages are named by argv[1]; argv[2] and argv[3] carry the
 * tmpfs and bind mount directories. */
#include "test_util.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

extern char **environ;

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  check(in >= 0 && out >= 0);
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0) {
    check(write(out, buf, (size_t)n) == n);
  }
  check(n == 0);
  close(in);
  close(out);
}

int main(int argc, char **argv) {
  test_init();
  if (argc == 1) {
    if (unshare(CLONE_NEWNS) != 0) {
      say("skip: no private mount namespace here (unshare(CLONE_NEWNS))\n");
      return 77;
    }
    check(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    char tmpfs[] = "/tmp/repro-exec-ns-XXXXXX";
    char bind[] = "/tmp/repro-exec-ns-bind-XXXXXX";
    check(mkdtemp(tmpfs) != NULL && mkdtemp(bind) != NULL);
    if (mount("tmpfs", tmpfs, "tmpfs", 0, NULL) != 0) {
      rmdir(tmpfs);
      rmdir(bind);
      say("skip: cannot mount a tmpfs here\n");
      return 77;
    }
    say("in a new mount namespace, tmpfs mounted\n");
    char copy[64];
    check(strlen(tmpfs) + 6 < sizeof copy);
    strcpy(copy, tmpfs);
    strcat(copy, "/copy");
    copy_file("/proc/self/exe", copy);
    check(mount(tmpfs, bind, NULL, MS_BIND, NULL) == 0);
    char *args[] = {"copy", "by-path", tmpfs, bind, NULL};
    execve(copy, args, environ);
    check(!"execve of the copy on the tmpfs returned");
  }
  check(argc == 4);
  if (strcmp(argv[1], "by-path") == 0) {
    say("stage by-path: execve of the copy on the tmpfs\n");
    char copy[64];
    strcpy(copy, argv[2]);
    strcat(copy, "/copy");
    int fd = open(copy, O_PATH);
    check(fd >= 0);
    char *args[] = {"copy", "by-fd", argv[2], argv[3], NULL};
    syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
    check(!"execveat of the copy's fd returned");
  }
  if (strcmp(argv[1], "by-fd") == 0) {
    say("stage by-fd: execveat(fd, \"\", AT_EMPTY_PATH) of the copy\n");
    int dir = open(argv[3], O_PATH | O_DIRECTORY);
    check(dir >= 0);
    char *args[] = {"copy", "by-bind", argv[2], argv[3], NULL};
    syscall(SYS_execveat, dir, "copy", args, environ, 0);
    check(!"execveat through the bind mount returned");
  }
  check(strcmp(argv[1], "by-bind") == 0);
  say("stage by-bind: execveat(bind mount dirfd, \"copy\")\n");
  check(umount2(argv[3], MNT_DETACH) == 0);  /* the running image is on both */
  check(umount2(argv[2], MNT_DETACH) == 0);
  check(rmdir(argv[3]) == 0 && rmdir(argv[2]) == 0);
  say("unmounted and removed\n");
  finish();
  return 0;
}

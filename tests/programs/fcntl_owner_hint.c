/* fcntl commands that write a struct or a u64 through their argument:
 * F_SETOWN_EX then F_GETOWN_EX (process, thread and process-group owners,
 * and F_GETOWN agreeing), F_SET_RW_HINT then F_GET_RW_HINT on a file, an
 * invalid hint (EINVAL), and the per-file hints Linux 5.17 removed (either
 * answer, the same on every run of one kernel). */
#include "test_util.h"

#include <fcntl.h>

#ifndef F_GET_RW_HINT
#define F_GET_RW_HINT 1035
#define F_SET_RW_HINT 1036
#define F_GET_FILE_RW_HINT 1037
#define F_SET_FILE_RW_HINT 1038
#define RWH_WRITE_LIFE_SHORT 2
#define RWH_WRITE_LIFE_EXTREME 5
#endif

static const char *owner_kind(int type) {
  switch (type) {
    case F_OWNER_TID:
      return "thread";
    case F_OWNER_PID:
      return "process";
    case F_OWNER_PGRP:
      return "process group";
    default:
      return "?";
  }
}

static void owners(int fd) {
  struct f_owner_ex set[3] = {
      {F_OWNER_PID, getpid()}, {F_OWNER_TID, tu_gettid()}, {F_OWNER_PGRP, getpgrp()}};
  for (int i = 0; i < 3; ++i) {
    check(fcntl(fd, F_SETOWN_EX, &set[i]) == 0);
    struct f_owner_ex got;
    memset(&got, 0xee, sizeof got);
    check(fcntl(fd, F_GETOWN_EX, &got) == 0);
    check(got.type == set[i].type && got.pid == set[i].pid);
    say("F_GETOWN_EX after F_SETOWN_EX: ");
    say(owner_kind(got.type));
    say(", the one set\n");
  }
  /* F_GETOWN reports a process group as a negative number. */
  check(fcntl(fd, F_GETOWN) == -getpgrp());
  say("F_GETOWN: minus the process group\n");
  struct f_owner_ex bad = {99, getpid()};
  errno = 0;
  check(fcntl(fd, F_SETOWN_EX, &bad) == -1 && errno == EINVAL);
  say("F_SETOWN_EX unknown type: EINVAL\n");
}

static void hints(int fd) {
  uint64_t hint = RWH_WRITE_LIFE_SHORT;
  check(fcntl(fd, F_SET_RW_HINT, &hint) == 0);
  hint = 0xeeeeeeeeeeeeeeeeull;
  check(fcntl(fd, F_GET_RW_HINT, &hint) == 0);
  say_num("F_GET_RW_HINT after setting SHORT", (long long)hint);
  hint = RWH_WRITE_LIFE_EXTREME;
  check(fcntl(fd, F_SET_RW_HINT, &hint) == 0);
  hint = 0;
  check(fcntl(fd, F_GET_RW_HINT, &hint) == 0);
  say_num("F_GET_RW_HINT after setting EXTREME", (long long)hint);
  hint = 1000;
  errno = 0;
  check(fcntl(fd, F_SET_RW_HINT, &hint) == -1 && errno == EINVAL);
  say("F_SET_RW_HINT 1000: EINVAL\n");

  hint = RWH_WRITE_LIFE_SHORT;
  if (fcntl(fd, F_SET_FILE_RW_HINT, &hint) == 0) {
    hint = 0;
    check(fcntl(fd, F_GET_FILE_RW_HINT, &hint) == 0);
    say_num("F_GET_FILE_RW_HINT", (long long)hint);
  } else {
    check(errno == EINVAL);
    say("F_SET_FILE_RW_HINT: EINVAL (removed in Linux 5.17)\n");
  }
}

int main(void) {
  test_init();
  char dir[64], path[128];
  test_mkdtemp(dir);
  path_join(path, sizeof path, dir, "hinted");
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  check(fd >= 0);
  owners(fd);
  hints(fd);
  close(fd);
  check(unlink(path) == 0 && rmdir(dir) == 0);
  finish();
  return 0;
}

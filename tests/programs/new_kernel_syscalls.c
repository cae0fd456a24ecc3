/* Syscalls of Linux 6.5 to 6.19, each as its kernel has it: a kernel without
 * one answers ENOSYS and the line says "not in this kernel"; one that refuses
 * a call here (no such LSM, a filesystem without xattrs or file attributes,
 * a CPU without shadow stacks) prints its errno. Those lines depend only on
 * the kernel and host, so they are the same natively, recorded and
 * replayed. Covered: cachestat, fchmodat2, futex_wake/futex_wait (a thread
 * woken, a stale value, a timeout), futex_requeue, listmount/statmount,
 * lsm_list_modules/lsm_get_self_attr (E2BIG's size too), mseal (a sealed
 * page cannot be unmapped), setxattrat/getxattrat/listxattrat/removexattrat,
 * file_getattr, open_tree_attr, map_shadow_stack and listns. */
#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum {
  kCachestat = 451,
  kFchmodat2 = 452,
  kMapShadowStack = 453,
  kFutexWake = 454,
  kFutexWait = 455,
  kFutexRequeue = 456,
  kStatmount = 457,
  kListmount = 458,
  kLsmGetSelfAttr = 459,
  kLsmListModules = 461,
  kMseal = 462,
  kSetxattrat = 463,
  kGetxattrat = 464,
  kListxattrat = 465,
  kRemovexattrat = 466,
  kOpenTreeAttr = 467,
  kFileGetattr = 468,
  kListns = 470,
};

/* "name: not in this kernel" or "name: errno NAME" for a failed call;
 * returns 1 when the call succeeded and the caller prints the details. */
static int outcome(const char *name, long result) {
  if (result >= 0) return 1;
  say(name);
  if (errno == ENOSYS) {
    say(": not in this kernel\n");
  } else {
    say(": errno ");
    say(tu_errno_text(errno));
    say("\n");
  }
  return 0;
}

static char dir[64];

static void cachestat(void) {
  char path[128];
  path_join(path, sizeof path, dir, "cached");
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  check(fd >= 0);
  char block[8192];
  memset(block, 'c', sizeof block);
  check(write(fd, block, sizeof block) == (ssize_t)sizeof block);
  struct {
    uint64_t off, len;
  } range = {0, 0};
  uint64_t stat[5];
  memset(stat, 0xee, sizeof stat);
  if (outcome("cachestat", syscall(kCachestat, fd, &range, stat, 0))) {
    check(stat[0] >= 1 && stat[0] <= 2);
    say("cachestat: the written pages are cached\n");
  }
  close(fd);
  check(unlink(path) == 0);
}

static void fchmodat2(void) {
  char path[128], link[128];
  path_join(path, sizeof path, dir, "mode");
  path_join(link, sizeof link, dir, "mode-link");
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  check(fd >= 0);
  close(fd);
  check(symlink(path, link) == 0);
  if (outcome("fchmodat2", syscall(kFchmodat2, AT_FDCWD, path, 0640, 0))) {
    struct stat st;
    check(stat(path, &st) == 0);
    say_hex("fchmodat2: mode now", st.st_mode & 0777);
    errno = 0;
    long r = syscall(kFchmodat2, AT_FDCWD, link, 0600, AT_SYMLINK_NOFOLLOW);
    check(r == -1);
    say("fchmodat2 AT_SYMLINK_NOFOLLOW on a symlink: errno ");
    say(tu_errno_text(errno));
    say("\n");
  }
  check(unlink(link) == 0 && unlink(path) == 0);
}

#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE 128
#define FUTEX_MATCH_ANY 0xffffffffu

static _Atomic uint32_t word;
static _Atomic int waiter_result = 1000;

static void *futex_waiter(void *arg) {
  (void)arg;
  long r = syscall(kFutexWait, &word, 0, FUTEX_MATCH_ANY, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, NULL,
                   0);
  waiter_result = r == 0 ? 0 : -errno;
  return NULL;
}

static void futex2(void) {
  word = 0;
  long woken = syscall(kFutexWake, &word, FUTEX_MATCH_ANY, 1, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
  if (!outcome("futex_wake", woken)) {
    return;
  }
  say_num("futex_wake with no waiter: woken", woken);
  errno = 0;
  check(syscall(kFutexWait, &word, 1, FUTEX_MATCH_ANY, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, NULL, 0) ==
            -1 &&
        errno == EAGAIN);
  say("futex_wait on a stale value: EAGAIN\n");
  struct timespec deadline;
  check(clock_gettime(CLOCK_MONOTONIC, &deadline) == 0);
  deadline.tv_nsec += 10 * 1000 * 1000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000;
  }
  errno = 0;
  check(syscall(kFutexWait, &word, 0, FUTEX_MATCH_ANY, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, &deadline,
                CLOCK_MONOTONIC) == -1 &&
        errno == ETIMEDOUT);
  say("futex_wait past its deadline: ETIMEDOUT\n");

  pthread_t t;
  check(pthread_create(&t, NULL, futex_waiter, NULL) == 0);
  /* Wake until the waiter was there to be woken (it may not be asleep yet). */
  long total = 0;
  for (int i = 0; i < 2000 && total == 0; ++i) {
    total = syscall(kFutexWake, &word, FUTEX_MATCH_ANY, 1, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
    check(total >= 0);
    if (total == 0) sleep_ms(1);
  }
  check(pthread_join(t, NULL) == 0);
  check(total == 1 && waiter_result == 0);
  say("futex_wait woken by futex_wake: one woken, wait returned 0\n");

  struct {
    uint64_t val, uaddr;
    uint32_t flags, reserved;
  } waiters[2] = {{0, (uint64_t)(uintptr_t)&word, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, 0},
                  {0, (uint64_t)(uintptr_t)&word, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, 0}};
  if (outcome("futex_requeue", syscall(kFutexRequeue, waiters, 0, 1, 1))) {
    say("futex_requeue with no waiters: 0\n");
  }
}

static void mounts(void) {
  struct {
    uint32_t size, spare;
    uint64_t mnt_id, param;
  } req = {24, 0, ~0ull, 0};
  uint64_t ids[256];
  memset(ids, 0, sizeof ids);
  long n = syscall(kListmount, &req, ids, 256, 0);
  if (!outcome("listmount", n)) {
    return;
  }
  check(n >= 1 && ids[0] != 0);
  say("listmount: the root's mounts listed\n");
  req.mnt_id = ids[0];
  req.param = 0x2; /* STATMOUNT_MNT_BASIC */
  static uint64_t buf[512];
  memset(buf, 0xee, sizeof buf);
  if (outcome("statmount", syscall(kStatmount, &req, buf, sizeof buf, 0))) {
    uint32_t size;
    uint64_t mask, mnt_id;
    memcpy(&size, (char *)buf, 4);
    memcpy(&mask, (char *)buf + 8, 8);
    memcpy(&mnt_id, (char *)buf + 40, 8);
    check(size > 0 && size <= sizeof buf);
    check(mask & 0x2);
    check(mnt_id == ids[0]);
    say("statmount: the first listed mount, basic fields\n");
  }
}

static void lsm(void) {
  uint32_t size = 0;
  uint64_t ids[32];
  errno = 0;
  long r = syscall(kLsmListModules, ids, &size, 0);
  if (r < 0 && errno == E2BIG) {
    check(size >= 8 && size <= sizeof ids);
    say("lsm_list_modules with no room: E2BIG and the size needed\n");
    r = syscall(kLsmListModules, ids, &size, 0);
  }
  if (outcome("lsm_list_modules", r)) {
    check(r >= 1 && size == r * 8);
    say("lsm_list_modules: ids of every module\n");
  }
  static char ctx[4096];
  size = sizeof ctx;
  memset(ctx, 0xee, sizeof ctx);
  r = syscall(kLsmGetSelfAttr, 100 /* LSM_ATTR_CURRENT */, ctx, &size, 0);
  if (outcome("lsm_get_self_attr", r)) {
    check(size > 0 && size <= sizeof ctx);
    say_num("lsm_get_self_attr current: attributes", r);
  }
}

static void seal(void) {
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(page != MAP_FAILED);
  page[0] = 's';
  if (outcome("mseal", syscall(kMseal, page, 4096, 0))) {
    errno = 0;
    check(munmap(page, 4096) == -1 && errno == EPERM);
    errno = 0;
    check(mprotect(page, 4096, PROT_READ) == -1 && errno == EPERM);
    check(page[0] == 's');
    say("mseal: the sealed page cannot be unmapped or reprotected\n");
  } else {
    check(munmap(page, 4096) == 0);
  }
}

static void xattrs(void) {
  char path[128];
  path_join(path, sizeof path, dir, "attrs");
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  check(fd >= 0);
  close(fd);
  struct {
    uint64_t value;
    uint32_t size, flags;
  } args = {(uint64_t)(uintptr_t) "seven!!", 7, 0};
  if (!outcome("setxattrat", syscall(kSetxattrat, AT_FDCWD, path, 0, "user.repro", &args,
                                     sizeof args))) {
    check(unlink(path) == 0);
    return;
  }
  char value[32];
  memset(value, 0, sizeof value);
  args.value = (uint64_t)(uintptr_t)value;
  args.size = sizeof value;
  long n = syscall(kGetxattrat, AT_FDCWD, path, 0, "user.repro", &args, sizeof args);
  check(n == 7);
  value[n] = 0;
  say("getxattrat: ");
  say(value);
  say("\n");
  char list[64];
  memset(list, 0xee, sizeof list);
  n = syscall(kListxattrat, AT_FDCWD, path, 0, list, sizeof list);
  check(n == 11 && memcmp(list, "user.repro", 11) == 0);
  say("listxattrat: user.repro\n");
  check(syscall(kRemovexattrat, AT_FDCWD, path, 0, "user.repro") == 0);
  errno = 0;
  check(syscall(kGetxattrat, AT_FDCWD, path, 0, "user.repro", &args, sizeof args) == -1 &&
        errno == ENODATA);
  say("removexattrat: then getxattrat ENODATA\n");
  check(unlink(path) == 0);
}

static void file_attributes(void) {
  uint64_t attr[3];
  memset(attr, 0xee, sizeof attr);
  if (outcome("file_getattr", syscall(kFileGetattr, AT_FDCWD, dir, attr, sizeof attr, 0))) {
    say("file_getattr: answered\n");
  }
}

static void mount_trees(void) {
  long fd = syscall(kOpenTreeAttr, AT_FDCWD, dir, O_CLOEXEC, NULL, 0);
  if (outcome("open_tree_attr", fd)) {
    struct stat a, b;
    check(fstat((int)fd, &a) == 0 && stat(dir, &b) == 0);
    check(a.st_ino == b.st_ino);
    say("open_tree_attr: an fd for the directory\n");
    close((int)fd);
  }
  struct {
    uint32_t size, spare;
    uint64_t ns_id;
    uint32_t ns_type, spare2;
    uint64_t user_ns_id;
  } req = {32, 0, 0, 0, 0, 0};
  uint64_t ids[64];
  long n = syscall(kListns, &req, ids, 64, 0);
  if (outcome("listns", n)) {
    check(n >= 1);
    say("listns: some namespaces\n");
  }
}

static void shadow_stack(void) {
  long r = syscall(kMapShadowStack, 0, 4096, 0);
  if (outcome("map_shadow_stack", r)) {
    check(munmap((void *)r, 4096) == 0);
    say("map_shadow_stack: mapped and unmapped\n");
  }
}

int main(void) {
  test_init();
  test_mkdtemp(dir);
  cachestat();
  fchmodat2();
  futex2();
  mounts();
  lsm();
  seal();
  xattrs();
  file_attributes();
  mount_trees();
  shadow_stack();
  check(rmdir(dir) == 0);
  finish();
  return 0;
}

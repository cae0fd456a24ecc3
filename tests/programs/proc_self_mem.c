/* Writes through /proc/self/mem change the process's own memory: pwrite,
 * write after lseek, pwritev, and pwritev2 at the file position into a
 * variable, and pwrite into a read-only page (the kernel writes it anyway,
 * like a debugger) and into the code of a function; pread reads memory
 * back. */
#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>

static volatile long target = 1;
static volatile long second[2] = {2, 3};

__attribute__((noinline, noclone)) static int answer(void) {
  __asm__ volatile("");
  return 1;
}

int main(void) {
  test_init();
  int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  check(fd >= 0);

  long value = 4242;
  check(pwrite(fd, &value, sizeof value, (off_t)(uintptr_t)&target) == sizeof value);
  say_num("variable after pwrite", target);

  long got = 0;
  check(pread(fd, &got, sizeof got, (off_t)(uintptr_t)&target) == sizeof got && got == 4242);
  say("pread reads it back\n");

  value = 77;
  check(lseek(fd, (off_t)(uintptr_t)&second[1], SEEK_SET) == (off_t)(uintptr_t)&second[1]);
  check(write(fd, &value, sizeof value) == sizeof value);
  say_num("variable after lseek and write", second[1]);

  long parts[2] = {5, 6};
  struct iovec iov[2] = {{&parts[0], sizeof(long)}, {&parts[1], sizeof(long)}};
  check(pwritev(fd, iov, 2, (off_t)(uintptr_t)&second[0]) == 2 * sizeof(long));
  say_num("after pwritev, first", second[0]);
  say_num("after pwritev, second", second[1]);

  /* pwritev2 at offset -1 writes at the file position, like writev. */
  value = 99;
  struct iovec one = {&value, sizeof value};
  check(lseek(fd, (off_t)(uintptr_t)&target, SEEK_SET) == (off_t)(uintptr_t)&target);
  check(pwritev2(fd, &one, 1, -1, 0) == sizeof value);
  say_num("variable after lseek and pwritev2 at the position", target);

  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  volatile unsigned char *page = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(page != MAP_FAILED);
  page[10] = 1;
  check(mprotect((void *)page, ps, PROT_READ) == 0);
  check(pwrite(fd, "forced", 6, (off_t)(uintptr_t)(page + 100)) == 6);
  check(memcmp((const void *)(page + 100), "forced", 6) == 0);
  say("a write into a read-only page lands\n");

  /* mov $2, %eax; ret */
  static const unsigned char code[] = {0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3};
  say_num("function before patching", answer());
  check(pwrite(fd, code, sizeof code, (off_t)(uintptr_t)&answer) == sizeof code);
  say_num("function after patching its code", answer());

  check(munmap((void *)page, ps) == 0);
  check(close(fd) == 0);
  finish();
  return 0;
}

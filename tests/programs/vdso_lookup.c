/* A program that finds the vDSO itself, as language runtimes (Go, some
 * JITs and profilers) do: getauxval(AT_SYSINFO_EHDR) gives its ELF header,
 * whose dynamic symbol table names __vdso_clock_gettime, __vdso_gettimeofday,
 * __vdso_time and __vdso_getcpu. Each is called directly and must agree
 * with the C library and with the raw syscall (clocks move forward, the
 * CPU number is one we may run on). The C library's own calls go through
 * the vDSO as well. Values differ between runs ("~ " lines). */
#include "test_util.h"

#include <elf.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef long (*getcpu_fn)(unsigned *, unsigned *, void *);

/* The address of the vDSO function `name`, or NULL. */
static void *vdso_symbol(const char *name) {
  const char *base = (const char *)getauxval(AT_SYSINFO_EHDR);
  check(base != NULL);
  const Elf64_Ehdr *header = (const Elf64_Ehdr *)base;
  check(memcmp(header->e_ident, ELFMAG, SELFMAG) == 0);
  const Elf64_Phdr *segments = (const Elf64_Phdr *)(base + header->e_phoff);
  long load_bias = 0;
  const Elf64_Dyn *dynamic = NULL;
  for (int i = 0; i < header->e_phnum; i++) {
    if (segments[i].p_type == PT_LOAD && load_bias == 0) {
      load_bias = (long)base - (long)(segments[i].p_vaddr - segments[i].p_offset);
    } else if (segments[i].p_type == PT_DYNAMIC) {
      dynamic = (const Elf64_Dyn *)(base + segments[i].p_offset);
    }
  }
  check(dynamic != NULL);
  const Elf64_Sym *symbols = NULL;
  const char *strings = NULL;
  const Elf32_Word *hash = NULL;
  for (const Elf64_Dyn *d = dynamic; d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_SYMTAB) symbols = (const Elf64_Sym *)(d->d_un.d_ptr + load_bias);
    if (d->d_tag == DT_STRTAB) strings = (const char *)(d->d_un.d_ptr + load_bias);
    if (d->d_tag == DT_HASH) hash = (const Elf32_Word *)(d->d_un.d_ptr + load_bias);
  }
  check(symbols != NULL && strings != NULL && hash != NULL);
  for (Elf32_Word i = 0; i < hash[1]; i++) { /* hash[1]: the number of symbols */
    if (symbols[i].st_shndx != SHN_UNDEF && strcmp(strings + symbols[i].st_name, name) == 0) {
      return (void *)(symbols[i].st_value + load_bias);
    }
  }
  return NULL;
}

int main(void) {
  test_init();
  clock_gettime_fn vdso_clock_gettime = (clock_gettime_fn)vdso_symbol("__vdso_clock_gettime");
  gettimeofday_fn vdso_gettimeofday = (gettimeofday_fn)vdso_symbol("__vdso_gettimeofday");
  time_fn vdso_time = (time_fn)vdso_symbol("__vdso_time");
  getcpu_fn vdso_getcpu = (getcpu_fn)vdso_symbol("__vdso_getcpu");
  check(vdso_clock_gettime && vdso_gettimeofday && vdso_time && vdso_getcpu);
  check(vdso_symbol("__vdso_no_such_function") == NULL);
  say("found the vDSO functions\n");

  struct timespec libc_now, vdso_now, raw_now;
  for (int round = 0; round < 3; round++) {
    check(clock_gettime(CLOCK_MONOTONIC, &libc_now) == 0);
    check(vdso_clock_gettime(CLOCK_MONOTONIC, &vdso_now) == 0);
    check(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw_now) == 0);
    long long a = libc_now.tv_sec * 1000000000LL + libc_now.tv_nsec;
    long long b = vdso_now.tv_sec * 1000000000LL + vdso_now.tv_nsec;
    long long c = raw_now.tv_sec * 1000000000LL + raw_now.tv_nsec;
    check(a <= b && b <= c);
    say_num("~ monotonic ns", b);
  }
  check(vdso_clock_gettime(12345, &vdso_now) == -EINVAL); /* vDSO returns -errno */
  say("bad clock is EINVAL\n");

  struct timeval tv;
  check(vdso_gettimeofday(&tv, NULL) == 0);
  time_t seconds = vdso_time(NULL);
  /* time() reads the coarse clock, updated once a tick: just after a
   * second begins it may still say the previous one. */
  check(seconds >= tv.tv_sec - 1 && seconds <= tv.tv_sec + 1);
  time_t stored = 0;
  check(vdso_time(&stored) == stored && stored >= seconds);
  say_num("~ time", (long)seconds);

  unsigned cpu = 0, node = 0;
  check(vdso_getcpu(&cpu, &node, NULL) == 0);
  cpu_set_t allowed;
  check(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  check(CPU_ISSET(cpu, &allowed));
  check(sched_getcpu() >= 0);
  say_num("~ cpu", cpu);
  finish();
  return 0;
}

/* The rdtsc and rdtscp instructions (a tracer has to trap or emulate them):
 * successive readings increase; rdtscp also returns TSC_AUX (cpu/node id).
 * Values are printed with "~ ". */
#include "test_util.h"

#include <cpuid.h>

/* CPUID 0x80000001 EDX bit 27. Some hypervisors run rdtscp without
 * reporting it, and TSC_AUX then holds no cpu number. */
static int cpuid_reports_rdtscp(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return 0;
  return (d >> 27) & 1;
}

static inline uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdtscp(uint32_t *aux) {
  uint32_t lo, hi, c;
  __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c));
  *aux = c;
  return ((uint64_t)hi << 32) | lo;
}

int main(void) {
  test_init();
  uint64_t v[4];
  uint32_t aux[2];
  v[0] = rdtsc();
  v[1] = rdtsc();
  volatile unsigned long x = 0;
  for (unsigned long k = 0; k < 100000; k++) x += k;
  (void)x;
  v[2] = rdtscp(&aux[0]);
  v[3] = rdtscp(&aux[1]);
  check(v[0] != 0);
  for (int i = 1; i < 4; i++) check(v[i] > v[i - 1]);
  say("rdtsc, rdtsc, rdtscp, rdtscp: strictly increasing\n");
  /* Linux puts (node << 12) | cpu in TSC_AUX where CPUID reports rdtscp. */
  if (cpuid_reports_rdtscp()) {
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    check(ncpu > 0);
    check((long)(aux[0] & 0xfff) < ncpu && (long)(aux[1] & 0xfff) < ncpu);
    say("rdtscp TSC_AUX names an existing cpu\n");
  } else {
    say("rdtscp not in CPUID: TSC_AUX not checked\n");
  }
  for (int i = 0; i < 4; i++) say_nondet_num(i < 2 ? "rdtsc" : "rdtscp", (long long)v[i]);
  say_nondet_hex("tsc_aux", aux[0]);
  finish();
  return 0;
}

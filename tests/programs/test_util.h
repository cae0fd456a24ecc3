/* Shared helpers for the self-checking test programs in tests/programs/.
 *
 * Include this header FIRST in every program (it defines _GNU_SOURCE).
 *
 * Output conventions (see README.md):
 *   - stdout carries the observable output, one line per write(2) call so that
 *     lines from several threads or processes never interleave mid-line;
 *   - a line that may differ between two native runs (times, pids, addresses,
 *     random bytes, the order racing threads ran in) starts with "~ ";
 *   - the last line is "EXIT-SUCCESS" (finish()) and the exit status is 0.
 *
 * Everything here is async-signal-safe except test_mkdtemp(): no stdio, no
 * malloc. printf and friends are banned by macro below.
 */
#ifndef REPRO_TESTS_PROGRAMS_TEST_UTIL_H
#define REPRO_TESTS_PROGRAMS_TEST_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Programs print with say*(), never with stdio: stdio buffers are not
 * async-signal-safe, are duplicated by fork and flushed at exit. */
#define printf DO_NOT_USE_printf
#define fprintf DO_NOT_USE_fprintf
#define dprintf DO_NOT_USE_dprintf
#define vprintf DO_NOT_USE_vprintf
#define puts DO_NOT_USE_puts
#define fputs DO_NOT_USE_fputs
#define putchar DO_NOT_USE_putchar
#define perror DO_NOT_USE_perror

#if defined(__GNUC__)
#define TU_UNUSED __attribute__((unused))
#define TU_NORETURN __attribute__((noreturn))
#else
#define TU_UNUSED
#define TU_NORETURN
#endif

/* ---- raw output ------------------------------------------------------- */

/* Writes all of buf to fd, retrying on EINTR and short writes. Preserves errno. */
static TU_UNUSED void tu_write_all(int fd, const char *buf, size_t len) {
  int saved_errno = errno;
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    buf += n;
    len -= (size_t)n;
  }
  errno = saved_errno;
}

/* ---- line builder ----------------------------------------------------- */

/* A line assembled on the stack and written with a single write(2). */
struct line {
  char buf[1024];
  size_t len;
};

static TU_UNUSED void line_init(struct line *l) { l->len = 0; }

static TU_UNUSED void line_str(struct line *l, const char *s) {
  while (*s && l->len < sizeof(l->buf) - 1) l->buf[l->len++] = *s++;
}

static TU_UNUSED void line_char(struct line *l, char c) {
  if (l->len < sizeof(l->buf) - 1) l->buf[l->len++] = c;
}

static TU_UNUSED void line_udec(struct line *l, unsigned long long v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) line_char(l, tmp[--n]);
}

static TU_UNUSED void line_num(struct line *l, long long v) {
  if (v < 0) {
    line_char(l, '-');
    /* Negate in unsigned arithmetic so LLONG_MIN works. */
    line_udec(l, 0ull - (unsigned long long)v);
  } else {
    line_udec(l, (unsigned long long)v);
  }
}

static TU_UNUSED void line_hex(struct line *l, unsigned long long v) {
  static const char digits[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = digits[v & 0xf];
    v >>= 4;
  } while (v != 0);
  line_str(l, "0x");
  while (n > 0) line_char(l, tmp[--n]);
}

/* Two lowercase hex digits per byte, no prefix. */
static TU_UNUSED void line_bytes(struct line *l, const void *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) {
    line_char(l, digits[b[i] >> 4]);
    line_char(l, digits[b[i] & 0xf]);
  }
}

/* Writes the line to stdout, adding a final newline if missing. */
static TU_UNUSED void line_say(struct line *l) {
  if (l->len == 0 || l->buf[l->len - 1] != '\n') {
    if (l->len < sizeof(l->buf)) l->buf[l->len++] = '\n';
    else l->buf[sizeof(l->buf) - 1] = '\n';
  }
  tu_write_all(1, l->buf, l->len);
}

/* Like line_say() but marks the line nondeterministic ("~ " prefix). */
static TU_UNUSED void line_say_nondet(struct line *l) {
  struct line out;
  line_init(&out);
  line_str(&out, "~ ");
  for (size_t i = 0; i < l->len && out.len < sizeof(out.buf) - 1; i++) out.buf[out.len++] = l->buf[i];
  line_say(&out);
}

/* ---- say*: one line each --------------------------------------------- */

/* Writes s verbatim (include the "\n" yourself); one write(2) per call. */
static TU_UNUSED void say(const char *s) { tu_write_all(1, s, strlen(s)); }

/* "label=v\n" */
static TU_UNUSED void say_num(const char *label, long long v) {
  struct line l;
  line_init(&l);
  line_str(&l, label);
  line_char(&l, '=');
  line_num(&l, v);
  line_say(&l);
}

/* "label=0x...\n" */
static TU_UNUSED void say_hex(const char *label, unsigned long long v) {
  struct line l;
  line_init(&l);
  line_str(&l, label);
  line_char(&l, '=');
  line_hex(&l, v);
  line_say(&l);
}

/* "~ s" (a newline is appended if s has none). */
static TU_UNUSED void say_nondet(const char *s) {
  struct line l;
  line_init(&l);
  line_str(&l, "~ ");
  line_str(&l, s);
  line_say(&l);
}

/* "~ label=v\n" */
static TU_UNUSED void say_nondet_num(const char *label, long long v) {
  struct line l;
  line_init(&l);
  line_str(&l, "~ ");
  line_str(&l, label);
  line_char(&l, '=');
  line_num(&l, v);
  line_say(&l);
}

/* "~ label=0x...\n" */
static TU_UNUSED void say_nondet_hex(const char *label, unsigned long long v) {
  struct line l;
  line_init(&l);
  line_str(&l, "~ ");
  line_str(&l, label);
  line_char(&l, '=');
  line_hex(&l, v);
  line_say(&l);
}

/* "~ label=<hex bytes>\n" */
static TU_UNUSED void say_nondet_bytes(const char *label, const void *p, size_t n) {
  struct line l;
  line_init(&l);
  line_str(&l, "~ ");
  line_str(&l, label);
  line_char(&l, '=');
  line_bytes(&l, p, n);
  line_say(&l);
}

/* The last line of every successful program. */
static TU_UNUSED void finish(void) { say("EXIT-SUCCESS\n"); }

/* ---- check ------------------------------------------------------------ */

static TU_UNUSED const char *tu_errno_text(int e) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *d = strerrordesc_np(e); /* static string: async-signal-safe */
  return d ? d : "unknown error";
#else
  return strerror(e);
#endif
}

static TU_UNUSED TU_NORETURN void tu_check_failed(const char *file, int lineno, const char *cond, int err) {
  struct line l;
  line_init(&l);
  line_str(&l, "FAILED: ");
  line_str(&l, file);
  line_char(&l, ':');
  line_num(&l, lineno);
  line_str(&l, ": check(");
  line_str(&l, cond);
  line_str(&l, ") errno=");
  line_num(&l, err);
  line_str(&l, " (");
  line_str(&l, tu_errno_text(err));
  line_str(&l, ")\n");
  tu_write_all(2, l.buf, l.len);
  abort();
}

/* Aborts with file, line, the condition text and errno when cond is false.
 * errno is captured right after cond is evaluated. */
#define check(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      int tu_err_ = errno;                                            \
      tu_check_failed(__FILE__, __LINE__, #cond, tu_err_);            \
    }                                                                 \
  } while (0)

/* ---- small utilities ------------------------------------------------- */

/* Safety net: a broken tracer gives a SIGALRM death, not a hang. Programs that
 * use ITIMER_REAL themselves (alarm shares it) bound their waits instead. */
static TU_UNUSED void test_init(void) { alarm(20); }

static TU_UNUSED long long now_ns(void) {
  struct timespec ts;
  check(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Sleeps about ms milliseconds (may return early on a signal). */
static TU_UNUSED void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000l};
  nanosleep(&ts, NULL);
}

static TU_UNUSED pid_t tu_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/* Creates a fresh directory /tmp/repro-test-XXXXXX; buf needs 32 bytes. The
 * program removes what it created and then the directory itself. */
static TU_UNUSED void test_mkdtemp(char *buf) {
  strcpy(buf, "/tmp/repro-test-XXXXXX");
  check(mkdtemp(buf) != NULL);
}

/* Joins dir + "/" + name into out (size PATH_MAX-ish, at least 256). */
static TU_UNUSED void path_join(char *out, size_t size, const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  check(a + 1 + b + 1 <= size);
  memcpy(out, dir, a);
  out[a] = '/';
  memcpy(out + a + 1, name, b + 1);
}

/* Folds n bytes of buf into a running checksum (start with 0): programs
 * print it to show replay read the same data. */
static TU_UNUSED unsigned long checksum(unsigned long sum, const char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) {
    sum = sum * 31 + (unsigned char)buf[i];
  }
  return sum;
}

/* Fills buf with n lower-case letters that depend on seed. */
static TU_UNUSED void fill_letters(char *buf, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    buf[i] = (char)('a' + (seed + i * 7) % 26);
  }
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- signals --------------------------------------------------------- */

/* Installs `handler` (or SIG_IGN / SIG_DFL) for `sig` with sa_flags `flags`
 * and an empty sa_mask; fails the test if sigaction does. */
static TU_UNUSED void set_handler(int sig, void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  check(sigaction(sig, &sa, NULL) == 0);
}

#endif /* REPRO_TESTS_PROGRAMS_TEST_UTIL_H */

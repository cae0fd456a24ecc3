/* Four threads malloc/realloc/free blocks of pseudo-random sizes (fixed seeds,
 * a few large enough to be mmapped) and verify every block's contents before
 * releasing it. Each thread's sequence is deterministic, so are the sums. */
#include "test_util.h"

#include <pthread.h>

#define NTHREADS 4
#define OPS 3000
#define LIVE 64

struct stats {
  long allocs, frees, reallocs;
  unsigned long long checksum;
};

static struct stats stats[NTHREADS];

static uint32_t next_rand(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static unsigned char pattern(int thread, uint32_t tag, size_t i) {
  return (unsigned char)(thread * 31 + tag * 7 + i * 13);
}

static void verify(int thread, const unsigned char *p, size_t size, uint32_t tag, struct stats *st) {
  for (size_t i = 0; i < size; i++) {
    check(p[i] == pattern(thread, tag, i));
    st->checksum += p[i];
  }
}

static void *worker(void *arg) {
  int me = (int)(long)arg;
  struct stats *st = &stats[me];
  uint32_t seed = 1234567u + (uint32_t)me * 7919u;
  unsigned char *blocks[LIVE] = {0};
  size_t sizes[LIVE] = {0};
  uint32_t tags[LIVE] = {0};
  for (int op = 0; op < OPS; op++) {
    int slot = (int)(next_rand(&seed) % LIVE);
    uint32_t r = next_rand(&seed);
    if (blocks[slot]) {
      verify(me, blocks[slot], sizes[slot], tags[slot], st);
      if (r % 4 == 0) {
        /* Grow or shrink in place or by moving; the prefix must survive. */
        size_t nsize = 1 + next_rand(&seed) % 2048;
        unsigned char *q = realloc(blocks[slot], nsize);
        check(q != NULL);
        size_t keep = nsize < sizes[slot] ? nsize : sizes[slot];
        verify(me, q, keep, tags[slot], st);
        for (size_t i = keep; i < nsize; i++) q[i] = pattern(me, tags[slot], i);
        blocks[slot] = q;
        sizes[slot] = nsize;
        st->reallocs++;
        continue;
      }
      free(blocks[slot]);
      blocks[slot] = NULL;
      st->frees++;
      continue;
    }
    size_t size = 1 + r % 4096;
    if (r % 97 == 0) size = 200 * 1024 + r % 4096; /* above the mmap threshold */
    unsigned char *p = malloc(size);
    check(p != NULL);
    check(((uintptr_t)p & 15) == 0);
    tags[slot] = (uint32_t)op;
    for (size_t i = 0; i < size; i++) p[i] = pattern(me, tags[slot], i);
    blocks[slot] = p;
    sizes[slot] = size;
    st->allocs++;
  }
  for (int s = 0; s < LIVE; s++) {
    if (!blocks[s]) continue;
    verify(me, blocks[s], sizes[s], tags[s], st);
    free(blocks[s]);
    st->frees++;
  }
  return NULL;
}

int main(void) {
  test_init();
  pthread_t threads[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) check(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (int i = 0; i < NTHREADS; i++) check(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < NTHREADS; i++) {
    check(stats[i].allocs == stats[i].frees);
    check(stats[i].allocs + stats[i].reallocs + stats[i].frees > OPS);
    struct line l;
    line_init(&l);
    line_str(&l, "thread ");
    line_num(&l, i);
    line_str(&l, " allocs=");
    line_num(&l, stats[i].allocs);
    line_str(&l, " reallocs=");
    line_num(&l, stats[i].reallocs);
    line_str(&l, " checksum=");
    line_udec(&l, stats[i].checksum);
    line_say(&l);
  }
  finish();
  return 0;
}

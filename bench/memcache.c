/* memcache.c - memory-cache hit: cujit_module_from_source + cujit_module_destroy of a
 * source this process compiled before, with default options, for a 4 KiB and a 64 KiB
 * source, and for the 4 KiB source passed from a new address each call. There is no bare equivalent (a program without cujit keeps its own handle);
 * the goal is absolute: at most 1 us for 4 KiB. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The small kernel padded with comment lines to exactly `size` bytes. */
static char *padded_source(size_t size) {
  static const char line[] = "// padding: a realistic source carries comments and helpers\n";
  size_t len = strlen(bench_src_small), l = strlen(line);
  char *s = malloc(size + 1);
  if (!s) return NULL;
  memcpy(s, bench_src_small, len);
  while (len + l <= size) {
    memcpy(s + len, line, l);
    len += l;
  }
  memset(s + len, '/', size - len); /* the last partial line is a comment too */
  if (size - len >= 1) s[size - 1] = '\n';
  s[size] = '\0';
  return s;
}

static uint64_t memory_hits(void) {
  cujit_cache_stats s;
  memset(&s, 0, sizeof s);
  cujit_cache_get_stats(&s);
  return s.memory_hits;
}

/* Copies of one source at as many addresses, to call with text the cache has seen at
 * an address it has not (the text is then hashed to find the image). */
#define N_COPIES 2048
static char *copies[N_COPIES];

/* ns per from_source + destroy over `iters` calls; NAN on failure. With `moved`, each
 * call passes the text at another address. */
static double time_hits(const char *src, const cujit_options *opts, int iters, int moved) {
  cujit_module *m = NULL;
  uint64_t t0 = bench_now_ns();
  int i;
  for (i = 0; i < iters; i++) {
    if (moved) src = copies[i % N_COPIES];
    if (cujit_module_from_source(&m, src, "bench.cu", opts) != CUJIT_OK) {
      fprintf(stderr, "cujit-bench: cujit_module_from_source: %s\n", cujit_last_error());
      return NAN;
    }
    cujit_module_destroy(m);
  }
  return (double)(bench_now_ns() - t0) / iters;
}

static int make_copies(const char *src) {
  int i;
  for (i = 0; i < N_COPIES; i++)
    if (!(copies[i] = strdup(src))) return -1;
  return 0;
}

static void free_copies(void) {
  int i;
  for (i = 0; i < N_COPIES; i++) {
    free(copies[i]);
    copies[i] = NULL;
  }
}

/* With `opts` NULL (the defaults: the target is the current device's, asked of the driver
 * on every call), or with the target given. The source is passed from one address, as a
 * program passes its string constant, or (`moved`) from a new address each call. */
static void one_size(size_t size, const cujit_options *opts, int moved) {
  char *src = padded_source(size), metric[112];
  int reps = bench_reps(15, 3), iters = bench_reps(2000, 200), r;
  double t[15], first, median;
  uint64_t hits0, expected;
  snprintf(metric, sizeof metric, "memory-cache hit: %zu KiB source%s", size / 1024,
           moved ? " at a new address each call" : opts ? " (arch given)" : "");
  if (!src) return;
  if (moved && make_copies(src) != 0) {
    bench_skip("memcache", metric, "out of memory");
    free_copies();
    free(src);
    return;
  }
  if (isnan(time_hits(src, opts, 1, 0))) { /* the compile that fills the cache */
    bench_skip("memcache", metric, "the source did not compile (see the log)");
    free_copies();
    free(src);
    return;
  }
  first = time_hits(src, opts, 1, moved);
  if (first > 1e6) iters = 1; /* not a memory hit: do not loop over compiles */
  time_hits(src, opts, iters, moved); /* warm-up */
  hits0 = memory_hits();
  for (r = 0; r < reps; r++) t[r] = time_hits(src, opts, iters, moved);
  expected = (uint64_t)reps * (uint64_t)iters;
  median = bench_median(t, (size_t)reps);
  if (memory_hits() - hits0 != expected)
    bench_check("memcache", metric, (double)size, "ns", median, NAN, NAN, 0,
                "served from memory (it was not: see docs)");
  else if (size <= 4096 && !opts && !moved)
    bench_check("memcache", metric, (double)size, "ns", median, NAN, 1000, median <= 1000,
                "<= 1000 ns");
  else
    bench_info("memcache", metric, (double)size, "ns", median, NAN,
               moved ? "no goal; the text is hashed to find it"
               : opts ? "no goal; no device query per call" : "no goal");
  free_copies();
  free(src);
}

void bench_memcache(void) {
  cujit_options given;
  memset(&given, 0, sizeof given);
  given.arch = bench_cfg.arch;
  one_size(4096, NULL, 0);
  one_size(65536, NULL, 0);
  one_size(4096, &given, 0); /* what the default's device query costs */
  one_size(4096, NULL, 1);   /* what finding the text by its hash costs */
}

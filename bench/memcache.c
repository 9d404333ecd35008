/* memcache.c - memory-cache hit: cujit_module_from_source + cujit_module_destroy of a
 * source this process compiled before: a 4 KiB and a 64 KiB source with default options,
 * the 4 KiB one with the target given, and the 4 KiB one passed from a new address each
 * call. The four run interleaved, round after round, so that a host's clock ramping up or
 * down weighs on all alike. There is no bare equivalent (a program without cujit keeps its
 * own handle); the goal is absolute: at most 1 us for 4 KiB. */
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
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
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

enum { N_CASES = 4, MAX_REPS = 15 };

typedef struct hit_case {
  size_t size;
  const cujit_options *opts; /* NULL: the defaults (the target is the current device's) */
  int moved;                 /* the text from a new address each call */
  char *src;
  int ok, iters;
  double t[MAX_REPS];
} hit_case;

static void case_metric(const hit_case *c, char *out, size_t size) {
  snprintf(out, size, "memory-cache hit: %zu KiB source%s", c->size / 1024,
           c->moved  ? " at a new address each call"
           : c->opts ? " (arch given)"
                     : "");
}

/* Compiles the case's source once (filling the cache) and warms it up. */
static void prepare(hit_case *c) {
  char metric[112];
  case_metric(c, metric, sizeof metric);
  c->iters = bench_reps(2000, 200);
  if (!(c->src = padded_source(c->size)) || (c->moved && make_copies(c->src) != 0)) {
    bench_skip("memcache", metric, "out of memory");
    return;
  }
  if (isnan(time_hits(c->src, c->opts, 1, 0))) {
    bench_skip("memcache", metric, "the source did not compile (see the log)");
    return;
  }
  if (time_hits(c->src, c->opts, 1, c->moved) > 1e6) c->iters = 1; /* not a memory hit */
  time_hits(c->src, c->opts, c->iters, c->moved);
  c->ok = 1;
}

static void report_case(const hit_case *c, int reps, uint64_t hits) {
  char metric[112];
  double t[MAX_REPS], median;
  memcpy(t, c->t, sizeof t);
  median = bench_median(t, (size_t)reps);
  case_metric(c, metric, sizeof metric);
  if (hits != (uint64_t)reps * (uint64_t)c->iters)
    bench_check("memcache", metric, (double)c->size, "ns", median, NAN, NAN, 0,
                "served from memory (it was not: see docs)");
  else if (c->size <= 4096 && !c->opts && !c->moved)
    bench_check("memcache", metric, (double)c->size, "ns", median, NAN, 1000, median <= 1000,
                "<= 1000 ns");
  else
    bench_info("memcache", metric, (double)c->size, "ns", median, NAN,
               c->moved  ? "no goal; the text is hashed to find it"
               : c->opts ? "no goal; no device query per call"
                         : "no goal");
}

void bench_memcache(void) {
  cujit_options given;
  hit_case cases[N_CASES];
  uint64_t hits[N_CASES] = {0}, before;
  int reps = bench_reps(MAX_REPS, 3), r, k, i;
  memset(&given, 0, sizeof given);
  memset(cases, 0, sizeof cases);
  given.arch = bench_cfg.arch;
  cases[0].size = 4096;
  cases[1].size = 65536;
  cases[2].size = 4096, cases[2].opts = &given; /* what the default's device query costs */
  cases[3].size = 4096, cases[3].moved = 1;     /* what finding the text by its hash costs */
  for (i = 0; i < N_CASES; i++) prepare(&cases[i]);
  for (r = 0; r < reps; r++)
    for (k = 0; k < N_CASES; k++) {
      hit_case *c = &cases[(k + r) % N_CASES];
      if (!c->ok) continue;
      before = memory_hits();
      c->t[r] = time_hits(c->src, c->opts, c->iters, c->moved);
      hits[c - cases] += memory_hits() - before;
    }
  for (i = 0; i < N_CASES; i++) {
    if (cases[i].ok) report_case(&cases[i], reps, hits[i]);
    free(cases[i].src);
  }
  free_copies();
}

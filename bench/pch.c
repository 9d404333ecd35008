/* pch.c - heavy headers: distinct kernels that include CUB, each compiled by cujit in one
 * new process, with precompiled headers (the default) and without (CUJIT_PCH=0). Each
 * source differs past its includes, so every compile is a real one; the cache is off.
 * Goals: 8 kernels take >= 3x less time in total with precompiled headers, and a process
 * that compiles one such kernel is not slower. Needs no GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* In a child: compiles n distinct CUB kernels; prints the seconds they took in all, then
 * each one's. */
int bench_pch_child(int argc, char **argv) {
  char src[1024];
  cujit_options o = {0};
  cujit_module *m;
  uint64_t t0, t1;
  double each[16];
  int n = argc > 0 ? atoi(argv[0]) : 0, i;
  if (argc > 1) snprintf(bench_cfg.arch, sizeof bench_cfg.arch, "%s", argv[1]);
  if (n > 16) n = 16;
  o.arch = bench_cfg.arch[0] ? bench_cfg.arch : NULL; /* the toolkit's headers need no option */
  o.flags = CUJIT_OPT_NO_CACHE;
  t0 = bench_now_ns();
  for (i = 0; i < n; i++) {
    snprintf(src, sizeof src,
             "#include <cub/block/block_reduce.cuh>\n"
             "__global__ void sum%d(const float *in, float *out) {\n"
             "  using Reduce = cub::BlockReduce<float, %d>;\n"
             "  __shared__ typename Reduce::TempStorage tmp;\n"
             "  float s = Reduce(tmp).Sum(in[threadIdx.x] * %d.0f);\n"
             "  if (threadIdx.x == 0) out[blockIdx.x] = s;\n"
             "}\n",
             i, 64 << (i % 4), i + 1);
    m = NULL;
    t1 = bench_now_ns();
    if (cujit_module_from_source(&m, src, "cub_sum.cu", &o) != CUJIT_OK) {
      fprintf(stderr, "pch child: %s\n", cujit_last_error());
      return 1;
    }
    each[i] = (double)(bench_now_ns() - t1) / 1e9;
    cujit_module_destroy(m);
  }
  printf("%.6f", (double)(bench_now_ns() - t0) / 1e9);
  for (i = 0; i < n; i++) printf(" %.6f", each[i]);
  printf("\n");
  return 0;
}

/* Seconds for n kernels in a new process, with precompiled headers on or off; each[] gets
 * every compile's seconds (n of them). */
static double run(int n, int pch, double *each) {
  char count[16], out[512], *p, *end;
  char *argv[] = {"cujit-bench", "--child", "pch", count, bench_cfg.arch, NULL};
  char *env_off[] = {"CUJIT_PCH=0", NULL}, *env_on[] = {"CUJIT_PCH=1", NULL};
  double total;
  int i;
  snprintf(count, sizeof count, "%d", n);
  if (bench_run_child(argv, pch ? env_on : env_off, out, sizeof out) != 0) return -1;
  total = strtod(out, &p);
  for (i = 0; i < n; i++, p = end)
    if ((each[i] = strtod(p, &end)) <= 0 || end == p) return -1;
  return total;
}

enum { MAX_REPS = 8, ONE_PER_ROUND = 3 };

typedef struct pch_runs {
  double with[MAX_REPS], without[MAX_REPS];
  double one_with[MAX_REPS * ONE_PER_ROUND], one_without[MAX_REPS * ONE_PER_ROUND];
  double first[MAX_REPS], second[MAX_REPS], later[MAX_REPS], plain[MAX_REPS];
} pch_runs;

/* One round: each pair in both orders over the rounds, so that a slow moment of the host
 * falls on both sides alike. The one-kernel processes, whose single compile takes as long
 * either way give or take the host (a prefix seen once gets no header), run in
 * ONE_PER_ROUND pairs a round: a fresh process's first CUB compile varies by 20% and more
 * on these hosts, and three samples a side made that row's median a coin toss. 0, or -1
 * when a compile failed. */
static int round_of(int n, int r, pch_runs *o) {
  double each_on[16], each_off[16], one[16];
  int on_first = r % 2 == 0, k, j;
  for (k = 0; k < 2; k++) {
    if ((k == 0) == on_first) {
      if ((o->with[r] = run(n, 1, each_on)) <= 0) return -1;
    } else if ((o->without[r] = run(n, 0, each_off)) <= 0) {
      return -1;
    }
  }
  for (j = 0; j < ONE_PER_ROUND; j++)
    for (k = 0; k < 2; k++) {
      int pch = (k == 0) == ((r + j) % 2 == 0); /* which side goes first alternates */
      double *at = (pch ? o->one_with : o->one_without) + r * ONE_PER_ROUND + j;
      if ((*at = run(1, pch, one)) <= 0) return -1;
    }
  o->first[r] = each_on[0];
  o->second[r] = each_on[1];
  o->later[r] = bench_median(each_on + 2, (size_t)(n - 2));
  o->plain[r] = bench_median(each_off, (size_t)n);
  return 0;
}

void bench_pch(void) {
  int n = bench_cfg.quick ? 3 : 8, reps = bench_reps(3, 1), r;
  double with, without, one_with, one_without, plain, best;
  char metric[96], goal[120];
  pch_runs o;
  double one[16];
  /* untimed: the first compile of the group reads CUB's headers from disk */
  if (run(1, 0, one) <= 0)
    return bench_skip("pch", "CUB kernels in one process", "a compile failed");
  for (r = 0; r < reps; r++)
    if (round_of(n, r, &o) != 0)
      return bench_skip("pch", "CUB kernels in one process", "a compile failed");
  with = bench_median(o.with, (size_t)reps), without = bench_median(o.without, (size_t)reps);
  one_with = bench_median(o.one_with, (size_t)(reps * ONE_PER_ROUND));
  one_without = bench_median(o.one_without, (size_t)(reps * ONE_PER_ROUND));
  plain = bench_median(o.plain, (size_t)reps);
  snprintf(metric, sizeof metric, "%d distinct CUB kernels, one process", n);
  bench_check("pch", metric, n, "s", with, without, without / 3, with * 3 <= without,
              ">= 3x less than without precompiled headers");
  bench_ratio("pch", "one CUB kernel, one process", 1, "s", one_with, one_without, 1.02,
              "not slower than without (<= 1.02x)");
  /* What bounds the first row: the first compile of a prefix is plain, the second makes
   * the precompiled header, the rest use it. */
  bench_info("pch", "  compile 1 (plain; a prefix seen once gets no header)", 1, "s",
             bench_median(o.first, (size_t)reps), plain, "baseline: a compile without");
  bench_info("pch", "  compile 2 (makes the precompiled header)", 2, "s",
             bench_median(o.second, (size_t)reps), plain, "baseline: a compile without");
  bench_info("pch", "  compiles 3 and later (use it), median", 3, "s",
             bench_median(o.later, (size_t)reps), plain, "baseline: a compile without");
  best = n / (2.0 + (n - 2) * bench_median(o.later, (size_t)reps) / plain);
  snprintf(goal, sizeof goal, "%d plain / (2 plain + %d uses): the most any making cost allows", n,
           n - 2);
  bench_info("pch", "  speed-up if making the header cost nothing", n, "x", best, NAN, goal);
}

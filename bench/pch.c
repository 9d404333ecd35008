/* pch.c - heavy headers: distinct kernels that include CUB, each compiled by cujit in one
 * new process, with precompiled headers (the default) and without (CUJIT_PCH=0). Each
 * source differs past its includes, so every compile is a real one; the cache is off.
 * Goals: 8 kernels take >= 3x less time in total with precompiled headers, and a process
 * that compiles one such kernel is not slower. Needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* In a child: compiles n distinct CUB kernels, prints the seconds they took. */
int bench_pch_child(int argc, char **argv) {
  char src[1024];
  cujit_options o = {0};
  cujit_module *m;
  uint64_t t0;
  int n = argc > 0 ? atoi(argv[0]) : 0, i;
  if (argc > 1) snprintf(bench_cfg.arch, sizeof bench_cfg.arch, "%s", argv[1]);
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
             "}\n", i, 64 << (i % 4), i + 1);
    m = NULL;
    if (cujit_module_from_source(&m, src, "cub_sum.cu", &o) != CUJIT_OK) {
      fprintf(stderr, "pch child: %s\n", cujit_last_error());
      return 1;
    }
    cujit_module_destroy(m);
  }
  printf("%.6f\n", (double)(bench_now_ns() - t0) / 1e9);
  return 0;
}

/* Seconds for n kernels in a new process, with precompiled headers on or off. */
static double run(int n, int pch) {
  char count[16], out[64];
  char *argv[] = {"cujit-bench", "--child", "pch", count, bench_cfg.arch, NULL};
  char *env_off[] = {"CUJIT_PCH=0", NULL}, *env_on[] = {"CUJIT_PCH=1", NULL};
  snprintf(count, sizeof count, "%d", n);
  if (bench_run_child(argv, pch ? env_on : env_off, out, sizeof out) != 0) return -1;
  return atof(out);
}

void bench_pch(void) {
  int n = bench_cfg.quick ? 3 : 8;
  double with = run(n, 1), without = run(n, 0), one_with = run(1, 1), one_without = run(1, 0);
  char metric[96];
  if (with <= 0 || without <= 0 || one_with <= 0 || one_without <= 0)
    return bench_skip("pch", "CUB kernels in one process", "a compile failed");
  snprintf(metric, sizeof metric, "%d distinct CUB kernels, one process", n);
  bench_check("pch", metric, n, "s", with, without, without / 3, with * 3 <= without,
              ">= 3x less than without precompiled headers");
  bench_ratio("pch", "one CUB kernel, one process", 1, "s", one_with, one_without, 1.02,
              "not slower than without (<= 1.02x)");
}

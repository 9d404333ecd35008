/* memory.c - 10^6 launches with In and Out buffers (a tiny kernel, 256-byte buffers):
 * device memory in use (cuMemGetInfo) and this process's RSS (/proc/self/statm) after a
 * warm-up and at the end. Goals: device memory does not grow at all; RSS grows by at most
 * 256 KiB, less than a leak of one byte in every fourth launch would add. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const char memory_src[] =
    "extern \"C\" __global__ void addone(const float *in, float *out, int n) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] + 1.0f;\n"
    "}\n";

#define MEM_N 64

static size_t device_used(void) {
  size_t free_b = 0, total = 0;
  bench_cu.cuMemGetInfo(&free_b, &total);
  return total - free_b;
}

static int launches(cujit_function *f, const float *in, float *out, long n) {
  long i;
  for (i = 0; i < n; i++)
    if (CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(MEM_N), cujit_in(in, sizeof(float) * MEM_N),
                     cujit_out(out, sizeof(float) * MEM_N), cujit_i32(MEM_N)) != CUJIT_OK)
      return -1;
  return 0;
}

static int results_right(const float *in, const float *out) {
  int i;
  for (i = 0; i < MEM_N; i++)
    if (out[i] != in[i] + 1.0f) return 0;
  return 1;
}

static void report(long n, double us, size_t dev0, size_t dev1, size_t rss0, size_t rss1) {
  double dgrow = ((double)dev1 - (double)dev0) / (1 << 20);
  double rgrow = ((double)rss1 - (double)rss0) / 1024;
  char metric[96];
  snprintf(metric, sizeof metric, "%ld In/Out launches: device memory growth", n);
  bench_check("memory", metric, (double)n, "MiB", dgrow, (double)dev0 / (1 << 20), 0, dev1 <= dev0,
              "no growth (baseline: in use after warm-up)");
  snprintf(metric, sizeof metric, "%ld In/Out launches: RSS growth", n);
  bench_check("memory", metric, (double)n, "KiB", rgrow, (double)rss0 / 1024, 256, rgrow <= 256,
              "<= 256 KiB (baseline: RSS after warm-up)");
  bench_info("memory", "In/Out launch: 2 x 256 B (synchronous)", (double)n, "us", us, NAN,
             "time per launch during the run");
}

void bench_memory(void) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  float in[MEM_N], out[MEM_N];
  long n = bench_reps(1000000, 100000);
  size_t dev0, rss0, dev1, rss1;
  uint64_t t0, t1;
  int i;
  for (i = 0; i < MEM_N; i++) in[i] = (float)i, out[i] = 0;
  if (bench_driver_load() != 0 || bench_context() != 0 ||
      cujit_module_from_source(&m, memory_src, "memory.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "addone", &f) != CUJIT_OK || launches(f, in, out, n / 100)) {
    bench_skip("memory", "In/Out launches", cujit_last_error());
    cujit_module_destroy(m);
    return;
  }
  memset(out, 0, sizeof out);
  dev0 = device_used();
  rss0 = bench_rss_bytes();
  t0 = bench_now_ns();
  if (launches(f, in, out, n) != 0 || !results_right(in, out)) {
    bench_skip("memory", "In/Out launches", "a launch failed or returned wrong data");
    cujit_module_destroy(m);
    return;
  }
  t1 = bench_now_ns();
  dev1 = device_used();
  rss1 = bench_rss_bytes();
  report(n, (double)(t1 - t0) / 1e3 / (double)n, dev0, dev1, rss0, rss1);
  cujit_module_destroy(m);
}

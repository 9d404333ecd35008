/* batch.c - many kernels at once: N distinct kernels of one compile time each, compiled by
 * cujit_batch_compile() (worker processes beside this one), by cujit one after the other,
 * and by bare NVRTC one after the other, each in a new process with the cache off (every
 * compile is a real one, and each run pays for loading NVRTC and starting its workers).
 * Goals: with 16 CPUs or more, 16 kernels finish in <= 1.5x one bare compile; with fewer,
 * in <= 0.6x the time bare NVRTC takes for them one after the other. Needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Kernel i: cheap to parse, dear to optimise (an unrolled loop of math calls), so that
 * its time is NVRTC's own work and the same for every i. */
static void kernel(int i, char *out, size_t size) {
  snprintf(out, size,
           "__global__ void work%d(float *x) {\n"
           "  float a = x[threadIdx.x], b = x[threadIdx.x + 1];\n"
           "#pragma unroll\n"
           "  for (int i = 0; i < 32; i++) {\n"
           "    a = sinf(a * b + i + %d) + cosf(b - a * i);\n"
           "    b = expf(a * 0.001f) * b + (float)i;\n"
           "  }\n"
           "  x[threadIdx.x] = a + b;\n"
           "}\n",
           i, i);
}

static int bare(int n) {
  char src[1024], opt[48];
  const char *argv[2] = {opt, "-no-cache"};
  size_t size;
  void *cubin;
  int i;
  snprintf(opt, sizeof opt, "-arch=%s", bench_cfg.arch);
  for (i = 0; i < n; i++) {
    kernel(i, src, sizeof src);
    if (!(cubin = bench_nvrtc_cubin(src, "work.cu", argv, 2, NULL, &size))) return 1;
    free(cubin);
  }
  return 0;
}

static int one_by_one(int n, const cujit_options *o) {
  char src[1024];
  int i;
  for (i = 0; i < n; i++) {
    cujit_module *m = NULL;
    kernel(i, src, sizeof src);
    if (cujit_module_from_source(&m, src, "work.cu", o) != CUJIT_OK) return 1;
    cujit_module_destroy(m);
  }
  return 0;
}

static int at_once(int n, const cujit_options *o) {
  char **src = calloc((size_t)n, sizeof *src);
  cujit_module **mods = calloc((size_t)n, sizeof *mods);
  int i, rc;
  for (i = 0; i < n; i++) {
    src[i] = malloc(1024);
    kernel(i, src[i], 1024);
  }
  rc = cujit_batch_compile(mods, NULL, (const char *const *)src, NULL, (size_t)n, o) != CUJIT_OK;
  for (i = 0; i < n; i++) {
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
  free(src);
  free(mods);
  return rc;
}

/* In a child: compiles n kernels the way `how` says (bare, serial, batch) for `arch`,
 * prints the seconds it took. */
int bench_batch_child(int argc, char **argv) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  uint64_t t0;
  int n, rc;
  if (argc < 3) return 2;
  n = atoi(argv[0]);
  snprintf(bench_cfg.arch, sizeof bench_cfg.arch, "%s", argv[2]);
  o.arch = bench_cfg.arch;
  o.flags = CUJIT_OPT_NO_CACHE;
  t0 = bench_now_ns();
  if (strcmp(argv[1], "bare") == 0)
    rc = bare(n);
  else if (strcmp(argv[1], "serial") == 0)
    rc = one_by_one(n, &o);
  else
    rc = at_once(n, &o);
  if (rc) {
    fprintf(stderr, "batch child: %s\n", cujit_last_error());
    return 1;
  }
  printf("%.6f\n", (double)(bench_now_ns() - t0) / 1e9);
  return 0;
}

/* Seconds for n kernels compiled `how` in a new process; -1 when it failed. */
static double run(int n, const char *how) {
  char count[16], out[64];
  char *argv[] = {"cujit-bench", "--child", "batch", count, (char *)how, bench_cfg.arch, NULL};
  snprintf(count, sizeof count, "%d", n);
  if (bench_run_child(argv, NULL, out, sizeof out) != 0) return -1;
  return atof(out);
}

void bench_batch(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int n = bench_cfg.quick ? 4 : 16, reps = bench_reps(3, 1), r;
  double one[3], bare_n[3], serial[3], batch[3], m_one, m_bare, m_serial, m_batch;
  char metric[96];
  for (r = 0; r < reps; r++) { /* interleaved, so that a slow moment hits all alike */
    one[r] = run(1, "bare");
    bare_n[r] = run(n, "bare");
    serial[r] = run(n, "serial");
    batch[r] = run(n, "batch");
    if (one[r] <= 0 || bare_n[r] <= 0 || serial[r] <= 0 || batch[r] <= 0)
      return bench_skip("batch", "distinct kernels at once", "a compile failed");
  }
  m_one = bench_median(one, (size_t)reps);
  m_bare = bench_median(bare_n, (size_t)reps);
  m_serial = bench_median(serial, (size_t)reps);
  m_batch = bench_median(batch, (size_t)reps);
  snprintf(metric, sizeof metric, "%d distinct kernels, batch vs bare NVRTC one by one", n);
  if (cpus >= 16)
    bench_info("batch", metric, n, "s", m_batch, m_bare, "the goal on this many CPUs is below");
  else
    bench_ratio("batch", metric, n, "s", m_batch, m_bare, 0.6,
                "<= 0.6x bare NVRTC one after the other (fewer than 16 CPUs)");
  snprintf(metric, sizeof metric, "%d distinct kernels, batch vs one bare compile", n);
  if (cpus >= 16)
    bench_ratio("batch", metric, n, "s", m_batch, m_one, 1.5,
                "<= 1.5x one compile (16 CPUs or more)");
  else
    bench_info("batch", metric, n, "s", m_batch, m_one, "goal with 16 CPUs or more: <= 1.5x");
  snprintf(metric, sizeof metric, "%d distinct kernels, cujit one by one", n);
  bench_info("batch", metric, n, "s", m_serial, m_bare, "baseline: bare NVRTC one by one");
}

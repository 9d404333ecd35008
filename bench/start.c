/* start.c - warm start from the disk cache in a fresh process: from
 * cujit_module_from_source to the first launch completed, against reading the CUBIN file,
 * cuModuleLoadData and the same launch. Driver start and context creation come first in
 * both children and are reported separately. The cujit child also reports whether NVRTC
 * was initialised: its compile count, and whether libnvrtc-builtins (which NVRTC maps on
 * its first compile) is in the process's address space. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

typedef struct start_sample {
  double ctx_ms;   /* cuInit + primary context */
  double start_ms; /* the measured path */
  double part[3];  /* its parts: source or file; module and function; launch and sync */
  double wall_ms;  /* the whole child process, spawn to exit */
  double faults;   /* page faults taken in the measured path */
  int compiles;    /* cujit child: NVRTC compiles in the process */
  int builtins;    /* cujit child: libnvrtc-builtins mapped */
} start_sample;

static double since_ms(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e6; }

/* Page faults of this process so far: on a virtual machine each first touch of a page
 * costs microseconds, and a fresh process takes one for every page of code, data and
 * stack it touches first. */
static long faults_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt + ru.ru_majflt;
}

static int child_cujit(double *start_ms, double *part, long *faults, int *compiles) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  long f0 = faults_now();
  uint64_t t0 = bench_now_ns(), t1, t2;
  bench_check_ok(cujit_module_from_source(&m, bench_src_small, "warm.cu", NULL), "from_source");
  t1 = bench_now_ns();
  bench_check_ok(cujit_module_get_function(m, "saxpy", &f), "get_function");
  t2 = bench_now_ns();
  bench_check_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_f32(2.0f), cujit_ptr(0),
                              cujit_ptr(0), cujit_i32(0)),
                 "cujit_launch");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  *start_ms = since_ms(t0);
  *faults = faults_now() - f0;
  part[0] = (double)(t1 - t0) / 1e6, part[1] = (double)(t2 - t1) / 1e6, part[2] = since_ms(t2);
  cujit_cache_get_stats(&s);
  *compiles = (int)s.compiles;
  cujit_module_destroy(m);
  return 0;
}

static int child_bare(const char *cubin_path, double *start_ms, double *part, long *faults) {
  CUmodule mod;
  CUfunction fn;
  float a = 2.0f;
  CUdeviceptr x = 0, y = 0;
  int n = 0;
  void *params[] = {&a, &x, &y, &n};
  size_t size;
  long f0 = faults_now();
  uint64_t t0 = bench_now_ns(), t1, t2;
  void *image = bench_read_file(cubin_path, &size);
  if (!image) return 1;
  t1 = bench_now_ns();
  bench_cu_check(bench_cu.cuModuleLoadData(&mod, image), "cuModuleLoadData");
  bench_cu_check(bench_cu.cuModuleGetFunction(&fn, mod, "saxpy"), "cuModuleGetFunction");
  t2 = bench_now_ns();
  bench_cu_check(bench_cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                 "cuLaunchKernel");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  *start_ms = since_ms(t0);
  *faults = faults_now() - f0;
  part[0] = (double)(t1 - t0) / 1e6, part[1] = (double)(t2 - t1) / 1e6, part[2] = since_ms(t2);
  free(image);
  bench_cu.cuModuleUnload(mod);
  return 0;
}

/* Child: argv = {"cujit"} or {"bare", cubin_path}. Prints "ctx_ms start_ms compiles
 * builtins part0 part1 part2 faults". */
int bench_start_child(int argc, char **argv) {
  double ctx_ms, start_ms = 0, part[3] = {0, 0, 0};
  int compiles = 0, rc;
  long faults = 0;
  uint64_t t0;
  if (argc < 1) return 2;
  t0 = bench_now_ns();
  if (bench_driver_load() != 0 || bench_context() != 0) return 3;
  ctx_ms = since_ms(t0);
  if (strcmp(argv[0], "cujit") == 0)
    rc = child_cujit(&start_ms, part, &faults, &compiles);
  else
    rc = argc > 1 ? child_bare(argv[1], &start_ms, part, &faults) : 2;
  printf("%.6f %.6f %d %d %.6f %.6f %.6f %ld\n", ctx_ms, start_ms, compiles,
         bench_mapped("libnvrtc-builtins"), part[0], part[1], part[2], faults);
  return rc;
}

static int run_start(const char *kind, const char *cubin, const char *cache, start_sample *s) {
  char env_home[640], env_cache[640], home[600], out[256];
  char *argv[] = {"", "--child", "start", (char *)kind, (char *)cubin, NULL};
  char *env[] = {env_home, env_cache, NULL};
  uint64_t t0;
  if (bench_mkdir("home", home, sizeof home) != 0) return -1;
  snprintf(env_home, sizeof env_home, "HOME=%s", home);
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  t0 = bench_now_ns();
  if (bench_run_child(argv, env, out, sizeof out) != 0) return -1;
  s->wall_ms = since_ms(t0);
  return sscanf(out, "%lf %lf %d %d %lf %lf %lf %lf", &s->ctx_ms, &s->start_ms, &s->compiles,
                &s->builtins, &s->part[0], &s->part[1], &s->part[2], &s->faults) == 8
             ? 0
             : -1;
}

typedef struct start_runs {
  double cj[32], bare[32], cj_ctx[32], bare_ctx[32], cj_wall[32], bare_wall[32];
  double cj_part[3][32], bare_part[3][32], cj_faults[32], bare_faults[32];
  int worst_compiles, builtins;
} start_runs;

static int collect(int reps, const char *cubin, const char *cache, start_runs *o) {
  start_sample s;
  int r, k, i;
  for (r = 0; r < reps; r++)
    for (k = 0; k < 2; k++) { /* interleaved, alternating which goes first */
      int cujit = (k + r) % 2 == 0;
      if (run_start(cujit ? "cujit" : "bare", cubin, cache, &s) != 0) return -1;
      for (i = 0; i < 3; i++) (cujit ? o->cj_part : o->bare_part)[i][r] = s.part[i];
      if (cujit) {
        o->cj[r] = s.start_ms, o->cj_ctx[r] = s.ctx_ms, o->cj_wall[r] = s.wall_ms;
        o->cj_faults[r] = s.faults;
        if (s.compiles > o->worst_compiles) o->worst_compiles = s.compiles;
        o->builtins |= s.builtins;
      } else {
        o->bare[r] = s.start_ms, o->bare_ctx[r] = s.ctx_ms, o->bare_wall[r] = s.wall_ms;
        o->bare_faults[r] = s.faults;
      }
    }
  return 0;
}

static void report(const start_runs *o, int reps) {
  start_runs m = *o; /* medians sort in place */
  size_t n = (size_t)reps;
  double c = bench_median(m.cj, n), b = bench_median(m.bare, n);
  char goal[96];
  snprintf(goal, sizeof goal, "<= 1.3x (file + cuModuleLoadData + launch)");
  bench_check("start", "warm start: from_source to first launch done", 0, "ms", c, b, 1.3 * b,
              c <= 1.3 * b, goal);
  bench_check("start",
              o->builtins ? "warm start: NVRTC compiles; libnvrtc-builtins WAS mapped"
                          : "warm start: NVRTC compiles; libnvrtc-builtins never mapped",
              0, "count", o->worst_compiles, NAN, NAN, o->worst_compiles == 0 && !o->builtins,
              "0 compiles and libnvrtc-builtins never mapped");
  bench_info("start", "  part: from_source / read the CUBIN file", 0, "ms",
             bench_median(m.cj_part[0], n), bench_median(m.bare_part[0], n), "breakdown");
  bench_info("start", "  part: get_function / cuModuleLoadData+GetFunction", 0, "ms",
             bench_median(m.cj_part[1], n), bench_median(m.bare_part[1], n), "breakdown");
  bench_info("start", "  part: first launch + cuCtxSynchronize", 0, "ms",
             bench_median(m.cj_part[2], n), bench_median(m.bare_part[2], n), "breakdown");
  bench_info("start", "  page faults in the measured path", 0, "count",
             bench_median(m.cj_faults, n), bench_median(m.bare_faults, n),
             "first touches of pages; microseconds each on a virtual machine");
  bench_info("start", "driver start + context (excluded above)", 0, "ms", bench_median(m.cj_ctx, n),
             bench_median(m.bare_ctx, n), "cuInit + primary context");
  bench_info("start", "whole fresh process: spawn to exit", 0, "ms", bench_median(m.cj_wall, n),
             bench_median(m.bare_wall, n), "same program both sides");
}

void bench_start(void) {
  char cache[600], cubin[700];
  start_sample s;
  start_runs o;
  int reps = bench_reps(15, 3);
  memset(&o, 0, sizeof o);
  if (bench_mkdir("start-cache", cache, sizeof cache) != 0) return;
  snprintf(cubin, sizeof cubin, "%s/warm.cubin", bench_cfg.scratch);
  if (bench_write_cubin(bench_src_small, "warm.cu", cubin) != 0) {
    bench_skip("start", "warm start", "the baseline's CUBIN could not be compiled");
    return;
  }
  /* The first cujit child compiles and fills the cache; one more of each warms up. */
  if (run_start("cujit", cubin, cache, &s) != 0 || run_start("cujit", cubin, cache, &s) != 0 ||
      run_start("bare", cubin, cache, &s) != 0 || collect(reps, cubin, cache, &o) != 0) {
    bench_skip("start", "warm start", "a child process failed (see the log)");
    return;
  }
  report(&o, reps);
}

/* start.c - a new process's start, in two ways, each side in a process of its own, run by
 * cujit-bench-start (bench/startchild.c: a program that links cujit and nothing else of
 * CUDA, as a user's does).
 *
 * Warm: a cache that holds the kernel. From cujit_module_from_source to the first launch
 * completed, against reading the CUBIN file, cuModuleLoadData and the same launch. Driver
 * start and context creation come first in both children and are reported separately. The
 * cujit child also reports whether NVRTC was initialised: its compile count, and whether
 * libnvrtc-builtins (which NVRTC maps on its first compile) is in the process's address
 * space. Two more bare ways say what part of get_function the driver's library API takes
 * (cuLibraryLoadData + cuLibraryGetKernel + cuKernelGetFunction, as cujit loads; and the
 * same with cujit's JIT log options), and the bare child times the 13 device attributes
 * cujit reads for its launch checks.
 *
 * Cold: an empty cache. From main() to the first launch completed: cujit's from_source
 * (an NVRTC compile, the device's context started beside it), get_function (which waits
 * for the context), launch and wait; against the bare driver and NVRTC doing the same in
 * order: cuInit, the primary context, NVRTC (opened at run time, as cujit opens it) compiling
 * with -arch and -no-cache, then cuModuleLoadData, the launch and the wait. Goal: at most
 * 1.1 x the longer of the bare side's context (cuInit + primary context) and its compile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define REPS_MAX 32

typedef struct start_sample {
  double ctx_ms;   /* cuInit + primary context */
  double start_ms; /* the measured path */
  double part[3];  /* its parts: source or file; module and function; launch and sync */
  double wall_ms;  /* the whole child process, spawn to exit */
  double faults;   /* page faults taken in the measured path */
  double limits;   /* bare: the 13 device attributes */
  int compiles;    /* cujit child: NVRTC compiles in the process */
  int builtins;    /* cujit child: libnvrtc-builtins mapped */
} start_sample;

static double since_ms(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e6; }

/* Runs cujit-bench-start with args (NULL-ended, at most 4) in a new HOME, with `cache` as
 * its cache directory; its output into out. */
static int run_prog(char *const *args, const char *cache, char *out, size_t size, double *wall_ms) {
  char prog[4200], env_home[640], env_cache[640], home[600];
  char *argv[6] = {prog, NULL, NULL, NULL, NULL, NULL};
  char *env[] = {env_home, env_cache, NULL};
  uint64_t t0;
  int i;
  for (i = 0; i < 4 && args[i]; i++) argv[i + 1] = args[i];
  if (bench_mkdir("home", home, sizeof home) != 0) return -1;
  bench_sibling("cujit-bench-start", prog, sizeof prog);
  snprintf(env_home, sizeof env_home, "HOME=%s", home);
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  t0 = bench_now_ns();
  if (bench_run_program(argv, env, out, size) != 0) return -1;
  if (wall_ms) *wall_ms = since_ms(t0);
  return 0;
}

/* A warm child: "cujit", or a bare way ("module", "library", "library-log"). */
static int run_warm(const char *way, const char *cubin, const char *cache, start_sample *s) {
  char *args[] = {"warm-cujit", NULL, NULL, NULL};
  char out[256];
  if (strcmp(way, "cujit") != 0)
    args[0] = "warm-bare", args[1] = (char *)cubin, args[2] = (char *)way;
  if (run_prog(args, cache, out, sizeof out, &s->wall_ms) != 0) return -1;
  return sscanf(out, "%lf %lf %d %d %lf %lf %lf %lf %lf", &s->ctx_ms, &s->start_ms, &s->compiles,
                &s->builtins, &s->part[0], &s->part[1], &s->part[2], &s->faults, &s->limits) == 9
             ? 0
             : -1;
}

enum { W_CUJIT, W_MODULE, W_LIBRARY, W_LIBRARY_LOG, N_WAYS };
static const char *const way_names[N_WAYS] = {"cujit", "module", "library", "library-log"};

typedef struct start_runs {
  double start[N_WAYS][REPS_MAX], ctx[N_WAYS][REPS_MAX], wall[N_WAYS][REPS_MAX];
  double part[N_WAYS][3][REPS_MAX], faults[N_WAYS][REPS_MAX], limits[REPS_MAX];
  int worst_compiles, builtins;
} start_runs;

static int collect(int reps, const char *cubin, const char *cache, start_runs *o) {
  start_sample s;
  int r, k, w, i;
  for (r = 0; r < reps; r++)
    for (k = 0; k < N_WAYS; k++) { /* interleaved, a different way first each round */
      w = (k + r) % N_WAYS;
      if (run_warm(way_names[w], cubin, cache, &s) != 0) return -1;
      for (i = 0; i < 3; i++) o->part[w][i][r] = s.part[i];
      o->start[w][r] = s.start_ms, o->ctx[w][r] = s.ctx_ms, o->wall[w][r] = s.wall_ms;
      o->faults[w][r] = s.faults;
      if (w == W_MODULE) o->limits[r] = s.limits;
      if (w == W_CUJIT) {
        if (s.compiles > o->worst_compiles) o->worst_compiles = s.compiles;
        o->builtins |= s.builtins;
      }
    }
  return 0;
}

static double med(const double *v, int reps) {
  double c[REPS_MAX];
  memcpy(c, v, (size_t)reps * sizeof *c);
  return bench_median(c, (size_t)reps);
}

/* cujit's path cut into steps, each timed alone (warm-parts), and the bare side's part that
 * does the same work where it has one (-1: none). */
enum { N_STEPS = 5 };
static const struct {
  const char *name, *note;
  int bare; /* a part of the bare way: 0 file, 1 load and function, 2 launch */
} steps_shown[N_STEPS] = {{"  step: NVRTC located, not loaded", "each step alone, a process each",
                           -1},
                          {"  step: from_source: env, NVRTC's identity, key, disk hit, module",
                           "bare: read the CUBIN file", 0},
                          {"  step: from_source again: key + memory-cache hit",
                           "the per-call part of the step above", -1},
                          {"  step: get_function: library load, kernel, layout, limits",
                           "bare: cuModuleLoadData+GetFunction", 1},
                          {"  step: first launch + cuCtxSynchronize", "bare: launch + sync", 2}};

static int run_parts(const char *cache, double *step, double *faults) {
  char *args[] = {"warm-parts", NULL, NULL, NULL};
  char out[256];
  double ctx;
  if (run_prog(args, cache, out, sizeof out, NULL) != 0) return -1;
  return sscanf(out, "%lf %lf %lf %lf %lf %lf %lf", &ctx, &step[0], &step[1], &step[2], &step[3],
                &step[4], faults) == 7
             ? 0
             : -1;
}

/* The steps, each the median of `reps` processes, beside the bare way's parts (`bare`,
 * by part, then by round). */
static void report_steps(const char *cache, int reps, double bare[3][REPS_MAX]) {
  static double steps[N_STEPS][REPS_MAX], faults[REPS_MAX];
  double one[N_STEPS];
  int r, i;
  for (r = 0; r < reps; r++) {
    if (run_parts(cache, one, &faults[r]) != 0) {
      bench_skip("start", "warm start: steps", "a child process failed (see the log)");
      return;
    }
    for (i = 0; i < N_STEPS; i++) steps[i][r] = one[i];
  }
  for (i = 0; i < N_STEPS; i++)
    bench_info("start", steps_shown[i].name, 0, "ms", med(steps[i], reps),
               steps_shown[i].bare < 0 ? NAN : med(bare[steps_shown[i].bare], reps),
               steps_shown[i].note);
  bench_info("start", "  steps: page faults", 0, "count", med(faults, reps), NAN, "the five steps");
}

static void report_warm(const start_runs *o, int reps) {
  double c = med(o->start[W_CUJIT], reps), b = med(o->start[W_MODULE], reps);
  double get_function = med(o->part[W_CUJIT][1], reps);
  bench_check("start", "warm start: from_source to first launch done", 0, "ms", c, b, 1.3 * b,
              c <= 1.3 * b, "<= 1.3x (file + cuModuleLoadData + launch)");
  bench_check("start",
              o->builtins ? "warm start: NVRTC compiles; libnvrtc-builtins WAS mapped"
                          : "warm start: NVRTC compiles; libnvrtc-builtins never mapped",
              0, "count", o->worst_compiles, NAN, NAN, o->worst_compiles == 0 && !o->builtins,
              "0 compiles and libnvrtc-builtins never mapped");
  bench_info("start", "  part: from_source / read the CUBIN file", 0, "ms",
             med(o->part[W_CUJIT][0], reps), med(o->part[W_MODULE][0], reps), "breakdown");
  bench_info("start", "  part: get_function / cuModuleLoadData+GetFunction", 0, "ms", get_function,
             med(o->part[W_MODULE][1], reps), "breakdown");
  bench_info("start", "  part: first launch + cuCtxSynchronize", 0, "ms",
             med(o->part[W_CUJIT][2], reps), med(o->part[W_MODULE][2], reps), "breakdown");
  bench_info("start", "  page faults in the measured path", 0, "count",
             med(o->faults[W_CUJIT], reps), med(o->faults[W_MODULE], reps),
             "first touches of pages; microseconds each on a virtual machine");
  bench_info("start", "  get_function / bare cuLibraryLoadData+GetKernel+KernelGetFunction", 0,
             "ms", get_function, med(o->part[W_LIBRARY][1], reps),
             "the library API cujit loads with; no options");
  bench_info("start", "  get_function / the same with cujit's JIT log options", 0, "ms",
             get_function, med(o->part[W_LIBRARY_LOG][1], reps),
             "cuLibraryLoadData given an error log buffer");
  bench_info("start", "  bare: 13 device attributes of the launch checks", 0, "ms", NAN,
             med(o->limits, reps), "cuDeviceGetAttribute x 13, first time in the process");
  bench_info("start", "driver start + context (excluded above)", 0, "ms",
             med(o->ctx[W_CUJIT], reps), med(o->ctx[W_MODULE], reps), "cuInit + primary context");
  bench_info("start", "whole fresh process: spawn to exit", 0, "ms", med(o->wall[W_CUJIT], reps),
             med(o->wall[W_MODULE], reps), "same program both sides");
}

static void bench_warm(void) {
  char cache[600], cubin[700];
  start_sample s;
  static start_runs o;
  int reps = bench_reps(15, 3), w;
  memset(&o, 0, sizeof o);
  if (bench_mkdir("start-cache", cache, sizeof cache) != 0) return;
  snprintf(cubin, sizeof cubin, "%s/warm.cubin", bench_cfg.scratch);
  if (bench_write_cubin(bench_src_small, "warm.cu", cubin) != 0) {
    bench_skip("start", "warm start", "the baseline's CUBIN could not be compiled");
    return;
  }
  /* The first cujit child compiles and fills the cache; one more of each way warms up. */
  if (run_warm("cujit", cubin, cache, &s) != 0) goto failed;
  for (w = 0; w < N_WAYS; w++)
    if (run_warm(way_names[w], cubin, cache, &s) != 0) goto failed;
  if (collect(reps, cubin, cache, &o) != 0) goto failed;
  report_warm(&o, reps);
  report_steps(cache, reps, o.part[W_MODULE]);
  return;
failed:
  bench_skip("start", "warm start", "a child process failed (see the log)");
}

/* ---- cold ---- */

typedef struct cold_runs {
  double cj[REPS_MAX], bare[REPS_MAX], cj_part[3][REPS_MAX], bare_part[4][REPS_MAX];
  double ctx[REPS_MAX], longer[REPS_MAX];
  int bad_compiles;
} cold_runs;

/* One cold child of each side, with a new empty cache each. */
static int cold_round(int r, int cujit_first, cold_runs *o) {
  char cache[600], out[256], *args[] = {NULL, NULL, NULL};
  double v[6];
  int k, i;
  for (k = 0; k < 2; k++) {
    int cujit = (k == 0) == (cujit_first != 0);
    if (bench_mkdir("cold-cache", cache, sizeof cache) != 0) return -1;
    args[0] = cujit ? "cold-cujit" : "cold-bare";
    args[1] = cujit ? NULL : bench_cfg.cc_arch;
    if (run_prog(args, cache, out, sizeof out, NULL) != 0) return -1;
    if (sscanf(out, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
      return -1;
    if (cujit) {
      o->cj[r] = v[0];
      for (i = 0; i < 3; i++) o->cj_part[i][r] = v[1 + i];
      o->bad_compiles += v[5] != 1;
    } else {
      o->bare[r] = v[0];
      for (i = 0; i < 4; i++) o->bare_part[i][r] = v[1 + i];
      o->ctx[r] = v[1] + v[2];
      o->longer[r] = o->ctx[r] > v[3] ? o->ctx[r] : v[3];
    }
  }
  return 0;
}

static void report_cold(const cold_runs *o, int reps) {
  double c = med(o->cj, reps), b = med(o->bare, reps), longer = med(o->longer, reps);
  char goal[96];
  snprintf(goal, sizeof goal, "<= 1.1x the longer of context and compile (%.1f ms)", longer);
  bench_check("start", "cold start: first result, new process, empty cache", 0, "ms", c, b,
              1.1 * longer, c <= 1.1 * longer && o->bad_compiles == 0,
              o->bad_compiles ? "cujit did not compile exactly once" : goal);
  bench_info("start", "  part: from_source (compile; context beside it) / NVRTC compile", 0, "ms",
             med(o->cj_part[0], reps), med(o->bare_part[2], reps), "breakdown");
  bench_info("start", "  part: get_function (waits for the context) / cuInit + context", 0, "ms",
             med(o->cj_part[1], reps), med(o->ctx, reps), "breakdown");
  bench_info("start", "  part: first launch + sync / load + launch + sync", 0, "ms",
             med(o->cj_part[2], reps), med(o->bare_part[3], reps), "breakdown");
  bench_info("start", "  bare: cuInit alone (driver start)", 0, "ms", NAN,
             med(o->bare_part[0], reps), "of the context above");
}

static void bench_cold(void) {
  static cold_runs o;
  int reps = bench_reps(11, 2), r;
  memset(&o, 0, sizeof o);
  if (!bench_cfg.cc_arch[0]) {
    bench_skip("start", "cold start", "the device's architecture is not known");
    return;
  }
  for (r = 0; r < reps; r++)
    if (cold_round(r, r % 2 == 0, &o) != 0) {
      bench_skip("start", "cold start", "a child process failed (see the log)");
      return;
    }
  report_cold(&o, reps);
}

void bench_start(void) {
  bench_warm();
  bench_cold();
}

/* compile.c - cold compile: cujit on a cache miss against bare NVRTC with the same source
 * and options, interleaved in one process; and the first compile of a fresh process.
 *
 * Both sides really compile: NVRTC's own cache is off (-no-cache, which cujit passes by
 * default, on both sides) and HOME is a fresh directory; every round appends a distinct
 * comment to the source, so each cujit call is a miss of its own cache (looked up, compiled,
 * stored), which is the cost a user pays on a miss. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct kernel_case {
  const char *label;
  const char *source;
  const char *expr;  /* name expression, or NULL */
  int needs_include; /* cuda_fp16.h lives in the toolkit's include directory */
} kernel_case;

static const kernel_case cases[] = {
    {"small kernel", bench_src_small, NULL, 0},
    {"cuda_fp16.h + template", bench_src_fp16, BENCH_FP16_EXPR, 1},
};

/* One compile's options, for cujit and for bare NVRTC. */
typedef struct compile_args {
  char arch_opt[48];
  char include_opt[600];
  const char *argv[4]; /* what cujit passes to NVRTC, in cujit's order */
  int argc;
  const char *dirs[2];
  const char *exprs[2];
  cujit_options opts;
} compile_args;

static void make_args(const kernel_case *k, int nvrtc_cache, compile_args *a) {
  memset(a, 0, sizeof *a);
  snprintf(a->arch_opt, sizeof a->arch_opt, "-arch=%s", bench_cfg.arch);
  snprintf(a->include_opt, sizeof a->include_opt, "--include-path=%s", bench_cfg.cuda_include);
  a->argv[a->argc++] = a->arch_opt;
  if (k->needs_include) a->argv[a->argc++] = a->include_opt;
  if (!nvrtc_cache) a->argv[a->argc++] = "-no-cache";
  a->dirs[0] = bench_cfg.cuda_include;
  a->exprs[0] = k->expr;
  a->opts.arch = bench_cfg.arch;
  a->opts.include_dirs = k->needs_include ? a->dirs : NULL;
  a->opts.name_expressions = k->expr ? a->exprs : NULL;
}

/* The source with a distinct trailing comment. Caller frees. */
static char *round_source(const kernel_case *k, int round) {
  size_t len = strlen(k->source) + 64;
  char *s = malloc(len);
  if (s) snprintf(s, len, "%s// round %d\n", k->source, round);
  return s;
}

/* cujit's compile; with `nocache`, CUJIT_OPT_NO_CACHE (the cache's share of a miss). */
static double time_cujit(const kernel_case *k, const compile_args *a, int round, int nocache) {
  cujit_module *m = NULL;
  char *src = round_source(k, round);
  cujit_options o = a->opts;
  uint64_t t0;
  cujit_status st;
  if (nocache) o.flags |= CUJIT_OPT_NO_CACHE;
  t0 = bench_now_ns();
  st = cujit_module_from_source(&m, src, "bench.cu", &o);
  uint64_t t1 = bench_now_ns();
  cujit_module_destroy(m);
  free(src);
  if (st != CUJIT_OK) {
    fprintf(stderr, "cujit-bench: cujit_module_from_source: %s\n", cujit_last_error());
    return NAN;
  }
  return (double)(t1 - t0) / 1e6;
}

static double time_nvrtc(const kernel_case *k, const compile_args *a, int round) {
  size_t size;
  char *src = round_source(k, round);
  uint64_t t0 = bench_now_ns();
  void *cubin = bench_nvrtc_cubin(src, "bench.cu", a->argv, a->argc, k->expr, &size);
  uint64_t t1 = bench_now_ns();
  free(src);
  if (!cubin) return NAN;
  free(cubin);
  return (double)(t1 - t0) / 1e6;
}

static uint64_t compiles_so_far(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_cache_get_stats(&s);
  return s.compiles;
}

/* One round of the three ways, in a rotating order. */
static void compile_round(const kernel_case *k, const compile_args *a, int r, int *round,
                          double *cj, double *off, double *nv) {
  int i;
  for (i = 0; i < 3; i++) switch ((i + r) % 3) {
      case 0: cj[r] = time_cujit(k, a, (*round)++, 0); break;
      case 1: off[r] = time_cujit(k, a, (*round)++, 1); break;
      default: nv[r] = time_nvrtc(k, a, (*round)++); break;
    }
}

static void cold_compile(const kernel_case *k, int *round) {
  int reps = bench_reps(15, 3), warm = 2, r;
  double cj[16], off[16], nv[16], junk[16];
  compile_args a;
  uint64_t before;
  char metric[96];
  make_args(k, 0, &a);
  for (r = 0; r < warm; r++) compile_round(k, &a, r, round, junk, junk, junk);
  before = compiles_so_far();
  for (r = 0; r < reps; r++) compile_round(k, &a, r, round, cj, off, nv);
  snprintf(metric, sizeof metric, "cold compile: %s", k->label);
  for (r = 0; r < reps; r++)
    if (isnan(cj[r]) || isnan(off[r]) || isnan(nv[r])) break;
  if (r < reps)
    bench_skip("compile", metric, "a compile failed (see the log)");
  else if (compiles_so_far() - before != 2 * (uint64_t)reps)
    bench_check("compile", metric, 0, "ms", bench_median(cj, (size_t)reps),
                bench_median(nv, (size_t)reps), 1.05 * bench_median(nv, (size_t)reps), 0,
                "<= 1.05x bare NVRTC (cujit did not compile every round)");
  else
    bench_ratio("compile", metric, 0, "ms", bench_median(cj, (size_t)reps),
                bench_median(nv, (size_t)reps), 1.05, "<= 1.05x bare NVRTC");
  snprintf(metric, sizeof metric, "cold compile: %s (cache off)", k->label);
  bench_info("compile", metric, 0, "ms", bench_median(off, (size_t)reps),
             bench_median(nv, (size_t)reps), "CUJIT_OPT_NO_CACHE: the cache's share");
}

/* ---- the first compile of a fresh process ---- */

/* Child: compile `case` once the way `variant` says and print the milliseconds:
 * cujit (its defaults), cujit-nocache (CUJIT_OPT_NO_CACHE), nvrtc (bare, -no-cache like
 * cujit), nvrtc-default (bare, NVRTC's own cache on, as a program that does not know
 * about it compiles). */
int bench_compile_child(int argc, char **argv) {
  const kernel_case *k;
  compile_args a;
  double ms;
  int which;
  if (argc < 3) return 2;
  which = atoi(argv[1]);
  if (which < 0 || which >= (int)(sizeof cases / sizeof cases[0])) return 2;
  k = &cases[which];
  snprintf(bench_cfg.arch, sizeof bench_cfg.arch, "%s", argv[2]);
  bench_cfg.cuda_include = BENCH_CUDA_INCLUDE;
  make_args(k, strcmp(argv[0], "nvrtc-default") == 0, &a);
  if (strncmp(argv[0], "cujit", 5) == 0)
    ms = time_cujit(k, &a, 0, strcmp(argv[0], "cujit-nocache") == 0);
  else
    ms = time_nvrtc(k, &a, 0);
  printf("%.6f\n", ms);
  return isnan(ms) ? 1 : 0;
}

static double first_compile(const char *variant, int which) {
  char home[600], cache[600], env_home[640], env_cache[640], index[16], out[256];
  char *argv[] = {"", "--child", "compile", (char *)variant, index, bench_cfg.arch, NULL};
  char *env[] = {env_home, env_cache, NULL};
  if (bench_mkdir("home", home, sizeof home) != 0 || bench_mkdir("cache", cache, sizeof cache) != 0)
    return NAN;
  snprintf(index, sizeof index, "%d", which);
  snprintf(env_home, sizeof env_home, "HOME=%s", home);
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  if (bench_run_child(argv, env, out, sizeof out) != 0) return NAN;
  return atof(out);
}

static void fresh_process(int which) {
  static const char *const variants[] = {"cujit", "nvrtc", "nvrtc-default", "cujit-nocache"};
  int reps = bench_reps(7, 2), r, v;
  double t[4][7];
  char metric[96];
  for (v = 0; v < 4; v++) first_compile(variants[v], which); /* warm the page cache */
  for (r = 0; r < reps; r++)
    for (v = 0; v < 4; v++) { /* rotate the order every round */
      int i = (v + r) % 4;
      t[i][r] = first_compile(variants[i], which);
      if (isnan(t[i][r])) {
        bench_skip("compile", "first compile in a fresh process", "a child process failed");
        return;
      }
    }
  snprintf(metric, sizeof metric, "first compile of a fresh process: %s", cases[which].label);
  bench_info("compile", metric, 0, "ms", bench_median(t[0], (size_t)reps),
             bench_median(t[1], (size_t)reps), "baseline: bare NVRTC with -no-cache");
  snprintf(metric, sizeof metric, "first compile: %s (vs NVRTC defaults)", cases[which].label);
  bench_info("compile", metric, 0, "ms", bench_median(t[0], (size_t)reps),
             bench_median(t[2], (size_t)reps), "baseline: bare NVRTC with its own cache (empty)");
  snprintf(metric, sizeof metric, "first compile: %s (cache off)", cases[which].label);
  bench_info("compile", metric, 0, "ms", bench_median(t[3], (size_t)reps),
             bench_median(t[1], (size_t)reps), "CUJIT_OPT_NO_CACHE; baseline: bare -no-cache");
}

void bench_compile(void) {
  int round = 0;
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) cold_compile(&cases[i], &round);
  fresh_process(0);
}

/* launch.c - launch overhead with 3 and with 16 arguments (device pointers and scalars),
 * for raw cuLaunchKernel, cujit_launch (CUJIT_LAUNCH, arguments built in the loop as a
 * user writes them), cujit_call (C values of the parameters' types) and a function pointer
 * from cujit_function_bind.
 *
 * The goals are on the time a thread spends issuing launches: 10^5 launches of an empty
 * kernel per form, in batches of 128 whose time is taken from the first call to the
 * return of the last; a synchronisation after each batch, not timed, keeps the launch
 * queue from filling. (Back to back, an empty kernel on the GPU takes about as long as
 * issuing one, so 10^5 launches in a row measure the GPU's pace as much as the CPU's, and
 * their rate moves by +-20% between rounds; those figures are reported too, as
 * information.) Forms and argument counts alternate batch by batch, in a new random order
 * every round; each figure is a median over batches, and what cujit_call and a bound
 * pointer add to cujit_launch is the difference of the medians.
 * A bound pointer finds every argument where the calling convention put it, at every call
 * (on x86-64 Linux these kernels' pointers are entry points of cujit's own, which know
 * where from the bind; elsewhere libffi closures, which classify each argument each time);
 * so that this cost shows, one more row per form gives its cost per argument over the raw
 * launch, from the difference between 16 and 3 arguments.
 * One more raw form, for the record: cuLaunchKernel given a context-independent CUkernel
 * handle (cuLibraryLoadData), the kind of handle cujit launches with. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char launch_src[] =
    "extern \"C\" __global__ void empty3(float *a, float *b, int n) {}\n"
    "extern \"C\" __global__ void empty16(float *p0, float *p1, float *p2, float *p3,\n"
    "    float *p4, float *p5, float *p6, float *p7, int i0, unsigned u1, float f2,\n"
    "    double d3, long long l4, int i5, float f6, double d7) {}\n";

typedef cujit_status (*bound3_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, int);
typedef cujit_status (*bound16_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, CUdeviceptr,
                                   CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr,
                                   int, unsigned, float, double, long long, int, float, double);

enum { RAW, RAW_KERNEL, LAUNCH, CALL, BOUND, N_VARIANTS };
static const char *const variant_names[] = {"raw cuLaunchKernel", "raw with a CUkernel handle",
                                            "cujit_launch", "cujit_call", "bound function pointer"};

typedef struct launch_ctx {
  CUfunction raw3, raw16;
  CUkernel kern3, kern16;
  cujit_function *f3, *f16;
  bound3_fn b3;
  bound16_fn b16;
  CUdeviceptr p[8];
} launch_ctx;

#define D1 CUJIT_DIM3(1)

static int loop3(const launch_ctx *c, int v, long n) {
  CUdeviceptr a = c->p[0], b = c->p[1];
  int k = 7;
  long i;
  for (i = 0; i < n; i++) {
    void *params[] = {&a, &b, &k};
    int bad = 0;
    switch (v) {
      case RAW:
        bad = bench_cu.cuLaunchKernel(c->raw3, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        break;
      case RAW_KERNEL:
        bad =
            bench_cu.cuLaunchKernel((CUfunction)c->kern3, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        break;
      case LAUNCH:
        bad = CUJIT_LAUNCH(c->f3, D1, D1, cujit_ptr(a), cujit_ptr(b), cujit_i32(k));
        break;
      case CALL: bad = cujit_call(c->f3, D1, D1, a, b, k); break;
      default: bad = c->b3(D1, D1, a, b, k); break;
    }
    if (bad) return -1;
  }
  return 0;
}

static int loop16(const launch_ctx *c, int v, long n) {
  CUdeviceptr p0 = c->p[0], p1 = c->p[1], p2 = c->p[2], p3 = c->p[3], p4 = c->p[4], p5 = c->p[5],
              p6 = c->p[6], p7 = c->p[7];
  int i0 = 1, i5 = 5;
  unsigned u1 = 2;
  float f2 = 3.0f, f6 = 6.0f;
  double d3 = 4.0, d7 = 7.0;
  long long l4 = 5;
  long i;
  for (i = 0; i < n; i++) {
    void *params[] = {&p0, &p1, &p2, &p3, &p4, &p5, &p6, &p7,
                      &i0, &u1, &f2, &d3, &l4, &i5, &f6, &d7};
    int bad = 0;
    switch (v) {
      case RAW:
        bad = bench_cu.cuLaunchKernel(c->raw16, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        break;
      case RAW_KERNEL:
        bad =
            bench_cu.cuLaunchKernel((CUfunction)c->kern16, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        break;
      case LAUNCH:
        bad =
            CUJIT_LAUNCH(c->f16, D1, D1, cujit_ptr(p0), cujit_ptr(p1), cujit_ptr(p2), cujit_ptr(p3),
                         cujit_ptr(p4), cujit_ptr(p5), cujit_ptr(p6), cujit_ptr(p7), cujit_i32(i0),
                         cujit_u32(u1), cujit_f32(f2), cujit_f64(d3), cujit_i64(l4), cujit_i32(i5),
                         cujit_f32(f6), cujit_f64(d7));
        break;
      case CALL:
        bad = cujit_call(c->f16, D1, D1, p0, p1, p2, p3, p4, p5, p6, p7, i0, u1, f2, d3, l4, i5, f6,
                         d7);
        break;
      default:
        bad = c->b16(D1, D1, p0, p1, p2, p3, p4, p5, p6, p7, i0, u1, f2, d3, l4, i5, f6, d7);
        break;
    }
    if (bad) return -1;
  }
  return 0;
}

/* Microseconds per launch over n launches; NAN on failure. `batch`: the time of the
 * calls alone, the synchronisation after them untimed; else up to the end of the
 * synchronisation (the rate of launches back to back). */
static double time_loop(const launch_ctx *c, int nargs, int v, long n, int batch) {
  uint64_t t0 = bench_now_ns(), t1;
  int rc = nargs == 3 ? loop3(c, v, n) : loop16(c, v, n);
  t1 = bench_now_ns();
  if (bench_cu.cuCtxSynchronize() != CUDA_SUCCESS || rc != 0) {
    fprintf(stderr, "cujit-bench: %s failed: %s\n", variant_names[v], cujit_last_error());
    return NAN;
  }
  if (!batch) t1 = bench_now_ns();
  return (double)(t1 - t0) / 1e3 / (double)n;
}

static int setup(launch_ctx *c, cujit_module **m, CUmodule *raw, CUlibrary *lib) {
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  size_t size, i;
  void *cubin;
  memset(c, 0, sizeof *c);
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(launch_src, "launch.cu", argv, 2, NULL, &size);
  if (!cubin || bench_cu.cuModuleLoadData(raw, cubin) != CUDA_SUCCESS ||
      bench_cu.cuLibraryLoadData(lib, cubin, NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS)
    return -1;
  free(cubin);
  if (bench_cu.cuModuleGetFunction(&c->raw3, *raw, "empty3") != CUDA_SUCCESS ||
      bench_cu.cuModuleGetFunction(&c->raw16, *raw, "empty16") != CUDA_SUCCESS ||
      bench_cu.cuLibraryGetKernel(&c->kern3, *lib, "empty3") != CUDA_SUCCESS ||
      bench_cu.cuLibraryGetKernel(&c->kern16, *lib, "empty16") != CUDA_SUCCESS)
    return -1;
  for (i = 0; i < 8; i++)
    if (bench_cu.cuMemAlloc(&c->p[i], 256) != CUDA_SUCCESS) return -1;
  if (cujit_module_from_source(m, launch_src, "launch.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(*m, "empty3", &c->f3) != CUJIT_OK ||
      cujit_module_get_function(*m, "empty16", &c->f16) != CUJIT_OK)
    return -1;
  return 0;
}

/* Binding needs the signature layer; without it the bound variant is skipped. */
static int bind(launch_ctx *c) {
  void *p3 = NULL, *p16 = NULL;
  if (cujit_function_bind(c->f3, NULL, &p3) != CUJIT_OK ||
      cujit_function_bind(c->f16, NULL, &p16) != CUJIT_OK)
    return -1;
  c->b3 = (bound3_fn)p3;
  c->b16 = (bound16_fn)p16;
  return 0;
}

enum { BATCH = 128, MAX_ROUNDS = 800, STREAM_ROUNDS = 7 };

/* Per-launch times of each form: [3 or 16 args][form][round]. */
typedef struct launch_times {
  int rounds;
  double t[2][N_VARIANTS][MAX_ROUNDS];
  int ok[2][N_VARIANTS];
} launch_times;

/* Launch rates move when the scheduler moves the thread between cores: the whole group
 * runs on the core it starts on, and the caller's mask is given back after. */
static int pin(cpu_set_t *saved) {
  cpu_set_t one;
  int cpu = sched_getcpu();
  if (cpu < 0 || sched_getaffinity(0, sizeof *saved, saved) != 0) return 0;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

/* The spread over rounds, for the log: what a median hides. */
static void log_spread(const launch_times *lt, const char *how) {
  int a, v;
  for (a = 0; a < 2; a++)
    for (v = 0; v < N_VARIANTS; v++)
      if (lt->ok[a][v])
        fprintf(stderr, "  %s, %2d args, %-26s min %.3f  max %.3f us over %d rounds\n", how,
                a ? 16 : 3, variant_names[v], bench_min(lt->t[a][v], (size_t)lt->rounds),
                bench_max(lt->t[a][v], (size_t)lt->rounds), lt->rounds);
}

/* A fixed sequence of pseudo-random numbers (xorshift64), for the order of each round. */
static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* Every form and argument count, round after round, in a new random order each round (a
 * fixed order would always run one form right after another, and the host's pace drifts
 * within a round): batches of `n` launches, or (`batch` 0) n launches back to back with the
 * synchronisation timed. */
static void measure(const launch_ctx *c, launch_times *lt, int rounds, long n, int batch) {
  int order[2 * N_VARIANTS], r, a, k, v, j, tmp;
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  lt->rounds = rounds;
  for (a = 0; a < 2; a++)
    for (v = 0; v < N_VARIANTS; v++)
      lt->ok[a][v] = (v != BOUND || c->b3) && !isnan(time_loop(c, a ? 16 : 3, v, n, batch));
  for (k = 0; k < 2 * N_VARIANTS; k++) order[k] = k;
  for (r = 0; r < rounds; r++) {
    for (k = 2 * N_VARIANTS - 1; k > 0; k--) { /* Fisher-Yates */
      j = (int)(next_random(&rng) % (uint64_t)(k + 1));
      tmp = order[k], order[k] = order[j], order[j] = tmp;
    }
    for (k = 0; k < 2 * N_VARIANTS; k++) {
      a = order[k] / N_VARIANTS;
      v = order[k] % N_VARIANTS;
      if (!lt->ok[a][v]) continue;
      lt->t[a][v][r] = time_loop(c, a ? 16 : 3, v, n, batch);
      if (isnan(lt->t[a][v][r])) lt->ok[a][v] = 0;
    }
  }
}

static double median_of(const launch_times *lt, int a, int v) {
  return lt->ok[a][v] ? bench_median((double *)lt->t[a][v], (size_t)lt->rounds) : NAN;
}

/* The goals, on the batched issue times. */
static void report(launch_times *lt) {
  int a, v;
  char metric[96], goal[96];
  for (a = 0; a < 2; a++) {
    int nargs = a ? 16 : 3;
    double raw = median_of(lt, a, RAW), launch = median_of(lt, a, LAUNCH), extra;
    snprintf(metric, sizeof metric, "launch %d args: %s", nargs, variant_names[RAW_KERNEL]);
    if (lt->ok[a][RAW_KERNEL] && lt->ok[a][RAW])
      bench_info("launch", metric, nargs, "us", median_of(lt, a, RAW_KERNEL), raw,
                 "baseline: raw with a CUfunction");
    snprintf(metric, sizeof metric, "launch %d args: cujit_launch", nargs);
    if (!lt->ok[a][LAUNCH] || !lt->ok[a][RAW])
      bench_skip("launch", metric, "cujit_launch or the raw launch failed (see the log)");
    else
      /* regression guards: runs on H100 and H200 read within the noise band stated */
      bench_ratio("launch", metric, nargs, "us", launch, raw, nargs == 3 ? 1.03 : 1.05,
                  nargs == 3 ? "<= 1.03x raw cuLaunchKernel (guard; runs read 1.029-1.038x)"
                             : "<= 1.05x raw cuLaunchKernel (guard; runs read 1.043-1.053x)");
    for (v = CALL; v <= BOUND; v++) {
      snprintf(metric, sizeof metric, "launch %d args: %s", nargs, variant_names[v]);
      if (!lt->ok[a][v] || isnan(launch)) {
        bench_skip("launch", metric, "not available in this build (see the log)");
        continue;
      }
      extra = median_of(lt, a, v) - launch;
      snprintf(goal, sizeof goal, "<= cujit_launch + 0.1 us (adds %+.3f us; raw: %.3g us)", extra,
               raw);
      bench_check("launch", metric, nargs, "us", median_of(lt, a, v), launch, launch + 0.1,
                  extra <= 0.1, goal);
    }
  }
}

/* Each form's cost per argument over the raw launch: what it adds at 16 arguments less
 * what it adds at 3, over the 13 arguments between, in ns; the raw launch's own cost of
 * those arguments is the baseline. For a bound pointer this is where its finding of the
 * arguments shows. */
static void report_per_arg(const launch_times *lt) {
  double raw3 = median_of(lt, 0, RAW), raw16 = median_of(lt, 1, RAW), per;
  char metric[96];
  int v;
  for (v = LAUNCH; v <= BOUND; v++) {
    snprintf(metric, sizeof metric, "launch, per argument: %s", variant_names[v]);
    if (!lt->ok[0][v] || !lt->ok[1][v] || !lt->ok[0][RAW] || !lt->ok[1][RAW]) {
      bench_skip("launch", metric, "a launch at 3 or 16 arguments failed (see the log)");
      continue;
    }
    per = ((median_of(lt, 1, v) - raw16) - (median_of(lt, 0, v) - raw3)) * 1e3 / 13;
    bench_info("launch", metric, 0, "ns", per, (raw16 - raw3) * 1e3 / 13,
               "added over raw, (16 args - 3 args) / 13; baseline: raw's own");
  }
}

/* The back-to-back rates, as information. */
static void report_stream(const launch_times *lt) {
  int a, v;
  char metric[96];
  for (a = 0; a < 2; a++)
    for (v = 0; v < N_VARIANTS; v++) {
      if (v == RAW || !lt->ok[a][v] || !lt->ok[a][RAW]) continue;
      snprintf(metric, sizeof metric, "launch %d args back to back: %s", a ? 16 : 3,
               variant_names[v]);
      bench_info("launch", metric, a ? 16 : 3, "us", median_of(lt, a, v), median_of(lt, a, RAW),
                 "10^5 in a row, synchronised; GPU-paced");
    }
}

void bench_launch(void) {
  static launch_times issue, stream;
  launch_ctx c;
  cujit_module *m = NULL;
  CUmodule raw = NULL;
  CUlibrary lib = NULL;
  size_t i;
  memset(&c, 0, sizeof c);
  if (bench_driver_load() != 0 || bench_context() != 0 || setup(&c, &m, &raw, &lib) != 0) {
    bench_skip("launch", "launch overhead",
               cujit_last_error()[0] ? cujit_last_error() : "setup failed (see the log)");
  } else {
    cpu_set_t saved;
    int pinned = pin(&saved);
    if (bind(&c) != 0) fprintf(stderr, "cujit-bench: bind: %s\n", cujit_last_error());
    measure(&c, &issue, bench_reps(100000 / BATCH, 40), BATCH, 1);
    measure(&c, &stream, bench_reps(STREAM_ROUNDS, 2), bench_reps(100000, 10000), 0);
    if (pinned) sched_setaffinity(0, sizeof saved, &saved);
    log_spread(&issue, "batches");
    log_spread(&stream, "back to back");
    report(&issue);
    report_per_arg(&issue);
    report_stream(&stream);
  }
  cujit_module_destroy(m);
  for (i = 0; i < 8; i++)
    if (c.p[i]) bench_cu.cuMemFree(c.p[i]);
  if (raw) bench_cu.cuModuleUnload(raw);
  if (lib) bench_cu.cuLibraryUnload(lib);
}

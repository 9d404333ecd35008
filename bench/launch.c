/* launch.c - launch overhead: the issue rate of 10^5 launches of an empty kernel with 3
 * and with 16 arguments (device pointers and scalars), as wall time per launch over the
 * loop (launches are asynchronous; one synchronisation at the end). Raw cuLaunchKernel
 * against cujit_launch (CUJIT_LAUNCH, arguments built in the loop as a user writes them),
 * cujit_call (varargs) and a function pointer from cujit_function_bind. Several rounds,
 * the variants interleaved in a rotating order, median per variant; what cujit_call and a
 * bound pointer add to cujit_launch is the median of their differences within a round.
 * One more raw variant, for the record: cuLaunchKernel given a context-independent
 * CUkernel handle (cuLibraryLoadData), the kind of handle cujit launches with. */
#include <math.h>
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
typedef cujit_status (*bound16_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr,
                                   CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr,
                                   CUdeviceptr, CUdeviceptr, int, unsigned, float, double,
                                   long long, int, float, double);

enum { RAW, RAW_KERNEL, LAUNCH, CALL, BOUND, N_VARIANTS };
static const char *const variant_names[] = {"raw cuLaunchKernel", "raw with a CUkernel handle",
                                            "cujit_launch", "cujit_call",
                                            "bound function pointer"};

typedef struct launch_ctx {
  CUfunction raw3, raw16;
  CUkernel kern3, kern16;
  cujit_function *f3, *f16;
  bound3_fn b3;
  bound16_fn b16;
  CUdeviceptr p[8];
} launch_ctx;

#define D1 cujit_dim3(1)

static int loop3(const launch_ctx *c, int v, long n) {
  CUdeviceptr a = c->p[0], b = c->p[1];
  int k = 7;
  long i;
  for (i = 0; i < n; i++) {
    void *params[] = {&a, &b, &k};
    int bad = 0;
    switch (v) {
      case RAW: bad = bench_cu.cuLaunchKernel(c->raw3, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL); break;
      case RAW_KERNEL:
        bad = bench_cu.cuLaunchKernel((CUfunction)c->kern3, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
        break;
      case LAUNCH: bad = CUJIT_LAUNCH(c->f3, D1, D1, cujit_ptr(a), cujit_ptr(b), cujit_i32(k)); break;
      case CALL: bad = cujit_call(c->f3, D1, D1, a, b, k); break;
      default: bad = c->b3(D1, D1, a, b, k); break;
    }
    if (bad) return -1;
  }
  return 0;
}

static int loop16(const launch_ctx *c, int v, long n) {
  CUdeviceptr p0 = c->p[0], p1 = c->p[1], p2 = c->p[2], p3 = c->p[3], p4 = c->p[4],
              p5 = c->p[5], p6 = c->p[6], p7 = c->p[7];
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
        bad = bench_cu.cuLaunchKernel((CUfunction)c->kern16, 1, 1, 1, 1, 1, 1, 0, NULL, params,
                                      NULL);
        break;
      case LAUNCH:
        bad = CUJIT_LAUNCH(c->f16, D1, D1, cujit_ptr(p0), cujit_ptr(p1), cujit_ptr(p2),
                           cujit_ptr(p3), cujit_ptr(p4), cujit_ptr(p5), cujit_ptr(p6),
                           cujit_ptr(p7), cujit_i32(i0), cujit_u32(u1), cujit_f32(f2),
                           cujit_f64(d3), cujit_i64(l4), cujit_i32(i5), cujit_f32(f6),
                           cujit_f64(d7));
        break;
      case CALL:
        bad = cujit_call(c->f16, D1, D1, p0, p1, p2, p3, p4, p5, p6, p7, i0, u1, (double)f2, d3,
                         l4, i5, (double)f6, d7);
        break;
      default:
        bad = c->b16(D1, D1, p0, p1, p2, p3, p4, p5, p6, p7, i0, u1, f2, d3, l4, i5, f6, d7);
        break;
    }
    if (bad) return -1;
  }
  return 0;
}

/* Microseconds per launch over n launches, synchronised at the end; NAN on failure. */
static double time_loop(const launch_ctx *c, int nargs, int v, long n) {
  uint64_t t0 = bench_now_ns();
  int rc = nargs == 3 ? loop3(c, v, n) : loop16(c, v, n);
  if (bench_cu.cuCtxSynchronize() != CUDA_SUCCESS || rc != 0) {
    fprintf(stderr, "cujit-bench: %s failed: %s\n", variant_names[v], cujit_last_error());
    return NAN;
  }
  return (double)(bench_now_ns() - t0) / 1e3 / (double)n;
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

typedef struct launch_times {
  double t[2][N_VARIANTS][16]; /* [3 or 16 args][variant][round] */
  int ok[2][N_VARIANTS];
} launch_times;

static void measure(const launch_ctx *c, launch_times *lt) {
  long n = bench_reps(100000, 10000);
  int reps = bench_reps(15, 2), r, a, k, v;
  for (a = 0; a < 2; a++)
    for (v = 0; v < N_VARIANTS; v++)
      lt->ok[a][v] = (v != BOUND || c->b3) && !isnan(time_loop(c, a ? 16 : 3, v, n / 10));
  for (r = 0; r < reps; r++)
    for (a = 0; a < 2; a++)
      for (k = 0; k < N_VARIANTS; k++) {
        v = (k + r) % N_VARIANTS;
        if (!lt->ok[a][v]) continue;
        lt->t[a][v][r] = time_loop(c, a ? 16 : 3, v, n);
        if (isnan(lt->t[a][v][r])) lt->ok[a][v] = 0;
      }
}

static void report(launch_times *lt, int reps) {
  int a, v;
  char metric[96], goal[96];
  for (a = 0; a < 2; a++) {
    int nargs = a ? 16 : 3;
    double raw = lt->ok[a][RAW] ? bench_median(lt->t[a][RAW], (size_t)reps) : NAN;
    double launch = lt->ok[a][LAUNCH] ? bench_median(lt->t[a][LAUNCH], (size_t)reps) : NAN;
    snprintf(metric, sizeof metric, "launch %d args: %s", nargs, variant_names[RAW_KERNEL]);
    if (lt->ok[a][RAW_KERNEL] && lt->ok[a][RAW])
      bench_info("launch", metric, nargs, "us", bench_median(lt->t[a][RAW_KERNEL], (size_t)reps),
                 raw, "baseline: raw with a CUfunction");
    snprintf(metric, sizeof metric, "launch %d args: cujit_launch", nargs);
    if (!lt->ok[a][LAUNCH] || !lt->ok[a][RAW])
      bench_skip("launch", metric, "cujit_launch or the raw launch failed (see the log)");
    else
      bench_ratio("launch", metric, nargs, "us", launch, raw, 1.05, "<= 1.05x raw cuLaunchKernel");
    for (v = CALL; v <= BOUND; v++) {
      double diff[16], extra;
      int r;
      snprintf(metric, sizeof metric, "launch %d args: %s", nargs, variant_names[v]);
      if (!lt->ok[a][v] || isnan(launch)) {
        bench_skip("launch", metric, "not available in this build (see the log)");
        continue;
      }
      /* what the form adds, as the median of its difference to cujit_launch in the same
       * round: rounds run minutes apart on a host whose launch rate drifts */
      for (r = 0; r < reps; r++) diff[r] = lt->t[a][v][r] - lt->t[a][LAUNCH][r];
      extra = bench_median(diff, (size_t)reps);
      snprintf(goal, sizeof goal, "<= cujit_launch + 0.1 us (adds %+.3f us; raw: %.3g us)", extra,
               raw);
      bench_check("launch", metric, nargs, "us", bench_median(lt->t[a][v], (size_t)reps), launch,
                  launch + 0.1, extra <= 0.1, goal);
    }
  }
}

void bench_launch(void) {
  launch_ctx c;
  launch_times lt;
  cujit_module *m = NULL;
  CUmodule raw = NULL;
  CUlibrary lib = NULL;
  size_t i;
  memset(&lt, 0, sizeof lt);
  memset(&c, 0, sizeof c);
  if (bench_driver_load() != 0 || bench_context() != 0 || setup(&c, &m, &raw, &lib) != 0) {
    bench_skip("launch", "launch overhead", cujit_last_error()[0] ? cujit_last_error()
                                                                   : "setup failed (see the log)");
  } else {
    if (bind(&c) != 0) fprintf(stderr, "cujit-bench: bind: %s\n", cujit_last_error());
    measure(&c, &lt);
    report(&lt, bench_reps(15, 2));
  }
  cujit_module_destroy(m);
  for (i = 0; i < 8; i++)
    if (c.p[i]) bench_cu.cuMemFree(c.p[i]);
  if (raw) bench_cu.cuModuleUnload(raw);
  if (lib) bench_cu.cuLibraryUnload(lib);
}

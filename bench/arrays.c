/* arrays.c - the array layer against the bandwidth floor and the bare driver, on 64 Mi
 * floats: a device-to-device copy of the same bytes is the floor (bytes touched / time);
 * x + y with a new output every call, sqrt(fabs(x)) fused, the elementwise generator's
 * lin_comb, the reduction generator's dot and max; seed 004 host -> sin(2x + 1) -> host on 4000 x 4000 floats; and the host cost
 * of one small operation (1 Ki floats, output from the pool) against a bare
 * cuLaunchKernel of the same work. Every timing is a median over rounds; each round
 * queues `per` operations and waits once, so launch latency is amortised as a user's
 * loop amortises it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define BIG ((int64_t)64 << 20) /* floats */

static double gbps(double bytes, double ns) { return bytes / ns; }

/* Median ns per operation of `op` over rounds of `per` operations. */
static double time_op(void (*op)(void *), void *ctx, int per, int rounds) {
  double v[64];
  int r, i;
  if (rounds > 64) rounds = 64;
  op(ctx); /* warm: compile, first allocation */
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  for (r = 0; r < rounds; r++) {
    uint64_t t0 = bench_now_ns();
    for (i = 0; i < per; i++) op(ctx);
    bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
    v[r] = (double)(bench_now_ns() - t0) / per;
  }
  return bench_median(v, (size_t)rounds);
}

typedef struct big {
  cujit_array *x, *y, *z, *out, *scalar;
  CUdeviceptr src, dst;
  cujit_elementwise *lin_comb;
  cujit_reduction *dot;
  float a, b;
} big;

static void copy_floor(void *p) {
  big *c = p;
  bench_cu_check(bench_cu.cuMemcpyDtoDAsync(c->dst, c->src, (size_t)BIG * 4, NULL), "copy");
}

static void add_new_output(void *p) {
  big *c = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_binary(CUJIT_ADD, c->x, c->y, &r), "x + y");
  cujit_array_destroy(r);
}

static void sqrt_fabs(void *p) {
  big *c = p;
  bench_check_ok(cujit_array_map(&c->out, "sqrt(fabs(x))", 1, (const char *[]){"x"},
                                 (const cujit_array *[]){c->x}), "sqrt(fabs(x))");
}

static void lin_comb(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_ELEMENTWISE(c->lin_comb, &c->a, c->x, &c->b, c->y, c->z), "lin_comb");
}

static void dot_generator(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_REDUCTION(c->dot, &c->scalar, c->x, c->y), "dot");
}

static void max_reduce(void *p) {
  big *c = p;
  bench_check_ok(cujit_array_reduce(CUJIT_MAX, c->x, &c->scalar), "max");
}

static void bandwidth(const char *metric, void (*op)(void *), big *c, double bytes,
                      double floor_gbps, double share) {
  double ns = time_op(op, c, 10, bench_reps(15, 3)), got = gbps(bytes, ns);
  char goal[96];
  snprintf(goal, sizeof goal, ">= %.0f%% of the copy's bandwidth (%.0f GB/s)", share * 100,
           floor_gbps);
  bench_check("arrays", metric, bytes, "GB/s", got, floor_gbps, NAN, got >= share * floor_gbps,
              goal);
}

static int setup_big(big *c) {
  int64_t n = BIG;
  float v = 1.5f;
  memset(c, 0, sizeof *c);
  c->a = 5;
  c->b = 6;
  return cujit_array_full(&c->x, CUJIT_TYPE_F32, 1, &n, &v) != CUJIT_OK ||
         cujit_array_full(&c->y, CUJIT_TYPE_F32, 1, &n, &v) != CUJIT_OK ||
         cujit_array_empty(&c->z, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK ||
         bench_cu.cuMemAlloc(&c->src, (size_t)n * 4) != CUDA_SUCCESS ||
         bench_cu.cuMemAlloc(&c->dst, (size_t)n * 4) != CUDA_SUCCESS ||
         cujit_elementwise_create(&c->lin_comb, "float a, float *x, float b, float *y, float *z",
                                  "z[i] = a*x[i] + b*y[i]", NULL) != CUJIT_OK ||
         cujit_reduction_create(&c->dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                "float *x, float *y", NULL) != CUJIT_OK;
}

static void free_big(big *c) {
  cujit_array_destroy(c->x);
  cujit_array_destroy(c->y);
  cujit_array_destroy(c->z);
  cujit_array_destroy(c->out);
  cujit_array_destroy(c->scalar);
  cujit_elementwise_destroy(c->lin_comb);
  cujit_reduction_destroy(c->dot);
  if (c->src) bench_cu.cuMemFree(c->src);
  if (c->dst) bench_cu.cuMemFree(c->dst);
}

static void big_ops(void) {
  big c;
  double copy_ns, floor_gbps, fb = (double)BIG * 4;
  if (setup_big(&c) != 0) {
    bench_skip("arrays", "64 Mi float operations", cujit_last_error());
    free_big(&c);
    return;
  }
  copy_ns = time_op(copy_floor, &c, 10, bench_reps(15, 3));
  floor_gbps = gbps(2 * fb, copy_ns);
  bench_info("arrays", "device-to-device copy (the floor)", 2 * fb, "GB/s", floor_gbps, NAN,
             "bytes read and written / time");
  bandwidth("x + y, new output each call", add_new_output, &c, 3 * fb, floor_gbps, 0.90);
  bandwidth("sqrt(fabs(x)), one fused kernel", sqrt_fabs, &c, 2 * fb, floor_gbps, 0.90);
  bandwidth("elementwise lin_comb", lin_comb, &c, 3 * fb, floor_gbps, 0.93);
  bandwidth("reduction dot (generator)", dot_generator, &c, 2 * fb, floor_gbps, 0.90);
  bandwidth("max", max_reduce, &c, fb, floor_gbps, 0.90);
  free_big(&c);
}

/* Seed 004: 4000 x 4000 floats from the host, sin(2x + 1), back to the host. */
static void seed_004(void) {
  int64_t shape[] = {4000, 4000}, n = 4000 * 4000, i;
  float *h = malloc((size_t)n * 4), *back = malloc((size_t)n * 4);
  double v[32];
  int r, rounds = bench_reps(15, 3);
  for (i = 0; i < n; i++) h[i] = (float)(i % 1000) / 1000.0f;
  for (r = -1; r < rounds; r++) { /* round -1 warms up */
    cujit_array *x = NULL, *y = NULL;
    uint64_t t0 = bench_now_ns();
    bench_check_ok(cujit_array_from_host(&x, CUJIT_TYPE_F32, 2, shape, h), "to_gpu");
    bench_check_ok(cujit_array_map(&y, "sin(2*x + 1)", 1, (const char *[]){"x"},
                                   (const cujit_array *[]){x}), "sin(2x + 1)");
    bench_check_ok(cujit_array_get(y, back, (size_t)n * 4), "get");
    if (r >= 0) v[r] = (double)(bench_now_ns() - t0) / 1e6;
    cujit_array_destroy(x);
    cujit_array_destroy(y);
  }
  bench_check("arrays", "seed 004: host -> sin(2x + 1) -> host, 4000^2 floats", (double)n * 4,
              "ms", bench_median(v, (size_t)rounds), NAN, 8, bench_median(v, (size_t)rounds) <= 8,
              "<= 8 ms (PyCUDA: 32.3 ms)");
  free(h);
  free(back);
}

/* ---- the host cost of one small operation ---- */

static const char small_add_src[] =
    "extern \"C\" __global__ void add(const float *a, const float *b, float *c, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

typedef struct small {
  cujit_array *a, *b;
  CUfunction raw;
  CUdeviceptr pa, pb, pc;
  long long n;
} small;

static void small_cujit(void *p) {
  small *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_binary(CUJIT_ADD, s->a, s->b, &r), "a + b");
  cujit_array_destroy(r);
}

static void small_raw(void *p) {
  small *s = p;
  void *args[] = {&s->pa, &s->pb, &s->pc, &s->n};
  bench_cu_check(bench_cu.cuLaunchKernel(s->raw, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                 "cuLaunchKernel");
}

static void small_op(void) {
  small s;
  CUmodule mod = NULL;
  size_t size = 0;
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  void *cubin;
  int64_t n = 1024;
  double ours, bare;
  memset(&s, 0, sizeof s);
  s.n = n;
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(small_add_src, "add.cu", argv, 2, NULL, &size);
  if (!cubin || bench_cu.cuModuleLoadData(&mod, cubin) != CUDA_SUCCESS ||
      bench_cu.cuModuleGetFunction(&s.raw, mod, "add") != CUDA_SUCCESS ||
      cujit_array_zeros(&s.a, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK ||
      cujit_array_zeros(&s.b, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK) {
    bench_skip("arrays", "one small operation", "setup failed");
    free(cubin);
    return;
  }
  s.pa = cujit_array_data(s.a);
  s.pb = cujit_array_data(s.b);
  bench_cu_check(bench_cu.cuMemAlloc(&s.pc, (size_t)n * 4), "cuMemAlloc");
  ours = time_op(small_cujit, &s, 1000, bench_reps(25, 3));
  bare = time_op(small_raw, &s, 1000, bench_reps(25, 3));
  bench_ratio("arrays", "a + b on 1 Ki floats, output from the pool", 1024, "us", ours / 1e3,
              bare / 1e3, 1.5, "<= 1.5x a bare cuLaunchKernel of the same add");
  bench_cu.cuMemFree(s.pc);
  bench_cu.cuModuleUnload(mod);
  cujit_array_destroy(s.a);
  cujit_array_destroy(s.b);
  free(cubin);
}

void bench_arrays(void) {
  if (bench_driver_load() != 0 || bench_context() != 0) {
    bench_skip("arrays", "array operations", "no usable GPU");
    return;
  }
  big_ops();
  seed_004();
  small_op();
}

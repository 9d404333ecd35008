/* callcost.c - cujit-bench-callcost: each launch form of the launch group (raw
 * cuLaunchKernel, cujit_launch, cujit_call, a bound function pointer; 3 and 16 arguments)
 * called N times in a function of its own, run_<form><args>, so that callgrind counts the
 * instructions one call of each costs on the CPU. Run it on the driver that does nothing:
 *
 *   CUJIT_LIBCUDA=$PWD/build/lib/libcujit-fakecuda.so valgrind --tool=callgrind \
 *       --toggle-collect='run_*' build/bin/cujit-bench-callcost
 *   callgrind_annotate --inclusive=yes callgrind.out.* | grep run_
 *
 * Each function runs twice, N = 1000 calls each time, so a form's count over 2000 is its
 * cost per call. Not a timing: instruction counts repeat exactly from run to run. */
#include <stdio.h>
#include <stdlib.h>

#include "cujit.h"

static const char src[] =
    "extern \"C\" __global__ void empty3(float *a, float *b, int n) {}\n"
    "extern \"C\" __global__ void empty16(float *p0, float *p1, float *p2, float *p3,\n"
    "    float *p4, float *p5, float *p6, float *p7, int i0, unsigned u1, float f2,\n"
    "    double d3, long long l4, int i5, float f6, double d7) {}\n";

typedef cujit_status (*bound3_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, int);
typedef cujit_status (*bound16_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, CUdeviceptr,
                                   CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr,
                                   int, unsigned, float, double, long long, int, float, double);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

enum { N = 1000 };
#define D1 CUJIT_DIM3(1)

static launch_fn raw_launch;
static CUdeviceptr p[8];
static cujit_function *f3, *f16;
static CUfunction r3, r16;
static bound3_fn b3;
static bound16_fn b16;

static void failed(const char *what) {
  fprintf(stderr, "cujit-bench-callcost: %s failed: %s\n", what, cujit_last_error());
  exit(1);
}

static __attribute__((noinline)) void run_raw3(void) {
  CUdeviceptr a = p[0], b = p[1];
  int k = 7, i;
  for (i = 0; i < N; i++) {
    void *params[] = {&a, &b, &k};
    if (raw_launch(r3, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL)) failed("cuLaunchKernel");
  }
}

static __attribute__((noinline)) void run_launch3(void) {
  int i;
  for (i = 0; i < N; i++)
    if (CUJIT_LAUNCH(f3, D1, D1, cujit_ptr(p[0]), cujit_ptr(p[1]), cujit_i32(7)))
      failed("cujit_launch");
}

static __attribute__((noinline)) void run_call3(void) {
  int i;
  for (i = 0; i < N; i++)
    if (cujit_call(f3, D1, D1, p[0], p[1], 7)) failed("cujit_call");
}

static __attribute__((noinline)) void run_bound3(void) {
  int i;
  for (i = 0; i < N; i++)
    if (b3(D1, D1, p[0], p[1], 7)) failed("a bound call");
}

static __attribute__((noinline)) void run_raw16(void) {
  CUdeviceptr p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3], p4 = p[4], p5 = p[5], p6 = p[6],
              p7 = p[7];
  int i0 = 1, i5 = 5, i;
  unsigned u1 = 2;
  float f2 = 3, f6 = 6;
  double d3 = 4, d7 = 7;
  long long l4 = 5;
  for (i = 0; i < N; i++) {
    void *params[] = {&p0, &p1, &p2, &p3, &p4, &p5, &p6, &p7,
                      &i0, &u1, &f2, &d3, &l4, &i5, &f6, &d7};
    if (raw_launch(r16, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL)) failed("cuLaunchKernel");
  }
}

static __attribute__((noinline)) void run_launch16(void) {
  int i;
  for (i = 0; i < N; i++)
    if (CUJIT_LAUNCH(f16, D1, D1, cujit_ptr(p[0]), cujit_ptr(p[1]), cujit_ptr(p[2]),
                     cujit_ptr(p[3]), cujit_ptr(p[4]), cujit_ptr(p[5]), cujit_ptr(p[6]),
                     cujit_ptr(p[7]), cujit_i32(1), cujit_u32(2), cujit_f32(3), cujit_f64(4),
                     cujit_i64(5), cujit_i32(5), cujit_f32(6), cujit_f64(7)))
      failed("cujit_launch");
}

static __attribute__((noinline)) void run_call16(void) {
  int i;
  for (i = 0; i < N; i++)
    if (cujit_call(f16, D1, D1, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], 1, 2u, 3.0, 4.0,
                   5ll, 5, 6.0, 7.0))
      failed("cujit_call");
}

static __attribute__((noinline)) void run_bound16(void) {
  int i;
  for (i = 0; i < N; i++)
    if (b16(D1, D1, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], 1, 2u, 3.0f, 4.0, 5ll, 5, 6.0f,
            7.0))
      failed("a bound call");
}

/* The driver's entry point `name`, through cujit (the benchmark links no libcuda). */
static void *driver(const char *name) {
  void *fn = NULL;
  if (cujit_driver_get_symbol(name, &fn) != CUJIT_OK) failed(name);
  return fn;
}

int main(void) {
  CUresult (*device_get)(CUdevice *, int) = driver("cuDeviceGet");
  CUresult (*retain)(CUcontext *, CUdevice) = driver("cuDevicePrimaryCtxRetain");
  CUresult (*set_current)(CUcontext) = driver("cuCtxSetCurrent");
  CUresult (*mem_alloc)(CUdeviceptr *, size_t) = driver("cuMemAlloc");
  CUresult (*load)(CUmodule *, const void *) = driver("cuModuleLoadData");
  CUresult (*get_function)(CUfunction *, CUmodule, const char *) = driver("cuModuleGetFunction");
  void (*const runs[])(void) = {run_raw3,  run_launch3,  run_call3,  run_bound3,
                                run_raw16, run_launch16, run_call16, run_bound16};
  cujit_module *m = NULL;
  const void *cubin;
  size_t size, i;
  CUmodule raw = NULL;
  CUdevice dev;
  CUcontext ctx;
  void *v3 = NULL, *v16 = NULL;
  int r;
  raw_launch = (launch_fn)driver("cuLaunchKernel");
  if (device_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx)) failed("the context");
  for (i = 0; i < 8; i++)
    if (mem_alloc(&p[i], 256)) failed("cuMemAlloc");
  if (cujit_module_from_source(&m, src, "callcost.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "empty3", &f3) != CUJIT_OK ||
      cujit_module_get_function(m, "empty16", &f16) != CUJIT_OK ||
      cujit_function_bind(f3, NULL, &v3) != CUJIT_OK ||
      cujit_function_bind(f16, NULL, &v16) != CUJIT_OK)
    failed("compiling and binding");
  b3 = (bound3_fn)v3;
  b16 = (bound16_fn)v16;
  if (!(cubin = cujit_module_cubin(m, &size)) || load(&raw, cubin) ||
      get_function(&r3, raw, "empty3") || get_function(&r16, raw, "empty16"))
    failed("the raw module");
  for (r = 0; r < 2; r++)
    for (i = 0; i < sizeof runs / sizeof *runs; i++) runs[i]();
  cujit_module_destroy(m);
  printf("ok\n");
  return 0;
}

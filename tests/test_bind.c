/* test_bind - bound function pointers on the checking fake driver, where their calls reach
 * cuLaunchKernel as they do on a GPU: the kernelParams a bound call gives the driver,
 * recorded below cujit, byte for byte at the layout the driver reads, for parameters of
 * every scalar type in every register and stack slot the C calling convention uses (the
 * path that hands the driver the argument places as they are), and for parameters a call
 * converts (f16 and bf16 from float, a struct by address, an In/Out buffer); which
 * pointers are cujit's own entry points and which libffi closures; and pointers bound
 * past the last entry point, which are closures and work the same. */
#include "testutil.h"
#include "call/trampoline.h"
#include "dl/driver.h"
#include "fakedriver/checkdriver.h"
#include "module/function.h"

static checkdriver_api cd;
static cujit_module *mod;
static CUdeviceptr dev[2];

static const char kSrc[] =
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "struct Blob { int a; char b; };\n"
    "__global__ void direct(signed char a, unsigned char b, short c, unsigned short d, int e,\n"
    "    unsigned f, long long g, unsigned long long h, float *p, float f0, double d1,\n"
    "    float f2, double d3, float f4, double d5, float f6, double d7, float f8, double d9,\n"
    "    int i0, float f10, unsigned long long u0, double d11, float *q, short s0,\n"
    "    float f12) {}\n"
    "__global__ void converted(__half h, Blob blob, float *p, __nv_bfloat16 bf, int n) {}\n"
    "__global__ void vector(float4 v, int n) {}\n";

/* 26 parameters: with the grid and block in four integer registers, integers and pointers
 * overflow the other two and floating-point values the eight vector registers, so the
 * stack holds both, interleaved. */
typedef cujit_status (*direct_fn)(cujit_dim3, cujit_dim3, int8_t, uint8_t, int16_t, uint16_t,
                                  int32_t, uint32_t, int64_t, uint64_t, CUdeviceptr, float, double,
                                  float, double, float, double, float, double, float, double,
                                  int32_t, float, uint64_t, double, CUdeviceptr, int16_t, float);

typedef struct blob {
  int a;
  char b;
} blob;
typedef cujit_status (*converted_fn)(cujit_dim3, cujit_dim3, float /* __half */,
                                     const void * /* Blob */, CUdeviceptr,
                                     float /* __nv_bfloat16 */, int);

/* What the last launch of `watched` gave cuLaunchKernel. */
static struct {
  const cujit_function *watched;
  int calls;
  unsigned grid[3], block[3];
  unsigned char bytes[256];
} got;
static __typeof__(cuLaunchKernel) *driver_launch;

static CUresult recording_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, CUstream s,
                                 void **params, void **extra) {
  size_t i;
  const cujit_function *fn = got.watched;
  got.calls++;
  got.grid[0] = gx, got.grid[1] = gy, got.grid[2] = gz;
  got.block[0] = bx, got.block[1] = by, got.block[2] = bz;
  memset(got.bytes, 0, sizeof got.bytes);
  for (i = 0; fn && params && i < fn->nparams; i++)
    memcpy(got.bytes + fn->param_offsets[i], params[i], fn->param_sizes[i]);
  return driver_launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

static int setup(void **state) {
  CUcontext ctx = NULL;
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n < 1) return -1;
  if (checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0) return -1;
  if (cujit_module_from_source(&mod, kSrc, "bind.cu", NULL) != CUJIT_OK) {
    print_error("%s\n", cujit_last_error());
    return -1;
  }
  if (cj_cu.cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
      cj_cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
      cj_cu.cuMemAlloc(&dev[0], 256) != CUDA_SUCCESS ||
      cj_cu.cuMemAlloc(&dev[1], 256) != CUDA_SUCCESS)
    return -1;
  driver_launch = cj_cu.cuLaunchKernel;
  cj_cu.cuLaunchKernel = recording_launch;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cj_cu.cuLaunchKernel = driver_launch;
  cujit_module_destroy(mod);
  return 0;
}

static cujit_function *watch(const char *name) {
  cujit_function *fn = NULL;
  assert_ok(cujit_module_get_function(mod, name, &fn));
  got.watched = fn;
  got.calls = 0;
  return fn;
}

/* Puts `size` bytes of v at parameter i's offset in want. */
static void put(unsigned char *want, const cujit_function *fn, size_t i, const void *v,
                size_t size) {
  assert_int_equal(fn->param_sizes[i], size);
  memcpy(want + fn->param_offsets[i], v, size);
}

/* The direct kernel's values for call k, as the driver must receive them. */
static void direct_want(const cujit_function *fn, int k, unsigned char *want) {
  int8_t a = (int8_t)(-100 + k);
  uint8_t b = (uint8_t)(200 + k);
  int16_t c = (int16_t)(-30000 + k), s0 = (int16_t)(-14 - k);
  uint16_t d = (uint16_t)(60000 + k);
  int32_t e = -2000000000 + k, i0 = -9 * k;
  uint32_t f = 4000000000u + (uint32_t)k;
  int64_t g = INT64_MIN + k;
  uint64_t h = UINT64_MAX - (uint64_t)k, u0 = 11 + (uint64_t)k;
  float fv[7] = {1.25f, 3.0f, 5.0f, 7.0f, 9.5f, 10.0f, 15.5f};
  double dv[7] = {-2.5, 4.0, 6.0, 8.0, 0.125, 12.0, 0};
  size_t i;
  memset(want, 0, 256);
  put(want, fn, 0, &a, 1);
  put(want, fn, 1, &b, 1);
  put(want, fn, 2, &c, 2);
  put(want, fn, 3, &d, 2);
  put(want, fn, 4, &e, 4);
  put(want, fn, 5, &f, 4);
  put(want, fn, 6, &g, 8);
  put(want, fn, 7, &h, 8);
  put(want, fn, 8, &dev[0], 8);
  for (i = 0; i < 10; i++) { /* f0 d1 f2 d3 ... d9 */
    float fx = fv[i / 2] * (float)k;
    double dx = dv[i / 2] * k;
    if (i % 2)
      put(want, fn, 9 + i, &dx, 8);
    else
      put(want, fn, 9 + i, &fx, 4);
  }
  put(want, fn, 19, &i0, 4);
  fv[5] *= (float)k;
  put(want, fn, 20, &fv[5], 4);
  put(want, fn, 21, &u0, 8);
  dv[5] *= k;
  put(want, fn, 22, &dv[5], 8);
  put(want, fn, 23, &dev[1], 8);
  put(want, fn, 24, &s0, 2);
  fv[6] *= (float)k;
  put(want, fn, 25, &fv[6], 4);
}

static cujit_status call_direct(direct_fn fp, int k) {
  float K = (float)k;
  return fp(CUJIT_DIM3(5, 6, (unsigned)k), CUJIT_DIM3(64, 2), (int8_t)(-100 + k),
            (uint8_t)(200 + k), (int16_t)(-30000 + k), (uint16_t)(60000 + k), -2000000000 + k,
            4000000000u + (uint32_t)k, INT64_MIN + k, UINT64_MAX - (uint64_t)k, dev[0], 1.25f * K,
            -2.5 * k, 3.0f * K, 4.0 * k, 5.0f * K, 6.0 * k, 7.0f * K, 8.0 * k, 9.5f * K, 0.125 * k,
            -9 * k, 10.0f * K, 11 + (uint64_t)k, 12.0 * k, dev[1], (int16_t)(-14 - k), 15.5f * K);
}

static void assert_direct_call(const cujit_function *fn, direct_fn fp, int k) {
  unsigned char want[256];
  got.calls = 0;
  assert_ok(call_direct(fp, k));
  assert_int_equal(got.calls, 1);
  assert_int_equal(got.grid[0], 5);
  assert_int_equal(got.grid[1], 6);
  assert_int_equal(got.grid[2], k);
  assert_int_equal(got.block[0], 64);
  assert_int_equal(got.block[1], 2);
  assert_int_equal(got.block[2], 1);
  direct_want(fn, k, want);
  assert_memory_equal(got.bytes, want, sizeof want);
}

/* Every scalar type in every place reaches the driver as the kernel's layout says, from a
 * pointer that (on x86-64 Linux) is one of cujit's entry points; cujit_launch with the same
 * values gives the same bytes. */
static void direct_arguments_in_every_place(void **state) {
  cujit_function *fn = watch("direct");
  void *p = NULL;
  unsigned char bound[256];
  int k;
  (void)state;
  assert_string_equal(cujit_function_signature(fn),
                      "i8 u8 i16 u16 i32 u32 i64 u64 ptr f32 f64 f32 f64 f32 f64 f32 f64 f32 f64 "
                      "i32 f32 u64 f64 ptr i16 f32");
  assert_ok(cujit_function_bind(fn, NULL, &p));
  assert_int_equal(cj_tramp_owns(p), CJ_TRAMP_SLOTS > 0);
  for (k = 1; k <= 3; k++) assert_direct_call(fn, (direct_fn)p, k);
  memcpy(bound, got.bytes, sizeof bound);
  got.calls = 0;
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(5, 6, 3), CUJIT_DIM3(64, 2), cujit_i8(-97), cujit_u8(203),
                         cujit_i16(-29997), cujit_u16(60003), cujit_i32(-1999999997),
                         cujit_u32(4000000003u), cujit_i64(INT64_MIN + 3),
                         cujit_u64(UINT64_MAX - 3), cujit_ptr(dev[0]), cujit_f32(3.75f),
                         cujit_f64(-7.5), cujit_f32(9.0f), cujit_f64(12.0), cujit_f32(15.0f),
                         cujit_f64(18.0), cujit_f32(21.0f), cujit_f64(24.0), cujit_f32(28.5f),
                         cujit_f64(0.375), cujit_i32(-27), cujit_f32(30.0f), cujit_u64(14),
                         cujit_f64(36.0), cujit_ptr(dev[1]), cujit_i16(-17), cujit_f32(46.5f)));
  assert_int_equal(got.calls, 1);
  assert_memory_equal(got.bytes, bound, sizeof bound);
  cujit_function_unbind(fn, p);
  got.calls = 0;
  assert_status_detail(call_direct((direct_fn)p, 1), CUJIT_ERROR_INVALID_VALUE,
                       "after cujit_function_unbind()");
  assert_int_equal(got.calls, 0);
  assert_int_equal(cd.violations(), 0);
}

/* Parameters a call converts go the general way, from the same entry point: f16 and bf16
 * rounded from float, a struct (known by name) taken by address, an InOut buffer staged. */
static void converted_arguments(void **state) {
  cujit_function *fn = watch("converted");
  unsigned char want[256];
  uint16_t half = 0x3555 /* 1/3 */, bf = 0x4049 /* 3.140625 */;
  int32_t n = -77;
  blob bl = {123456, 'z'};
  char host[64] = "staged";
  void *p = NULL;
  (void)state;
  assert_string_equal(cujit_function_signature(fn), "f16 b8:4 ptr bf16 i32");
  assert_ok(cujit_function_bind(fn, NULL, &p));
  assert_int_equal(cj_tramp_owns(p), CJ_TRAMP_SLOTS > 0);
  assert_ok(((converted_fn)p)(CUJIT_DIM3(1), CUJIT_DIM3(32), 1.0f / 3, &bl,
                              CUJIT_INOUT_PTR(host, sizeof host), 3.140625f, n));
  assert_int_equal(got.calls, 1);
  memset(want, 0, sizeof want);
  put(want, fn, 0, &half, 2);
  put(want, fn, 1, &bl, 8);
  memcpy(want + fn->param_offsets[2], got.bytes + fn->param_offsets[2], 8); /* staged: any */
  put(want, fn, 3, &bf, 2);
  put(want, fn, 4, &n, 4);
  assert_memory_equal(got.bytes, want, sizeof want);
  assert_string_equal(host, "staged"); /* copied in and out again */
  assert_status_detail(((converted_fn)p)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, NULL, dev[0], 0, 0),
                       CUJIT_ERROR_INVALID_ARGS, "an opaque (bN) parameter");
  cujit_function_unbind(fn, p);
  assert_int_equal(cd.violations(), 0);
}

/* Scalars, pointers and bN values make an entry point (1,024 of them on x86-64 Linux);
 * a vector (or struct) by value a libffi closure, on every system. */
static void which_pointers_are_entry_points(void **state) {
  cujit_function *vec = watch("vector"), *direct = watch("direct");
  void *p = NULL;
  (void)state;
#if defined(__x86_64__) && defined(__linux__)
  assert_int_equal(CJ_TRAMP_SLOTS, 1024);
#endif
  assert_string_equal(cujit_function_signature(vec), "f32x4 i32");
  assert_ok(cujit_function_bind(vec, NULL, &p));
  assert_false(cj_tramp_owns(p));
  cujit_function_unbind(vec, p);
  assert_ok(cujit_function_bind(direct, NULL, &p));
  assert_int_equal(cj_tramp_owns(p), CJ_TRAMP_SLOTS > 0);
  cujit_function_unbind(direct, p);
}

/* Past the last entry point, pointers are libffi closures and work the same; the entry
 * points bound before them go on working, and each refuses once unbound. Last: it takes
 * every entry point left in the process. */
static void past_the_last_entry_point(void **state) {
  enum { MAX = CJ_TRAMP_SLOTS + 2 };
  static void *ptrs[MAX];
  cujit_function *fn = watch("direct");
  size_t n = 0, i;
  (void)state;
  do assert_ok(cujit_function_bind(fn, NULL, &ptrs[n]));
  while (cj_tramp_owns(ptrs[n++]) && n < MAX);
  assert_false(cj_tramp_owns(ptrs[n - 1])); /* a closure */
  assert_ok(cujit_function_bind(fn, NULL, &ptrs[n]));
  assert_false(cj_tramp_owns(ptrs[n++]));
  for (i = 0; i < n; i += (i + 3 < n ? 97 : 1)) assert_direct_call(fn, (direct_fn)ptrs[i], 2);
  for (i = 0; i < n; i++) cujit_function_unbind(fn, ptrs[i]);
  for (i = 0; i < n; i += (i + 3 < n ? 97 : 1))
    assert_status_detail(call_direct((direct_fn)ptrs[i], 1), CUJIT_ERROR_INVALID_VALUE,
                         "after cujit_function_unbind()");
  assert_int_equal(cd.violations(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(direct_arguments_in_every_place),
      cmocka_unit_test(converted_arguments),
      cmocka_unit_test(which_pointers_are_entry_points),
      cmocka_unit_test(past_the_last_entry_point),
  };
  return test_group_result(cmocka_run_group_tests(tests, setup, teardown));
}

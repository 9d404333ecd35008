/* test_cxx - cujit.h from C++: this file is built as C++17 and as C++20 with -Wall -Wextra
 * -Wpedantic -Werror and uses every macro and inline constructor of the header. It
 * compiles a kernel everywhere; where a GPU is present it launches through each form and
 * checks the results, elsewhere each launch must fail with CUJIT_ERROR_NO_DRIVER or
 * CUJIT_ERROR_NO_DEVICE. Ends with the line "N passed, N failed". */
#include <cmath>
#include <cstdio>
#include <cstring>

#include <vector_types.h> /* float4 */

#include "cujit.h"

static int passed, failed;

static void check(bool ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAILED: %s (%s)\n", what, cujit_last_error());
  }
}

static const char kSource[] =
    "struct pair { float a; int b; };\n"
    "__global__ void mix(float *out, const float *in, signed char i8, unsigned char u8,\n"
    "                    short i16, unsigned short u16, int i32, unsigned u32,\n"
    "                    long long i64, unsigned long long u64, float f32, double f64,\n"
    "                    float4 v, pair p) {\n"
    "  int t = threadIdx.x + blockIdx.x * blockDim.x + blockIdx.y * 1000;\n"
    "  out[t] = in[t] + i8 + u8 + i16 + u16 + i32 + u32 + (float)i64 + (float)u64 + f32\n"
    "           + (float)f64 + v.x + v.w + p.a + p.b;\n"
    "}\n"
    "__global__ void add(float *x, float *y, int n) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) x[i] += y[i];\n"
    "}\n";

struct pair {
  float a;
  int b;
};

/* A launch's status: success with a GPU, the driver's or device's absence without one. */
static bool launched(cujit_status st, bool gpu) {
  return gpu ? st == CUJIT_OK : (st == CUJIT_ERROR_NO_DRIVER || st == CUJIT_ERROR_NO_DEVICE);
}

static void every_constructor(cujit_module *m, bool gpu) {
  cujit_function *mix = nullptr;
  float in[8], out[8];
  float4 v = {1.0f, 0.0f, 0.0f, 2.0f};
  pair p = {0.5f, 3};
  for (int i = 0; i < 8; i++) in[i] = (float)i;
  cujit_status st = cujit_module_get_function(m, "mix", &mix);
  if (!gpu) {
    check(launched(st, gpu), "get_function without a GPU");
    return;
  }
  check(st == CUJIT_OK, "get_function");
  cujit_launch_options o = {};
  st = CUJIT_LAUNCH_EX(mix, CUJIT_DIM3(2, 1, 1), CUJIT_DIM3(4), &o, cujit_out(out, sizeof out),
                       cujit_in(in, sizeof in), cujit_i8(-1), cujit_u8(2), cujit_i16(-3),
                       cujit_u16(4), cujit_i32(-5), cujit_u32(6), cujit_i64(-7), cujit_u64(8),
                       cujit_f32(0.25f), cujit_f64(0.5), CUJIT_VALUE(v),
                       cujit_value(&p, sizeof p));
  check(st == CUJIT_OK, "CUJIT_LAUNCH_EX with every constructor");
  bool right = true;
  for (int i = 0; i < 8; i++)
    right = right && std::fabs(out[i] - ((float)i + 4.0f + 0.75f + 3.0f + 3.5f)) < 1e-5f;
  check(right, "the kernel saw every argument");
}

static void every_launch_form(cujit_module *m, bool gpu) {
  cujit_function *add = nullptr;
  float x[16], y[16];
  CUdeviceptr dx = 0;
  for (int i = 0; i < 16; i++) x[i] = y[i] = (float)i;
  if (cujit_module_get_function(m, "add", &add) != CUJIT_OK) {
    check(!gpu, "get_function add");
    return;
  }
  check(launched(CUJIT_LAUNCH(add, CUJIT_DIM3(1), CUJIT_DIM3(16, 1), cujit_inout(x, sizeof x),
                              cujit_in(y, sizeof y), cujit_i32(16)), gpu),
        "CUJIT_LAUNCH");
  check(launched(cujit_call(add, CUJIT_DIM3(1), CUJIT_DIM3(16), CUJIT_INOUT(x, sizeof x),
                            CUJIT_IN(y, sizeof y), 16), gpu),
        "cujit_call with CUJIT_INOUT and CUJIT_IN");
  cujit_launch_options o = {};
  check(launched(cujit_call_ex(add, CUJIT_DIM3(1), CUJIT_DIM3(16), &o, CUJIT_INOUT(x, sizeof x),
                               CUJIT_IN(y, sizeof y), 16), gpu),
        "cujit_call_ex");
  check(x[5] == 5.0f * 4.0f, "three additions of y to x");
  float z[16];
  check(cujit_mem_alloc(&dx, sizeof y) == CUJIT_OK && cujit_memcpy_htod(dx, y, sizeof y) == CUJIT_OK,
        "device memory");
  check(CUJIT_LAUNCH(add, CUJIT_DIM3(1), CUJIT_DIM3(8), cujit_ptr(dx), cujit_ptr_offset(dx, 8 * 4),
                     cujit_i32(8)) == CUJIT_OK, "cujit_ptr and cujit_ptr_offset");
  check(cujit_memcpy_dtoh(z, dx, sizeof z) == CUJIT_OK && z[1] == 1.0f + 9.0f, "device result");
  cujit_arg out = cujit_out(z, sizeof z);
  check(cujit_call(add, CUJIT_DIM3(1), CUJIT_DIM3(16), cujit_arg_ref(&out),
                   CUJIT_IN(y, sizeof y), 0) == CUJIT_OK, "cujit_arg_ref");
  cujit_mem_free(dx);
}

/* The reduction generator's call macros: arrays and scalars inline. Without a GPU, fake
 * device pointers are wrapped: the kernel compiles and only the launch is refused. */
static void reduction_macros(bool gpu) {
  cujit_reduction *r = nullptr;
  cujit_array *x = nullptr, *y = nullptr, *out = nullptr;
  int64_t n = 4;
  float hx[4] = {1, 2, 3, 4}, scale = 2.0f, result = 0.0f;
  check(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "s*x[i]*y[i]",
                               "float s, const float *x, const float *y", nullptr) == CUJIT_OK,
        "cujit_reduction_create");
  if (gpu) {
    check(cujit_array_from_host(&x, CUJIT_TYPE_F32, 1, &n, hx) == CUJIT_OK &&
              cujit_array_from_host(&y, CUJIT_TYPE_F32, 1, &n, hx) == CUJIT_OK,
          "arrays");
  } else {
    check(cujit_array_wrap(&x, CUJIT_TYPE_F32, 1, &n, 0x10000) == CUJIT_OK &&
              cujit_array_wrap(&y, CUJIT_TYPE_F32, 1, &n, 0x20000) == CUJIT_OK,
          "wrapped arrays");
  }
  check(launched(CUJIT_REDUCTION(r, &out, &scale, x, y), gpu), "CUJIT_REDUCTION");
  check(launched(CUJIT_REDUCTION_HOST(r, &result, &scale, x, y), gpu), "CUJIT_REDUCTION_HOST");
  if (gpu) {
    float got = 0.0f;
    check(cujit_array_get(out, &got, sizeof got) == CUJIT_OK && got == 60.0f, "0-d result");
    check(result == 60.0f, "host result");
  }
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(out);
}

int main() {
  cujit_module *m = nullptr;
  int devices = 0;
  cujit_options o = {};
  o.arch = "compute_75";
  bool gpu = cujit_device_count(&devices) == CUJIT_OK && devices > 0;
  cujit_dim3 a = CUJIT_DIM3(7), b = CUJIT_DIM3(7, 8), c = CUJIT_DIM3(7, 8, 9);
  check(a.x == 7 && a.y == 1 && a.z == 1 && b.y == 8 && b.z == 1 && c.z == 9, "cujit_dim3");
  check(cujit_module_from_source(&m, kSource, "cxx.cu", &o) == CUJIT_OK, "compile");
  if (m) {
    every_constructor(m, gpu);
    every_launch_form(m, gpu);
  }
  reduction_macros(gpu);
  cujit_module_destroy(m);
  std::printf("C++ consumer (%s, %s): ", __cplusplus >= 202002L ? "C++20" : "C++17",
              gpu ? "launched on a GPU" : "no GPU: launches refused as expected");
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

/* test_gpu_shared - shared memory: 16 KiB of static shared memory, dynamic shared memory
 * below and above the 48 KiB default (cujit allows the kernel more on demand), and a
 * request beyond the device's limit refused before launching. */
#include "gputest.h"

static const char kSrc[] =
    "__global__ void reverse_static(float *x) {\n"
    "  __shared__ float buf[4096];\n"
    "  float *row = x + blockIdx.x * 4096;\n"
    "  for (int k = threadIdx.x; k < 4096; k += blockDim.x) buf[k] = row[k];\n"
    "  __syncthreads();\n"
    "  for (int k = threadIdx.x; k < 4096; k += blockDim.x) row[k] = buf[4095 - k];\n"
    "}\n"
    "__global__ void reverse_dynamic(float *x, int n) {\n"
    "  extern __shared__ float buf[];\n"
    "  float *row = x + blockIdx.x * n;\n"
    "  for (int k = threadIdx.x; k < n; k += blockDim.x) buf[k] = row[k];\n"
    "  __syncthreads();\n"
    "  for (int k = threadIdx.x; k < n; k += blockDim.x) row[k] = buf[n - 1 - k];\n"
    "}\n";

/* rows of n floats, value = row * 100000 + column */
static float *rows(int nrows, int n) {
  float *x = malloc((size_t)nrows * (size_t)n * sizeof(float));
  int r, k;
  for (r = 0; r < nrows; r++)
    for (k = 0; k < n; k++) x[r * n + k] = (float)(r * 100000 + k);
  return x;
}

static void check_reversed(const float *x, int nrows, int n) {
  int r, k;
  for (r = 0; r < nrows; r++)
    for (k = 0; k < n; k++)
      if (x[r * n + k] != (float)(r * 100000 + (n - 1 - k)))
        fail_msg("row %d column %d: %g", r, k, (double)x[r * n + k]);
}

static void static_16_kib(void **state) {
  cujit_function *f = gpu_function(mod, "reverse_static");
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  float *x = rows(3, 4096);
  (void)state;
  assert_ok(cujit_function_get_attrs(f, &a));
  assert_int_equal(a.static_shared_bytes, 16384);
  assert_ok(
      CUJIT_LAUNCH(f, CUJIT_DIM3(3), CUJIT_DIM3(256), cujit_inout(x, 3 * 4096 * sizeof(float))));
  check_reversed(x, 3, 4096);
  free(x);
}

static void dynamic(int n) {
  cujit_function *f = gpu_function(mod, "reverse_dynamic");
  cujit_launch_options o = {0};
  float *x = rows(2, n);
  o.shared_bytes = (unsigned)n * sizeof(float);
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(2), CUJIT_DIM3(512), &o,
                            cujit_inout(x, 2 * (size_t)n * sizeof(float)), cujit_i32(n)));
  check_reversed(x, 2, n);
  free(x);
}

static void dynamic_1_kib(void **state) {
  (void)state;
  dynamic(256);
}

static void dynamic_above_the_default(void **state) {
  (void)state;
  dynamic(25600); /* 100 KiB: needs the kernel's opt-in, which cujit sets */
  dynamic(1024);  /* and smaller ones keep working */
}

static void too_much_is_refused(void **state) {
  cujit_function *f = gpu_function(mod, "reverse_dynamic");
  cujit_launch_options o = {0};
  float x[4] = {1, 2, 3, 4};
  (void)state;
  o.shared_bytes = 1u << 20;
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(32), &o,
                                       cujit_inout(x, sizeof x), cujit_i32(4)),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "kernel 'reverse_dynamic': it needs 1048576 bytes of shared memory per "
                       "block (0 static + 1048576 dynamic) and the device allows at most");
  assert_true(x[0] == 1 && x[3] == 4); /* nothing ran */
}

GPU_GROUP_MAIN(kSrc, "shared.cu", NULL, cmocka_unit_test(static_16_kib),
               cmocka_unit_test(dynamic_1_kib), cmocka_unit_test(dynamic_above_the_default),
               cmocka_unit_test(too_much_is_refused))

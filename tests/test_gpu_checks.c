/* test_gpu_checks - launches refused before anything happens, against the kernel's real
 * parameter layout and the device's limits: wrong argument count and size, blocks and
 * grids too large, the kernel's own thread limit, device memory given as an In buffer.
 * Each refusal leaves the output untouched and takes no memory from the pool. */
#include "gputest.h"

static const char kSrc[] =
    "__global__ void multiply_them(float *dest, float *a, float *b) {\n"
    "  const int i = threadIdx.x;\n"
    "  dest[i] = a[i] * b[i];\n"
    "}\n"
    "__global__ void __launch_bounds__(128) bounded(int *x) { x[threadIdx.x] = 1; }\n";

enum { N = 64 };
static float a[N], b[N], dest[N];

/* Asserts that the last refused launch changed nothing. */
static void nothing_happened(size_t kept_before) {
  size_t used = 1, kept = 0;
  int i;
  for (i = 0; i < N; i++) assert_true(dest[i] == -1.0f);
  assert_ok(cujit_mem_pool_get_usage(&used, &kept));
  assert_int_equal(used, 0);
  assert_int_equal(kept, kept_before);
}

static void wrong_argument_count_and_size(void **state) {
  cujit_function *f = gpu_function(mod, "multiply_them");
  size_t kept = 0;
  int i;
  (void)state;
  for (i = 0; i < N; i++) a[i] = b[i] = 2.0f, dest[i] = -1.0f;
  assert_ok(cujit_mem_pool_get_usage(NULL, &kept));
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                                    cujit_in(a, sizeof a)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'multiply_them' takes 3 arguments but 2 were given (its parameters' "
                       "sizes in bytes: 8, 8, 8); nothing was launched");
  nothing_happened(kept);
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                                    cujit_in(a, sizeof a), cujit_in(b, sizeof b), cujit_i32(N)),
                       CUJIT_ERROR_INVALID_ARGS, "takes 3 arguments but 4 were given");
  nothing_happened(kept);
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                                    cujit_in(a, sizeof a), cujit_f32(2.0f)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 3 of kernel 'multiply_them' has the wrong size: parameter 3 "
                       "expects 8 bytes, but 4 bytes were given (f32, by value)");
  nothing_happened(kept);
  /* arguments are checked before the configuration, whichever path the launch takes */
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(0), CUJIT_DIM3(N), cujit_ptr(0), cujit_ptr(0)),
                       CUJIT_ERROR_INVALID_ARGS, "takes 3 arguments but 2 were given");
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(0), CUJIT_DIM3(N), cujit_ptr(0), cujit_ptr(0),
                                    cujit_f32(1.0f)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 3 of kernel 'multiply_them' has the "
                       "wrong size");
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(0), CUJIT_DIM3(N), cujit_ptr(0), cujit_ptr(0),
                                    cujit_ptr(0)),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.x is 0");
  nothing_happened(kept);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                         cujit_in(a, sizeof a), cujit_in(b, sizeof b)));
  for (i = 0; i < N; i++) assert_true(dest[i] == 4.0f);
}

static void launch_configuration_limits(void **state) {
  cujit_function *f = gpu_function(mod, "multiply_them"), *g = gpu_function(mod, "bounded");
  static int x[256];
  size_t kept = 0;
  int i;
  (void)state;
  for (i = 0; i < N; i++) dest[i] = -1.0f;
  assert_ok(cujit_mem_pool_get_usage(NULL, &kept));
  assert_status_detail(
      CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(2048), cujit_out(dest, sizeof dest),
                   cujit_in(a, sizeof a), cujit_in(b, sizeof b)),
      CUJIT_ERROR_LAUNCH_CONFIG,
      "cannot launch kernel 'multiply_them': block.x = 2048 exceeds the device's limit");
  nothing_happened(kept);
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32, 32, 2),
                                    cujit_out(dest, sizeof dest), cujit_in(a, sizeof a),
                                    cujit_in(b, sizeof b)),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "32 x 32 x 2 = 2048 threads exceeds the device's limit");
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1, 70000), CUJIT_DIM3(1),
                                    cujit_out(dest, sizeof dest), cujit_in(a, sizeof a),
                                    cujit_in(b, sizeof b)),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "grid.y = 70000 exceeds the device's limit of 65535");
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(0), cujit_out(dest, sizeof dest),
                                    cujit_in(a, sizeof a), cujit_in(b, sizeof b)),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.x is 0");
  nothing_happened(kept);
  assert_status_detail(CUJIT_LAUNCH(g, CUJIT_DIM3(1), CUJIT_DIM3(256), cujit_out(x, sizeof x)),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "a block of 256 threads exceeds this kernel's limit of 128 threads per "
                       "block");
  assert_ok(CUJIT_LAUNCH(g, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_out(x, sizeof x)));
}

static void device_memory_is_not_an_in_buffer(void **state) {
  cujit_function *f = gpu_function(mod, "multiply_them");
  CUdeviceptr d = 0;
  int i;
  (void)state;
  for (i = 0; i < N; i++) dest[i] = -1.0f;
  assert_ok(cujit_mem_alloc(&d, sizeof a));
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                                    cujit_in((void *)(uintptr_t)d, sizeof a),
                                    cujit_in(b, sizeof b)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'multiply_them' is an In buffer in device memory");
  assert_int_equal(gpu_pool_in_use(), 0);
  assert_status_detail(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                                    cujit_in(NULL, sizeof a), cujit_in(b, sizeof b)),
                       CUJIT_ERROR_INVALID_ARGS, "In buffer of 256 bytes with a NULL host pointer");
  for (i = 0; i < N; i++) assert_true(dest[i] == -1.0f);
  assert_ok(cujit_mem_free(d));
}

GPU_GROUP_MAIN(kSrc, "checks.cu", NULL, cmocka_unit_test(wrong_argument_count_and_size),
               cmocka_unit_test(launch_configuration_limits),
               cmocka_unit_test(device_memory_is_not_an_in_buffer))

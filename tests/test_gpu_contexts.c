/* test_gpu_contexts - a kernel launched in the context its function was first used in,
 * then in others: one the program makes at the same address after destroying that one,
 * another alive beside it, and the primary context after a reset. A launch in the first
 * context may go through the function cujit kept for it; in every other it must not,
 * since that function died with its context: each launch writes a value that is read
 * back. Small pageable In/Out buffers too: the small pinned area they go through is
 * made only in a primary context cujit holds, and made again after a reset, since pinned
 * memory dies with its context. */
#include "gputest.h"
#include "dl/driver.h"
#include "launch/launch.h"

static const char kPut[] = "extern \"C\" __global__ void put(int *out, int v) { *out = v; }\n"
                           "extern \"C\" __global__ void inc(const int *in, int *out) {\n"
                           "  out[threadIdx.x] = in[threadIdx.x] + 1;\n"
                           "}\n";

typedef CUresult (*primary_reset_fn)(CUdevice);

/* Launches put(v) in the current context and checks that v arrived. */
static void put_and_check(cujit_function *put, int v) {
  CUdeviceptr d = 0;
  int got = -1;
  assert_int_equal(cj_cu.cuMemAlloc(&d, sizeof got), CUDA_SUCCESS);
  assert_ok(CUJIT_LAUNCH(put, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_ptr(d), cujit_i32(v)));
  assert_int_equal(cj_cu.cuMemcpyDtoH(&got, d, sizeof got), CUDA_SUCCESS);
  assert_int_equal(got, v);
  assert_int_equal(cj_cu.cuMemFree(d), CUDA_SUCCESS);
}

/* Small pageable In and Out buffers through `inc` in the current context, checked. */
static void small_in_out_and_check(cujit_module *m, int base) {
  cujit_function *inc = gpu_function(m, "inc");
  int in[64], out[64], i;
  for (i = 0; i < 64; i++) in[i] = base + i, out[i] = -1;
  assert_ok(CUJIT_LAUNCH(inc, CUJIT_DIM3(1), CUJIT_DIM3(64), cujit_in(in, sizeof in),
                         cujit_out(out, sizeof out)));
  for (i = 0; i < 64; i++) assert_int_equal(out[i], base + i + 1);
}

/* Small pageable copies to device memory of the current context and back, checked. */
static void small_copies_and_check(int base) {
  CUdeviceptr d = 0;
  int in[64], out[64], i;
  for (i = 0; i < 64; i++) in[i] = base + i, out[i] = -1;
  assert_int_equal(cj_cu.cuMemAlloc(&d, sizeof in), CUDA_SUCCESS);
  assert_ok(cujit_mem_copy_htod(d, in, sizeof in));
  assert_ok(cujit_mem_copy_dtoh(out, d, sizeof out));
  assert_memory_equal(in, out, sizeof in);
  assert_int_equal(cj_cu.cuMemFree(d), CUDA_SUCCESS);
}

static void a_function_outlives_its_first_context(void **state) {
  CUcontext first, again, beside, primary = NULL;
  CUdevice dev = 0;
  cujit_module *m;
  cujit_function *put;
  (void)state;
  first = gpu_own_context();
  m = gpu_module(kPut, "put.cu", NULL);
  put = gpu_function(m, "put"); /* first used here */
  put_and_check(put, 1);
  small_in_out_and_check(m, 100); /* the program's context: no pinned area made in it */
  assert_null(cj_bounce_take(first, 0, 16));
  gpu_destroy_context(first);
  again = gpu_own_context(); /* usually at the address the first one had */
  put_and_check(put, 2);
  beside = gpu_own_context();
  put_and_check(put, 3);
  assert_int_equal(cj_cu.cuCtxSetCurrent(again), CUDA_SUCCESS);
  put_and_check(put, 4);
  gpu_destroy_context(beside);
  gpu_destroy_context(again);
  assert_int_equal(cj_cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary), CUDA_SUCCESS);
  put_and_check(put, 5);
  small_in_out_and_check(m, 200); /* the area is made here, in a context cujit holds */
  cujit_module_destroy(m);
}

/* A reset keeps the primary context's handle but ends the context: the next one made
 * there is a new context. Last in the group, since it ends everything else's too. */
static void a_reset_primary_context_is_a_new_one(void **state) {
  CUcontext primary = NULL;
  CUdevice dev = 0;
  cujit_module *m;
  cujit_function *put;
  void *reset = NULL;
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuDevicePrimaryCtxReset", &reset));
  assert_int_equal(cj_cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary), CUDA_SUCCESS);
  m = gpu_module(kPut, "put.cu", NULL);
  put = gpu_function(m, "put");
  put_and_check(put, 6);
  small_in_out_and_check(m, 300);
  assert_int_equal(((primary_reset_fn)reset)(dev), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary), CUDA_SUCCESS);
  put_and_check(put, 7);
  small_copies_and_check(400);    /* a new area: the old one's memory went with the reset */
  small_in_out_and_check(m, 500); /* new device memory too: the old blocks died with it */
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_function_outlives_its_first_context),
      cmocka_unit_test(a_reset_primary_context_is_a_new_one),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

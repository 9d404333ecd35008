/* test_gpu_toolkit - kernels that include the toolkit's headers with no options at all
 * (<cub/...>, <curand_kernel.h>, <cuda_fp16.h>, <cuda/std/...>, <stdint.h>, <float.h>)
 * compile, launch on a GPU and compute what they should. */
#include "gputest.h"

static const char kSource[] = "#include <cub/block/block_reduce.cuh>\n"
                              "#include <curand_kernel.h>\n"
                              "#include <cuda_fp16.h>\n"
                              "#include <cuda/std/limits>\n"
                              "#include <stdint.h>\n"
                              "#include <float.h>\n"
                              "__global__ void block_sum(const float *x, float *out) {\n"
                              "  using Reduce = cub::BlockReduce<float, 128>;\n"
                              "  __shared__ typename Reduce::TempStorage tmp;\n"
                              "  float s = Reduce(tmp).Sum(x[blockIdx.x * 128 + threadIdx.x]);\n"
                              "  if (threadIdx.x == 0) out[blockIdx.x] = s;\n"
                              "}\n"
                              "__global__ void uniform(float *out, unsigned long long seed) {\n"
                              "  curandStatePhilox4_32_10_t st;\n"
                              "  curand_init(seed, threadIdx.x, 0, &st);\n"
                              "  out[threadIdx.x] = curand_uniform(&st);\n"
                              "}\n"
                              "__global__ void limits(int32_t *i, float *f, __half *h) {\n"
                              "  i[0] = cuda::std::numeric_limits<int32_t>::max();\n"
                              "  f[0] = FLT_MAX;\n"
                              "  h[0] = __float2half(1.5f) + __float2half(2.25f);\n"
                              "}\n";

static void cub_block_reduce(void **state) {
  cujit_function *f = gpu_function(mod, "block_sum");
  float x[4 * 128], out[4];
  int i;
  (void)state;
  for (i = 0; i < 4 * 128; i++) x[i] = (float)(i / 128 + 1);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(4), CUJIT_DIM3(128), cujit_in(x, sizeof x),
                         cujit_out(out, sizeof out)));
  for (i = 0; i < 4; i++) assert_true(out[i] == 128.0f * (float)(i + 1));
}

static void curand_uniform_numbers(void **state) {
  cujit_function *f = gpu_function(mod, "uniform");
  float a[256], b[256];
  int i, differ = 0;
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(256), cujit_out(a, sizeof a), cujit_u64(42)));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(256), cujit_out(b, sizeof b), cujit_u64(42)));
  for (i = 0; i < 256; i++) {
    assert_true(a[i] > 0.0f && a[i] <= 1.0f);
    assert_true(a[i] == b[i]); /* same seed, same numbers */
    differ += i && a[i] != a[i - 1];
  }
  assert_true(differ > 200);
}

static void fp16_limits_and_c_headers(void **state) {
  cujit_function *f = gpu_function(mod, "limits");
  int32_t i32 = 0;
  float fl = 0;
  uint16_t h = 0;
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(&i32, 4), cujit_out(&fl, 4),
                         cujit_out(&h, 2)));
  assert_int_equal(i32, 2147483647);
  assert_true(fl == 3.40282346638528859812e+38f);
  assert_int_equal(h, 0x4380); /* 3.75 in binary16 */
}

GPU_GROUP_MAIN(kSource, "toolkit.cu", NULL, cmocka_unit_test(cub_block_reduce),
               cmocka_unit_test(curand_uniform_numbers),
               cmocka_unit_test(fp16_limits_and_c_headers))

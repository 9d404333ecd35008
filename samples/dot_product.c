/* dot_product - seed 003: the dot product of two arrays of 10^6 random doubles on the GPU
 * (cp.dot(a, b)): each block sums its share into device memory, a second launch sums the
 * blocks' results. */
#include <math.h>

#include "sample.h"

static const char *const source =
    "#define BLOCK 256\n"
    "__device__ double block_sum(double v) {\n"
    "  __shared__ double s[BLOCK];\n"
    "  s[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {\n"
    "    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  return s[0];\n"
    "}\n"
    "__global__ void dot_partial(const double *a, const double *b, unsigned n, double *partial) {\n"
    "  double sum = 0.0;\n"
    "  for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)\n"
    "    sum += a[i] * b[i];\n"
    "  sum = block_sum(sum);\n"
    "  if (threadIdx.x == 0) partial[blockIdx.x] = sum;\n"
    "}\n"
    "__global__ void sum(const double *x, unsigned n, double *out) {\n"
    "  double s = 0.0;\n"
    "  for (unsigned i = threadIdx.x; i < n; i += BLOCK) s += x[i];\n"
    "  s = block_sum(s);\n"
    "  if (threadIdx.x == 0) *out = s;\n"
    "}\n";

int main(void) {
  enum { N = 1000000, BLOCKS = 512 };
  double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double)), c = 0, want = 0;
  cujit_module *mod = sample_compile(source, "dot_product.cu");
  cujit_function *dot_partial, *sum;
  CUdeviceptr partial = 0;
  float ms = 0;
  cujit_launch_options timed = {0};
  int i;
  if (!mod) return 0;
  if (!a || !b) return 1;
  CHECK(cujit_module_get_function(mod, "dot_partial", &dot_partial));
  CHECK(cujit_module_get_function(mod, "sum", &sum));
  sample_fill_double(a, N, 31);
  sample_fill_double(b, N, 32);
  CHECK(cujit_mem_alloc(&partial, BLOCKS * sizeof(double)));
  timed.elapsed_ms = &ms;
  CHECK(CUJIT_LAUNCH_EX(dot_partial, cujit_dim3(BLOCKS), cujit_dim3(256), &timed,
                        cujit_in(a, N * sizeof(double)), cujit_in(b, N * sizeof(double)),
                        cujit_u32(N), cujit_ptr(partial)));
  CHECK(CUJIT_LAUNCH(sum, cujit_dim3(1), cujit_dim3(256), cujit_ptr(partial), cujit_u32(BLOCKS),
                     cujit_out(&c, sizeof c)));
  CHECK(cujit_mem_free(partial));
  printf("Dot product result: %.10f\n", c);
  printf("Calculation time: %.3f ms on the GPU (kernel only)\n", (double)ms);
  for (i = 0; i < N; i++) want += a[i] * b[i];
  if (fabs(c - want) > 1e-9 * fabs(want)) {
    printf("Failed: the CPU gets %.10f\n", want);
    return 1;
  }
  cujit_module_destroy(mod);
  free(a);
  free(b);
  printf("Success: the dot product of 10^6 doubles matches the CPU\n");
  return 0;
}

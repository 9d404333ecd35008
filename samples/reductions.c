/* reductions - seed 002: max(a) and dot(a, b) of two random arrays of 50 floats on the GPU
 * (pycuda.gpuarray.max and dot), as block reductions in shared memory. */
#include <math.h>

#include "sample.h"

static const char *const source =
    "#define BLOCK 256\n"
    "__device__ float block_reduce(float v, bool is_max) {\n"
    "  __shared__ float s[BLOCK];\n"
    "  s[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {\n"
    "    if (threadIdx.x < k)\n"
    "      s[threadIdx.x] = is_max ? fmaxf(s[threadIdx.x], s[threadIdx.x + k])\n"
    "                              : s[threadIdx.x] + s[threadIdx.x + k];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  return s[0];\n"
    "}\n"
    "__global__ void max_reduce(const float *x, unsigned n, float *out) {\n"
    "  float m = __int_as_float(0xff800000); /* -infinity */\n"
    "  for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)\n"
    "    m = fmaxf(m, x[i]);\n"
    "  m = block_reduce(m, true);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = m;\n"
    "}\n"
    "__global__ void dot_reduce(const float *a, const float *b, unsigned n, float *out) {\n"
    "  float sum = 0.0f;\n"
    "  for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)\n"
    "    sum += a[i] * b[i];\n"
    "  sum = block_reduce(sum, false);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
    "}\n";

int main(void) {
  enum { N = 50 };
  float a[N], b[N], maximum = 0, dot = 0, want_max = -INFINITY;
  double want_dot = 0;
  cujit_module *mod = sample_compile(source, "reductions.cu");
  cujit_function *max_reduce, *dot_reduce;
  int i;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "max_reduce", &max_reduce));
  CHECK(cujit_module_get_function(mod, "dot_reduce", &dot_reduce));
  for (i = 0; i < N; i++) {
    a[i] = (float)rand() / (float)RAND_MAX;
    b[i] = (float)rand() / (float)RAND_MAX;
  }
  CHECK(CUJIT_LAUNCH(max_reduce, cujit_dim3(1), cujit_dim3(256), cujit_in(a, sizeof a),
                     cujit_u32(N), cujit_out(&maximum, sizeof maximum)));
  CHECK(CUJIT_LAUNCH(dot_reduce, cujit_dim3(1), cujit_dim3(256), cujit_in(a, sizeof a),
                     cujit_in(b, sizeof b), cujit_u32(N), cujit_out(&dot, sizeof dot)));
  printf("max(a)    =  %.7f\n", (double)maximum);
  printf("dot(a, b) =  %.7f\n", (double)dot);
  for (i = 0; i < N; i++) {
    if (a[i] > want_max) want_max = a[i];
    want_dot += (double)a[i] * b[i];
  }
  if (maximum != want_max || fabs(dot - want_dot) > 1e-5 * fabs(want_dot)) {
    printf("Failed: expected max %.7f and dot %.7f\n", (double)want_max, want_dot);
    return 1;
  }
  cujit_module_destroy(mod);
  printf("Success: max and dot match the CPU\n");
  return 0;
}

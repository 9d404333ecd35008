/* kernels.c - the CUDA C sources the process-level and compile benchmarks share. */
#include "bench.h"

/* A small kernel: what most run-time compiled code looks like. */
const char bench_src_small[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* A template over half precision: pulls in cuda_fp16.h (a large header) and needs a name
 * expression to be found. */
const char bench_src_fp16[] = "#include <cuda_fp16.h>\n"
                              "template <typename T, int N>\n"
                              "__global__ void scale(T *x, T s, int n) {\n"
                              "  int i = (blockIdx.x * blockDim.x + threadIdx.x) * N;\n"
                              "#pragma unroll\n"
                              "  for (int k = 0; k < N; k++)\n"
                              "    if (i + k < n) x[i + k] = x[i + k] * s;\n"
                              "}\n";

/* PyCUDA's first example, what the seeds run: Out, In, In of 400 floats. */
const char bench_src_seed[] = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                              "{\n"
                              "  const int i = threadIdx.x;\n"
                              "  dest[i] = a[i] * b[i];\n"
                              "}\n";

/* kernelsrc.h - kernel sources that several test groups share: the GPU groups run them,
 * and test_types checks on the CPU that the types the compiler gives for each of their
 * kernels agree with the PTX. Plain strings, for any group. */
#ifndef CUJIT_KERNELSRC_H
#define CUJIT_KERNELSRC_H

/* test_gpu_call: every scalar type, structs and vectors, In/Out, shared memory, and a
 * kernel in both linkages for the type checks of launches. */
static const char kCallSource[] =
    "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
    "#define PUT(slot, v) memcpy(out + 16 * (slot), &(v), sizeof(v))\n"
    "struct P { float a; int b; double c; };\n"
    "struct __align__(16) A { float x, y, z; };\n"
    "struct In { short s[3]; };\n"
    "typedef struct { In in; double d[2]; } N;\n"
    "extern \"C\" __global__ void scalars(signed char a, unsigned char b, short c,\n"
    "    unsigned short d, int e, unsigned f, long long g, unsigned long long h, float i,\n"
    "    double j, __half k, __nv_bfloat16 l, bool m, char n, size_t o,\n"
    "    unsigned char *out) {\n"
    "  PUT(0, a); PUT(1, b); PUT(2, c); PUT(3, d); PUT(4, e); PUT(5, f); PUT(6, g);\n"
    "  PUT(7, h); PUT(8, i); PUT(9, j); PUT(10, k); PUT(11, l); PUT(12, m); PUT(13, n);\n"
    "  PUT(14, o);\n"
    "}\n"
    "extern \"C\" __global__ void promote(float a, double b, float c, double *out) {\n"
    "  out[0] = a; out[1] = b; out[2] = c;\n"
    "}\n"
    "extern \"C\" __global__ void aggregates(char c0, float4 v, char c1, double2 w, P p,\n"
    "    char3 c3, A a, N n, int2 i2, unsigned char *out) {\n"
    "  PUT(0, c0); PUT(1, v); PUT(2, c1); PUT(3, w); PUT(4, p); PUT(5, c3); PUT(6, a);\n"
    "  memcpy(out + 16 * 7, &n, sizeof n); PUT(9, i2);\n"
    "}\n"
    "extern \"C\" __global__ void multiply_them(float *dest, const float *a, const float *b) {\n"
    "  int i = threadIdx.x; dest[i] = a[i] * b[i];\n"
    "}\n"
    "extern \"C\" __global__ void scale(float *x, float s) { x[threadIdx.x] *= s; }\n"
    "extern \"C\" __global__ void reverse(const float *x, float *y, int n) {\n"
    "  extern __shared__ float s[];\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) s[i] = x[i];\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] = s[n - 1 - i];\n"
    "}\n"
    "__global__ void ramp(float a, unsigned n, float *y) {\n"
    "  unsigned i = threadIdx.x; if (i < n) y[i] = a * (float)i;\n"
    "}\n"
    "extern \"C\" __global__ void cramp(float a, unsigned n, float *y) {\n"
    "  unsigned i = threadIdx.x; if (i < n) y[i] = a * (float)i;\n"
    "}\n";

/* test_signature: C++ kernels, a namespace, a template, an extern "C" kernel. */
static const char kSaxpy[] =
    "// saxpy and friends\n"
    "struct P { float a; int b; double c; };\n"
    "__global__ void saxpy(float a, const float *x, float *__restrict__ y, unsigned n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "namespace ns { __global__ void take(P p, float4 v, char c) {} }\n"
    "template <typename T> __global__ void scale(T *x, T s) { x[threadIdx.x] *= s; }\n"
    "extern \"C\" __global__ void csaxpy(float a, const float *x, float *y, unsigned n) {}\n";

static const char *const kSaxpyExprs[] = {"scale<float>", "scale<double>", NULL};

/* test_args: a parameter of each kind, for launches given swapped arguments. */
static const char kSwap[] =
    "#include <cuda_fp16.h>\n"
    "struct P { float x; int y; };\n"
    "__global__ void k(float a, unsigned b, int *p, long long q, double d,\n"
    "                  unsigned long long u, bool f, __half h, float4 v, P s, int i) {}\n"
    "extern \"C\" __global__ void ck(float a, unsigned b) {}\n";

/* A parameter of each kind a plain value may meet: every scalar, a pointer, a struct, a
 * vector and an enum. */
static const char kPlain[] =
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "struct P { float x; int y; };\n"
    "enum E { E0, E1 };\n"
    "__global__ void p(bool b, char c, signed char sc, unsigned char uc, short s,\n"
    "                  unsigned short us, int i, unsigned u, long l, unsigned long ul,\n"
    "                  long long ll, unsigned long long ull, float f, double d, __half h,\n"
    "                  __nv_bfloat16 bf, int *ptr, P st, float4 v, E e) {}\n";

#endif

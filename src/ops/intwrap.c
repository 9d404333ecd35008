/* intwrap.c - integer arithmetic in the kernels the array layer writes, as NumPy defines
 * it: two's complement, every result taken modulo 2^bits (INT_MAX + 1 is INT_MIN).
 *
 * C++ leaves a signed overflow undefined (INT_MAX + 1, -INT_MIN, INT_MIN * -1, and an
 * unsigned short times an unsigned short past INT_MAX, both promoted to int), and the
 * compiler may assume it never happens. So sums, differences, products, negations and
 * powers of integers compute in the unsigned type of their width, never narrower than an
 * unsigned int (which nothing promotes past), where every result is defined modulo 2^N,
 * and come back to their own type through cj_wrap, which converts no value the type cannot
 * hold (such a conversion is implementation-defined before C++20). The operations thus
 * give NumPy's results by the language's definition, and NVRTC compiles each to the PTX
 * of the plain operation: the conversions cost nothing. */
#include "ops/ops.h"

const char cj_int_source[] =
    "#ifndef CJ_INT\n#define CJ_INT\n"
    "/* The unsigned type integers of N bytes compute in. */\n"
    "template <int N> struct cj_uint { typedef unsigned int t; };\n"
    "template <> struct cj_uint<8> { typedef unsigned long long t; };\n"
    "/* The value of T congruent to u modulo 2^(8 sizeof(T)), with no conversion of a value\n"
    " * T does not hold. */\n"
    "template <class T>\n"
    "__device__ __forceinline__ T cj_wrap(typename cj_uint<sizeof(T)>::t u) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  const U m = (U)~(U)0 >> (8 * (sizeof(U) - sizeof(T))); /* T's bits */\n"
    "  u &= m;\n"
    "  if ((T)-1 > (T)0 || u <= (m >> 1)) return (T)u;\n"
    "  return (T)(-(T)(m - u) - 1); /* negative: -(2^N - u) */\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T cj_add(T a, T b) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  return cj_wrap<T>((U)a + (U)b);\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T cj_sub(T a, T b) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  return cj_wrap<T>((U)a - (U)b);\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T cj_mul(T a, T b) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  return cj_wrap<T>((U)a * (U)b);\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T cj_neg(T a) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  return cj_wrap<T>((U)0 - (U)a);\n"
    "}\n"
    "/* b to the power e by squaring; a negative e gives the value truncated toward 0. */\n"
    "template <class T> __device__ T cj_ipow(T b, T e) {\n"
    "  typedef typename cj_uint<sizeof(T)>::t U;\n"
    "  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);\n"
    "  U r = 1, x = (U)b;\n"
    "  for (; e; e >>= 1, x *= x)\n"
    "    if (e & 1) r *= x;\n"
    "  return cj_wrap<T>(r);\n"
    "}\n"
    /* a % -1 is 0, and computed so: the most negative value % -1 overflows in C */
    "template <class T> __device__ T cj_ifmod(T a, T b) {\n"
    "  return !b || (T(-1) < T(0) && b == T(-1)) ? T(0) : T(a % b);\n"
    "}\n"
    "#endif\n";

int cj_int_wraps(int type) {
  const cj_elem *e = cj_elem_of(type);
  return e && (e->kind == CJ_SK_SIGNED || e->kind == CJ_SK_UNSIGNED);
}

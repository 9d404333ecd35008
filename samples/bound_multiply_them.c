/* bound_multiply_them - seed 001's multiply_them called like a C function: the kernel's
 * signature is what the compiler says (its mangled name spells the parameter types),
 * cujit_function_bind() turns it into a typed function pointer, and the C compiler checks
 * every call. cujit_call() shows the varargs form. */
#include "sample.h"

static const char *const source = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                                  "{\n"
                                  "  const int i = threadIdx.x;\n"
                                  "  dest[i] = a[i] * b[i];\n"
                                  "}\n";

/* The kernel's C type: the launch configuration, then its own parameters (pointers as
 * CUdeviceptr, which CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR also produce). */
typedef cujit_status (*multiply_them_fn)(cujit_dim3 grid, cujit_dim3 block, CUdeviceptr dest,
                                         CUdeviceptr a, CUdeviceptr b);

/* check: dest == a * b, or says where not */
static int differs(const float *dest, const float *a, const float *b, int n, const char *how) {
  int i;
  for (i = 0; i < n; i++)
    if (dest[i] != a[i] * b[i])
      return printf("Failed (%s): dest[%d] = %g, expected %g\n", how, i, dest[i], a[i] * b[i]);
  return 0;
}

int main(void) {
  enum { N = 400 };
  static float a[N], b[N], dest[N], dest2[N];
  cujit_module *mod = sample_compile(source, "multiply_them.cu");
  cujit_function *fn;
  void *ptr;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "multiply_them", &fn));
  CHECK(cujit_function_bind(fn, NULL, &ptr));
  multiply_them_fn multiply_them = (multiply_them_fn)ptr;
  sample_fill(a, N, 1);
  sample_fill(b, N, 2);
  CHECK(multiply_them(CUJIT_DIM3(1), CUJIT_DIM3(N), CUJIT_OUT_PTR(dest, sizeof dest),
                      CUJIT_IN_PTR(a, sizeof a), CUJIT_IN_PTR(b, sizeof b)));
  CHECK(cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(N), CUJIT_OUT_PTR(dest2, sizeof dest2),
                   CUJIT_IN_PTR(a, sizeof a), CUJIT_IN_PTR(b, sizeof b)));

  /* check against the CPU, both ways */
  if (differs(dest, a, b, N, "bound function pointer") || differs(dest2, a, b, N, "cujit_call"))
    return 1;
  printf("Success: dest == a * b for all %d elements, through a bound function pointer and "
         "cujit_call\n",
         N);

  cujit_module_destroy(mod); /* frees the bound function pointer too */
  return 0;
}

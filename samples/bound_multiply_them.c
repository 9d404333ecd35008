/* bound_multiply_them - PyCUDA's multiply_them example called like a C function: the kernel's
 * signature is what the compiler says (its mangled name spells the parameter types),
 * cujit_function_bind() turns it into a typed function pointer, and the C compiler checks
 * every call. cujit_call() shows the form that takes C values. */
#include <stdio.h>

#include "cujit_array.h"

static const char *const source = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                                  "{\n"
                                  "  const int i = threadIdx.x;\n"
                                  "  dest[i] = a[i] * b[i];\n"
                                  "}\n";

/* The kernel's C type: the launch configuration, then its own parameters (pointers as
 * CUdeviceptr, which CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR also produce). */
typedef cujit_status (*multiply_them_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr,
                                         CUdeviceptr);

/* check: dest == a * b, or says where not */
static int differs(const float *dest, const float *a, const float *b, int n, const char *how) {
  for (int i = 0; i < n; i++)
    if (dest[i] != a[i] * b[i])
      return printf("Failed (%s): dest[%d] = %g, expected %g\n", how, i, dest[i], a[i] * b[i]);
  return 0;
}

int main(void) {
  float a[400], b[400], dest[400], dest2[400];
  cujit_module *mod;
  cujit_function *fn;
  void *ptr;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_module_from_source(&mod, source, "multiply_them.cu", NULL);
  cujit_module_get_function(mod, "multiply_them", &fn);
  cujit_function_bind(fn, NULL, &ptr);
  multiply_them_fn multiply_them = (multiply_them_fn)ptr;
  cujit_array_random_host(a, CUJIT_TYPE_F32, 400, CUJIT_RANDOM_NORMAL, 1);
  cujit_array_random_host(b, CUJIT_TYPE_F32, 400, CUJIT_RANDOM_NORMAL, 2);
  multiply_them(CUJIT_DIM3(1), CUJIT_DIM3(400), CUJIT_OUT_PTR(dest, sizeof dest),
                CUJIT_IN_PTR(a, sizeof a), CUJIT_IN_PTR(b, sizeof b));
  cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(400), CUJIT_OUT_PTR(dest2, sizeof dest2),
             CUJIT_IN_PTR(a, sizeof a), CUJIT_IN_PTR(b, sizeof b));

  /* check against the CPU, both ways */
  if (differs(dest, a, b, 400, "bound function pointer") || differs(dest2, a, b, 400, "cujit_call"))
    return 1;
  printf("Success: dest == a * b for all 400 elements, through a bound function pointer and "
         "cujit_call\n");
}

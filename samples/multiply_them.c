/* multiply_them - PyCUDA's multiply_them example (SourceModule + Out/In/In), written in C
 * with cujit. */
#include <stdio.h>

#include "cujit_array.h"

static const char *const source = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                                  "{\n"
                                  "  const int i = threadIdx.x;\n"
                                  "  dest[i] = a[i] * b[i];\n"
                                  "}\n";

int main(void) {
  float a[400], b[400], dest[400];
  cujit_module *mod;
  cujit_function *multiply_them;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_module_from_source(&mod, source, "multiply_them.cu", NULL);
  cujit_module_get_function(mod, "multiply_them", &multiply_them);
  cujit_array_random_host(a, CUJIT_TYPE_F32, 400, CUJIT_RANDOM_NORMAL, 1); /* numpy.random.randn */
  cujit_array_random_host(b, CUJIT_TYPE_F32, 400, CUJIT_RANDOM_NORMAL, 2);
  CUJIT_LAUNCH(multiply_them, CUJIT_DIM3(1), CUJIT_DIM3(400), cujit_out(dest, sizeof dest),
               cujit_in(a, sizeof a), cujit_in(b, sizeof b));

  /* check against the CPU (PyCUDA's example prints dest - a*b, all zeros) */
  for (int i = 0; i < 400; i++)
    if (dest[i] != a[i] * b[i])
      return printf("Failed: dest[%d] = %g, expected %g\n", i, dest[i], a[i] * b[i]), 1;
  printf("Success: dest == a * b for all 400 elements\n");
}

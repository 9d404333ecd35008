/* multiply_them - seed 001: PyCUDA's SourceModule + Out/In/In, written in C with cujit. */
#include <math.h>

#include "sample.h"

static const char *const source =
    "__global__ void multiply_them(float *dest, float *a, float *b)\n"
    "{\n"
    "  const int i = threadIdx.x;\n"
    "  dest[i] = a[i] * b[i];\n"
    "}\n";

int main(void) {
  enum { N = 400 };
  float a[N], b[N], dest[N];
  cujit_module *mod;
  cujit_function *multiply_them;
  int i;

  CHECK(cujit_module_from_source(&mod, source, "multiply_them.cu", NULL));
  if (!sample_have_gpu()) {
    sample_show_compiled(mod);
    cujit_module_destroy(mod);
    return 0;
  }
  CHECK(cujit_module_get_function(mod, "multiply_them", &multiply_them));
  sample_fill(a, N, 1);
  sample_fill(b, N, 2);
  memset(dest, 0, sizeof dest);
  CHECK(CUJIT_LAUNCH(multiply_them, CUJIT_DIM3(1), CUJIT_DIM3(N),
                     cujit_out(dest, sizeof dest), cujit_in(a, sizeof a), cujit_in(b, sizeof b)));
  for (i = 0; i < N; i++) {
    if (dest[i] != a[i] * b[i]) {
      printf("Failed: dest[%d] = %g, expected %g\n", i, dest[i], a[i] * b[i]);
      return 1;
    }
  }
  cujit_module_destroy(mod);
  printf("Success: dest == a * b for all %d elements\n", N);
  return 0;
}

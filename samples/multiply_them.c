/* multiply_them - seed 001: PyCUDA's SourceModule + Out/In/In, written in C with cujit. */
#include "sample.h"

static const char *const source = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                                  "{\n"
                                  "  const int i = threadIdx.x;\n"
                                  "  dest[i] = a[i] * b[i];\n"
                                  "}\n";

int main(void) {
  enum { N = 400 };
  static float a[N], b[N], dest[N]; /* dest = numpy.zeros_like(a) */
  cujit_module *mod = sample_compile(source, "multiply_them.cu");
  cujit_function *multiply_them;
  int i;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "multiply_them", &multiply_them));
  sample_fill(a, N, 1); /* a = numpy.random.randn(400).astype(numpy.float32) */
  sample_fill(b, N, 2);
  CHECK(CUJIT_LAUNCH(multiply_them, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                     cujit_in(a, sizeof a), cujit_in(b, sizeof b)));

  /* check against the CPU (the seed prints dest - a*b, all zeros) */
  for (i = 0; i < N; i++)
    if (dest[i] != a[i] * b[i])
      return printf("Failed: dest[%d] = %g, expected %g\n", i, dest[i], a[i] * b[i]), 1;
  printf("Success: dest == a * b for all %d elements\n", N);

  cujit_module_destroy(mod);
  return 0;
}

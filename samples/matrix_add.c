/* matrix_add - seed 000: the sum of two random 4 x 4 matrices on the GPU (PyCUDA's
 * gpuarray a_gpu + b_gpu), written in C with cujit: In, In, Out. */
#include "sample.h"

static const char *const source =
    "__global__ void matrix_add(float *c, const float *a, const float *b, int n)\n"
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(void) {
  enum { ROWS = 4, COLS = 4, N = ROWS * COLS };
  float a[N], b[N], c[N];
  cujit_module *mod = sample_compile(source, "matrix_add.cu");
  cujit_function *add;
  int i, j;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "matrix_add", &add));
  sample_fill(a, N, 11);
  sample_fill(b, N, 12);
  CHECK(CUJIT_LAUNCH(add, cujit_dim3(1), cujit_dim3(N), cujit_out(c, sizeof c),
                     cujit_in(a, sizeof a), cujit_in(b, sizeof b), cujit_i32(N)));
  for (i = 0; i < ROWS; i++) {
    printf(i ? " [" : "[[");
    for (j = 0; j < COLS; j++) printf("%s%11.8f", j ? " " : "", (double)c[i * COLS + j]);
    printf(i == ROWS - 1 ? "]]\n" : "]\n");
  }
  for (i = 0; i < N; i++) {
    if (c[i] != a[i] + b[i]) {
      printf("Failed: c[%d] = %g, expected %g\n", i, (double)c[i], (double)(a[i] + b[i]));
      return 1;
    }
  }
  cujit_module_destroy(mod);
  printf("Success: c == a + b for the 4 x 4 matrices\n");
  return 0;
}

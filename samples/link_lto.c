/* link_lto - a program of two sources linked into one module with link-time optimisation:
 * the kernel in one source calls a __device__ function and reads an extern __device__
 * variable that the other source defines (as `nvcc -rdc=true -dlto a.cu b.cu` would
 * build it). With LTO the call is inlined across the sources. Checks y = alpha * x + y
 * on 2^20 floats against the CPU. */
#include <stdio.h>

#include "cujit_array.h"

/* The kernel's source: it only declares what the other source defines. */
static const char *const kernel_source = "extern __device__ float alpha;\n"
                                         "__device__ float axpy_op(float a, float x, float y);\n"
                                         "__global__ void axpy(const float *x, float *y, int n) {\n"
                                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                         "  if (i < n) y[i] = axpy_op(alpha, x[i], y[i]);\n"
                                         "}\n";

/* The library's source: the function and the variable. */
static const char *const library_source =
    "__device__ float alpha = 2.5f;\n"
    "__device__ float axpy_op(float a, float x, float y) { return a * x + y; }\n";

/* Links the two sources with LTO; without a GPU, for sm_90 so that the link can be shown. */
static cujit_module *link_program(int gpu) {
  cujit_link_part parts[2] = {CUJIT_LINK_PART_INIT, CUJIT_LINK_PART_INIT};
  cujit_options opts = CUJIT_OPTIONS_INIT;
  cujit_link_options link = CUJIT_LINK_OPTIONS_INIT;
  cujit_module *m = NULL;
  parts[0].kind = CUJIT_LINK_SOURCE;
  parts[0].data = kernel_source;
  parts[0].name = "axpy.cu";
  parts[1].kind = CUJIT_LINK_SOURCE;
  parts[1].data = library_source;
  parts[1].name = "ops.cu";
  if (!gpu) opts.arch = "sm_90";
  link.flags = CUJIT_LINK_OPT_LTO;
  link.name = "link_lto";
  cujit_module_link(&m, parts, 2, &opts, &link);
  return m;
}

int main(void) {
  enum { N = 1 << 20, THREADS = 256 };
  static float x[N], y[N], want[N];
  int devices = 0, gpu, i, close = 0;
  cujit_module *mod;
  cujit_function *axpy;
  float alpha = 0.0f;
  size_t size = 0;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  /* no device is an answer here, not an error: the name in parentheses skips the handler */
  gpu = (cujit_device_get_count)(&devices) == CUJIT_OK && devices > 0;
  mod = link_program(gpu);
  cujit_module_cubin(mod, &size);
  printf("Linked %s for %s with LTO: %zu bytes of CUBIN\n", cujit_module_name(mod),
         cujit_module_arch(mod), size);
  if (!gpu) { /* the link was made; the launch is skipped, and the status says so */
    printf("No GPU here (%s): the link was made, the launch is skipped\n", cujit_last_error());
    cujit_module_destroy(mod);
    return CUJIT_EXIT_NO_GPU;
  }
  cujit_module_get_function(mod, "axpy", &axpy);
  cujit_module_read_global(mod, "alpha", &alpha, sizeof alpha);
  cujit_array_random_host(x, CUJIT_TYPE_F32, N, CUJIT_RANDOM_NORMAL, 5);
  cujit_array_random_host(y, CUJIT_TYPE_F32, N, CUJIT_RANDOM_NORMAL, 6);
  for (i = 0; i < N; i++) want[i] = alpha * x[i] + y[i];
  CUJIT_LAUNCH(axpy, CUJIT_DIM3((N + THREADS - 1) / THREADS), CUJIT_DIM3(THREADS),
               cujit_in(x, sizeof x), cujit_inout(y, sizeof y), cujit_i32(N));
  {
    cujit_array *got = NULL; /* numpy.allclose(y, want), on the GPU */
    cujit_array_from_host(&got, CUJIT_TYPE_F32, 1, (int64_t[]){N}, y);
    cujit_array_allclose_host(got, want, sizeof want, 1e-6, 1e-6, 0, &close);
    cujit_array_destroy(got);
  }
  if (!close) return printf("Failed: y differs from alpha * x + y\n"), 1;
  printf("Success: y == alpha * x + y (alpha %g, from the other source) for all 2^20 "
         "elements\n",
         (double)alpha);
  cujit_module_destroy(mod);
  return 0;
}

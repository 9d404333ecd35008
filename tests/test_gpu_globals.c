/* test_gpu_globals - __constant__ and __device__ variables: their address and size, host
 * data written into them and read back, namespaced names, and the errors for a missing
 * variable and for a copy larger than the variable. */
#include "gputest.h"

static const char kSrc[] = "__constant__ float coef[16];\n"
                           "__device__ int counter;\n"
                           "namespace ns { __device__ float val; }\n"
                           "__global__ void apply(float *out) {\n"
                           "  int i = threadIdx.x;\n"
                           "  out[i] = coef[i] * 2.0f + ns::val;\n"
                           "  atomicAdd(&counter, 1);\n"
                           "}\n";

static void constant_memory_through_get_global(void **state) {
  cujit_function *f = gpu_function(mod, "apply");
  float c[16], out[16], back[16], v = 0.5f;
  CUdeviceptr d = 0;
  size_t bytes = 0;
  int i, zero = 0, count = -1;
  (void)state;
  assert_ok(cujit_module_get_global(mod, "coef", &d, &bytes));
  assert_true(d != 0);
  assert_int_equal(bytes, sizeof c);
  for (i = 0; i < 16; i++) c[i] = (float)i * 1.5f;
  assert_ok(cujit_module_write_global(mod, "coef", c, sizeof c));
  assert_ok(cujit_module_write_global(mod, "ns::val", &v, sizeof v));
  assert_ok(cujit_module_write_global(mod, "counter", &zero, sizeof zero));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(16), cujit_out(out, sizeof out)));
  for (i = 0; i < 16; i++) assert_true(out[i] == c[i] * 2.0f + 0.5f);
  assert_ok(cujit_module_read_global(mod, "counter", &count, sizeof count));
  assert_int_equal(count, 16);
  assert_ok(cujit_module_read_global(mod, "coef", back, 8)); /* a prefix is fine */
  assert_true(back[0] == c[0] && back[1] == c[1]);
  assert_ok(cujit_module_get_global(mod, "val", &d, &bytes)); /* unqualified, unambiguous */
  assert_int_equal(bytes, sizeof(float));
}

static void errors_name_the_variable(void **state) {
  float big[17] = {0};
  CUdeviceptr d = 0;
  (void)state;
  assert_status_detail(cujit_module_get_global(mod, "coeff", &d, NULL), CUJIT_ERROR_NOT_FOUND,
                       "module 'globals.cu' has no variable 'coeff'; its variables: ");
  assert_non_null(strstr(cujit_last_error(), "coef"));
  assert_non_null(strstr(cujit_last_error(), "ns::val (_ZN2ns3valE)"));
  assert_status_detail(cujit_module_write_global(mod, "coef", big, sizeof big),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cannot write 68 bytes into variable 'coef' of module 'globals.cu': it has "
                       "64 bytes");
  assert_status_detail(cujit_module_read_global(mod, "counter", big, 8), CUJIT_ERROR_INVALID_VALUE,
                       "cannot read 8 bytes from variable 'counter'");
}

GPU_GROUP_MAIN(kSrc, "globals.cu", NULL, cmocka_unit_test(constant_memory_through_get_global),
               cmocka_unit_test(errors_name_the_variable))

/* test_gpu_lookup - finding kernels: templates through name expressions, namespaces,
 * overloads, extern "C", missing and ambiguous names; loading PTX through the driver's
 * JIT, and a module built for a newer GPU refused with the reason. */
#include "gputest.h"

static const char kSrc[] = "template <typename T> __global__ void scale(T *x, T a, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) x[i] *= a;\n"
                           "}\n"
                           "namespace ns {\n"
                           "__global__ void g(int *x) { *x = 1; }\n"
                           "namespace inner { __global__ void g(int *x) { *x = 2; } }\n"
                           "}\n"
                           "__global__ void over(int *x) { *x = 3; }\n"
                           "__global__ void over(float *x) { *x = 4.0f; }\n"
                           "extern \"C\" __global__ void plain(int *x) { *x = 5; }\n";

static const char *const kNames[] = {"scale<float>", "scale<double>", NULL};

static int run_int(const char *name) {
  int v = 0;
  cujit_function *f = gpu_function(mod, name);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(&v, sizeof v)));
  return v;
}

static void templates_through_name_expressions(void **state) {
  float xf[100];
  double xd[100];
  const char *lowered = NULL;
  cujit_function *ff = gpu_function(mod, "scale<float>"), *fd = gpu_function(mod, "scale<double>");
  int i;
  (void)state;
  for (i = 0; i < 100; i++) xf[i] = (float)i, xd[i] = (double)i;
  assert_ok(CUJIT_LAUNCH(ff, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_inout(xf, sizeof xf),
                         cujit_f32(2.0f), cujit_i32(100)));
  assert_ok(CUJIT_LAUNCH(fd, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_inout(xd, sizeof xd),
                         cujit_f64(-3.0), cujit_i32(100)));
  for (i = 0; i < 100; i++) assert_true(xf[i] == 2.0f * (float)i && xd[i] == -3.0 * i);
  assert_ok(cujit_module_get_lowered_name(mod, "scale<float>", &lowered));
  assert_ptr_equal(gpu_function(mod, lowered), ff); /* the lowered name finds the same kernel */
  assert_string_equal(cujit_function_name(ff), "scale");
  /* a double where the float instance takes a float is caught */
  assert_status_detail(CUJIT_LAUNCH(ff, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_inout(xf, sizeof xf),
                                    cujit_f64(2.0), cujit_i32(100)),
                       CUJIT_ERROR_INVALID_ARGS, "parameter 2 expects 4 bytes, but 8 bytes");
}

static void namespaces_overloads_and_extern_c(void **state) {
  float v = 0;
  cujit_function *f = NULL;
  (void)state;
  assert_int_equal(run_int("ns::g"), 1);
  assert_int_equal(run_int("inner::g"), 2);
  assert_int_equal(run_int("ns::inner::g"), 2);
  assert_int_equal(run_int("plain"), 5);
  assert_int_equal(run_int("_Z4overPi"), 3);
  f = gpu_function(mod, "_Z4overPf");
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(&v, sizeof v)));
  assert_true(v == 4.0f);
}

static void missing_and_ambiguous_names(void **state) {
  cujit_function *f = (cujit_function *)1;
  (void)state;
  assert_status_detail(cujit_module_get_function(mod, "multiply_them", &f), CUJIT_ERROR_NOT_FOUND,
                       "module 'lookup.cu' has no kernel 'multiply_them'; its kernels: ");
  assert_null(f);
  assert_non_null(strstr(cujit_last_error(), "plain"));
  assert_non_null(strstr(cujit_last_error(), "ns::inner::g (_ZN2ns5inner1gEPi)"));
  assert_status_detail(cujit_module_get_function(mod, "g", &f), CUJIT_ERROR_AMBIGUOUS,
                       "'g' matches 2 kernels of module 'lookup.cu'");
  assert_status_detail(cujit_module_get_function(mod, "over", &f), CUJIT_ERROR_AMBIGUOUS,
                       "over (_Z4overPi), over (_Z4overPf)");
  assert_status_detail(cujit_module_get_function(mod, "scale", &f), CUJIT_ERROR_AMBIGUOUS,
                       "scale<...> (_Z5scaleIfEvPT_S0_i)");
  assert_non_null(strstr(cujit_last_error(), "name expression"));
}

static void ptx_through_the_jit(void **state) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  char arch[32];
  int major = 0, minor = 0, v = 0;
  cujit_function *f;
  (void)state;
  assert_ok(cujit_device_get_info(0, NULL, 0, &major, &minor));
  snprintf(arch, sizeof arch, "compute_%d", major * 10 + minor);
  o.arch = arch;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, "extern \"C\" __global__ void k(int *x) { *x = 77; }",
                                     "jit.cu", &o));
  assert_null(cujit_module_cubin(m, NULL));
  f = gpu_function(m, "k");
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(&v, sizeof v)));
  assert_int_equal(v, 77);
  cujit_module_destroy(m);
}

static void newer_architecture_is_refused(void **state) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  cujit_function *f = NULL;
  char arch[32], want[96];
  int major = 0, minor = 0, archs[64];
  size_t n = 0, i;
  (void)state;
  assert_ok(cujit_device_get_info(0, NULL, 0, &major, &minor));
  assert_ok(cujit_nvrtc_get_archs(archs, 64, &n));
  for (i = 0; i < n && archs[i] / 10 <= major; i++) {
  }
  if (i == n) {
    printf("NVRTC knows no architecture newer than sm_%d%d; nothing to check\n", major, minor);
    return;
  }
  snprintf(arch, sizeof arch, "sm_%d", archs[i]);
  o.arch = arch;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, "__global__ void k(int *x) { *x = 1; }", "newer.cu", &o));
  snprintf(want, sizeof want, "(compiled for %s) on device 0 (sm_%d%d): neither", arch, major,
           minor);
  assert_status_detail(cujit_module_get_function(m, "k", &f), CUJIT_ERROR_LOAD, want);
  assert_null(f);
  printf("%s\n", cujit_last_error());
  cujit_module_destroy(m);
}

GPU_GROUP_MAIN(kSrc, "lookup.cu", kNames, cmocka_unit_test(templates_through_name_expressions),
               cmocka_unit_test(namespaces_overloads_and_extern_c),
               cmocka_unit_test(missing_and_ambiguous_names), cmocka_unit_test(ptx_through_the_jit),
               cmocka_unit_test(newer_architecture_is_refused))

/* test_args - the checks a launch makes before anything happens, against a kernel's
 * parameter layout and a device's limits given here (no device needed): argument count,
 * each argument's kind and size, grid, block and shared memory. */
#include "testutil.h"
#include "launch/launch.h"

/* multiply_them-like layout: (float *, float *, float *, unsigned, float4) */
static const size_t kSizes[] = {8, 8, 8, 4, 16};

static void matching_arguments_pass(void **state) {
  float host[4] = {0};
  struct { float x, y, z, w; } v = {1, 2, 3, 4};
  cujit_arg args[] = {cujit_out(host, sizeof host), cujit_in(host, sizeof host),
                      cujit_ptr(0x1000), cujit_u32(4), CUJIT_VALUE(v)};
  (void)state;
  assert_ok(cj_args_check("k", 5, kSizes, args, 5));
  assert_ok(cj_args_check("k", 0, NULL, NULL, 0));
}

static void wrong_count_names_both_counts(void **state) {
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0)};
  (void)state;
  assert_status_detail(cj_args_check("multiply_them", 5, kSizes, args, 2),
                       CUJIT_ERROR_INVALID_ARGS, "kernel 'multiply_them' takes 5 arguments but 2 were given");
  assert_non_null(strstr(cujit_last_error(), "8, 8, 8, 4, 16"));
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
  assert_status_detail(cj_args_check("k", 0, NULL, args, 1), CUJIT_ERROR_INVALID_ARGS,
                       "takes 0 arguments but 1 was given");
}

static void wrong_size_names_parameter_expected_and_given(void **state) {
  float host[4];
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0), cujit_ptr(0), cujit_f64(1.0), cujit_u32(1)};
  (void)state;
  assert_status_detail(cj_args_check("k", 5, kSizes, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' has the wrong size: parameter 4 expects 4 bytes, "
                       "but 8 bytes were given (f64, by value)");
  assert_non_null(strstr(cujit_last_error(), "cujit_f32()"));
  args[3] = cujit_u32(1);
  assert_status_detail(cj_args_check("k", 5, kSizes, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "parameter 5 expects 16 bytes, but 4 bytes were given (u32, by value)");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_VALUE()"));
  args[4] = cujit_in(host, sizeof host); /* a pointer where a float4 goes */
  assert_status_detail(cj_args_check("k", 5, kSizes, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "but 8 bytes were given (ptr, In buffer)");
  args[0] = cujit_i16(1);
  assert_status_detail(cj_args_check("k", 5, kSizes, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k'");
}

static void malformed_arguments_are_refused(void **state) {
  static const size_t sizes[] = {8, 32};
  char big[32] = {0};
  cujit_arg args[] = {cujit_out(NULL, 16), cujit_value(big, sizeof big)};
  (void)state;
  assert_status_detail(cj_args_check("k", 2, sizes, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is an Out buffer of 16 bytes with a NULL host pointer");
  args[0] = cujit_out(NULL, 0); /* an empty buffer may be NULL: the kernel gets NULL */
  assert_ok(cj_args_check("k", 2, sizes, args, 2));
  args[1].data = NULL;
  assert_status_detail(cj_args_check("k", 2, sizes, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is a 32-byte value with no data");
  args[1] = cujit_value(big, sizeof big);
  args[0].kind = 7;
  assert_status_detail(cj_args_check("k", 2, sizes, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' has unknown kind 7");
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, 2), CUJIT_ERROR_INVALID_VALUE,
                       "args is NULL but nargs is 2");
}

/* An H100-like device. */
static const cj_limits kLim = {90, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 232448, 1};

static void configurations_within_limits_pass(void **state) {
  (void)state;
  assert_ok(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(1024), 0));
  assert_ok(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(2147483647u), CUJIT_DIM3(32, 32), 0));
  assert_ok(cj_config_check("k", &kLim, 1024, 16384, CUJIT_DIM3(8, 8, 8), CUJIT_DIM3(4, 4, 64),
                            232448 - 16384));
}

static void each_limit_is_named(void **state) {
  (void)state;
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(2048), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.x = 2048 exceeds the device's limit of 1024");
  assert_non_null(strstr(cujit_last_error(), "cannot launch kernel 'k'"));
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(1, 1, 65), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.z = 65 exceeds the device's limit of 64");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(64, 32), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "64 x 32 x 1 = 2048 threads exceeds the device's limit of 1024");
  assert_status_detail(cj_config_check("k", &kLim, 256, 0, CUJIT_DIM3(1), CUJIT_DIM3(512), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "512 threads exceeds this kernel's limit of 256");
  assert_non_null(strstr(cujit_last_error(), "cujit_function_suggest_block"));
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1, 65536), CUJIT_DIM3(1), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.y = 65536 exceeds the device's limit of 65535");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(0), CUJIT_DIM3(1), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.x is 0");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(1, 0), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.y is 0");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 16384, CUJIT_DIM3(1), CUJIT_DIM3(1), 232448),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "248832 bytes of shared memory per block (16384 static + 232448 dynamic) "
                       "and the device allows at most 232448");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matching_arguments_pass),
      cmocka_unit_test(wrong_count_names_both_counts),
      cmocka_unit_test(wrong_size_names_parameter_expected_and_given),
      cmocka_unit_test(malformed_arguments_are_refused),
      cmocka_unit_test(configurations_within_limits_pass),
      cmocka_unit_test(each_limit_is_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

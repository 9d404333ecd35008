/* test_args - the checks a launch makes before anything happens, against a kernel's
 * parameter layout and a device's limits given here (no device needed): argument count,
 * each argument's kind, size and type (against the types the compiler gives, NVRTC
 * compiling here), grid, block and shared memory. */
#include "typestest.h"
#include "cujit_array.h"
#include "kernelsrc.h"
#include "launch/launch.h"

/* multiply_them-like layout: (float *, float *, float *, unsigned, float4) */
static const size_t kSizes[] = {8, 8, 8, 4, 16};

static void matching_arguments_pass(void **state) {
  float host[4] = {0};
  struct {
    float x, y, z, w;
  } v = {1, 2, 3, 4};
  cujit_arg args[] = {cujit_out(host, sizeof host), cujit_in(host, sizeof host), cujit_ptr(0x1000),
                      cujit_u32(4), CUJIT_VALUE(v)};
  (void)state;
  assert_ok(cj_args_check("k", 5, kSizes, NULL, args, 5));
  assert_ok(cj_args_check("k", 0, NULL, NULL, NULL, 0));
}

static void wrong_count_names_both_counts(void **state) {
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0)};
  (void)state;
  assert_status_detail(cj_args_check("multiply_them", 5, kSizes, NULL, args, 2),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'multiply_them' takes 5 arguments but 2 were given");
  assert_non_null(strstr(cujit_last_error(), "8, 8, 8, 4, 16"));
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
  assert_status_detail(cj_args_check("k", 0, NULL, NULL, args, 1), CUJIT_ERROR_INVALID_ARGS,
                       "takes 0 arguments but 1 was given");
}

static void wrong_size_names_parameter_expected_and_given(void **state) {
  float host[4];
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0), cujit_ptr(0), cujit_f64(1.0), cujit_u32(1)};
  (void)state;
  assert_status_detail(cj_args_check("k", 5, kSizes, NULL, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' has the wrong size: parameter 4 expects 4 bytes, "
                       "but 8 bytes were given (f64, by value)");
  assert_non_null(strstr(cujit_last_error(), "cujit_f32()"));
  args[3] = cujit_u32(1);
  assert_status_detail(cj_args_check("k", 5, kSizes, NULL, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "parameter 5 expects 16 bytes, but 4 bytes were given (u32, by value)");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_VALUE()"));
  args[4] = cujit_in(host, sizeof host); /* a pointer where a float4 goes */
  assert_status_detail(cj_args_check("k", 5, kSizes, NULL, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "but 8 bytes were given (ptr, In buffer)");
  args[0] = cujit_i16(1);
  assert_status_detail(cj_args_check("k", 5, kSizes, NULL, args, 5), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k'");
}

static void malformed_arguments_are_refused(void **state) {
  static const size_t sizes[] = {8, 32};
  char big[32] = {0};
  cujit_arg args[] = {cujit_out(NULL, 16), cujit_value(big, sizeof big)};
  (void)state;
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is an Out buffer of 16 bytes with a NULL host "
                       "pointer");
  args[0] = cujit_out(NULL, 0); /* an empty buffer may be NULL: the kernel gets NULL */
  assert_ok(cj_args_check("k", 2, sizes, NULL, args, 2));
  args[1].data = NULL;
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is a 32-byte value with no data");
  args[1] = cujit_value(big, sizeof big);
  args[0].kind = 7;
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' has unknown kind 7");
  args[0] = cujit_arr((const cujit_array *)(uintptr_t)0x40);
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is an array handle (cujit_arr()), which only "
                       "the generated kernels' calls take; pass cujit_array_arg(a)");
  args[0] = cujit_array_arg(NULL);
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is a destroyed or NULL array");
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, NULL, 2), CUJIT_ERROR_INVALID_VALUE,
                       "args is NULL but nargs is 2");
}

/* ---- types ---- */

/* Arguments of the right types for k. */
static void swap_args(cujit_arg *a) {
  static const struct { float x, y, z, w; } v = {1, 2, 3, 4};
  static const struct {
    float x;
    int y;
  } p = {1, 2};
  static const uint16_t half = 0x3c00;
  a[0] = cujit_f32(1);
  a[1] = cujit_u32(2);
  a[2] = cujit_ptr(0x1000);
  a[3] = cujit_i64(-3);
  a[4] = cujit_f64(4);
  a[5] = cujit_u64(5);
  a[6] = cujit_u8(1);
  a[7] = cujit_value(&half, 2);
  a[8] = CUJIT_VALUE(v);
  a[9] = CUJIT_VALUE(p);
  a[10] = cujit_i32(6);
}

/* Each argument given for another parameter of the same size is refused, naming the
 * parameter and its type, unless that parameter takes it (structs and vectors take any
 * value of their size). */
/* CUJIT_IN_PTR() is cujit_call()'s, not a launch's: put last in CUJIT_LAUNCH()'s array,
 * where C accepts it (with -Wall's missing-braces warning), it fills `kind` alone, every
 * other field 0, and the launch refuses it (any other place in the array does not
 * compile). */
static void a_pointer_for_cujit_call_is_refused_by_a_launch(void **state) {
  static const size_t sizes[] = {4, 8};
  float host[4] = {0};
  cujit_arg args[2];
  (void)state;
  memset(args, 0, sizeof args);
  args[0] = cujit_i32(3);
  args[1].kind = (int)(uint32_t)CUJIT_IN_PTR(host, sizeof host);
  assert_status_detail(cj_args_check("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k'");
}

static void same_size_swaps_are_refused(void **state) {
  cujit_module *m = types_compile(kSwap, "swap.cu", NULL, NULL, NULL, 0);
  cujit_arg ok[11], a[11];
  types_kernel k;
  size_t i, j, refused = 0;
  char needle[256];
  (void)state;
  assert_ok(types_read(m, "k", 0, &k));
  assert_int_equal(k.n, 11);
  swap_args(ok);
  assert_ok(cj_args_check("k", k.n, k.sizes, k.types, ok, k.n));
  for (i = 0; i < k.n; i++) {
    for (j = i + 1; j < k.n; j++) {
      size_t bad;
      if (k.sizes[i] != k.sizes[j]) continue;
      memcpy(a, ok, sizeof a);
      a[i] = ok[j];
      a[j] = ok[i];
      bad = !(k.types->accept[i] >> a[i].type & 1u)   ? i
            : !(k.types->accept[j] >> a[j].type & 1u) ? j
                                                      : k.n;
      if (bad == k.n) { /* both take the other's: struct and vector parameters */
        assert_ok(cj_args_check("k", k.n, k.sizes, k.types, a, k.n));
        assert_true(k.types->p[i].want == CUJIT_TYPE_BYTES ||
                    k.types->p[j].want == CUJIT_TYPE_BYTES);
        continue;
      }
      snprintf(needle, sizeof needle, "argument %zu of kernel 'k' is ", bad + 1);
      assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n),
                           CUJIT_ERROR_INVALID_ARGS, needle);
      snprintf(needle, sizeof needle, "but parameter %zu is '%s'", bad + 1,
               k.types->p[bad].m.spelling);
      if (!strstr(cujit_last_error(), needle))
        fail_msg("no \"%s\" in: %s", needle, cujit_last_error());
      assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
      refused++;
    }
  }
  assert_int_equal(refused, 9); /* among f32, u32 and i32 (3), and ptr, i64, f64 and u64 (6) */
  memcpy(a, ok, sizeof a);
  a[1] = cujit_f32(2);
  assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is a float (f32), but parameter 2 is "
                       "'unsigned int'; use cujit_u32()");
  a[1] = cujit_i32(2); /* the sign counts too */
  assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is an int (i32), but parameter 2 is "
                       "'unsigned int'");
  memcpy(a, ok, sizeof a);
  a[3] = cujit_in(a, 8); /* a buffer where an integer goes */
  assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n), CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' is an In buffer (a device pointer), but parameter "
                       "4 is 'long long'");
  a[3] = cujit_ptr(0x2000); /* a pointer where an integer goes */
  assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n), CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' is a device pointer (ptr), but parameter 4 is "
                       "'long long'; use cujit_i64()");
  types_free(&k);
  cujit_module_destroy(m);
}

/* What each kind of parameter takes besides its own type. */
static void compatible_arguments_pass(void **state) {
  cujit_module *m = types_compile(kSwap, "swap.cu", NULL, NULL, NULL, 0);
  cujit_arg a[11];
  float f = 1;
  double d = 2;
  types_kernel k;
  (void)state;
  assert_ok(types_read(m, "k", 0, &k));
  swap_args(a);
  a[0] = cujit_value(&f, 4);      /* any parameter takes its bytes */
  a[2] = cujit_out(&d, sizeof d); /* a pointer takes In/Out buffers */
  a[4] = cujit_value(&d, 8);
  a[6] = cujit_i8(1);  /* bool takes u8 and i8 */
  a[9] = cujit_i64(7); /* a struct takes any value of its size */
  a[10].type = CUJIT_TYPE_BYTES;
  assert_ok(cj_args_check("k", k.n, k.sizes, k.types, a, k.n));
  a[7] = cujit_i16(1); /* __half: its bits by value, not an integer */
  assert_status_detail(cj_args_check("k", k.n, k.sizes, k.types, a, k.n), CUJIT_ERROR_INVALID_ARGS,
                       "argument 8 of kernel 'k' is a short (i16), but parameter 8 is '__half'");
  types_free(&k);
  cujit_module_destroy(m);
}

/* An extern "C" kernel's types are known to launches once probed (or a signature is set);
 * until then only sizes are checked. */
static void extern_c_kernels_once_probed(void **state) {
  cujit_module *m = types_compile(kSwap, "swap.cu", NULL, NULL, NULL, 0);
  cujit_arg a[2] = {cujit_u32(1), cujit_f32(2)};
  types_kernel k;
  (void)state;
  assert_int_equal(types_read(m, "ck", 0, &k), CUJIT_ERROR_NOT_FOUND);
  assert_ok(cj_args_check("ck", k.n, k.sizes, k.types, a, 2)); /* no types: sizes only */
  types_free(&k);
  assert_ok(types_read(m, "ck", 1, &k));
  assert_status_detail(cj_args_check("ck", k.n, k.sizes, k.types, a, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'ck' is an unsigned int (u32), but parameter 1 is "
                       "'float'; use cujit_f32()");
  types_free(&k);
  cujit_module_destroy(m);
}

/* An H100-like device. */
static const cj_limits kLim = {90, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 232448, 1,
                               1,  132};

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
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "block.x = 2048 exceeds the device's limit of 1024");
  assert_non_null(strstr(cujit_last_error(), "cannot launch kernel 'k'"));
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(1, 1, 65), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.z = 65 exceeds the device's limit of 64");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(64, 32), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "64 x 32 x 1 = 2048 threads exceeds the device's limit of 1024");
  assert_status_detail(cj_config_check("k", &kLim, 256, 0, CUJIT_DIM3(1), CUJIT_DIM3(512), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "512 threads exceeds this kernel's limit of 256");
  assert_non_null(strstr(cujit_last_error(), "cujit_function_suggest_block"));
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1, 65536), CUJIT_DIM3(1), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "grid.y = 65536 exceeds the device's limit of 65535");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(0), CUJIT_DIM3(1), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.x is 0");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 0, CUJIT_DIM3(1), CUJIT_DIM3(1, 0), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "block.y is 0");
  assert_status_detail(cj_config_check("k", &kLim, 1024, 16384, CUJIT_DIM3(1), CUJIT_DIM3(1),
                                       232448),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "248832 bytes of shared memory per block (16384 static + 232448 dynamic) "
                       "and the device allows at most 232448");
}

/* The hot path's test without messages agrees with the checks that give them, on every
 * side of each limit: a configuration passes it exactly when the checks pass and the
 * kernel's allowance for dynamic shared memory covers the request. */
static void the_fast_test_agrees_with_the_checks(void **state) {
  static const unsigned dims[] = {0,    1,    2,     63,    64,          65,          1023,
                                  1024, 1025, 65535, 65536, 2147483647u, 2147483648u, 4294967295u};
  static const unsigned smem[] = {0, 1, 49152, 49153, 216064, 216065, 232448, 232449};
  static const int kernel_max[] = {1024, 256}, static_smem[] = {0, 16384};
  /* the last allowance is more than the device allows with static memory: the device's
   * limit still holds */
  static const int allowance[] = {49152, 216064, 232448};
  cj_fslot slot;
  size_t a, b, c, k, s;
  int fits, checked, agreed = 1;
  (void)state;
  memset(&slot, 0, sizeof slot);
  slot.lim = &kLim;
  for (k = 0; k < 12; k++) {
    slot.max_threads = kernel_max[k & 1];
    slot.static_smem = static_smem[k >> 1 & 1];
    slot.dyn_smem_max = allowance[k >> 2];
    for (a = 0; a < CJ_COUNT(dims); a++)
      for (b = 0; b < CJ_COUNT(dims); b++)
        for (c = 0; c < 6; c++)
          for (s = 0; s < CJ_COUNT(smem); s++) {
            /* each dimension of the block and of the grid in turn takes dims[a] */
            unsigned v[6] = {1, 1, 1, 1, 1, 1};
            cujit_dim3 grid, block;
            v[c] = dims[a];
            v[(c + 1) % 6] = dims[b];
            block = CUJIT_DIM3(v[0], v[1], v[2]);
            grid = CUJIT_DIM3(v[3], v[4], v[5]);
            fits = cj_config_fits(&slot, grid, block, smem[s]);
            checked = cj_config_check("k", &kLim, slot.max_threads, slot.static_smem, grid, block,
                                      smem[s]) == CUJIT_OK &&
                      smem[s] <= (unsigned)slot.dyn_smem_max;
            if (fits != checked) {
              print_error("block %u x %u x %u, grid %u x %u x %u, %u bytes: fast %d, checks %d\n",
                          v[0], v[1], v[2], v[3], v[4], v[5], smem[s], fits, checked);
              agreed = 0;
            }
          }
  }
  assert_true(agreed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matching_arguments_pass),
      cmocka_unit_test(wrong_count_names_both_counts),
      cmocka_unit_test(wrong_size_names_parameter_expected_and_given),
      cmocka_unit_test(malformed_arguments_are_refused),
      cmocka_unit_test(a_pointer_for_cujit_call_is_refused_by_a_launch),
      cmocka_unit_test(same_size_swaps_are_refused),
      cmocka_unit_test(compatible_arguments_pass),
      cmocka_unit_test(extern_c_kernels_once_probed),
      cmocka_unit_test(configurations_within_limits_pass),
      cmocka_unit_test(each_limit_is_named),
      cmocka_unit_test(the_fast_test_agrees_with_the_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

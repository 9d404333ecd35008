/* test_args - the checks a launch makes before anything happens, against a kernel's
 * parameter layout and a device's limits given here (no device needed): argument count,
 * each argument's kind, size and type (against the types the compiler gives, NVRTC
 * compiling here), plain values taken, converted or refused at every edge of each scalar
 * type, grid, block and shared memory. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>

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
  assert_ok(cj_launch_check_args("k", 5, kSizes, NULL, args, 5));
  assert_ok(cj_launch_check_args("k", 0, NULL, NULL, NULL, 0));
}

static void wrong_count_names_both_counts(void **state) {
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0)};
  (void)state;
  assert_status_detail(cj_launch_check_args("multiply_them", 5, kSizes, NULL, args, 2),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'multiply_them' takes 5 arguments but 2 were given");
  assert_non_null(strstr(cujit_last_error(), "8, 8, 8, 4, 16"));
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
  assert_status_detail(cj_launch_check_args("k", 0, NULL, NULL, args, 1), CUJIT_ERROR_INVALID_ARGS,
                       "takes 0 arguments but 1 was given");
}

static void wrong_size_names_parameter_expected_and_given(void **state) {
  float host[4];
  cujit_arg args[] = {cujit_ptr(0), cujit_ptr(0), cujit_ptr(0), cujit_f64(1.0), cujit_u32(1)};
  (void)state;
  assert_status_detail(cj_launch_check_args("k", 5, kSizes, NULL, args, 5),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' has the wrong size: parameter 4 expects 4 bytes, "
                       "but 8 bytes were given (f64, by value)");
  assert_non_null(strstr(cujit_last_error(), "cujit_f32()"));
  args[3] = cujit_u32(1);
  assert_status_detail(cj_launch_check_args("k", 5, kSizes, NULL, args, 5),
                       CUJIT_ERROR_INVALID_ARGS,
                       "parameter 5 expects 16 bytes, but 4 bytes were given (u32, by value)");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_VALUE()"));
  args[4] = cujit_in(host, sizeof host); /* a pointer where a float4 goes */
  assert_status_detail(cj_launch_check_args("k", 5, kSizes, NULL, args, 5),
                       CUJIT_ERROR_INVALID_ARGS, "but 8 bytes were given (ptr, In buffer)");
  args[0] = cujit_i16(1);
  assert_status_detail(cj_launch_check_args("k", 5, kSizes, NULL, args, 5),
                       CUJIT_ERROR_INVALID_ARGS, "argument 1 of kernel 'k'");
}

static void malformed_arguments_are_refused(void **state) {
  static const size_t sizes[] = {8, 32};
  char big[32] = {0};
  cujit_arg args[] = {cujit_out(NULL, 16), cujit_value(big, sizeof big)};
  (void)state;
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is an Out buffer of 16 bytes with a NULL host "
                       "pointer");
  args[0] = cujit_out(NULL, 0); /* an empty buffer may be NULL: the kernel gets NULL */
  assert_ok(cj_launch_check_args("k", 2, sizes, NULL, args, 2));
  args[1].data = NULL;
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is a 32-byte value with no data");
  args[1] = cujit_value(big, sizeof big);
  args[0].kind = 7;
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' has unknown kind 7");
  args[0] = cujit_arr((const cujit_array *)(uintptr_t)0x40);
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is an array handle (cujit_arr()), which only "
                       "the generated kernels' calls take; pass cujit_array_arg(a)");
  args[0] = cujit_array_arg(NULL);
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is a destroyed or NULL array");
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, NULL, 2),
                       CUJIT_ERROR_INVALID_VALUE, "args is NULL but nargs is 2");
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
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
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
  assert_ok(cj_launch_check_args("k", k.n, k.sizes, k.types, ok, k.n));
  for (i = 0; i < k.n; i++) {
    for (j = i + 1; j < k.n; j++) {
      size_t bad;
      if (k.sizes[i] != k.sizes[j]) continue;
      memcpy(a, ok, sizeof a);
      a[i] = ok[j];
      a[j] = ok[i];
      bad = !cj_takes(k.types->accept[i], a[i].type)   ? i
            : !cj_takes(k.types->accept[j], a[j].type) ? j
                                                       : k.n;
      if (bad == k.n) { /* both take the other's: struct and vector parameters */
        assert_ok(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n));
        assert_true(k.types->p[i].want == CUJIT_TYPE_BYTES ||
                    k.types->p[j].want == CUJIT_TYPE_BYTES);
        continue;
      }
      snprintf(needle, sizeof needle, "argument %zu of kernel 'k' is ", bad + 1);
      assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
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
  assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is a float (f32), but parameter 2 is "
                       "'unsigned int'; use cujit_u32()");
  a[1] = cujit_i32(2); /* the sign counts too */
  assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'k' is an int (i32), but parameter 2 is "
                       "'unsigned int'");
  memcpy(a, ok, sizeof a);
  a[3] = cujit_in(a, 8); /* a buffer where an integer goes */
  assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 4 of kernel 'k' is an In buffer (a device pointer), but parameter "
                       "4 is 'long long'");
  a[3] = cujit_ptr(0x2000); /* a pointer where an integer goes */
  assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
                       CUJIT_ERROR_INVALID_ARGS,
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
  assert_ok(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n));
  a[7] = cujit_i16(1); /* __half: its bits by value, not an integer */
  assert_status_detail(cj_launch_check_args("k", k.n, k.sizes, k.types, a, k.n),
                       CUJIT_ERROR_INVALID_ARGS,
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
  assert_ok(cj_launch_check_args("ck", k.n, k.sizes, k.types, a, 2)); /* no types: sizes only */
  types_free(&k);
  assert_ok(types_read(m, "ck", 1, &k));
  assert_status_detail(cj_launch_check_args("ck", k.n, k.sizes, k.types, a, 2),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'ck' is an unsigned int (u32), but parameter 1 is "
                       "'float'; use cujit_f32()");
  types_free(&k);
  cujit_module_destroy(m);
}

/* ---- plain values ---- */

/* Arguments for kPlain's p made by the constructors, each of its parameter's type. */
static void plain_strict(cujit_arg *a) {
  static const struct {
    float x;
    int y;
  } st = {1, 2};
  static const struct { float x, y, z, w; } v = {1, 2, 3, 4};
  static const uint16_t half = 0x3c00;
  a[0] = cujit_bool(1);
  a[1] = cujit_i8(1);
  a[2] = cujit_i8(1);
  a[3] = cujit_u8(1);
  a[4] = cujit_i16(1);
  a[5] = cujit_u16(1);
  a[6] = cujit_i32(1);
  a[7] = cujit_u32(1);
  a[8] = cujit_i64(1);
  a[9] = cujit_u64(1);
  a[10] = cujit_i64(1);
  a[11] = cujit_u64(1);
  a[12] = cujit_f32(1);
  a[13] = cujit_f64(1);
  a[14] = cujit_value(&half, 2);
  a[15] = cujit_value(&half, 2);
  a[16] = cujit_ptr(0x1000);
  a[17] = CUJIT_VALUE(st);
  a[18] = CUJIT_VALUE(v);
  a[19] = cujit_i32(0);
}

static types_kernel plain_kernel;

static int plain_setup(void **state) {
  (void)state;
  *state = types_compile(kPlain, "plain.cu", NULL, NULL, NULL, 0);
  assert_ok(types_read(*state, "p", 0, &plain_kernel));
  assert_int_equal(plain_kernel.n, 20);
  return 0;
}

static int plain_teardown(void **state) {
  types_free(&plain_kernel);
  cujit_module_destroy(*state);
  return 0;
}

/* What a launch makes of argument `a` for parameter i of p, the others right: checked, and
 * converted where its parameter does not take it as it is. *out is what the kernel would
 * get; *converted says whether it was converted. */
static cujit_status plain_at(size_t i, cujit_arg a, cujit_arg *out, int *converted) {
  const types_kernel *k = &plain_kernel;
  cujit_arg args[20], conv[20];
  cujit_status st;
  plain_strict(args);
  args[i] = a;
  *converted = 0;
  if ((st = cj_launch_check_args("p", k->n, k->sizes, k->types, args, k->n)) != CUJIT_OK) return st;
  if (!cj_launch_plain_args(k->types, args, k->n)) {
    *out = args[i];
    return CUJIT_OK;
  }
  if ((st = cj_launch_convert_args("p", k->types, args, k->n, conv)) != CUJIT_OK) return st;
  assert_ok(cj_launch_check_args("p", k->n, k->sizes, k->types, conv, k->n)); /* launched so */
  assert_false(cj_launch_plain_args(k->types, conv, k->n));
  *out = conv[i];
  *converted = 1;
  return CUJIT_OK;
}

/* Parameter i takes `a` as it is. */
#define TAKEN(i, a)                               \
  do {                                            \
    cujit_arg in_ = (a), got_;                    \
    int conv_;                                    \
    assert_ok(plain_at((i), in_, &got_, &conv_)); \
    assert_false(conv_);                          \
    assert_memory_equal(&got_, &in_, sizeof in_); \
  } while (0)

/* Parameter i converts `a` to `n` bytes `v` of `type`. */
static void converted(size_t i, cujit_arg a, int type, const void *v, size_t n) {
  cujit_arg got;
  int conv;
  assert_ok(plain_at(i, a, &got, &conv));
  assert_true(conv);
  assert_int_equal(got.kind, CUJIT_ARG_VALUE);
  assert_int_equal(got.type, type);
  assert_int_equal(got.size, n);
  assert_memory_equal(got.value.bytes, v, n);
}

/* Parameter i refuses `a`, saying `needle`. */
static void refused(size_t i, cujit_arg a, const char *needle) {
  cujit_arg got;
  int conv;
  assert_status_detail(plain_at(i, a, &got, &conv), CUJIT_ERROR_INVALID_ARGS, needle);
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
}

/* A number of a C type CUJIT_LAUNCH() knows is a plain value of its own type. */
static void plain_values_are_tagged(void **state) {
  cujit_arg a = CUJIT_ARG_(-2);
  (void)state;
  assert_int_equal(a.type, CUJIT_TYPE_I32 + CUJIT_TYPE_PLAIN_);
  assert_int_equal(a.size, 4);
  assert_int_equal(CUJIT_ARG_((bool)1).type, CUJIT_TYPE_BOOL + CUJIT_TYPE_PLAIN_);
  assert_int_equal(CUJIT_ARG_((char)1).type,
                   ((char)-1 < 0 ? CUJIT_TYPE_I8 : CUJIT_TYPE_U8) + CUJIT_TYPE_PLAIN_);
  assert_int_equal(CUJIT_ARG_(1L).type,
                   (sizeof(long) == 8 ? CUJIT_TYPE_I64 : CUJIT_TYPE_I32) + CUJIT_TYPE_PLAIN_);
  assert_int_equal(CUJIT_ARG_(1UL).size, sizeof(long));
  assert_int_equal(CUJIT_ARG_((CUdeviceptr)1).type, CUJIT_TYPE_U64 + CUJIT_TYPE_PLAIN_);
  assert_int_equal(CUJIT_ARG_(1.0f).type, CUJIT_TYPE_F32 + CUJIT_TYPE_PLAIN_);
  assert_true(CUJIT_ARG_(0.1).value.f64 == 0.1);
  assert_int_equal(CUJIT_ARG_((float _Complex)2).type, CUJIT_TYPE_C64 + CUJIT_TYPE_PLAIN_);
  assert_int_equal(CUJIT_ARG_(cujit_i32(1)).type, CUJIT_TYPE_I32); /* a cujit_arg as it is */
}

/* Each parameter takes a plain value of its own type as it is, and a CUdeviceptr for a
 * pointer; the constructors' arguments keep their rule. */
static void plain_values_of_the_parameters_type_pass(void **state) {
  (void)state;
  TAKEN(0, CUJIT_ARG_((bool)1));
  if ((char)-1 < 0) TAKEN(1, CUJIT_ARG_((char)-1)); /* char is signed here, as CUDA's is */
  TAKEN(2, CUJIT_ARG_((signed char)-1));
  TAKEN(5, CUJIT_ARG_((unsigned short)65535));
  TAKEN(6, CUJIT_ARG_(INT_MIN));
  TAKEN(7, CUJIT_ARG_(UINT_MAX));
  if (sizeof(long) == 8) TAKEN(8, CUJIT_ARG_(LONG_MIN)); /* LP64: long is 64-bit */
  TAKEN(11, CUJIT_ARG_(ULLONG_MAX));
  TAKEN(12, CUJIT_ARG_(2.5f));
  TAKEN(13, CUJIT_ARG_(0.1));
  TAKEN(16, CUJIT_ARG_((CUdeviceptr)0x7f0000001000ull));
  assert_status_detail(plain_at(7, cujit_i32(1), &(cujit_arg){0}, &(int){0}),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 8 of kernel 'p' is an int (i32), but parameter 8 is 'unsigned "
                       "int'; use cujit_u32()"); /* a constructor's type is strict */
}

/* A plain value of another type is converted as C converts an argument to a prototyped
 * parameter, where it keeps its value. */
static void plain_values_are_converted(void **state) {
  int64_t i64 = -5;
  uint64_t u64 = UINT_MAX;
  int32_t i32 = 200, two = 2;
  uint8_t u8 = 200, one = 1, zero = 0;
  float f = 3, tenth = 0.1f, rounded = 16777216.0f, nan_f;
  double d = (double)0.1f;
  uint16_t h1 = 0x3c00, hmax = 0x7bff, hinf = 0x7c00, pi = 0x4049;
  (void)state;
  converted(0, CUJIT_ARG_(1), CUJIT_TYPE_BOOL, &one, 1);
  converted(0, CUJIT_ARG_(0.0), CUJIT_TYPE_BOOL, &zero, 1);
  converted(3, CUJIT_ARG_(200), CUJIT_TYPE_U8, &u8, 1);
  converted(6, CUJIT_ARG_((unsigned char)200), CUJIT_TYPE_I32, &i32, 4);
  converted(6, CUJIT_ARG_(2.0), CUJIT_TYPE_I32, &two, 4);
  converted(8, CUJIT_ARG_(-5), CUJIT_TYPE_I64, &i64, 8); /* long: sign-extended */
  converted(10, CUJIT_ARG_((short)-5), CUJIT_TYPE_I64, &i64, 8);
  converted(11, CUJIT_ARG_(UINT_MAX), CUJIT_TYPE_U64, &u64, 8);
  u64 = 0xC0DE000000001234ull; /* a number with a reference's top bits is still the number */
  converted(11, CUJIT_ARG_(u64), CUJIT_TYPE_U64, &u64, 8);
  converted(12, CUJIT_ARG_(3), CUJIT_TYPE_F32, &f, 4);
  converted(12, CUJIT_ARG_(0.1), CUJIT_TYPE_F32, &tenth, 4);             /* the nearest float */
  converted(12, CUJIT_ARG_(16777217), CUJIT_TYPE_F32, &rounded, 4);      /* rounded, as C does */
  converted(13, CUJIT_ARG_(0.1f), CUJIT_TYPE_F64, &d, 8);                /* exactly */
  converted(14, CUJIT_ARG_(1.0), CUJIT_TYPE_F16, &h1, 2);                /* __half */
  converted(14, CUJIT_ARG_(65504), CUJIT_TYPE_F16, &hmax, 2);            /* its largest */
  converted(14, CUJIT_ARG_((double)INFINITY), CUJIT_TYPE_F16, &hinf, 2); /* infinities pass */
  converted(15, CUJIT_ARG_(3.140625), CUJIT_TYPE_BF16, &pi, 2);          /* __nv_bfloat16 */
  {
    cujit_arg got;
    int conv;
    assert_ok(plain_at(12, CUJIT_ARG_((double)NAN), &got, &conv)); /* NaN passes to a float */
    memcpy(&nan_f, got.value.bytes, 4);
    assert_true(conv && isnan(nan_f));
  }
}

/* Where C would wrap, truncate or leave the result undefined, the value is refused, naming
 * the argument, its type and value, and the parameter's type. */
static void plain_values_that_would_change_are_refused(void **state) {
  (void)state;
  refused(6, CUJIT_ARG_((long long)INT_MAX + 1),
          "argument 7 of kernel 'p' is a long long (i64) 2147483648, but parameter 7 is 'int': "
          "out of the parameter type's range (C would wrap it or leave it undefined); nothing "
          "was launched");
  refused(7, CUJIT_ARG_(-1),
          "argument 8 of kernel 'p' is an int (i32) -1, but parameter 8 is 'unsigned int': out "
          "of the parameter type's range");
  refused(6, CUJIT_ARG_(2.5),
          "argument 7 of kernel 'p' is a double (f64) 2.5, but parameter 7 is 'int': not an "
          "integer (C would truncate it, or leave it undefined); round it first, or declare the "
          "parameter as a float type; nothing was launched");
  refused(12, CUJIT_ARG_(1e300),
          "argument 13 of kernel 'p' is a double (f64) 1.0000000000000001e+300, but parameter "
          "13 is 'float': beyond the parameter type's range (C leaves that undefined)");
  refused(14, CUJIT_ARG_(70000),
          "argument 15 of kernel 'p' is an int (i32) 70000, but parameter 15 is '__half': "
          "beyond the parameter type's range");
  refused(14, CUJIT_ARG_(65520.0), "is a double (f64) 65520, but parameter 15 is '__half'");
  refused(6, CUJIT_ARG_((double)NAN),
          "is a double (f64) nan, but parameter 7 is 'int': not an "
          "integer");
  refused(10, CUJIT_ARG_((float)INFINITY),
          "is a float (f32) inf, but parameter 11 is 'long long': not an integer");
  refused(7, CUJIT_ARG_((double)-INFINITY), "-inf, but parameter 8 is 'unsigned int'");
  refused(0, CUJIT_ARG_(2),
          "argument 1 of kernel 'p' is an int (i32) 2, but parameter 1 is 'bool': a bool takes "
          "0 and 1 (false and true) only");
  refused(0, CUJIT_ARG_(0.5), "a double (f64) 0.5, but parameter 1 is 'bool'");
  /* char's signedness counts as C's does */
  refused(3, CUJIT_ARG_((signed char)-1),
          "argument 4 of kernel 'p' is a signed char (i8) -1, but parameter 4 is 'unsigned "
          "char': out of the parameter type's range");
  refused(2, CUJIT_ARG_((unsigned char)200),
          "an unsigned char (u8) 200, but parameter 3 is 'signed char': out of");
  refused(1, CUJIT_ARG_((unsigned char)200), "parameter 2 is 'char': out of");
  refused(5, CUJIT_ARG_(65536), "an int (i32) 65536, but parameter 6 is 'unsigned short'");
  /* long is 64-bit on LP64, and a long long's message names the width */
  if (sizeof(long) == 8) {
    refused(6, CUJIT_ARG_(LONG_MAX),
            "a long long (i64) 9223372036854775807, but parameter 7 is "
            "'int': out of the parameter type's range");
    refused(8, CUJIT_ARG_(ULONG_MAX),
            "an unsigned long long (u64) 18446744073709551615, but "
            "parameter 9 is 'long': out of");
  }
  refused(12, CUJIT_ARG_((float _Complex)1),
          "a complex float (c64) (1, 0), but parameter 13 is 'float': a complex value for a "
          "real parameter (C would drop its imaginary part)");
  /* a pointer takes a device pointer; a struct, vector or enum no plain value */
  refused(16, CUJIT_ARG_(0),
          "argument 17 of kernel 'p' is an int (i32) 0, but parameter 17 is 'int *': a pointer "
          "parameter takes a device pointer: a CUdeviceptr, cujit_ptr() or an In/Out buffer");
  refused(16, CUJIT_ARG_(4096.0), "a double (f64) 4096, but parameter 17 is 'int *'");
  refused(16, CUJIT_ARG_(CUJIT_IN_PTR(&(float){1}, 4)),
          "but parameter 17 is 'int *': CUJIT_IN_PTR(), CUJIT_OUT_PTR(), CUJIT_INOUT_PTR() and "
          "cujit_arg_ref() are for cujit_call() and bound functions; a launch takes cujit_in(), "
          "cujit_out() and cujit_inout()");
  refused(17, CUJIT_ARG_(1),
          "an int (i32) 1, but parameter 18 is 'P': a plain value is converted only to a bool, "
          "integer or floating parameter; give this one with a constructor of its size or "
          "CUJIT_VALUE()");
  refused(18, CUJIT_ARG_(1.0f), "a float (f32) 1, but parameter 19 is 'float4': a plain value");
  refused(19, CUJIT_ARG_(1), "an int (i32) 1, but parameter 20 is 'E': a plain value");
}

/* Where a kernel's types are unknown, a plain value waits for them: its size is not
 * checked, and the launch asks for the types before it converts. */
static void plain_values_wait_for_unknown_types(void **state) {
  static const size_t sizes[] = {4, 8};
  cujit_arg a[2] = {CUJIT_ARG_(2.5), CUJIT_ARG_(3)};
  (void)state;
  assert_ok(cj_launch_check_args("ck", 2, sizes, NULL, a, 2));
  assert_true(cj_launch_plain_args(NULL, a, 2));
  a[0] = cujit_f32(2.5f);
  a[1] = cujit_i64(3);
  assert_false(cj_launch_plain_args(NULL, a, 2));
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
      cmocka_unit_test(plain_values_are_tagged),
      cmocka_unit_test_setup_teardown(plain_values_of_the_parameters_type_pass, plain_setup,
                                      plain_teardown),
      cmocka_unit_test_setup_teardown(plain_values_are_converted, plain_setup, plain_teardown),
      cmocka_unit_test_setup_teardown(plain_values_that_would_change_are_refused, plain_setup,
                                      plain_teardown),
      cmocka_unit_test(plain_values_wait_for_unknown_types),
      cmocka_unit_test(configurations_within_limits_pass),
      cmocka_unit_test(each_limit_is_named),
      cmocka_unit_test(the_fast_test_agrees_with_the_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gpu_call - signatures on a GPU: every scalar type and width reaches the kernel
 * bit-exact through the three call forms (cujit_launch, with numbers too, cujit_call, a
 * bound function pointer, also with integers and floating-point values past the
 * registers), float against double, structs and vector types by value at the driver's
 * offsets, In/Out buffers, stream and shared memory of bound functions, and
 * mismatched signatures and arguments of the wrong type refused before anything is
 * launched; a failing bound call reaches the error handler. The types come from the
 * compiler: C++ kernels' symbols, and for the extern "C" kernels the probe compiled at
 * their first typed call. */
#include <limits.h>
#include <vector_types.h> /* float4, double2, char3, int2 as C structs */

#include "testutil.h"
#include "kernelsrc.h"

static cujit_module *mod;

static cujit_function *fn_of(const char *name) {
  cujit_function *fn = NULL;
  assert_ok(cujit_module_get_function(mod, name, &fn));
  return fn;
}

/* ---- every scalar type, bit-exact ---- */

enum { SLOT = 16, SLOTS = 16 };

/* The kernels write each parameter's bytes at the start of a 16-byte slot of an Out
 * buffer; the rest of the buffer is uninitialised device memory. `bytes` lists how many
 * bytes of each slot to compare (ended by 0; -1 skips a slot). */
static void compare_slots(const unsigned char *got, const unsigned char *want, const int *bytes,
                          const char *form) {
  int s, i;
  for (s = 0; bytes[s]; s++)
    for (i = 0; i < bytes[s]; i++)
      if (got[s * SLOT + i] != want[s * SLOT + i])
        fail_msg("%s: slot %d byte %d is 0x%02x, wanted 0x%02x", form, s, i, got[s * SLOT + i],
                 want[s * SLOT + i]);
}

static const int scalar_bytes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2, 1, 1, 8, 0};

typedef cujit_status (*scalars_fn)(cujit_dim3, cujit_dim3, int8_t, uint8_t, int16_t, uint16_t,
                                   int32_t, uint32_t, int64_t, uint64_t, float, double,
                                   float /* __half */, float /* __nv_bfloat16 */,
                                   uint8_t /* bool */, char, size_t, CUdeviceptr);

/* What the scalars kernel writes back for the values used below. */
static void scalars_expected(unsigned char *e) {
  int8_t a = -128;
  uint8_t b = 255, m = 1;
  int16_t c = -32768;
  uint16_t d = 65535, k = 0x3555 /* 1/3 */, l = 0x4049 /* 3.140625 */;
  int32_t ev = INT_MIN;
  uint32_t f = 0xFFFFFFFFu;
  int64_t g = INT64_MIN + 12345;
  uint64_t h = 0xFEDCBA9876543210ull, o = 123456789012ull;
  float i = 0.1f;
  double j = 0.1;
  char n = 'x';
  memset(e, 0, SLOT * SLOTS);
  memcpy(e + 0 * SLOT, &a, 1);
  memcpy(e + 1 * SLOT, &b, 1);
  memcpy(e + 2 * SLOT, &c, 2);
  memcpy(e + 3 * SLOT, &d, 2);
  memcpy(e + 4 * SLOT, &ev, 4);
  memcpy(e + 5 * SLOT, &f, 4);
  memcpy(e + 6 * SLOT, &g, 8);
  memcpy(e + 7 * SLOT, &h, 8);
  memcpy(e + 8 * SLOT, &i, 4);
  memcpy(e + 9 * SLOT, &j, 8);
  memcpy(e + 10 * SLOT, &k, 2);
  memcpy(e + 11 * SLOT, &l, 2);
  memcpy(e + 12 * SLOT, &m, 1);
  memcpy(e + 13 * SLOT, &n, 1);
  memcpy(e + 14 * SLOT, &o, 8);
}

static void scalars_bit_exact(void **state) {
  cujit_function *fn = fn_of("scalars");
  unsigned char want[SLOT * SLOTS], got[SLOT * SLOTS];
  uint16_t half = 0x3555, bf = 0x4049;
  void *ptr = NULL;
  (void)state;
  scalars_expected(want);
  assert_string_equal(cujit_function_signature(fn),
                      "i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 f16 bf16 u8 i8 u64 ptr");
  /* cujit_launch with typed arguments */
  memset(got, 0xAA, sizeof got);
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_i8(-128), cujit_u8(255),
                         cujit_i16(-32768), cujit_u16(65535), cujit_i32(INT_MIN),
                         cujit_u32(0xFFFFFFFFu), cujit_i64(INT64_MIN + 12345),
                         cujit_u64(0xFEDCBA9876543210ull), cujit_f32(0.1f), cujit_f64(0.1),
                         cujit_value(&half, 2), cujit_value(&bf, 2), cujit_u8(1), cujit_i8('x'),
                         cujit_u64(123456789012ull), cujit_out(got, sizeof got)));
  compare_slots(got, want, scalar_bytes, "cujit_launch");
  /* cujit_call: C values, converted to the parameters' types */
  memset(got, 0xAA, sizeof got);
  assert_ok(cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), -128, 255, -32768, 65535, INT_MIN,
                       0xFFFFFFFFu, (long long)INT64_MIN + 12345, 0xFEDCBA9876543210ull, 0.1f, 0.1,
                       1.0 / 3, 3.140625, 1, 'x', (size_t)123456789012ull,
                       CUJIT_OUT_PTR(got, sizeof got)));
  compare_slots(got, want, scalar_bytes, "cujit_call");
  /* a bound function pointer: the compiler converts each argument */
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  memset(got, 0xAA, sizeof got);
  assert_ok(((scalars_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), -128, 255, -32768, 65535, INT_MIN,
                              0xFFFFFFFFu, INT64_MIN + 12345, 0xFEDCBA9876543210ull, 0.1f, 0.1,
                              1.0f / 3, 3.140625f, 1, 'x', 123456789012ull,
                              CUJIT_OUT_PTR(got, sizeof got)));
  compare_slots(got, want, scalar_bytes, "bound pointer");
}

/* The same with device memory for the output: no In/Out argument, so cujit_call and the
 * bound pointer take their direct paths (arguments straight into the parameter array). */
static void scalars_bit_exact_direct(void **state) {
  cujit_function *fn = fn_of("scalars");
  unsigned char want[SLOT * SLOTS], got[SLOT * SLOTS];
  CUdeviceptr d = 0;
  void *ptr = NULL;
  int round;
  (void)state;
  scalars_expected(want);
  assert_ok(cujit_mem_alloc(&d, sizeof got));
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  for (round = 0; round < 2; round++) {
    memset(got, 0xAA, sizeof got);
    assert_ok(cujit_mem_copy_htod(d, got, sizeof got));
    if (round == 0)
      assert_ok(cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), -128, 255, -32768, 65535, INT_MIN,
                           0xFFFFFFFFu, (long long)INT64_MIN + 12345, 0xFEDCBA9876543210ull, 0.1f,
                           0.1, 1.0 / 3, 3.140625, 1, 'x', (size_t)123456789012ull, d));
    else
      assert_ok(((scalars_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), -128, 255, -32768, 65535, INT_MIN,
                                  0xFFFFFFFFu, INT64_MIN + 12345, 0xFEDCBA9876543210ull, 0.1f, 0.1,
                                  1.0f / 3, 3.140625f, 1, 'x', 123456789012ull, d));
    assert_ok(cujit_mem_copy_dtoh(got, d, sizeof got));
    compare_slots(got, want, scalar_bytes,
                  round == 0 ? "cujit_call (direct)" : "bound pointer (direct)");
  }
  cujit_function_unbind(fn, ptr);
  assert_ok(cujit_mem_free(d));
}

/* ---- numbers as plain values ---- */

/* CUJIT_LAUNCH() given numbers: each reaches the kernel as its parameter's type, converted
 * where it is another (here first, so that the extern "C" kernel's types are asked of the
 * compiler by this launch); PyCUDA's habit, an InOut buffer and a number; and a number
 * that would not keep its value launches nothing. */
static void plain_values_reach_the_kernel(void **state) {
  enum { LEN = 64, USED = 48 };
  cujit_function *fn = fn_of("scalars"), *sc = fn_of("scale"), *ramp = fn_of("ramp");
  unsigned char want[SLOT * SLOTS], got[SLOT * SLOTS];
  float x[LEN], y[LEN];
  CUdeviceptr d = 0;
  int i;
  (void)state;
  scalars_expected(want);
  memset(got, 0xAA, sizeof got);
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), -128, 255, -32768, 65535, INT_MIN,
                         0xFFFFFFFFu, (long long)INT64_MIN + 12345, 0xFEDCBA9876543210ull, 0.1f,
                         0.1, 1.0 / 3, 3.140625, 1, 'x', 123456789012ull,
                         cujit_out(got, sizeof got)));
  compare_slots(got, want, scalar_bytes, "CUJIT_LAUNCH with numbers");
  for (i = 0; i < LEN; i++) x[i] = (float)i;
  assert_ok(CUJIT_LAUNCH(sc, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_inout(x, sizeof x), 3));
  for (i = 0; i < LEN; i++)
    if (x[i] != 3.0f * (float)i) fail_msg("x[%d] = %g", i, x[i]);
  assert_ok(cujit_mem_alloc(&d, sizeof y));
  for (i = 0; i < LEN; i++) y[i] = -1.0f;
  assert_ok(cujit_mem_copy_htod(d, y, sizeof y));
  assert_status_detail(CUJIT_LAUNCH(ramp, CUJIT_DIM3(1), CUJIT_DIM3(LEN), 2.5, -1, d),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'ramp' is an int (i32) -1, but parameter 2 is "
                       "'unsigned int': out of the parameter type's range");
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(y, d, sizeof y));
  for (i = 0; i < LEN; i++) assert_true(y[i] == -1.0f); /* nothing ran */
  assert_ok(CUJIT_LAUNCH(ramp, CUJIT_DIM3(1), CUJIT_DIM3(LEN), 2.5, USED, d));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(y, d, sizeof y));
  for (i = 0; i < LEN; i++) assert_true(y[i] == (i < USED ? 2.5f * (float)i : -1.0f));
  assert_ok(cujit_mem_free(d));
}

/* ---- past the registers, on the direct path ---- */

/* With the grid and block in four integer registers, the integers and the pointer here
 * overflow the other two and the floating-point values the eight vector registers: both
 * reach the stack, interleaved, and a bound pointer hands their places to the driver as
 * they are (no In/Out, no 16-bit float). */
static const char kSpillSource[] =
    "#define PUT(slot, v) memcpy(out + 16 * (slot), &(v), sizeof(v))\n"
    "extern \"C\" __global__ void spill(int a, float f0, double d1, float f2, double d3,\n"
    "    float f4, double d5, float f6, double d7, float f8, double d9, long long b,\n"
    "    float f10, unsigned char *out, short c, double d11) {\n"
    "  PUT(0, a); PUT(1, f0); PUT(2, d1); PUT(3, f2); PUT(4, d3); PUT(5, f4); PUT(6, d5);\n"
    "  PUT(7, f6); PUT(8, d7); PUT(9, f8); PUT(10, d9); PUT(11, b); PUT(12, f10);\n"
    "  PUT(13, c); PUT(14, d11);\n"
    "}\n";
typedef cujit_status (*spill_fn)(cujit_dim3, cujit_dim3, int, float, double, float, double, float,
                                 double, float, double, float, double, long long, float,
                                 CUdeviceptr, short, double);
static const int spill_bytes[] = {4, 4, 8, 4, 8, 4, 8, 4, 8, 4, 8, 8, 4, 2, 8, 0};

static void bound_direct_past_the_registers(void **state) {
  cujit_module *m = NULL;
  cujit_function *fn = NULL;
  unsigned char want[SLOT * SLOTS], got[SLOT * SLOTS];
  const float f[6] = {1.5f, -2.25f, 3e-20f, 4e20f, 0.1f, -7.0f};
  const double d[6] = {1.0 / 3, -1e300, 2.0 / 7, 1e-300, 0.1, 42.5};
  const int a = INT_MIN + 5;
  const long long b = LLONG_MAX - 9;
  const short c = -12345;
  CUdeviceptr dev = 0;
  void *ptr = NULL;
  int k;
  (void)state;
  memset(want, 0, sizeof want);
  memcpy(want, &a, 4);
  for (k = 0; k < 5; k++) {
    memcpy(want + (1 + 2 * k) * SLOT, &f[k], 4);
    memcpy(want + (2 + 2 * k) * SLOT, &d[k], 8);
  }
  memcpy(want + 11 * SLOT, &b, 8);
  memcpy(want + 12 * SLOT, &f[5], 4);
  memcpy(want + 13 * SLOT, &c, 2);
  memcpy(want + 14 * SLOT, &d[5], 8);
  assert_ok(cujit_module_from_source(&m, kSpillSource, "spill.cu", NULL));
  assert_ok(cujit_module_get_function(m, "spill", &fn));
  assert_ok(cujit_mem_alloc(&dev, sizeof got));
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  memset(got, 0xAA, sizeof got);
  assert_ok(cujit_mem_copy_htod(dev, got, sizeof got));
  assert_ok(((spill_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), a, f[0], d[0], f[1], d[1], f[2], d[2],
                            f[3], d[3], f[4], d[4], b, f[5], dev, c, d[5]));
  assert_ok(cujit_mem_copy_dtoh(got, dev, sizeof got));
  compare_slots(got, want, spill_bytes, "bound pointer (direct)");
  assert_ok(cujit_mem_free(dev));
  cujit_module_destroy(m);
}

/* ---- float against double ---- */

typedef cujit_status (*promote_fn)(cujit_dim3, cujit_dim3, float, double, float, CUdeviceptr);

static void float_and_double(void **state) {
  cujit_function *fn = fn_of("promote");
  double out[3];
  float narrow = 0.1f;
  void *ptr;
  (void)state;
  /* 16777217 is exact as a double but not as a float: a float parameter rounds it */
  assert_ok(cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 16777217.0, 16777217.0, narrow,
                       CUJIT_OUT_PTR(out, sizeof out)));
  assert_true(out[0] == 16777216.0);
  assert_true(out[1] == 16777217.0);
  assert_true(out[2] == (double)0.1f); /* a float promoted to double comes back unchanged */
  assert_true(out[2] != 0.1);
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  assert_ok(((promote_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0.1f, 0.1, 2.5f,
                              CUJIT_OUT_PTR(out, sizeof out)));
  assert_true(out[0] == (double)0.1f);
  assert_true(out[1] == 0.1);
  assert_true(out[2] == 2.5);
}

/* ---- structs and vectors by value ---- */

typedef struct P {
  float a;
  int b;
  double c;
} P;
typedef struct __attribute__((aligned(16))) A {
  float x, y, z;
} A;
typedef struct N {
  short s[3];
  double d[2];
} N;

/* The compiler names P, A and N only: bound, they are opaque bytes passed by address. With
 * an explicit signature that gives their members, they are passed by value. */
typedef cujit_status (*aggregates_fn)(cujit_dim3, cujit_dim3, char, float4, char, double2,
                                      const void *, char3, const void *, const void *, int2,
                                      CUdeviceptr);
typedef cujit_status (*aggregates_by_value_fn)(cujit_dim3, cujit_dim3, char, float4, char, double2,
                                               P, char3, A, N, int2, CUdeviceptr);

typedef struct values {
  char c0, c1;
  float4 v;
  double2 w;
  P p;
  char3 c3;
  A a;
  N n;
  int2 i2;
} values;

static void values_init(values *x) {
  memset(x, 0, sizeof *x);
  x->c0 = 'a';
  x->c1 = 'b';
  x->v = (float4){1.5f, -2.25f, 3e-20f, 4e20f};
  x->w = (double2){1.0 / 3, -1e300};
  x->p = (P){0.75f, -123456, 2.0 / 7};
  x->c3 = (char3){-1, 2, -3};
  x->a = (A){7, 8, 9};
  x->n = (N){{-4, 5, -6}, {1e-300, 42}};
  x->i2 = (int2){INT_MIN, INT_MAX};
}

static void values_expected(const values *x, unsigned char *e) {
  memset(e, 0, SLOT * SLOTS);
  memcpy(e + 0 * SLOT, &x->c0, 1);
  memcpy(e + 1 * SLOT, &x->v, 16);
  memcpy(e + 2 * SLOT, &x->c1, 1);
  memcpy(e + 3 * SLOT, &x->w, 16);
  memcpy(e + 4 * SLOT, &x->p, 16);
  memcpy(e + 5 * SLOT, &x->c3, 3);
  memcpy(e + 6 * SLOT, &x->a, 12); /* the kernel writes sizeof(A) = 16; padding is zero */
  memcpy(e + 7 * SLOT, x->n.s, 6);
  memcpy(e + 7 * SLOT + 8, x->n.d, 16);
  memcpy(e + 9 * SLOT, &x->i2, 8);
}

/* Bytes compared per slot: padding is left out (A's last 4 bytes; N, which spans slots 7
 * and 8, has 2 bytes of padding after its shorts, so its slot 7 is compared in full only
 * up to them and its doubles through slot 8). */
static const int aggregate_bytes[] = {1, 16, 1, 16, 16, 3, 12, 6, 8, 8, 0};

static void compare_aggregates(const unsigned char *got, const unsigned char *want,
                               const char *form) {
  compare_slots(got, want, aggregate_bytes, form);
  if (memcmp(got + 7 * SLOT + 8, want + 7 * SLOT + 8, 8) != 0) fail_msg("%s: N.d[0] differs", form);
}

static void structs_and_vectors(void **state) {
  cujit_function *fn = fn_of("aggregates");
  values x;
  unsigned char want[SLOT * SLOTS], got[SLOT * SLOTS];
  void *ptr;
  (void)state;
  assert_int_equal(sizeof(A), 16);
  assert_int_equal(sizeof(N), 24);
  values_init(&x);
  values_expected(&x, want);
  assert_string_equal(cujit_function_signature(fn),
                      "i8 f32x4 i8 f64x2 b16:8 i8x3 b16:16 b24:8 i32x2 ptr");
  memset(got, 0xAA, sizeof got);
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_i8(x.c0), CUJIT_VALUE(x.v),
                         cujit_i8(x.c1), CUJIT_VALUE(x.w), CUJIT_VALUE(x.p), CUJIT_VALUE(x.c3),
                         CUJIT_VALUE(x.a), CUJIT_VALUE(x.n), CUJIT_VALUE(x.i2),
                         cujit_out(got, sizeof got)));
  compare_aggregates(got, want, "cujit_launch");
  memset(got, 0xAA, sizeof got);
  assert_ok(cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), x.c0, &x.v, x.c1, &x.w, &x.p, &x.c3, &x.a,
                       &x.n, &x.i2, CUJIT_OUT_PTR(got, sizeof got)));
  compare_aggregates(got, want, "cujit_call");
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  memset(got, 0xAA, sizeof got);
  assert_ok(((aggregates_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), x.c0, x.v, x.c1, x.w, &x.p, x.c3,
                                 &x.a, &x.n, x.i2, CUJIT_OUT_PTR(got, sizeof got)));
  compare_aggregates(got, want, "bound pointer");
  /* the members given explicitly: the structs go by value */
  assert_ok(cujit_function_set_signature(fn, "i8 f32x4 i8 f64x2 {f32 i32 f64} i8x3 "
                                             "{f32 f32 f32}:16 {{i16[3]} f64[2]} i32x2 ptr"));
  assert_ok(cujit_function_bind(fn, NULL, &ptr));
  memset(got, 0xAA, sizeof got);
  assert_ok(((aggregates_by_value_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), x.c0, x.v, x.c1, x.w, x.p,
                                          x.c3, x.a, x.n, x.i2, CUJIT_OUT_PTR(got, sizeof got)));
  compare_aggregates(got, want, "bound pointer, structs by value");
}

/* ---- In/Out buffers ---- */

typedef cujit_status (*mul_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, CUdeviceptr);
typedef cujit_status (*scale_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, float);

static void in_out_through_every_form(void **state) {
  enum { LEN = 256 };
  cujit_function *mul = fn_of("multiply_them"), *sc = fn_of("scale");
  float a[LEN], b[LEN], dest[LEN], x[LEN];
  CUdeviceptr da = 0;
  void *pm, *ps;
  int i, form;
  (void)state;
  for (i = 0; i < LEN; i++) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(LEN - i);
  }
  assert_ok(cujit_mem_alloc(&da, sizeof a));
  assert_ok(cujit_mem_copy_htod(da, a, sizeof a));
  assert_ok(cujit_function_bind(mul, NULL, &pm));
  assert_ok(cujit_function_bind(sc, NULL, &ps));
  for (form = 0; form < 3; form++) {
    memset(dest, 0, sizeof dest);
    for (i = 0; i < LEN; i++) x[i] = (float)i;
    if (form == 0) {
      assert_ok(CUJIT_LAUNCH(mul, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_out(dest, sizeof dest),
                             cujit_ptr(da), cujit_in(b, sizeof b)));
      assert_ok(
          CUJIT_LAUNCH(sc, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_inout(x, sizeof x), cujit_f32(3)));
    } else if (form == 1) {
      assert_ok(cujit_call(mul, CUJIT_DIM3(1), CUJIT_DIM3(LEN), CUJIT_OUT_PTR(dest, sizeof dest),
                           da, CUJIT_IN_PTR(b, sizeof b)));
      assert_ok(cujit_call(sc, CUJIT_DIM3(1), CUJIT_DIM3(LEN), CUJIT_INOUT_PTR(x, sizeof x), 3.0));
    } else {
      assert_ok(((mul_fn)pm)(CUJIT_DIM3(1), CUJIT_DIM3(LEN), CUJIT_OUT_PTR(dest, sizeof dest), da,
                             CUJIT_IN_PTR(b, sizeof b)));
      assert_ok(((scale_fn)ps)(CUJIT_DIM3(1), CUJIT_DIM3(LEN), CUJIT_INOUT_PTR(x, sizeof x), 3));
    }
    for (i = 0; i < LEN; i++) {
      if (dest[i] != a[i] * b[i]) fail_msg("form %d: dest[%d] = %g", form, i, dest[i]);
      if (x[i] != 3.0f * (float)i) fail_msg("form %d: x[%d] = %g", form, i, x[i]);
    }
  }
  assert_ok(cujit_mem_free(da));
}

/* ---- stream and shared memory of a bound function ---- */

typedef cujit_status (*reverse_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, CUdeviceptr, int);

static void bound_stream_and_shared(void **state) {
  enum { LEN = 1024 };
  cujit_function *fn = fn_of("reverse");
  cujit_launch_options o = {0};
  float x[LEN], y[LEN];
  CUdeviceptr dx = 0, dy = 0;
  void *ptr;
  int i, n;
  (void)state;
  for (i = 0; i < LEN; i++) x[i] = (float)i;
  assert_ok(cujit_stream_create(&o.stream));
  assert_ok(cujit_mem_alloc(&dx, sizeof x));
  assert_ok(cujit_mem_alloc(&dy, sizeof y));
  assert_ok(cujit_mem_copy_htod(dx, x, sizeof x));
  assert_ok(cujit_function_bind(fn, &o, &ptr));
  for (n = 256; n <= LEN; n *= 4) { /* the options are read at each call */
    o.shared_bytes = (unsigned)(n * sizeof(float));
    assert_ok(((reverse_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3((unsigned)n), dx, dy, n));
    assert_ok(cujit_stream_synchronize(o.stream));
    assert_ok(cujit_mem_copy_dtoh(y, dy, (size_t)n * sizeof(float)));
    for (i = 0; i < n; i++)
      if (y[i] != (float)(n - 1 - i)) fail_msg("n = %d: y[%d] = %g", n, i, y[i]);
  }
  cujit_function_unbind(fn, ptr);
  assert_ok(cujit_mem_free(dx));
  assert_ok(cujit_mem_free(dy));
  assert_ok(cujit_stream_destroy(o.stream));
}

/* ---- mismatches are refused and launch nothing ---- */

static void mismatches_refused(void **state) {
  enum { LEN = 32 };
  cujit_function *mul = fn_of("multiply_them"), *agg = fn_of("aggregates");
  float a[LEN], dest[LEN];
  int i;
  (void)state;
  for (i = 0; i < LEN; i++) a[i] = 1;
  assert_status_detail(cujit_function_set_signature(mul, "ptr ptr"), CUJIT_ERROR_SIGNATURE,
                       "has 2 parameters, but kernel 'multiply_them' has 3");
  assert_status_detail(cujit_function_set_signature(mul, "ptr ptr u32"), CUJIT_ERROR_SIGNATURE,
                       "parameter 3 (u32): the signature puts 4 bytes at offset 16, but kernel "
                       "'multiply_them' takes 8 bytes at offset 16");
  assert_status_detail(cujit_function_set_signature(agg, "i8 b16 i8 f64x2 {f32 i32 f64} i8x3 "
                                                         "{f32 f32 f32}:16 {{i16[3]} f64[2]} "
                                                         "i32x2 ptr"),
                       CUJIT_ERROR_SIGNATURE, "the alignment differs");
  assert_ok(cujit_function_set_signature(agg, "i8 b16:16 i8 b16:16 b16:8 b3 b16:16 b24:8 b8:8 "
                                              "ptr")); /* opaque, but it fits */
  assert_ok(cujit_function_set_signature(agg, "i8 f32x4 i8 f64x2 {f32 i32 f64} i8x3 "
                                              "{f32 f32 f32}:16 {{i16[3]} f64[2]} i32x2 ptr"));
  memset(dest, 0, sizeof dest);
  assert_status_detail(cujit_call(mul, CUJIT_DIM3(1), CUJIT_DIM3(LEN),
                                  CUJIT_OUT_PTR(dest, sizeof dest), CUJIT_IN_PTR(a, sizeof a)),
                       CUJIT_ERROR_INVALID_ARGS, "takes 3 arguments (ptr ptr ptr) but 2");
  assert_status_detail(cujit_call(mul, CUJIT_DIM3(1), CUJIT_DIM3(LEN),
                                  CUJIT_OUT_PTR(dest, sizeof dest), CUJIT_IN_PTR(a, sizeof a),
                                  CUJIT_IN_PTR(a, sizeof a), 7),
                       CUJIT_ERROR_INVALID_ARGS, "but 4 were given");
  for (i = 0; i < LEN; i++) assert_true(dest[i] == 0); /* nothing ran */
  assert_status_detail(cujit_call(fn_of("scalars"), CUJIT_DIM3(1), CUJIT_DIM3(1), 300, 0, 0, 0, 0,
                                  0, 0LL, 0ULL, 0.0, 0.0, 0.0, 0.0, 0, 0, (size_t)0,
                                  (CUdeviceptr)0),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'scalars', parameter 1 (i8): given an int (i32) 300: out of the "
                       "parameter type's range");
  assert_ok(cujit_synchronize());
}

/* ---- arguments of the wrong type ---- */

/* ramp(float a, unsigned n, float *y) writes y[i] = a * i for i < n. An unsigned and a
 * float swapped have the right sizes, and would make it compute garbage: launches refuse
 * them, naming the parameter and its type, and launch nothing; the right types compute
 * the right result. Through the fast path (values only) and the staged one (a buffer). */
static void ramp_checks(cujit_function *fn, const char *name) {
  enum { LEN = 64, USED = 48 };
  float y[LEN];
  CUdeviceptr d = 0;
  char want[256];
  int i;
  snprintf(want, sizeof want,
           "argument 1 of kernel '%s' is an unsigned int (u32), but "
           "parameter 1 is 'float'; use cujit_f32()",
           name);
  assert_ok(cujit_mem_alloc(&d, sizeof y));
  for (i = 0; i < LEN; i++) y[i] = -1.0f;
  assert_ok(cujit_mem_copy_htod(d, y, sizeof y));
  assert_status_detail(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_u32(USED),
                                    cujit_f32(2.5f), cujit_ptr(d)),
                       CUJIT_ERROR_INVALID_ARGS, want);
  assert_status_detail(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_u32(USED),
                                    cujit_f32(2.5f), cujit_inout(y, sizeof y)),
                       CUJIT_ERROR_INVALID_ARGS, want);
  assert_status_detail(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_f32(2.5f),
                                    cujit_u32(USED), cujit_u64(d)),
                       CUJIT_ERROR_INVALID_ARGS, "parameter 3 is 'float *'");
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(y, d, sizeof y));
  for (i = 0; i < LEN; i++) assert_true(y[i] == -1.0f); /* nothing ran */
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_f32(2.5f), cujit_u32(USED),
                         cujit_ptr(d)));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(y, d, sizeof y));
  for (i = 0; i < LEN; i++) assert_true(y[i] == (i < USED ? 2.5f * (float)i : -1.0f));
  for (i = 0; i < LEN; i++) y[i] = -1.0f;
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(LEN), cujit_f32(0.5f), cujit_u32(USED),
                         cujit_inout(y, sizeof y)));
  for (i = 0; i < LEN; i++) assert_true(y[i] == (i < USED ? 0.5f * (float)i : -1.0f));
  assert_ok(cujit_mem_free(d));
}

static void wrong_types_refused(void **state) {
  cujit_function *cpp = fn_of("ramp"), *c = fn_of("cramp");
  (void)state;
  ramp_checks(cpp, "ramp");                                        /* its symbol spells its types */
  assert_string_equal(cujit_function_signature(c), "f32 u32 ptr"); /* the probe */
  ramp_checks(c, "cramp");
}

static int setup(void **state) {
  const char *dirs[] = {CUJIT_TEST_CUDA_INCLUDE, NULL};
  cujit_options o = {0};
  (void)state;
  o.include_dirs = dirs;
  assert_ok(cujit_module_from_source(&mod, kCallSource, "call.cu", &o));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cujit_module_destroy(mod); /* frees every bound pointer made above */
  return 0;
}

/* ---- the error mode: a bound call is the program's own ---- */

static int bound_raised;
static char bound_call[160];

static void on_bound_error(cujit_status status, const char *call, const char *detail, void *user) {
  (void)status, (void)detail, (void)user;
  bound_raised++;
  snprintf(bound_call, sizeof bound_call, "%s", call);
}

typedef cujit_status (*scale_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, float);

/* A failing call through a bound pointer reaches the handler once, named after the kernel;
 * a good one does not; a call through a freed pointer does too. */
static void bound_failure_reaches_the_handler(void **state) {
  float x[32];
  void *p = NULL;
  scale_fn f;
  int i;
  (void)state;
  for (i = 0; i < 32; i++) x[i] = 1;
  assert_ok(cujit_function_bind(fn_of("scale"), NULL, &p));
  f = (scale_fn)p;
  cujit_error_set_handler(on_bound_error, NULL);
  assert_ok(f(CUJIT_DIM3(1), CUJIT_DIM3(32), CUJIT_INOUT_PTR(x, sizeof x), 2.0f));
  assert_int_equal(bound_raised, 0);
  assert_true(x[31] == 2);
  assert_int_equal(f(CUJIT_DIM3(1), CUJIT_DIM3(1u << 20), CUJIT_INOUT_PTR(x, sizeof x), 2.0f),
                   CUJIT_ERROR_LAUNCH_CONFIG);
  assert_int_equal(bound_raised, 1);
  assert_string_equal(bound_call, "scale (bound)");
  cujit_function_unbind(fn_of("scale"), p);
  assert_int_equal(f(CUJIT_DIM3(1), CUJIT_DIM3(32), CUJIT_INOUT_PTR(x, sizeof x), 2.0f),
                   CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(bound_raised, 2);
  assert_string_equal(bound_call, "a freed kernel (bound)");
  cujit_error_set_handler(NULL, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_values_reach_the_kernel),
      cmocka_unit_test(scalars_bit_exact),
      cmocka_unit_test(scalars_bit_exact_direct),
      cmocka_unit_test(bound_direct_past_the_registers),
      cmocka_unit_test(float_and_double),
      cmocka_unit_test(structs_and_vectors),
      cmocka_unit_test(in_out_through_every_form),
      cmocka_unit_test(bound_stream_and_shared),
      cmocka_unit_test(mismatches_refused),
      cmocka_unit_test(wrong_types_refused),
      cmocka_unit_test(bound_failure_reaches_the_handler),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, setup, teardown);
}

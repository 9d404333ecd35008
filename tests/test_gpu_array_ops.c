/* test_gpu_array_ops - array operations on a GPU against host references: every binary
 * op and the math functions on floats and doubles at sizes 0, 1, 31 and 1000003, every
 * element type through addition, negation and fabs, scalars on either side, in-place
 * outputs, 16-bit floats and complex numbers, fused expressions (seed 004's sin(2x + 1)
 * on 4000 x 4000), the elementwise generator with a range and its scalars converted to
 * their declared types, 2^31+17 elements, and views
 * at every offset (arrays 16-byte aligned or not, every remainder: the kernels' two
 * loops) with in-place results that stay inside their view, and complex functions where
 * cuda::std::complex's formulas lose their accuracy, against the host's in long double. */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arraytest.h"
#include "gputest.h"

static const int64_t kSizes[] = {0, 1, 31, 1000003};

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xFFFF) / 65536.0f * 4.0f - 2.0f;
}

static cujit_array *from_floats(const float *h, int64_t n) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, 1, &n, h));
  return a;
}

static float host_binary(int op, float x, float y) {
  switch (op) {
    case CUJIT_BINOP_ADD: return x + y;
    case CUJIT_BINOP_SUB: return x - y;
    case CUJIT_BINOP_MUL: return x * y;
    case CUJIT_BINOP_DIV: return x / y;
    case CUJIT_BINOP_POW: return powf(fabsf(x), y);
    case CUJIT_BINOP_MINIMUM: return x < y ? x : y;
    case CUJIT_BINOP_MAXIMUM: return x > y ? x : y;
    case CUJIT_BINOP_FMOD: return fmodf(x, y);
    default: return 0;
  }
}

static int close_enough(float got, float want) {
  return got == want || fabsf(got - want) <= 1e-5f * fmaxf(1.0f, fabsf(want)) ||
         (isnan(got) && isnan(want));
}

static void binary_ops_on_floats(void **state) {
  size_t s;
  int op;
  (void)state;
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++) {
    int64_t n = kSizes[s];
    float *x = malloc((size_t)n * 4 + 4), *y = malloc((size_t)n * 4 + 4),
          *z = malloc((size_t)n * 4 + 4);
    unsigned seed = 7;
    int64_t i;
    cujit_array *a, *b, *absa = NULL;
    for (i = 0; i < n; i++) {
      x[i] = frand(&seed);
      y[i] = frand(&seed) + 3.0f; /* positive: pow and fmod stay real */
    }
    a = from_floats(x, n);
    b = from_floats(y, n);
    assert_ok(cujit_array_unary(CUJIT_UNOP_FABS, a, &absa));
    for (op = CUJIT_BINOP_ADD; op <= CUJIT_BINOP_FMOD; op++) {
      cujit_array *c = NULL;
      assert_ok(cujit_array_binary(op, op == CUJIT_BINOP_POW ? absa : a, b, &c));
      assert_int_equal(cujit_array_type(c), CUJIT_TYPE_F32);
      assert_ok(cujit_array_read(c, z, (size_t)n * 4));
      for (i = 0; i < n; i++)
        if (!close_enough(z[i], host_binary(op, x[i], y[i])))
          fail_msg("op %d, n %lld, element %lld: %g, want %g", op, (long long)n, (long long)i, z[i],
                   host_binary(op, x[i], y[i]));
      cujit_array_destroy(c);
    }
    for (op = CUJIT_BINOP_EQ; op <= CUJIT_BINOP_GE; op++) {
      cujit_array *c = NULL;
      unsigned char *m = malloc((size_t)n + 1);
      assert_ok(cujit_array_binary(op, a, a, &c));
      assert_int_equal(cujit_array_type(c), CUJIT_TYPE_BOOL);
      assert_ok(cujit_array_read(c, m, (size_t)n));
      for (i = 0; i < n; i++)
        assert_int_equal(m[i],
                         op == CUJIT_BINOP_EQ || op == CUJIT_BINOP_LE || op == CUJIT_BINOP_GE);
      free(m);
      cujit_array_destroy(c);
    }
    cujit_array_destroy(a);
    cujit_array_destroy(b);
    cujit_array_destroy(absa);
    free(x);
    free(y);
    free(z);
  }
}

static double host_unary(int op, double x) {
  static double (*const f[])(double) = {NULL, fabs, sqrt, exp,  log,  log10, sin,   cos, tan,
                                        asin, acos, atan, sinh, cosh, tanh,  floor, ceil};
  return op == CUJIT_UNOP_NEG ? -x : f[op](x);
}

static void math_on_doubles_and_floats(void **state) {
  enum { N = 1000 };
  double x[N], z[N];
  float xf[N], zf[N];
  int64_t n = N;
  int i, op;
  cujit_array *a = NULL, *af = NULL;
  (void)state;
  for (i = 0; i < N; i++) x[i] = xf[i] = (float)(0.001 + 0.9 * i / N); /* asin, log defined */
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F64, 1, &n, x));
  assert_ok(cujit_array_from_host(&af, CUJIT_TYPE_F32, 1, &n, xf));
  for (op = CUJIT_UNOP_NEG; op <= CUJIT_UNOP_CEIL; op++) {
    cujit_array *c = NULL, *cf = NULL;
    assert_ok(cujit_array_unary(op, a, &c));
    assert_ok(cujit_array_unary(op, af, &cf));
    assert_ok(cujit_array_read(c, z, sizeof z));
    assert_ok(cujit_array_read(cf, zf, sizeof zf));
    for (i = 0; i < N; i++) {
      double want = host_unary(op, x[i]);
      if (fabs(z[i] - want) > 1e-14 * fmax(1, fabs(want)) ||
          fabs(zf[i] - want) > 2e-6 * fmax(1, fabs(want)))
        fail_msg("unary op %d at %g: %g (f64), %g (f32), want %g", op, x[i], z[i], zf[i], want);
    }
    cujit_array_destroy(c);
    cujit_array_destroy(cf);
  }
  cujit_array_destroy(a);
  cujit_array_destroy(af);
}

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};

/* 0..99 as each type, then x + x, -x and fabs(x) read back as double. */
static void every_type_adds_negates_and_fabs(void **state) {
  double back[100];
  size_t t;
  int i;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int ty = kTypes[t];
    cujit_array *r = NULL, *x = NULL, *sum = NULL, *neg = NULL, *abs_ = NULL, *d = NULL;
    assert_ok(cujit_array_arange(&r, CUJIT_TYPE_F64, 0, 100, 1));
    assert_ok(cujit_array_astype(r, ty, &x));
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, x, x, &sum));
    assert_int_equal(cujit_array_type(sum), ty);
    assert_ok(cujit_array_astype(sum, CUJIT_TYPE_F64, &d));
    assert_ok(cujit_array_read(d, back, sizeof back));
    for (i = 0; i < 100; i++) {
      double want =
          ty == CUJIT_TYPE_BOOL ? (i != 0)
          : (ty == CUJIT_TYPE_I8 || ty == CUJIT_TYPE_U8)
              ? (double)(ty == CUJIT_TYPE_I8 ? (signed char)(2 * i) : (unsigned char)(2 * i))
              : 2.0 * i;
      if (back[i] != want) fail_msg("type %d: %d + %d = %g", ty, i, i, back[i]);
    }
    if (ty != CUJIT_TYPE_BOOL) {
      assert_ok(cujit_array_unary(CUJIT_UNOP_NEG, x, &neg));
      assert_ok(cujit_array_unary(CUJIT_UNOP_FABS, neg, &abs_));
      assert_ok(cujit_array_astype(abs_, CUJIT_TYPE_F64, &d)); /* into d: in place of d */
      assert_ok(cujit_array_read(d, back, sizeof back));
      for (i = 0; i < 100; i++) {
        int unsigned_t = ty == CUJIT_TYPE_U8 || ty == CUJIT_TYPE_U16 || ty == CUJIT_TYPE_U32 ||
                         ty == CUJIT_TYPE_U64;
        if (!unsigned_t && back[i] != (double)i)
          fail_msg("type %d: fabs(-%d) = %g", ty, i, back[i]);
      }
    }
    cujit_array_destroy(r);
    cujit_array_destroy(x);
    cujit_array_destroy(sum);
    cujit_array_destroy(neg);
    cujit_array_destroy(abs_);
    cujit_array_destroy(d);
  }
}

static void scalars_and_in_place(void **state) {
  int64_t n = 5;
  int xi[5] = {1, 2, 3, 4, 5}, yi[5];
  float xf[5] = {1, 2, 4, 8, 16}, yf[5];
  double yd[5];
  cujit_array *i32 = NULL, *f32 = NULL, *out = NULL;
  int k;
  (void)state;
  assert_ok(cujit_array_from_host(&i32, CUJIT_TYPE_I32, 1, &n, xi));
  assert_ok(cujit_array_from_host(&f32, CUJIT_TYPE_F32, 1, &n, xf));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, i32, 2, CUJIT_SCALAR_INT, &out)); /* 2 * a */
  assert_int_equal(cujit_array_type(out), CUJIT_TYPE_I32);
  assert_ok(cujit_array_read(out, yi, sizeof yi));
  for (k = 0; k < 5; k++) assert_int_equal(yi[k], 2 * xi[k]);
  cujit_array_destroy(out);
  out = NULL;
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, i32, 2.5, 0, &out)); /* a float: f64 */
  assert_int_equal(cujit_array_type(out), CUJIT_TYPE_F64);
  assert_ok(cujit_array_read(out, yd, sizeof yd));
  assert_true(yd[1] == 5.0);
  cujit_array_destroy(out);
  out = f32; /* in place: f32 = 1 / f32 */
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_DIV, f32, 1,
                                      CUJIT_SCALAR_FIRST | CUJIT_SCALAR_INT, &out));
  assert_ok(cujit_array_read(f32, yf, sizeof yf));
  for (k = 0; k < 5; k++) assert_true(yf[k] == 1.0f / xf[k]);
  out = NULL;
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_SUB, i32, 10,
                                      CUJIT_SCALAR_FIRST | CUJIT_SCALAR_INT, &out));
  assert_ok(cujit_array_read(out, yi, sizeof yi));
  assert_int_equal(yi[4], 5);
  cujit_array_destroy(out);
  cujit_array_destroy(i32);
  cujit_array_destroy(f32);
}

static void halves_and_complex_numbers(void **state) {
  int64_t n = 4;
  float x[4] = {0.5f, 1.5f, -2.0f, 1024.0f}, back[4];
  float complex c[4] = {1 + 2 * I, 3 - I, -1, 2 * I}, cc[4];
  cujit_array *f = NULL, *h = NULL, *hs = NULL, *b = NULL, *z = NULL, *zz = NULL, *mag = NULL;
  float mags[4];
  int k;
  (void)state;
  assert_ok(cujit_array_from_host(&f, CUJIT_TYPE_F32, 1, &n, x));
  assert_ok(cujit_array_astype(f, CUJIT_TYPE_F16, &h));
  assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, h, h, &hs));
  assert_ok(cujit_array_astype(hs, CUJIT_TYPE_F32, &b));
  assert_ok(cujit_array_read(b, back, sizeof back));
  for (k = 0; k < 4; k++) assert_true(back[k] == 2 * x[k]);
  assert_ok(cujit_array_from_host(&z, CUJIT_TYPE_C64, 1, &n, c));
  assert_ok(cujit_array_binary(CUJIT_BINOP_MUL, z, z, &zz));
  assert_ok(cujit_array_read(zz, cc, sizeof cc));
  for (k = 0; k < 4; k++) assert_true(cabsf(cc[k] - c[k] * c[k]) < 1e-6f);
  assert_ok(cujit_array_unary(CUJIT_UNOP_FABS, z, &mag));
  assert_int_equal(cujit_array_type(mag), CUJIT_TYPE_F32);
  assert_ok(cujit_array_read(mag, mags, sizeof mags));
  for (k = 0; k < 4; k++) assert_true(fabsf(mags[k] - cabsf(c[k])) < 1e-6f);
  {
    /* conversions: a complex number is true when either part is nonzero; f64 rounds to f16
     * once (1 + 2^-11 + 2^-40 is above the tie, so it goes up to 1 + 2^-10) */
    double one_and_a_bit = 1.0 + ldexp(1, -11) + ldexp(1, -40);
    uint16_t h16;
    unsigned char truth[4];
    cujit_array *bools = NULL, *d = NULL, *hh = NULL;
    int64_t one = 1;
    assert_ok(cujit_array_astype(z, CUJIT_TYPE_BOOL, &bools));
    assert_ok(cujit_array_read(bools, truth, sizeof truth));
    assert_int_equal(truth[3], 1); /* 2i */
    assert_ok(cujit_array_from_host(&d, CUJIT_TYPE_F64, 1, &one, &one_and_a_bit));
    assert_ok(cujit_array_astype(d, CUJIT_TYPE_F16, &hh));
    assert_ok(cujit_array_read(hh, &h16, sizeof h16));
    assert_int_equal(h16, 0x3C01);
    cujit_array_destroy(bools);
    cujit_array_destroy(d);
    cujit_array_destroy(hh);
  }
  cujit_array_destroy(f);
  cujit_array_destroy(h);
  cujit_array_destroy(hs);
  cujit_array_destroy(b);
  cujit_array_destroy(z);
  cujit_array_destroy(zz);
  cujit_array_destroy(mag);
}

/* Seed 004: sin(2x + 1) on a 4000 x 4000 array, one fused kernel. */
static void fused_expression(void **state) {
  int64_t shape[] = {4000, 4000}, i, n = 4000 * 4000;
  float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  unsigned seed = 3;
  cujit_array *a = NULL, *out = NULL;
  (void)state;
  for (i = 0; i < n; i++) x[i] = frand(&seed);
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, 2, shape, x));
  assert_ok(
      cujit_array_map(&out, "sin(2*x + 1)", 1, (const char *[]){"x"}, (const cujit_array *[]){a}));
  assert_int_equal(cujit_array_ndim(out), 2);
  assert_ok(cujit_array_read(out, y, (size_t)n * 4));
  for (i = 0; i < n; i++)
    if (fabsf(y[i] - sinf(2 * x[i] + 1)) > 2e-6f) fail_msg("element %lld", (long long)i);
  cujit_array_destroy(a);
  cujit_array_destroy(out);
  free(x);
  free(y);
}

/* PyCUDA's lin_comb, then on every other element only (a range). */
static void generator_and_range(void **state) {
  cujit_elementwise *k = NULL;
  int64_t n = 50, i;
  float x[50], y[50], z[50], a = 5, b = 6;
  cujit_array *dx = NULL, *dy = NULL, *dz = NULL;
  (void)state;
  for (i = 0; i < n; i++) {
    x[i] = (float)i;
    y[i] = (float)(100 - i);
  }
  assert_ok(cujit_array_from_host(&dx, CUJIT_TYPE_F32, 1, &n, x));
  assert_ok(cujit_array_from_host(&dy, CUJIT_TYPE_F32, 1, &n, y));
  assert_ok(cujit_array_zeros(&dz, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_elementwise_create(&k, "float a, float *x, float b, float *y, float *z",
                                     "z[i] = a*x[i] + b*y[i]",
                                     &(cujit_generator_options){.name = "lin_comb"}));
  assert_ok(CUJIT_ELEMENTWISE(k, a, dx, b, dy, dz));
  assert_ok(cujit_array_read(dz, z, sizeof z));
  for (i = 0; i < n; i++) assert_true(z[i] == 5 * x[i] + 6 * y[i]);
  assert_ok(cujit_array_fill(dz, &(float){0}));
  assert_ok(CUJIT_ELEMENTWISE_RANGE(k, 1, n, 2, a, dx, b, dy, dz));
  assert_ok(cujit_array_read(dz, z, sizeof z));
  for (i = 0; i < n; i++) assert_true(z[i] == (i % 2 ? 5 * x[i] + 6 * y[i] : 0));
  cujit_elementwise_destroy(k);
  cujit_array_destroy(dx);
  cujit_array_destroy(dy);
  cujit_array_destroy(dz);
}

/* Scalars of the generators arrive converted to the declared types: a double for a float
 * parameter as the nearest float (once it arrived as the double's low bytes), an int as
 * its value, a double for a __half rounded to nearest; refused values leave the output
 * as it was. Read back on the host. */
static void generator_scalars_are_converted(void **state) {
  enum { N = 100 };
  cujit_elementwise *scale = NULL, *set_int = NULL, *set_half = NULL;
  cujit_reduction *dot = NULL;
  int64_t n = N, i;
  float x[N], y[N], got = 0;
  int k[N];
  cujit_array *dx = NULL, *dy = NULL, *dk = NULL;
  (void)state;
  for (i = 0; i < N; i++) x[i] = (float)i + 0.25f;
  assert_ok(cujit_array_from_host(&dx, CUJIT_TYPE_F32, 1, &n, x));
  assert_ok(cujit_array_zeros(&dy, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&dk, CUJIT_TYPE_I32, 1, &n));
  assert_ok(cujit_elementwise_create(&scale, "float a, const float *x, float *y", "y[i] = a * x[i]",
                                     NULL));
  assert_ok(cujit_elementwise_create(&set_int, "int v, int *k", "k[i] = v", NULL));
  assert_ok(
      cujit_elementwise_create(&set_half, "__half h, float *y", "y[i] = __half2float(h)", NULL));
  assert_ok(CUJIT_ELEMENTWISE(scale, 0.1, dx, dy)); /* a double for a float */
  assert_ok(cujit_array_read(dy, y, sizeof y));
  for (i = 0; i < N; i++)
    if (y[i] != 0.1f * x[i])
      fail_msg("y[%lld] = %.9g, wanted %.9g", (long long)i, y[i], 0.1f * x[i]);
  assert_ok(CUJIT_ELEMENTWISE(scale, 3, dx, dy)); /* an int for a float */
  assert_ok(cujit_array_read(dy, y, sizeof y));
  for (i = 0; i < N; i++) assert_true(y[i] == 3.0f * x[i]);
  assert_status_detail(CUJIT_ELEMENTWISE(scale, 1e300, dx, dy), CUJIT_ERROR_INVALID_VALUE,
                       "argument 1 ('a') is declared float and was given a double (f64)");
  assert_ok(cujit_array_read(dy, y, sizeof y));
  for (i = 0; i < N; i++) assert_true(y[i] == 3.0f * x[i]); /* untouched */
  assert_ok(CUJIT_ELEMENTWISE(set_int, 2.0, dk));           /* an integral double for an int */
  assert_ok(cujit_array_read(dk, k, sizeof k));
  for (i = 0; i < N; i++) assert_int_equal(k[i], 2);
  assert_ok(CUJIT_ELEMENTWISE(set_int, cujit_u8(255), dk));
  assert_ok(cujit_array_read(dk, k, sizeof k));
  for (i = 0; i < N; i++) assert_int_equal(k[i], 255);
  assert_status_detail(CUJIT_ELEMENTWISE(set_int, 2.5, dk), CUJIT_ERROR_INVALID_VALUE,
                       "not an integer");
  assert_status_detail(CUJIT_ELEMENTWISE(set_int, 3000000000u, dk), CUJIT_ERROR_INVALID_VALUE,
                       "out of the parameter type's range");
  assert_ok(cujit_array_read(dk, k, sizeof k));
  for (i = 0; i < N; i++) assert_int_equal(k[i], 255);
  assert_ok(CUJIT_ELEMENTWISE(set_half, 0.1, dy)); /* 0.1 as the nearest __half */
  assert_ok(cujit_array_read(dy, y, sizeof y));
  for (i = 0; i < N; i++) assert_true(y[i] == 0.0999755859375f);
  /* a reduction's scalar: a double for a float, an int for a float */
  assert_ok(cujit_reduction_create(&dot, CUJIT_TYPE_F32, "0", "a+b", "s * x[i]",
                                   "float s, const float *x", NULL));
  assert_ok(CUJIT_REDUCTION_HOST(dot, &got, 0.5, dx));
  assert_true(got == 0.5f * (N * (N - 1) / 2 + 0.25f * N));
  assert_ok(CUJIT_REDUCTION_HOST(dot, &got, 2, dx));
  assert_true(got == 2.0f * (N * (N - 1) / 2 + 0.25f * N));
  cujit_elementwise_destroy(scale);
  cujit_elementwise_destroy(set_int);
  cujit_elementwise_destroy(set_half);
  cujit_reduction_destroy(dot);
  cujit_array_destroy(dx);
  cujit_array_destroy(dy);
  cujit_array_destroy(dk);
}

static void beyond_two_to_the_31(void **state) {
  int64_t n = ((int64_t)1 << 31) + 17;
  cujit_array *a = NULL, *tail = NULL, *head = NULL;
  signed char one = 1, t[40];
  int i;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &n, &one));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, a, 2, CUJIT_SCALAR_INT, &a)); /* in place */
  assert_ok(cujit_array_view(a, n - 40, n, &tail));
  assert_ok(cujit_array_read(tail, t, sizeof t));
  for (i = 0; i < 40; i++) assert_int_equal(t[i], 3);
  assert_ok(cujit_array_view(a, 0, 40, &head));
  assert_ok(cujit_array_read(head, t, sizeof t));
  assert_int_equal(t[0], 3);
  cujit_array_destroy(head);
  cujit_array_destroy(tail);
  cujit_array_destroy(a);
}

/* An array of `type` holding (i * 7) % 50 at i, converted on the device from doubles. */
static cujit_array *pattern(int type, int64_t n) {
  double *h = malloc((size_t)n * sizeof *h);
  cujit_array *a;
  int64_t i;
  for (i = 0; i < n; i++) h[i] = (double)(i * 7 % 50);
  a = array_from_doubles(type, n, h);
  free(h);
  return a;
}

/* Views that start at every offset from 0 to 16 elements, so that some arrays are 16-byte
 * aligned and some are not (each kernel then takes its chunked loop or its one-at-a-time
 * loop), with lengths that leave every remainder: a + b with a view and a whole array,
 * a + a, 2 * a, fabs(-a), a fused expression, and a + b written into the view a itself,
 * which must leave the elements around it as they were. */
static void views_at_every_offset(void **state) {
  static const int types[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U16, CUJIT_TYPE_F16,
                              CUJIT_TYPE_BF16, CUJIT_TYPE_I32, CUJIT_TYPE_F32, CUJIT_TYPE_F64,
                              CUJIT_TYPE_C64,  CUJIT_TYPE_C128};
  const int64_t total = 1100;
  size_t t;
  int64_t off;
  (void)state;
  for (t = 0; t < sizeof types / sizeof *types; t++) {
    int ty = types[t], is_bool = ty == CUJIT_TYPE_BOOL;
    cujit_array *x = pattern(ty, total);
    double *hx = array_values(x);
    for (off = 0; off <= 16; off++) {
      int64_t len = 1000 + off % 5, i;
      cujit_array *a = NULL, *b = pattern(ty, len), *sum = NULL, *twice = NULL, *doubled = NULL;
      cujit_array *neg = NULL, *abs_ = NULL, *fused = NULL, *whole = NULL;
      double *hb = array_values(b), *got;
      assert_ok(cujit_array_view(x, off, off + len, &a));
      assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &sum));
      assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, a, &twice));
      got = array_values(sum);
      for (i = 0; i < len; i++) {
        double want = is_bool ? (hx[off + i] != 0 || hb[i] != 0) : hx[off + i] + hb[i];
        if (got[i] != want)
          fail_msg("type %d, offset %lld: a + b at %lld is %g, want %g", ty, (long long)off,
                   (long long)i, got[i], want);
      }
      free(got);
      got = array_values(twice);
      for (i = 0; i < len; i++)
        if (got[i] != (is_bool ? hx[off + i] != 0 : 2 * hx[off + i]))
          fail_msg("type %d, offset %lld: a + a at %lld is %g", ty, (long long)off, (long long)i,
                   got[i]);
      free(got);
      if (!is_bool) { /* values below 50: 2a and a + b fit int8 */
        int is_signed = ty != CUJIT_TYPE_U16;
        assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, a, 2, CUJIT_SCALAR_INT, &doubled));
        assert_ok(cujit_array_unary(CUJIT_UNOP_NEG, a, &neg));
        assert_ok(cujit_array_unary(CUJIT_UNOP_FABS, neg, &abs_));
        assert_ok(cujit_array_map(&fused, "x + y", 2, (const char *[]){"x", "y"},
                                  (const cujit_array *[]){a, b}));
        double *g2 = array_values(doubled), *gabs = array_values(abs_), *gf = array_values(fused);
        for (i = 0; i < len; i++) {
          double v = hx[off + i];
          if (g2[i] != 2 * v || (is_signed && gabs[i] != v) || gf[i] != v + hb[i])
            fail_msg("type %d, offset %lld, element %lld: 2a %g, |-a| %g, x + y %g (a = %g)", ty,
                     (long long)off, (long long)i, g2[i], gabs[i], gf[i], v);
        }
        free(g2);
        free(gabs);
        free(gf);
      }
      /* in place: a = a + b, through the view */
      whole = a;
      assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &whole));
      assert_ptr_equal(whole, a);
      got = array_values(x);
      for (i = 0; i < total; i++) {
        int inside = i >= off && i < off + len;
        double want = !inside   ? hx[i]
                      : is_bool ? (hx[i] != 0 || hb[i - off] != 0)
                                : hx[i] + hb[i - off];
        if (got[i] != want)
          fail_msg("type %d, offset %lld: after x[%lld:%lld] += b, x[%lld] is %g, want %g", ty,
                   (long long)off, (long long)off, (long long)(off + len), (long long)i, got[i],
                   want);
      }
      free(got);
      cujit_array_destroy(x); /* the view keeps the memory; x is made again */
      x = pattern(ty, total);
      cujit_array_destroy(a);
      cujit_array_destroy(b);
      cujit_array_destroy(sum);
      cujit_array_destroy(twice);
      cujit_array_destroy(doubled);
      cujit_array_destroy(neg);
      cujit_array_destroy(abs_);
      cujit_array_destroy(fused);
      free(hb);
    }
    cujit_array_destroy(x);
    free(hx);
  }
}

/* fill, arange and astype at offsets and remainders too. */
static void fills_ranges_and_conversions(void **state) {
  const int64_t total = 67;
  int64_t off, i;
  (void)state;
  for (off = 0; off < 9; off++) {
    cujit_array *x = NULL, *v = NULL, *r = NULL, *h = NULL;
    signed char seven = 7;
    double *got;
    assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_I8, 1, &total));
    assert_ok(cujit_array_view(x, off, total - off / 2, &v));
    assert_ok(cujit_array_fill(v, &seven));
    got = array_values(x);
    for (i = 0; i < total; i++)
      if (got[i] != (i >= off && i < total - off / 2 ? 7 : 0))
        fail_msg("fill of x[%lld:%lld]: x[%lld] is %g", (long long)off,
                 (long long)(total - off / 2), (long long)i, got[i]);
    free(got);
    assert_ok(cujit_array_arange(&r, CUJIT_TYPE_I16, (double)off, (double)(off + 50), 1));
    assert_ok(cujit_array_astype(r, CUJIT_TYPE_F16, &h));
    got = array_values(h);
    for (i = 0; i < 50; i++)
      if (got[i] != (double)(off + i))
        fail_msg("arange from %lld: %g at %lld", (long long)off, got[i], (long long)i);
    free(got);
    cujit_array_destroy(x);
    cujit_array_destroy(v);
    cujit_array_destroy(r);
    cujit_array_destroy(h);
  }
}

/* A repeated operation finds its kernel in a table and skips the work of its first call;
 * it refuses what the first call refuses: an output of the wrong type, an integer scalar
 * that does not fit, a result too large for memory. */
static void repeated_operations_are_checked(void **state) {
  int64_t n = 8, many = (int64_t)1 << 62;
  cujit_array *f = NULL, *i32 = NULL, *i8 = NULL, *huge = NULL, *out = NULL;
  (void)state;
  assert_ok(cujit_array_zeros(&f, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&i32, CUJIT_TYPE_I32, 1, &n));
  assert_ok(cujit_array_zeros(&i8, CUJIT_TYPE_I8, 1, &n));
  assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, f, f, &out));
  cujit_array_destroy(out);
  out = i32;
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, f, f, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds i32, the result is f32");
  out = NULL;
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, i8, 3, CUJIT_SCALAR_INT, &out));
  cujit_array_destroy(out);
  out = NULL;
  assert_status_detail(cujit_array_binary_scalar(CUJIT_BINOP_ADD, i8, 300, CUJIT_SCALAR_INT, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the integer 300 does not fit i8");
  assert_null(out);
  assert_status_detail(cujit_array_binary(99, f, f, &out), CUJIT_ERROR_INVALID_VALUE,
                       "99 is not a cujit_binop");
  assert_ok(cujit_array_wrap(&huge, CUJIT_TYPE_I8, 1, &many, cujit_array_data(i8)));
  assert_status_detail(cujit_array_unary(CUJIT_UNOP_SQRT, huge, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_unary: the result would not fit in memory");
  assert_null(out);
  cujit_array_destroy(f);
  cujit_array_destroy(i32);
  cujit_array_destroy(i8);
  cujit_array_destroy(huge);
}

/* Where NumPy 2 and cujit once differed, as the differential test found: pow and fmod of
 * bools give int8; a float scalar with an f16 array is rounded to f16 first (so f16(0.1)
 * == 0.1 holds, and 1e10 * 0 is 0 * inf, NaN); a negative integer exponent as an integer
 * scalar is refused; the most negative int32 and int64 fmod -1 is 0. */
static void numpy_rules_at_the_edges(void **state) {
  cujit_array *b = NULL, *r = NULL, *h = NULL, *i32 = NULL, *i64 = NULL;
  const bool bools[2] = {false, true};
  const int32_t lo32[2] = {INT32_MIN, 7};
  const int64_t lo64[2] = {INT64_MIN, 7};
  int64_t two = 2, one = 1;
  uint16_t tenth; /* f16 of 0.1 */
  int8_t p[2];
  bool eq;
  (void)state;
  assert_ok(cujit_array_from_host(&b, CUJIT_TYPE_BOOL, 1, &two, bools));
  assert_ok(cujit_array_binary(CUJIT_BINOP_POW, b, b, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I8);
  assert_ok(cujit_array_read(r, p, sizeof p));
  assert_int_equal(p[0], 1); /* 0 ** 0 */
  assert_int_equal(p[1], 1);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_binary(CUJIT_BINOP_FMOD, b, b, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I8);
  cujit_array_destroy(r), r = NULL;
  tenth = 0x2e66;
  assert_ok(cujit_array_from_host(&h, CUJIT_TYPE_F16, 1, &one, &tenth));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_EQ, h, 0.1, 0, &r));
  assert_ok(cujit_array_read(r, &eq, 1));
  assert_true(eq);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_from_host(&i32, CUJIT_TYPE_I32, 1, &two, lo32));
  assert_int_equal(cujit_array_binary_scalar(CUJIT_BINOP_POW, i32, -1, CUJIT_SCALAR_INT, &r),
                   CUJIT_ERROR_INVALID_VALUE);
  assert_non_null(strstr(cujit_last_error(), "negative integer power"));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_FMOD, i32, -1, CUJIT_SCALAR_INT, &r));
  {
    int32_t m[2];
    assert_ok(cujit_array_read(r, m, sizeof m));
    assert_int_equal(m[0], 0);
    assert_int_equal(m[1], 0);
  }
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_from_host(&i64, CUJIT_TYPE_I64, 1, &two, lo64));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_FMOD, i64, -1, CUJIT_SCALAR_INT, &r));
  {
    int64_t m[2];
    assert_ok(cujit_array_read(r, m, sizeof m));
    assert_int_equal(m[0], 0);
    assert_int_equal(m[1], 0);
  }
  cujit_array_destroy(r);
  cujit_array_destroy(i64);
  cujit_array_destroy(i32);
  cujit_array_destroy(h);
  cujit_array_destroy(b);
}

/* |got - want| within 32 ulp of |want| (the header's bound for complex functions), ulp of
 * a type of p significant bits; NaN parts meet NaN parts. */
static void expect_complex(long double complex got, long double complex want, int p,
                           const char *what) {
  long double mag = cabsl(want), err = cabsl(got - want);
  int bad_nan =
      (isnan(creall(got)) || isnan(cimagl(got))) != (isnan(creall(want)) || isnan(cimagl(want)));
  if (isnan(creall(want)) || isnan(cimagl(want))) {
    if (bad_nan) fail_msg("%s: (%Lg, %Lg), want NaN", what, creall(got), cimagl(got));
    return;
  }
  if (bad_nan || !(err <= 32 * ldexpl(1, ilogbl(mag) - p + 1)))
    fail_msg("%s: (%.17Lg, %.17Lg), want (%.17Lg, %.17Lg)", what, creall(got), cimagl(got),
             creall(want), cimagl(want));
}

/* One complex function or operation of cujit's on n values of c128 (double) or c64
 * (float: c64 != 0), the results as long doubles. */
static void run_complex(int c64, int op, int binary, const long double complex *x,
                        const long double complex *y, int64_t n, long double complex *out) {
  int type = c64 ? CUJIT_TYPE_C64 : CUJIT_TYPE_C128;
  size_t part = c64 ? 4 : 8;
  unsigned char *hx = malloc(16 * (size_t)n), *hy = malloc(16 * (size_t)n),
                *hr = malloc(16 * (size_t)n);
  cujit_array *a = NULL, *b = NULL, *r = NULL;
  int64_t i;
  for (i = 0; i < n; i++) {
    int k;
    for (k = 0; k < 2; k++) {
      long double vx = k ? cimagl(x[i]) : creall(x[i]),
                  vy = y ? (k ? cimagl(y[i]) : creall(y[i])) : 0;
      float fx = (float)vx, fy = (float)vy;
      double dx = (double)vx, dy = (double)vy;
      memcpy(hx + (2 * i + k) * part, c64 ? (void *)&fx : (void *)&dx, part);
      memcpy(hy + (2 * i + k) * part, c64 ? (void *)&fy : (void *)&dy, part);
    }
  }
  assert_ok(cujit_array_from_host(&a, type, 1, &n, hx));
  assert_ok(cujit_array_from_host(&b, type, 1, &n, hy));
  if (binary)
    assert_ok(cujit_array_binary(op, a, b, &r));
  else
    assert_ok(cujit_array_unary(op, a, &r));
  assert_ok(cujit_array_read(r, hr, cujit_array_nbytes(r)));
  for (i = 0; i < n; i++) {
    float f[2];
    double d[2];
    if (c64) {
      memcpy(f, hr + 8 * i, 8);
      out[i] = f[0] + (long double)f[1] * I;
    } else {
      memcpy(d, hr + 16 * i, 16);
      out[i] = d[0] + (long double)d[1] * I;
    }
  }
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_array_destroy(r);
  free(hx);
  free(hy);
  free(hr);
}

/* Complex functions where cuda::std::complex's formulas cancel or overflow (and cujit
 * once gave their results), against the host's C library in long double: acos and asin
 * in the left half plane (errors growing as |z|^2: a c64 acos near -3900 was wrong in its
 * first digit), tan and tanh near their poles (c64 tan(11) off by 3e-4) and with a huge
 * imaginary part (NaN), atan and log near their zeros, sqrt, log10, atan and quotients
 * near the largest double (infinite), 0 to the powers 0, 2 and -1 (1, 0, NaN as NumPy's;
 * NaN for 0^0 before). Each within 32 ulp of the result's magnitude. */
static void complex_functions_keep_their_accuracy(void **state) {
  struct {
    int c64, op;
    long double complex z;
  } one[] = {
      {0, CUJIT_UNOP_ACOS, -4.79L - 7.11L * I},
      {0, CUJIT_UNOP_ACOS, -5593.476932101585L + 5.9147032623277305L * I},
      {0, CUJIT_UNOP_ASIN, 7.77L + 6.92L * I},
      {0, CUJIT_UNOP_ASIN, -1.0218L + 2.7L * I},
      {0, CUJIT_UNOP_ATAN, -9.730619219560932e-07L + 1.1316248585158806e-06L * I},
      {0, CUJIT_UNOP_ATAN, 2.5L + 1.7e308L * I},
      {0, CUJIT_UNOP_TAN, 7.84L + 0.04L * I},
      {0, CUJIT_UNOP_TANH, 0.02L + 4.74L * I},
      {0, CUJIT_UNOP_LOG, 1.0030550231953046L + 0.0037093341912117425L * I},
      {0, CUJIT_UNOP_LOG10, 1.7e308L + 1.7e308L * I},
      {0, CUJIT_UNOP_SQRT, 1.7e308L + 1.7e308L * I},
      {1, CUJIT_UNOP_ACOS, -3910.533203125L + 1.3042413229413796e-06L * I},
      {1, CUJIT_UNOP_ASIN, -9.912509995047003e-07L + 3442.01416015625L * I},
      {1, CUJIT_UNOP_TAN, 11.0L},
      {1, CUJIT_UNOP_TANH, 1.401298464324817e-45L + 3.3999999521443642e+38L * I},
  };
  size_t k;
  (void)state;
  for (k = 0; k < sizeof one / sizeof *one; k++) {
    long double complex z = one[k].z, got, want;
    char what[64];
    if (one[k].c64)
      z = (float)creall(z) + (long double)(float)cimagl(z) * I;
    else
      z = (double)creall(z) + (long double)(double)cimagl(z) * I;
    run_complex(one[k].c64, one[k].op, 0, &z, NULL, 1, &got);
    switch (one[k].op) {
      case CUJIT_UNOP_ACOS: want = cacosl(z); break;
      case CUJIT_UNOP_ASIN: want = casinl(z); break;
      case CUJIT_UNOP_ATAN: want = catanl(z); break;
      case CUJIT_UNOP_TAN: want = ctanl(z); break;
      case CUJIT_UNOP_TANH: want = ctanhl(z); break;
      case CUJIT_UNOP_LOG: want = clogl(z); break;
      case CUJIT_UNOP_LOG10: want = clogl(z) / logl(10); break;
      default: want = csqrtl(z); break;
    }
    snprintf(what, sizeof what, "unary op %d of %s value %zu", one[k].op,
             one[k].c64 ? "c64" : "c128", k);
    expect_complex(got, want, one[k].c64 ? 24 : 53, what);
  }
  {
    const long double complex huge = 1.7e308L + 1.7e308L * I;
    const long double complex zero = 0, exps[3] = {0, 2, -1}, zeros[3] = {0, 0, 0};
    long double complex got[3];
    run_complex(0, CUJIT_BINOP_DIV, 1, &huge, &huge, 1, got);
    expect_complex(got[0], 1, 53, "z / z near the largest double");
    run_complex(0, CUJIT_BINOP_POW, 1, zeros, exps, 3, got);
    expect_complex(got[0], 1, 53, "0 ** 0");
    expect_complex(got[1], zero, 53, "0 ** 2");
    expect_complex(got[2], NAN, 53, "0 ** -1");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(binary_ops_on_floats),
      cmocka_unit_test(math_on_doubles_and_floats),
      cmocka_unit_test(every_type_adds_negates_and_fabs),
      cmocka_unit_test(scalars_and_in_place),
      cmocka_unit_test(halves_and_complex_numbers),
      cmocka_unit_test(fused_expression),
      cmocka_unit_test(generator_and_range),
      cmocka_unit_test(generator_scalars_are_converted),
      cmocka_unit_test(beyond_two_to_the_31),
      cmocka_unit_test(views_at_every_offset),
      cmocka_unit_test(fills_ranges_and_conversions),
      cmocka_unit_test(repeated_operations_are_checked),
      cmocka_unit_test(numpy_rules_at_the_edges),
      cmocka_unit_test(complex_functions_keep_their_accuracy),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

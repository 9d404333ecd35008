/* digits.c - the decimal digits of the floating types (f16, bf16, f32, f64), as NumPy prints
 * them: a value's exact digits, the shortest digits that name it among its type's values
 * (NumPy's "unique" digits, from its Dragon4), and the exact value rounded to a number of
 * digits; a double rounded to a narrower type, as the type's own arithmetic rounds it.
 *
 * A finite value is m * 2^e. Its exact decimal digits come from m * 2^e (e >= 0) or
 * m * 5^-e (e < 0) in base 10^9; every float has a finite decimal expansion, at most 767
 * significant digits for a double. The shortest digits are those of the fewest digits whose
 * value lies inside the interval that rounds to the value (its ends, halfway to the
 * neighbours, included when m is even, as a parser rounding ties to even reads them); of
 * two such, the nearer to the value. Pure functions of bits: nothing here touches the
 * device. */
#include <math.h>
#include <string.h>

#include "array/array.h"

/* ---- a type's layout ---- */

typedef struct fp_layout {
  int mant;  /* stored significand bits */
  int exp;   /* exponent bits */
  int bytes; /* size */
} fp_layout;

static int layout_of(int type, fp_layout *l) {
  switch (type) {
    case CUJIT_TYPE_F16: *l = (fp_layout){10, 5, 2}; return 1;
    case CUJIT_TYPE_BF16: *l = (fp_layout){7, 8, 2}; return 1;
    case CUJIT_TYPE_F32: *l = (fp_layout){23, 8, 4}; return 1;
    case CUJIT_TYPE_F64: *l = (fp_layout){52, 11, 8}; return 1;
    default: return 0;
  }
}

void cj_float_parts_of(int type, const void *p, cj_float_parts *v) {
  fp_layout l;
  uint64_t bits = 0, field, mant;
  int bias;
  memset(v, 0, sizeof *v);
  if (!layout_of(type, &l)) return;
  memcpy(&bits, p, (size_t)l.bytes); /* little-endian hosts, as the device */
  bias = (1 << (l.exp - 1)) - 1;
  v->sign = (int)(bits >> (l.mant + l.exp) & 1);
  field = bits >> l.mant & ((1u << l.exp) - 1);
  mant = bits & ((1ull << l.mant) - 1);
  v->bits = l.mant + 1;
  if (field == (1u << l.exp) - 1) {
    v->kind = mant ? CJ_FP_NAN : CJ_FP_INF;
    return;
  }
  if (field == 0 && mant == 0) {
    v->kind = CJ_FP_ZERO;
    return;
  }
  v->kind = CJ_FP_FINITE;
  v->m = field ? mant | 1ull << l.mant : mant;
  v->e = (field ? (int)field : 1) - bias - l.mant;
  v->boundary = field > 1 && mant == 0; /* the neighbour below is half as far */
}

double cj_float_value(const cj_float_parts *v) {
  double r = v->kind == CJ_FP_NAN    ? NAN
             : v->kind == CJ_FP_INF  ? INFINITY
             : v->kind == CJ_FP_ZERO ? 0.0
                                     : ldexp((double)v->m, v->e);
  return v->sign ? -r : r;
}

double cj_float_round(double x, int type) {
  int p, emin, emax, ex;
  double scale, r;
  if (type == CUJIT_TYPE_F64 || x == 0 || !isfinite(x)) return x;
  if (type == CUJIT_TYPE_F32) return (double)(float)x;
  p = type == CUJIT_TYPE_F16 ? 11 : 8;
  emin = type == CUJIT_TYPE_F16 ? -14 : -126;
  emax = type == CUJIT_TYPE_F16 ? 15 : 127;
  frexp(x, &ex);
  ex -= 1; /* x = f * 2^ex with f in [1, 2) */
  if (ex < emin) ex = emin;
  scale = ldexp(1, p - 1 - ex);
  r = nearbyint(x * scale) / scale; /* ties to even; both scalings are exact */
  if (fabs(r) > ldexp(2 - ldexp(1, 1 - p), emax)) return x < 0 ? -INFINITY : INFINITY;
  return r;
}

/* ---- exact decimals ---- */

#define LIMB 1000000000u
#define LIMBS 96 /* 767 digits and more */

/* n limbs (base 10^9, least significant first) times f (below 2^32). */
static void limbs_mul(uint32_t *limb, int *n, uint32_t f) {
  uint64_t carry = 0;
  int i;
  for (i = 0; i < *n; i++) {
    uint64_t cur = (uint64_t)limb[i] * f + carry;
    limb[i] = (uint32_t)(cur % LIMB);
    carry = cur / LIMB;
  }
  while (carry && *n < LIMBS) {
    limb[(*n)++] = (uint32_t)(carry % LIMB);
    carry /= LIMB;
  }
}

/* Drops trailing zeros, and makes an all-zero number 0 (no digit). */
static void trim(cj_decimal *d) {
  while (d->n > 0 && d->d[d->n - 1] == 0) d->n--;
  if (d->n == 0) d->point = 0;
}

/* The exact digits of m * 2^e. */
static void exact(uint64_t m, int e, cj_decimal *out) {
  uint32_t limb[LIMBS];
  int n = 0, i, k, digits = 0, lead = 1;
  while (m) {
    limb[n++] = (uint32_t)(m % LIMB);
    m /= LIMB;
  }
  out->n = 0;
  out->point = 0;
  if (!n) return;
  for (k = e; k > 0; k -= 29) limbs_mul(limb, &n, 1u << (k > 29 ? 29 : k));
  for (k = -e; k > 0; k -= 13) { /* 5^13 < 2^32 */
    uint32_t f = 1;
    for (i = 0; i < (k > 13 ? 13 : k); i++) f *= 5;
    limbs_mul(limb, &n, f);
  }
  for (i = n - 1; i >= 0; i--) {
    char t[9];
    uint32_t v = limb[i];
    int j;
    for (j = 8; j >= 0; j--, v /= 10) t[j] = (char)(v % 10);
    for (j = 0; j < 9; j++) {
      if (lead && t[j] == 0) continue;
      lead = 0;
      if (out->n < CJ_DIGITS_MAX) out->d[out->n++] = t[j];
      digits++;
    }
  }
  out->point = digits + (e < 0 ? e : 0); /* m * 5^-e * 10^e */
  trim(out);
}

/* The sign of a - b for nonnegative decimals. */
static int compare(const cj_decimal *a, const cj_decimal *b) {
  int i, n;
  if (!a->n || !b->n) return (a->n > 0) - (b->n > 0);
  if (a->point != b->point) return a->point < b->point ? -1 : 1;
  n = a->n > b->n ? a->n : b->n;
  for (i = 0; i < n; i++) {
    int x = i < a->n ? a->d[i] : 0, y = i < b->n ? b->d[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* x's first `keep` digits (keep >= 1), one added in the last of them when up is set. */
static void cut(const cj_decimal *x, int keep, int up, cj_decimal *out) {
  int i;
  *out = *x;
  if (keep >= x->n) return;
  out->n = keep;
  for (i = keep - 1; up && i >= 0; i--) {
    if (out->d[i] < 9) {
      out->d[i]++;
      up = 0;
    } else {
      out->d[i] = 0;
    }
  }
  if (up) { /* 99.9 became 100 */
    out->d[0] = 1;
    out->n = 1;
    out->point++;
  }
  trim(out);
}

void cj_decimal_round(const cj_decimal *x, int keep, cj_decimal *out) {
  int up, i, rest = 0;
  if (keep >= x->n) {
    *out = *x;
    return;
  }
  if (keep < 0 || (keep == 0 && x->d[0] < 5)) { /* below half a unit of the place */
    out->n = 0;
    out->point = 0;
    return;
  }
  for (i = keep + 1; i < x->n; i++) rest |= x->d[i];
  if (keep == 0) { /* 0.5 and more of the first place: one unit of it (0.5 itself ties to 0) */
    out->n = 0;
    out->point = 0;
    if (x->d[0] > 5 || rest) {
      out->d[0] = 1;
      out->n = 1;
      out->point = x->point + 1;
    }
    return;
  }
  up = x->d[keep] > 5 || (x->d[keep] == 5 && (rest || (x->d[keep - 1] & 1)));
  cut(x, keep, up, out);
}

void cj_float_exact(const cj_float_parts *v, cj_decimal *out) {
  if (v->kind != CJ_FP_FINITE) {
    out->n = 0;
    out->point = 0;
    return;
  }
  exact(v->m, v->e, out);
}

/* Whether candidate c names the value whose interval's ends are lo and hi. */
static int inside(const cj_decimal *c, const cj_decimal *lo, const cj_decimal *hi, int even) {
  int a = compare(c, lo), b = compare(c, hi);
  return (a > 0 || (even && a == 0)) && (b < 0 || (even && b == 0));
}

void cj_float_shortest(const cj_float_parts *v, const cj_decimal *x, cj_decimal *out) {
  cj_decimal lo, hi, down, up;
  int even = !(v->m & 1), p;
  *out = *x;
  if (v->kind != CJ_FP_FINITE) return;
  exact(2 * v->m + 1, v->e - 1, &hi);
  if (v->boundary)
    exact(4 * v->m - 1, v->e - 2, &lo);
  else
    exact(2 * v->m - 1, v->e - 1, &lo);
  for (p = 1; p < x->n; p++) {
    int d, u;
    cut(x, p, 0, &down);
    cut(x, p, 1, &up);
    d = inside(&down, &lo, &hi, even);
    u = inside(&up, &lo, &hi, even);
    if (d && u) {
      cj_decimal_round(x, p, out); /* the nearer; a tie to the even digit */
      return;
    }
    if (d || u) {
      *out = d ? down : up;
      return;
    }
  }
}

void cj_float_digits(const cj_float_parts *v, int sci, int precision, int min_digits,
                     cj_decimal *out) {
  cj_decimal x;
  cj_float_exact(v, &x);
  cj_float_shortest(v, &x, out);
  if (!out->n) return;
  /* at most `precision` digits after the point: the exact value rounded there */
  if (precision >= 0 && (sci ? out->n - 1 : out->n - out->point) > precision)
    cj_decimal_round(&x, sci ? precision + 1 : x.point + precision, out);
  /* at least `min_digits`: more of the exact value's, rounded there */
  if (out->n && min_digits > 0 && (sci ? out->n - 1 : out->n - out->point) < min_digits)
    cj_decimal_round(&x, sci ? min_digits + 1 : x.point + min_digits, out);
}

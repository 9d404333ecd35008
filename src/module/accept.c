/* accept.c - what a kernel parameter takes: the one rule of it, which launches, typed calls
 * and the kernel generators all ask (docs/manual/launching.md states it for users).
 *
 * A parameter takes an argument as it is, its bytes unchanged, when the parameter's accept
 * bits (cj_accept_of, tested by cj_takes) have the argument's tag:
 *   - an argument made by a constructor (a tag below CUJIT_TYPE_PLAIN_) is taken by a
 *     parameter of its own type; bool also takes u8 and i8; a pointer In/Out buffers; a
 *     parameter that is no scalar or pointer (a struct, union, enum or vector) any argument,
 *     whose size is checked; every parameter a value given by its bytes;
 *   - a plain value (its type's tag plus CUJIT_TYPE_PLAIN_) is taken as it is by a
 *     parameter of exactly its type, and by a pointer when it is a 64-bit unsigned integer
 *     (a CUdeviceptr). The header tags such a number as a pointer (CUJIT_TYPE_PTR plus
 *     CUJIT_TYPE_PLAIN_) when it is a reference made by cujit_arg_ref(): no parameter
 *     takes that as it is, and as a number it reads as the 64-bit unsigned integer it is.
 * A number a scalar parameter does not take as it is may be converted to it (cj_convert) as
 * C converts an argument to a prototyped parameter, or refused where its value would not
 * keep its meaning. A number is read into one of three forms (an integer as its sign and
 * magnitude, a real as a double, a complex as two doubles) and written from it in the
 * parameter's type. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "module/accept.h"

#define BIT(t) ((uint64_t)1 << (t))
#define PLAIN(t) BIT(CUJIT_TYPE_PLAIN_ + (t))

uint64_t cj_accept_of(int want) {
  switch (want) {
    case CUJIT_TYPE_BYTES: return CJ_ACCEPT_UNKNOWN;
    case CUJIT_TYPE_BOOL:
      return BIT(CUJIT_TYPE_BYTES) | BIT(CUJIT_TYPE_BOOL) | BIT(CUJIT_TYPE_U8) |
             BIT(CUJIT_TYPE_I8) | PLAIN(CUJIT_TYPE_BOOL);
    case CUJIT_TYPE_PTR: return BIT(CUJIT_TYPE_BYTES) | BIT(CUJIT_TYPE_PTR) | PLAIN(CUJIT_TYPE_U64);
    default: return BIT(CUJIT_TYPE_BYTES) | BIT(want) | PLAIN(want);
  }
}

/* ---- converting numbers ---- */

enum { NUM_INT, NUM_REAL, NUM_COMPLEX };

typedef struct number {
  int form;      /* NUM_INT, NUM_REAL or NUM_COMPLEX */
  int neg;       /* NUM_INT: below 0 */
  uint64_t mag;  /* NUM_INT: the magnitude */
  double re, im; /* NUM_REAL: re; NUM_COMPLEX: both */
} number;

/* A number's bytes, in any of the types converted from or to. */
typedef union scalar_bytes {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f32[2];
  double f64[2];
} scalar_bytes;

/* A number for a message: "300", "1e+300", "(1, 2)". */
static void number_text(const number *v, char *out, size_t size) {
  if (v->form == NUM_INT)
    snprintf(out, size, "%s%llu", v->neg ? "-" : "", (unsigned long long)v->mag);
  else if (v->form == NUM_REAL)
    snprintf(out, size, "%.17g", v->re);
  else
    snprintf(out, size, "(%.17g, %.17g)", v->re, v->im);
}

/* Reads the number `a` holds; -1 for tags that hold none cujit reads: bytes, pointers, the
 * 16-bit floats. */
static int read_number(const cujit_arg *a, number *v) {
  int type = a->type >= CUJIT_TYPE_PLAIN_ ? a->type - CUJIT_TYPE_PLAIN_ : a->type;
  if (a->type == CUJIT_TYPE_PTR + CUJIT_TYPE_PLAIN_) type = CUJIT_TYPE_U64; /* a number tagged */
  scalar_bytes x;
  int64_t i;
  memset(v, 0, sizeof *v);
  memcpy(&x, a->value.bytes, sizeof x);
  switch (type) {
    case CUJIT_TYPE_BOOL: v->mag = x.u8 != 0; break;
    case CUJIT_TYPE_U8: v->mag = x.u8; break;
    case CUJIT_TYPE_U16: v->mag = x.u16; break;
    case CUJIT_TYPE_U32: v->mag = x.u32; break;
    case CUJIT_TYPE_U64: v->mag = x.u64; break;
    case CUJIT_TYPE_I8:
    case CUJIT_TYPE_I16:
    case CUJIT_TYPE_I32:
    case CUJIT_TYPE_I64:
      i = type == CUJIT_TYPE_I8    ? (int8_t)x.u8
          : type == CUJIT_TYPE_I16 ? (int16_t)x.u16
          : type == CUJIT_TYPE_I32 ? (int32_t)x.u32
                                   : (int64_t)x.u64;
      v->neg = i < 0;
      v->mag = v->neg ? 0 - (uint64_t)i : (uint64_t)i; /* INT64_MIN too, without overflow */
      break;
    case CUJIT_TYPE_F32: v->form = NUM_REAL, v->re = x.f32[0]; break;
    case CUJIT_TYPE_F64: v->form = NUM_REAL, v->re = x.f64[0]; break;
    case CUJIT_TYPE_C64: v->form = NUM_COMPLEX, v->re = x.f32[0], v->im = x.f32[1]; break;
    case CUJIT_TYPE_C128: v->form = NUM_COMPLEX, v->re = x.f64[0], v->im = x.f64[1]; break;
    default: return -1;
  }
  return 0;
}

/* An integer of `bytes` bytes, signed or not, from v; refused out of its range, or for a
 * real with a fraction, an infinity or NaN. */
static const char *to_int(const number *v, size_t bytes, int is_signed, scalar_bytes *out) {
  int bits = (int)bytes * 8;
  uint64_t max_pos = is_signed    ? ((uint64_t)1 << (bits - 1)) - 1
                     : bits == 64 ? UINT64_MAX
                                  : ((uint64_t)1 << bits) - 1;
  uint64_t max_neg = is_signed ? (uint64_t)1 << (bits - 1) : 0;
  number n = *v;
  if (v->form == NUM_REAL) {
    double limit = ldexp(1.0, is_signed ? bits - 1 : bits); /* exact: a power of two */
    if (!isfinite(v->re) || v->re != trunc(v->re))
      return "not an integer (C would truncate it, or leave it undefined); round it first, "
             "or declare the parameter as a float type";
    if (v->re >= limit || v->re < (is_signed ? -limit : 0))
      return "out of the parameter type's range";
    n.neg = v->re < 0;
    n.mag = (uint64_t)fabs(v->re); /* below 2^64: converted exactly */
  }
  if (n.neg ? n.mag > max_neg : n.mag > max_pos)
    return "out of the parameter type's range (C would wrap it or leave it undefined)";
  n.mag = n.neg ? 0 - n.mag : n.mag; /* two's complement, cut to the type's size below */
  if (bytes == 1)
    out->u8 = (uint8_t)n.mag;
  else if (bytes == 2)
    out->u16 = (uint16_t)n.mag;
  else if (bytes == 4)
    out->u32 = (uint32_t)n.mag;
  else
    out->u64 = n.mag;
  return NULL;
}

/* A 64-bit magnitude as a double rounded to odd: exact below 2^53; above, the bits that do
 * not fit are kept as a sticky last bit, so that rounding the result once more to 24 bits
 * or fewer (float, __half, __nv_bfloat16) gives what one rounding of m would. */
static double odd_double(uint64_t m) {
  int shift = 0;
  uint64_t q = m;
  if (m < (uint64_t)1 << 53) return (double)m;
  while (q >> 53) q >>= 1, shift++;
  if (m & (((uint64_t)1 << shift) - 1)) q |= 1;
  return ldexp((double)q, shift);
}

/* A real of cujit_type `t` (F16, BF16, F32, F64) from v (not complex), rounded to nearest;
 * refused when a finite value overflows it. */
static const char *to_real(const number *v, int t, void *out) {
  double d = v->form == NUM_INT ? (v->neg ? -odd_double(v->mag) : odd_double(v->mag)) : v->re;
  int overflow;
  if (t == CUJIT_TYPE_F64) {
    /* one rounding from the integer itself, as C converts it */
    double x = v->form == NUM_INT ? (v->neg ? -(double)v->mag : (double)v->mag) : v->re;
    memcpy(out, &x, sizeof x);
    return NULL;
  }
  if (t == CUJIT_TYPE_F32) {
    float f = 0;
    /* from 2^128 - 2^103 up a double rounds past FLT_MAX: refused before it is converted */
    overflow = isfinite(d) && fabs(d) >= 0x1.ffffffp+127;
    if (!overflow)
      f = v->form == NUM_INT ? (v->neg ? -(float)v->mag : (float)v->mag) : (float)v->re;
    memcpy(out, &f, sizeof f);
  } else {
    uint16_t h = t == CUJIT_TYPE_F16 ? cj_f16_bits(d) : cj_bf16_bits(d);
    uint16_t inf = t == CUJIT_TYPE_F16 ? 0x7c00 : 0x7f80;
    overflow = (h & 0x7fff) == inf && !isinf(d);
    memcpy(out, &h, sizeof h);
  }
  return overflow ? "beyond the parameter type's range (C leaves that undefined)" : NULL;
}

/* A complex of cujit_type `t` (C64, C128) from v: a real one's imaginary part is 0. */
static const char *to_complex(const number *v, int t, scalar_bytes *out) {
  int part = t == CUJIT_TYPE_C64 ? CUJIT_TYPE_F32 : CUJIT_TYPE_F64;
  number re = *v, im;
  const char *why;
  memset(&im, 0, sizeof im);
  im.form = NUM_REAL;
  if (v->form == NUM_COMPLEX) re.form = NUM_REAL, im.re = v->im;
  if (t == CUJIT_TYPE_C64)
    return (why = to_real(&re, part, &out->f32[0])) ? why : to_real(&im, part, &out->f32[1]);
  return (why = to_real(&re, part, &out->f64[0])) ? why : to_real(&im, part, &out->f64[1]);
}

static const char *convert_number(int to, const number *v, scalar_bytes *out) {
  const cj_scalar *s = cj_scalar_of(to);
  if (v->form == NUM_COMPLEX && s->kind != CJ_SK_COMPLEX)
    return "a complex value for a real parameter (C would drop its imaginary part); pass its "
           "real part";
  switch (s->kind) {
    case CJ_SK_BOOL:
      if (v->form == NUM_INT ? v->neg || v->mag > 1 : v->re != 0 && v->re != 1)
        return "a bool takes 0 and 1 (false and true) only";
      out->u8 = v->form == NUM_INT ? (uint8_t)v->mag : v->re == 1;
      return NULL;
    case CJ_SK_SIGNED:
    case CJ_SK_UNSIGNED: return to_int(v, s->size, s->kind == CJ_SK_SIGNED, out);
    case CJ_SK_FLOAT: return to_real(v, to, out);
    default: return to_complex(v, to, out);
  }
}

const char *cj_convert(int to, const cujit_arg *a, unsigned char out[16],
                       char value[CJ_VALUE_TEXT]) {
  const cj_scalar *s = cj_scalar_of(to);
  scalar_bytes x;
  number v;
  const char *why;
  value[0] = '\0';
  memset(out, 0, 16);
  if (a->kind != CUJIT_ARG_VALUE || read_number(a, &v) != 0)
    return "cujit converts only bool, integers, float, double and complex values; give one of "
           "those, or the parameter type's own bytes (cujit_value())";
  number_text(&v, value, CJ_VALUE_TEXT);
  if (!s || s->kind == CJ_SK_BYTES || s->kind == CJ_SK_POINTER || to >= CUJIT_TYPE_PLAIN_)
    return "a number converts only to a bool, an integer, a floating or a complex type";
  memset(&x, 0, sizeof x);
  if ((why = convert_number(to, &v, &x)) != NULL) return why;
  memcpy(out, &x, sizeof x);
  return NULL;
}

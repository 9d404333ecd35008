/* genargs.c - the generators' call arguments (cujit.h, "Kernel generators"): each array
 * looked up and checked against its declaration, each scalar converted to its declared
 * type as C converts an argument to a prototyped parameter, or refused where C would
 * change the value's meaning (wrap, truncate, overflow, drop an imaginary part). A scalar
 * is read into one of three forms (an integer as its sign and magnitude, a real as a
 * double, a complex as two doubles) and written from it in the declared type. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "call/signature.h" /* cj_f16_bits, cj_bf16_bits */

enum { NUM_INT, NUM_REAL, NUM_COMPLEX };

typedef struct number {
  int form;      /* NUM_INT, NUM_REAL or NUM_COMPLEX */
  int neg;       /* NUM_INT: below 0 */
  uint64_t mag;  /* NUM_INT: the magnitude */
  double re, im; /* NUM_REAL: re; NUM_COMPLEX: both */
} number;

/* The declared type's bytes. */
typedef union scalar_bytes {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f32[2];
  double f64[2];
} scalar_bytes;

/* What a refusal names: the call, the argument, what it was given. */
typedef struct arg_ctx {
  const char *fn;
  size_t i;
  const cj_decl *d;
  const cujit_arg *a;
} arg_ctx;

static const char *words_of(int type) {
  const cj_scalar *s = cj_scalar_of(type);
  return s ? s->words : "a value of an unknown type";
}

/* A number for a message: "300", "1e+300", "(1, 2)". */
static void number_text(const number *v, char *out, size_t size) {
  if (v->form == NUM_INT)
    snprintf(out, size, "%s%llu", v->neg ? "-" : "", (unsigned long long)v->mag);
  else if (v->form == NUM_REAL)
    snprintf(out, size, "%.17g", v->re);
  else
    snprintf(out, size, "(%.17g, %.17g)", v->re, v->im);
}

static cujit_status refuse(const arg_ctx *c, const number *v, const char *why) {
  char value[96] = "";
  if (v) {
    value[0] = ' ';
    number_text(v, value + 1, sizeof value - 1);
  }
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: argument %zu ('%s') is declared %s%s and "
                 "was given %s%s: %s",
                 c->fn, c->i + 1, c->d->name, cj_elem_of(c->d->type)->c_name,
                 c->d->is_array ? " *" : "",
                 c->a->kind == CUJIT_ARG_ARRAY ? "an array" : words_of(c->a->type), value, why);
}

/* Reads a scalar argument. CUJIT_ERROR_NOT_SUPPORTED (no detail) for types it does not
 * read: bytes, pointers, the 16-bit floats. */
static cujit_status read_number(const cujit_arg *a, number *v) {
  scalar_bytes x;
  int64_t i;
  memset(v, 0, sizeof *v);
  memcpy(&x, a->value.bytes, sizeof x);
  switch (a->type) {
    case CUJIT_TYPE_BOOL: v->mag = x.u8 != 0; break;
    case CUJIT_TYPE_U8: v->mag = x.u8; break;
    case CUJIT_TYPE_U16: v->mag = x.u16; break;
    case CUJIT_TYPE_U32: v->mag = x.u32; break;
    case CUJIT_TYPE_U64: v->mag = x.u64; break;
    case CUJIT_TYPE_I8:
    case CUJIT_TYPE_I16:
    case CUJIT_TYPE_I32:
    case CUJIT_TYPE_I64:
      i = a->type == CUJIT_TYPE_I8    ? (int8_t)x.u8
          : a->type == CUJIT_TYPE_I16 ? (int16_t)x.u16
          : a->type == CUJIT_TYPE_I32 ? (int32_t)x.u32
                                      : (int64_t)x.u64;
      v->neg = i < 0;
      v->mag = v->neg ? 0 - (uint64_t)i : (uint64_t)i; /* INT64_MIN too, without overflow */
      break;
    case CUJIT_TYPE_F32: v->form = NUM_REAL, v->re = x.f32[0]; break;
    case CUJIT_TYPE_F64: v->form = NUM_REAL, v->re = x.f64[0]; break;
    case CUJIT_TYPE_C64: v->form = NUM_COMPLEX, v->re = x.f32[0], v->im = x.f32[1]; break;
    case CUJIT_TYPE_C128: v->form = NUM_COMPLEX, v->re = x.f64[0], v->im = x.f64[1]; break;
    default: return CUJIT_ERROR_NOT_SUPPORTED;
  }
  return CUJIT_OK;
}

/* An integer of `bytes` bytes, signed or not, from v; refused out of its range, or for a
 * real with a fraction, an infinity or NaN. */
static cujit_status to_int(const arg_ctx *c, const number *v, size_t bytes, int is_signed,
                           scalar_bytes *out) {
  int bits = (int)bytes * 8;
  uint64_t max_pos = is_signed    ? ((uint64_t)1 << (bits - 1)) - 1
                     : bits == 64 ? UINT64_MAX
                                  : ((uint64_t)1 << bits) - 1;
  uint64_t max_neg = is_signed ? (uint64_t)1 << (bits - 1) : 0;
  number n = *v;
  if (v->form == NUM_REAL) {
    double limit = ldexp(1.0, is_signed ? bits - 1 : bits); /* exact: a power of two */
    if (!isfinite(v->re) || v->re != trunc(v->re))
      return refuse(c, v,
                    "not an integer (C would truncate it, or leave it undefined); "
                    "round it first, or declare the parameter as a float type");
    if (v->re >= limit || v->re < (is_signed ? -limit : 0))
      return refuse(c, v, "out of the parameter type's range");
    n.neg = v->re < 0;
    n.mag = (uint64_t)fabs(v->re); /* below 2^64: converted exactly */
  }
  if (n.neg ? n.mag > max_neg : n.mag > max_pos)
    return refuse(c, v,
                  "out of the parameter type's range (C would wrap it or leave it "
                  "undefined)");
  n.mag = n.neg ? 0 - n.mag : n.mag; /* two's complement, cut to the type's size below */
  if (bytes == 1)
    out->u8 = (uint8_t)n.mag;
  else if (bytes == 2)
    out->u16 = (uint16_t)n.mag;
  else if (bytes == 4)
    out->u32 = (uint32_t)n.mag;
  else
    out->u64 = n.mag;
  return CUJIT_OK;
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
static cujit_status to_real(const arg_ctx *c, const number *v, int t, void *out) {
  double d = v->form == NUM_INT ? (v->neg ? -odd_double(v->mag) : odd_double(v->mag)) : v->re;
  int overflow;
  if (t == CUJIT_TYPE_F64) {
    /* one rounding from the integer itself, as C converts it */
    double x = v->form == NUM_INT ? (v->neg ? -(double)v->mag : (double)v->mag) : v->re;
    memcpy(out, &x, sizeof x);
    return CUJIT_OK;
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
  if (overflow) return refuse(c, v, "beyond the parameter type's range (C leaves that undefined)");
  return CUJIT_OK;
}

/* Converts a scalar argument to the declared scalar type into *out. */
static cujit_status convert(const arg_ctx *c, int t, scalar_bytes *out) {
  const cujit_arg *a = c->a;
  size_t size = cj_elem_of(t)->size;
  number v;
  if (a->type == CUJIT_TYPE_BYTES || a->type == t) {
    if (a->size != size || a->data)
      return refuse(c, NULL, "a value of another size; give one of the declared type");
    memcpy(out, a->value.bytes, size);
    return CUJIT_OK;
  }
  if (a->type == CUJIT_TYPE_PTR)
    return refuse(c, NULL,
                  "a device pointer is not a scalar; declare an array (TYPE *name) "
                  "and pass the array");
  if (read_number(a, &v) != CUJIT_OK)
    return refuse(c, NULL,
                  "cujit converts only bool, integers, float, double and complex "
                  "values; give one of those, or the declared type's own bytes "
                  "(cujit_value())");
  switch (t) {
    case CUJIT_TYPE_BOOL:
      if (v.form == NUM_COMPLEX) break;
      if (v.form == NUM_INT ? v.neg || v.mag > 1 : v.re != 0 && v.re != 1)
        return refuse(c, &v, "a bool takes 0 and 1 (false and true) only");
      out->u8 = v.form == NUM_INT ? (uint8_t)v.mag : v.re == 1;
      return CUJIT_OK;
    case CUJIT_TYPE_I8:
    case CUJIT_TYPE_I16:
    case CUJIT_TYPE_I32:
    case CUJIT_TYPE_I64:
    case CUJIT_TYPE_U8:
    case CUJIT_TYPE_U16:
    case CUJIT_TYPE_U32:
    case CUJIT_TYPE_U64:
      if (v.form == NUM_COMPLEX) break;
      return to_int(c, &v, size,
                    t == CUJIT_TYPE_I8 || t == CUJIT_TYPE_I16 || t == CUJIT_TYPE_I32 ||
                        t == CUJIT_TYPE_I64,
                    out);
    case CUJIT_TYPE_F16:
    case CUJIT_TYPE_BF16:
    case CUJIT_TYPE_F32:
    case CUJIT_TYPE_F64:
      if (v.form == NUM_COMPLEX) break;
      return to_real(c, &v, t, out);
    case CUJIT_TYPE_C64:
    case CUJIT_TYPE_C128: {
      int part = t == CUJIT_TYPE_C64 ? CUJIT_TYPE_F32 : CUJIT_TYPE_F64;
      number re = v, im;
      memset(&im, 0, sizeof im);
      im.form = NUM_REAL;
      if (v.form == NUM_COMPLEX) re.form = NUM_REAL, im.re = v.im;
      memset(out, 0, sizeof *out);
      if (t == CUJIT_TYPE_C64) {
        CJ_TRY(to_real(c, &re, part, &out->f32[0]));
        return to_real(c, &im, part, &out->f32[1]);
      }
      CJ_TRY(to_real(c, &re, part, &out->f64[0]));
      return to_real(c, &im, part, &out->f64[1]);
    }
    default: break;
  }
  return refuse(c, &v,
                "a complex value for a real parameter (C would drop its imaginary "
                "part); pass its real part");
}

/* Argument i for an array declaration: live, of the declared element type, contiguous and
 * of the first array's size. */
static cujit_status array_arg(const arg_ctx *c, cujit_arg *out, const cj_array **first) {
  cj_array *a;
  char what[96];
  if (c->a->kind != CUJIT_ARG_ARRAY)
    return refuse(c, NULL,
                  c->a->kind == CUJIT_ARG_VALUE
                      ? "pass the array (a cujit_array *, or cujit_arr(a) in an array "
                        "of cujit_arg)"
                      : "In/Out buffers are for launches; make an array of the data "
                        "(cujit_array_from_host())");
  snprintf(what, sizeof what, "argument %zu ('%s')", c->i + 1, c->d->name);
  CJ_TRY(cj_array_get((const cujit_array *)(uintptr_t)c->a->value.ptr, c->fn, what, &a));
  CJ_CHECK(a->type == c->d->type, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is an array of %s, declared as %s; pass an array of the declared type", c->fn,
           what, cj_elem_of(a->type)->name, cj_elem_of(c->d->type)->name);
  /* the kernel indexes it as x[i] */
  CJ_TRY(cj_array_need_contiguous(a, c->fn, what));
  CJ_CHECK(!*first || a->size == (*first)->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s has %lld elements, the first array %lld; all arrays must have the same "
           "size",
           c->fn, what, (long long)a->size, (long long)(*first)->size);
  if (!*first) *first = a;
  *out = cujit_ptr(a->data);
  return CUJIT_OK;
}

/* Argument i for a scalar declaration. */
static cujit_status scalar_arg(const arg_ctx *c, cujit_arg *out) {
  scalar_bytes v;
  int t = c->d->type;
  if (c->a->kind != CUJIT_ARG_VALUE)
    return refuse(c, NULL,
                  c->a->kind == CUJIT_ARG_ARRAY ? "an array for a scalar parameter"
                                                : "an In/Out buffer for a scalar parameter");
  CJ_TRY(convert(c, t, &v));
  *out = cujit_arg_scalar_(t, cj_elem_of(t)->size, &v);
  return CUJIT_OK;
}

cujit_status cj_gen_args(const char *fn, const cj_decl *d, size_t n, const cujit_arg *args,
                         size_t nargs, cujit_arg *out, const cj_array **first) {
  size_t i;
  *first = NULL;
  CJ_CHECK(nargs == n, CUJIT_ERROR_INVALID_VALUE,
           "%s: %zu argument%s given, %zu declared; "
           "pass one per declaration, in their order",
           fn, nargs, nargs == 1 ? "" : "s", n);
  CJ_CHECK(!n || args, CUJIT_ERROR_INVALID_VALUE, "%s: args is NULL", fn);
  for (i = 0; i < n; i++) {
    arg_ctx c = {fn, i, &d[i], &args[i]};
    CJ_CHECK(args[i].kind >= CUJIT_ARG_VALUE && args[i].kind <= CUJIT_ARG_ARRAY,
             CUJIT_ERROR_INVALID_VALUE,
             "%s: argument %zu ('%s') has the unknown kind %d; "
             "make arguments with the cujit_* constructors",
             fn, i + 1, d[i].name, args[i].kind);
    CJ_TRY(d[i].is_array ? array_arg(&c, &out[i], first) : scalar_arg(&c, &out[i]));
  }
  return CUJIT_OK;
}

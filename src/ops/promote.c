/* promote.c - the type an operation gives, following NumPy 2's rules (see cujit.h); the
 * type it computes in, and the type of a sum. */
#include "ops/ops.h"

/* Kinds in promotion order: a kind promotes into any later one. */
enum kind { BOOL, SIGNED, UNSIGNED, FLOAT, COMPLEX };

static enum kind kind_of(int t) {
  switch (cj_elem_of(t)->kind) {
    case CJ_SK_BOOL: return BOOL;
    case CJ_SK_SIGNED: return SIGNED;
    case CJ_SK_UNSIGNED: return UNSIGNED;
    case CJ_SK_COMPLEX: return COMPLEX;
    default: return FLOAT;
  }
}

static int signed_of(size_t size) {
  return size == 1   ? CUJIT_TYPE_I8
         : size == 2 ? CUJIT_TYPE_I16
         : size == 4 ? CUJIT_TYPE_I32
                     : CUJIT_TYPE_I64;
}

static int complex_of(int real) {
  return real == CUJIT_TYPE_F64 ? CUJIT_TYPE_C128 : CUJIT_TYPE_C64;
}

/* The real type of a complex one. */
static int real_of(int c) { return c == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32; }

static int wider(int a, int b) { return cj_elem_of(a)->size >= cj_elem_of(b)->size ? a : b; }

static int floats(int a, int b) {
  if (cj_elem_of(a)->size == 2 && cj_elem_of(b)->size == 2 && a != b) return CUJIT_TYPE_F32;
  return wider(a, b);
}

/* An integer type with a float one: a float wide enough to hold the integer exactly where
 * it can (a 16-bit float holds 8-bit integers; f32 16-bit ones; f64 the rest). */
static int int_float(int i, int f) {
  size_t need = cj_elem_of(i)->size;
  if (need == 1) return f;
  return floats(need == 2 ? CUJIT_TYPE_F32 : CUJIT_TYPE_F64, f);
}

static int strong(int a, int b) {
  enum kind ka = kind_of(a), kb = kind_of(b);
  size_t sa = cj_elem_of(a)->size, sb = cj_elem_of(b)->size;
  if (a == b || kb == BOOL) return a;
  if (ka == BOOL) return b;
  if (ka > kb) return strong(b, a);
  if (ka == kb && ka != FLOAT) return wider(a, b);
  if (ka == SIGNED && kb == UNSIGNED)
    return sa > sb ? a : sb < 8 ? signed_of(2 * sb) : CUJIT_TYPE_F64;
  if (kb == FLOAT) return ka == FLOAT ? floats(a, b) : int_float(a, b);
  /* b is complex */
  return complex_of(strong(ka == COMPLEX ? real_of(a) : a, real_of(b)) == CUJIT_TYPE_F64
                        ? CUJIT_TYPE_F64
                        : CUJIT_TYPE_F32);
}

/* An array of type a with a Python number of kind b (I64: an int; F64: a float; C128: a
 * complex number): the number does not widen an array of its kind or above. */
static int weak(int a, int b) {
  enum kind ka = kind_of(a), kb = kind_of(b);
  if (kb == SIGNED || kb == UNSIGNED) return ka == BOOL ? CUJIT_TYPE_I64 : a;
  if (kb == FLOAT) return ka == FLOAT || ka == COMPLEX ? a : CUJIT_TYPE_F64;
  if (ka == COMPLEX) return a;
  return ka == FLOAT && a != CUJIT_TYPE_F64 ? CUJIT_TYPE_C64 : CUJIT_TYPE_C128;
}

cujit_type cujit_type_promote(cujit_type a, cujit_type b, int is_weak) {
  if (!cj_elem_of(a) || !cj_elem_of(b)) return CUJIT_TYPE_BYTES;
  return (cujit_type)(is_weak ? weak(a, b) : strong(a, b));
}

int cj_ops_compute_type(int t) { return cj_scalar_is_half(t) ? CUJIT_TYPE_F32 : t; }

int cj_ops_sum_type(int t) {
  switch (t) {
    case CUJIT_TYPE_BOOL:
    case CUJIT_TYPE_I8:
    case CUJIT_TYPE_I16:
    case CUJIT_TYPE_I32: return CUJIT_TYPE_I64;
    case CUJIT_TYPE_U8:
    case CUJIT_TYPE_U16:
    case CUJIT_TYPE_U32: return CUJIT_TYPE_U64;
    default: return t;
  }
}

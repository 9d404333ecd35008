/* reducehost.c - a reduction's value in host memory in one call (PyCUDA's max(a).get(),
 * CuPy's float(a.max())): the reduction into a 0-d array of the pool, then its element
 * copied to the caller's variable, checked to be of the result type's size, and given as a
 * double too. */
#include <stdio.h>
#include <string.h>

#include "reduce/reduce.h"
#include "launch/capture.h" /* refusals during a capture */

/* The value of an element of `type` at p as a double: exact but for 64-bit integers
 * beyond 2^53 in magnitude, rounded to the nearest. */
static double as_double(int type, const void *p) {
  int64_t s = 0;
  uint64_t u = 0;
  switch (type) {
    case CUJIT_TYPE_BOOL: return *(const uint8_t *)p != 0;
    case CUJIT_TYPE_I8: return *(const int8_t *)p;
    case CUJIT_TYPE_U8: return *(const uint8_t *)p;
    case CUJIT_TYPE_I16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case CUJIT_TYPE_U16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case CUJIT_TYPE_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case CUJIT_TYPE_U32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case CUJIT_TYPE_I64: memcpy(&s, p, 8); return (double)s;
    case CUJIT_TYPE_U64: memcpy(&u, p, 8); return (double)u;
    default: {
      cj_float_parts v;
      cj_float_parts_of(type, p, &v);
      return cj_float_value(&v);
    }
  }
}

/* Checks what the caller gives to receive a result of type `rt` (`what` says whose). */
static cujit_status check_outputs(const char *fn, const char *what, int rt, const void *result,
                                  size_t bytes, const double *value) {
  const cj_elem *e = cj_elem_of(rt);
  CJ_CHECK(result || value, CUJIT_ERROR_INVALID_VALUE,
           "%s: result and value are NULL; pass a variable of the result's type (%s), or a "
           "double for value",
           fn, e->words);
  CJ_CHECK(result || !bytes, CUJIT_ERROR_INVALID_VALUE, "%s: result is NULL and bytes is %zu", fn,
           bytes);
  CJ_CHECK(!result || bytes == e->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is %s (%zu bytes), and result is %zu bytes; pass a variable of that type "
           "(sizeof it as bytes), or NULL, 0 and a double for value",
           fn, what, e->words, e->size, bytes);
  CJ_CHECK(!value || e->kind != CJ_SK_COMPLEX, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is complex (%s), which no double holds; pass NULL for value and read it "
           "from result",
           fn, what, e->name);
  return CUJIT_OK;
}

/* Copies the 0-d array r into result and value, and destroys it. */
static cujit_status deliver(cujit_status st, cujit_array *r, int rt, void *result, size_t bytes,
                            double *value) {
  unsigned char v[16];
  size_t size = cj_elem_of(rt)->size;
  if (st == CUJIT_OK) st = cujit_array_read(r, v, size);
  cujit_array_destroy(r);
  if (st != CUJIT_OK) return st;
  if (result) memcpy(result, v, bytes);
  if (value) *value = as_double(rt, v);
  return CUJIT_OK;
}

static const char *const op_names[] = {"sum", "min", "max",    "prod",
                                       "any", "all", "argmin", "argmax"};

cujit_status cujit_array_reduce_host(cujit_redop op, const cujit_array *h, void *result,
                                     size_t bytes, double *value) {
  static const char fn[] = "cujit_array_reduce_host";
  char what[64];
  cujit_array *r = NULL;
  cj_array *a;
  cujit_status st;
  int rt;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_TRY(cj_capture_refuse(a->stream, "a reduction into host memory waits for its stream"));
  CJ_CHECK(op >= CUJIT_REDOP_SUM && op <= CUJIT_REDOP_ARGMAX, CUJIT_ERROR_INVALID_VALUE,
           "%s: op is %d; use CUJIT_REDOP_SUM, _MIN, _MAX, _PROD, _ANY, _ALL, _ARGMIN or "
           "_ARGMAX",
           fn, (int)op);
  rt = cj_reduce_result(op, a->type);
  snprintf(what, sizeof what, "the %s of an array of %s", op_names[op], cj_elem_of(a->type)->name);
  CJ_TRY(check_outputs(fn, what, rt, result, bytes, value));
  st = cj_reduce_op(op, a, &r, fn);
  return deliver(st, r, rt, result, bytes, value);
}

cujit_status cujit_array_dot_host(const cujit_array *ha, const cujit_array *hb, void *result,
                                  size_t bytes, double *value) {
  static const char fn[] = "cujit_array_dot_host";
  char what[64];
  cujit_array *r = NULL;
  cj_array *a, *b;
  cujit_status st;
  int rt;
  CJ_TRY(cj_array_get2(ha, hb, fn, "a", "b", &a, &b));
  CJ_TRY(cj_capture_refuse(a->stream, "a reduction into host memory waits for its stream"));
  rt = cujit_type_promote((cujit_type)a->type, (cujit_type)b->type, 0);
  snprintf(what, sizeof what, "the dot product of arrays of %s and %s", cj_elem_of(a->type)->name,
           cj_elem_of(b->type)->name);
  CJ_TRY(check_outputs(fn, what, rt, result, bytes, value));
  st = cj_reduce_dot_op(a, b, &r, fn);
  return deliver(st, r, rt, result, bytes, value);
}

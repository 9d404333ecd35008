/* close.c - NumPy's allclose of two arrays, or of an array and host data: one generated
 * reduction kernel whose map is NumPy's isclose of element i and whose combination is
 * "and", its one value copied to the host. Host data is copied to the device first (one
 * copy, then the same kernel), which is both the simplest and the fastest way: the
 * comparison runs at the device's bandwidth, and a copy of the array down would cost the
 * same transfer and then a loop on one host thread.
 *
 * The kernel computes as NumPy 2 does, type for type: b in its own type when it is a
 * floating or complex one, else in f64 (result_type(b, 1.0)); |a - b| in the promotion of
 * a's type and that; atol + rtol * |b| in b's (rtol and atol rounded to it first, as NumPy
 * casts a Python float), each operation rounded to its type (the 16-bit ones computed in
 * float and rounded, as NumPy's loops do; no fused multiply-add). */
#include <stdio.h>
#include <string.h>

#include "reduce/reduce.h"
#include "launch/capture.h" /* refusals during a capture */

static int real_of(int t) {
  return t == CUJIT_TYPE_C64 ? CUJIT_TYPE_F32 : t == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : t;
}
/* The type isclose computes b in: result_type(b, 1.0). */
static int ref_type(int b) {
  return cj_scalar_is_float(b) || cj_scalar_is_complex(b) ? b : CUJIT_TYPE_F64;
}
/* The C type a real type's values are computed in. */
static const char *repr(int r) { return r == CUJIT_TYPE_F64 ? "double" : "float"; }

/* Rounds v, computed in repr(r), to r. */
static const char *rounding(int r) {
  switch (r) {
    case CUJIT_TYPE_F16: return "__half2float(__float2half_rn(v))";
    case CUJIT_TYPE_BF16: return "__bfloat162float(__float2bfloat16_rn(v))";
    default: return "v";
  }
}

/* A double d rounded to r, in repr(r) (NumPy casts a Python float so). */
static const char *from_double(int r) {
  switch (r) {
    case CUJIT_TYPE_F16: return "__half2float(__double2half(d))";
    case CUJIT_TYPE_BF16: return "__bfloat162float(__double2bfloat16(d))";
    case CUJIT_TYPE_F32: return "(float)d";
    default: return "d";
  }
}

/* The operations of real type r on its values in repr(r), each rounded to r once:
 * cj_<tag>_round, _sub, _mul, _add, _abs, _hypot. */
static void put_ops(cj_buf *s, const char *tag, int r) {
  const char *w = repr(r), *f = r == CUJIT_TYPE_F64 ? "d" : "f";
  cj_buf_printf(s, "__device__ __forceinline__ %s cj_%s_round(%s v) { return %s; }\n", w, tag, w,
                rounding(r));
  cj_buf_printf(s, "__device__ __forceinline__ %s cj_%s_from(double d) { return %s; }\n", w, tag,
                from_double(r));
  cj_buf_printf(s,
                "__device__ __forceinline__ %s cj_%s_sub(%s a, %s b) { return "
                "cj_%s_round(__%ssub_rn(a, b)); }\n"
                "__device__ __forceinline__ %s cj_%s_mul(%s a, %s b) { return "
                "cj_%s_round(__%smul_rn(a, b)); }\n"
                "__device__ __forceinline__ %s cj_%s_add(%s a, %s b) { return "
                "cj_%s_round(__%sadd_rn(a, b)); }\n",
                w, tag, w, w, tag, f, w, tag, w, w, tag, f, w, tag, w, w, tag, f);
  /* a complex magnitude: a float's through double (as the C library's hypotf computes it),
   * a double's by CUDA's hypot */
  if (r == CUJIT_TYPE_F64)
    cj_buf_printf(s,
                  "__device__ __forceinline__ double cj_%s_hypot(double a, double b) { return "
                  "hypot(a, b); }\n",
                  tag);
  else
    cj_buf_printf(s,
                  "__device__ __forceinline__ float cj_%s_hypot(float a, float b) {\n"
                  "  return (float)__dsqrt_rn(__dadd_rn(__dmul_rn((double)a, (double)a), "
                  "__dmul_rn((double)b, (double)b)));\n}\n",
                  tag);
}

/* Appends `x` (an expression of type `from`) as part `im` (0 real, 1 imaginary; a real
 * value's imaginary part is 0) in repr of real type r. */
static void part(cj_buf *s, int from, int im, int r, const char *x) {
  cj_buf e = {0};
  if (cj_scalar_is_complex(from))
    cj_buf_printf(&e, "(%s).%s()", x, im ? "imag" : "real");
  else
    cj_buf_puts(&e, im ? "0" : x);
  if (im && !cj_scalar_is_complex(from)) {
    cj_buf_printf(s, "(%s)0", repr(r));
  } else {
    cj_buf_printf(s, "cj_t_round(");
    cj_array_convert(s, cj_scalar_is_complex(from) ? real_of(from) : from,
                     r == CUJIT_TYPE_F64 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, e.data ? e.data : "0");
    cj_buf_puts(s, ")");
  }
  s->oom |= e.oom;
  cj_buf_free(&e);
}

/* The device function cj_close(x, y, rtol, atol, equal_nan): NumPy's isclose of element x
 * of type a and y of type b. */
static void close_source(cj_buf *s, int a, int b) {
  int y = ref_type(b), t = cujit_type_promote((cujit_type)a, (cujit_type)y, 0);
  int rt = real_of(t), r = real_of(y), c = cj_scalar_is_complex(t);
  const char *wt = repr(rt), *wr = repr(r);
  put_ops(s, "t", rt);
  put_ops(s, "r", r);
  cj_buf_printf(s,
                "__device__ __forceinline__ bool cj_close(const %s xv, const %s yv, double rtol, "
                "double atol, int equal_nan) {\n",
                cj_elem_of(a)->c_name, cj_elem_of(b)->c_name);
  /* y in its computing type (r's values: y's magnitude and finiteness) */
  cj_buf_printf(s, "  const %s yb0 = ", wr);
  cj_buf_puts(s, "cj_r_round(");
  cj_array_convert(s, cj_scalar_is_complex(b) ? real_of(b) : b,
                   r == CUJIT_TYPE_F64 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32,
                   cj_scalar_is_complex(b) ? "(yv).real()" : "yv");
  cj_buf_printf(s, ");\n  const %s yb1 = ", wr);
  if (cj_scalar_is_complex(b)) {
    cj_buf_puts(s, "cj_r_round(");
    cj_array_convert(s, real_of(b), r == CUJIT_TYPE_F64 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32,
                     "(yv).imag()");
    cj_buf_puts(s, ");\n");
  } else {
    cj_buf_printf(s, "(%s)0;\n", wr);
  }
  /* x and y in the promoted type t */
  cj_buf_printf(s, "  const %s x0 = ", wt);
  part(s, a, 0, rt, "xv");
  cj_buf_printf(s, ", x1 = ");
  part(s, a, 1, rt, "xv");
  cj_buf_printf(s, ";\n  const %s y0 = (%s)yb0, y1 = (%s)yb1;\n", wt, wt, wt);
  if (c)
    cj_buf_puts(s, "  const auto d = cj_t_hypot(cj_t_sub(x0, y0), cj_t_sub(x1, y1));\n");
  else
    cj_buf_puts(s, "  const auto d = fabs(cj_t_sub(x0, y0));\n");
  if (cj_scalar_is_complex(y))
    cj_buf_puts(s, "  const auto mag = cj_r_hypot(yb0, yb1);\n");
  else
    cj_buf_puts(s, "  const auto mag = fabs(yb0);\n");
  cj_buf_printf(s,
                "  const %s tol = cj_r_add(cj_r_from(atol), cj_r_mul(cj_r_from(rtol), mag));\n"
                "  const bool finite = isfinite(yb0) && isfinite(yb1);\n"
                "  bool r = (d <= (%s)tol && finite) || (x0 == y0 && x1 == y1);\n"
                "  if (equal_nan) r = r || ((isnan(x0) || isnan(x1)) && (isnan(yb0) || "
                "isnan(yb1)));\n"
                "  return r;\n}\n",
                wr, wt);
}

/* The reduction: NumPy's allclose of x and y (named so, element i of each read as the loop
 * says), planned over the result's shape. */
typedef struct close_kernel {
  cj_reduce_spec spec;
  char name[80];
  char params[200];
  cj_buf pre, map;
  int types[2];
  int64_t lay[3 * CUJIT_ARRAY_MAX_DIMS];
  cujit_arg args[6];
  size_t nargs;
} close_kernel;

static cujit_status close_kernel_make(close_kernel *k, const cj_array *a, const cj_array *b,
                                      const cj_array *full, unsigned bcast, double rtol,
                                      double atol, int equal_nan) {
  const cj_array *arrays[2] = {a, b};
  static const char *const names[2] = {"x", "y"};
  cj_plan plan;
  int j;
  memset(k, 0, sizeof *k);
  plan.dims = 0;
  plan.bcast = bcast;
  if (!a->contig || !b->contig || a->size != full->size || b->size != full->size)
    cj_plan_make(&plan, full->ndim, full->shape, 2, arrays, bcast);
  snprintf(k->params, sizeof k->params,
           "const %s *x, const %s *y, double cj_rtol, double cj_atol, int cj_nan",
           cj_elem_of(a->type)->c_name, cj_elem_of(b->type)->c_name);
  snprintf(k->name, sizeof k->name, "cj_allclose_%s_%s_d%d_b%u", cj_elem_of(a->type)->name,
           cj_elem_of(b->type)->name, plan.dims, plan.dims ? 0u : plan.bcast);
  k->args[0] = cujit_ptr(a->data);
  k->args[1] = cujit_ptr(b->data);
  k->args[2] = cujit_f64(rtol);
  k->args[3] = cujit_f64(atol);
  k->args[4] = cujit_i32(equal_nan != 0);
  k->nargs = 5;
  k->types[0] = a->type;
  k->types[1] = b->type;
  if (plan.dims) {
    size_t bytes = cj_plan_pack(&plan, k->lay);
    size_t used = strlen(k->params);
    snprintf(k->params + used, sizeof k->params - used, ", const cj_lay<%d, 2> cj_lay", plan.dims);
    k->args[k->nargs++] = cujit_value(k->lay, bytes);
    cj_layout_source(&k->pre);
  }
  close_source(&k->pre, a->type, b->type);
  cj_buf_puts(&k->map, "cj_close(");
  for (j = 0; j < 2; j++) {
    if (plan.dims)
      cj_buf_printf(&k->map, "%s[cj_off((unsigned long long)i, cj_lay, %d)]", names[j], j);
    else
      cj_buf_printf(&k->map, "%s[%s]", names[j], plan.bcast >> j & 1 ? "0" : "i");
    cj_buf_puts(&k->map, ", ");
  }
  cj_buf_puts(&k->map, "cj_rtol, cj_atol, cj_nan)");
  if (k->pre.oom || k->map.oom || !k->pre.data || !k->map.data)
    return cj_fail_oom("writing the allclose kernel");
  k->spec.name = k->name;
  k->spec.acc = CUJIT_TYPE_BOOL;
  k->spec.result = CUJIT_TYPE_BOOL;
  k->spec.neutral = "true";
  k->spec.reduce = "a && b";
  k->spec.map = k->map.data;
  k->spec.params = k->params;
  k->spec.preamble = k->pre.data;
  k->spec.types = k->types;
  k->spec.ntypes = 2;
  return CUJIT_OK;
}

/* allclose of arrays looked up, for `fn`. */
static cujit_status allclose(const char *fn, const cj_array *a, const cj_array *b, double rtol,
                             double atol, int equal_nan, int *close) {
  static const char *const names[2] = {"a", "b"};
  cj_array shape;
  const cj_array *full = a;
  unsigned bcast = 0;
  close_kernel k;
  cujit_function *f = NULL;
  unsigned char result = 0;
  cujit_status st;
  if (!cj_array_same_shape(a, b)) {
    CJ_TRY(cj_ops_broadcast(fn, (const cj_array *const[]){a, b}, names, 2, &shape, &bcast));
    full = &shape;
  }
  if (full->size == 0) { /* every element of none is close */
    *close = 1;
    return CUJIT_OK;
  }
  st = close_kernel_make(&k, a, b, full, bcast, rtol, atol, equal_nan);
  if (st == CUJIT_OK) st = cj_reduce_kernel(&k.spec, &f);
  if (st == CUJIT_OK)
    st = cj_reduce_run(f, &k.spec, full->size, a->stream, k.args, k.nargs, 0, &result);
  cj_buf_free(&k.pre);
  cj_buf_free(&k.map);
  if (st == CUJIT_OK) *close = result != 0;
  return st;
}

cujit_status cujit_array_allclose(const cujit_array *ha, const cujit_array *hb, double rtol,
                                  double atol, int equal_nan, int *close) {
  static const char fn[] = "cujit_array_allclose";
  cj_array *a, *b;
  CJ_CHECK(close, CUJIT_ERROR_INVALID_VALUE, "%s: close is NULL", fn);
  CJ_TRY(cj_array_get2(ha, hb, fn, "a", "b", &a, &b));
  CJ_TRY(cj_capture_refuse(a->stream, "cujit_array_allclose() gives its answer in host memory, "
                                      "which waits for the array's stream"));
  return allclose(fn, a, b, rtol, atol, equal_nan, close);
}

cujit_status cujit_array_allclose_host(const cujit_array *ha, const void *b, size_t bytes,
                                       double rtol, double atol, int equal_nan, int *close) {
  static const char fn[] = "cujit_array_allclose_host";
  cujit_array *h = NULL;
  cj_array *a, *t;
  size_t esize;
  int one;
  cujit_status st;
  CJ_CHECK(close, CUJIT_ERROR_INVALID_VALUE, "%s: close is NULL", fn);
  CJ_TRY(cj_array_get(ha, fn, "a", &a));
  CJ_TRY(cj_capture_refuse(a->stream, "cujit_array_allclose_host() gives its answer in host "
                                      "memory, which waits for the array's stream"));
  esize = cj_elem_of(a->type)->size;
  CJ_CHECK(bytes == a->nbytes || bytes == esize, CUJIT_ERROR_INVALID_VALUE,
           "%s: b is %zu bytes; give a's elements (%zu bytes: its shape, C order, of a's type %s) "
           "or one %s element (%zu bytes) to compare every element with",
           fn, bytes, a->nbytes, cj_elem_of(a->type)->name, cj_elem_of(a->type)->name, esize);
  CJ_CHECK(b || !bytes, CUJIT_ERROR_INVALID_VALUE, "%s: b is NULL", fn);
  if (a->size == 0) {
    *close = 1;
    return CUJIT_OK;
  }
  one = bytes != a->nbytes; /* one element for all of a's */
  CJ_TRY(cj_array_new_on(&h, &t, a->type, one ? 0 : a->ndim, a->shape, a->stream, fn));
  st = cujit_array_write(h, b, bytes);
  if (st == CUJIT_OK) st = allclose(fn, a, t, rtol, atol, equal_nan, close);
  cujit_array_destroy(h);
  return st;
}

/* text.c - arrays as NumPy prints them (str(a), print(a)), from host memory: the elements
 * in nested brackets, one level a dimension, rows wrapped at 75 columns, and arrays of more
 * than 1000 elements summarised to the first and last 3 of each dimension around "...";
 * each element type formatted as NumPy's defaults format it (precision 8; floats in fixed
 * or scientific notation chosen over all the elements shown, padded to line up).
 *
 * The formatting is NumPy's (numpy/_core/arrayprint.py and the Dragon4 digits of its
 * scalars), written again here; digits.c gives the digits. A 0-d array prints as NumPy's
 * str() of its scalar. Pure functions of host memory. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"

#define EDGE 3         /* NumPy's edgeitems */
#define THRESHOLD 1000 /* NumPy's threshold: larger arrays are summarised */
#define WIDTH 75       /* NumPy's linewidth */
#define PRECISION 8    /* NumPy's precision */

int cj_text_kept(int ndim, const int64_t *shape, int64_t *kept) {
  int64_t size = 1;
  int d, summarise;
  for (d = 0; d < ndim; d++) size *= shape[d]; /* a valid shape: no overflow */
  summarise = size > THRESHOLD;
  for (d = 0; d < ndim; d++) kept[d] = summarise && shape[d] > 2 * EDGE ? 2 * EDGE : shape[d];
  return summarise;
}

/* ---- element formats ---- */

static int part_type(int t) { return t == CUJIT_TYPE_C64 ? CUJIT_TYPE_F32 : CUJIT_TYPE_F64; }

/* NumPy's FloatingFormat: fixed or scientific notation for a set of values, and the widths
 * that line them up. */
typedef struct float_fmt {
  int sci;
  int plus; /* a sign on every value: '+' before the nonnegative ones (imaginary parts) */
  int pad_left, pad_right, min_digits, exp_size;
} float_fmt;

/* The decimal digits of an exponent. */
static int exp_digits(int e) {
  int n = 1;
  for (e = e < 0 ? -e : e; e >= 10; e /= 10) n++;
  return n;
}

/* Digit i of d (0 beyond its digits, and before them). */
static int digit_at(const cj_decimal *d, int i) { return i >= 0 && i < d->n ? d->d[i] : 0; }

/* Appends |value| in fixed notation: the integer digits, the point, the fraction digits
 * (at least min_digits); keep_zero adds one 0 after a point with none ("1.0"), drop_point
 * drops a point with none ("1"). */
static void put_fixed(cj_buf *b, const cj_decimal *d, int min_digits, int keep_zero,
                      int drop_point) {
  int i, frac = d->n - d->point > 0 ? d->n - d->point : 0;
  if (d->point <= 0 || !d->n)
    cj_buf_puts(b, "0");
  else
    for (i = 0; i < d->point; i++) cj_buf_printf(b, "%d", digit_at(d, i));
  if (frac < min_digits) frac = min_digits;
  if (!frac && drop_point) return;
  cj_buf_puts(b, ".");
  for (i = 0; i < frac; i++) cj_buf_printf(b, "%d", digit_at(d, d->point + i));
  if (!frac && keep_zero) cj_buf_puts(b, "0");
}

/* Appends |value| in scientific notation: d.ddd (at least min_digits after the point; the
 * point dropped with none when drop_point) e, the exponent's sign, its digits (at least
 * exp_size, and 2). */
static void put_sci(cj_buf *b, const cj_decimal *d, int min_digits, int drop_point, int exp_size) {
  int i, frac = d->n > 1 ? d->n - 1 : 0, e = d->n ? d->point - 1 : 0, w = exp_digits(e);
  cj_buf_printf(b, "%d", digit_at(d, 0));
  if (frac < min_digits) frac = min_digits;
  if (frac || !drop_point) cj_buf_puts(b, ".");
  for (i = 0; i < frac; i++) cj_buf_printf(b, "%d", digit_at(d, 1 + i));
  if (w < 2) w = 2;
  if (w < exp_size) w = exp_size;
  cj_buf_printf(b, "e%c%0*d", e < 0 ? '-' : '+', w, e < 0 ? -e : e);
}

/* The parts of element k of a float array (`type`), or of a complex one's real (part 0)
 * or imaginary (part 1) parts. */
static void parts_at(int type, const void *host, int64_t k, int part, cj_float_parts *v) {
  size_t size = cj_elem_of(type)->size;
  const char *p = (const char *)host + (size_t)k * size;
  if (cj_scalar_is_complex(type)) {
    cj_float_parts_of(part_type(type), p + (size_t)part * size / 2, v);
    return;
  }
  cj_float_parts_of(type, p, v);
}

/* 10^min(8, the type's decimal precision), as NumPy 2 chooses scientific notation from
 * (numpy.finfo(t).precision: 3 for f16, 2 for bf16, 6 for f32, 15 for f64). */
static double sci_cutoff(int t) {
  switch (t) {
    case CUJIT_TYPE_F16: return 1e3;
    case CUJIT_TYPE_BF16: return 1e2;
    case CUJIT_TYPE_F32: return 1e6;
    default: return 1e8;
  }
}

/* NumPy's FloatingFormat.fillFormat over the n values (of part `part`). */
static void float_fill(float_fmt *f, int type, const void *host, int64_t n, int part, int plus) {
  int t = cj_scalar_is_complex(type) ? part_type(type) : type;
  double lo = 0, hi = 0;
  int64_t k, finite = 0;
  int any_nonfinite = 0, neg_inf = 0, e;
  memset(f, 0, sizeof *f);
  f->plus = plus;
  /* scientific when the nonzero magnitudes reach the type's cutoff, go below 1e-4, or
   * span more than 1000 (compared in the type, as NumPy compares them) */
  for (k = 0; k < n; k++) {
    cj_float_parts v;
    double a;
    parts_at(type, host, k, part, &v);
    if (v.kind == CJ_FP_INF || v.kind == CJ_FP_NAN) {
      any_nonfinite = 1;
      neg_inf |= v.kind == CJ_FP_INF && v.sign;
      continue;
    }
    finite++;
    if (v.kind == CJ_FP_ZERO) continue;
    a = cj_float_value(&v);
    a = a < 0 ? -a : a;
    if (hi == 0 || a > hi) hi = a;
    if (lo == 0 || a < lo) lo = a;
  }
  if (hi > 0)
    f->sci = hi >= cj_float_round(sci_cutoff(t), t) || lo < cj_float_round(1e-4, t) ||
             cj_float_round(hi / lo, t) > 1000;
  /* the widths: the digits of every finite value, shortest, at most 8 after the point */
  for (k = 0; k < n && finite; k++) {
    cj_float_parts v;
    cj_decimal d;
    int left, right;
    parts_at(type, host, k, part, &v);
    if (v.kind == CJ_FP_INF || v.kind == CJ_FP_NAN) continue;
    cj_float_digits(&v, f->sci, PRECISION, 0, &d);
    left = (v.sign || plus) + (f->sci || d.point <= 0 || !d.n ? 1 : d.point);
    right = f->sci ? (d.n > 1 ? d.n - 1 : 0) : (d.n - d.point > 0 ? d.n - d.point : 0);
    if (left > f->pad_left) f->pad_left = left;
    if (right > f->pad_right) f->pad_right = right;
    e = exp_digits(d.n ? d.point - 1 : 0);
    if (f->sci && (e < 2 ? 2 : e) > f->exp_size) f->exp_size = e < 2 ? 2 : e;
  }
  if (f->sci) { /* every value with as many digits as the longest */
    f->min_digits = f->pad_right;
    f->pad_right = f->exp_size + 2 + f->min_digits;
  }
  if (any_nonfinite) { /* room for nan, inf and -inf right-aligned */
    int offset = f->pad_right + 1, need = 3 + (plus || neg_inf) - offset;
    if (need > f->pad_left) f->pad_left = need;
  }
}

/* Appends one float value as float_fill's format prints it. */
static void float_word(cj_buf *b, const float_fmt *f, const cj_float_parts *v) {
  cj_buf num = {0};
  cj_decimal d;
  size_t len;
  int width;
  if (v->kind == CJ_FP_INF || v->kind == CJ_FP_NAN) {
    const char *s = v->kind == CJ_FP_NAN ? (f->plus ? "+nan" : "nan")
                    : v->sign            ? "-inf"
                    : f->plus            ? "+inf"
                                         : "inf";
    cj_buf_printf(b, "%*s", f->pad_left + f->pad_right + 1, s);
    return;
  }
  cj_float_digits(v, f->sci, f->sci ? f->min_digits : PRECISION, f->min_digits, &d);
  if (v->sign)
    cj_buf_puts(&num, "-");
  else if (f->plus)
    cj_buf_puts(&num, "+");
  if (f->sci)
    put_sci(&num, &d, f->min_digits, 0, f->exp_size);
  else
    put_fixed(&num, &d, 0, 0, 0);
  if (num.oom || !num.data) {
    b->oom = 1;
    cj_buf_free(&num);
    return;
  }
  len = (size_t)(strchr(num.data, '.') - num.data); /* the sign and the integer digits */
  /* the integer part right-aligned to pad_left; fixed notation's fraction padded with
   * spaces to pad_right */
  width = f->pad_left - (int)len;
  cj_buf_printf(b, "%*s%s", width > 0 ? width : 0, "", num.data);
  if (!f->sci) {
    int frac = (int)(num.len - len - 1);
    cj_buf_printf(b, "%*s", f->pad_right - frac > 0 ? f->pad_right - frac : 0, "");
  }
  cj_buf_free(&num);
}

/* A 0-d float of type t as NumPy's str() of its scalar: fixed notation from 1e-4 to below
 * 1e16 for f64, below the cutoff of arrays for the other types (and for 0), else scientific, with
 * the shortest digits; "1.0" (keep_zero) or "1" and "1e+20" (NumPy's trim modes). plus: '+' before
 * a nonnegative value. */
static void scalar_float(cj_buf *b, int t, const cj_float_parts *v, int keep_zero, int plus) {
  cj_decimal d;
  double a = cj_float_value(v);
  int fixed;
  if (v->kind == CJ_FP_NAN) {
    cj_buf_puts(b, plus ? "+nan" : "nan");
    return;
  }
  if (v->kind == CJ_FP_INF) {
    cj_buf_puts(b, v->sign ? "-inf" : plus ? "+inf" : "inf");
    return;
  }
  a = a < 0 ? -a : a;
  fixed = v->kind == CJ_FP_ZERO || (a >= 1e-4 && a < (t == CUJIT_TYPE_F64 ? 1e16 : sci_cutoff(t)));
  cj_float_digits(v, !fixed, -1, 0, &d);
  cj_buf_puts(b, v->sign ? "-" : plus ? "+" : "");
  if (fixed)
    put_fixed(b, &d, 0, keep_zero, !keep_zero);
  else
    put_sci(b, &d, 0, 1, 0);
}

/* The format of every element shown. */
typedef struct text_fmt {
  int type;
  int int_width;    /* integers: the widest one's characters */
  float_fmt re, im; /* floats (re), complex numbers (re and im) */
  const void *host;
} text_fmt;

/* An integer element as text (in out, of 24 bytes at least). */
static void int_text(int type, const void *p, char *out, size_t size) {
  int64_t s = 0;
  uint64_t u = 0;
  switch (type) {
    case CUJIT_TYPE_I8: s = *(const int8_t *)p; break;
    case CUJIT_TYPE_I16: {
      int16_t v;
      memcpy(&v, p, 2);
      s = v;
      break;
    }
    case CUJIT_TYPE_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      s = v;
      break;
    }
    case CUJIT_TYPE_I64: memcpy(&s, p, 8); break;
    case CUJIT_TYPE_U8: u = *(const uint8_t *)p; break;
    case CUJIT_TYPE_U16: {
      uint16_t v;
      memcpy(&v, p, 2);
      u = v;
      break;
    }
    case CUJIT_TYPE_U32: {
      uint32_t v;
      memcpy(&v, p, 4);
      u = v;
      break;
    }
    default: memcpy(&u, p, 8); break; /* U64 */
  }
  if (type == CUJIT_TYPE_I8 || type == CUJIT_TYPE_I16 || type == CUJIT_TYPE_I32 ||
      type == CUJIT_TYPE_I64)
    snprintf(out, size, "%" PRId64, s);
  else
    snprintf(out, size, "%" PRIu64, u);
}

static void fmt_fill(text_fmt *f, int type, const void *host, int64_t n) {
  int64_t k;
  memset(f, 0, sizeof *f);
  f->type = type;
  f->host = host;
  if (cj_scalar_is_complex(type)) {
    float_fill(&f->re, type, host, n, 0, 0);
    float_fill(&f->im, type, host, n, 1, 1);
  } else if (cj_scalar_is_float(type)) {
    float_fill(&f->re, type, host, n, 0, 0);
  } else if (type != CUJIT_TYPE_BOOL) {
    for (k = 0; k < n; k++) {
      char t[32];
      int_text(type, (const char *)host + (size_t)k * cj_elem_of(type)->size, t, sizeof t);
      if ((int)strlen(t) > f->int_width) f->int_width = (int)strlen(t);
    }
  }
}

/* Appends element k as its array's format prints it. */
static void word(cj_buf *b, const text_fmt *f, int64_t k) {
  const char *p = (const char *)f->host + (size_t)k * cj_elem_of(f->type)->size;
  if (f->type == CUJIT_TYPE_BOOL) {
    cj_buf_puts(b, *(const uint8_t *)p ? " True" : "False");
  } else if (cj_scalar_is_complex(f->type)) {
    cj_buf im_text = {0};
    cj_float_parts re, im;
    size_t end;
    parts_at(f->type, f->host, k, 0, &re);
    parts_at(f->type, f->host, k, 1, &im);
    float_word(b, &f->re, &re);
    float_word(&im_text, &f->im, &im);
    /* the j goes before the imaginary part's trailing spaces */
    end = im_text.len;
    while (end > 0 && im_text.data[end - 1] == ' ') end--;
    cj_buf_append(b, im_text.data ? im_text.data : "", end);
    cj_buf_puts(b, "j");
    cj_buf_append(b, im_text.data ? im_text.data + end : "", im_text.len - end);
    b->oom |= im_text.oom;
    cj_buf_free(&im_text);
  } else if (cj_scalar_is_float(f->type)) {
    cj_float_parts v;
    parts_at(f->type, f->host, k, 0, &v);
    float_word(b, &f->re, &v);
  } else {
    char t[32];
    int_text(f->type, p, t, sizeof t);
    cj_buf_printf(b, "%*s", f->int_width, t);
  }
}

/* A 0-d array: NumPy's str() of its scalar. */
static void scalar_text(cj_buf *b, int type, const void *host) {
  if (type == CUJIT_TYPE_BOOL) {
    cj_buf_puts(b, *(const uint8_t *)host ? "True" : "False");
  } else if (cj_scalar_is_complex(type)) {
    cj_float_parts re, im;
    parts_at(type, host, 0, 0, &re);
    parts_at(type, host, 0, 1, &im);
    if (re.kind == CJ_FP_ZERO && !re.sign) { /* a positive zero real part is left out */
      scalar_float(b, part_type(type), &im, 0, 0);
      cj_buf_puts(b, "j");
      return;
    }
    cj_buf_puts(b, "(");
    scalar_float(b, part_type(type), &re, 0, 0);
    scalar_float(b, part_type(type), &im, 0, 1);
    cj_buf_puts(b, "j)");
  } else if (cj_scalar_is_float(type)) {
    cj_float_parts v;
    cj_float_parts_of(type, host, &v);
    scalar_float(b, type, &v, 1, 0);
  } else {
    char t[32];
    int_text(type, host, t, sizeof t);
    cj_buf_puts(b, t);
  }
}

/* ---- the brackets, rows and lines: NumPy's _formatArray ---- */

typedef struct layout {
  const text_fmt *fmt;
  int ndim;
  const int64_t *shape; /* the array's */
  int64_t kept[CUJIT_ARRAY_MAX_DIMS];
  int64_t step[CUJIT_ARRAY_MAX_DIMS]; /* C-order strides of the kept elements */
  int summarise;
} layout;

/* Appends `n` spaces. */
static void spaces(cj_buf *b, int n) { cj_buf_printf(b, "%*s", n > 0 ? n : 0, ""); }

/* NumPy's _extendLine: `word` goes on `line`, or (when the line would pass `width` and
 * holds more than its indent) on a new line after `line` moves into s. */
static void extend(cj_buf *s, cj_buf *line, const char *w, size_t wlen, int width, int indent) {
  if ((int)(line->len + wlen) > width && (int)line->len > indent) {
    size_t end = line->len;
    while (end > 0 && line->data[end - 1] == ' ') end--;
    cj_buf_append(s, line->data, end);
    cj_buf_puts(s, "\n");
    line->len = 0;
    spaces(line, indent);
  }
  cj_buf_append(line, w, wlen);
}

/* The kept index of the i-th item shown of dimension `axis` (negative: from the end). */
static int64_t kept_index(const layout *L, int axis, int64_t i) {
  return i >= 0 ? i : L->kept[axis] + i;
}

static void put_nested(cj_buf *out, const layout *L, int axis, int64_t at, int indent, int width);

/* One item of dimension `axis` (kept index k) as a string in w. */
static void item(cj_buf *w, const layout *L, int axis, int64_t at, int64_t k, int indent,
                 int width) {
  w->len = 0;
  if (axis + 1 == L->ndim)
    word(w, L->fmt, at + k * L->step[axis]);
  else
    put_nested(w, L, axis + 1, at + k * L->step[axis], indent + 1, width - 1);
}

static void put_nested(cj_buf *out, const layout *L, int axis, int64_t at, int indent, int width) {
  cj_buf s = {0}, line = {0}, w = {0};
  int64_t n = L->shape[axis], lead, trail, i;
  int summary = L->summarise && n > 2 * EDGE, left = L->ndim - axis;
  lead = summary ? EDGE : 0;
  trail = summary ? EDGE : n;
  if (left == 1) {
    int elem_width = width - 1; /* room for the ']' */
    spaces(&line, indent);
    for (i = 0; i < lead; i++) {
      item(&w, L, axis, at, i, indent, width);
      extend(&s, &line, w.data ? w.data : "", w.len, elem_width, indent);
      cj_buf_puts(&line, " ");
    }
    if (summary) {
      extend(&s, &line, "...", 3, elem_width, indent);
      cj_buf_puts(&line, " ");
    }
    for (i = trail; i >= 1; i--) {
      item(&w, L, axis, at, kept_index(L, axis, -i), indent, width);
      extend(&s, &line, w.data ? w.data : "", w.len, elem_width, indent);
      if (i > 1) cj_buf_puts(&line, " ");
    }
    cj_buf_append(&s, line.data ? line.data : "", line.len);
  } else {
    for (i = 0; i < lead + (summary ? 1 : 0) + trail; i++) {
      int64_t k = i < lead ? i : kept_index(L, axis, -(lead + (summary ? 1 : 0) + trail - i));
      spaces(&s, indent);
      if (summary && i == lead) {
        cj_buf_puts(&s, "...");
      } else {
        item(&w, L, axis, at, k, indent, width);
        cj_buf_append(&s, w.data ? w.data : "", w.len);
      }
      if (i + 1 < lead + (summary ? 1 : 0) + trail) { /* rows apart by left - 1 newlines */
        int j;
        for (j = 0; j < left - 1; j++) cj_buf_puts(&s, "\n");
      }
    }
  }
  /* the first line's indent gives way to the '[' */
  cj_buf_puts(out, "[");
  if (s.data && s.len > (size_t)indent) cj_buf_append(out, s.data + indent, s.len - (size_t)indent);
  cj_buf_puts(out, "]");
  out->oom |= s.oom | line.oom | w.oom;
  cj_buf_free(&s);
  cj_buf_free(&line);
  cj_buf_free(&w);
}

void cj_text_array(cj_buf *b, int type, int ndim, const int64_t *shape, const void *host) {
  layout L;
  text_fmt f;
  int64_t n = 1;
  int d;
  if (ndim == 0) {
    scalar_text(b, type, host);
    return;
  }
  memset(&L, 0, sizeof L);
  L.summarise = cj_text_kept(ndim, shape, L.kept);
  for (d = 0; d < ndim; d++) n *= L.kept[d];
  if (n == 0) { /* an empty array, whatever its shape */
    cj_buf_puts(b, "[]");
    return;
  }
  cj_layout_contiguous(ndim, L.kept, L.step);
  fmt_fill(&f, type, host, n);
  L.fmt = &f;
  L.ndim = ndim;
  L.shape = shape;
  put_nested(b, &L, 0, 0, 1, WIDTH);
}

/* The elements an array of this shape shows (cj_text_kept), gathered from all of them. */
static void gather_kept(int ndim, const int64_t *shape, const int64_t *kept, size_t esize,
                        const void *all, void *out) {
  int64_t n = 1, k, strides[CUJIT_ARRAY_MAX_DIMS];
  int d;
  for (d = 0; d < ndim; d++) n *= kept[d];
  cj_layout_contiguous(ndim, shape, strides);
  for (k = 0; k < n; k++) { /* kept element k: its index in every dimension, then its place */
    int64_t rest = k, off = 0;
    for (d = ndim - 1; d >= 0; d--) {
      int64_t i = rest % kept[d];
      rest /= kept[d];
      if (kept[d] != shape[d] && i >= EDGE) i = shape[d] - 2 * EDGE + i;
      off += i * strides[d];
    }
    memcpy((char *)out + (size_t)k * esize, (const char *)all + (size_t)off * esize, esize);
  }
}

cujit_status cj_text_out(const cj_buf *b, char *buf, size_t size, size_t *length) {
  if (b->oom) return cj_fail_oom("writing an array's text");
  if (length) *length = b->len;
  if (size) {
    size_t n = b->len < size - 1 ? b->len : size - 1;
    if (n) memcpy(buf, b->data, n);
    buf[n] = '\0';
  }
  return CUJIT_OK;
}

static cujit_status check_shape(const char *fn, int type, int ndim, const int64_t *shape) {
  int64_t size = 1;
  int d;
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type arrays hold (use CUJIT_TYPE_BOOL, _I8 ... _U64, "
           "_F16, _BF16, _F32, _F64, _C64 or _C128)",
           fn, type);
  CJ_CHECK(ndim >= 0 && ndim <= CUJIT_ARRAY_MAX_DIMS, CUJIT_ERROR_INVALID_VALUE,
           "%s: ndim is %d; arrays have 0 to %d dimensions", fn, ndim, CUJIT_ARRAY_MAX_DIMS);
  CJ_CHECK(ndim == 0 || shape, CUJIT_ERROR_INVALID_VALUE, "%s: shape is NULL", fn);
  for (d = 0; d < ndim; d++) {
    CJ_CHECK(shape[d] >= 0, CUJIT_ERROR_INVALID_VALUE,
             "%s: shape[%d] is %" PRId64 ", a negative size", fn, d, shape[d]);
    CJ_CHECK(shape[d] == 0 || size <= (INT64_C(1) << 62) / shape[d], CUJIT_ERROR_INVALID_VALUE,
             "%s: the shape holds more than 2^62 elements", fn);
    size *= shape[d];
  }
  return CUJIT_OK;
}

cujit_status cujit_array_format_host(cujit_type type, int ndim, const int64_t *shape,
                                     const void *host, char *buf, size_t size, size_t *length) {
  static const char fn[] = "cujit_array_format_host";
  int64_t kept[CUJIT_ARRAY_MAX_DIMS], n = 1;
  cj_buf b = {0};
  void *shown = NULL;
  int d;
  cujit_status st;
  CJ_TRY(check_shape(fn, type, ndim, shape));
  CJ_CHECK(buf || !size, CUJIT_ERROR_INVALID_VALUE, "%s: buf is NULL and size is %zu", fn, size);
  for (d = 0; d < ndim; d++) n *= shape[d];
  CJ_CHECK(host || !n, CUJIT_ERROR_INVALID_VALUE, "%s: host is NULL", fn);
  if (cj_text_kept(ndim, shape, kept)) { /* summarised: only the corners are read */
    size_t esize = cj_elem_of(type)->size, count = 1;
    for (d = 0; d < ndim; d++) count *= (size_t)kept[d];
    if (!(shown = cj_malloc(count * esize))) return cj_fail_oom("formatting an array");
    gather_kept(ndim, shape, kept, esize, host, shown);
  }
  cj_text_array(&b, type, ndim, shape, shown ? shown : host);
  st = cj_text_out(&b, buf, size, length);
  cj_buf_free(&b);
  cj_free(shown);
  return st;
}

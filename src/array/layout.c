/* layout.c - where an array's elements lie: strides (in elements, negative for a reversed
 * view), whether they are in C order, shapes a strided view can take without a copy,
 * ranges of indices, and the loop a kernel runs over several arrays of one shape.
 *
 * Pure functions of shapes and strides: nothing here touches a handle or the device.
 *
 * Every shape an array has passed cj_layout_count(): its sizes other than 0 multiply to
 * at most 2^62 (CJ_LAYOUT_MAX), an empty array's too. So a C-order stride, the product of
 * the sizes after it (0 counting as 1), fits, and so does a stride times an index along
 * its dimension, and a view's stride times a step that stays inside its dimension: every
 * computation below stays under 2^63 for every such shape, whatever its strides (a view's
 * span lies inside its array's). */
#include <string.h>

#include "array/array.h"

int cj_layout_count(int ndim, const int64_t *shape, int64_t *size) {
  int64_t nonzero = 1, n = 1;
  int d;
  for (d = 0; d < ndim; d++) {
    if (shape[d] < 0) return -1;
    if (!shape[d]) {
      n = 0;
      continue;
    }
    if (nonzero > CJ_LAYOUT_MAX / shape[d]) return -1;
    nonzero *= shape[d];
  }
  *size = n ? nonzero : 0;
  return 0;
}

void cj_layout_contiguous(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  int d;
  for (d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    /* a shape cj_layout_count() accepts never reaches INT64_MAX; any other stops there */
    if (__builtin_mul_overflow(s, shape[d] > 0 ? shape[d] : 1, &s)) s = INT64_MAX;
  }
}

int cj_layout_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides) {
  int64_t want = 1;
  int d;
  for (d = 0; d < ndim; d++)
    if (shape[d] == 0) return 1; /* no element: nothing lies anywhere */
  for (d = ndim - 1; d >= 0; d--) {
    if (shape[d] == 1) continue; /* a dimension of one element never steps */
    if (strides[d] != want) return 0;
    want *= shape[d];
  }
  return 1;
}

/* NumPy's reshape without a copy: the old dimensions (those of one element left out) are
 * taken in groups whose sizes multiply to those of groups of new ones; a group of old
 * dimensions that lie one inside the other in memory gives its new ones C-order strides
 * from its innermost stride. */
int cj_layout_reshape(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim,
                      const int64_t *new_shape, int64_t *new_strides) {
  int64_t od[CUJIT_ARRAY_MAX_DIMS], os[CUJIT_ARRAY_MAX_DIMS];
  int n = 0, oi = 0, oj = 1, ni = 0, nj = 1, d, k;
  for (d = 0; d < ndim; d++) {
    if (shape[d] == 0) { /* empty: any strides will do */
      cj_layout_contiguous(new_ndim, new_shape, new_strides);
      return 1;
    }
    if (shape[d] != 1) od[n] = shape[d], os[n++] = strides[d];
  }
  while (ni < new_ndim && oi < n) {
    int64_t np = new_shape[ni], op = od[oi];
    while (np != op) {
      if (np < op)
        np *= new_shape[nj++];
      else
        op *= od[oj++];
    }
    for (k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return 0;
    new_strides[nj - 1] = os[oj - 1];
    for (k = nj - 1; k > ni; k--) new_strides[k - 1] = new_strides[k] * new_shape[k];
    ni = nj++;
    oi = oj++;
  }
  for (k = ni; k < new_ndim; k++) /* dimensions of one element left at the end */
    new_strides[k] = ni ? new_strides[ni - 1] : 1;
  return 1;
}

int64_t cj_layout_offset(int ndim, const int64_t *shape, const int64_t *strides, int64_t k) {
  int64_t off = 0;
  int d;
  for (d = ndim - 1; d >= 0; d--) {
    if (!shape[d]) return 0;
    off += k % shape[d] * strides[d];
    k /= shape[d];
  }
  return off;
}

/* The bytes [*lo, *hi) that a's elements lie in; 0 when it has none. */
static int span(const cj_array *a, uint64_t *lo, uint64_t *hi) {
  int64_t below = 0, above = 0, esize = (int64_t)cj_elem_of(a->type)->size;
  int d;
  if (a->size == 0) return 0;
  for (d = 0; d < a->ndim; d++) {
    int64_t reach = (a->shape[d] - 1) * a->strides[d]; /* in the array's memory: no overflow */
    if (reach < 0)
      below += reach;
    else
      above += reach;
  }
  /* in bytes, as addresses: an array of 2^60 16-byte elements spans past INT64_MAX */
  *lo = (uint64_t)a->data + (uint64_t)below * (uint64_t)esize;
  *hi = (uint64_t)a->data + ((uint64_t)above + 1) * (uint64_t)esize;
  return 1;
}

/* Whether each element of o is x's element at its own index: o's dimensions of more than
 * one element, from the last, step as x's do (x may lack leading ones of one element). */
static int same_elements(const cj_array *x, const cj_array *o) {
  int d;
  if (x->data != o->data || x->size != o->size ||
      cj_elem_of(x->type)->size != cj_elem_of(o->type)->size)
    return 0;
  for (d = 0; d < o->ndim; d++) {
    int e = d - (o->ndim - x->ndim);
    if (o->shape[d] == 1) continue;
    if (e < 0 || x->shape[e] != o->shape[d] || x->strides[e] != o->strides[d]) return 0;
  }
  return 1;
}

int cj_layout_meet(const cj_array *x, const cj_array *o) {
  uint64_t xlo, xhi, olo, ohi;
  if (!span(x, &xlo, &xhi) || !span(o, &olo, &ohi) || xhi <= olo || ohi <= xlo) return CJ_APART;
  return same_elements(x, o) ? CJ_SAME : CJ_OVERLAP;
}

uint64_t cj_range_count(int64_t start, int64_t stop, int64_t step) {
  uint64_t span, stride; /* in unsigned arithmetic: no signed overflow at the extremes */
  if (step > 0 ? stop <= start : start <= stop) return 0;
  span = step > 0 ? (uint64_t)stop - (uint64_t)start : (uint64_t)start - (uint64_t)stop;
  stride = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
  return (span - 1) / stride + 1;
}

int cj_range_inside(int64_t start, int64_t step, uint64_t count, int64_t size) {
  uint64_t room, stride;
  if (!count) return 1;
  if (start < 0 || start >= size) return 0;
  room = step > 0 ? (uint64_t)(size - 1 - start) : (uint64_t)start;
  stride = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
  return count - 1 <= room / stride;
}

/* ---- the loop over several arrays ---- */

/* Array j's stride along dimension d of the loop's shape: its own dimensions stand for the
 * last of the shape's; a broadcast array steps by 0, and so does one along the dimensions
 * the shape has before its own or where it has one element (NumPy's broadcasting). */
static int64_t stride_of(const cj_array *a, int bcast, int ndim, const int64_t *shape, int d) {
  int own = a ? d - (ndim - a->ndim) : d;
  if (bcast || own < 0 || (a && a->shape[own] == 1)) return 0;
  if (!a) { /* a new output: C order */
    int64_t s = 1;
    int e;
    for (e = ndim - 1; e > d; e--)
      if (__builtin_mul_overflow(s, shape[e], &s)) return INT64_MAX; /* no array's shape */
    return s;
  }
  return a->strides[own];
}

void cj_plan_make(cj_plan *p, int ndim, const int64_t *shape, size_t n,
                  const cj_array *const *arrays, unsigned bcast) {
  int64_t size[CUJIT_ARRAY_MAX_DIMS], st[CUJIT_MAP_MAX_ARRAYS + 1][CUJIT_ARRAY_MAX_DIMS];
  size_t j;
  int d, dims = 0, flat = 1;
  memset(p, 0, sizeof *p);
  p->n = n;
  p->bcast = bcast;
  /* from the innermost dimension out: one of a single element is left out, and one that
   * continues the dimension inside it, in every array, is merged into it */
  for (d = ndim - 1; d >= 0; d--) {
    int merge = dims > 0;
    int64_t merged;
    if (shape[d] == 0) return; /* no element: the contiguous loop, which runs none */
    if (shape[d] == 1) continue;
    for (j = 0; j < n && merge; j++) {
      int64_t next;
      merge = !__builtin_mul_overflow(st[j][dims - 1], size[dims - 1], &next) &&
              stride_of(arrays[j], (int)(bcast >> j & 1), ndim, shape, d) == next;
    }
    if (merge && !__builtin_mul_overflow(size[dims - 1], shape[d], &merged)) {
      size[dims - 1] = merged;
      continue;
    }
    size[dims] = shape[d];
    for (j = 0; j < n; j++)
      st[j][dims] = stride_of(arrays[j], (int)(bcast >> j & 1), ndim, shape, d);
    dims++;
  }
  /* one dimension, every array in C order or broadcast: the contiguous loop */
  for (j = 0; j < n && dims == 1; j++)
    if (st[j][0] != 1 && !(bcast >> j & 1)) flat = 0;
  if (dims <= 1 && flat) return;
  /* the strided loop, outermost dimension first; a broadcast array steps by 0 there */
  p->dims = dims;
  p->bcast = 0;
  for (d = 0; d < dims; d++) {
    p->shape[d] = size[dims - 1 - d];
    for (j = 0; j < n; j++) p->strides[j][d] = st[j][dims - 1 - d];
  }
}

void cj_plan_chunks(cj_plan *p) {
  unsigned chunk = 16;
  size_t j;
  int d, in = p->dims - 1;
  p->chunk = 1;
  p->zinner = 0;
  if (p->dims < 1 || p->n < 1 || p->n > 5) return;
  for (j = 0; j < p->n; j++) {
    if (p->strides[j][in] == 0 && j + 1 < p->n)
      p->zinner |= 1u << j;
    else if (p->strides[j][in] != 1)
      return;
  }
  for (; chunk > 1; chunk /= 2) {
    int fits = p->shape[in] % chunk == 0;
    for (j = 0; j < p->n && fits; j++)
      for (d = 0; d < in && !(p->zinner >> j & 1); d++) fits &= p->strides[j][d] % chunk == 0;
    if (fits) break;
  }
  p->chunk = chunk;
  if (chunk < 2) p->zinner = 0;
}

size_t cj_plan_pack(const cj_plan *p, int64_t *out) {
  size_t j, k = 0;
  int d;
  for (d = 0; d < p->dims; d++) out[k++] = p->shape[d];
  for (j = 0; j < p->n; j++)
    for (d = 0; d < p->dims; d++) out[k++] = p->strides[j][d];
  return k * sizeof *out;
}

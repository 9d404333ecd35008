/* array.c - array handles: making, checking and freeing them, views, properties.
 *
 * Every live array is in a table of handles that never alias, so that a destroyed (or
 * never made) array passed to any function is refused with a message instead of being
 * read after it was freed or taken for a newer array. The memory
 * behind an array is a block shared with its views and freed, on the stream of the array
 * that lets go of it last, when the last one is destroyed. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "launch/capture.h" /* the pool, and what graphs hold */

/* ---- the table of live arrays ----
 *
 * A handle given out is a slot of this table and the slot's generation (common.h), so that
 * a destroyed array's handle is refused even when a new array takes its slot or its
 * memory. Destroyed arrays and blocks are kept as spares, up to SPARES of each, and taken
 * again by the next arrays made, so that an operation in a loop (a new output each time)
 * allocates no host memory and takes the lock once to make its output and once to
 * destroy it. */

#define SPARES 64

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static cj_handles live = CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x21));
static cj_array *spare_arrays[SPARES];
static cj_block *spare_blocks[SPARES];
static size_t n_spare_arrays, n_spare_blocks;

/* Keeps a and b (either may be NULL) as spares, or frees them. Called with the lock held. */
static void keep_spares(cj_array *a, cj_block *b) {
  if (a && n_spare_arrays < SPARES) spare_arrays[n_spare_arrays++] = a, a = NULL;
  if (b && n_spare_blocks < SPARES) spare_blocks[n_spare_blocks++] = b, b = NULL;
  cj_free(a);
  cj_free(b);
}

static void graph_scan(cj_gres *r, void *const *params, const size_t *sizes, size_t n);
static pthread_once_t scan_once = PTHREAD_ONCE_INIT;
static void scan_set(void) { cj_capture_set_scan(graph_scan); }

/* A zeroed array in the table and, when `block` is not NULL, a zeroed block: spares when
 * there are some. Fails (nothing taken) when out of memory or when 2^24 arrays are live. */
static cujit_status take(cj_array **out, cj_block **block) {
  cj_array *a = NULL;
  cj_block *b = NULL;
  uintptr_t h = 0;
  int full;
  pthread_once(&scan_once, scan_set); /* before any array a capture could use */
  pthread_mutex_lock(&live_lock);
  if (n_spare_arrays) a = spare_arrays[--n_spare_arrays];
  if (block && n_spare_blocks) b = spare_blocks[--n_spare_blocks];
  if (a) h = cj_handle_add(&live, a);
  pthread_mutex_unlock(&live_lock);
  if (!a && (a = cj_malloc(sizeof *a)) != NULL) {
    pthread_mutex_lock(&live_lock);
    h = cj_handle_add(&live, a);
    pthread_mutex_unlock(&live_lock);
  }
  if (block && !b) b = cj_malloc(sizeof *b);
  if (h && (!block || b)) {
    memset(a, 0, sizeof *a);
    a->handle = h;
    if (block) memset(*block = b, 0, sizeof *b);
    *out = a;
    return CUJIT_OK;
  }
  pthread_mutex_lock(&live_lock);
  if (h) cj_handle_remove(&live, h);
  keep_spares(a, b);
  full = cj_handles_full(&live);
  pthread_mutex_unlock(&live_lock);
  CJ_CHECK(!full, CUJIT_ERROR_OUT_OF_MEMORY,
           "making an array: %zu arrays are live, the most "
           "cujit keeps at once; destroy some",
           (size_t)1 << CJ_HANDLE_SLOT_BITS);
  return cj_fail_oom("making an array");
}

static cujit_status not_live(const cujit_array *h, const char *fn, const char *what) {
  CJ_CHECK(h, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", fn, what);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: %s is not a live array (destroyed already, "
                 "or never made by cujit)",
                 fn, what);
}

cujit_status cj_array_get(const cujit_array *h, const char *fn, const char *what, cj_array **a) {
  pthread_mutex_lock(&live_lock);
  *a = cj_handle_get(&live, (uintptr_t)h);
  pthread_mutex_unlock(&live_lock);
  return *a ? CUJIT_OK : not_live(h, fn, what);
}

cujit_status cj_array_get2(const cujit_array *ha, const cujit_array *hb, const char *fn,
                           const char *what_a, const char *what_b, cj_array **a, cj_array **b) {
  pthread_mutex_lock(&live_lock);
  *a = cj_handle_get(&live, (uintptr_t)ha);
  *b = cj_handle_get(&live, (uintptr_t)hb);
  pthread_mutex_unlock(&live_lock);
  if (!*a) return not_live(ha, fn, what_a);
  return *b ? CUJIT_OK : not_live(hb, fn, what_b);
}

/* ---- making and freeing ---- */

static cujit_status check_shape(int type, int ndim, const int64_t *shape, const char *fn,
                                int64_t *size) {
  int i;
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type arrays hold "
           "(use CUJIT_TYPE_BOOL, _I8 ... _U64, _F16, _BF16, _F32, _F64, _C64 or "
           "_C128)",
           fn, type);
  CJ_CHECK(ndim >= 0 && ndim <= CUJIT_ARRAY_MAX_DIMS, CUJIT_ERROR_INVALID_VALUE,
           "%s: ndim is %d; arrays have 0 to %d dimensions", fn, ndim, CUJIT_ARRAY_MAX_DIMS);
  CJ_CHECK(shape || !ndim, CUJIT_ERROR_INVALID_VALUE, "%s: shape is NULL", fn);
  for (i = 0; i < ndim; i++)
    CJ_CHECK(shape[i] >= 0, CUJIT_ERROR_INVALID_VALUE,
             "%s: dimension %d has the negative size %lld", fn, i + 1, (long long)shape[i]);
  CJ_CHECK(cj_layout_count(ndim, shape, size) == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the shape's sizes other than 0 multiply to more than 2^62 (an empty array's "
           "other sizes count too, as in NumPy): no array has that shape",
           fn);
  CJ_CHECK((uint64_t)*size <= SIZE_MAX / cj_elem_of(type)->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: the array would not fit in memory", fn);
  return CUJIT_OK;
}

/* Fills an array for `type`/`shape` (`strides`, or C order when NULL) over `block` at
 * `data` (a new reference to the block). */
static void fill(cj_array *a, int type, int ndim, const int64_t *shape, const int64_t *strides,
                 int64_t size, cj_block *block, CUdeviceptr data, CUstream stream) {
  a->type = type;
  a->ndim = ndim;
  if (ndim) memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
  if (strides && ndim)
    memcpy(a->strides, strides, (size_t)ndim * sizeof *strides);
  else
    cj_layout_contiguous(ndim, shape, a->strides);
  a->contig = !strides || cj_layout_is_contiguous(ndim, shape, strides);
  a->size = size;
  a->nbytes = (size_t)size * cj_elem_of(type)->size;
  a->data = data;
  a->stream = stream;
  a->block = block;
  __atomic_add_fetch(&block->refs, 1, __ATOMIC_RELAXED);
}

/* A new array over an existing block (views). */
static cujit_status handle(cujit_array **out, int type, int ndim, const int64_t *shape,
                           const int64_t *strides, int64_t size, cj_block *block, CUdeviceptr data,
                           CUstream stream) {
  cj_array *a;
  CJ_TRY(take(&a, NULL));
  fill(a, type, ndim, shape, strides, size, block, data, stream);
  *out = cj_array_handle(a);
  return CUJIT_OK;
}

/* Gives a block's memory back (to the pool, or to the library that lent it) and keeps the
 * block as a spare. */
static void block_free(cj_block *b, CUstream stream) {
  if (b->release)
    b->release(b, stream);
  else if (b->owned && b->ptr)
    cj_mem_pool_free(b->dev, b->ptr, b->bytes, stream, &b->owner);
  pthread_mutex_lock(&live_lock);
  keep_spares(NULL, b);
  pthread_mutex_unlock(&live_lock);
}

/* A new array of `size` elements (shape checked) with memory from the pool on `stream`. */
static cujit_status new_array(cujit_array **out, cj_array **made, int type, int ndim,
                              const int64_t *shape, int64_t size, CUstream stream) {
  size_t bytes = (size_t)size * cj_elem_of(type)->size;
  CUdeviceptr ptr = 0;
  CUcontext ctx;
  CUdevice dev;
  cj_mem_ctx owner = {NULL, 0};
  cj_block *b;
  cj_array *a;
  cujit_status st = CUJIT_OK;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  if (bytes && (st = cj_mem_pool_alloc(dev, bytes, stream, &ptr, &owner)) != CUJIT_OK) return st;
  if ((st = take(&a, &b)) != CUJIT_OK) {
    if (ptr) cj_mem_pool_free(dev, ptr, bytes, stream, &owner);
    return st;
  }
  b->owner = owner;
  b->dev = dev;
  b->ptr = ptr;
  b->bytes = bytes;
  b->owned = 1;
  fill(a, type, ndim, shape, NULL, size, b, ptr, stream);
  *out = cj_array_handle(a);
  if (made) *made = a;
  return CUJIT_OK;
}

cujit_status cj_array_new_on(cujit_array **out, cj_array **a, int type, int ndim,
                             const int64_t *shape, CUstream stream, const char *fn) {
  int64_t size;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  *out = NULL;
  CJ_TRY(check_shape(type, ndim, shape, fn, &size));
  return new_array(out, a, type, ndim, shape, size, stream);
}

cujit_status cj_array_new(cujit_array **out, cj_array **a, int type, int ndim, const int64_t *shape,
                          const char *fn) {
  return cj_array_new_on(out, a, type, ndim, shape, NULL, fn);
}

cujit_status cujit_array_empty(cujit_array **out, cujit_type type, int ndim, const int64_t *shape) {
  return cj_array_new(out, NULL, type, ndim, shape, "cujit_array_empty");
}

cujit_status cujit_array_empty_like(cujit_array **out, const cujit_array *h) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_empty_like", "a", &a));
  return cj_array_new_on(out, NULL, a->type, a->ndim, a->shape, a->stream,
                         "cujit_array_empty_like");
}

cujit_status cujit_array_wrap(cujit_array **out, cujit_type type, int ndim, const int64_t *shape,
                              CUdeviceptr data) {
  int64_t size;
  cj_block *b;
  cj_array *a;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_array_wrap: out is NULL");
  *out = NULL;
  CJ_TRY(check_shape(type, ndim, shape, "cujit_array_wrap", &size));
  CJ_CHECK(data || !size, CUJIT_ERROR_INVALID_VALUE,
           "cujit_array_wrap: data is 0 for %lld elements", (long long)size);
  CJ_TRY(take(&a, &b));
  b->ptr = data;
  fill(a, type, ndim, shape, NULL, size, b, data, NULL);
  *out = cj_array_handle(a);
  return CUJIT_OK;
}

void cujit_array_destroy(cujit_array *h) {
  cj_array *a;
  cj_block *b = NULL;
  CUstream stream = NULL;
  if (!h) return;
  pthread_mutex_lock(&live_lock);
  /* destroyed already, or not an array: nothing to free, nothing of it read */
  if ((a = cj_handle_remove(&live, (uintptr_t)h)) != NULL) {
    b = a->block;
    stream = a->stream;
    keep_spares(a, NULL);
  }
  pthread_mutex_unlock(&live_lock);
  if (!a) {
    cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_array_destroy: a is not a live array (destroyed "
                                       "already, or never made by cujit); nothing was freed");
    return;
  }
  cj_block_release(b, stream);
}

void cj_block_retain(cj_block *b) { __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED); }

static int held_by_capture(cj_block *b, CUstream stream);

void cj_block_release(cj_block *b, CUstream stream) {
  __atomic_store_n(&b->last_stream, stream, __ATOMIC_RELEASE);
  if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0 && !held_by_capture(b, stream))
    block_free(b, stream);
}

/* ---- the arrays a graph uses ----
 *
 * A captured launch reaches arrays through its pointer arguments (whoever made them: an
 * operation, a generator, cujit_launch() with cujit_array_data()), and a captured copy of
 * an operation's through the arrays it copies: the graph holds each one's block, as a view
 * does, so that an array destroyed while the graph lives gives its memory back only when
 * the graph is done with it, ordered on the stream of the array that let go of it last.
 * A launch's arrays are found by address among the live ones: only while a capture runs,
 * once for each launch it captures. */

static void block_unhold(void *obj) {
  cj_block *b = obj;
  cj_block_release(b, __atomic_load_n(&b->last_stream, __ATOMIC_ACQUIRE));
}

/* Holds b for r (live lock held, so that b lives). */
static void hold(cj_gres *r, cj_block *b) {
  if (cj_gres_hold(r, b, block_unhold) == 1) cj_block_retain(b);
}

/* Where an array's memory lies: its block's, or (memory the block does not span: wrapped or
 * borrowed) its own elements'. */
static void span_of(const cj_array *a, CUdeviceptr *lo, CUdeviceptr *hi) {
  *lo = a->block->bytes ? a->block->ptr : a->data;
  *hi = *lo + (a->block->bytes ? a->block->bytes : a->nbytes);
}

/* Whether one of the arguments' 8-byte words (a pointer, or a pointer inside a struct)
 * points into [lo, hi). */
static int points_into(void *const *params, const size_t *sizes, size_t n, CUdeviceptr lo,
                       CUdeviceptr hi) {
  size_t i, at;
  for (i = 0; i < n; i++)
    for (at = 0; at + sizeof(CUdeviceptr) <= sizes[i]; at += sizeof(CUdeviceptr)) {
      CUdeviceptr v;
      memcpy(&v, (const char *)params[i] + at, sizeof v);
      if (v >= lo && v < hi) return 1;
    }
  return 0;
}

static void graph_scan(cj_gres *r, void *const *params, const size_t *sizes, size_t n) {
  size_t k;
  pthread_mutex_lock(&live_lock);
  for (k = 0; k < live.n; k++) {
    cj_array *a = live.slots[k].obj;
    CUdeviceptr lo, hi;
    if (!a) continue;
    span_of(a, &lo, &hi);
    if (lo < hi && points_into(params, sizes, n, lo, hi)) hold(r, a->block);
  }
  pthread_mutex_unlock(&live_lock);
}

/* Borrowed memory whose last holder lets go on a stream being captured: the producer's
 * deleter must wait for that stream, which a capture forbids, and the graph's work may use
 * the memory; the capture holds it instead, and its graph gives it back. 1 when held. */
static int held_by_capture(cj_block *b, CUstream stream) {
  cj_gres *r;
  if (CJ_LIKELY(!__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) || !b->release ||
      !(r = cj_capture_res(stream)))
    return 0;
  cj_block_retain(b); /* the capture's reference, from nothing: no one else has it */
  if (cj_gres_hold(r, b, block_unhold) == 1) return 1;
  __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
  return 0;
}

void cj_array_captured(CUstream stream, const cj_array *a) {
  cj_gres *r;
  if (CJ_LIKELY(!__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) ||
      !(r = cj_capture_res(stream)))
    return;
  pthread_mutex_lock(&live_lock);
  hold(r, a->block);
  pthread_mutex_unlock(&live_lock);
}

cujit_status cj_array_adopt(cujit_array **out, int type, int ndim, const int64_t *shape,
                            const int64_t *strides, CUdeviceptr data, const cj_block *like,
                            const char *fn) {
  int64_t size;
  cj_block *b;
  cj_array *a;
  *out = NULL;
  CJ_TRY(check_shape(type, ndim, shape, fn, &size));
  CJ_TRY(take(&a, &b));
  b->dev = like->dev;
  b->ptr = like->ptr;
  b->release = like->release;
  b->lender = like->lender;
  b->read_only = like->read_only;
  fill(a, type, ndim, shape, strides, size, b, data, NULL);
  *out = cj_array_handle(a);
  return CUJIT_OK;
}

cujit_status cj_array_unmake(cujit_status st, cujit_array **out, int made) {
  if (st != CUJIT_OK && made) {
    cujit_array_destroy(*out);
    *out = NULL;
  }
  return st;
}

cujit_status cj_array_output_of(cujit_array **out, cj_array *o_given, const cj_array *like,
                                int type, const char *fn, cj_array **o, int *made) {
  char x[CJ_SHAPE_TEXT], y[CJ_SHAPE_TEXT];
  *made = 0;
  if (!o_given) {
    /* like's shape holds a valid count; only a wider type could overflow the bytes */
    CJ_CHECK((uint64_t)like->size <= SIZE_MAX / cj_elem_of(type)->size, CUJIT_ERROR_INVALID_VALUE,
             "%s: the result would not fit in memory", fn);
    /* allocated on the stream its work is ordered on: pool memory is ordered there */
    CJ_TRY(new_array(out, o, type, like->ndim, like->shape, like->size, like->stream));
    *made = 1;
    return CUJIT_OK;
  }
  *o = o_given;
  CJ_CHECK((*o)->type == type, CUJIT_ERROR_INVALID_VALUE,
           "%s: the output holds %s, the result is %s; pass "
           "an output of the result's type, or NULL for a new one",
           fn, cj_elem_of((*o)->type)->name, cj_elem_of(type)->name);
  CJ_CHECK(cj_array_same_shape(*o, like), CUJIT_ERROR_INVALID_VALUE,
           "%s: the output's shape %s differs from the result's %s; pass NULL for a new one", fn,
           cj_array_shape_text(*o, x), cj_array_shape_text(like, y));
  return CUJIT_OK;
}

cujit_status cj_array_output(cujit_array **out, const cj_array *like, int type, const char *fn,
                             cj_array **o, int *made) {
  cj_array *given = NULL;
  *made = 0;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  if (*out) CJ_TRY(cj_array_get(*out, fn, "*out", &given));
  return cj_array_output_of(out, given, like, type, fn, o, made);
}

cujit_status cj_array_need_contiguous(const cj_array *a, const char *fn, const char *what) {
  CJ_CHECK(a->contig, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is a strided view (its elements are not one after another in C order), "
           "which %s does not take; make it contiguous with cujit_array_copy first",
           fn, what, fn);
  return CUJIT_OK;
}

int cj_array_same_shape(const cj_array *a, const cj_array *b) {
  return a->ndim == b->ndim && a->size == b->size &&
         (!a->ndim || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape) == 0);
}

const char *cj_array_shape_text(const cj_array *a, char out[CJ_SHAPE_TEXT]) {
  size_t used = 1;
  int i;
  out[0] = '(';
  for (i = 0; i < a->ndim; i++)
    used += (size_t)snprintf(out + used, CJ_SHAPE_TEXT - used, "%s%lld", i ? ", " : "",
                             (long long)a->shape[i]);
  snprintf(out + used, CJ_SHAPE_TEXT - used, "%s", a->ndim == 1 ? ",)" : ")");
  return out;
}

/* ---- views ---- */

cujit_status cujit_array_view(const cujit_array *h, int64_t start, int64_t stop,
                              cujit_array **view) {
  static const char fn[] = "cujit_array_view";
  int64_t len, step = 1;
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "%s: view is NULL", fn);
  *view = NULL;
  CJ_CHECK(start >= 0 && stop >= start && stop <= a->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: [%lld, %lld) is not a range of the array's %lld elements", fn, (long long)start,
           (long long)stop, (long long)a->size);
  /* a strided view is 1-D with one step only where its elements are evenly spaced */
  CJ_CHECK(a->contig || cj_layout_reshape(a->ndim, a->shape, a->strides, 1, &a->size, &step),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: a is a strided view whose elements are not evenly spaced in C order, so no "
           "1-D view holds them; make it contiguous with cujit_array_copy first",
           fn);
  len = stop - start;
  return handle(view, a->type, 1, &len, &step, len, a->block,
                a->data + cj_array_step(start, step, cj_elem_of(a->type)->size), a->stream);
}

cujit_status cujit_array_reshape(const cujit_array *h, int ndim, const int64_t *shape,
                                 cujit_array **view) {
  static const char fn[] = "cujit_array_reshape";
  int64_t size, strides[CUJIT_ARRAY_MAX_DIMS];
  char was[CJ_SHAPE_TEXT];
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "%s: view is NULL", fn);
  *view = NULL;
  CJ_TRY(check_shape(a->type, ndim, shape, fn, &size));
  CJ_CHECK(size == a->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: the new shape holds %lld elements, the array %lld", fn, (long long)size,
           (long long)a->size);
  if (a->contig)
    return handle(view, a->type, ndim, shape, NULL, size, a->block, a->data, a->stream);
  CJ_CHECK(cj_layout_reshape(a->ndim, a->shape, a->strides, ndim, shape, strides),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: a is a strided view of shape %s whose elements no view of the new shape "
           "holds; make it contiguous with cujit_array_copy first",
           fn, cj_array_shape_text(a, was));
  return handle(view, a->type, ndim, shape, strides, size, a->block, a->data, a->stream);
}

cujit_status cujit_array_slice(const cujit_array *h, int dim, int64_t start, int64_t stop,
                               int64_t step, cujit_array **view) {
  static const char fn[] = "cujit_array_slice";
  int64_t shape[CUJIT_ARRAY_MAX_DIMS], strides[CUJIT_ARRAY_MAX_DIMS], size = 1;
  uint64_t count;
  cj_array *a;
  int d;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "%s: view is NULL", fn);
  *view = NULL;
  CJ_CHECK(dim >= 0 && dim < a->ndim, CUJIT_ERROR_INVALID_VALUE,
           "%s: dim is %d; the array has %d dimension%s (0 to %d)", fn, dim, a->ndim,
           a->ndim == 1 ? "" : "s", a->ndim - 1);
  CJ_CHECK(step != 0, CUJIT_ERROR_INVALID_VALUE, "%s: the step is 0", fn);
  count = cj_range_count(start, stop, step);
  CJ_CHECK(cj_range_inside(start, step, count, a->shape[dim]) &&
               (count || (start >= 0 && start <= a->shape[dim])),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: the range %lld to %lld (step %lld) leaves dimension %d's %lld elements", fn,
           (long long)start, (long long)stop, (long long)step, dim, (long long)a->shape[dim]);
  memcpy(shape, a->shape, sizeof shape);
  memcpy(strides, a->strides, sizeof strides);
  shape[dim] = (int64_t)count;                          /* inside the dimension: at most its size */
  if (count > 1) strides[dim] = a->strides[dim] * step; /* |step| below the size: no overflow */
  for (d = 0; d < a->ndim; d++) size *= shape[d];
  /* an empty slice starts where it would have: never dereferenced */
  return handle(view, a->type, a->ndim, shape, count ? strides : NULL, size, a->block,
                a->data + cj_array_step(start, a->strides[dim], cj_elem_of(a->type)->size),
                a->stream);
}

cujit_status cujit_array_transpose(const cujit_array *h, cujit_array **view) {
  static const char fn[] = "cujit_array_transpose";
  int64_t shape[CUJIT_ARRAY_MAX_DIMS], strides[CUJIT_ARRAY_MAX_DIMS];
  cj_array *a;
  int d;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "%s: view is NULL", fn);
  *view = NULL;
  for (d = 0; d < a->ndim; d++) {
    shape[d] = a->shape[a->ndim - 1 - d];
    strides[d] = a->strides[a->ndim - 1 - d];
  }
  return handle(view, a->type, a->ndim, shape, strides, a->size, a->block, a->data, a->stream);
}

cujit_status cujit_array_set_stream(cujit_array *h, CUstream stream) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_set_stream", "a", &a));
  a->stream = stream;
  return CUJIT_OK;
}

/* ---- properties ----
 *
 * Each one looks the handle up under the lock and reads the field there: on the launch
 * path (cujit_array_arg) that is all they cost. */

#define PROPERTY(type, name, expr, none)                              \
  type cujit_array_##name(const cujit_array *h) {                     \
    const cj_array *a;                                                \
    type v = none;                                                    \
    pthread_mutex_lock(&live_lock);                                   \
    if ((a = cj_handle_get(&live, (uintptr_t)h)) != NULL) v = (expr); \
    pthread_mutex_unlock(&live_lock);                                 \
    return v;                                                         \
  }

PROPERTY(cujit_type, type, (cujit_type)a->type, CUJIT_TYPE_BYTES)
PROPERTY(int, ndim, a->ndim, 0)
PROPERTY(int64_t, size, a->size, 0)
PROPERTY(size_t, nbytes, a->nbytes, 0)
PROPERTY(CUdeviceptr, data, a->data, 0)
PROPERTY(CUstream, stream, a->stream, NULL)
PROPERTY(int, contiguous, a->contig, 0)

/* Dimension `dim`'s size (stride: 0) or stride (1), 0 for one the array does not have. */
static int64_t dim_of(const cujit_array *h, int dim, int stride) {
  const cj_array *a;
  int64_t v = 0;
  pthread_mutex_lock(&live_lock);
  if ((a = cj_handle_get(&live, (uintptr_t)h)) != NULL && dim >= 0 && dim < a->ndim)
    v = stride ? a->strides[dim] : a->shape[dim];
  pthread_mutex_unlock(&live_lock);
  return v;
}

int64_t cujit_array_shape(const cujit_array *h, int dim) { return dim_of(h, dim, 0); }
int64_t cujit_array_stride(const cujit_array *h, int dim) { return dim_of(h, dim, 1); }

/* array.c - array handles: making, checking and freeing them, views, properties.
 *
 * Every live handle is in a set, so that a destroyed (or never made) array passed to any
 * function is refused with a message instead of being read after it was freed. The memory
 * behind an array is a block shared with its views and freed, on the stream of the array
 * that lets go of it last, when the last one is destroyed. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "launch/launch.h" /* the pool */

/* ---- the set of live handles (open addressing; empty slots are NULL) ----
 *
 * Destroyed handles and blocks are kept as spares, up to SPARES of each, and taken again by
 * the next arrays made, so that an operation in a loop (a new output each time) allocates
 * no host memory and takes the lock once to make its output and once to destroy it. */

#define TOMBSTONE ((const cujit_array *)1)
#define SPARES 64

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static const cujit_array **live;
static size_t live_cap, live_used; /* used counts tombstones too */
static cujit_array *spare_handles[SPARES]; /* a ring: the oldest is taken first */
static cj_block *spare_blocks[SPARES];
static size_t n_spare_handles, first_spare_handle, n_spare_blocks;

static size_t slot_of(const cujit_array *a, size_t cap) {
  uintptr_t h = (uintptr_t)a;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 7) & (cap - 1);
}

static int live_grow(void) {
  size_t cap = live_cap ? 2 * live_cap : 64, i, j;
  const cujit_array **v = cj_calloc(cap, sizeof *v);
  if (!v) return -1;
  for (i = 0; i < live_cap; i++) {
    if (!live[i] || live[i] == TOMBSTONE) continue;
    for (j = slot_of(live[i], cap); v[j]; j = (j + 1) & (cap - 1)) continue;
    v[j] = live[i];
  }
  live_used = 0; /* tombstones are gone */
  for (i = 0; i < cap; i++) live_used += v[i] != NULL;
  cj_free(live);
  live = v;
  live_cap = cap;
  return 0;
}

/* The slot holding a, or -1. Called with the lock held. */
static long live_find(const cujit_array *a) {
  size_t i;
  if (!live_cap) return -1;
  for (i = slot_of(a, live_cap); live[i]; i = (i + 1) & (live_cap - 1))
    if (live[i] == a) return (long)i;
  return -1;
}

/* Adds a to the set; 0, or -1 when out of memory. Called with the lock held. */
static int live_insert(const cujit_array *a) {
  size_t i;
  if (4 * (live_used + 1) > 3 * live_cap && live_grow() != 0) return -1;
  for (i = slot_of(a, live_cap); live[i] && live[i] != TOMBSTONE; i = (i + 1) & (live_cap - 1))
    continue;
  if (!live[i]) live_used++;
  live[i] = a;
  return 0;
}

/* Takes a out of the set and keeps it as a spare (or frees it); -1 when it was not in the
 * set. Called with the lock held. */
static int drop_handle(cujit_array *a, int *keep) {
  long i = live_find(a);
  if (i < 0) return -1;
  live[i] = TOMBSTONE;
  *keep = n_spare_handles < SPARES;
  if (*keep) spare_handles[(first_spare_handle + n_spare_handles++) % SPARES] = a;
  return 0;
}

/* A zeroed handle, already in the set, and when `block` is not NULL a zeroed block: spares
 * when there are some. NULL when out of memory (nothing is taken then). */
static cujit_array *take(cj_block **block) {
  cujit_array *a = NULL;
  cj_block *b = NULL;
  int keep = 1;
  pthread_mutex_lock(&live_lock);
  /* the handle destroyed longest ago, cleared before it is live again, so that a stale
   * pointer to it (a second destroy) is likelier to be refused than to hit a new array */
  if (n_spare_handles) {
    cujit_array *s = spare_handles[first_spare_handle];
    memset(s, 0, sizeof *s);
    if (live_insert(s) == 0) {
      a = s;
      first_spare_handle = (first_spare_handle + 1) % SPARES;
      n_spare_handles--;
    }
  }
  if (block && n_spare_blocks) b = spare_blocks[--n_spare_blocks];
  pthread_mutex_unlock(&live_lock);
  if (!a && (a = cj_calloc(1, sizeof *a)) != NULL) {
    pthread_mutex_lock(&live_lock);
    if (live_insert(a) != 0) {
      cj_free(a);
      a = NULL;
    }
    pthread_mutex_unlock(&live_lock);
  }
  if (block && !b) b = cj_calloc(1, sizeof *b);
  if (a && (!block || b)) {
    memset(a, 0, sizeof *a);
    if (block) memset(*block = b, 0, sizeof *b);
    return a;
  }
  if (a) {
    pthread_mutex_lock(&live_lock);
    drop_handle(a, &keep);
    pthread_mutex_unlock(&live_lock);
    if (!keep) cj_free(a);
  }
  cj_free(b);
  return NULL;
}

static int is_live(const cujit_array *a) {
  long i;
  pthread_mutex_lock(&live_lock);
  i = live_find(a);
  pthread_mutex_unlock(&live_lock);
  return i >= 0;
}

cujit_status cj_array_check(const cujit_array *a, const char *fn, const char *what) {
  CJ_CHECK(a, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", fn, what);
  CJ_CHECK(is_live(a), CUJIT_ERROR_INVALID_VALUE, "%s: %s is not a live array (destroyed "
           "already, or never made by cujit)", fn, what);
  return CUJIT_OK;
}

cujit_status cj_array_check2(const cujit_array *a, const cujit_array *b, const char *fn,
                             const char *what_a, const char *what_b) {
  int both = 0;
  if (a && b) {
    pthread_mutex_lock(&live_lock);
    both = live_find(a) >= 0 && live_find(b) >= 0;
    pthread_mutex_unlock(&live_lock);
  }
  if (both) return CUJIT_OK;
  cujit_status st = cj_array_check(a, fn, what_a);
  return st != CUJIT_OK ? st : cj_array_check(b, fn, what_b);
}

/* ---- making and freeing ---- */

static cujit_status check_shape(int type, int ndim, const int64_t *shape, const char *fn,
                                int64_t *size) {
  int i;
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type arrays hold "
           "(use CUJIT_TYPE_BOOL, _I8 ... _U64, _F16, _BF16, _F32, _F64, _C64 or "
           "_C128)", fn, type);
  CJ_CHECK(ndim >= 0 && ndim <= CUJIT_ARRAY_MAX_DIMS, CUJIT_ERROR_INVALID_VALUE,
           "%s: ndim is %d; arrays have 0 to %d dimensions", fn, ndim, CUJIT_ARRAY_MAX_DIMS);
  CJ_CHECK(shape || !ndim, CUJIT_ERROR_INVALID_VALUE, "%s: shape is NULL", fn);
  *size = 1;
  for (i = 0; i < ndim; i++) {
    CJ_CHECK(shape[i] >= 0, CUJIT_ERROR_INVALID_VALUE,
             "%s: dimension %d has the negative size %lld", fn, i + 1, (long long)shape[i]);
    CJ_CHECK(!shape[i] || *size <= ((int64_t)1 << 62) / shape[i], CUJIT_ERROR_INVALID_VALUE,
             "%s: the shape holds more than 2^62 elements", fn);
    *size *= shape[i];
  }
  CJ_CHECK((uint64_t)*size <= SIZE_MAX / cj_elem_of(type)->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: the array would not fit in memory", fn);
  return CUJIT_OK;
}

/* Fills a handle for `type`/`shape` over `block` at `data` (a new reference to the block). */
static void fill(cujit_array *a, int type, int ndim, const int64_t *shape, int64_t size,
                 cj_block *block, CUdeviceptr data, CUstream stream) {
  a->type = type;
  a->ndim = ndim;
  if (ndim) memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
  a->size = size;
  a->nbytes = (size_t)size * cj_elem_of(type)->size;
  a->data = data;
  a->stream = stream;
  a->block = block;
  __atomic_add_fetch(&block->refs, 1, __ATOMIC_RELAXED);
}

/* A new handle over an existing block (views). */
static cujit_status handle(cujit_array **out, int type, int ndim, const int64_t *shape,
                           int64_t size, cj_block *block, CUdeviceptr data, CUstream stream) {
  cujit_array *a = take(NULL);
  if (!a) return cj_fail_oom("making an array handle");
  fill(a, type, ndim, shape, size, block, data, stream);
  *out = a;
  return CUJIT_OK;
}

/* Gives a block's memory back and keeps the block as a spare. */
static void block_free(cj_block *b, CUstream stream) {
  int keep;
  if (b->owned && b->ptr) cj_pool_free(b->dev, b->ptr, b->bytes, stream);
  pthread_mutex_lock(&live_lock);
  keep = n_spare_blocks < SPARES;
  if (keep) spare_blocks[n_spare_blocks++] = b;
  pthread_mutex_unlock(&live_lock);
  if (!keep) cj_free(b);
}

/* A new array of `size` elements (shape checked) with memory from the pool on `stream`. */
static cujit_status new_array(cujit_array **out, int type, int ndim, const int64_t *shape,
                              int64_t size, CUstream stream) {
  size_t bytes = (size_t)size * cj_elem_of(type)->size;
  CUdeviceptr ptr = 0;
  CUcontext ctx;
  CUdevice dev;
  cj_block *b;
  cujit_array *a;
  cujit_status st = cj_ctx_ensure(&ctx, &dev);
  if (st != CUJIT_OK) return st;
  if (bytes && (st = cj_pool_alloc(dev, bytes, stream, &ptr)) != CUJIT_OK) return st;
  if (!(a = take(&b))) {
    if (ptr) cj_pool_free(dev, ptr, bytes, stream);
    return cj_fail_oom("making an array");
  }
  b->dev = dev;
  b->ptr = ptr;
  b->bytes = bytes;
  b->owned = 1;
  fill(a, type, ndim, shape, size, b, ptr, stream);
  *out = a;
  return CUJIT_OK;
}

cujit_status cj_array_new_on(cujit_array **out, int type, int ndim, const int64_t *shape,
                             CUstream stream, const char *fn) {
  int64_t size;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  *out = NULL;
  CJ_TRY(check_shape(type, ndim, shape, fn, &size));
  return new_array(out, type, ndim, shape, size, stream);
}

cujit_status cj_array_new(cujit_array **out, int type, int ndim, const int64_t *shape,
                          const char *fn) {
  return cj_array_new_on(out, type, ndim, shape, NULL, fn);
}

cujit_status cujit_array_empty(cujit_array **out, cujit_type type, int ndim,
                               const int64_t *shape) {
  return cj_array_new(out, type, ndim, shape, "cujit_array_empty");
}

cujit_status cujit_array_empty_like(cujit_array **out, const cujit_array *a) {
  CJ_TRY(cj_array_check(a, "cujit_array_empty_like", "a"));
  return cj_array_new_on(out, a->type, a->ndim, a->shape, a->stream, "cujit_array_empty_like");
}

cujit_status cujit_array_wrap(cujit_array **out, cujit_type type, int ndim,
                              const int64_t *shape, CUdeviceptr data) {
  int64_t size;
  cj_block *b;
  cujit_array *a;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_array_wrap: out is NULL");
  *out = NULL;
  CJ_TRY(check_shape(type, ndim, shape, "cujit_array_wrap", &size));
  CJ_CHECK(data || !size, CUJIT_ERROR_INVALID_VALUE,
           "cujit_array_wrap: data is 0 for %lld elements", (long long)size);
  if (!(a = take(&b))) return cj_fail_oom("wrapping device memory");
  b->ptr = data;
  fill(a, type, ndim, shape, size, b, data, NULL);
  *out = a;
  return CUJIT_OK;
}

void cujit_array_destroy(cujit_array *a) {
  cj_block *b;
  CUstream stream;
  int keep = 1;
  if (!a) return;
  pthread_mutex_lock(&live_lock);
  /* not an array (or destroyed already): nothing to free, nothing of it read */
  b = live_find(a) >= 0 ? a->block : NULL;
  stream = b ? a->stream : NULL; /* read before another thread may take the spare */
  if (b) drop_handle(a, &keep);
  pthread_mutex_unlock(&live_lock);
  if (!b) return;
  if (!keep) cj_free(a);
  if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) block_free(b, stream);
}

cujit_status cj_array_output(cujit_array **out, const cujit_array *like, int type,
                             const char *fn, int *made) {
  char x[CJ_SHAPE_TEXT], y[CJ_SHAPE_TEXT];
  *made = 0;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  if (!*out) {
    /* like's shape holds a valid count; only a wider type could overflow the bytes */
    CJ_CHECK((uint64_t)like->size <= SIZE_MAX / cj_elem_of(type)->size, CUJIT_ERROR_INVALID_VALUE,
             "%s: the result would not fit in memory", fn);
    /* allocated on the stream its work is ordered on: pool memory is ordered there */
    CJ_TRY(new_array(out, type, like->ndim, like->shape, like->size, like->stream));
    *made = 1;
    return CUJIT_OK;
  }
  CJ_TRY(cj_array_check(*out, fn, "*out"));
  CJ_CHECK((*out)->type == type, CUJIT_ERROR_INVALID_VALUE,
           "%s: the output holds %s, the result is %s; pass "
           "an output of the result's type, or NULL for a new one", fn,
           cj_elem_of((*out)->type)->name, cj_elem_of(type)->name);
  CJ_CHECK(cj_array_same_shape(*out, like), CUJIT_ERROR_INVALID_VALUE,
           "%s: the output's shape %s differs from the result's %s; pass NULL for a new one",
           fn, cj_array_shape_text(*out, x), cj_array_shape_text(like, y));
  return CUJIT_OK;
}

int cj_array_same_shape(const cujit_array *a, const cujit_array *b) {
  return a->ndim == b->ndim && a->size == b->size &&
         (!a->ndim || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape) == 0);
}

const char *cj_array_shape_text(const cujit_array *a, char out[CJ_SHAPE_TEXT]) {
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

cujit_status cujit_array_view(const cujit_array *a, int64_t start, int64_t stop,
                              cujit_array **view) {
  int64_t len;
  CJ_TRY(cj_array_check(a, "cujit_array_view", "a"));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "cujit_array_view: view is NULL");
  *view = NULL;
  CJ_CHECK(start >= 0 && stop >= start && stop <= a->size, CUJIT_ERROR_INVALID_VALUE,
           "cujit_array_view: [%lld, %lld) is not a range "
           "of the array's %lld elements", (long long)start, (long long)stop, (long long)a->size);
  len = stop - start;
  return handle(view, a->type, 1, &len, len, a->block,
                a->data + (CUdeviceptr)start * cj_elem_of(a->type)->size, a->stream);
}

cujit_status cujit_array_reshape(const cujit_array *a, int ndim, const int64_t *shape,
                                 cujit_array **view) {
  int64_t size;
  CJ_TRY(cj_array_check(a, "cujit_array_reshape", "a"));
  CJ_CHECK(view, CUJIT_ERROR_INVALID_VALUE, "cujit_array_reshape: view is NULL");
  *view = NULL;
  CJ_TRY(check_shape(a->type, ndim, shape, "cujit_array_reshape", &size));
  CJ_CHECK(size == a->size, CUJIT_ERROR_INVALID_VALUE,
           "cujit_array_reshape: the new shape holds %lld "
           "elements, the array %lld", (long long)size, (long long)a->size);
  return handle(view, a->type, ndim, shape, size, a->block, a->data, a->stream);
}

cujit_status cujit_array_set_stream(cujit_array *a, CUstream stream) {
  cujit_status st = cj_array_check(a, "cujit_array_set_stream", "a");
  if (st == CUJIT_OK) a->stream = stream;
  return st;
}

/* ---- properties ---- */

static const cujit_array *alive(const cujit_array *a) { return a && is_live(a) ? a : NULL; }

cujit_type cujit_array_type(const cujit_array *a) {
  return alive(a) ? (cujit_type)a->type : CUJIT_TYPE_BYTES;
}
int cujit_array_ndim(const cujit_array *a) { return alive(a) ? a->ndim : 0; }
int64_t cujit_array_shape(const cujit_array *a, int dim) {
  return alive(a) && dim >= 0 && dim < a->ndim ? a->shape[dim] : 0;
}
int64_t cujit_array_size(const cujit_array *a) { return alive(a) ? a->size : 0; }
size_t cujit_array_nbytes(const cujit_array *a) { return alive(a) ? a->nbytes : 0; }
CUdeviceptr cujit_array_data(const cujit_array *a) { return alive(a) ? a->data : 0; }
CUstream cujit_array_stream(const cujit_array *a) { return alive(a) ? a->stream : NULL; }

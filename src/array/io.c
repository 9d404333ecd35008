/* io.c - filling arrays and moving them: from and to host memory, copies, constants,
 * ranges and type conversions. Copies of contiguous arrays go through the driver on the
 * array's stream; the rest are small generated kernels, which step through strided views
 * by their strides. */
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "launch/capture.h" /* pinned staging, the small pinned area, captures */

static cujit_status cu(CUresult r, const char *fn) {
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, fn);
}

static cujit_status check_bytes(const cj_array *a, const void *host, size_t bytes, const char *fn) {
  CJ_CHECK(host || !bytes, CUJIT_ERROR_INVALID_VALUE, "%s: host is NULL", fn);
  CJ_CHECK(bytes == a->nbytes, CUJIT_ERROR_INVALID_VALUE,
           "%s: bytes is %zu, but the array holds %zu bytes "
           "(%lld elements of %zu bytes)",
           fn, bytes, a->nbytes, (long long)a->size, cj_elem_of(a->type)->size);
  return CUJIT_OK;
}

/* Moves `bytes` between host memory and device memory at d on `stream`, complete when it
 * returns. Pageable buffers go through the launch layer's pinned memory, as In/Out buffers
 * do: large ones through its chunks, filled by several threads (the driver's own path
 * copies pageable memory through one staging buffer at a fraction of the bus's speed),
 * small ones through its small pinned area (the driver's path costs a process
 * milliseconds the first time); page-locked ones are copied directly. */
static cujit_status move(int to_device, CUdeviceptr d, void *host, size_t bytes, CUstream stream) {
  const char *what = to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync";
  cujit_status st;
  CUcontext ctx;
  CUdevice dev;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(cj_capture_refuse(stream, "copying between an array and host memory waits for the "
                                   "array's stream"));
  if (cj_host_kind_of(host, bytes) != CJ_HOST_PAGEABLE)
    st = CUJIT_ERROR_NOT_SUPPORTED;
  else if (bytes < cj_staging_min())
    st = to_device ? cj_bounce_htod(ctx, dev, d, host, bytes, stream, what)
                   : cj_bounce_dtoh(ctx, dev, host, d, bytes, stream, what);
  else if (!to_device)
    st = cj_stage_dtoh(ctx, dev, host, d, bytes, stream);
  else if ((st = cj_stage_htod(ctx, dev, d, host, bytes, stream)) == CUJIT_OK)
    st = cu(cj_cu.cuStreamSynchronize(stream), "cuStreamSynchronize"); /* the device side */
  if (st != CUJIT_ERROR_NOT_SUPPORTED) return st;
  st = cu(to_device ? cj_cu.cuMemcpyHtoDAsync(d, host, bytes, stream)
                    : cj_cu.cuMemcpyDtoHAsync(host, d, bytes, stream),
          what);
  return st == CUJIT_OK ? cu(cj_cu.cuStreamSynchronize(stream), "cuStreamSynchronize") : st;
}

/* A strided view moves through a contiguous copy in pool memory: gathered there before a
 * read, scattered from there after a write (to_device). */
static cujit_status through_copy(const cj_array *a, void *host, size_t bytes, int to_device) {
  CUdeviceptr tmp = 0;
  cj_mem_ctx owner = {NULL, 0};
  CUcontext ctx;
  CUdevice dev;
  cj_array t = *a;
  cujit_status st = cj_ctx_ensure(&ctx, &dev);
  if (st == CUJIT_OK)
    st = cj_capture_refuse(a->stream, "copying between an array and host memory waits for the "
                                      "array's stream");
  if (st != CUJIT_OK || (st = cj_mem_pool_alloc(dev, bytes, a->stream, &tmp, &owner)) != CUJIT_OK)
    return st;
  cj_layout_contiguous(t.ndim, t.shape, t.strides);
  t.contig = 1;
  t.data = tmp;
  if (to_device) {
    st = cu(cj_cu.cuMemcpyHtoDAsync(tmp, host, bytes, a->stream), "cuMemcpyHtoDAsync");
    if (st == CUJIT_OK) st = cj_array_copy_into(&t, a, a->stream);
  } else {
    st = cj_array_copy_into(a, &t, a->stream);
    if (st == CUJIT_OK)
      st = cu(cj_cu.cuMemcpyDtoHAsync(host, tmp, bytes, a->stream), "cuMemcpyDtoHAsync");
  }
  if (st == CUJIT_OK) st = cu(cj_cu.cuStreamSynchronize(a->stream), "cuStreamSynchronize");
  cj_mem_pool_free(dev, tmp, bytes, a->stream, &owner);
  return st;
}

cujit_status cujit_array_read(const cujit_array *h, void *host, size_t bytes) {
  cj_array *a;
  cujit_status st = cj_array_get(h, "cujit_array_read", "a", &a);
  if (st == CUJIT_OK) st = check_bytes(a, host, bytes, "cujit_array_read");
  if (st != CUJIT_OK || !bytes) return st;
  if (!a->contig) return through_copy(a, host, bytes, 0);
  return move(0, a->data, host, bytes, a->stream);
}

/* Copies host memory into a (bytes checked) and waits for the copy. */
static cujit_status set(const cj_array *a, const void *host, size_t bytes, const char *fn) {
  cujit_status st = check_bytes(a, host, bytes, fn);
  if (st != CUJIT_OK || !bytes) return st;
  if (!a->contig) return through_copy(a, (void *)(uintptr_t)host, bytes, 1);
  return move(1, a->data, (void *)(uintptr_t)host, bytes, a->stream);
}

cujit_status cujit_array_write(cujit_array *h, const void *host, size_t bytes) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_write", "a", &a));
  return set(a, host, bytes, "cujit_array_write");
}

/* Elements [offset, offset + count) of a contiguous array, checked without overflow: *at
 * gets the first one's byte offset and *bytes their size (one block of memory). */
static cujit_status range_of(const cj_array *a, int64_t offset, int64_t count, const void *host,
                             const char *fn, size_t *at, size_t *bytes) {
  size_t size = cj_elem_of(a->type)->size;
  CJ_TRY(cj_array_need_contiguous(a, fn, "a"));
  CJ_CHECK(offset >= 0 && count >= 0 && offset <= a->size && count <= a->size - offset,
           CUJIT_ERROR_INVALID_VALUE,
           "%s: offset %lld and count %lld are not a range of the array's %lld "
           "elements (0 <= offset, 0 <= count, offset + count <= %lld)",
           fn, (long long)offset, (long long)count, (long long)a->size, (long long)a->size);
  CJ_CHECK(host || !count, CUJIT_ERROR_INVALID_VALUE, "%s: host is NULL", fn);
  *at = (size_t)offset * size;
  *bytes = (size_t)count * size;
  return CUJIT_OK;
}

cujit_status cujit_array_read_range(const cujit_array *h, int64_t offset, int64_t count,
                                    void *host) {
  size_t at, bytes;
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_read_range", "a", &a));
  CJ_TRY(range_of(a, offset, count, host, "cujit_array_read_range", &at, &bytes));
  return bytes ? move(0, a->data + at, host, bytes, a->stream) : CUJIT_OK;
}

cujit_status cujit_array_write_range(cujit_array *h, int64_t offset, int64_t count,
                                     const void *host) {
  size_t at, bytes;
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_write_range", "a", &a));
  CJ_TRY(range_of(a, offset, count, host, "cujit_array_write_range", &at, &bytes));
  return bytes ? move(1, a->data + at, (void *)(uintptr_t)host, bytes, a->stream) : CUJIT_OK;
}

cujit_status cujit_array_from_host(cujit_array **out, cujit_type type, int ndim,
                                   const int64_t *shape, const void *host) {
  cj_array *a;
  CJ_TRY(cj_array_new(out, &a, type, ndim, shape, "cujit_array_from_host"));
  return cj_array_unmake(set(a, host, a->nbytes, "cujit_array_from_host"), out, 1);
}

/* ---- generated kernels ---- */

/* Runs the map kernel k (its expression in `expr`, a cj_buf freed here) over the n
 * elements of `out` from the inputs `in` (k->n_in of them, at most one) as `plan` says
 * (NULL: all contiguous). */
static cujit_status run(cj_map_kernel *k, cj_buf *expr, int64_t n, CUstream stream,
                        const CUdeviceptr *in, const cujit_arg *scalars, size_t n_scalars,
                        CUdeviceptr out, const cj_plan *plan) {
  cujit_function *fn = NULL;
  cujit_status st;
  if (expr->oom) {
    cj_buf_free(expr);
    return cj_fail_oom("writing a kernel");
  }
  k->expr = expr->data;
  k->dims = plan ? plan->dims : 0;
  k->bcast = plan ? plan->bcast : 0;
  st = cj_map_prepare(k, &fn);
  cj_buf_free(expr);
  if (st != CUJIT_OK) return st;
  cj_map_run r = {n, stream, in, k->n_in, scalars, n_scalars, out, 1, plan};
  return cj_map_run_kernel(fn, cj_map_kernel_width(k), &r);
}

/* The plan of a loop over a's elements (`src`, when not NULL, an input of a's shape):
 * NULL, for the plain contiguous loop, when both are contiguous. */
static const cj_plan *plan_of(cj_plan *p, const cj_array *src, const cj_array *a) {
  if (a->contig && (!src || src->contig)) return NULL;
  if (src)
    cj_plan_make(p, a->ndim, a->shape, 2, (const cj_array *const[]){src, a}, 0);
  else
    cj_plan_make(p, a->ndim, a->shape, 1, (const cj_array *const[]){a}, 0);
  return p;
}

/* Sets every element of a to *value. */
static cujit_status fill(const cj_array *a, const void *value) {
  const cj_elem *e;
  cj_buf expr = {0};
  char name[32], scalars[64];
  e = cj_elem_of(a->type);
  CJ_TRACE("cujit: fill %s", e->name);
  snprintf(name, sizeof name, "cj_fill_%s", e->name);
  snprintf(scalars, sizeof scalars, "%s v", e->c_name);
  cj_buf_puts(&expr, "v");
  cj_map_kernel k = {name, NULL, 0, NULL, NULL, scalars, a->type, NULL, 0, 0, 0, 0};
  cj_plan p;
  return run(&k, &expr, a->size, a->stream, NULL, (cujit_arg[]){cujit_value(value, e->size)}, 1,
             a->data, plan_of(&p, NULL, a));
}

cujit_status cujit_array_fill(cujit_array *h, const void *value) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_fill", "a", &a));
  CJ_CHECK(value, CUJIT_ERROR_INVALID_VALUE, "cujit_array_fill: value is NULL");
  return fill(a, value);
}

cujit_status cujit_array_zeros(cujit_array **out, cujit_type type, int ndim, const int64_t *shape) {
  cj_array *a;
  cujit_status st = cj_array_new(out, &a, type, ndim, shape, "cujit_array_zeros");
  if (st != CUJIT_OK || !a->nbytes) return st;
  st = cu(cj_cu.cuMemsetD8Async(a->data, 0, a->nbytes, a->stream), "cuMemsetD8Async");
  return cj_array_unmake(st, out, 1);
}

cujit_status cujit_array_full(cujit_array **out, cujit_type type, int ndim, const int64_t *shape,
                              const void *value) {
  cj_array *a;
  if (out) *out = NULL;
  CJ_CHECK(value, CUJIT_ERROR_INVALID_VALUE, "cujit_array_full: value is NULL");
  CJ_TRY(cj_array_new(out, &a, type, ndim, shape, "cujit_array_full"));
  return cj_array_unmake(fill(a, value), out, 1);
}

cujit_status cujit_array_arange(cujit_array **out, cujit_type type, double start, double stop,
                                double step) {
  const cj_elem *e = cj_elem_of(type);
  cj_buf expr = {0};
  char name[32];
  double count;
  int64_t n;
  cj_array *a;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_array_arange: out is NULL");
  *out = NULL;
  CJ_CHECK(step > 0 || step < 0, CUJIT_ERROR_INVALID_VALUE,
           "cujit_array_arange: step is 0 or not a number");
  count = (stop - start) / step;
  CJ_CHECK(count < 9.2e18, CUJIT_ERROR_INVALID_VALUE, "cujit_array_arange: the range is too long");
  n = count > 0 ? (int64_t)count + ((double)(int64_t)count < count) : 0;
  CJ_TRY(cj_array_new(out, &a, type, 1, &n, "cujit_array_arange"));
  CJ_TRACE("cujit: arange %s", e->name);
  snprintf(name, sizeof name, "cj_arange_%s", e->name);
  cj_array_convert(&expr, CUJIT_TYPE_F64, type, "a + (double)i * d");
  cj_map_kernel k = {name, NULL, 0, NULL, NULL, "double a, double d", type, NULL, 0, 0, 0, 0};
  st = run(&k, &expr, n, NULL, NULL, (cujit_arg[]){cujit_f64(start), cujit_f64(step)}, 2, a->data,
           NULL);
  return cj_array_unmake(st, out, 1);
}

cujit_status cj_array_copy_into(const cj_array *src, const cj_array *dst, CUstream stream) {
  const cj_elem *from = cj_elem_of(src->type), *to = cj_elem_of(dst->type);
  cj_buf expr = {0};
  char name[48];
  cj_plan p;
  if (src->type == dst->type && src->contig && dst->contig) {
    if (!src->nbytes || src->data == dst->data) return CUJIT_OK;
    CJ_TRY(cj_driver_load());       /* arrays over memory cujit did not allocate need not have it */
    cj_array_captured(stream, src); /* a graph's copy: it holds both */
    cj_array_captured(stream, dst);
    return cu(cj_cu.cuMemcpyDtoDAsync(dst->data, src->data, src->nbytes, stream),
              "cuMemcpyDtoDAsync");
  }
  snprintf(name, sizeof name, "cj_astype_%s_%s", from->name, to->name);
  cj_array_convert(&expr, src->type, dst->type, "x");
  cj_map_kernel k = {name, NULL, 1, &src->type, (const char *const[]){"x"}, NULL, dst->type, NULL,
                     0,    0,    0, 0};
  return run(&k, &expr, dst->size, stream, &src->data, NULL, 0, dst->data, plan_of(&p, src, dst));
}

cujit_status cj_array_stage(const cj_array *o, CUstream stream, const char *fn, cujit_array **h,
                            cj_array **tmp) {
  *h = NULL;
  return cj_array_new_on(h, tmp, o->type, o->ndim, o->shape, stream, fn);
}

cujit_status cj_array_settle(cujit_status st, int copy, cujit_array *h, const cj_array *tmp,
                             const cj_array *o, CUstream stream) {
  if (copy == 2 || (copy && st == CUJIT_OK)) {
    cujit_status c = cj_array_copy_into(tmp, o, stream);
    if (st == CUJIT_OK) st = c;
  }
  cujit_array_destroy(h); /* freed on the stream, after the copy */
  return st;
}

cujit_status cj_array_copy_of(const cj_array *x, CUstream stream, const char *fn, cujit_array **h,
                              cj_array **copy) {
  cujit_status st;
  CJ_TRY(cj_array_stage(x, stream, fn, h, copy));
  st = cj_array_copy_into(x, *copy, stream);
  return cj_array_unmake(st, h, 1);
}

/* Converts a into *out (the output rule) as `fn`; through a temporary when *out overlaps a
 * other than element for element (a reversed or shifted view of it). */
static cujit_status convert(const cj_array *a, int type, cujit_array **out, const char *fn) {
  cujit_array *h;
  cj_array *o, *tmp;
  int made;
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type arrays hold", fn, type);
  CJ_TRACE("cujit: %s " CJ_TYPES2_FMT, type == a->type ? "copy" : "astype",
           CJ_TYPES2(a->type, type));
  CJ_TRY(cj_array_output(out, a, type, fn, &o, &made));
  if (made || cj_layout_meet(a, o) != CJ_OVERLAP)
    return cj_array_unmake(cj_array_copy_into(a, o, a->stream), out, made);
  CJ_TRY(cj_array_stage(o, a->stream, fn, &h, &tmp));
  return cj_array_settle(cj_array_copy_into(a, tmp, a->stream), 1, h, tmp, o, a->stream);
}

cujit_status cujit_array_copy(const cujit_array *h, cujit_array **out) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_copy", "a", &a));
  return convert(a, a->type, out, "cujit_array_copy");
}

cujit_status cujit_array_astype(const cujit_array *h, cujit_type type, cujit_array **out) {
  cj_array *a;
  CJ_TRY(cj_array_get(h, "cujit_array_astype", "a", &a));
  return convert(a, type, out, "cujit_array_astype");
}

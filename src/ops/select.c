/* select.c - elements chosen by index, and arrays joined: take and put (NumPy's, with its
 * modes for an index outside the array), concatenate and stack of 1-D arrays.
 *
 * take and put run on the map engine over the indices (and put's values), so those may be
 * strided views like any operation's arrays; the array read or written is reached through
 * a plan of its own (cj_off), so it may be any view too, its elements counted in C order.
 * An index is brought inside the array before anything is read or written, whatever the
 * mode; CUJIT_INDEX_RAISE notes the lowest position holding a bad one in device memory,
 * which the call reads after the kernel to name it. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "launch/capture.h" /* the pool, and refusals during a capture */

static cujit_status cu(CUresult r, const char *what) {
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, what);
}

/* Device code: cj_index() brings index ix of an array of n elements inside it as `mode`
 * says, or gives -1 (RAISE) after noting position i in *bad. */
static void index_source(cj_buf *b, int mode) {
  cj_buf_puts(b, "__device__ __forceinline__ long long cj_index(long long ix, long long n,\n"
                 "    unsigned long long *bad, long long i) {\n");
  if (mode == CUJIT_INDEX_RAISE)
    cj_buf_puts(b, "  if (ix < -n || ix >= n) {\n"
                   "    atomicMin(bad, (unsigned long long)i);\n    return -1;\n  }\n"
                   "  return ix < 0 ? ix + n : ix;\n}\n");
  else if (mode == CUJIT_INDEX_WRAP)
    cj_buf_puts(b, "  (void)bad, (void)i;\n  ix %= n;\n  return ix < 0 ? ix + n : ix;\n}\n");
  else
    cj_buf_puts(b, "  (void)bad, (void)i;\n  return ix < 0 ? 0 : ix >= n ? n - 1 : ix;\n}\n");
  cj_buf_puts(b,
              "template <class T, class L>\n"
              "__device__ __forceinline__ T cj_take_at(const T *src, const L &lay, long long n,\n"
              "    unsigned long long *bad, long long ix, long long i) {\n"
              "  const long long j = cj_index(ix, n, bad, i);\n"
              "  return j < 0 ? T() : src[cj_off((unsigned long long)j, lay, 0)];\n}\n"
              "template <class T, class L>\n"
              "__device__ __forceinline__ void cj_put_at(T *dst, const L &lay, long long n,\n"
              "    unsigned long long *bad, long long ix, T v, long long i) {\n"
              "  const long long j = cj_index(ix, n, bad, i);\n"
              "  if (j >= 0) dst[cj_off((unsigned long long)j, lay, 0)] = v;\n}\n");
}

/* What take and put share: the array indexed, its plan as the kernel's cj_lay<D, 1>, the
 * indices, the mode, and the device word where RAISE notes a bad index. */
typedef struct indexed {
  const char *fn;
  const cj_array *a, *idx;
  int mode;
  int dims;
  int64_t lay[2 * CUJIT_ARRAY_MAX_DIMS];
  size_t lay_bytes;
  CUdevice dev;
  CUdeviceptr bad;
  cj_mem_ctx bad_owner; /* its context */
} indexed;

static cujit_status check_indexed(indexed *x) {
  static const char *const modes = "CUJIT_INDEX_RAISE, CUJIT_INDEX_WRAP or CUJIT_INDEX_CLIP";
  cj_plan p;
  CJ_CHECK(x->idx->type == CUJIT_TYPE_I32 || x->idx->type == CUJIT_TYPE_I64,
           CUJIT_ERROR_INVALID_VALUE,
           "%s: indices hold %s; pass i32 or i64 indices (cujit_array_astype converts them)", x->fn,
           cj_elem_of(x->idx->type)->name);
  CJ_CHECK(x->mode >= CUJIT_INDEX_RAISE && x->mode <= CUJIT_INDEX_CLIP, CUJIT_ERROR_INVALID_VALUE,
           "%s: mode is %d; use %s", x->fn, x->mode, modes);
  CJ_CHECK(x->a->size || !x->idx->size, CUJIT_ERROR_INVALID_VALUE,
           "%s: a is empty, so no index is inside it; pass an array with elements, or no "
           "indices",
           x->fn);
  /* the indexed array's plan: one dimension of stride 1 when it is contiguous */
  cj_plan_make(&p, x->a->ndim, x->a->shape, 1, &x->a, 0);
  if (!p.dims) {
    p.dims = 1;
    p.shape[0] = x->a->size;
    p.strides[0][0] = 1;
  }
  x->dims = p.dims;
  x->lay_bytes = cj_plan_pack(&p, x->lay);
  return CUJIT_OK;
}

/* The kernel's scalars after the indexed array's address: its plan, size and bad word. */
static void indexed_scalars(const indexed *x, cujit_arg *s) {
  s[1] = cujit_value(x->lay, x->lay_bytes);
  s[2] = cujit_i64(x->a->size);
  s[3] = cujit_ptr(x->bad);
}

/* RAISE: the word a bad index's position is noted in, all ones (none) to start. */
static cujit_status bad_word(indexed *x) {
  CUcontext ctx;
  x->bad = 0;
  if (x->mode != CUJIT_INDEX_RAISE || !x->idx->size) return CUJIT_OK;
  CJ_TRY(cj_capture_refuse(x->a->stream, "CUJIT_INDEX_RAISE checks the indices by waiting for "
                                         "the array's stream (CUJIT_INDEX_WRAP and _CLIP do not)"));
  CJ_TRY(cj_ctx_ensure(&ctx, &x->dev));
  CJ_TRY(cj_mem_pool_alloc(x->dev, 8, x->a->stream, &x->bad, &x->bad_owner));
  return cu(cj_cu.cuMemsetD8Async(x->bad, 0xff, 8, x->a->stream), "cuMemsetD8Async");
}

/* RAISE, after the kernel (st its launch): waits for it and names the first bad index. */
static cujit_status check_bad(indexed *x, cujit_status st) {
  const cj_array *idx = x->idx;
  uint64_t at = UINT64_MAX;
  int64_t value = 0;
  size_t size = cj_elem_of(idx->type)->size;
  CUstream stream = x->a->stream;
  if (!x->bad) return st;
  if (st == CUJIT_OK) st = cu(cj_cu.cuMemcpyDtoHAsync(&at, x->bad, 8, stream), "cuMemcpyDtoHAsync");
  if (st == CUJIT_OK) st = cu(cj_cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
  if (st == CUJIT_OK && at != UINT64_MAX) {
    int64_t off = cj_layout_offset(idx->ndim, idx->shape, idx->strides, (int64_t)at);
    int32_t v32 = 0;
    st = cu(cj_cu.cuMemcpyDtoHAsync(size == 4 ? (void *)&v32 : (void *)&value,
                                    idx->data + (CUdeviceptr)(off * (int64_t)size), size, stream),
            "cuMemcpyDtoHAsync");
    if (st == CUJIT_OK) st = cu(cj_cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    if (size == 4) value = v32;
    if (st == CUJIT_OK)
      st = cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "%s: indices[%llu] (C order) is %lld, outside [-%lld, %lld) for an array of "
                   "%lld elements; nothing was %s there (pass CUJIT_INDEX_WRAP or "
                   "CUJIT_INDEX_CLIP to bring such indices inside it)",
                   x->fn, (unsigned long long)at, (long long)value, (long long)x->a->size,
                   (long long)x->a->size, (long long)x->a->size,
                   strcmp(x->fn, "cujit_array_put") == 0 ? "written" : "read");
  }
  cj_mem_pool_free(x->dev, x->bad, 8, stream, &x->bad_owner);
  return st;
}

/* Compiles k (its preamble and expression in pre and expr) for `plan`. */
static cujit_status prepare_indexed(cj_map_kernel *k, const cj_buf *pre, const cj_buf *expr,
                                    const cj_plan *plan, cujit_function **f) {
  k->preamble = pre->data;
  k->expr = expr->data;
  k->dims = plan->dims;
  k->bcast = plan->bcast;
  return pre->oom || expr->oom ? cj_fail_oom("writing a kernel") : cj_map_prepare(k, f);
}

/* Runs f (of k) as r says, with RAISE's word around it: s, r's scalars, gets the plan, the
 * size and the word once the word is made (s[0], the indexed array's address, is set). */
static cujit_status run_indexed(indexed *x, cujit_function *f, const cj_map_kernel *k,
                                const cj_map_run *r, cujit_arg *s) {
  CJ_TRY(bad_word(x));
  indexed_scalars(x, s);
  return check_bad(x, cj_map_run_kernel(f, cj_map_kernel_width(k), r));
}

/* The preamble of take's and put's kernels, and their name. */
static void indexed_source(const indexed *x, const char *what, cj_buf *pre, char *name,
                           size_t size) {
  static const char *const mode_names[] = {"raise", "wrap", "clip"};
  cj_array_includes(pre, &x->a->type, 1);
  cj_layout_source(pre);
  index_source(pre, x->mode);
  snprintf(name, size, "cj_%s_%s_%s_%s_d%d", what, cj_elem_of(x->a->type)->name,
           cj_elem_of(x->idx->type)->name, mode_names[x->mode], x->dims);
}

/* take's kernel into `o` (the output, or a temporary), with RAISE's word around it; *ran
 * is set once the kernel has run (a bad index's failure comes after it). */
static cujit_status take_into(indexed *x, cujit_function *f, const cj_map_kernel *k,
                              const cj_plan *plan, CUdeviceptr o, int *ran) {
  cujit_arg s[4];
  cujit_status st;
  s[0] = cujit_ptr(x->a->data);
  cj_map_run r = {x->idx->size, x->a->stream, &x->idx->data, 1, s, 4, o, 1, plan};
  CJ_TRY(bad_word(x));
  indexed_scalars(x, s);
  st = cj_map_run_kernel(f, cj_map_kernel_width(k), &r);
  *ran = st == CUJIT_OK;
  return check_bad(x, st);
}

cujit_status cujit_array_take(const cujit_array *ha, const cujit_array *hi, cujit_index_mode mode,
                              cujit_array **out) {
  static const char fn[] = "cujit_array_take";
  cj_array *a, *idx, *o = NULL, *into = NULL, *tmp = NULL, like;
  cujit_array *h = NULL;
  cj_buf pre = {0}, expr = {0};
  char name[96], scalars[160];
  cujit_function *f = NULL;
  cj_plan plan;
  int made = 0, ran = 0;
  cujit_status st = CUJIT_OK;
  indexed x;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get2(ha, hi, fn, "a", "indices", &a, &idx));
  CJ_TRACE("cujit: take %s", CJ_TYPE_NAME(a->type));
  memset(&x, 0, sizeof x);
  x.fn = fn, x.a = a, x.idx = idx, x.mode = (int)mode;
  CJ_TRY(check_indexed(&x));
  like = *idx; /* the result: the indices' shape, on a's stream */
  like.stream = a->stream;
  if (*out) CJ_TRY(cj_array_get(*out, fn, "*out", &o));
  /* an output that a's elements share (any way: the gather reads them in any order), or
   * that overlaps the indices other than element for element, gets the result through a
   * temporary */
  if (o && (cj_layout_meet(a, o) != CJ_APART || cj_layout_meet(idx, o) == CJ_OVERLAP)) {
    into = o;
    o = NULL;
  }
  cj_plan_make(&plan, idx->ndim, idx->shape, 2, (const cj_array *const[]){idx, o}, 0);
  indexed_source(&x, "take", &pre, name, sizeof name);
  snprintf(scalars, sizeof scalars,
           "const %s *cj_src, const cj_lay<%d, 1> cj_src_lay, long long cj_len, "
           "unsigned long long *cj_bad",
           cj_elem_of(a->type)->c_name, x.dims);
  cj_buf_puts(&expr, "cj_take_at(cj_src, cj_src_lay, cj_len, cj_bad, (long long)cj_ix, i)");
  cj_map_kernel k = {name,    NULL,    1,    &idx->type, (const char *const[]){"cj_ix"},
                     scalars, a->type, NULL, 0,          0,
                     0,       0};
  if (o || into) /* checks it */
    st = cj_array_output_of(out, o ? o : into, &like, a->type, fn, &o, &made);
  /* compiled before an output is made: a compile error costs no allocation */
  if (st == CUJIT_OK) st = prepare_indexed(&k, &pre, &expr, &plan, &f);
  if (st == CUJIT_OK && into) st = cj_array_stage(into, a->stream, fn, &h, &tmp);
  if (st == CUJIT_OK && !o) st = cj_array_output_of(out, NULL, &like, a->type, fn, &o, &made);
  if (st == CUJIT_OK) st = take_into(&x, f, &k, &plan, (tmp ? tmp : o)->data, &ran);
  /* RAISE's failure comes after the kernel: the output gets what it wrote, as without one */
  if (tmp) st = cj_array_settle(st, ran ? 2 : 0, h, tmp, into, a->stream);
  cj_buf_free(&pre);
  cj_buf_free(&expr);
  return cj_array_unmake(st, out, made);
}

cujit_status cujit_array_put(cujit_array *ha, const cujit_array *hi, const cujit_array *hv,
                             cujit_index_mode mode) {
  static const char fn[] = "cujit_array_put";
  char name[96], scalars[160], sv[CJ_SHAPE_TEXT], si[CJ_SHAPE_TEXT];
  cujit_function *f = NULL;
  cujit_array *hcv = NULL, *hci = NULL;
  cj_array *a, *idx, *v;
  cj_buf pre = {0}, expr = {0};
  cujit_arg s[4];
  cj_plan plan;
  unsigned bcast;
  cujit_status st;
  indexed x;
  CJ_TRY(cj_array_get2(ha, hi, fn, "a", "indices", &a, &idx));
  CJ_TRY(cj_array_get(hv, fn, "values", &v));
  CJ_TRACE("cujit: put %s", CJ_TYPE_NAME(a->type));
  memset(&x, 0, sizeof x);
  x.fn = fn, x.a = a, x.idx = idx, x.mode = (int)mode;
  CJ_TRY(check_indexed(&x));
  bcast = v->size == 1 && !cj_array_same_shape(v, idx) ? 2u : 0u;
  CJ_CHECK(bcast || cj_array_same_shape(v, idx), CUJIT_ERROR_INVALID_VALUE,
           "%s: values has shape %s and indices %s; pass values of the indices' shape, or a "
           "single value",
           fn, cj_array_shape_text(v, sv), cj_array_shape_text(idx, si));
  /* values or indices that share a's memory are read from copies: every one is read as it
   * was before the call, whatever the kernel writes first */
  if (cj_layout_meet(v, a) != CJ_APART) CJ_TRY(cj_array_copy_of(v, a->stream, fn, &hcv, &v));
  if (cj_layout_meet(idx, a) != CJ_APART &&
      (st = cj_array_copy_of(idx, a->stream, fn, &hci, &idx)) != CUJIT_OK) {
    cujit_array_destroy(hcv);
    return st;
  }
  x.idx = idx;
  cj_plan_make(&plan, idx->ndim, idx->shape, 2, (const cj_array *const[]){idx, v}, bcast);
  indexed_source(&x, "put", &pre, name, sizeof name);
  snprintf(name + strlen(name), sizeof name - strlen(name), "_%s", cj_elem_of(v->type)->name);
  snprintf(scalars, sizeof scalars,
           "%s *cj_dst, const cj_lay<%d, 1> cj_dst_lay, long long cj_len, "
           "unsigned long long *cj_bad",
           cj_elem_of(a->type)->c_name, x.dims);
  cj_buf_puts(&expr, "cj_put_at(cj_dst, cj_dst_lay, cj_len, cj_bad, (long long)cj_ix, ");
  cj_array_convert(&expr, v->type, a->type, "cj_v");
  cj_buf_puts(&expr, ", i)");
  cj_array_includes(&pre, &v->type, 1);
  int types[2] = {idx->type, v->type};
  cj_map_kernel k =
      {name, NULL, 2, types, (const char *const[]){"cj_ix", "cj_v"}, scalars, CJ_NO_OUTPUT, NULL,
       0,    0,    0, 0};
  s[0] = cujit_ptr(a->data);
  const CUdeviceptr in[2] = {idx->data, v->data};
  cj_map_run r = {idx->size, a->stream, in, 2, s, 4, 0, 0, &plan};
  st = prepare_indexed(&k, &pre, &expr, &plan, &f);
  if (st == CUJIT_OK) st = run_indexed(&x, f, &k, &r, s);
  cj_buf_free(&pre);
  cj_buf_free(&expr);
  cujit_array_destroy(hcv); /* freed on a's stream, after the kernel */
  cujit_array_destroy(hci);
  return st;
}

/* ---- concatenate and stack ---- */

/* Looks up n 1-D arrays (into a[]) and promotes their types into *type. */
static cujit_status joined(const char *fn, size_t n, const cujit_array *const *arrays, cj_array **a,
                           int *type) {
  char what[48], shape[CJ_SHAPE_TEXT];
  size_t i;
  CJ_CHECK(n >= 1, CUJIT_ERROR_INVALID_VALUE, "%s: n is 0; give at least one array", fn);
  CJ_CHECK(arrays, CUJIT_ERROR_INVALID_VALUE, "%s: arrays is NULL", fn);
  for (i = 0; i < n; i++) {
    snprintf(what, sizeof what, "arrays[%zu]", i);
    CJ_TRY(cj_array_get(arrays[i], fn, what, &a[i]));
    CJ_CHECK(a[i]->ndim == 1, CUJIT_ERROR_INVALID_VALUE,
             "%s: %s has shape %s; %s joins 1-D arrays (cujit_array_reshape gives a 1-D view)", fn,
             what, cj_array_shape_text(a[i], shape), fn);
    *type = i ? (int)cujit_type_promote((cujit_type)*type, (cujit_type)a[i]->type, 0) : a[i]->type;
  }
  return CUJIT_OK;
}

/* Copies each of the n arrays into its part of o: part i starts at element starts[i] of
 * o's first dimension (stack: row i) and is laid out as o's last dimension. */
static cujit_status copy_parts(cj_array *const *a, size_t n, const cj_array *o, int stack) {
  size_t esize = cj_elem_of(o->type)->size, i;
  int64_t at = 0;
  cujit_status st = CUJIT_OK;
  for (i = 0; i < n && st == CUJIT_OK; i++) {
    cj_array part = *o;
    part.ndim = 1;
    part.shape[0] = part.size = a[i]->size;
    part.strides[0] = o->strides[o->ndim - 1];
    part.contig = part.strides[0] == 1 || part.size <= 1;
    part.nbytes = (size_t)part.size * esize;
    part.data = o->data + cj_array_step(at, o->strides[0], esize);
    st = cj_array_copy_into(a[i], &part, a[0]->stream);
    at += stack ? 1 : a[i]->size;
  }
  return st;
}

/* The result's shape (into *like): the sizes' sum for concatenate, (n, m) for stack. */
static cujit_status join_shape(int stack, cj_array *const *a, size_t n, cj_array *like,
                               const char *fn) {
  char s0[CJ_SHAPE_TEXT], si[CJ_SHAPE_TEXT];
  size_t i;
  memset(like, 0, sizeof *like);
  like->stream = a[0]->stream;
  for (i = 0; i < n; i++) {
    CJ_CHECK(!stack || cj_array_same_shape(a[i], a[0]), CUJIT_ERROR_INVALID_VALUE,
             "%s: arrays[0] has shape %s and arrays[%zu] %s; stack needs arrays of one shape", fn,
             cj_array_shape_text(a[0], s0), i, cj_array_shape_text(a[i], si));
    CJ_CHECK(like->size <= ((int64_t)1 << 62) - a[i]->size, CUJIT_ERROR_INVALID_VALUE,
             "%s: the result would hold more than 2^62 elements", fn);
    like->size += a[i]->size;
  }
  like->ndim = stack ? 2 : 1;
  like->shape[0] = stack ? (int64_t)n : like->size;
  like->shape[1] = a[0]->size;
  return CUJIT_OK;
}

/* Copies the parts into a given output o that one of them shares memory with: into a
 * temporary first, so that no part is read after another was written over it. */
static cujit_status copy_staged(cj_array *const *a, size_t n, const cj_array *o, int stack,
                                const char *fn) {
  cujit_array *h;
  cj_array *tmp;
  CJ_TRY(cj_array_stage(o, a[0]->stream, fn, &h, &tmp));
  return cj_array_settle(copy_parts(a, n, tmp, stack), 1, h, tmp, o, a[0]->stream);
}

/* concatenate (stack 0) or stack (1) of n arrays into *out. */
static cujit_status join(int stack, size_t n, const cujit_array *const *arrays, cujit_array **out,
                         const char *fn) {
  cj_array **a, *o, like;
  int type = 0, made = 0, shared = 0;
  size_t i;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  if (n > SIZE_MAX / sizeof *a || !(a = cj_malloc((n ? n : 1) * sizeof *a)))
    return cj_fail_oom("joining arrays");
  st = joined(fn, n, arrays, a, &type);
  CJ_TRACE("cujit: %s %s", stack ? "stack" : "concatenate", CJ_TYPE_NAME(st ? -1 : type));
  if (st == CUJIT_OK) st = join_shape(stack, a, n, &like, fn);
  if (st == CUJIT_OK) st = cj_array_output(out, &like, type, fn, &o, &made);
  for (i = 0; st == CUJIT_OK && !made && i < n; i++) shared |= cj_layout_meet(a[i], o) != CJ_APART;
  if (st == CUJIT_OK)
    st = cj_array_unmake(shared ? copy_staged(a, n, o, stack, fn) : copy_parts(a, n, o, stack), out,
                         made);
  cj_free(a);
  return st;
}

cujit_status cujit_array_concatenate(size_t n, const cujit_array *const *arrays,
                                     cujit_array **out) {
  return join(0, n, arrays, out, "cujit_array_concatenate");
}

cujit_status cujit_array_stack(size_t n, const cujit_array *const *arrays, cujit_array **out) {
  return join(1, n, arrays, out, "cujit_array_stack");
}

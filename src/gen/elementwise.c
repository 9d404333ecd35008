/* elementwise.c - the elementwise kernel generator (PyCUDA's ElementwiseKernel): a
 * grid-stride loop over a 64-bit index i, the caller's statements inside, compiled once
 * per process and source text. The caller's statements may read any index, so the loop
 * keeps their order (the built-in operations, which read element i only, have the map
 * engine of map.c).
 *
 * Where the statements touch each array only as `name[i]` (ewtext.c decides it from their
 * text), the kernel has a second loop, as the map engine's: chunks of W consecutive
 * elements (W = 16 bytes over the largest element size of the arrays used), each array's
 * chunk read by one access into registers (unless the statements assign it whole first),
 * the statements run for each of the W elements with every array name standing for that
 * element's register (an object whose [ ] gives it), and the chunks of the arrays they may
 * write stored by one access each. The caller decides per call (cj_head): with step 1, when
 * every array used is as far from a chunk boundary as the others (views such as x[1:]
 * included), not one of them written overlapping another, the elements before the first
 * boundary and after the last whole chunk go one at a time and the rest by chunks; else
 * every element one at a time, as before. Should the kernel with chunks not compile (a
 * statement writing an array the text did not show as written, through a reference), the
 * one at a time is used.
 *
 * A call whose arrays broadcast to a larger shape than some of them have (bcast.c) runs a
 * variant of the kernel in which each stretched array's parameter is an indexer of const
 * elements: the loops are the same, over the flat indices of the shape; the chunks hold
 * the other arrays, and a stretched one is read element by element where the operation
 * names it, in a chunk from a walk over its indices that divides once a chunk. An operation that
 * writes a stretched array is refused: where its text shows the write, before anything compiles;
 * otherwise when the variant does not compile with the indexers const and does with them writable.
 */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

/* Whether k's variant for s has an array stretched. */
static int any_stretched(const cj_gen_shape *s) { return s && s->stretched; }

/* The loop's parameters, after the caller's: k's params, or for a variant that stretches
 * arrays, the declarations' with each stretched array's indexer. */
static void put_signature(cj_buf *b, const cj_gen_ew_kernel *k, const cj_gen_shape *s, int chunks,
                          int writable) {
  cj_buf params = {0};
  cj_array_includes(b, k->types, k->n_types);
  if (k->preamble) cj_buf_printf(b, "%s\n", k->preamble);
  if (any_stretched(s)) {
    cj_gen_bcast_source(b);
    cj_gen_params(&params, k->decls, k->n_types, s, writable);
    b->oom |= params.oom;
  }
  if (chunks)
    cj_buf_puts(b, "/* element i of an array, in a register: what `name[i]` reads */\n"
                   "template <typename T> struct cj_one {\n  T &v;\n"
                   "  __device__ __forceinline__ T &operator[](long long) const { return v; }\n"
                   "};\n");
  cj_buf_printf(b,
                "extern \"C\" __global__ void %s(%s%slong long cj_start, long long cj_step,\n"
                "    unsigned long long cj_n%s) {\n%s%s"
                "  const unsigned long long cj_stride = (unsigned long long)gridDim.x * "
                "blockDim.x;\n"
                "  unsigned long long cj_k = (unsigned long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n",
                k->name, params.data ? params.data : k->params, k->params[0] ? ", " : "",
                chunks ? ", long long cj_head" : "", k->loop_prep ? k->loop_prep : "",
                k->loop_prep ? "\n" : "");
  cj_buf_free(&params);
}

/* Whether array d is held in the chunks: used by the operation, not stretched. */
static int in_chunks(const cj_gen_ew_kernel *k, const cj_gen_shape *s, size_t d) {
  return (k->access.used >> d & 1) && !cj_gen_stretched(s, d);
}

/* Whether array d is read element by element in the chunks: used by the operation and
 * stretched, its elements found by a walk (bcast.c). */
static int walked(const cj_gen_ew_kernel *k, const cj_gen_shape *s, size_t d) {
  return (k->access.used >> d & 1) && cj_gen_stretched(s, d);
}

/* The loop over whole chunks of w elements, from element cj_h; a stretched array's
 * elements come from its walk over the chunk's indices. */
static void put_chunks(cj_buf *b, const cj_gen_ew_kernel *k, const cj_gen_shape *s, unsigned w,
                       int writable) {
  const cj_gen_ew_access *a = &k->access;
  size_t d;
  cj_buf_printf(b,
                "  unsigned long long cj_h = cj_n, cj_t = cj_n;\n"
                "  if (cj_head >= 0) {\n"
                "    cj_h = (unsigned long long)cj_head < cj_n ? (unsigned long long)cj_head : "
                "cj_n;\n"
                "    const unsigned long long cj_chunks = (cj_n - cj_h) / %u;\n"
                "    cj_t = cj_h + cj_chunks * %u;\n"
                "    const long long cj_b = cj_start + (long long)cj_h; /* the first chunk's i */\n"
                "    for (unsigned long long cj_c = cj_k; cj_c < cj_chunks; cj_c += cj_stride) {\n"
                "      const long long cj_i0 = cj_b + (long long)(cj_c * %u);\n",
                w, w, w);
  for (d = 0; d < k->n_types; d++) {
    char var[32], base[96];
    if (!in_chunks(k, s, d)) continue;
    snprintf(var, sizeof var, "cj_v%zu", d);
    snprintf(base, sizeof base, "%s + cj_b", k->decls[d].name);
    if (a->whole >> d & 1)
      cj_buf_printf(b, "      %s %s[%u];\n", cj_elem_of(k->types[d])->c_name, var, w);
    else
      cj_chunk_load(b, "      ", k->types[d], w, var, base, "cj_c");
  }
  for (d = 0; d < k->n_types; d++)
    if (walked(k, s, d))
      cj_buf_printf(b, "      cj_bcast_walk<%s%s, %d> cj_w%zu(%s, cj_i0);\n",
                    writable && !k->decls[d].is_const ? "" : "const ",
                    cj_elem_of(k->types[d])->c_name, s->runs[d], d, k->decls[d].name);
  cj_buf_printf(b,
                "#pragma unroll\n"
                "      for (int cj_j = 0; cj_j < %u; cj_j++) {\n"
                "        const long long i = cj_i0 + cj_j;\n",
                w);
  for (d = 0; d < k->n_types; d++)
    if (in_chunks(k, s, d))
      cj_buf_printf(b, "        const cj_one<%s%s> %s{cj_v%zu[cj_j]};\n",
                    a->written >> d & 1 ? "" : "const ", cj_elem_of(k->types[d])->c_name,
                    k->decls[d].name, d);
  for (d = 0; d < k->n_types; d++)
    if (walked(k, s, d))
      cj_buf_printf(b, "        const cj_one<%s%s> %s{*cj_w%zu};\n",
                    writable && !k->decls[d].is_const ? "" : "const ",
                    cj_elem_of(k->types[d])->c_name, k->decls[d].name, d);
  cj_buf_printf(b, "        %s;\n", k->body);
  for (d = 0; d < k->n_types; d++)
    if (walked(k, s, d)) cj_buf_printf(b, "        cj_w%zu.next();\n", d);
  cj_buf_puts(b, "      }\n");
  for (d = 0; d < k->n_types; d++) {
    char var[32], base[96];
    if (!(a->written >> d & 1) || !in_chunks(k, s, d)) continue;
    snprintf(var, sizeof var, "cj_v%zu", d);
    snprintf(base, sizeof base, "%s + cj_b", k->decls[d].name);
    cj_chunk_store(b, "      ", k->types[d], w, var, base, "cj_c");
  }
  cj_buf_puts(b, "    }\n  }\n");
}

void cj_gen_ew_source(cj_buf *b, const cj_gen_ew_kernel *k, const cj_gen_shape *s, int chunks,
                      int writable) {
  unsigned w = chunks ? cj_gen_ew_width(k, s) : 0;
  put_signature(b, k, s, w > 1, writable);
  if (w > 1) {
    put_chunks(b, k, s, w, writable);
    /* the rest (before the first chunk and after the last), or with cj_head < 0 all */
    cj_buf_printf(b,
                  "  const unsigned long long cj_rest = cj_h + (cj_n - cj_t);\n"
                  "#pragma unroll 4\n"
                  "  for (unsigned long long cj_r = cj_k; cj_r < cj_rest; cj_r += cj_stride) {\n"
                  "    const long long i = cj_start +\n"
                  "        (long long)(cj_r < cj_h ? cj_r : cj_r + (cj_t - cj_h)) * cj_step;\n"
                  "    %s;\n  }\n%s%s}\n",
                  k->body, k->after_loop ? k->after_loop : "", k->after_loop ? "\n" : "");
    return;
  }
  /* unrolled as written: the statements of one i still run before the next i's */
  cj_buf_printf(b,
                "#pragma unroll 4\n"
                "  for (; cj_k < cj_n; cj_k += cj_stride) {\n"
                "    const long long i = cj_start + (long long)cj_k * cj_step;\n"
                "    %s;\n  }\n%s%s}\n",
                k->body, k->after_loop ? k->after_loop : "", k->after_loop ? "\n" : "");
}

unsigned cj_gen_ew_width(const cj_gen_ew_kernel *k, const cj_gen_shape *s) {
  int types[64];
  size_t d, n = 0;
  unsigned w;
  if (!k->access.chunks || !k->decls) return 0;
  for (d = 0; d < k->n_types && n < CJ_COUNT(types); d++)
    if (in_chunks(k, s, d)) types[n++] = k->types[d];
  w = n ? cj_map_width(types, n) : 1;
  return w > 1 ? w : 0;
}

static cujit_status compile(const cj_gen_ew_kernel *k, const cj_gen_shape *s, int chunks,
                            int writable, cujit_function **fn) {
  cj_buf src = {0};
  cujit_status st;
  cj_gen_ew_source(&src, k, s, chunks, writable);
  if (src.oom) {
    cj_buf_free(&src);
    return cj_fail_oom("writing a kernel");
  }
  st = cj_array_kernel(src.data, k->name, fn);
  cj_buf_free(&src);
  return st;
}

cujit_status cj_gen_ew_prepare(cj_gen_ew_kernel *k, const cj_gen_shape *s, cujit_function **fn,
                               int *chunks) {
  cujit_status st;
  int failed = 0;
  *chunks = cj_gen_ew_width(k, s) && !__atomic_load_n(&k->chunks_failed, __ATOMIC_RELAXED);
  if (*chunks) {
    st = compile(k, s, 1, 0, fn);
    if (st != CUJIT_ERROR_COMPILE) return st;
    /* the one at a time answers: it compiles, or its errors are the ones to show */
    if (!any_stretched(s)) __atomic_store_n(&k->chunks_failed, 1, __ATOMIC_RELAXED);
    failed = 1;
    *chunks = 0;
  }
  st = compile(k, s, 0, 0, fn);
  /* with arrays stretched, the chunks' failure is theirs only where the one at a time
   * compiles: else it may be a write of a stretched array, which the call refuses */
  if (st == CUJIT_OK && failed) __atomic_store_n(&k->chunks_failed, 1, __ATOMIC_RELAXED);
  return st;
}

/* Whether byte ranges [a, a + na) and [b, b + nb) meet. */
static int meet(CUdeviceptr a, uint64_t na, CUdeviceptr b, uint64_t nb) {
  return a < b + nb && b < a + na;
}

/* Array d's first byte and its bytes, for a call of `size` elements. */
static void span_of(const cj_gen_ew_kernel *k, const cj_gen_shape *s, size_t d, int64_t size,
                    const cujit_arg *args, CUdeviceptr *at, uint64_t *bytes) {
  int stretched = cj_gen_stretched(s, d);
  *at = stretched ? s->packed[d][0] : args[d].value.ptr;
  *bytes = (uint64_t)(stretched ? s->count[d] : size) * cj_elem_of(k->types[d])->size;
}

long long cj_gen_ew_head(const cj_gen_ew_kernel *k, const cj_gen_shape *s, unsigned w,
                         int64_t start, int64_t step, int64_t size, const cujit_arg *args) {
  const cj_gen_ew_access *a = &k->access;
  long long phase = -1;
  size_t d, e;
  if (step != 1) return -1;
  for (d = 0; d < k->n_types; d++) {
    uint64_t es = cj_elem_of(k->types[d])->size, at, nd, ne;
    CUdeviceptr pd, pe;
    if (!(a->used >> d & 1)) continue;
    span_of(k, s, d, size, args, &pd, &nd);
    if (in_chunks(k, s, d)) {
      at = pd + (uint64_t)start * es;
      if (at % es != 0 || (phase >= 0 && (long long)(at / es % w) != phase)) return -1;
      phase = (long long)(at / es % w);
    }
    for (e = 0; e < d; e++) {
      if (!(a->used >> e & 1) || !((a->written >> d | a->written >> e) & 1)) continue;
      span_of(k, s, e, size, args, &pe, &ne);
      if (meet(pd, nd, pe, ne)) return -1;
    }
  }
  return phase < 0 ? -1 : (long long)((w - (unsigned long long)phase) % w);
}

cujit_status cj_gen_ew_run(cj_gen_ew_kernel *k, const cj_gen_shape *s, int64_t start, int64_t step,
                           int64_t count, int64_t size, CUstream stream, const cujit_arg *args,
                           size_t nargs) {
  cujit_arg all[65];
  cujit_function *fn = NULL;
  unsigned w = cj_gen_ew_width(k, s);
  int64_t work = count;
  long long head = -1;
  int chunks = 0;
  CJ_CHECK(nargs + 4 <= CJ_COUNT(all), CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s': more than %zu arguments", k->name, CJ_COUNT(all) - 4);
  CJ_TRY(cj_gen_ew_prepare(k, s, &fn, &chunks));
  if (count == 0) return CUJIT_OK;
  if (nargs) memcpy(all, args, nargs * sizeof *args);
  all[nargs] = cujit_i64(start);
  all[nargs + 1] = cujit_i64(step);
  all[nargs + 2] = cujit_u64((uint64_t)count);
  if (chunks) {
    head = cj_gen_ew_head(k, s, w, start, step, size, args);
    all[nargs + 3] = cujit_i64(head);
    if (head >= 0) work = (count - (head < count ? head : count)) / w + w;
  }
  return cj_array_launch(fn, work, stream, all, nargs + 3 + (size_t)chunks);
}

/* ---- the public generator ---- */

struct cujit_elementwise {
  cj_gen_decl *decls;
  size_t n_decls;
  int *types;
  cj_gen_ew_kernel k;
  char *params, *body, *name, *preamble, *loop_prep, *after_loop;
};

/* "const float *x, float a" as the kernel's parameter list. */
static char *params_of(const cj_gen_decl *d, size_t n) {
  cj_buf b = {0};
  cj_gen_params(&b, d, n, NULL, 0);
  if (b.oom) {
    cj_buf_free(&b);
    return NULL;
  }
  return cj_buf_take(&b);
}

static char *dup_or_null(const char *s, int *oom) {
  char *d;
  if (!s) return NULL;
  if (!(d = cj_strdup(s))) *oom = 1;
  return d;
}

void cujit_elementwise_destroy(cujit_elementwise *e) {
  if (!e) return;
  cj_free(e->decls);
  cj_free(e->types);
  cj_free(e->params);
  cj_free(e->body);
  cj_free(e->name);
  cj_free(e->preamble);
  cj_free(e->loop_prep);
  cj_free(e->after_loop);
  cj_free(e);
}

static cujit_status fill(cujit_elementwise *e, const char *args, const char *operation,
                         const cujit_generator_options *o) {
  int oom = 0;
  size_t i;
  CJ_TRY(cj_gen_decl_parse(args, &e->decls, &e->n_decls));
  for (i = 0; i < e->n_decls && !e->decls[i].is_array; i++) continue;
  CJ_CHECK(i != e->n_decls, CUJIT_ERROR_INVALID_VALUE,
           "cujit_elementwise_create: \"%s\" declares no "
           "array (a pointer argument); the size of the first array sets n",
           args);
  e->types = cj_calloc(e->n_decls, sizeof *e->types);
  for (i = 0; e->types && i < e->n_decls; i++) e->types[i] = e->decls[i].type;
  e->params = params_of(e->decls, e->n_decls);
  e->body = dup_or_null(operation, &oom);
  e->name = dup_or_null(o && o->name ? o->name : "elementwise", &oom);
  e->preamble = dup_or_null(o ? o->preamble : NULL, &oom);
  e->loop_prep = dup_or_null(o ? o->loop_prep : NULL, &oom);
  e->after_loop = dup_or_null(o ? o->after_loop : NULL, &oom);
  if (oom || !e->types || !e->params) return cj_fail_oom("making an elementwise kernel");
  e->k = (cj_gen_ew_kernel){e->name,      e->params,     e->body,  e->preamble,
                            e->loop_prep, e->after_loop, e->types, e->n_decls,
                            e->decls,     {0, 0, 0, 0},  0};
  cj_gen_ew_access_of(e->body, e->decls, e->n_decls, e->preamble, e->loop_prep, e->after_loop,
                      &e->k.access);
  for (i = 0; i < e->n_decls; i++) /* a const array is never stored */
    if (e->decls[i].is_const) {
      e->k.access.written &= ~((uint64_t)1 << i);
      e->k.access.whole &= ~((uint64_t)1 << i);
    }
  return CUJIT_OK;
}

cujit_status cujit_elementwise_create(cujit_elementwise **out, const char *args,
                                      const char *operation, const cujit_generator_options *user) {
  cujit_generator_options own, *o = &own;
  cujit_elementwise *e;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_elementwise_create: out is NULL");
  *out = NULL;
  CJ_TRY(cj_gen_options("cujit_elementwise_create", user, o));
  CJ_CHECK(operation && operation[0], CUJIT_ERROR_INVALID_VALUE,
           "cujit_elementwise_create: the operation is %s; "
           "give a statement on index i, e.g. \"z[i] = a*x[i] + b*y[i]\"",
           operation ? "empty" : "NULL");
  CJ_CHECK(!o || !o->name || cj_is_identifier(o->name), CUJIT_ERROR_INVALID_VALUE,
           "cujit_elementwise_create: the name '%s' is not "
           "a C identifier",
           o->name);
  if (!(e = cj_calloc(1, sizeof *e))) return cj_fail_oom("making an elementwise kernel");
  if ((st = fill(e, args, operation, o)) != CUJIT_OK) {
    cujit_elementwise_destroy(e);
    return st;
  }
  *out = e;
  return CUJIT_OK;
}

/* After the variant for s did not compile (the error is the last one): whether it is for
 * writing a stretched array not declared const, which the variant with those writable
 * shows by compiling. Its refusal then, else the error as it was. */
static cujit_status writes_stretched(cujit_elementwise *e, const cj_gen_shape *s,
                                     const cj_array *const *arrays, const char *fn) {
  uint64_t which = s->stretched;
  cujit_function *f;
  char *was;
  int r = cujit_last_nvrtc_result();
  cujit_status st;
  size_t k;
  for (k = 0; k < e->n_decls; k++)
    if (e->decls[k].is_const) which &= ~((uint64_t)1 << k);
  if (!which || !(was = cj_strdup(cujit_last_error()))) return CUJIT_ERROR_COMPILE;
  st = compile(&e->k, s, 0, 1, &f);
  st = st == CUJIT_OK ? cj_gen_refuse_write(fn, e->decls, e->n_decls, s, which, arrays)
                      : cj_fail_nvrtc(CUJIT_ERROR_COMPILE, r, "%s", was);
  cj_free(was);
  return st;
}

/* Checks the arguments and runs the kernel over the range, or with range 0 over every
 * element of the shape the arrays broadcast to. */
static cujit_status call(cujit_elementwise *e, int range, int64_t start, int64_t stop, int64_t step,
                         const cujit_arg *args, size_t nargs, const char *fn) {
  cujit_arg a[61];
  const cj_array *arrays[61];
  cj_gen_shape s;
  int64_t size;
  uint64_t count, written;
  cujit_status st;
  char shape[CJ_SHAPE_TEXT];
  CJ_CHECK(e, CUJIT_ERROR_INVALID_VALUE, "%s: the kernel is NULL", fn);
  CJ_TRACE("cujit: elementwise %s", e->k.name);
  CJ_CHECK(e->n_decls <= CJ_COUNT(a), CUJIT_ERROR_INVALID_VALUE,
           "%s: %zu arguments declared; an elementwise kernel takes at most %zu", fn, e->n_decls,
           CJ_COUNT(a));
  CJ_TRY(cj_gen_args(fn, e->decls, e->n_decls, args, nargs, a, arrays, &s));
  size = s.shape.size;
  /* a stretched array the operation's text shows written */
  if ((written = s.stretched & e->k.access.written) != 0)
    return cj_gen_refuse_write(fn, e->decls, e->n_decls, &s, written, arrays);
  if (!range) {
    count = (uint64_t)size;
    start = 0, step = 1;
  } else {
    CJ_CHECK(step != 0, CUJIT_ERROR_INVALID_VALUE, "%s: the step is 0", fn);
    count = cj_range_count(start, stop, step);
    CJ_CHECK(cj_range_inside(start, step, count, size), CUJIT_ERROR_INVALID_VALUE,
             "%s: the range %lld to %lld (step %lld) leaves "
             "the arrays' %lld elements (their shape %s)",
             fn, (long long)start, (long long)stop, (long long)step, (long long)size,
             cj_array_shape_text(&s.shape, shape));
  }
  /* inside the shape: count is at most its size, below 2^62 */
  st = cj_gen_ew_run(&e->k, &s, start, step, (int64_t)count, size, s.shape.stream, a, nargs);
  if (st == CUJIT_ERROR_COMPILE && s.stretched) st = writes_stretched(e, &s, arrays, fn);
  return st;
}

cujit_status cujit_elementwise_call_range(cujit_elementwise *e, int64_t start, int64_t stop,
                                          int64_t step, const cujit_arg *args, size_t nargs) {
  return call(e, 1, start, stop, step, args, nargs, "cujit_elementwise_call_range");
}

cujit_status cujit_elementwise_call(cujit_elementwise *e, const cujit_arg *args, size_t nargs) {
  return call(e, 0, 0, 0, 1, args, nargs, "cujit_elementwise_call");
}

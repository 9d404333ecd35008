/* elementwise.c - the elementwise kernel generator (PyCUDA's ElementwiseKernel): a
 * grid-stride loop over a 64-bit index i, the caller's statements inside, compiled once
 * per process and source text. The caller's statements may read any index, so the loop
 * keeps their order (the built-in operations, which read element i only, have the map
 * engine of map.c). */
#include <stdio.h>
#include <string.h>

#include "array/array.h"

/* Appends the kernel: includes for `types`, the preamble, and a loop running `body` for
 * i = start + k * step, k < n. */
static void write_kernel(cj_buf *b, const cj_ew_kernel *k) {
  cj_array_includes(b, k->types, k->n_types);
  if (k->preamble) cj_buf_printf(b, "%s\n", k->preamble);
  cj_buf_printf(b,
                "extern \"C\" __global__ void %s(%s%slong long cj_start, long long cj_step,\n"
                "    unsigned long long cj_n) {\n%s%s"
                "  const unsigned long long cj_stride = (unsigned long long)gridDim.x * "
                "blockDim.x;\n"
                "  unsigned long long cj_k = (unsigned long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n",
                k->name, k->params, k->params[0] ? ", " : "", k->loop_prep ? k->loop_prep : "",
                k->loop_prep ? "\n" : "");
  /* unrolled as written: the statements of one i still run before the next i's */
  cj_buf_printf(b,
                "#pragma unroll 4\n"
                "  for (; cj_k < cj_n; cj_k += cj_stride) {\n"
                "    const long long i = cj_start + (long long)cj_k * cj_step;\n"
                "    %s;\n  }\n%s%s}\n",
                k->body, k->after_loop ? k->after_loop : "", k->after_loop ? "\n" : "");
}

cujit_status cj_ew_prepare(const cj_ew_kernel *k, cujit_function **fn) {
  cj_buf src = {0};
  cujit_status st;
  write_kernel(&src, k);
  if (src.oom) {
    cj_buf_free(&src);
    return cj_fail_oom("writing a kernel");
  }
  st = cj_array_kernel(src.data, k->name, fn);
  cj_buf_free(&src);
  return st;
}

cujit_status cj_ew_launch(cujit_function *fn, int64_t start, int64_t step, int64_t count,
                          CUstream stream, const cujit_arg *args, size_t nargs) {
  cujit_arg all[64];
  CJ_CHECK(nargs + 3 <= CJ_COUNT(all), CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s': more than %zu arguments", cujit_function_name(fn), CJ_COUNT(all) - 3);
  if (count == 0) return CUJIT_OK;
  if (nargs) memcpy(all, args, nargs * sizeof *args);
  all[nargs] = cujit_i64(start);
  all[nargs + 1] = cujit_i64(step);
  all[nargs + 2] = cujit_u64((uint64_t)count);
  return cj_array_launch(fn, count, stream, all, nargs + 3);
}

cujit_status cj_ew_run(const cj_ew_kernel *k, int64_t start, int64_t step, int64_t count,
                       CUstream stream, const cujit_arg *args, size_t nargs) {
  cujit_function *fn = NULL;
  cujit_status st = cj_ew_prepare(k, &fn);
  return st == CUJIT_OK ? cj_ew_launch(fn, start, step, count, stream, args, nargs) : st;
}

/* ---- the public generator ---- */

struct cujit_elementwise {
  cj_decl *decls;
  size_t n_decls;
  int *types;
  cj_ew_kernel k;
  char *params, *body, *name, *preamble, *loop_prep, *after_loop;
};

int cj_is_identifier(const char *s) {
  size_t i;
  if (!s[0] || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (i = 0; s[i]; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

/* The generator options' first version ended with after_loop: what a size of 0 stands for. */
#define GEN_OPTIONS_V1 CJ_SIZE_V1(cujit_generator_options, after_loop)

cujit_status cj_gen_options(const char *fn, const cujit_generator_options *user,
                            cujit_generator_options *own) {
  return cj_sized_in(fn, "cujit_generator_options", user, GEN_OPTIONS_V1, own, sizeof *own);
}

/* "const float *x, float a" as the kernel's parameter list. */
static char *params_of(const cj_decl *d, size_t n) {
  cj_buf b = {0};
  size_t i;
  for (i = 0; i < n; i++)
    cj_buf_printf(&b, "%s%s%s %s%s", i ? ", " : "", d[i].is_const ? "const " : "",
                  cj_elem_of(d[i].type)->c_name, d[i].is_array ? "*" : "", d[i].name);
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
  CJ_TRY(cj_decl_parse(args, &e->decls, &e->n_decls));
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
  e->k = (cj_ew_kernel){e->name,      e->params,     e->body,  e->preamble,
                        e->loop_prep, e->after_loop, e->types, e->n_decls};
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

/* Checks the arguments and runs the kernel over the range, or with range 0 over the
 * first array's elements. */
static cujit_status call(cujit_elementwise *e, int range, int64_t start, int64_t stop, int64_t step,
                         const cujit_arg *args, size_t nargs, const char *fn) {
  cujit_arg a[61];
  const cj_array *first;
  uint64_t count;
  CJ_CHECK(e, CUJIT_ERROR_INVALID_VALUE, "%s: the kernel is NULL", fn);
  CJ_TRACE("cujit: elementwise %s", e->k.name);
  CJ_CHECK(e->n_decls <= CJ_COUNT(a), CUJIT_ERROR_INVALID_VALUE, "%s: more than %zu arguments", fn,
           CJ_COUNT(a));
  CJ_TRY(cj_gen_args(fn, e->decls, e->n_decls, args, nargs, a, &first));
  if (!range) return cj_ew_run(&e->k, 0, 1, first->size, first->stream, a, nargs);
  CJ_CHECK(step != 0, CUJIT_ERROR_INVALID_VALUE, "%s: the step is 0", fn);
  count = cj_range_count(start, stop, step);
  CJ_CHECK(cj_range_inside(start, step, count, first->size), CUJIT_ERROR_INVALID_VALUE,
           "%s: the range %lld to %lld (step %lld) leaves "
           "the arrays' %lld elements",
           fn, (long long)start, (long long)stop, (long long)step, (long long)first->size);
  /* inside the arrays: count is at most their size, below 2^62 */
  return cj_ew_run(&e->k, start, step, (int64_t)count, first->stream, a, nargs);
}

cujit_status cujit_elementwise_call_range(cujit_elementwise *e, int64_t start, int64_t stop,
                                          int64_t step, const cujit_arg *args, size_t nargs) {
  return call(e, 1, start, stop, step, args, nargs, "cujit_elementwise_call_range");
}

cujit_status cujit_elementwise_call(cujit_elementwise *e, const cujit_arg *args, size_t nargs) {
  return call(e, 0, 0, 0, 1, args, nargs, "cujit_elementwise_call");
}

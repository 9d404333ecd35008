/* reduction.c - the reduction generator (cujit_reduction_*): declarations and expressions
 * in, a kernel of the reduction engine out, compiled at the first call and launched over
 * the elements of the shape the array arguments broadcast to (bcast.c) once every argument
 * has been checked. Arrays of one shape take the kernel made at the first call; a call that
 * stretches some array takes a variant with that array's indexer as its parameter (of
 * const elements: a map expression that writes it is refused), compiled once per process
 * for each pattern of stretched arrays as every generated kernel is. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

struct cujit_reduction {
  cj_gen_decl *decls;
  size_t ndecls;
  size_t first_array;  /* index of the first array argument (there must be one) */
  char *args;          /* the declarations as given, for messages */
  cj_buf text;         /* name, neutral, reduce, map, preamble and params, NUL-separated */
  int *types;          /* the declared element types */
  cj_reduce_spec spec; /* points into text */
  cujit_function *fn;  /* compiled at the first call (atomic) */
};

void cujit_reduction_destroy(cujit_reduction *r) {
  if (!r) return;
  cj_free(r->decls);
  cj_free(r->args);
  cj_buf_free(&r->text);
  cj_free(r->types);
  cj_free(r);
}

/* ---- making one ---- */

static cujit_status check_create(cujit_reduction **out, cujit_type type, const char *neutral,
                                 const char *reduce_expr, const char *map_expr,
                                 const cujit_generator_options *user,
                                 cujit_generator_options *opts) {
  static const char fn[] = "cujit_reduction_create";
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  *out = NULL;
  CJ_TRY(cj_gen_options(fn, user, opts));
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type (use "
           "CUJIT_TYPE_BOOL, _I8 ... _U64, _F16, _BF16, _F32, _F64, _C64 or _C128)",
           fn, (int)type);
  CJ_CHECK(neutral && neutral[0], CUJIT_ERROR_INVALID_VALUE,
           "%s: neutral is %s; give the value that changes "
           "nothing, e.g. \"0\" for a sum",
           fn, neutral ? "empty" : "NULL");
  CJ_CHECK(reduce_expr && reduce_expr[0], CUJIT_ERROR_INVALID_VALUE,
           "%s: reduce_expr is %s; give an expression in a "
           "and b, e.g. \"a+b\"",
           fn, reduce_expr ? "empty" : "NULL");
  CJ_CHECK(map_expr && map_expr[0], CUJIT_ERROR_INVALID_VALUE,
           "%s: map_expr is %s; give element i's value, "
           "e.g. \"x[i]\"",
           fn, map_expr ? "empty" : "NULL");
  CJ_CHECK(!opts || !opts->name || cj_is_identifier(opts->name), CUJIT_ERROR_INVALID_VALUE,
           "%s: the kernel name \"%s\" is not a C "
           "identifier; use letters, digits and '_'",
           fn, opts->name);
  return CUJIT_OK;
}

/* Appends s and its NUL to the text; returns its offset. */
static size_t keep(cj_buf *b, const char *s) {
  size_t at = b->len;
  cj_buf_append(b, s, strlen(s) + 1);
  return at;
}

/* Fills the spec from the kept strings (each kept at an offset of r->text). */
static cujit_status fill_spec(cujit_reduction *r, cujit_type type, const char *neutral,
                              const char *reduce_expr, const char *map_expr,
                              const cujit_generator_options *opts) {
  size_t at[6], i;
  cj_buf params = {0};
  cj_gen_params(&params, r->decls, r->ndecls, NULL, 0);
  at[0] = keep(&r->text, opts && opts->name ? opts->name : "reduction");
  at[1] = keep(&r->text, neutral);
  at[2] = keep(&r->text, reduce_expr);
  at[3] = keep(&r->text, map_expr);
  at[4] = keep(&r->text, opts && opts->preamble ? opts->preamble : "");
  at[5] = keep(&r->text, params.data ? params.data : "");
  if (params.oom || r->text.oom) {
    cj_buf_free(&params);
    return cj_fail_oom("making a reduction");
  }
  cj_buf_free(&params);
  for (i = 0; i < r->ndecls; i++) r->types[i] = r->decls[i].type;
  r->spec.name = r->text.data + at[0];
  r->spec.acc = type;
  r->spec.result = type;
  r->spec.neutral = r->text.data + at[1];
  r->spec.reduce = r->text.data + at[2];
  r->spec.map = r->text.data + at[3];
  r->spec.preamble = r->text.data + at[4];
  r->spec.params = r->text.data + at[5];
  r->spec.types = r->types;
  r->spec.ntypes = r->ndecls;
  return CUJIT_OK;
}

static cujit_status find_array(cujit_reduction *r) {
  for (r->first_array = 0; r->first_array < r->ndecls; r->first_array++)
    if (r->decls[r->first_array].is_array) return CUJIT_OK;
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "cujit_reduction_create: \"%s\" declares no array; "
                 "declare at least one (TYPE *NAME): the reduction runs over the first one's "
                 "elements",
                 r->args);
}

cujit_status cujit_reduction_create(cujit_reduction **out, cujit_type type, const char *neutral,
                                    const char *reduce_expr, const char *map_expr, const char *args,
                                    const cujit_generator_options *user) {
  cujit_generator_options own, *opts = &own;
  cujit_reduction *r;
  cujit_status st = CUJIT_OK;
  CJ_TRY(check_create(out, type, neutral, reduce_expr, map_expr, user, opts));
  if (!(r = cj_calloc(1, sizeof *r))) return cj_fail_oom("making a reduction");
  if ((st = cj_gen_decl_parse(args, &r->decls, &r->ndecls)) != CUJIT_OK) goto fail;
  if (!(r->args = cj_strdup(args)) || !(r->types = cj_calloc(r->ndecls, sizeof *r->types))) {
    st = cj_fail_oom("making a reduction");
    goto fail;
  }
  if ((st = find_array(r)) != CUJIT_OK) goto fail;
  if ((st = fill_spec(r, type, neutral, reduce_expr, map_expr, opts)) != CUJIT_OK) goto fail;
  *out = r;
  return CUJIT_OK;
fail:
  cujit_reduction_destroy(r);
  return st;
}

/* ---- calling it ---- */

/* The kernel, compiled at the first call (two threads may both compile: the same function
 * comes back from the generated kernels' table). */
static cujit_status kernel_of(cujit_reduction *r, cujit_function **fn) {
  cujit_function *f = __atomic_load_n(&r->fn, __ATOMIC_ACQUIRE);
  cujit_status st = CUJIT_OK;
  if (!f && (st = cj_reduce_kernel(&r->spec, &f)) == CUJIT_OK)
    __atomic_store_n(&r->fn, f, __ATOMIC_RELEASE);
  *fn = f;
  return st;
}

/* The variant of the kernel for a call that stretches some array (s), its indexers of
 * const elements unless `writable`. */
static cujit_status variant_of(const cujit_reduction *r, const cj_gen_shape *s, int writable,
                               cujit_function **fn) {
  cj_reduce_spec spec = r->spec;
  cj_buf params = {0}, pre = {0};
  cujit_status st;
  cj_gen_params(&params, r->decls, r->ndecls, s, writable);
  cj_gen_bcast_source(&pre);
  cj_buf_puts(&pre, r->spec.preamble);
  if (params.oom || pre.oom) {
    st = cj_fail_oom("writing a reduction kernel");
  } else {
    spec.params = params.data;
    spec.preamble = pre.data;
    st = cj_reduce_kernel(&spec, fn);
  }
  cj_buf_free(&params);
  cj_buf_free(&pre);
  return st;
}

/* The variant did not compile (the error is the last one): whether for writing a
 * stretched array not declared const, which the variant with those writable shows by
 * compiling. Its refusal then, else the error as it was. */
static cujit_status writes_stretched(const cujit_reduction *r, const cj_gen_shape *s,
                                     const cj_array *const *arrays, const char *fn) {
  uint64_t which = s->stretched;
  cujit_function *f;
  char *was;
  int nv = cujit_last_nvrtc_result();
  cujit_status st;
  size_t k;
  for (k = 0; k < r->ndecls; k++)
    if (r->decls[k].is_const) which &= ~((uint64_t)1 << k);
  if (!which || !(was = cj_strdup(cujit_last_error()))) return CUJIT_ERROR_COMPILE;
  st = variant_of(r, s, 1, &f);
  st = st == CUJIT_OK ? cj_gen_refuse_write(fn, r->decls, r->ndecls, s, which, arrays)
                      : cj_fail_nvrtc(CUJIT_ERROR_COMPILE, nv, "%s", was);
  cj_free(was);
  return st;
}

/* The kernel for a call of shape s. */
static cujit_status kernel_for(cujit_reduction *r, const cj_gen_shape *s,
                               const cj_array *const *arrays, const char *fn, cujit_function **f) {
  cujit_status st;
  if (!s->stretched) return kernel_of(r, f);
  st = variant_of(r, s, 0, f);
  return st == CUJIT_ERROR_COMPILE ? writes_stretched(r, s, arrays, fn) : st;
}

/* A call: the result goes to *out (out not NULL) or to host memory. */
static cujit_status call(cujit_reduction *r, cujit_array **out, void *host, const cujit_arg *args,
                         size_t nargs, const char *fn) {
  cujit_function *f = NULL;
  cujit_arg *cargs;
  const cj_array *arrays[64]; /* cj_gen_args takes no more */
  cj_gen_shape s;
  CUdeviceptr dst = 0;
  int made = 0;
  cujit_status st;
  CJ_CHECK(r, CUJIT_ERROR_INVALID_VALUE, "%s: the reduction is NULL", fn);
  CJ_TRACE("cujit: reduction %s", r->spec.name);
  if (!(cargs = cj_calloc(r->ndecls, sizeof *cargs))) return cj_fail_oom("calling a reduction");
  st = cj_gen_args(fn, r->decls, r->ndecls, args, nargs, cargs, arrays, &s);
  if (st == CUJIT_OK && out) st = cj_reduce_output_check(out, r->spec.result, fn);
  if (st == CUJIT_OK) st = kernel_for(r, &s, arrays, fn, &f);
  if (st == CUJIT_OK && out)
    st = cj_reduce_output(out, r->spec.result, s.shape.stream, fn, &dst, &made);
  if (st == CUJIT_OK)
    st = cj_reduce_run(f, &r->spec, s.shape.size, s.shape.stream, cargs, nargs, dst, host);
  cj_free(cargs);
  return cj_array_unmake(st, out, made);
}

cujit_status cujit_reduction_call(cujit_reduction *r, cujit_array **out, const cujit_arg *args,
                                  size_t nargs) {
  static const char fn[] = "cujit_reduction_call";
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  return call(r, out, NULL, args, nargs, fn);
}

cujit_status cujit_reduction_call_host(cujit_reduction *r, void *result, const cujit_arg *args,
                                       size_t nargs) {
  static const char fn[] = "cujit_reduction_call_host";
  CJ_CHECK(result, CUJIT_ERROR_INVALID_VALUE,
           "%s: result is NULL; pass host memory for one "
           "value of the reduction's type",
           fn);
  return call(r, NULL, result, args, nargs, fn);
}

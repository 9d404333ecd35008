/* genargs.c - what the generators' callers give: the options a generator is made with, read
 * by their size, and the call arguments (cujit.h, "Kernel generators"): each array
 * looked up and checked against its declaration, each scalar taken or converted to its
 * declared type by the rule every parameter follows (module/accept.c), with this
 * difference: an argument made by a constructor is converted as a plain value is, since the
 * declaration is the prototype it is converted to. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"
#include "module/accept.h"

/* What a refusal names: the call, the argument, what it was given. */
typedef struct arg_ctx {
  const char *fn;
  size_t i;
  const cj_gen_decl *d;
  const cujit_arg *a;
} arg_ctx;

static const char *words_of(int type) {
  const cj_scalar *s = cj_scalar_of(type);
  return s ? s->words : "a value of an unknown type";
}

/* `value` is the value as text, "" for none. */
static cujit_status refuse(const arg_ctx *c, const char *value, const char *why) {
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: argument %zu ('%s') is declared %s%s and "
                 "was given %s%s%s: %s",
                 c->fn, c->i + 1, c->d->name, cj_elem_of(c->d->type)->c_name,
                 c->d->is_array ? " *" : "",
                 c->a->kind == CUJIT_ARG_ARRAY ? "an array" : words_of(c->a->type),
                 value[0] ? " " : "", value, why);
}

/* Converts a scalar argument to the declared scalar type t into out (16 bytes). */
static cujit_status convert(const arg_ctx *c, int t, unsigned char out[16]) {
  const cujit_arg *a = c->a;
  size_t size = cj_elem_of(t)->size;
  /* a constructor's number is converted as a plain value is */
  int tag = a->type > CUJIT_TYPE_BYTES && a->type < CUJIT_TYPE_PLAIN_ ? a->type + CUJIT_TYPE_PLAIN_
                                                                      : a->type;
  char value[CJ_VALUE_TEXT];
  const char *why;
  if (cj_takes(cj_accept_of(t), tag)) {
    if (a->size != size || a->data)
      return refuse(c, "", "a value of another size; give one of the declared type");
    memset(out, 0, 16);
    memcpy(out, a->value.bytes, size);
    return CUJIT_OK;
  }
  if (a->type == CUJIT_TYPE_PTR)
    return refuse(c, "",
                  "a device pointer is not a scalar; declare an array (TYPE *name) "
                  "and pass the array");
  why = cj_convert(t, a, out, value);
  return why ? refuse(c, value, why) : CUJIT_OK;
}

/* Argument i for an array declaration: live, of the declared element type and contiguous
 * (its shape is broadcast with the others' by the caller). */
static cujit_status array_arg(const arg_ctx *c, cujit_arg *out, const cj_array **array) {
  cj_array *a;
  char what[96];
  if (c->a->kind != CUJIT_ARG_ARRAY)
    return refuse(c, "",
                  c->a->kind == CUJIT_ARG_VALUE
                      ? "pass the array (a cujit_array *, or cujit_arr(a) in an array "
                        "of cujit_arg)"
                      : "In/Out buffers are for launches; make an array of the data "
                        "(cujit_array_from_host())");
  snprintf(what, sizeof what, "argument %zu ('%s')", c->i + 1, c->d->name);
  CJ_TRY(cj_array_get((const cujit_array *)(uintptr_t)c->a->value.ptr, c->fn, what, &a));
  CJ_CHECK(a->type == c->d->type, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is an array of %s, declared as %s; pass an array of the declared type", c->fn,
           what, cj_elem_of(a->type)->name, cj_elem_of(c->d->type)->name);
  /* the kernel indexes it as x[i], its element i in C order */
  CJ_TRY(cj_array_need_contiguous(a, c->fn, what));
  *array = a;
  *out = cujit_ptr(a->data);
  return CUJIT_OK;
}

/* Argument i for a scalar declaration. */
static cujit_status scalar_arg(const arg_ctx *c, cujit_arg *out) {
  unsigned char v[16];
  int t = c->d->type;
  if (c->a->kind != CUJIT_ARG_VALUE)
    return refuse(c, "",
                  c->a->kind == CUJIT_ARG_ARRAY ? "an array for a scalar parameter"
                                                : "an In/Out buffer for a scalar parameter");
  CJ_TRY(convert(c, t, v));
  *out = cujit_arg_scalar_(t, cj_elem_of(t)->size, v);
  return CUJIT_OK;
}

cujit_status cj_gen_args(const char *fn, const cj_gen_decl *d, size_t n, const cujit_arg *args,
                         size_t nargs, cujit_arg *out, const cj_array **arrays, cj_gen_shape *s) {
  size_t i;
  CJ_CHECK(nargs == n, CUJIT_ERROR_INVALID_VALUE,
           "%s: %zu argument%s given, %zu declared; "
           "pass one per declaration, in their order",
           fn, nargs, nargs == 1 ? "" : "s", n);
  CJ_CHECK(!n || args, CUJIT_ERROR_INVALID_VALUE, "%s: args is NULL", fn);
  CJ_CHECK(n <= 64, CUJIT_ERROR_INVALID_VALUE,
           "%s: %zu arguments declared; a generated kernel takes at most 64", fn, n);
  for (i = 0; i < n; i++) {
    arg_ctx c = {fn, i, &d[i], &args[i]};
    CJ_CHECK(args[i].kind >= CUJIT_ARG_VALUE && args[i].kind <= CUJIT_ARG_ARRAY,
             CUJIT_ERROR_INVALID_VALUE,
             "%s: argument %zu ('%s') has the unknown kind %d; "
             "make arguments with the cujit_* constructors",
             fn, i + 1, d[i].name, args[i].kind);
    arrays[i] = NULL;
    CJ_TRY(d[i].is_array ? array_arg(&c, &out[i], &arrays[i]) : scalar_arg(&c, &out[i]));
  }
  CJ_TRY(cj_gen_shape_of(fn, d, n, arrays, s));
  cj_gen_shape_args(s, n, out);
  return CUJIT_OK;
}

/* The generator options' first version ended with after_loop: what a size of 0 stands for. */
#define GEN_OPTIONS_V1 CJ_SIZE_V1(cujit_generator_options, after_loop)

cujit_status cj_gen_options(const char *fn, const cujit_generator_options *user,
                            cujit_generator_options *own) {
  return cj_sized_in(fn, "cujit_generator_options", user, GEN_OPTIONS_V1, own, sizeof *own);
}

/* call.c - cujit_call(): the arguments its macro made of C values (plain values, values by
 * their address), taken or converted by the kernel's signature as every parameter's rule
 * says (module/accept.h); and cujit_call_n(), its older form, whose C varargs are read as
 * the signature says (C's default argument promotions undone), unchecked. Both launch
 * through cujit_launch(), or straight to the driver when nothing needs more. */
#include <math.h>
#include <string.h>

#include "launch/launch.h"
#include "call/signature.h"

#ifdef CUJIT_FAULT_INJECTION
cj_launch_fn cj_call_launcher = cujit_launch;

void cj_call_set_launcher(cj_launch_fn f) { cj_call_launcher = f ? f : cujit_launch; }
#endif

void cj_arg_bytes(const cj_param *p, const void *v, cujit_arg *a) {
  if (p->size <= sizeof a->value.bytes) {
    memset(a->value.bytes, 0, sizeof a->value.bytes);
    cj_arg_set(p, a, v, p->size);
  } else {
    cj_arg_set(p, a, v, 0);
    a->data = v;
  }
}

static cujit_status arg_fail(const cj_signature *s, const char *kernel, size_t i, const char *fmt,
                             ...) CJ_PRINTF(4, 5);
static cujit_status arg_fail(const cj_signature *s, const char *kernel, size_t i, const char *fmt,
                             ...) {
  cj_buf b = {0};
  va_list ap;
  cujit_status st;
  cj_buf_printf(&b, "kernel '%s', ", kernel);
  cj_param_label(s, i, &b);
  cj_buf_puts(&b, ": ");
  va_start(ap, fmt);
  cj_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  st = cj_fail(CUJIT_ERROR_INVALID_ARGS, "%s", b.data ? b.data : "out of memory");
  cj_buf_free(&b);
  return st;
}

cujit_status cj_arg_ptr(const cj_signature *s, const char *kernel, size_t i, CUdeviceptr v,
                        cujit_arg *a) {
  const cujit_arg *r;
  if (CJ_LIKELY((v >> 48) != CUJIT_ARG_REF_TAG_)) {
    cj_arg_set(&s->params[i], a, &v, sizeof v);
    return CUJIT_OK;
  }
  r = (const cujit_arg *)(uintptr_t)(v & CUJIT_ARG_REF_MASK_);
  if (!r || (v & CUJIT_ARG_REF_MASK_) == CUJIT_ARG_REF_MASK_)
    return arg_fail(s, kernel, i, "the argument reference is %s",
                    r ? "to an address cujit_arg_ref() cannot encode (above 2^48)" : "NULL");
  if (r->size != sizeof(CUdeviceptr) || (r->kind == CUJIT_ARG_VALUE && r->type != CUJIT_TYPE_PTR))
    return arg_fail(s, kernel, i,
                    "a pointer parameter takes a device pointer or "
                    "CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR, not a %zu-byte value",
                    r->size);
  *a = *r;
  return CUJIT_OK;
}

/* One argument as read from the varargs: a scalar's value (its first `size` bytes), or
 * where a struct, vector or blob lies. */
typedef union cj_scalar_value {
  uint64_t u64;
  double f64;
  float f32;
  uint32_t u32;
  uint16_t u16;
  uint8_t u8;
} cj_scalar_value;

/* A promoted int for an 8- or 16-bit parameter: any value of the signed or the unsigned
 * type of that width is taken (so both (char)-1 and 255 fit an unsigned char). */
static cujit_status small_int(const cj_signature *s, const char *kernel, size_t i, int v,
                              cj_scalar_value *out) {
  int bits = (int)s->params[i].size * 8;
  long lo = -(1L << (bits - 1)), hi = (1L << bits) - 1;
  if (v < lo || v > hi) return arg_fail(s, kernel, i, "%d does not fit in %d bits", v, bits);
  if (bits == 8)
    out->u8 = (uint8_t)v;
  else
    out->u16 = (uint16_t)v;
  return CUJIT_OK;
}

/* Reads parameter i's argument, undoing C's default promotions: *at points to its bytes
 * (in *v for scalars). */
static cujit_status read_arg(const cj_signature *s, const char *kernel, size_t i, va_list *ap,
                             cj_scalar_value *v, const void **at) {
  const cj_param *p = &s->params[i];
  *at = v;
  switch ((cj_kind)p->kind) {
    case CJ_K_I8:
    case CJ_K_U8:
    case CJ_K_I16:
    case CJ_K_U16: return small_int(s, kernel, i, va_arg(*ap, int), v);
    case CJ_K_I32:
    case CJ_K_U32: v->u32 = va_arg(*ap, unsigned); return CUJIT_OK;
    case CJ_K_I64:
    case CJ_K_U64: v->u64 = va_arg(*ap, unsigned long long); return CUJIT_OK;
    case CJ_K_F16: v->u16 = cj_f16_bits(va_arg(*ap, double)); return CUJIT_OK;
    case CJ_K_BF16: v->u16 = cj_bf16_bits(va_arg(*ap, double)); return CUJIT_OK;
    case CJ_K_F32: v->f32 = (float)va_arg(*ap, double); return CUJIT_OK;
    case CJ_K_F64: v->f64 = va_arg(*ap, double); return CUJIT_OK;
    case CJ_K_PTR: v->u64 = va_arg(*ap, CUdeviceptr); return CUJIT_OK;
    default:
      if ((*at = va_arg(*ap, const void *)) != NULL) return CUJIT_OK;
      return arg_fail(s, kernel, i,
                      "a struct, vector or blob parameter takes a pointer to its "
                      "value (&v), not NULL");
  }
}

static cujit_status one_arg(const cj_signature *s, const char *kernel, size_t i, va_list *ap,
                            cujit_arg *a) {
  const cj_param *p = &s->params[i];
  cj_scalar_value v;
  const void *at;
  cujit_status st = read_arg(s, kernel, i, ap, &v, &at);
  if (CJ_UNLIKELY(st != CUJIT_OK)) return st;
  if (p->kind == CJ_K_PTR) return cj_arg_ptr(s, kernel, i, v.u64, a);
  if (p->kind >= CJ_K_NSCALAR)
    cj_arg_bytes(p, at, a);
  else
    cj_arg_set(p, a, &v, p->size);
  return CUJIT_OK;
}

cujit_status cj_args_from_va(const cj_signature *s, const char *kernel, int nargs, va_list *ap,
                             cujit_arg *args) {
  size_t i;
  CJ_CHECK(nargs >= 0 && (size_t)nargs == s->n, CUJIT_ERROR_INVALID_ARGS,
           "kernel '%s' takes %zu arguments (%s) but %d were given; nothing was "
           "launched (the count comes from the commas in the call: wrap a compound "
           "literal such as (float4){1, 2, 3, 4} in parentheses)",
           kernel, s->n, s->text, nargs);
  for (i = 0; i < s->n; i++) {
    cujit_status st = one_arg(s, kernel, i, ap, &args[i]);
    if (CJ_UNLIKELY(st != CUJIT_OK)) return st;
  }
  return CUJIT_OK;
}

/* ---- the typed form: the arguments cujit_call()'s macro made ---- */

/* The plain tag of a value given by its address (&v). */
#define ADDR_TAG (CUJIT_TYPE_BYTES + CUJIT_TYPE_PLAIN_)

/* What a refusal says the argument is: "an int (i32) -1", "a pointer (&v)". */
static const char *given_words(const cujit_arg *a) {
  const cj_scalar *s = cj_scalar_of(a->type);
  if (a->type == ADDR_TAG) return "a pointer (&v)";
  return s ? s->words : "an argument of an unknown type";
}

/* Argument `a` for scalar parameter i, taken as it is or converted to its type. */
static cujit_status plain_number(const cj_signature *s, const char *kernel, size_t i,
                                 const cujit_arg *a, cujit_arg *out) {
  const cj_param *p = &s->params[i];
  unsigned char bytes[16];
  char value[CJ_VALUE_TEXT];
  const char *why;
  if (cj_takes(p->accept, a->type)) {
    cj_arg_set(p, out, a->value.bytes, p->size);
    return CUJIT_OK;
  }
  if (a->type == ADDR_TAG)
    return arg_fail(s, kernel, i,
                    "given a pointer (&v), which only a struct, vector or blob parameter "
                    "takes; pass the number itself; nothing was launched");
  if ((why = cj_convert(p->tag, a, bytes, value)) != NULL)
    return arg_fail(s, kernel, i, "given %s%s%s: %s; nothing was launched", given_words(a),
                    value[0] ? " " : "", value, why);
  cj_arg_set(p, out, bytes, p->size);
  return CUJIT_OK;
}

static cujit_status plain_arg(const cj_signature *s, const char *kernel, size_t i,
                              const cujit_arg *a, cujit_arg *out) {
  const cj_param *p = &s->params[i];
  CJ_CHECK(a->kind == CUJIT_ARG_VALUE && a->type >= CUJIT_TYPE_PLAIN_ &&
               a->type < 2 * CUJIT_TYPE_PLAIN_,
           CUJIT_ERROR_INVALID_ARGS,
           "cujit_call: argument %zu of kernel '%s' is not what cujit_call() makes of a C "
           "value (a cujit_arg is cujit_launch()'s); nothing was launched",
           i + 1, kernel);
  if (p->kind == CJ_K_PTR) { /* a device pointer, or a reference CUJIT_IN_PTR() made */
    if (a->type == CUJIT_TYPE_U64 + CUJIT_TYPE_PLAIN_ ||
        a->type == CUJIT_TYPE_PTR + CUJIT_TYPE_PLAIN_)
      return cj_arg_ptr(s, kernel, i, a->value.u64, out);
    return arg_fail(s, kernel, i,
                    "given %s, but a pointer parameter takes a CUdeviceptr (an unsigned long "
                    "long) or CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR; nothing was launched",
                    given_words(a));
  }
  if (p->kind < CJ_K_NSCALAR) return plain_number(s, kernel, i, a, out);
  if (a->type == ADDR_TAG && a->data) {
    cj_arg_bytes(p, a->data, out);
    return CUJIT_OK;
  }
  return arg_fail(s, kernel, i,
                  "a struct, vector or blob parameter takes a pointer to its value (&v), not "
                  "%s; nothing was launched",
                  a->type == ADDR_TAG ? "NULL" : given_words(a));
}

cujit_status cj_args_from_plain(const cj_signature *s, const char *kernel, const cujit_arg *in,
                                cujit_arg *args) {
  size_t i;
  for (i = 0; i < s->n; i++) CJ_TRY(plain_arg(s, kernel, i, &in[i], &args[i]));
  return CUJIT_OK;
}

/* The hot path of the typed form: each argument its parameter takes as it is handed to the
 * driver where it lies, as cujit_launch's hot path does. Returns 0 (not taken) when
 * anything needs more: a conversion, a value by its address, In/Out (CUJIT_IN_PTR()'s
 * references, which the header tags), options beyond the stream and shared memory, a
 * test's launcher, more parameters than the stack holds. */
static inline CJ_ALWAYS_INLINE int typed_direct(cujit_function *fn, const cj_signature *s,
                                                cujit_dim3 grid, cujit_dim3 block,
                                                const cujit_launch_options *opts,
                                                const cujit_arg *args, cujit_status *st) {
  void *params[CJ_CALL_STACK_ARGS];
  size_t i;
  if (!s->checked || s->n != fn->nparams || s->n > CJ_CALL_STACK_ARGS || CJ_LAUNCHER_REPLACED() ||
      (opts && (!CJ_OPTS_CURRENT(opts) || opts->elapsed_ms || CJ_OPTS_EX(opts))))
    return 0;
  for (i = 0; i < s->n; i++) {
    const cujit_arg *a = &args[i];
    if (CJ_UNLIKELY(!cj_takes(s->params[i].accept, a->type))) return 0;
    params[i] = (void *)(uintptr_t)a->value.bytes;
  }
  *st = cj_launch_params(fn, grid, block, params, opts);
  return 1;
}

/* The general path of the typed form: the arguments made cujit_arg values and handed to the
 * launcher. Out of line, so that its array does not deepen the direct path's stack. */
static CJ_NOINLINE cujit_status typed_general(cujit_function *fn, const cj_signature *s,
                                              cujit_dim3 grid, cujit_dim3 block,
                                              const cujit_launch_options *opts,
                                              const cujit_arg *in) {
  cujit_arg stack[CJ_CALL_STACK_ARGS], *args = stack;
  cujit_status st;
  if (CJ_UNLIKELY(s->n > CJ_CALL_STACK_ARGS)) {
    args = cj_malloc(s->n * sizeof *args);
    if (!args) return cj_fail_oom("calling a kernel");
  }
  st = cj_args_from_plain(s, fn->name, in, args);
  if (CJ_LIKELY(st == CUJIT_OK)) st = CJ_LAUNCH(fn, grid, block, args, s->n, opts);
  if (args != stack) cj_free(args);
  return st;
}

cujit_status cujit_call_typed_(cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                               const cujit_launch_options *opts, const cujit_arg *args,
                               size_t nargs) {
  cj_signature *s;
  cujit_status st;
  if (CJ_UNLIKELY(!fn)) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_call: fn is NULL");
  if (CJ_UNLIKELY((st = cj_sig_of_function(fn, &s)) != CUJIT_OK)) return st;
  CJ_CHECK(nargs == s->n && (args || !nargs), CUJIT_ERROR_INVALID_ARGS,
           "kernel '%s' takes %zu arguments (%s) but %zu were given; nothing was launched "
           "(the count comes from the commas in the call: wrap a compound literal such as "
           "(float4){1, 2, 3, 4} in parentheses)",
           fn->name, s->n, s->text, nargs);
  if (typed_direct(fn, s, grid, block, opts, args, &st)) return st;
  return typed_general(fn, s, grid, block, opts, args);
}

/* ---- the varargs form ---- */

/* The hot path: the arguments read straight into the kernelParams array, no cujit_arg
 * built and no check repeated, for a signature that matched the driver's layout. Returns
 * 0 (not taken; *ap may have been read) when the general path is needed: In/Out
 * arguments, a timing, a cooperative launch or clusters, options of another layout, a
 * test's launcher, or more parameters than the stack holds. */
static inline CJ_ALWAYS_INLINE int call_direct(cujit_function *fn, const cj_signature *s, int nargs,
                                               cujit_dim3 grid, cujit_dim3 block,
                                               const cujit_launch_options *opts, va_list *ap,
                                               cujit_status *st) {
  cj_scalar_value v[CJ_CALL_STACK_ARGS];
  void *params[CJ_CALL_STACK_ARGS];
  const void *at;
  size_t i;
  if (!s->checked || s->n != fn->nparams || s->n > CJ_CALL_STACK_ARGS || nargs < 0 ||
      (size_t)nargs != s->n || CJ_LAUNCHER_REPLACED() ||
      (opts && (!CJ_OPTS_CURRENT(opts) || opts->elapsed_ms || CJ_OPTS_EX(opts))))
    return 0;
  for (i = 0; i < s->n; i++) {
    if (CJ_UNLIKELY((*st = read_arg(s, fn->name, i, ap, &v[i], &at)) != CUJIT_OK)) return 1;
    if (s->params[i].kind == CJ_K_PTR && CJ_UNLIKELY((v[i].u64 >> 48) == CUJIT_ARG_REF_TAG_))
      return 0;
    params[i] = (void *)at;
  }
  *st = cj_launch_params(fn, grid, block, params, opts);
  return 1;
}

/* The general path: cujit_arg values handed to the launcher. Kept out of line so that its
 * array of arguments does not deepen the stack of the direct path. */
static CJ_NOINLINE cujit_status call_general(cujit_function *fn, const cj_signature *s, int nargs,
                                             cujit_dim3 grid, cujit_dim3 block,
                                             const cujit_launch_options *opts, va_list *ap) {
  cujit_arg stack[CJ_CALL_STACK_ARGS], *args = stack;
  cujit_status st;
  if (CJ_UNLIKELY(s->n > CJ_CALL_STACK_ARGS)) {
    args = cj_malloc(s->n * sizeof *args);
    if (!args) return cj_fail_oom("calling a kernel");
  }
  st = cj_args_from_va(s, fn->name, nargs, ap, args);
  if (CJ_LIKELY(st == CUJIT_OK)) st = CJ_LAUNCH(fn, grid, block, args, s->n, opts);
  if (args != stack) cj_free(args);
  return st;
}

/* The body of both entry points (va_start needs the variadic function itself, and a
 * function using va_copy is never inlined): the launch then runs as few frames below the
 * caller as cujit_launch's does. Returns from the entry point on a bad fn or signature. */
#define CJ_CALL_BODY(fn, nargs, grid, block, opts, last)                                         \
  do {                                                                                           \
    va_list ap_, again_;                                                                         \
    cj_signature *s_;                                                                            \
    int done_;                                                                                   \
    if (CJ_UNLIKELY(!(fn))) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_call: fn is NULL"); \
    if (CJ_UNLIKELY((st = cj_sig_of_function((fn), &s_)) != CUJIT_OK)) return st;                \
    va_start(ap_, last);                                                                         \
    va_copy(again_, ap_);                                                                        \
    done_ = call_direct((fn), s_, (nargs), (grid), (block), (opts), &again_, &st);               \
    va_end(again_);                                                                              \
    if (!done_) st = call_general((fn), s_, (nargs), (grid), (block), (opts), &ap_);             \
    va_end(ap_);                                                                                 \
  } while (0)

cujit_status cujit_call_n(cujit_function *fn, int nargs, cujit_dim3 grid, cujit_dim3 block, ...) {
  cujit_status st;
  CJ_CALL_BODY(fn, nargs, grid, block, NULL, block);
  return st;
}

cujit_status cujit_call_ex_n(cujit_function *fn, int nargs, cujit_dim3 grid, cujit_dim3 block,
                             const cujit_launch_options *opts, ...) {
  cujit_status st;
  CJ_CALL_BODY(fn, nargs, grid, block, opts, opts);
  return st;
}

/* signature.c - a function's signature: explicit, or made on first use from the parameter
 * types the compiler gives (module/ptypes.c) fitted to the driver's parameter layout;
 * checked against that layout, kept until the function is freed. */
#include <pthread.h>
#include <string.h>

#include "call/signature.h"

/* Serialises parsing and publishing; readers load the signature without it. */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;

int cj_sig_has_layout(const cujit_function *fn) {
  return fn->nparams == 0 ? fn->dev != NULL : fn->param_offsets && fn->param_sizes;
}

static void upper_free(cujit_function *fn) {
  cj_signature *s, *older;
  void (*unbind)(cujit_function *) = __atomic_load_n(&fn->upper->unbind, __ATOMIC_ACQUIRE);
  if (unbind) unbind(fn); /* each bound pointer then refuses its calls (bind.c) */
  for (s = fn->upper->sig; s; s = older) {
    older = s->older;
    cj_sig_free(s);
  }
  cj_free(fn->upper);
  fn->upper = NULL;
}

/* fn's call-layer state, made on first use (sig_lock held); NULL when out of memory. */
static cj_upper *upper_locked(cujit_function *fn) {
  cj_upper *u = fn->upper;
  if (u) return u;
  if (!(u = cj_calloc(1, sizeof *u))) return NULL;
  fn->upper_free = upper_free;
  __atomic_store_n(&fn->upper, u, __ATOMIC_RELEASE);
  return u;
}

static cj_signature *sig_of(const cujit_function *fn) {
  cj_upper *u = __atomic_load_n(&fn->upper, __ATOMIC_ACQUIRE);
  return u ? __atomic_load_n(&u->sig, __ATOMIC_ACQUIRE) : NULL;
}

void cj_param_label(const cj_signature *s, size_t i, cj_buf *b) {
  const cj_param *p = &s->params[i];
  cj_buf_printf(b, "parameter %zu", i + 1);
  if (p->name) cj_buf_printf(b, " '%s'", p->name);
  cj_buf_puts(b, " (");
  cj_type_text(p->type, b);
  cj_buf_puts(b, ")");
}

static cujit_status mismatch(const cj_signature *s, const cujit_function *fn, size_t i) {
  const cj_param *p = &s->params[i];
  cj_buf b = {0};
  cujit_status st;
  cj_param_label(s, i, &b);
  cj_buf_printf(&b,
                ": the signature puts %u bytes at offset %u, but kernel '%s' takes %zu "
                "bytes at offset %zu; ",
                (unsigned)p->size, (unsigned)p->offset, fn->name, fn->param_sizes[i],
                fn->param_offsets[i]);
  if (p->size == fn->param_sizes[i])
    cj_buf_puts(&b, "the alignment differs (a type string gives one with :A, e.g. b16:16)");
  else
    cj_buf_puts(&b, "the types differ in size");
  st = cj_fail(CUJIT_ERROR_SIGNATURE, "signature \"%s\" does not match the kernel: %s", s->text,
               b.data ? b.data : "");
  cj_buf_free(&b);
  return st;
}

cujit_status cj_sig_check(const cj_signature *s, const cujit_function *fn) {
  size_t i;
  CJ_CHECK(s->n == fn->nparams, CUJIT_ERROR_SIGNATURE,
           "signature \"%s\" has %zu parameters, but kernel '%s' has %zu; give one "
           "type per parameter",
           s->text, s->n, fn->name, fn->nparams);
  for (i = 0; i < s->n; i++)
    if (s->params[i].offset != fn->param_offsets[i] || s->params[i].size != fn->param_sizes[i])
      return mismatch(s, fn, i);
  return CUJIT_OK;
}

/* ---- signatures from the compiler's types ---- */

/* The call layer's kind of a scalar class. */
static cj_kind kind_of(unsigned cls) {
  return cls == CJ_MC_BOOL ? CJ_K_U8 : (cj_kind)(cls - CJ_MC_I8 + CJ_K_I8);
}

static int is_pow2(size_t x) { return x && !(x & (x - 1)); }

cj_type *cj_type_of_param(const cj_ptype *p, size_t size, int *oom) {
  static const cj_kind ints[9] = {0, CJ_K_I8, CJ_K_I16, 0, CJ_K_I32, 0, 0, 0, CJ_K_I64};
  unsigned c = p->m.cls;
  cj_type *t;
  *oom = 0;
  if (c >= CJ_MC_BOOL && c <= CJ_MC_PTR) return (cj_type *)cj_type_of_scalar(kind_of(c));
  if (c == CJ_MC_NAMED && p->integer && size <= 8 && is_pow2(size))
    return (cj_type *)cj_type_of_scalar(ints[size]);
  if (c != CJ_MC_VECTOR || p->m.elem < CJ_MC_BOOL || p->m.elem > CJ_MC_F64) return NULL;
  t = cj_type_vector(kind_of(p->m.elem), p->m.lanes);
  if (t && p->m.align && cj_type_align(&t, p->m.align) != 0) {
    cj_type_free(t);
    t = NULL;
  }
  *oom = !t;
  return t;
}

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* The alignment of opaque bytes at offset `off` after the previous parameter ended at
 * `end`: the PTX's, else (or where it would not put them there) the largest power of two
 * that the offset is a multiple of, which puts them there whatever their own alignment
 * was; for the first parameter, the largest power of two up to 16 that the size is. */
static uint32_t blob_align(const cj_ptype *p, size_t end, size_t off, size_t size) {
  size_t a = 1;
  if (p->align && is_pow2(p->align) && p->align <= 4096 && round_up(end, p->align) == off)
    return p->align;
  if (off)
    while (a < 4096 && off % (a * 2) == 0) a *= 2;
  else
    while (a < 16 && size % (a * 2) == 0) a *= 2;
  return (uint32_t)a;
}

/* Parameter i's type, fitted to the layout: offset `off` after the previous parameter
 * ended at `end`. NULL when out of memory. */
static cj_type *fitted(const cj_ptype *p, size_t end, size_t off, size_t size) {
  int oom;
  cj_type *t = cj_type_of_param(p, size, &oom);
  if (oom) return NULL;
  if (t && t->size == size && round_up(end, t->align) == off) return t;
  cj_type_free(t); /* known by name only, or laid out otherwise: opaque bytes */
  return cj_type_blob((uint32_t)size, blob_align(p, end, off, size));
}

cujit_status cj_sig_from_ptypes(const cj_ptypes *t, size_t n, const size_t *offsets,
                                const size_t *sizes, cj_signature **out) {
  cj_type **types = NULL;
  size_t i, end = 0;
  cujit_status st;
  CJ_CHECK(t->n == n, CUJIT_ERROR_SIGNATURE,
           "the compiler names %zu parameters, but the "
           "kernel's layout has %zu",
           t->n, n);
  if (n && !(types = cj_calloc(n, sizeof *types))) return cj_fail_oom("building a signature");
  for (i = 0; i < n; i++) {
    if (!(types[i] = fitted(&t->p[i], end, offsets[i], sizes[i]))) {
      while (i-- > 0) cj_type_free(types[i]);
      cj_free(types);
      return cj_fail_oom("building a signature");
    }
    end = offsets[i] + sizes[i];
  }
  st = cj_sig_build(n ? types : NULL, NULL, n, out);
  if (n) cj_free(types);
  for (i = 0; st == CUJIT_OK && i < n; i++) /* a bool is a u8 here, but takes 0 and 1 only */
    if (t->p[i].want == CUJIT_TYPE_BOOL && (*out)->params[i].kind == CJ_K_U8) {
      (*out)->params[i].tag = CUJIT_TYPE_BOOL;
      (*out)->params[i].accept = cj_accept_of(CUJIT_TYPE_BOOL);
    }
  return st;
}

/* Makes fn's signature from the compiler's types; checked against the layout. */
static cujit_status derive(cujit_function *fn, cj_signature **out) {
  const cj_ptypes *t;
  cujit_status st;
  CJ_CHECK(cj_sig_has_layout(fn), CUJIT_ERROR_SIGNATURE,
           "kernel '%s' has no parameter layout yet to fit "
           "its types to",
           fn->name ? fn->name : "?");
  CJ_TRY(cj_function_types(fn, &t));
  st = cj_sig_from_ptypes(t, fn->nparams, fn->param_offsets, fn->param_sizes, out);
  if (st == CUJIT_OK && (st = cj_sig_check(*out, fn)) != CUJIT_OK) {
    cj_sig_free(*out);
    *out = NULL;
  }
  if (st == CUJIT_OK) (*out)->checked = 1;
  return st;
}

/* Publishes s as fn's signature, keeping the one it replaces alive. */
static void publish(cj_upper *u, cj_signature *s) {
  s->older = u->sig;
  __atomic_store_n(&u->sig, s, __ATOMIC_RELEASE);
}

/* A signature published before the layout was known is checked when it becomes known. */
static cujit_status check_late(cujit_function *fn, cj_signature *s) {
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&sig_lock);
  if (!s->checked && cj_sig_has_layout(fn)) {
    st = cj_sig_check(s, fn);
    if (st == CUJIT_OK) __atomic_store_n(&s->checked, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&sig_lock);
  return st;
}

cujit_status cj_sig_of_function(cujit_function *fn, cj_signature **out) {
  cj_signature *s = sig_of(fn), *made = NULL;
  cj_upper *u;
  cujit_status st = CUJIT_OK;
  if (CJ_UNLIKELY(!s)) {
    /* made without the lock: an extern "C" kernel's types may take a compile */
    CJ_TRY(derive(fn, &made));
    pthread_mutex_lock(&sig_lock);
    if (!(u = upper_locked(fn))) {
      st = cj_fail_oom("reading a kernel's signature");
    } else if (!(s = u->sig)) {
      publish(u, made);
      s = made;
      made = NULL;
    }
    pthread_mutex_unlock(&sig_lock);
    cj_sig_free(made); /* another thread's was published first */
    if (st != CUJIT_OK) return st;
  }
  if (CJ_UNLIKELY(!__atomic_load_n(&s->checked, __ATOMIC_ACQUIRE)) && cj_sig_has_layout(fn)) {
    CJ_TRY(check_late(fn, s));
  }
  *out = s;
  return CUJIT_OK;
}

/* ---- explicit signatures ---- */

/* How a signature's parameter reads in a launch's message: the C type of a scalar, else
 * its type string. */
static char *sig_spelling(const cj_param *p) {
  cj_buf b = {0};
  if (p->kind == CJ_K_PTR && !p->type->raised) return cj_strdup("pointer");
  if (p->kind < CJ_K_NSCALAR && !p->type->raised) return cj_strdup(cj_scalar_of(p->tag)->c_name);
  cj_type_text(p->type, &b);
  return cj_buf_take(&b);
}

/* What launches check against while the compiler's types are not known (an extern "C"
 * kernel not probed): the signature's. Returns 0, or -1 when out of memory. */
static int offer_sig_types(cujit_function *fn, const cj_signature *s) {
  cj_ptypes *t;
  size_t i;
  if (cj_function_ptypes(fn) && cj_function_ptypes(fn)->from == CJ_TYPES_COMPILER) return 0;
  if (!(t = cj_ptypes_new(s->n, CJ_TYPES_SIGNATURE))) return -1;
  for (i = 0; i < s->n; i++) {
    t->p[i].want = s->params[i].tag;
    t->p[i].m.cls = CJ_MC_OTHER;
    if (!(t->p[i].m.spelling = sig_spelling(&s->params[i]))) {
      cj_ptypes_free(t);
      return -1;
    }
  }
  cj_ptypes_seal(t);
  cj_function_offer_types(fn, t);
  return 0;
}

/* An explicit signature may describe a parameter otherwise than the compiler does (a
 * struct as opaque bytes, or by its members), but not as another scalar: where the
 * compiler's types are known, each parameter must take an argument of the signature's. */
static cujit_status agrees_with_compiler(const cj_signature *s, const cujit_function *fn) {
  const cj_ptypes *t = cj_function_ptypes(fn);
  size_t i;
  cj_buf b = {0};
  cujit_status st;
  if (!t || t->from != CJ_TYPES_COMPILER || t->n != s->n) return CUJIT_OK;
  for (i = 0; i < s->n; i++)
    if (!cj_takes(t->accept[i], s->params[i].tag)) break;
  if (i == s->n) return CUJIT_OK;
  cj_param_label(s, i, &b);
  st = cj_fail(CUJIT_ERROR_SIGNATURE,
               "signature \"%s\" does not match kernel '%s': its %s "
               "is not what the compiler says the kernel takes there, '%s'; give that "
               "parameter's own type (or bN:A for opaque bytes)",
               s->text, fn->name, b.data ? b.data : "parameter",
               t->p[i].m.spelling ? t->p[i].m.spelling : "?");
  cj_buf_free(&b);
  return st;
}

cujit_status cujit_function_set_signature(cujit_function *fn, const char *types) {
  cj_signature *s = NULL;
  cj_upper *u;
  cujit_status st;
  CJ_CHECK(fn && types, CUJIT_ERROR_INVALID_VALUE, "cujit_function_set_signature: %s is NULL",
           fn ? "types" : "fn");
  CJ_TRY(cj_sig_from_types(types, &s));
  if (cj_sig_has_layout(fn)) {
    if ((st = cj_sig_check(s, fn)) == CUJIT_OK) st = agrees_with_compiler(s, fn);
    if (st != CUJIT_OK) {
      cj_sig_free(s);
      return st;
    }
    s->checked = 1;
  }
  if (offer_sig_types(fn, s) != 0) {
    cj_sig_free(s);
    return cj_fail_oom("setting a kernel's signature");
  }
  pthread_mutex_lock(&sig_lock);
  u = upper_locked(fn);
  if (u) publish(u, s);
  pthread_mutex_unlock(&sig_lock);
  if (u) return CUJIT_OK;
  cj_sig_free(s);
  return cj_fail_oom("setting a kernel's signature");
}

const char *cujit_function_signature(cujit_function *fn) {
  cj_signature *s;
  if (!fn) {
    cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_signature: fn is NULL");
    return NULL;
  }
  return cj_sig_of_function(fn, &s) == CUJIT_OK ? s->text : NULL;
}

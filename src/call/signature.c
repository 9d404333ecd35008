/* signature.c - a function's signature: explicit or read from the source on first use,
 * checked once against the driver's parameter layout, kept until the function is freed. */
#include <pthread.h>
#include <string.h>

#include "call/signature.h"

/* Serialises parsing and publishing; readers load the signature without it. */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;

int cj_function_has_layout(const cujit_function *fn) {
  return fn->nparams == 0 ? fn->dev != NULL : fn->param_offsets && fn->param_sizes;
}

static void upper_free(cujit_function *fn) {
  cj_signature *s, *older;
  cj_bind_free_all(fn);
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

int cj_sig_fits(const cj_signature *s, const cj_layout *l) {
  size_t i;
  if (s->n != l->n) return 0;
  for (i = 0; i < s->n; i++)
    if (s->params[i].offset != l->offsets[i] || s->params[i].size != l->sizes[i]) return 0;
  return 1;
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
  cj_buf_printf(&b, ": the signature puts %u bytes at offset %u, but kernel '%s' takes %zu "
                "bytes at offset %zu; ", (unsigned)p->size, (unsigned)p->offset, fn->name,
                fn->param_sizes[i], fn->param_offsets[i]);
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
  if (s->n != fn->nparams)
    return cj_fail(CUJIT_ERROR_SIGNATURE,
                   "signature \"%s\" has %zu parameters, but kernel '%s' has %zu; give one "
                   "type per parameter", s->text, s->n, fn->name, fn->nparams);
  for (i = 0; i < s->n; i++)
    if (s->params[i].offset != fn->param_offsets[i] || s->params[i].size != fn->param_sizes[i])
      return mismatch(s, fn, i);
  return CUJIT_OK;
}

/* The kernel's identifier in the source: "ns::scale<float>" -> "scale"; a simple mangled
 * name ("_Z5scalePf", "_ZN2ns5scaleEPf") -> "scale". */
static size_t kernel_ident(const char *name, char *out, size_t cap) {
  const char *p = name, *start = name, *end;
  size_t n = 0;
  if (name[0] == '_' && name[1] == 'Z') {
    p = name + 2 + (name[2] == 'N');
    for (;;) {
      size_t len = 0;
      while (*p >= '0' && *p <= '9') len = len * 10 + (size_t)(*p++ - '0');
      if (len == 0 || strlen(p) < len) break;
      start = p;
      p += len;
      n = len;
      if (name[2] != 'N') break;
    }
    if (start != name) goto copy;
  }
  end = strchr(name, '<');
  if (!end) end = name + strlen(name);
  for (p = name; p + 1 < end; p++)
    if (p[0] == ':' && p[1] == ':') start = p + 2;
  n = (size_t)(end - start);
copy:
  if (n >= cap) n = cap - 1;
  memcpy(out, start, n);
  out[n] = '\0';
  return n;
}

static cujit_status parse_for(const cujit_function *fn, cj_signature **out) {
  char ident[256];
  cj_layout layout = {fn->nparams, fn->param_offsets, fn->param_sizes};
  int has = cj_function_has_layout(fn);
  cujit_status st;
  if (!fn->module || !fn->module->source)
    return cj_fail(CUJIT_ERROR_SIGNATURE, "kernel '%s' has no source to read its signature "
                   "from; give it one with cujit_function_set_signature()",
                   fn->name ? fn->name : "?");
  kernel_ident(fn->name, ident, sizeof ident);
  st = cj_sig_from_source(fn->module->source, fn->module->name, ident, has ? &layout : NULL,
                          out);
  if (st == CUJIT_OK && has) {
    st = cj_sig_check(*out, fn);
    if (st != CUJIT_OK) {
      cj_sig_free(*out);
      *out = NULL;
      return st;
    }
    (*out)->checked = 1;
  }
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
  if (!s->checked && cj_function_has_layout(fn)) {
    st = cj_sig_check(s, fn);
    if (st == CUJIT_OK) __atomic_store_n(&s->checked, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&sig_lock);
  return st;
}

cujit_status cj_function_sig(cujit_function *fn, cj_signature **out) {
  cj_signature *s = sig_of(fn);
  cj_upper *u;
  cujit_status st = CUJIT_OK;
  if (CJ_UNLIKELY(!s)) {
    pthread_mutex_lock(&sig_lock);
    if (!(u = upper_locked(fn))) {
      st = cj_fail_oom("reading a kernel's signature");
    } else if (!(s = u->sig)) {
      st = parse_for(fn, &s);
      if (st == CUJIT_OK) publish(u, s);
    }
    pthread_mutex_unlock(&sig_lock);
    if (st != CUJIT_OK) return st;
  }
  if (CJ_UNLIKELY(!__atomic_load_n(&s->checked, __ATOMIC_ACQUIRE)) &&
      cj_function_has_layout(fn)) {
    st = check_late(fn, s);
    if (st != CUJIT_OK) return st;
  }
  *out = s;
  return CUJIT_OK;
}

cujit_status cujit_function_set_signature(cujit_function *fn, const char *types) {
  cj_signature *s = NULL;
  cj_upper *u;
  cujit_status st;
  if (!fn || !types)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_set_signature: %s is NULL",
                   fn ? "types" : "fn");
  st = cj_sig_from_types(types, &s);
  if (st != CUJIT_OK) return st;
  if (cj_function_has_layout(fn)) {
    st = cj_sig_check(s, fn);
    if (st != CUJIT_OK) {
      cj_sig_free(s);
      return st;
    }
    s->checked = 1;
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
  return cj_function_sig(fn, &s) == CUJIT_OK ? s->text : NULL;
}

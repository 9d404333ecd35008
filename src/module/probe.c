/* probe.c - asking the compiler for the parameter types of extern "C" kernels, whose
 * symbols do not spell them (and whose PTX does not tell a pointer from a 64-bit integer).
 * The module's source is compiled again with its own options, through the caches, with a
 * function template appended:
 *     template <typename T> __global__ void __cujit_probe() {}
 * and for each extern "C" kernel k the name expression __cujit_probe<decltype(&k)>, whose
 * lowered name spells k's function type (mangle.c reads it). All the module's extern "C"
 * kernels are asked about in one compile; should that fail, the kernel wanted alone. */
#include <string.h>

#include "cache/cache.h"
#include "module/function.h"

static const char kProbeSource[] =
    "\ntemplate <typename T> __global__ void " CJ_PROBE_NAME "() {}\n";

/* What one kernel's probe gave: its lowered name, or why there is none. */
typedef struct answer {
  char *sym;
  char *lowered; /* NULL when the probe failed */
  cujit_status st;
  char *why;
} answer;

struct cj_probe {
  answer *v;
  size_t n, cap;
};

void cj_module_probe_free(cj_module *m) {
  size_t i;
  if (!m->probe) return;
  for (i = 0; i < m->probe->n; i++) {
    cj_free(m->probe->v[i].sym);
    cj_free(m->probe->v[i].lowered);
    cj_free(m->probe->v[i].why);
  }
  cj_free(m->probe->v);
  cj_free(m->probe);
  m->probe = NULL;
}

static const answer *find(const cj_module *m, const char *sym) {
  size_t i;
  for (i = 0; m->probe && i < m->probe->n; i++)
    if (strcmp(m->probe->v[i].sym, sym) == 0) return &m->probe->v[i];
  return NULL;
}

/* Keeps an answer (the strings copied); -1 when out of memory. */
static int keep(cj_module *m, const char *sym, const char *lowered, cujit_status st,
                const char *why) {
  answer *v, *a;
  if (!m->probe && !(m->probe = cj_calloc(1, sizeof *m->probe))) return -1;
  if (CJ_VEC_RESERVE(m->probe->v, m->probe->cap, m->probe->n + 1) != 0) return -1;
  v = m->probe->v;
  a = &v[m->probe->n];
  memset(a, 0, sizeof *a);
  a->st = st;
  if (!(a->sym = cj_strdup(sym)) || (lowered && !(a->lowered = cj_strdup(lowered))) ||
      (why && !(a->why = cj_strdup(why)))) {
    cj_free(a->sym);
    cj_free(a->lowered);
    return -1;
  }
  m->probe->n++;
  return 0;
}

/* The name expression asking about kernel `sym`. */
static char *expression_for(const char *sym) {
  cj_buf b = {0};
  cj_buf_printf(&b, CJ_PROBE_NAME "<decltype(&%s)>", sym);
  return cj_buf_take(&b);
}

/* The expressions asking about m's extern "C" kernels not asked about yet, in the PTX's
 * order (so that every module of the same source asks the same, which the caches then
 * answer), and about `sym` where it is not among them. *first gets the index of sym's. */
static cujit_status kernels_to_ask(const cj_module *m, const char *sym, char ***out, size_t *n,
                                   size_t *first) {
  cj_symtab syms;
  size_t i;
  cujit_status st = cj_symtab_build(m->image->ptx, &syms);
  char **v;
  *n = 0;
  *first = (size_t)-1;
  if (st != CUJIT_OK) return st;
  if (!(v = cj_calloc(syms.n_kernels + 1, sizeof *v))) goto oom;
  for (i = 0; i < syms.n_kernels; i++) {
    const char *k = syms.kernels[i];
    if (cj_mangled(k) || (find(m, k) && strcmp(k, sym) != 0)) continue;
    if (strcmp(k, sym) == 0) *first = *n;
    if (!(v[(*n)++] = expression_for(k))) goto oom;
  }
  if (*first == (size_t)-1) {
    *first = *n;
    if (!(v[(*n)++] = expression_for(sym))) goto oom;
  }
  cj_symtab_free(&syms);
  *out = v;
  return CUJIT_OK;
oom:
  cj_symtab_free(&syms);
  cj_strv_free(v, v ? *n : 0);
  *n = 0;
  return cj_fail_oom("asking the compiler for a kernel's parameter types");
}

/* Compiles the probe for the first n expressions and keeps each kernel's answer. */
static cujit_status compile_probe(cj_module *m, char **exprs, size_t n) {
  const cj_origin *o = &m->origin;
  cujit_options opts = o->opts;
  cj_request q;
  cj_image *im = NULL;
  cj_buf src = {0};
  size_t i, j;
  cujit_status st;
  cj_buf_append(&src, m->source, strlen(m->source));
  cj_buf_puts(&src, kProbeSource);
  if (src.oom) {
    cj_buf_free(&src);
    return cj_fail_oom("asking the compiler for a kernel's parameter types");
  }
  /* the module's own options and target, the probe's source and names */
  opts.arch = o->arch[0] ? o->arch : NULL;
  opts.name_expressions = NULL;
  st = cj_request_init(&q, src.data, m->name, &opts, o->first_include_dir);
  if (st == CUJIT_OK) {
    q.name_exprs = (const char *const *)exprs;
    q.n_name_exprs = n;
    st = cj_cache_compile(&q, &im);
  }
  cj_request_free(&q);
  cj_buf_free(&src);
  for (i = 0; st == CUJIT_OK && i < n; i++) {
    const char *sym = exprs[i] + strlen(CJ_PROBE_NAME "<decltype(&");
    const char *lowered = NULL;
    size_t len = strlen(sym) - 2; /* without ")>" */
    char *name = cj_memdup(sym, len);
    for (j = 0; j < im->n_names; j++)
      if (strcmp(im->name_exprs[j], exprs[i]) == 0 && im->lowered[j][0]) lowered = im->lowered[j];
    if (!name || keep(m, name, lowered, CUJIT_ERROR_SIGNATURE,
                      lowered ? NULL : "NVRTC gave no lowered name for the probe") != 0)
      st = cj_fail_oom("asking the compiler for a kernel's parameter types");
    cj_free(name);
  }
  cj_image_unref(im);
  return st;
}

/* A failed probe for `sym`, kept so that later calls do not compile it again. */
static cujit_status probe_failed(cj_module *m, const char *sym, cujit_status st) {
  cj_buf b = {0};
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return st;
  cj_buf_printf(&b,
                "its parameter types could not be asked of the compiler: the module's "
                "source with `template <typename T> __global__ void " CJ_PROBE_NAME "() {}` "
                "appended and the name expression \"" CJ_PROBE_NAME "<decltype(&%s)>\" did not "
                "compile (%s)",
                sym, cujit_last_error());
  if (b.oom || keep(m, sym, NULL, CUJIT_ERROR_SIGNATURE, b.data) != 0) {
    cj_buf_free(&b);
    return cj_fail_oom("asking the compiler for a kernel's parameter types");
  }
  cj_buf_free(&b);
  return CUJIT_ERROR_SIGNATURE;
}

/* Asks about sym (and the other extern "C" kernels not asked about yet). Probe lock held. */
static cujit_status ask(cj_module *m, const char *sym) {
  char **exprs = NULL;
  size_t n = 0, first;
  cujit_status st = CUJIT_OK;
  CJ_TRY(kernels_to_ask(m, sym, &exprs, &n, &first));
  st = compile_probe(m, exprs, n);
  if (st != CUJIT_OK && st != CUJIT_ERROR_OUT_OF_MEMORY && n > 1)
    st = compile_probe(m, exprs + first, 1); /* another kernel's may be what failed */
  if (st != CUJIT_OK) st = probe_failed(m, sym, st);
  cj_strv_free(exprs, n);
  return st;
}

cujit_status cj_module_probe(cj_module *m, const char *sym, char **lowered) {
  const answer *a;
  cujit_status st = CUJIT_OK;
  *lowered = NULL;
  CJ_CHECK(m->origin.kept && m->source, CUJIT_ERROR_SIGNATURE,
           "module '%s' was loaded from prebuilt code and keeps "
           "no source to ask the compiler about kernel '%s'",
           m->name, sym);
  pthread_mutex_lock(&m->probe_lock);
  if (!(a = find(m, sym))) {
    st = ask(m, sym);
    a = find(m, sym);
  }
  if (a && a->lowered) /* answered, even if keeping another answer ran out of memory */
    st = (*lowered = cj_strdup(a->lowered)) != NULL
             ? CUJIT_OK
             : cj_fail_oom("asking the compiler for a kernel's parameter types");
  else if (a)
    st = cj_fail(a->st, "%s", a->why ? a->why : "the probe failed");
  else if (st == CUJIT_OK)
    st = cj_fail(CUJIT_ERROR_SIGNATURE, "the probe gave no answer for kernel '%s'", sym);
  pthread_mutex_unlock(&m->probe_lock);
  return st;
}

/* symbols.c - kernel and variable symbols from PTX, and Itanium name matching. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compile/symbols.h"

/* ---- PTX scanning ---- */

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

static const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r') p++;
  return p;
}

/* The line's leading directives, e.g. ".visible .entry": 1 when `word` is one of them.
 * *after gets where the first non-directive token starts. */
static int has_directive(const char *line, const char *word, const char **after) {
  const char *p = skip_space(line);
  size_t wl = strlen(word);
  int found = 0;
  while (*p == '.') {
    const char *q = p + 1;
    while (ident_char(*q)) q++;
    if ((size_t)(q - p) == wl && memcmp(p, word, wl) == 0) found = 1;
    p = skip_space(q);
    if (found && strcmp(word, ".entry") == 0) break;          /* the name follows .entry */
    while (isdigit((unsigned char)*p)) p = skip_space(p + 1); /* ".align 4" */
  }
  *after = p;
  return found;
}

static int push_name(char ***v, size_t *n, size_t *cap, const char *p, size_t len) {
  if (CJ_VEC_RESERVE(*v, *cap, *n + 1) != 0 || !((*v)[*n] = cj_memdup(p, len))) return -1;
  (*n)++;
  return 0;
}

/* Adds the symbol a module-scope line declares, if it declares a kernel or a variable. */
static int scan_line(const char *line, cj_symtab *t) {
  const char *p, *q;
  if (has_directive(line, ".entry", &p)) {
    for (q = p; ident_char(*q); q++) {
    }
    return q > p ? push_name(&t->kernels, &t->n_kernels, &t->cap_kernels, p, (size_t)(q - p)) : 0;
  }
  if (has_directive(line, ".extern", &p)) return 0; /* declared here, defined elsewhere */
  if (!has_directive(line, ".global", &p) && !has_directive(line, ".const", &p)) return 0;
  for (q = p; ident_char(*q); q++) {
  }
  return q > p ? push_name(&t->globals, &t->n_globals, &t->cap_globals, p, (size_t)(q - p)) : 0;
}

cujit_status cj_symtab_build(const char *ptx, cj_symtab *t) {
  const char *line = ptx;
  memset(t, 0, sizeof *t);
  while (line && *line) {
    const char *s = skip_space(line);
    if (*s == '.' && scan_line(s, t) != 0) {
      cj_symtab_free(t);
      return cj_fail_oom("listing the module's kernels");
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return CUJIT_OK;
}

cujit_status cj_symtab_add(cj_symtab *t, int kernel, const char *name, size_t len) {
  int bad = kernel ? push_name(&t->kernels, &t->n_kernels, &t->cap_kernels, name, len)
                   : push_name(&t->globals, &t->n_globals, &t->cap_globals, name, len);
  return bad ? cj_fail_oom("listing the module's kernels and variables") : CUJIT_OK;
}

void cj_symtab_free(cj_symtab *t) {
  if (!t->borrowed) {
    cj_strv_free(t->kernels, t->n_kernels);
    cj_strv_free(t->globals, t->n_globals);
  }
  memset(t, 0, sizeof *t);
}

/* ---- Itanium names ---- */

enum { MAX_PARTS = 16 };

typedef struct parts {
  const char *at[MAX_PARTS];
  size_t len[MAX_PARTS];
  size_t n;
  int templated; /* the last part has template arguments */
} parts;

/* Reads <length><identifier>; 0 on success. */
static int read_source_name(const char **pp, const char **at, size_t *len) {
  const char *p = *pp;
  size_t n = 0;
  while (isdigit((unsigned char)*p)) {
    n = n * 10 + (size_t)(*p++ - '0');
    if (n > 4096) return -1;
  }
  if (n == 0 || strnlen(p, n) < n) return -1;
  *at = p;
  *len = n;
  *pp = p + n;
  return 0;
}

/* Skips a template argument list "I...E", nested lists and literals included. */
static int skip_template_args(const char **pp) {
  const char *p = *pp;
  int depth = 0;
  do {
    const char *at;
    size_t len;
    if (!*p) return -1;
    if (isdigit((unsigned char)*p)) {
      if (read_source_name(&p, &at, &len) != 0) return -1;
      continue;
    }
    if (*p == 'L' && depth > 0) { /* a literal: L <type> <value> E */
      p++;
      if (isdigit((unsigned char)*p) && read_source_name(&p, &at, &len) != 0) return -1;
      while (*p && *p != 'E') p++;
      if (!*p) return -1;
      p++;
      continue;
    }
    if (strchr("INXJ", *p))
      depth++;
    else if (*p == 'E')
      depth--;
    p++;
  } while (depth > 0);
  *pp = p;
  return 0;
}

static int add_part(parts *r, const char *at, size_t len) {
  if (r->n == MAX_PARTS) return -1;
  r->at[r->n] = at;
  r->len[r->n++] = len;
  r->templated = 0;
  return 0;
}

static int nested_name(const char *p, parts *r) {
  while (*p && strchr("rVKRO", *p)) p++; /* cv- and ref-qualifiers of member functions */
  for (;;) {
    const char *at;
    size_t len;
    if (isdigit((unsigned char)*p)) {
      if (read_source_name(&p, &at, &len) != 0 || add_part(r, at, len) != 0) return -1;
    } else if (*p == 'I') {
      if (r->n == 0 || skip_template_args(&p) != 0) return -1;
      r->templated = 1;
    } else if (p[0] == 'S' && p[1] == 't') {
      if (add_part(r, "std", 3) != 0) return -1;
      p += 2;
    } else if (*p == 'E') {
      return r->n > 0 ? 0 : -1;
    } else {
      return -1; /* operators, constructors, substitutions: not kernel names */
    }
  }
}

/* Splits a mangled function or variable name into its qualified parts; -1 when `sym` is
 * not a mangled name this reader understands. */
static int mangled_parts(const char *sym, parts *r) {
  const char *p = sym, *at;
  size_t len;
  memset(r, 0, sizeof *r);
  if (p[0] != '_' || p[1] != 'Z') return -1;
  p += 2;
  if (*p == 'L') p++; /* internal linkage */
  if (*p == 'N') return nested_name(p + 1, r);
  if (read_source_name(&p, &at, &len) != 0 || add_part(r, at, len) != 0) return -1;
  if (*p == 'I') {
    if (skip_template_args(&p) != 0) return -1;
    r->templated = 1;
  }
  return 0;
}

int cj_symbol_matches(const char *sym, const char *name) {
  parts r;
  const char *end;
  size_t i;
  if (strcmp(sym, name) == 0) return 1;
  if (strpbrk(name, "<>() ,") || mangled_parts(sym, &r) != 0) return 0;
  if (name[0] == ':' && name[1] == ':') name += 2;
  /* compare name's "::"-separated parts with the symbol's last parts, right to left */
  end = name + strlen(name);
  for (i = r.n; i-- > 0;) {
    const char *start = end;
    while (start > name && !(start - name >= 2 && start[-1] == ':' && start[-2] == ':')) start--;
    if ((size_t)(end - start) != r.len[i] || memcmp(start, r.at[i], r.len[i]) != 0) return 0;
    if (start == name) return 1;
    end = start - 2;
  }
  return 0; /* name has more parts than the symbol */
}

size_t cj_symbol_find(char *const *syms, size_t n, const char *name, size_t *found, size_t cap) {
  size_t i, count = 0;
  for (i = 0; i < n; i++) {
    if (strcmp(syms[i], name) == 0) {
      if (cap) found[0] = i;
      return 1;
    }
  }
  for (i = 0; i < n; i++) {
    if (!cj_symbol_matches(syms[i], name)) continue;
    if (count < cap) found[count] = i;
    count++;
  }
  return count;
}

const char *cj_symbol_readable(const char *sym, char *buf, size_t size) {
  parts r;
  cj_buf b = {0};
  size_t i;
  if (!size) return buf;
  if (mangled_parts(sym, &r) != 0) {
    snprintf(buf, size, "%s", sym);
    return buf;
  }
  for (i = 0; i < r.n; i++) {
    if (i) cj_buf_puts(&b, "::");
    cj_buf_append(&b, r.at[i], r.len[i]);
  }
  if (r.templated) cj_buf_puts(&b, "<...>");
  snprintf(buf, size, "%s", b.data && !b.oom ? b.data : sym);
  cj_buf_free(&b);
  return buf;
}

/* Without snprintf: a lookup is on a warm start's path (see cj_join). */
const char *cj_symbol_unqualified(const char *sym, char *buf, size_t size) {
  parts r;
  size_t n;
  if (!size) return buf;
  if (mangled_parts(sym, &r) != 0 || r.n == 0) {
    cj_join(buf, size, sym, NULL);
    return buf;
  }
  n = r.len[r.n - 1] < size - 1 ? r.len[r.n - 1] : size - 1;
  memcpy(buf, r.at[r.n - 1], n);
  buf[n] = '\0';
  return buf;
}

/* ---- parameter layout ---- */

/* Size of a PTX fundamental type (".u32" -> 4), 0 if `p` is not one. */
static size_t type_size(const char *p, size_t len) {
  static const struct {
    const char *name;
    size_t size;
  } types[] = {{".u8", 1},  {".s8", 1},  {".b8", 1},  {".u16", 2},  {".s16", 2}, {".b16", 2},
               {".f16", 2}, {".u32", 4}, {".s32", 4}, {".b32", 4},  {".f32", 4}, {".u64", 8},
               {".s64", 8}, {".b64", 8}, {".f64", 8}, {".b128", 16}};
  size_t i;
  for (i = 0; i < CJ_COUNT(types); i++)
    if (strlen(types[i].name) == len && memcmp(types[i].name, p, len) == 0) return types[i].size;
  return 0;
}

/* Reads one ".param [.align A] .type [attributes] name[N]" declaration ending at `end`. */
static int read_param(const char *p, const char *end, cj_ptx_param *out) {
  size_t elem = 0, count = 1, explicit_align = 0;
  int is_array = 0, seen_param = 0;
  while (p < end) {
    const char *q;
    while (p < end && isspace((unsigned char)*p)) p++;
    if (p >= end) break;
    q = p + 1;
    while (q < end && (ident_char(*q) || *q == '.')) q++;
    if (*p == '.' && (size_t)(q - p) == 6 && memcmp(p, ".param", 6) == 0) {
      seen_param = 1;
    } else if (*p == '.' && (size_t)(q - p) == 6 && memcmp(p, ".align", 6) == 0) {
      p = skip_space(q);
      explicit_align = 0;
      while (p < end && isdigit((unsigned char)*p) && explicit_align < 65536)
        explicit_align = explicit_align * 10 + (size_t)(*p++ - '0');
      continue;
    } else if (*p == '.' && !elem) {
      elem = type_size(p, (size_t)(q - p));
    } else if (*p == '[') {
      count = 0;
      for (q = p + 1; q < end && isdigit((unsigned char)*q) && count < (1u << 24); q++)
        count = count * 10 + (size_t)(*q - '0');
      is_array = 1;
      q = q < end ? q + 1 : q;
    }
    p = q;
  }
  if (!seen_param || !elem || !count) return -1;
  out->size = elem * count;
  out->align = is_array && explicit_align ? explicit_align : elem;
  out->array = is_array;
  return 0;
}

/* Finds "<.entry> sym(" and returns the text after "(", or NULL. */
static const char *find_entry(const char *ptx, const char *sym) {
  size_t len = strlen(sym);
  const char *p = ptx;
  while ((p = strstr(p, sym)) != NULL) {
    const char *before = p, *after = skip_space(p + len);
    while (before > ptx && (before[-1] == ' ' || before[-1] == '\t')) before--;
    if (*after == '(' && before - ptx >= 6 && memcmp(before - 6, ".entry", 6) == 0 &&
        !ident_char(p[len]))
      return after + 1;
    p += len;
  }
  return NULL;
}

/* The parameters declared from p (just after an entry's "(") to the list's ")": 0 with
 * *n and *out (NULL when there are none), 1 when the list cannot be read (*n then says
 * which parameter), -1 when out of memory. */
static int params_at(const char *p, size_t *n, cj_ptx_param **out) {
  const char *close = strchr(p, ')'), *q;
  size_t count = 0, i, end = 0;
  *n = 0;
  *out = NULL;
  if (!close) return 1;
  for (q = p; q + 6 <= close && memcmp(q, ".param", 6) != 0; q++) {
  }
  if (q + 6 > close) return 0; /* no parameters */
  for (count = 1, q = p; q < close; q++) count += *q == ',';
  if (!(*out = cj_calloc(count, sizeof **out))) return -1;
  for (i = 0; i < count; i++) {
    const char *comma = memchr(p, ',', (size_t)(close - p));
    const char *stop = comma ? comma : close;
    cj_ptx_param *e = &(*out)[i];
    if (read_param(p, stop, e) != 0) {
      cj_free(*out);
      *out = NULL;
      *n = i;
      return 1;
    }
    end = (end + e->align - 1) / e->align * e->align;
    e->offset = end;
    end += e->size;
    p = stop + 1;
  }
  *n = count;
  return 0;
}

cujit_status cj_ptx_param_list(const char *ptx, const char *sym, size_t *n, cj_ptx_param **out) {
  const char *p = find_entry(ptx, sym);
  int rc;
  *n = 0;
  *out = NULL;
  if (!p || !strchr(p, ')'))
    return cj_fail(CUJIT_ERROR_NOT_FOUND, "the PTX has no entry '%s' with a parameter list", sym);
  rc = params_at(p, n, out);
  if (rc < 0) return cj_fail_oom("reading a kernel's parameters");
  if (rc > 0) {
    size_t bad = *n;
    *n = 0;
    return cj_fail(CUJIT_ERROR_NOT_FOUND, "cannot read parameter %zu of '%s' in the PTX", bad, sym);
  }
  return CUJIT_OK;
}

cujit_status cj_ptx_params(const char *ptx, const char *sym, size_t *n, size_t **offsets,
                           size_t **sizes) {
  cj_ptx_param *list;
  size_t i;
  cujit_status st = cj_ptx_param_list(ptx, sym, n, &list);
  *offsets = *sizes = NULL;
  if (st != CUJIT_OK || *n == 0) return st;
  *offsets = cj_malloc(*n * sizeof **offsets);
  *sizes = cj_malloc(*n * sizeof **sizes);
  if (!*offsets || !*sizes) {
    cj_free(*offsets);
    cj_free(*sizes);
    cj_free(list);
    *offsets = *sizes = NULL;
    *n = 0;
    return cj_fail_oom("reading a kernel's parameters");
  }
  for (i = 0; i < *n; i++) {
    (*offsets)[i] = list[i].offset;
    (*sizes)[i] = list[i].size;
  }
  cj_free(list);
  return CUJIT_OK;
}

/* ---- the index ---- */

cj_ptx_index *cj_ptx_index_new(size_t n_kernels, size_t n_globals, size_t n_params, size_t chars) {
  const size_t limit = (size_t)1 << 40; /* no PTX holds this much: counts past it are bad */
  cj_ptx_index *x;
  if (n_kernels > limit / sizeof(cj_ptx_kernel) || n_globals > limit / sizeof(char *) ||
      n_params > limit / sizeof(cj_ptx_param) || chars > limit)
    return NULL;
  x = cj_calloc(1, sizeof *x + n_kernels * (sizeof(cj_ptx_kernel) + sizeof(char *)) +
                       n_params * sizeof(cj_ptx_param) + n_globals * sizeof(char *) + chars);
  if (!x) return NULL;
  x->n_kernels = n_kernels;
  x->n_globals = n_globals;
  x->kernels = (cj_ptx_kernel *)(void *)(x + 1);
  x->next_param = (cj_ptx_param *)(void *)(x->kernels + n_kernels);
  x->end_param = x->next_param + n_params;
  x->kernel_names = (char **)(void *)x->end_param;
  x->globals = x->kernel_names + n_kernels;
  x->next_char = (char *)(x->globals + n_globals);
  x->end_char = x->next_char + chars;
  return x;
}

char *cj_ptx_index_put_name(cj_ptx_index *x, const char *name, size_t len) {
  char *at = x->next_char;
  if (len >= (size_t)(x->end_char - at)) return NULL;
  memcpy(at, name, len);
  at[len] = '\0';
  x->next_char += len + 1;
  return at;
}

cj_ptx_param *cj_ptx_index_put_params(cj_ptx_index *x, size_t n) {
  cj_ptx_param *at = x->next_param;
  if (n > (size_t)(x->end_param - at)) return NULL;
  x->next_param += n;
  return at;
}

/* What one pass over a PTX found: names as views into it, each kernel's parameters. */
typedef struct found {
  const char *at;
  size_t len;
  cj_ptx_param *params; /* kernels only: owned until packed */
  size_t nparams;
  int known;
} found;

typedef struct scan {
  found *kernels, *globals;
  size_t n_kernels, cap_kernels, n_globals, cap_globals;
  size_t n_params, chars;
} scan;

static int add_found(found **v, size_t *n, size_t *cap, const char *at, size_t len) {
  if (CJ_VEC_RESERVE(*v, *cap, *n + 1) != 0) return -1;
  memset(&(*v)[*n], 0, sizeof **v);
  (*v)[*n].at = at;
  (*v)[*n].len = len;
  (*n)++;
  return 0;
}

/* As scan_line, with each kernel's parameters read where it is declared: 0, or -1 when
 * out of memory. */
static int index_line(const char *line, scan *sc) {
  const char *p, *q;
  found *k;
  if (has_directive(line, ".entry", &p)) {
    for (q = p; ident_char(*q); q++) {
    }
    if (q == p) return 0;
    if (add_found(&sc->kernels, &sc->n_kernels, &sc->cap_kernels, p, (size_t)(q - p)) != 0)
      return -1;
    sc->chars += (size_t)(q - p) + 1;
    k = &sc->kernels[sc->n_kernels - 1];
    q = skip_space(q);
    if (*q != '(') return 0; /* declared without a parameter list: unknown */
    switch (params_at(q + 1, &k->nparams, &k->params)) {
      case 0: k->known = 1; break;
      case 1: k->nparams = 0; break;
      default: return -1;
    }
    sc->n_params += k->nparams;
    return 0;
  }
  if (has_directive(line, ".extern", &p)) return 0;
  if (!has_directive(line, ".global", &p) && !has_directive(line, ".const", &p)) return 0;
  for (q = p; ident_char(*q); q++) {
  }
  if (q == p) return 0;
  sc->chars += (size_t)(q - p) + 1;
  return add_found(&sc->globals, &sc->n_globals, &sc->cap_globals, p, (size_t)(q - p));
}

static cj_ptx_index *pack(const scan *sc) {
  cj_ptx_index *x = cj_ptx_index_new(sc->n_kernels, sc->n_globals, sc->n_params, sc->chars);
  size_t i;
  if (!x) return NULL;
  for (i = 0; i < sc->n_kernels; i++) {
    const found *f = &sc->kernels[i];
    cj_ptx_kernel *k = &x->kernels[i];
    x->kernel_names[i] = cj_ptx_index_put_name(x, f->at, f->len);
    k->name = x->kernel_names[i];
    k->nparams = f->nparams;
    k->params = cj_ptx_index_put_params(x, f->nparams);
    k->params_known = f->known;
    if (f->nparams) memcpy(k->params, f->params, f->nparams * sizeof *f->params);
  }
  for (i = 0; i < sc->n_globals; i++)
    x->globals[i] = cj_ptx_index_put_name(x, sc->globals[i].at, sc->globals[i].len);
  return x;
}

cj_ptx_index *cj_ptx_index_build(const char *ptx) {
  const char *line = ptx;
  cj_ptx_index *x = NULL;
  scan sc;
  size_t i;
  int bad = 0;
  memset(&sc, 0, sizeof sc);
  while (!bad && line && *line) {
    const char *s = skip_space(line);
    if (*s == '.') bad = index_line(s, &sc) != 0;
    line = strchr(line, '\n');
    if (line) line++;
  }
  if (!bad) x = pack(&sc);
  for (i = 0; i < sc.n_kernels; i++) cj_free(sc.kernels[i].params);
  cj_free(sc.kernels);
  cj_free(sc.globals);
  return x;
}

const cj_ptx_kernel *cj_ptx_index_find(const cj_ptx_index *x, const char *sym) {
  size_t i;
  for (i = 0; i < x->n_kernels; i++)
    if (strcmp(x->kernels[i].name, sym) == 0) return &x->kernels[i];
  return NULL;
}

int cj_ptx_kernel_scalars_only(const cj_ptx_kernel *k) {
  size_t i;
  for (i = 0; i < k->nparams; i++)
    if (k->params[i].array) return 0;
  return 1;
}

void cj_symtab_borrow(cj_symtab *t, const cj_ptx_index *x) {
  memset(t, 0, sizeof *t);
  t->kernels = x->kernel_names;
  t->n_kernels = t->cap_kernels = x->n_kernels;
  t->globals = x->globals;
  t->n_globals = t->cap_globals = x->n_globals;
  t->borrowed = 1;
}

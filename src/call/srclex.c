/* srclex.c - tokens of a CUDA C source for the declaration reader (see srclex.h). */
#include <string.h>

#include "call/srclex.h"

#define CJ_MACRO_DEPTH 32

struct cj_macro {
  const char *name;
  uint32_t len;
  uint32_t line;  /* of its (first) definition */
  uint32_t line2; /* of a second, different definition (then it is ambiguous) */
  uint32_t body, nbody;
  uint8_t func;    /* function-like: never expanded */
  uint8_t ambig;   /* defined twice without #undef between (#if branches): not expanded */
  uint8_t undef;   /* #undef'd since */
};

/* Reading position. */
typedef struct cursor {
  const char *p;
  uint32_t line;
  int bol; /* only blanks since the last newline */
} cursor;

int cj_tok_is(const cj_tok *t, const char *s) {
  return strlen(s) == t->len && memcmp(t->p, s, t->len) == 0;
}

static int is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* Skips blanks and comments. In a directive a newline ends it (returns 1). */
static int skip_space(cursor *c, int directive) {
  for (;;) {
    const char *p = c->p;
    if (p[0] == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))) {
      c->p += p[1] == '\n' ? 2 : 3;
      c->line++;
    } else if (p[0] == '\n') {
      if (directive) return 1;
      c->p++;
      c->line++;
      c->bol = 1;
    } else if (p[0] == ' ' || p[0] == '\t' || p[0] == '\r' || p[0] == '\f' || p[0] == '\v') {
      c->p++;
    } else if (p[0] == '/' && p[1] == '/') {
      while (*c->p && *c->p != '\n') c->p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      const char *stop = e ? e + 2 : p + strlen(p);
      for (; c->p < stop; c->p++)
        if (*c->p == '\n') c->line++;
    } else {
      return 0;
    }
  }
}

/* A quoted literal starting at c->p (the opening quote); stops at the newline of an
 * unterminated one. */
static void skip_quoted(cursor *c) {
  char q = *c->p++;
  while (*c->p && *c->p != q && *c->p != '\n') {
    if (*c->p == '\\' && c->p[1]) c->p++;
    c->p++;
  }
  if (*c->p == q) c->p++;
}

/* R"delim( ... )delim" starting at the quote. */
static void skip_raw(cursor *c) {
  const char *open = c->p + 1, *paren = strchr(open, '(');
  char close[20];
  const char *e;
  size_t dl = paren ? (size_t)(paren - open) : 0;
  if (!paren || dl > 16) {
    skip_quoted(c);
    return;
  }
  close[0] = ')';
  memcpy(close + 1, open, dl);
  close[dl + 1] = '"';
  close[dl + 2] = '\0';
  e = strstr(paren, close);
  e = e ? e + dl + 2 : paren + strlen(paren);
  for (; c->p < e; c->p++)
    if (*c->p == '\n') c->line++;
}

/* Reads one token; 0 at the end of the text (or of the directive), 2 for the first token
 * of a line, else 1. */
static int next_token(cursor *c, cj_tok *t, int directive) {
  const char *p;
  int first;
  if (skip_space(c, directive) || !*c->p) return 0;
  first = c->bol;
  p = c->p;
  t->p = p;
  t->line = c->line;
  if (is_ident_start(*p)) {
    while (is_ident_char(*c->p)) c->p++;
    t->kind = CJ_TOK_IDENT;
    if (*c->p == '"' || *c->p == '\'') { /* encoding prefixes: L"", u8"", R"()" */
      size_t n = (size_t)(c->p - p);
      int raw = p[n - 1] == 'R' && *c->p == '"';
      if (n <= 3 && strspn(p, "LuU8R") >= n) {
        if (raw) skip_raw(c);
        else skip_quoted(c);
        t->kind = CJ_TOK_STRING;
      }
    }
  } else if ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')) {
    while (is_ident_char(*c->p) || *c->p == '.' || *c->p == '\'' ||
           ((*c->p == '+' || *c->p == '-') && strchr("eEpP", c->p[-1])))
      c->p++;
    t->kind = CJ_TOK_NUMBER;
  } else if (*p == '"' || *p == '\'') {
    skip_quoted(c);
    t->kind = CJ_TOK_STRING;
  } else {
    t->kind = CJ_TOK_PUNCT;
    if ((p[0] == ':' && p[1] == ':') || (p[0] == '&' && p[1] == '&') ||
        (p[0] == '-' && p[1] == '>'))
      c->p += 2;
    else if (p[0] == '.' && p[1] == '.' && p[2] == '.')
      c->p += 3;
    else
      c->p++;
  }
  t->len = (uint32_t)(c->p - p);
  c->bol = 0;
  return first ? 2 : 1;
}

/* ---- growable arrays ---- */

int cj_grow(void **v, size_t *cap, size_t need, size_t elem) {
  size_t nc;
  void *nv;
  if (need <= *cap) return 0;
  nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  nv = cj_realloc(*v, nc * elem);
  if (!nv) return -1;
  *v = nv;
  *cap = nc;
  return 0;
}

static void push_tok(cj_lex *lx, const cj_tok *t) {
  if (lx->oom || cj_grow((void **)&lx->toks, &lx->cap, lx->n + 1, sizeof *lx->toks)) {
    lx->oom = 1;
    return;
  }
  lx->toks[lx->n++] = *t;
}

/* ---- macro table ---- */

static uint32_t hash_name(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  while (n--) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static cj_macro *find_macro(const cj_lex *lx, const char *name, size_t len) {
  size_t i, mask = lx->nslots - 1;
  if (!lx->nslots) return NULL;
  for (i = hash_name(name, len) & mask; lx->slots[i]; i = (i + 1) & mask) {
    cj_macro *m = &lx->macros[lx->slots[i] - 1];
    if (m->len == len && memcmp(m->name, name, len) == 0) return m;
  }
  return NULL;
}

static void insert_slot(cj_lex *lx, size_t i) {
  size_t mask = lx->nslots - 1, j = hash_name(lx->macros[i].name, lx->macros[i].len) & mask;
  while (lx->slots[j]) j = (j + 1) & mask;
  lx->slots[j] = (uint32_t)(i + 1);
}

static void rehash(cj_lex *lx) {
  size_t i, n = lx->nslots ? lx->nslots * 2 : 64;
  uint32_t *s = cj_calloc(n, sizeof *s);
  if (!s) {
    lx->oom = 1;
    return;
  }
  cj_free(lx->slots);
  lx->slots = s;
  lx->nslots = n;
  for (i = 0; i < lx->nmacros; i++) insert_slot(lx, i);
}

static cj_macro *add_macro(cj_lex *lx, const cj_tok *name) {
  cj_macro *m;
  if (lx->oom || cj_grow((void **)&lx->macros, &lx->capmacros, lx->nmacros + 1, sizeof *m)) {
    lx->oom = 1;
    return NULL;
  }
  m = &lx->macros[lx->nmacros++];
  memset(m, 0, sizeof *m);
  m->name = name->p;
  m->len = name->len;
  m->line = name->line;
  if (lx->nmacros * 2 > lx->nslots)
    rehash(lx);
  else
    insert_slot(lx, lx->nmacros - 1);
  return lx->oom ? NULL : m;
}

static int same_body(const cj_lex *lx, const cj_macro *m, const cj_tok *b, size_t n) {
  size_t i;
  if (m->nbody != n) return 0;
  for (i = 0; i < n; i++) {
    const cj_tok *a = &lx->body[m->body + i];
    if (a->len != b[i].len || memcmp(a->p, b[i].p, a->len) != 0) return 0;
  }
  return 1;
}

/* #define NAME body / #define NAME(args) body. Tokens of the body are read from c. */
static void define_macro(cj_lex *lx, cursor *c) {
  cj_tok name, t;
  cj_macro *m;
  size_t start = lx->nbody;
  int func;
  if (!next_token(c, &name, 1) || name.kind != CJ_TOK_IDENT) return;
  func = *c->p == '(';
  while (next_token(c, &t, 1)) {
    if (cj_grow((void **)&lx->body, &lx->capbody, lx->nbody + 1, sizeof t)) {
      lx->oom = 1;
      return;
    }
    lx->body[lx->nbody++] = t;
  }
  m = find_macro(lx, name.p, name.len);
  if (m && !m->undef) {
    const cj_tok *body = lx->body ? lx->body + start : NULL; /* no tokens yet: NULL */
    if (!same_body(lx, m, body, lx->nbody - start) || m->func != func) {
      m->ambig = 1;
      if (!m->line2) m->line2 = name.line;
    }
    return;
  }
  if (!m) m = add_macro(lx, &name);
  if (!m) return;
  m->undef = 0;
  m->func = (uint8_t)func;
  m->body = (uint32_t)start;
  m->nbody = (uint32_t)(lx->nbody - start);
}

/* Skips the rest of a directive line. */
static void skip_directive(cursor *c) {
  cj_tok t;
  while (next_token(c, &t, 1)) {}
}

/* Drops the lines of an `#if 0` block up to its #else, #elif or #endif. */
static void skip_if0(cursor *c) {
  int nest = 0;
  cj_tok t;
  for (;;) {
    int r = next_token(c, &t, 0);
    if (!r) return;
    if (!(r == 2 && cj_tok_is(&t, "#"))) continue;
    if (!next_token(c, &t, 1)) continue;
    if (cj_tok_is(&t, "if") || cj_tok_is(&t, "ifdef") || cj_tok_is(&t, "ifndef")) {
      nest++;
    } else if (cj_tok_is(&t, "endif") || cj_tok_is(&t, "else") || cj_tok_is(&t, "elif")) {
      if (nest == 0) {
        skip_directive(c);
        return;
      }
      if (cj_tok_is(&t, "endif")) nest--;
    }
    skip_directive(c);
  }
}

static void directive(cj_lex *lx, cursor *c) {
  cj_tok d, t;
  if (!next_token(c, &d, 1)) return;
  if (cj_tok_is(&d, "define")) {
    define_macro(lx, c);
  } else if (cj_tok_is(&d, "undef")) {
    cj_macro *m = next_token(c, &t, 1) ? find_macro(lx, t.p, t.len) : NULL;
    if (m) m->undef = 1;
  } else if (cj_tok_is(&d, "if")) {
    cursor peek = *c;
    cj_tok extra;
    if (next_token(&peek, &t, 1) && (cj_tok_is(&t, "0") || cj_tok_is(&t, "false")) &&
        !next_token(&peek, &extra, 1)) {
      skip_directive(c);
      skip_if0(c);
      return;
    }
  }
  skip_directive(c);
}

/* Emits an identifier, expanding it when it names an object-like macro. */
static void emit_ident(cj_lex *lx, const cj_tok *t, uint32_t line, const cj_macro **active,
                       int depth) {
  cj_macro *m = find_macro(lx, t->p, t->len);
  cj_tok out = *t;
  uint32_t i;
  int d;
  out.line = line;
  for (d = 0; m && d < depth; d++)
    if (active[d] == m) m = NULL; /* a macro does not expand inside itself */
  if (!m || m->undef || m->func || depth >= CJ_MACRO_DEPTH) {
    push_tok(lx, &out);
    return;
  }
  if (m->ambig) {
    out.kind = CJ_TOK_AMBIG;
    push_tok(lx, &out);
    return;
  }
  active[depth] = m;
  for (i = 0; i < m->nbody; i++) {
    cj_tok b = lx->body[m->body + i];
    if (b.kind == CJ_TOK_IDENT) {
      emit_ident(lx, &b, line, active, depth + 1);
    } else {
      b.line = line;
      push_tok(lx, &b);
    }
  }
}

cujit_status cj_lex_source(const char *src, cj_lex *lx) {
  cursor c = {src, 1, 1};
  cj_tok t;
  const cj_macro *active[CJ_MACRO_DEPTH];
  memset(lx, 0, sizeof *lx);
  for (;;) {
    int r = next_token(&c, &t, 0);
    if (!r || lx->oom) break;
    if (r == 2 && cj_tok_is(&t, "#"))
      directive(lx, &c);
    else if (t.kind == CJ_TOK_IDENT)
      emit_ident(lx, &t, t.line, active, 0);
    else
      push_tok(lx, &t);
  }
  if (lx->oom) {
    cj_lex_free(lx);
    return cj_fail_oom("reading the kernel's declaration");
  }
  return CUJIT_OK;
}

void cj_lex_free(cj_lex *lx) {
  cj_free(lx->toks);
  cj_free(lx->body);
  cj_free(lx->macros);
  cj_free(lx->slots);
  memset(lx, 0, sizeof *lx);
}

int cj_lex_macro_info(const cj_lex *lx, const char *name, size_t len, cj_buf *b) {
  const cj_macro *m = find_macro(lx, name, len);
  if (!m || !(m->func || m->ambig)) return 0;
  if (b) cj_buf_printf(b, "%u", (unsigned)m->line);
  if (b && m->ambig) cj_buf_printf(b, ", %u", (unsigned)m->line2);
  return m->ambig ? 2 : 1;
}

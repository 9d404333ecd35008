/* declparse.c - reads a kernel's parameter types from its declaration in the source.
 *
 * The source is lexed with object-like macros expanded (srclex.c); then the named types
 * it defines (structs, unions, enums, typedefs, using-aliases) are indexed, and every
 * `__global__` declaration of the wanted kernel is read. A named type is only resolved
 * when a parameter takes it by value: a pointer to a type defined in a header is fine. */
#include <stdlib.h>
#include <string.h>

#include "call/signature.h"
#include "call/srclex.h"

#define CJ_RESOLVE_DEPTH 24
#define NONE ((size_t)-1)

typedef enum rec_kind { R_STRUCT, R_UNION, R_ENUM, R_TYPEDEF, R_USING } rec_kind;

/* A named type defined in the source. */
typedef struct rec {
  size_t name;       /* token index of its name */
  rec_kind kind;
  int templated;     /* a class template */
  int based;         /* a class with base classes */
  size_t a, b;       /* struct/union: body tokens; enum: underlying type tokens (a == b: int);
                        typedef: the statement after `typedef`; using: the type after `=` */
  uint32_t align;    /* struct/union: alignas, __align__ or aligned() */
} rec;

typedef struct dp {
  const char *module, *kernel;
  const cj_lex *lx;
  const cj_tok *t;
  size_t n;
  rec *recs;
  size_t nrecs, caprecs;
  int depth;    /* type resolution nesting */
  uint32_t line; /* the declaration being read, for messages */
  size_t param; /* its parameter being read (1-based), 0 when none */
  size_t pa, pb;
} dp;

/* What a declaration's specifiers name, resolved only when needed. */
typedef struct spec {
  int sign, shorts, longs;
  char base;          /* 'c' char, 'i' int, 'f' float, 'd' double, 'b' bool, 'v' void,
                         'w' wchar_t, '8' char8_t, '6' char16_t, '3' char32_t; 0 none */
  size_t name;        /* a type name's token, or NONE */
  int templ;          /* the name has template arguments */
  int elab;           /* 's' struct/class, 'u' union, 'e' enum before the name */
  size_t body_a, body_b; /* an inline struct/union body (NONE when none) */
  size_t enum_a, enum_b; /* an inline enum's underlying type */
  uint32_t align;
} spec;

/* A declarator: pointers, a name, array sizes. */
typedef struct decl {
  int ptr, ref, func, bits;
  size_t name;           /* token index or NONE */
  int array;             /* had [] */
  uint64_t count;        /* product of the array sizes (1 when none) */
  size_t bad_dim;        /* first array size that is not a plain number, or NONE */
} decl;

/* ---- small helpers ---- */

static const cj_tok *tk(const dp *d, size_t i) { return i < d->n ? &d->t[i] : NULL; }

static int is(const dp *d, size_t i, const char *s) {
  const cj_tok *t = tk(d, i);
  return t && cj_tok_is(t, s);
}

static int is_ident(const dp *d, size_t i) {
  const cj_tok *t = tk(d, i);
  return t && t->kind == CJ_TOK_IDENT;
}

static int in_list(const cj_tok *t, const char *const *list) {
  for (; *list; list++)
    if (cj_tok_is(t, *list)) return 1;
  return 0;
}

/* Words that qualify a declaration without changing its type. */
static const char *const quals[] = {
    "const", "volatile", "__restrict__", "__restrict", "restrict", "register", "static",
    "inline", "__inline__", "__forceinline__", "__noinline__", "extern", "mutable",
    "constexpr", "typename", "__grid_constant__", "__device__", "__host__", "__constant__",
    "__managed__", "__shared__", "__global__", "final", NULL};

/* Words followed by a parenthesised argument that qualify a declaration. */
static const char *const attr_words[] = {
    "__attribute__", "__declspec", "alignas", "_Alignas", "__align__", "__builtin_align__",
    "__launch_bounds__", "__maxnreg__", "__cluster_dims__", NULL};

/* The index just past the group opened at i ('(' '[' '{' or '<'), or `end`. */
static size_t skip_group(const dp *d, size_t i, size_t end) {
  const char *open = d->t[i].p, *close;
  int depth = 0;
  close = *open == '(' ? ")" : *open == '[' ? "]" : *open == '{' ? "}" : ">";
  for (; i < end; i++) {
    if (d->t[i].kind != CJ_TOK_PUNCT) continue;
    if (d->t[i].p[0] == *open && d->t[i].len == 1) depth++;
    else if (cj_tok_is(&d->t[i], close) && --depth == 0) return i + 1;
  }
  return end;
}

/* Parses an unsigned integer literal (decimal, hex, octal; u/l suffixes). */
static int parse_uint(const cj_tok *t, uint64_t *v) {
  char buf[32], *e;
  size_t n = t->len;
  if (t->kind != CJ_TOK_NUMBER || n >= sizeof buf) return -1;
  memcpy(buf, t->p, n);
  buf[n] = '\0';
  *v = strtoull(buf, &e, 0);
  while (*e == 'u' || *e == 'U' || *e == 'l' || *e == 'L' || *e == 'z' || *e == 'Z') e++;
  return *e ? -1 : 0;
}

/* Reads an alignment from an attribute at i: alignas(N), __align__(N), _Alignas(N),
 * __builtin_align__(N) or __attribute__((aligned(N))). Returns 0 when there is none. */
static uint32_t attr_align(const dp *d, size_t i, size_t end) {
  uint64_t v = 0;
  size_t j, stop = skip_group(d, i + 1, end);
  if (in_list(&d->t[i], (const char *const[]){"alignas", "_Alignas", "__align__",
                                                "__builtin_align__", NULL})) {
    if (stop == i + 4 && parse_uint(&d->t[i + 2], &v) == 0 && v <= 4096) return (uint32_t)v;
    return 0;
  }
  if (!cj_tok_is(&d->t[i], "__attribute__")) return 0;
  for (j = i + 2; j + 3 < stop; j++)
    if ((is(d, j, "aligned") || is(d, j, "__aligned__")) && is(d, j + 1, "(") &&
        parse_uint(&d->t[j + 2], &v) == 0 && v <= 4096 && is(d, j + 3, ")"))
      return (uint32_t)v;
  return 0;
}

/* Skips attributes at *i ([[...]] or attr_words(...)), raising *align from them. */
static int skip_attrs(const dp *d, size_t *i, size_t end, uint32_t *align) {
  int any = 0;
  for (;;) {
    if (*i + 1 < end && is(d, *i, "[") && is(d, *i + 1, "[")) {
      *i = skip_group(d, *i, end);
    } else if (*i + 1 < end && is_ident(d, *i) && in_list(&d->t[*i], attr_words) &&
               is(d, *i + 1, "(")) {
      uint32_t a = attr_align(d, *i, end);
      if (align && a > *align) *align = a;
      *i = skip_group(d, *i + 1, end);
    } else {
      return any;
    }
    any = 1;
  }
}

/* ---- messages ---- */

/* Appends tokens [a, b) as C text. */
static void append_tokens(const dp *d, size_t a, size_t b, cj_buf *out) {
  size_t i;
  for (i = a; i < b && i < d->n && out->len < 120; i++) {
    const cj_tok *t = &d->t[i], *prev = i > a ? &d->t[i - 1] : NULL;
    int glue = !prev || cj_tok_is(t, ",") || cj_tok_is(t, ")") || cj_tok_is(t, "]") ||
               cj_tok_is(t, "::") || cj_tok_is(prev, "::") || cj_tok_is(prev, "(") ||
               cj_tok_is(prev, "[") || ((cj_tok_is(t, "(") || cj_tok_is(t, "[")) &&
                                        prev->kind == CJ_TOK_IDENT);
    if (!glue) cj_buf_puts(out, " ");
    cj_buf_append(out, t->p, t->len);
  }
  if (i < b) cj_buf_puts(out, " ...");
}

static cujit_status derr(const dp *d, const char *fmt, ...) CJ_PRINTF(2, 3);
static cujit_status derr(const dp *d, const char *fmt, ...) {
  cj_buf b = {0};
  va_list ap;
  cujit_status st;
  cj_buf_printf(&b, "cannot read the parameters of kernel '%s' from the source of '%s'",
                d->kernel, d->module);
  if (d->line) cj_buf_printf(&b, " (line %u)", (unsigned)d->line);
  if (d->param) {
    cj_buf_printf(&b, ": parameter %zu '", d->param);
    append_tokens(d, d->pa, d->pb, &b);
    cj_buf_puts(&b, "'");
  }
  cj_buf_puts(&b, ": ");
  va_start(ap, fmt);
  cj_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  cj_buf_puts(&b, "; give the kernel an explicit signature with cujit_function_set_signature() "
                  "(a type string such as \"f32 ptr ptr u32\", see cujit.h)");
  st = cj_fail(CUJIT_ERROR_SIGNATURE, "%s", b.data ? b.data : "out of memory");
  cj_buf_free(&b);
  return st;
}

/* ---- indexing the named types ---- */

static int add_rec(dp *d, const rec *r) {
  if (cj_grow((void **)&d->recs, &d->caprecs, d->nrecs + 1, sizeof *r)) return -1;
  d->recs[d->nrecs++] = *r;
  return 0;
}

/* The end of the statement starting at i: its ';' at depth 0 (or n). */
static size_t statement_end(const dp *d, size_t i) {
  while (i < d->n && !is(d, i, ";")) {
    if (is(d, i, "(") || is(d, i, "[") || is(d, i, "{")) i = skip_group(d, i, d->n);
    else i++;
  }
  return i;
}

/* struct|class|union at i: records a definition `KEY [attrs] NAME [attrs] [: bases] {`. */
static int index_struct(dp *d, size_t i) {
  rec r = {0};
  size_t j = i + 1, close;
  r.kind = is(d, i, "union") ? R_UNION : R_STRUCT;
  r.templated = i > 0 && is(d, i - 1, ">");
  skip_attrs(d, &j, d->n, &r.align);
  if (!is_ident(d, j)) return 0;
  r.name = j++;
  while (is(d, j, "::") && is_ident(d, j + 1)) r.name = (j += 2) - 1; /* S::Inner */
  skip_attrs(d, &j, d->n, &r.align);
  if (is(d, j, "final")) j++;
  if (is(d, j, ":")) {
    r.based = 1;
    while (j < d->n && !is(d, j, "{") && !is(d, j, ";")) j++;
  }
  if (!is(d, j, "{")) return 0;
  close = skip_group(d, j, d->n);
  r.a = j + 1;
  r.b = close - 1; /* NVRTC ignores attributes after the closing brace, and so does this */
  return add_rec(d, &r);
}

/* enum [class|struct] NAME [: type] {... or ; */
static int index_enum(dp *d, size_t i) {
  rec r = {0};
  size_t j = i + 1;
  r.kind = R_ENUM;
  if (is(d, j, "class") || is(d, j, "struct")) j++;
  skip_attrs(d, &j, d->n, NULL);
  if (!is_ident(d, j)) return 0;
  r.name = j++;
  r.a = r.b = j;
  if (is(d, j, ":")) {
    r.a = ++j;
    while (j < d->n && !is(d, j, "{") && !is(d, j, ";")) j++;
    r.b = j;
  }
  return is(d, j, "{") || is(d, j, ";") ? add_rec(d, &r) : 0;
}

/* typedef ... ; : records each declared name (an identifier at depth 0, or inside `(*x)`,
 * followed by ',' ';' '[' or ')'). */
static int index_typedef(dp *d, size_t i) {
  size_t end = statement_end(d, i), j;
  int paren = 0;
  for (j = i + 1; j < end; j++) {
    const cj_tok *t = &d->t[j];
    if (is(d, j, "{") || (is(d, j, "(") && !is(d, j + 1, "*")) || is(d, j, "[")) {
      j = skip_group(d, j, end) - 1;
    } else if (is(d, j, "(")) {
      paren++;
    } else if (is(d, j, ")")) {
      paren--;
    } else if (t->kind == CJ_TOK_IDENT && paren <= 1 &&
               (j + 1 == end || is(d, j + 1, ",") || is(d, j + 1, "[") ||
                (paren == 1 && is(d, j + 1, ")"))) &&
               !in_list(t, quals)) {
      rec r = {0};
      r.kind = R_TYPEDEF;
      r.name = j;
      r.a = i + 1;
      r.b = end;
      if (add_rec(d, &r)) return -1;
    }
  }
  return 0;
}

/* using NAME = type ; */
static int index_using(dp *d, size_t i) {
  rec r = {0};
  if (!is_ident(d, i + 1) || !is(d, i + 2, "=")) return 0;
  r.kind = R_USING;
  r.name = i + 1;
  r.a = i + 3;
  r.b = statement_end(d, i + 3);
  r.templated = i > 0 && is(d, i - 1, ">");
  return add_rec(d, &r);
}

static int index_types(dp *d) {
  size_t i;
  int rc = 0;
  for (i = 0; i < d->n && rc == 0; i++) {
    if (d->t[i].kind != CJ_TOK_IDENT) continue;
    if ((is(d, i, "struct") || is(d, i, "class") || is(d, i, "union")) &&
        !(i > 0 && is(d, i - 1, "enum")))
      rc = index_struct(d, i);
    else if (is(d, i, "enum"))
      rc = index_enum(d, i);
    else if (is(d, i, "typedef"))
      rc = index_typedef(d, i);
    else if (is(d, i, "using"))
      rc = index_using(d, i);
  }
  return rc;
}

static const rec *find_rec(const dp *d, const cj_tok *name, int elaborated) {
  size_t i;
  for (i = 0; i < d->nrecs; i++) {
    const rec *r = &d->recs[i];
    const cj_tok *rn = &d->t[r->name];
    if (elaborated && (r->kind == R_TYPEDEF || r->kind == R_USING)) continue;
    if (rn->len == name->len && memcmp(rn->p, name->p, name->len) == 0) return r;
  }
  return NULL;
}

/* ---- built-in type names ---- */

typedef struct named_type {
  const char *name;
  cj_kind kind;
  unsigned lanes;
} named_type;

static const named_type builtin_names[] = {
    {"size_t", CJ_K_U64, 0},      {"ssize_t", CJ_K_I64, 0},      {"ptrdiff_t", CJ_K_I64, 0},
    {"intptr_t", CJ_K_I64, 0},    {"uintptr_t", CJ_K_U64, 0},    {"int8_t", CJ_K_I8, 0},
    {"uint8_t", CJ_K_U8, 0},      {"int16_t", CJ_K_I16, 0},      {"uint16_t", CJ_K_U16, 0},
    {"int32_t", CJ_K_I32, 0},     {"uint32_t", CJ_K_U32, 0},     {"int64_t", CJ_K_I64, 0},
    {"uint64_t", CJ_K_U64, 0},    {"__half", CJ_K_F16, 0},       {"half", CJ_K_F16, 0},
    {"__nv_bfloat16", CJ_K_BF16, 0}, {"nv_bfloat16", CJ_K_BF16, 0},
    {"__half2", CJ_K_F16, 2},     {"half2", CJ_K_F16, 2},        {"__nv_bfloat162", CJ_K_BF16, 2},
    {"nv_bfloat162", CJ_K_BF16, 2}, {"cudaTextureObject_t", CJ_K_U64, 0},
    {"cudaSurfaceObject_t", CJ_K_U64, 0}, {"CUtexObject", CJ_K_U64, 0},
    {"CUsurfObject", CJ_K_U64, 0}, {"CUdeviceptr", CJ_K_PTR, 0}, {"dim3", CJ_K_U32, 3},
};

/* CUDA vector type names: <elem><lanes>[_16a|_32a]. */
static const named_type vector_elems[] = {
    {"char", CJ_K_I8, 0},   {"uchar", CJ_K_U8, 0},   {"short", CJ_K_I16, 0},
    {"ushort", CJ_K_U16, 0}, {"int", CJ_K_I32, 0},   {"uint", CJ_K_U32, 0},
    {"long", CJ_K_I64, 0},  {"ulong", CJ_K_U64, 0},  {"longlong", CJ_K_I64, 0},
    {"ulonglong", CJ_K_U64, 0}, {"float", CJ_K_F32, 0}, {"double", CJ_K_F64, 0},
};

static cujit_status vector_by_name(const cj_tok *t, cj_type **out) {
  size_t i, l;
  for (i = 0; i < CJ_COUNT(vector_elems); i++) {
    const named_type *e = &vector_elems[i];
    unsigned lanes;
    uint32_t align = 0;
    l = strlen(e->name);
    if (t->len < l + 1 || memcmp(t->p, e->name, l) != 0) continue;
    if (t->p[l] < '1' || t->p[l] > '4') continue;
    lanes = (unsigned)(t->p[l] - '0');
    if (t->len == l + 5 && lanes == 4 && cj_scalar_type(e->kind)->size == 8 &&
        (memcmp(t->p + l + 1, "_16a", 4) == 0 || memcmp(t->p + l + 1, "_32a", 4) == 0))
      align = t->p[l + 2] == '3' ? 32 : 16;
    else if (t->len != l + 1)
      continue;
    *out = cj_type_vector(e->kind, lanes);
    if (!*out || cj_type_align(out, align) != 0) {
      cj_type_free(*out);
      return cj_fail_oom("reading a kernel's parameters");
    }
    return CUJIT_OK;
  }
  *out = NULL;
  return CUJIT_OK;
}

static cujit_status builtin_by_name(const cj_tok *t, cj_type **out) {
  size_t i;
  for (i = 0; i < CJ_COUNT(builtin_names); i++) {
    const named_type *b = &builtin_names[i];
    if (!cj_tok_is(t, b->name)) continue;
    *out = b->lanes ? cj_type_vector(b->kind, b->lanes) : (cj_type *)cj_scalar_type(b->kind);
    return *out ? CUJIT_OK : cj_fail_oom("reading a kernel's parameters");
  }
  return vector_by_name(t, out);
}

/* ---- specifiers and declarators ---- */

static int base_word(spec *s, const cj_tok *t) {
  static const char *const words[] = {"char", "int", "float", "double", "bool", "void",
                                      "wchar_t", "char8_t", "char16_t", "char32_t", NULL};
  static const char codes[] = "cifdbvw863";
  size_t k;
  if (cj_tok_is(t, "signed")) s->sign = 1;
  else if (cj_tok_is(t, "unsigned")) s->sign = 2;
  else if (cj_tok_is(t, "short")) s->shorts++;
  else if (cj_tok_is(t, "long")) s->longs++;
  else {
    for (k = 0; words[k]; k++)
      if (cj_tok_is(t, words[k])) break;
    if (!words[k]) return 0;
    s->base = codes[k];
  }
  return 1;
}

static int has_type(const spec *s) {
  return s->base || s->sign || s->shorts || s->longs || s->name != NONE || s->body_a != NONE;
}

/* struct|class|union|enum at *i: an elaborated name or an inline definition. */
static void parse_elaborated(const dp *d, size_t *i, size_t end, spec *s) {
  size_t j = *i + 1;
  int is_enum = is(d, *i, "enum");
  s->elab = is_enum ? 'e' : is(d, *i, "union") ? 'u' : 's';
  if (is_enum && (is(d, j, "class") || is(d, j, "struct"))) j++;
  skip_attrs(d, &j, end, &s->align);
  if (j < end && is_ident(d, j)) {
    s->name = j++;
    while (is(d, j, "::") && is_ident(d, j + 1)) s->name = (j += 2) - 1;
  }
  skip_attrs(d, &j, end, &s->align);
  if (is_enum && is(d, j, ":")) {
    s->enum_a = ++j;
    while (j < end && !is(d, j, "{")) j++;
    s->enum_b = j;
  }
  if (!is_enum && is(d, j, ":")) /* bases: the definition is read from the index instead */
    while (j < end && !is(d, j, "{")) j++;
  if (is(d, j, "{")) {
    size_t close = skip_group(d, j, end);
    if (!is_enum) {
      s->body_a = j + 1;
      s->body_b = close - 1;
    }
    j = close;
  }
  *i = j;
}

static cujit_status unknown_name(dp *d, const cj_tok *t);

/* Reads declaration specifiers from *i; stops at the declarator. */
static cujit_status parse_specs(const dp *d, size_t *i, size_t end, spec *s) {
  memset(s, 0, sizeof *s);
  s->name = s->body_a = s->enum_a = NONE;
  while (*i < end) {
    const cj_tok *t = &d->t[*i];
    if (skip_attrs(d, i, end, &s->align)) continue;
    if (t->kind == CJ_TOK_AMBIG && !has_type(s)) {
      s->name = (*i)++; /* resolved (and refused) only if the value's type is needed */
    } else if (cj_tok_is(t, "::")) {
      (*i)++;
    } else if (t->kind != CJ_TOK_IDENT) {
      break;
    } else if (in_list(t, quals)) {
      (*i)++;
    } else if (cj_tok_is(t, "struct") || cj_tok_is(t, "class") || cj_tok_is(t, "union") ||
               cj_tok_is(t, "enum")) {
      parse_elaborated(d, i, end, s);
    } else if (base_word(s, t)) {
      (*i)++;
    } else if (is(d, *i + 1, "::")) {
      *i += 2; /* std::size_t, cuda::std::int32_t */
    } else if (!has_type(s)) {
      if (is(d, *i + 1, "(") && cj_lex_macro_info(d->lx, t->p, t->len, NULL) == 1)
        return unknown_name((dp *)d, t);
      s->name = (*i)++;
      if (is(d, *i, "<")) {
        s->templ = 1;
        *i = skip_group(d, *i, end);
      }
    } else {
      break;
    }
  }
  return CUJIT_OK;
}

/* Reads array sizes at *i into dl. */
static void parse_dims(const dp *d, size_t *i, size_t end, decl *dl) {
  while (*i < end && is(d, *i, "[")) {
    size_t close = skip_group(d, *i, end);
    uint64_t v = 0;
    dl->array = 1;
    if (close == *i + 3 && parse_uint(&d->t[*i + 1], &v) == 0 && v > 0 && v <= (1u << 20)) {
      dl->count *= v;
      if (dl->count > (1ull << 40)) dl->count = 1ull << 40; /* too large either way */
    } else if (dl->bad_dim == NONE) {
      dl->bad_dim = *i;
    }
    *i = close;
  }
}

/* Reads a declarator from *i; stops at ',' ';' '=' '{' or `end`. */
static cujit_status parse_declarator(const dp *d, size_t *i, size_t end, decl *dl) {
  memset(dl, 0, sizeof *dl);
  dl->name = dl->bad_dim = NONE;
  dl->count = 1;
  while (*i < end) {
    const cj_tok *t = &d->t[*i];
    if (cj_tok_is(t, "*")) dl->ptr++;
    else if (cj_tok_is(t, "&") || cj_tok_is(t, "&&")) dl->ref = 1;
    else if (t->kind == CJ_TOK_IDENT && in_list(t, quals)) {}
    else if (skip_attrs(d, i, end, NULL)) continue;
    else break;
    (*i)++;
  }
  if (is(d, *i, "(") && (is(d, *i + 1, "*") || is(d, *i + 1, "&") || is(d, *i + 1, "^"))) {
    size_t j, close = skip_group(d, *i, end);
    for (j = *i + 1; j < close; j++) /* (*name) or (*name[3]): pointer to function/array */
      if (is_ident(d, j) && !in_list(&d->t[j], quals)) dl->name = j;
    dl->ptr++;
    *i = close;
    while (*i < end && (is(d, *i, "(") || is(d, *i, "["))) *i = skip_group(d, *i, end);
  } else if (*i < end && is_ident(d, *i) && !in_list(&d->t[*i], attr_words)) {
    dl->name = (*i)++;
  }
  parse_dims(d, i, end, dl);
  if (is(d, *i, "(")) { /* a function: member functions are skipped by the caller */
    dl->func = 1;
    *i = skip_group(d, *i, end);
    while (*i < end && is_ident(d, *i) && in_list(&d->t[*i], quals)) (*i)++;
  }
  skip_attrs(d, i, end, NULL);
  if (is(d, *i, ":")) dl->bits = 1;
  if (*i < end && !is(d, *i, ",") && !is(d, *i, ";") && !is(d, *i, "=") && !is(d, *i, "{") &&
      !is(d, *i, ":")) {
    const cj_tok *t = &d->t[*i];
    if (dl->name != NONE)
      return derr(d, "unexpected '%.*s' after '%.*s' (if '%.*s' is a macro, it is not defined "
                  "in this source)", (int)t->len, t->p, (int)d->t[dl->name].len,
                  d->t[dl->name].p, (int)d->t[dl->name].len, d->t[dl->name].p);
    return derr(d, "unexpected '%.*s'", (int)t->len, t->p);
  }
  return CUJIT_OK;
}

/* ---- resolving types ---- */

/* A resolved type: `count` elements (more than one for an array typedef). */
typedef struct tref {
  cj_type *type;
  uint64_t count;
} tref;

static cujit_status resolve_spec(dp *d, const spec *s, tref *out);
static cujit_status struct_layout(dp *d, size_t a, size_t b, int is_union, uint32_t align,
                                  cj_type **out);

static cujit_status base_type(const dp *d, const spec *s, cj_type **out) {
  cj_kind k;
  if (s->base == 'v') return derr(d, "a parameter cannot have type void");
  if (s->base == 'd' && s->longs) return derr(d, "long double is not supported by CUDA");
  if (s->base == 'f' || s->base == 'd') {
    if (s->sign || s->shorts || s->longs) return derr(d, "invalid combination of type words");
    k = s->base == 'f' ? CJ_K_F32 : CJ_K_F64;
  } else if (s->base == 'b' || s->base == '8') {
    k = CJ_K_U8;
  } else if (s->base == 'w') {
    k = CJ_K_I32;
  } else if (s->base == '6') {
    k = CJ_K_U16;
  } else if (s->base == '3') {
    k = CJ_K_U32;
  } else if (s->base == 'c') {
    k = s->sign == 2 ? CJ_K_U8 : CJ_K_I8;
  } else if (s->shorts) {
    k = s->sign == 2 ? CJ_K_U16 : CJ_K_I16;
  } else if (s->longs) {
    k = s->sign == 2 ? CJ_K_U64 : CJ_K_I64; /* long is 64-bit, as on the 64-bit host */
  } else {
    k = s->sign == 2 ? CJ_K_U32 : CJ_K_I32;
  }
  *out = (cj_type *)cj_scalar_type(k);
  return CUJIT_OK;
}

/* Applies a declarator to a resolved specifier type (not for parameters). */
static cujit_status apply_decl(const dp *d, const decl *dl, tref *r) {
  if (dl->ref) return derr(d, "C++ references are not supported here");
  if (dl->ptr) {
    cj_type_free(r->type);
    r->type = (cj_type *)cj_scalar_type(CJ_K_PTR);
    r->count = 1;
  }
  if (dl->array) {
    if (dl->bad_dim != NONE) {
      cj_type_free(r->type);
      r->type = NULL;
      return derr(d, "the array size '%.*s' is not a plain number", (int)d->t[dl->bad_dim + 1].len,
                  d->t[dl->bad_dim + 1].p);
    }
    r->count *= dl->count;
  }
  return CUJIT_OK;
}

/* The type a typedef or using-alias names. */
static cujit_status resolve_alias(dp *d, const rec *r, tref *out) {
  size_t i = r->a;
  spec s;
  decl dl;
  cujit_status st = parse_specs(d, &i, r->b, &s);
  while (st == CUJIT_OK) {
    st = parse_declarator(d, &i, r->b, &dl);
    if (st != CUJIT_OK) break;
    if (r->kind == R_USING || dl.name == r->name) {
      if (!dl.ptr) st = resolve_spec(d, &s, out);
      else out->type = NULL, out->count = 1;
      if (st == CUJIT_OK) st = apply_decl(d, &dl, out);
      return st;
    }
    while (i < r->b && !is(d, i, ",")) i++;
    if (i++ >= r->b) break;
  }
  return st != CUJIT_OK ? st : derr(d, "cannot read the typedef of '%.*s'",
                                    (int)d->t[r->name].len, d->t[r->name].p);
}

static cujit_status unknown_name(dp *d, const cj_tok *t) {
  cj_buf lines = {0};
  cujit_status st;
  if (cj_lex_macro_info(d->lx, t->p, t->len, &lines) == 1)
    st = derr(d, "'%.*s' is a function-like macro (line %s), which is not expanded",
              (int)t->len, t->p, lines.data ? lines.data : "?");
  else
    st = derr(d, "unknown type '%.*s': it is not defined in this source (types from "
              "included headers are not read)", (int)t->len, t->p);
  cj_buf_free(&lines);
  return st;
}

static cujit_status resolve_enum(dp *d, size_t a, size_t b, tref *out) {
  size_t i = a;
  spec s;
  cujit_status st;
  if (a == NONE || a == b) {
    out->type = (cj_type *)cj_scalar_type(CJ_K_I32);
    return CUJIT_OK;
  }
  st = parse_specs(d, &i, b, &s);
  if (st == CUJIT_OK) st = resolve_spec(d, &s, out);
  if (st == CUJIT_OK && out->type->kind > CJ_K_U64)
    st = derr(d, "an enum's underlying type must be an integer type");
  return st;
}

static cujit_status resolve_rec(dp *d, const rec *r, tref *out) {
  const cj_tok *name = &d->t[r->name];
  if (r->templated)
    return derr(d, "'%.*s' is a template", (int)name->len, name->p);
  switch (r->kind) {
    case R_STRUCT:
    case R_UNION:
      if (r->based)
        return derr(d, "'%.*s' derives from another class, whose layout is not computed here",
                    (int)name->len, name->p);
      return struct_layout(d, r->a, r->b, r->kind == R_UNION, r->align, &out->type);
    case R_ENUM:
      return resolve_enum(d, r->a, r->b, out);
    default:
      return resolve_alias(d, r, out);
  }
}

static cujit_status ambiguous_macro(dp *d, const cj_tok *t) {
  cj_buf lines = {0};
  cujit_status st;
  cj_lex_macro_info(d->lx, t->p, t->len, &lines);
  st = derr(d, "it uses macro '%.*s', which is defined differently on lines %s (in #if "
            "branches?), so its type cannot be told from the source alone",
            (int)t->len, t->p, lines.data ? lines.data : "?");
  cj_buf_free(&lines);
  return st;
}

static cujit_status resolve_name(dp *d, const spec *s, tref *out) {
  const cj_tok *t = &d->t[s->name];
  const rec *r;
  cujit_status st;
  if (t->kind == CJ_TOK_AMBIG) return ambiguous_macro(d, t);
  if (s->templ)
    return derr(d, "'%.*s<...>' is a template type, whose layout is not computed here",
                (int)t->len, t->p);
  if (!s->elab) {
    st = builtin_by_name(t, &out->type);
    if (st != CUJIT_OK || out->type) return st;
  }
  r = find_rec(d, t, s->elab != 0);
  if (!r) return unknown_name(d, t);
  if (d->depth >= CJ_RESOLVE_DEPTH)
    return derr(d, "the type '%.*s' is defined in terms of itself", (int)t->len, t->p);
  d->depth++;
  st = resolve_rec(d, r, out);
  d->depth--;
  return st;
}

/* alignas(N) on a member or in a typedef: it places the member, but does not change the
 * size of its type, which a type string cannot say for a struct whose size is not a
 * multiple of N. */
static cujit_status align_placed(dp *d, uint32_t align, cj_type **t) {
  if ((*t)->kind == CJ_K_STRUCT && (*t)->size % align != 0)
    return derr(d, "alignas(%u) on a member of struct or vector type whose size (%u) is not a "
                "multiple of it is not supported", (unsigned)align, (unsigned)(*t)->size);
  return cj_type_align(t, align) == 0 ? CUJIT_OK : cj_fail_oom("reading a kernel's parameters");
}

static cujit_status resolve_spec(dp *d, const spec *s, tref *out) {
  cujit_status st;
  out->type = NULL;
  out->count = 1;
  if (s->body_a != NONE) /* an inline definition: the alignment is the struct's own */
    return struct_layout(d, s->body_a, s->body_b, s->elab == 'u', s->align, &out->type);
  if (s->elab == 'e' && s->enum_a != NONE)
    st = resolve_enum(d, s->enum_a, s->enum_b, out);
  else if (s->name != NONE)
    st = resolve_name(d, s, out);
  else if (has_type(s))
    st = base_type(d, s, &out->type);
  else
    st = derr(d, "expected a type");
  if (st == CUJIT_OK && s->align) {
    st = align_placed(d, s->align, &out->type);
    if (st != CUJIT_OK) {
      cj_type_free(out->type);
      out->type = NULL;
    }
  }
  return st;
}

/* ---- structs ---- */

typedef struct members {
  cj_member *m;
  uint32_t n;
  size_t cap;
} members;

static void members_free(members *ms) {
  uint32_t i;
  for (i = 0; i < ms->n; i++) cj_type_free(ms->m[i].type);
  cj_free(ms->m);
}

static int members_add(members *ms, cj_type *t, uint64_t count) {
  if (cj_grow((void **)&ms->m, &ms->cap, ms->n + 1, sizeof *ms->m)) return -1;
  ms->m[ms->n].type = t;
  ms->m[ms->n].count = (uint32_t)count;
  ms->m[ms->n].offset = 0;
  ms->n++;
  return 0;
}

/* The end of the member statement at i: after its ';', or after the body of a member
 * function. *func is set for a statement that declares a function. */
static size_t member_end(const dp *d, size_t i, size_t b, int *func) {
  *func = 0;
  while (i < b) {
    if (is(d, i, ";")) return i + 1;
    if (is(d, i, "operator")) *func = 1;
    if (is(d, i, "(")) { /* after a name a function, unless it is (*name) */
      if (is_ident(d, i - 1) && !in_list(&d->t[i - 1], attr_words) && !is(d, i + 1, "*") &&
          !is(d, i + 1, "&") && !is(d, i + 1, "^"))
        *func = 1;
      i = skip_group(d, i, b);
    } else if (is(d, i, "{")) {
      i = skip_group(d, i, b);
      if (*func) return is(d, i, ";") ? i + 1 : i;
    } else if (is(d, i, "[")) {
      i = skip_group(d, i, b);
    } else {
      i++;
    }
  }
  return b;
}

static int has_word(const dp *d, size_t a, size_t b, const char *w) {
  for (; a < b; a++)
    if (is(d, a, w)) return 1;
  return 0;
}

static int skipped_member(const dp *d, size_t i) {
  static const char *const words[] = {"static", "typedef", "using", "friend", "template",
                                      "static_assert", NULL};
  return in_list(&d->t[i], words);
}

/* One member declaration [a, e): each declarator becomes a member. */
static cujit_status member_decl(dp *d, size_t a, size_t e, members *ms) {
  size_t i = a;
  spec s;
  tref base = {NULL, 1};
  cujit_status st = parse_specs(d, &i, e, &s);
  int resolved = 0;
  if (st == CUJIT_OK && (i >= e || is(d, i, ";")) && s.body_a != NONE) {
    st = resolve_spec(d, &s, &base); /* an anonymous struct or union member */
    if (st == CUJIT_OK && members_add(ms, base.type, 1) != 0) {
      cj_type_free(base.type);
      st = cj_fail_oom("reading a kernel's parameters");
    }
    return st;
  }
  while (st == CUJIT_OK && i < e && !is(d, i, ";")) {
    decl dl;
    tref r;
    st = parse_declarator(d, &i, e, &dl);
    if (st != CUJIT_OK) break;
    if (dl.bits) {
      st = derr(d, "a struct it uses has bit-fields, whose layout is not computed here");
      break;
    }
    if (!dl.ptr && !resolved) {
      st = resolve_spec(d, &s, &base);
      resolved = st == CUJIT_OK;
      if (!resolved) break;
    }
    r.type = dl.ptr ? NULL : cj_type_clone(base.type);
    r.count = base.count;
    if (!dl.ptr && !r.type) st = cj_fail_oom("reading a kernel's parameters");
    if (st == CUJIT_OK) st = apply_decl(d, &dl, &r);
    if (st == CUJIT_OK && r.count > (1u << 20))
      st = derr(d, "a struct it uses has an array of more than 2^20 elements");
    if (st == CUJIT_OK && members_add(ms, r.type, r.count) != 0)
      st = cj_fail_oom("reading a kernel's parameters");
    if (st != CUJIT_OK) {
      cj_type_free(r.type);
      break;
    }
    while (i < e && !is(d, i, ",") && !is(d, i, ";")) /* an initializer */
      i = is(d, i, "{") || is(d, i, "(") ? skip_group(d, i, e) : i + 1;
    if (is(d, i, ",")) i++;
  }
  if (resolved) cj_type_free(base.type);
  return st;
}

static cujit_status union_type(members *ms, uint32_t align, cj_type **out) {
  uint32_t i, size = 1, a = align ? align : 1;
  for (i = 0; i < ms->n; i++) {
    uint64_t sz = (uint64_t)ms->m[i].type->size * ms->m[i].count;
    if (sz > size) size = (uint32_t)sz;
    if (ms->m[i].type->align > a) a = ms->m[i].type->align;
  }
  members_free(ms);
  *out = cj_type_blob((size + a - 1) / a * a, a);
  return *out ? CUJIT_OK : cj_fail_oom("reading a kernel's parameters");
}

static cujit_status struct_layout(dp *d, size_t a, size_t b, int is_union, uint32_t align,
                                  cj_type **out) {
  members ms = {NULL, 0, 0};
  size_t i = a;
  cujit_status st = CUJIT_OK;
  *out = NULL;
  while (i < b && st == CUJIT_OK) {
    int func;
    size_t e = member_end(d, i, b, &func), s = i;
    i = e;
    while (s + 1 < e && is_ident(d, s) && is(d, s + 1, ":") &&
           (is(d, s, "public") || is(d, s, "private") || is(d, s, "protected")))
      s += 2;
    if (has_word(d, s, e, "virtual"))
      st = derr(d, "a struct it uses has virtual functions");
    else if (s < e && !is(d, s, ";") && !func && !skipped_member(d, s))
      st = member_decl(d, s, e, &ms);
  }
  if (st != CUJIT_OK) {
    members_free(&ms);
    return st;
  }
  if (is_union || ms.n == 0) /* an empty C++ struct has size 1 */
    return union_type(&ms, align, out);
  switch (cj_type_struct(ms.m, ms.n, align, out)) {
    case 0: return CUJIT_OK;
    case -1: return cj_fail_oom("reading a kernel's parameters");
    default: return derr(d, "a struct it uses is larger than 1 MiB");
  }
}

/* ---- kernels ---- */

/* The kernel named by the declaration whose __global__ is at g: its name's token and
 * its parameter list's '('. 0 when no name follows. */
static int kernel_name_at(const dp *d, size_t g, size_t *name, size_t *lp) {
  size_t i = g + 1;
  while (i < d->n) {
    if (skip_attrs(d, &i, d->n, NULL)) continue;
    if (is_ident(d, i) && is(d, i + 1, "(")) {
      *name = i;
      *lp = i + 1;
      return 1;
    }
    if (!is_ident(d, i) && !is(d, i, "::")) return 0;
    i++;
  }
  return 0;
}

/* 1 when a `template` heads the declaration containing token g. */
static int templated_at(const dp *d, size_t g) {
  size_t j = g;
  while (j-- > 0) {
    if (is(d, j, ";") || is(d, j, "{") || is(d, j, "}")) return 0;
    if (is(d, j, "template")) return 1;
  }
  return 0;
}

/* The end of parameter [i, rp): its ',' at depth 0, or rp. */
static size_t param_end(const dp *d, size_t i, size_t rp) {
  int angle = 0;
  while (i < rp && !(angle == 0 && is(d, i, ","))) {
    if (is(d, i, "(") || is(d, i, "[") || is(d, i, "{")) {
      i = skip_group(d, i, rp);
      continue;
    }
    if (is(d, i, "<") && i > 0 && is_ident(d, i - 1)) angle++;
    else if (is(d, i, ">") && angle > 0) angle--;
    i++;
  }
  return i;
}

/* One parameter [a, b) into *type and *name. */
static cujit_status read_param(dp *d, size_t a, size_t b, cj_type **type, char **name) {
  size_t i = a, e = a;
  spec s;
  decl dl;
  tref r = {NULL, 1};
  cujit_status st;
  *type = NULL;
  *name = NULL;
  while (e < b && !is(d, e, "=")) e = is(d, e, "(") || is(d, e, "[") ? skip_group(d, e, b) : e + 1;
  if (e == a) return derr(d, "the parameter is empty");
  if (is(d, a, "...")) return derr(d, "variadic kernels cannot be called from C");
  st = parse_specs(d, &i, e, &s);
  if (st == CUJIT_OK) st = parse_declarator(d, &i, e, &dl);
  if (st != CUJIT_OK) return st;
  if (i < e) return derr(d, "unexpected '%.*s'", (int)d->t[i].len, d->t[i].p);
  if (dl.ref) return derr(d, "C++ references cannot be kernel parameters; pass the value or a "
                          "pointer");
  if (dl.ptr || dl.array || dl.func) {
    *type = (cj_type *)cj_scalar_type(CJ_K_PTR);
  } else {
    st = resolve_spec(d, &s, &r);
    if (st != CUJIT_OK) return st;
    if (r.count > 1) { /* an array typedef decays to a pointer */
      cj_type_free(r.type);
      r.type = (cj_type *)cj_scalar_type(CJ_K_PTR);
    }
    *type = r.type;
  }
  if (dl.name != NONE) {
    *name = cj_memdup(d->t[dl.name].p, d->t[dl.name].len);
    if (!*name) {
      cj_type_free(*type);
      return cj_fail_oom("reading a kernel's parameters");
    }
  }
  return CUJIT_OK;
}

typedef struct plist {
  cj_type **types;
  char **names; /* same capacity as types */
  size_t n, cap;
} plist;

static void plist_free(plist *p) {
  size_t i;
  for (i = 0; i < p->n; i++) {
    cj_type_free(p->types[i]);
    cj_free(p->names[i]);
  }
  cj_free(p->types);
  cj_free(p->names);
}

static int plist_add(plist *p, cj_type *t, char *name) {
  size_t cap = p->cap;
  if (cj_grow((void **)&p->types, &p->cap, p->n + 1, sizeof *p->types)) return -1;
  if (cj_grow((void **)&p->names, &cap, p->n + 1, sizeof *p->names)) return -1;
  p->types[p->n] = t;
  p->names[p->n++] = name;
  return 0;
}

/* The parameters between lp '(' and its ')' into a signature. */
static cujit_status read_params(dp *d, size_t lp, cj_signature **out) {
  size_t rp = skip_group(d, lp, d->n) - 1, i = lp + 1;
  plist p = {NULL, NULL, 0, 0};
  cujit_status st = CUJIT_OK;
  if (!is(d, rp, ")")) return derr(d, "the parameter list is not closed");
  if (i == rp || (i + 1 == rp && is(d, i, "void"))) return cj_sig_build(NULL, NULL, 0, out);
  while (i <= rp && st == CUJIT_OK) {
    size_t e = param_end(d, i, rp);
    cj_type *t;
    char *name;
    d->param = p.n + 1;
    d->pa = i;
    d->pb = e;
    st = read_param(d, i, e, &t, &name);
    if (st == CUJIT_OK && plist_add(&p, t, name) != 0) {
      cj_type_free(t);
      cj_free(name);
      st = cj_fail_oom("reading a kernel's parameters");
    }
    i = e + 1;
  }
  d->param = 0;
  if (st == CUJIT_OK) {
    st = cj_sig_build(p.types, p.names, p.n, out);
    p.n = 0; /* moved into the signature (or freed by it) */
  }
  plist_free(&p);
  return st;
}

/* ---- choosing among declarations ---- */

typedef struct found {
  cj_signature *sig; /* NULL when it could not be read */
  uint32_t line;
} found;

static cujit_status choose(dp *d, found *f, size_t nf, const cj_layout *layout,
                           cj_signature **out) {
  size_t i, pick = 0, distinct = 1, fits = 0;
  cj_buf lines = {0};
  cujit_status st;
  for (i = 1; i < nf; i++)
    if (strcmp(f[i].sig->text, f[0].sig->text) != 0) distinct++;
  if (distinct > 1 && layout) {
    for (i = 0; i < nf; i++)
      if (cj_sig_fits(f[i].sig, layout) && (fits == 0 || strcmp(f[i].sig->text,
                                                                f[pick].sig->text) != 0)) {
        fits++;
        pick = i;
      }
  }
  if (distinct == 1 || fits == 1) {
    *out = f[pick].sig;
    f[pick].sig = NULL;
    return CUJIT_OK;
  }
  for (i = 0; i < nf; i++) cj_buf_printf(&lines, "%s(%s) on line %u", i ? ", " : "",
                                         f[i].sig->text, (unsigned)f[i].line);
  d->line = 0;
  st = derr(d, "it is overloaded: %s%s", lines.data ? lines.data : "",
            layout ? ", and the kernel's parameter layout does not tell which one it is" : "");
  cj_buf_free(&lines);
  return st;
}

/* Reads every declaration of the kernel. */
static cujit_status read_kernel(dp *d, const cj_layout *layout, cj_signature **out) {
  found *f = NULL;
  size_t g, nf = 0, i;
  cujit_status st = CUJIT_OK;
  for (g = 0; g < d->n && st == CUJIT_OK; g++) {
    size_t name, lp;
    found *grown;
    if (!is(d, g, "__global__") || !kernel_name_at(d, g, &name, &lp) ||
        !cj_tok_is(&d->t[name], d->kernel))
      continue;
    d->line = d->t[name].line;
    if (templated_at(d, g)) {
      st = derr(d, "it is a template, whose parameter types depend on the instantiation "
                "(launch one compiled through cujit_options.name_expressions, e.g. "
                "\"%s<float>\")", d->kernel);
      break;
    }
    grown = cj_realloc(f, (nf + 1) * sizeof *f);
    if (!grown) {
      st = cj_fail_oom("reading a kernel's parameters");
      break;
    }
    f = grown;
    f[nf].line = d->line;
    f[nf].sig = NULL;
    st = read_params(d, lp, &f[nf].sig);
    if (st == CUJIT_OK) nf++;
  }
  if (st == CUJIT_OK && nf == 0) {
    d->line = 0;
    st = derr(d, "no __global__ declaration of it was found (a kernel declared in a header or "
              "through a function-like macro cannot be read)");
  }
  if (st == CUJIT_OK) st = choose(d, f, nf, layout, out);
  for (i = 0; i < nf; i++) cj_sig_free(f[i].sig);
  cj_free(f);
  return st;
}

cujit_status cj_sig_from_source(const char *source, const char *module, const char *kernel,
                                const cj_layout *layout, cj_signature **out) {
  cj_lex lx;
  dp d;
  cujit_status st;
  memset(&d, 0, sizeof d);
  d.module = module ? module : "source.cu";
  d.kernel = kernel;
  *out = NULL;
  st = cj_lex_source(source, &lx);
  if (st != CUJIT_OK) return st;
  d.lx = &lx;
  d.t = lx.toks;
  d.n = lx.n;
  if (index_types(&d) != 0)
    st = cj_fail_oom("reading a kernel's parameters");
  else
    st = read_kernel(&d, layout, out);
  cj_free(d.recs);
  cj_lex_free(&lx);
  return st;
}

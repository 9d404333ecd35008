/* sigtype.c - parameter types: scalars, CUDA vector types, structs and opaque blobs, their
 * C layout, their type-string form, and the type-string parser of explicit signatures. */
#include <string.h>

#include "call/signature.h"

/* Structs and blobs larger than this are refused (kernel parameters are far smaller). */
#define CJ_MAX_TYPE_BYTES (1u << 20)
#define CJ_MAX_DEPTH 16

/* The scalar kinds, in cj_kind's order, as their tags and sizes in common/scalar.c. */
static const cj_type scalars[CJ_K_NSCALAR] = {
#define CJ_SCALAR_(k) \
  { CJ_K_##k, 0, 0, 0, 0, CJ_SCALAR_SIZE_##k, CJ_SCALAR_ALIGN_##k, 0, NULL }
    CJ_SCALAR_(I8),  CJ_SCALAR_(U8),  CJ_SCALAR_(I16), CJ_SCALAR_(U16), CJ_SCALAR_(I32),
    CJ_SCALAR_(U32), CJ_SCALAR_(I64), CJ_SCALAR_(U64), CJ_SCALAR_(F16), CJ_SCALAR_(BF16),
    CJ_SCALAR_(F32), CJ_SCALAR_(F64), CJ_SCALAR_(PTR),
#undef CJ_SCALAR_
};

static const uint8_t kind_tags[CJ_K_NSCALAR] = {CUJIT_TYPE_I8,   CUJIT_TYPE_U8,  CUJIT_TYPE_I16,
                                                CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,
                                                CUJIT_TYPE_I64,  CUJIT_TYPE_U64, CUJIT_TYPE_F16,
                                                CUJIT_TYPE_BF16, CUJIT_TYPE_F32, CUJIT_TYPE_F64,
                                                CUJIT_TYPE_PTR};

const cj_type *cj_type_of_scalar(cj_kind k) { return &scalars[k]; }

const char *cj_kind_name(cj_kind k) {
  return k < CJ_K_NSCALAR ? cj_scalar_of(kind_tags[k])->name : "?";
}

static uint32_t round_up(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }

static int is_pow2(unsigned long long x) { return x && !(x & (x - 1)); }

void cj_type_free(cj_type *t) {
  uint32_t i;
  if (!t || !t->heap) return;
  for (i = 0; i < t->nmembers; i++) cj_type_free(t->members[i].type);
  cj_free(t->members);
  cj_free(t);
}

cj_type *cj_type_clone(const cj_type *t) {
  cj_type *c;
  uint32_t i;
  if (!t->heap) return (cj_type *)t;
  c = cj_malloc(sizeof *c);
  if (!c) return NULL;
  *c = *t;
  c->members = NULL;
  if (t->nmembers) {
    c->members = cj_calloc(t->nmembers, sizeof *c->members);
    if (!c->members) {
      cj_free(c);
      return NULL;
    }
  }
  for (i = 0; i < t->nmembers; i++) {
    c->members[i] = t->members[i];
    c->members[i].type = cj_type_clone(t->members[i].type);
    if (!c->members[i].type) {
      c->nmembers = i;
      cj_type_free(c);
      return NULL;
    }
  }
  return c;
}

int cj_type_align(cj_type **t, uint32_t align) {
  cj_type *c = *t;
  if (align <= c->align) return 0;
  if (!c->heap) {
    c = cj_malloc(sizeof *c);
    if (!c) return -1;
    *c = **t;
    c->heap = 1;
    c->raised = 1;
    *t = c;
  }
  c->align = align;
  if (c->kind == CJ_K_STRUCT) c->size = round_up(c->size, align);
  return 0;
}

int cj_type_struct(cj_member *members, uint32_t n, uint32_t align, cj_type **out) {
  cj_type *t = cj_calloc(1, sizeof *t);
  uint64_t off = 0;
  uint32_t i, a = align ? align : 1;
  int rc = -1;
  *out = NULL;
  if (!t) goto fail;
  for (i = 0; i < n; i++) {
    const cj_type *m = members[i].type;
    off = (off + m->align - 1) / m->align * m->align;
    members[i].offset = (uint32_t)off;
    off += (uint64_t)m->size * members[i].count;
    rc = -2;
    if (off > CJ_MAX_TYPE_BYTES) goto fail;
    if (m->align > a) a = m->align;
    t->opaque |= m->opaque;
    t->raised |= m->raised;
  }
  t->kind = CJ_K_STRUCT;
  t->heap = 1;
  t->align = a;
  t->size = round_up((uint32_t)off, a);
  t->nmembers = n;
  t->members = members;
  *out = t;
  return 0;
fail:
  for (i = 0; i < n; i++) cj_type_free(members[i].type);
  cj_free(members);
  cj_free(t);
  return rc;
}

/* CUDA's alignment of a vector type (vector_types.h): one and three lanes keep the
 * element's, two and four lanes take their size, at most 16. */
static uint32_t vector_align(uint32_t elem, unsigned lanes) {
  uint32_t a = lanes == 2 || lanes == 4 ? elem * lanes : elem;
  return a > 16 ? 16 : a;
}

cj_type *cj_type_vector(cj_kind k, unsigned lanes) {
  cj_member *m = cj_calloc(1, sizeof *m);
  cj_type *t;
  if (!m) return NULL;
  m->type = (cj_type *)cj_type_of_scalar(k);
  m->count = lanes;
  if (cj_type_struct(m, 1, vector_align(scalars[k].size, lanes), &t) != 0) return NULL;
  t->lanes = (uint8_t)lanes;
  return t;
}

cj_type *cj_type_blob(uint32_t size, uint32_t align) {
  cj_type *t = cj_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = CJ_K_BLOB;
  t->heap = 1;
  t->opaque = 1;
  t->align = align;
  t->size = size;
  return t;
}

/* The alignment a type has without an explicit ":A". */
static uint32_t natural_align(const cj_type *t) {
  uint32_t i, a = 1;
  if (t->kind < CJ_K_NSCALAR) return t->size;
  if (t->kind == CJ_K_BLOB) return 1;
  if (t->lanes) return vector_align(t->members[0].type->size, t->lanes);
  for (i = 0; i < t->nmembers; i++)
    if (t->members[i].type->align > a) a = t->members[i].type->align;
  return a;
}

void cj_type_text(const cj_type *t, cj_buf *b) {
  uint32_t i;
  if (t->kind < CJ_K_NSCALAR) {
    cj_buf_puts(b, cj_kind_name((cj_kind)t->kind));
  } else if (t->kind == CJ_K_BLOB) {
    cj_buf_printf(b, "b%u", (unsigned)t->size);
  } else if (t->lanes) {
    cj_buf_printf(b, "%sx%u", cj_kind_name((cj_kind)t->members[0].type->kind), (unsigned)t->lanes);
  } else {
    cj_buf_puts(b, "{");
    for (i = 0; i < t->nmembers; i++) {
      if (i) cj_buf_puts(b, " ");
      cj_type_text(t->members[i].type, b);
      if (t->members[i].count != 1) cj_buf_printf(b, "[%u]", (unsigned)t->members[i].count);
    }
    cj_buf_puts(b, "}");
  }
  if (t->align != natural_align(t)) cj_buf_printf(b, ":%u", (unsigned)t->align);
}

/* ---- signatures ---- */

static int kind_tag(const cj_type *t) {
  return t->kind < CJ_K_NSCALAR ? kind_tags[t->kind] : CUJIT_TYPE_BYTES;
}

void cj_sig_free(cj_signature *s) {
  size_t i;
  if (!s) return;
  for (i = 0; i < s->n; i++) {
    cj_type_free(s->params[i].type);
    cj_free(s->params[i].name);
  }
  cj_free(s->params);
  cj_free(s->text);
  cj_free(s);
}

cujit_status cj_sig_build(cj_type **types, char **names, size_t n, cj_signature **out) {
  cj_signature *s = cj_calloc(1, sizeof *s);
  cj_buf text = {0};
  size_t i, end = 0;
  if (s && n) s->params = cj_calloc(n, sizeof *s->params);
  if (!s || (n && !s->params)) {
    for (i = 0; i < n; i++) {
      cj_type_free(types[i]);
      if (names) cj_free(names[i]);
    }
    if (s) cj_free(s);
    return cj_fail_oom("building a signature");
  }
  s->n = n;
  for (i = 0; i < n; i++) {
    cj_param *p = &s->params[i];
    p->type = types[i];
    p->name = names ? names[i] : NULL;
    p->kind = types[i]->kind;
    p->tag = (uint8_t)kind_tag(types[i]);
    p->accept = cj_accept_of(p->tag);
    p->size = types[i]->size;
    p->offset = (uint32_t)((end + p->type->align - 1) / p->type->align * p->type->align);
    end = p->offset + (size_t)p->size;
    if (i) cj_buf_puts(&text, " ");
    cj_type_text(p->type, &text);
  }
  s->text = cj_buf_take(&text);
  if (!s->text) {
    cj_sig_free(s);
    return cj_fail_oom("building a signature");
  }
  *out = s;
  return CUJIT_OK;
}

/* ---- the type-string parser ---- */

typedef struct tparse {
  const char *str; /* the whole string, for messages */
  const char *p;
} tparse;

#define CJ_TYPES_HELP                                                                       \
  "a type string lists the parameters' types separated by spaces: i8 u8 i16 u16 i32 u32 "   \
  "i64 u64 f16 bf16 f32 f64 ptr; a CUDA vector as <scalar>x<1-4> (f32x4 is float4); a "     \
  "struct as {members}, a member array as type[N]; N opaque bytes as bN; any type may end " \
  "in :A to raise its alignment to A bytes (bN:A for a blob aligned to A); e.g. "           \
  "\"f32 ptr ptr u32\" or \"{f32 i32}:8 f32x4 b12:4\""

static cujit_status tfail(const tparse *t, const char *what) {
  return cj_fail(CUJIT_ERROR_SIGNATURE, "bad type string \"%s\": %s at offset %d; %s", t->str, what,
                 (int)(t->p - t->str), CJ_TYPES_HELP);
}

static void skip_seps(tparse *t) {
  while (*t->p == ' ' || *t->p == '\t' || *t->p == '\n' || *t->p == ',') t->p++;
}

/* Reads a decimal number in [1, max]; -1 when there is none or it is out of range. */
static long read_number(tparse *t, long max) {
  long v = 0;
  if (*t->p < '0' || *t->p > '9') return -1;
  while (*t->p >= '0' && *t->p <= '9') {
    v = v * 10 + (*t->p++ - '0');
    if (v > max) return -1;
  }
  return v >= 1 ? v : -1;
}

static int word_is(const char *w, size_t n, const char *name) {
  return strlen(name) == n && memcmp(w, name, n) == 0;
}

/* A scalar name at the start of w[0..n): its kind, with *len its length; -1 if none. */
static int scalar_prefix(const char *w, size_t n, size_t *len) {
  int k, best = -1;
  size_t bl = 0;
  for (k = 0; k < CJ_K_NSCALAR; k++) {
    const char *name = cj_kind_name((cj_kind)k);
    size_t l = strlen(name);
    if (l <= n && l > bl && memcmp(w, name, l) == 0) {
      best = k;
      bl = l;
    }
  }
  *len = bl;
  return best;
}

/* A word: a scalar, a vector (f32x4), or a blob (b12). */
static cujit_status parse_word(tparse *t, cj_type **out) {
  const char *w = t->p;
  size_t n = 0, l;
  int k;
  while ((w[n] >= 'a' && w[n] <= 'z') || (w[n] >= '0' && w[n] <= '9')) n++;
  if (n == 0) return tfail(t, "expected a type");
  k = scalar_prefix(w, n, &l);
  if (k >= 0 && l == n) {
    *out = (cj_type *)cj_type_of_scalar((cj_kind)k);
  } else if (k >= 0 && k != CJ_K_PTR && n == l + 2 && w[l] == 'x' && w[l + 1] >= '1' &&
             w[l + 1] <= '4') {
    *out = cj_type_vector((cj_kind)k, (unsigned)(w[l + 1] - '0'));
    if (!*out) return cj_fail_oom("parsing a type string");
  } else if (w[0] == 'b' && n > 1) {
    long size;
    t->p = w + 1;
    size = read_number(t, CJ_MAX_TYPE_BYTES);
    if (size < 0 || t->p != w + n) {
      t->p = w;
      return tfail(t, "a blob is b followed by its size in bytes (1 to 1048576)");
    }
    *out = cj_type_blob((uint32_t)size, 1);
    if (!*out) return cj_fail_oom("parsing a type string");
  } else {
    return tfail(t, word_is(w, n, "void") ? "void is only allowed as the whole string"
                                          : "unknown type");
  }
  t->p = w + n;
  return CUJIT_OK;
}

static cujit_status parse_type(tparse *t, int depth, cj_type **out);

/* Appends one member (type and optional [N]) to a growing array. */
static cujit_status parse_member(tparse *t, int depth, cj_member **ms, uint32_t *n, size_t *cap) {
  cj_member *grown;
  cj_type *ty = NULL;
  long count = 1;
  CJ_TRY(parse_type(t, depth, &ty));
  if (*t->p == '[') {
    t->p++;
    count = read_number(t, CJ_MAX_TYPE_BYTES);
    if (count < 0 || *t->p != ']') {
      cj_type_free(ty);
      return tfail(t, "an array member is type[N] with N from 1 to 1048576");
    }
    t->p++;
  }
  if (CJ_VEC_RESERVE(*ms, *cap, (size_t)*n + 1) != 0) {
    cj_type_free(ty);
    return cj_fail_oom("parsing a type string");
  }
  grown = *ms;
  grown[*n].type = ty;
  grown[*n].count = (uint32_t)count;
  grown[*n].offset = 0;
  (*n)++;
  return CUJIT_OK;
}

static cujit_status parse_struct(tparse *t, int depth, cj_type **out) {
  cj_member *ms = NULL;
  uint32_t i, n = 0;
  size_t cap = 0;
  cujit_status st = CUJIT_OK;
  const char *open = t->p++;
  for (skip_seps(t); *t->p && *t->p != '}' && st == CUJIT_OK; skip_seps(t))
    st = parse_member(t, depth + 1, &ms, &n, &cap);
  if (st == CUJIT_OK && *t->p != '}') {
    t->p = open;
    st = tfail(t, "this { has no matching }");
  } else if (st == CUJIT_OK && n == 0) {
    st = tfail(t, "a struct needs at least one member (an empty one is b1)");
  }
  if (st != CUJIT_OK) {
    for (i = 0; i < n; i++) cj_type_free(ms[i].type);
    cj_free(ms);
    return st;
  }
  t->p++;
  switch (cj_type_struct(ms, n, 0, out)) {
    case 0: return CUJIT_OK;
    case -1: return cj_fail_oom("parsing a type string");
    default: return tfail(t, "the struct is larger than 1 MiB");
  }
}

/* An optional ":A" after a type. */
static cujit_status parse_align(tparse *t, cj_type **ty) {
  long a;
  if (*t->p != ':') return CUJIT_OK;
  t->p++;
  a = read_number(t, 4096);
  if (a < 0 || !is_pow2((unsigned long long)a))
    return tfail(t, "an alignment is :A with A a power of two from 1 to 4096");
  if ((uint32_t)a < natural_align(*ty))
    return tfail(t, "an alignment may raise a type's own alignment but not lower it");
  if (cj_type_align(ty, (uint32_t)a) != 0) return cj_fail_oom("parsing a type string");
  return CUJIT_OK;
}

static cujit_status parse_type(tparse *t, int depth, cj_type **out) {
  cujit_status st;
  *out = NULL;
  if (depth > CJ_MAX_DEPTH) return tfail(t, "structs are nested too deeply");
  st = *t->p == '{' ? parse_struct(t, depth, out) : parse_word(t, out);
  if (st == CUJIT_OK) st = parse_align(t, out);
  if (st != CUJIT_OK) {
    cj_type_free(*out);
    *out = NULL;
  }
  return st;
}

static int whole_string_is_void(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  if (strncmp(s, "void", 4) != 0) return 0;
  for (s += 4; *s == ' ' || *s == '\t'; s++) {
  }
  return *s == '\0';
}

cujit_status cj_sig_from_types(const char *types, cj_signature **out) {
  tparse t = {types, types};
  cj_type **tys = NULL;
  size_t i, n = 0, cap = 0;
  cujit_status st = CUJIT_OK;
  if (whole_string_is_void(types)) return cj_sig_build(NULL, NULL, 0, out);
  for (skip_seps(&t); *t.p && st == CUJIT_OK; skip_seps(&t)) {
    cj_type *ty;
    st = parse_type(&t, 0, &ty);
    if (st != CUJIT_OK) break;
    if (*t.p && !strchr(" \t\n,", *t.p)) {
      cj_type_free(ty);
      st = tfail(&t, *t.p == '[' ? "arrays are passed by pointer (ptr), not by value"
                                 : "expected a space between types");
      break;
    }
    if (CJ_VEC_RESERVE(tys, cap, n + 1) != 0) {
      cj_type_free(ty);
      st = cj_fail_oom("parsing a type string");
      break;
    }
    tys[n++] = ty;
  }
  if (st != CUJIT_OK) {
    for (i = 0; i < n; i++) cj_type_free(tys[i]);
    cj_free(tys);
    return st;
  }
  st = cj_sig_build(tys, NULL, n, out);
  cj_free(tys);
  return st;
}

/* incscan.c - finds the user headers a source includes, without a preprocessor: a line scan
 * for #include, #include_next, __has_include and header-name #defines, followed through
 * the files found, searched the way NVRTC searches them:
 *   "x.h": in-memory headers (exact name), the includer's directory, the include path;
 *   <x.h>: in-memory headers, the include path;
 *   --pre-include x.h: in-memory headers, the working directory, the include path.
 * The includer's directory is the directory part of its path or name (the program name's
 * for the source); -no-source-include turns it off. The include path is cujit's
 * (a file's own directory, then the caller's) followed by -I options.
 *
 * Each file is read in one pass by a small lexer (line splices, comments, literals), so
 * the scan takes time linear in what it reads; a directive is a '#' that is the first
 * token of a logical line, as the preprocessor sees it. Each header name is resolved once
 * per includer's directory.
 *
 * The scan errs towards following too much: conditionals are ignored (both branches are
 * followed) and #include MACRO follows every header-name #define of MACRO. A candidate that
 * does not exist is recorded too, so that creating it later is noticed. A header found
 * nowhere is a toolkit or system header, covered by NVRTC's version; so is a header found
 * in the CUDA toolkit's include directory or below it (CCCL's), where the caller puts it
 * on the include path: its files come with NVRTC's version and are neither hashed nor
 * followed. (The toolkit's directories that cujit searches last by default are not
 * scanned at all: whatever is found only there is the toolkit's.) */
#define _GNU_SOURCE /* memmem */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "key/key.h"

#define CJ_SCAN_MAX_FILES 20000
#define CJ_SCAN_MAX_HEADER ((size_t)256 << 20)

typedef struct pending_file {
  char *text; /* owned when read from disk, else borrowed */
  size_t len;
  int owned;
  char *dir; /* for quote includes; NULL when the includer's directory is not searched */
  char *label;
} pending_file;

/* An #include whose operand is a macro, resolved with the header-name #defines seen. */
typedef struct computed_include {
  char *macro;
  char *dir;
  char *where; /* "file:line" for the reason when it cannot be resolved */
  int resolved;
} computed_include;

typedef struct header_macro {
  char *name;
  char *value; /* the header name */
  int angle;
} header_macro;

/* The arguments of one resolve(), which repeating would change nothing. */
typedef struct resolve_key {
  char *key; /* all, '<' or '"', the name, '\0', the includer's directory */
  size_t len;
  uint64_t hash;
} resolve_key;

typedef struct scanner {
  const cj_request *r;
  cj_deps *deps;
  const char **dirs; /* include path */
  size_t n_dirs;
  unsigned char *toolkit; /* per include directory: 1 when it is the CUDA toolkit's */
  const char **pre;       /* pre-included headers */
  size_t n_pre;
  int source_include; /* 0 with -no-source-include */
  unsigned char *memory_seen;
  pending_file *queue;
  size_t n_queue, head, cap_queue;
  computed_include *computed;
  size_t n_computed, cap_computed;
  header_macro *macros;
  size_t n_macros, cap_macros;
  char *dline; /* the directive being read */
  size_t n_dline, cap_dline;
  resolve_key *done; /* the resolves made: open addressing, NULL keys free */
  size_t n_done, cap_done;
  char *bypass;
  size_t bypass_size;
  int oom;
} scanner;

/* ---- the CUDA toolkit's include directories ---- */

/* 1 when dir lies inside the toolkit's include directory (CCCL's included): its headers
 * are covered by the toolkit's location and NVRTC's version (toolkit.c). */
static int is_toolkit_dir(const char *dir) {
  char real[PATH_MAX];
  return realpath(dir, real) && cj_toolkit_owns(real);
}

/* ---- small helpers ---- */

static void set_bypass(scanner *sc, const char *fmt, const char *a, const char *b) {
  if (!sc->bypass[0]) snprintf(sc->bypass, sc->bypass_size, fmt, a, b);
}

/* The directory part of a path or header name: "" (the working directory) when it has
 * none. NULL when out of memory. */
static char *dir_part(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return cj_strdup("");
  if (slash == path) return cj_strdup("/");
  return cj_memdup(path, (size_t)(slash - path));
}

static char *join(const char *dir, const char *name, size_t name_len) {
  size_t dl = name[0] == '/' ? 0 : strlen(dir);
  int sep = dl && dir[dl - 1] != '/';
  char *s = cj_malloc(dl + (size_t)sep + name_len + 1);
  if (!s) return NULL;
  memcpy(s, dir, dl);
  if (sep) s[dl] = '/';
  memcpy(s + dl + (size_t)sep, name, name_len);
  s[dl + (size_t)sep + name_len] = '\0';
  return s;
}

static int enqueue(scanner *sc, char *text, size_t len, int owned, char *dir, char *label) {
  pending_file *f;
  if (!label || (sc->source_include && !dir) ||
      CJ_VEC_RESERVE(sc->queue, sc->cap_queue, sc->n_queue + 1) != 0) {
    if (owned) cj_free(text);
    cj_free(dir);
    cj_free(label);
    sc->oom = 1;
    return -1;
  }
  if (!sc->source_include) {
    cj_free(dir);
    dir = NULL;
  }
  f = &sc->queue[sc->n_queue++];
  f->text = text;
  f->len = len;
  f->owned = owned;
  f->dir = dir;
  f->label = label;
  return 0;
}

/* ---- finding headers ---- */

/* Reads a regular file. 0 with its contents; 1 when it does not exist or is not a
 * readable regular file; -1 when out of memory; 2 when it is too large to track. */
static int read_header(const char *path, char **text, size_t *len, struct stat *st) {
  cj_file f;
  switch (cj_file_read(AT_FDCWD, path, 0, CJ_SCAN_MAX_HEADER, &f)) {
    case CJ_FILE_OK: break;
    case CJ_FILE_TOO_LARGE: return 2;
    case CJ_FILE_NO_MEMORY: return -1;
    default: return 1;
  }
  *text = f.data;
  *len = f.len;
  *st = f.st;
  return 0;
}

/* Looks at one candidate path. 1 when it is the header (now recorded and queued, or seen
 * before), 0 when it does not exist, -1 on trouble (out of memory or bypass). */
static int try_candidate(scanner *sc, char *path) {
  const cj_dep *seen = cj_deplist_find(sc->deps, path);
  struct stat st;
  char *text = NULL;
  size_t len = 0;
  int rc;
  if (seen) {
    cj_free(path);
    return seen->present;
  }
  if (sc->deps->n >= CJ_SCAN_MAX_FILES) {
    set_bypass(sc, "more than %s headers to track (at '%s')", "20000", path);
    cj_free(path);
    return -1;
  }
  rc = read_header(path, &text, &len, &st);
  if (rc == 2) set_bypass(sc, "header '%s' is larger than %s", path, "256 MiB");
  if (rc == 1 && cj_deplist_add_absent(sc->deps, path) == 0) {
    cj_free(path);
    return 0;
  }
  if (rc == 0 && cj_deplist_add_file(sc->deps, path, &st, text, len) == 0) {
    rc = enqueue(sc, text, len, 1, dir_part(path), path);
    return rc == 0 ? 1 : -1;
  }
  if (rc != 2) sc->oom = 1;
  cj_free(text);
  cj_free(path);
  return -1;
}

/* In-memory headers named exactly `name` (NVRTC looks there first). 1 when there is one. */
static int try_memory(scanner *sc, const char *name, size_t len) {
  size_t i;
  int found = 0;
  for (i = 0; i < sc->r->n_headers; i++) {
    const cujit_header *h = &sc->r->headers[i];
    if (strlen(h->name) != len || memcmp(h->name, name, len) != 0) continue;
    found = 1;
    if (sc->memory_seen[i]) continue;
    sc->memory_seen[i] = 1;
    if (enqueue(sc, (char *)h->source, strlen(h->source), 0, dir_part(h->name),
                cj_strdup(h->name)) != 0)
      return -1;
  }
  return found;
}

/* The key of one resolve() in `out` (the caller frees it). -1 when out of memory. */
static int resolve_key_make(resolve_key *out, const char *name, size_t len, const char *dir,
                            int all) {
  size_t dl = dir ? strlen(dir) : 0;
  unsigned char h[16];
  out->len = 2 + len + 1 + dl;
  if (!(out->key = cj_malloc(out->len))) return -1;
  out->key[0] = (char)('0' + all);
  out->key[1] = dir ? '"' : '<';
  memcpy(out->key + 2, name, len);
  out->key[2 + len] = '\0';
  if (dl) memcpy(out->key + 3 + len, dir, dl);
  cj_hash128(out->key, out->len, h);
  memcpy(&out->hash, h, sizeof out->hash);
  return 0;
}

/* The free or matching slot of k in a table of `cap` (a power of two) slots. */
static resolve_key *resolve_slot(resolve_key *table, size_t cap, const resolve_key *k) {
  size_t i = (size_t)k->hash & (cap - 1);
  while (table[i].key && (table[i].hash != k->hash || table[i].len != k->len ||
                          memcmp(table[i].key, k->key, k->len) != 0))
    i = (i + 1) & (cap - 1);
  return &table[i];
}

static int resolve_table_grow(scanner *sc) {
  size_t cap = sc->cap_done ? 2 * sc->cap_done : 64, i;
  resolve_key *t;
  if (2 * (sc->n_done + 1) <= sc->cap_done) return 0;
  if (!(t = cj_calloc(cap, sizeof *t))) return -1;
  for (i = 0; i < sc->cap_done; i++)
    if (sc->done[i].key) *resolve_slot(t, cap, &sc->done[i]) = sc->done[i];
  cj_free(sc->done);
  sc->done = t;
  sc->cap_done = cap;
  return 0;
}

/* 1 when resolve() already ran with these arguments (a header included again, by any
 * file in the same directory); records them otherwise. -1 when out of memory. */
static int resolved_before(scanner *sc, const char *name, size_t len, const char *dir, int all) {
  resolve_key k, *slot;
  if (resolve_table_grow(sc) != 0 || resolve_key_make(&k, name, len, dir, all) != 0) return -1;
  slot = resolve_slot(sc->done, sc->cap_done, &k);
  if (slot->key) {
    cj_free(k.key);
    return 1;
  }
  *slot = k;
  sc->n_done++;
  return 0;
}

/* Resolves one header name from an includer whose directory is `dir` (NULL: not
 * searched). `all` follows every existing candidate (#include_next, whose search starts
 * after the includer's own directory, is followed conservatively that way). */
static void resolve(scanner *sc, const char *name, size_t len, const char *dir, int all) {
  size_t i;
  int rc;
  if (sc->oom || sc->bypass[0] || len == 0) return;
  rc = resolved_before(sc, name, len, dir, all);
  if (rc != 0) {
    sc->oom |= rc < 0;
    return;
  }
  rc = try_memory(sc, name, len);
  if (rc != 0) return;
  if (name[0] == '/') {
    char *path = join("", name, len);
    if (!path || try_candidate(sc, path) < 0) sc->oom |= !path;
    return;
  }
  if (dir) {
    char *path = join(dir, name, len);
    if (!path) {
      sc->oom = 1;
      return;
    }
    rc = try_candidate(sc, path);
    if (rc < 0 || (rc == 1 && !all)) return;
  }
  for (i = 0; i < sc->n_dirs; i++) {
    char *path = join(sc->dirs[i], name, len);
    struct stat st;
    if (!path) {
      sc->oom = 1;
      return;
    }
    if (sc->toolkit[i]) { /* a toolkit header: found, covered by NVRTC's version */
      rc = stat(path, &st) == 0;
      cj_free(path);
      if (rc && !all) return;
      continue;
    }
    rc = try_candidate(sc, path);
    if (rc < 0 || (rc == 1 && !all)) return;
  }
}

/* ---- reading directives ---- */

static int blank(int c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

static const char *blank_end(const char *p, const char *end) {
  while (p < end && blank((unsigned char)*p)) p++;
  return p;
}

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t ident_len(const char *p, const char *end) {
  const char *q = p;
  while (q < end && ident_char(*q)) q++;
  return (size_t)(q - p);
}

static int word_is(const char *p, size_t n, const char *w) {
  return strlen(w) == n && memcmp(p, w, n) == 0;
}

/* A header name at p: "x" or <x>. Returns the position after it (and sets *name, *len and
 * *angle), or NULL when there is none or it is left open. */
static const char *header_name(const char *p, const char *end, const char **name, size_t *len,
                               int *angle) {
  const char *q;
  char close;
  if (p >= end || (*p != '"' && *p != '<')) return NULL;
  close = *p == '"' ? '"' : '>';
  for (q = p + 1; q < end && *q != close && *q != '\n'; q++) continue;
  if (q >= end || *q != close) return NULL;
  *angle = *p == '<';
  *name = p + 1;
  *len = (size_t)(q - p - 1);
  return q + 1;
}

static void add_computed(scanner *sc, const char *macro, size_t len, const pending_file *f,
                         int line) {
  computed_include *c;
  char where[64];
  if (CJ_VEC_RESERVE(sc->computed, sc->cap_computed, sc->n_computed + 1) != 0) {
    sc->oom = 1;
    return;
  }
  c = &sc->computed[sc->n_computed];
  memset(c, 0, sizeof *c);
  snprintf(where, sizeof where, ":%d", line);
  c->macro = cj_memdup(macro, len);
  c->dir = f->dir ? cj_strdup(f->dir) : NULL;
  c->where = cj_malloc(strlen(f->label) + strlen(where) + 1);
  if (c->where) {
    strcpy(c->where, f->label);
    strcat(c->where, where);
  }
  sc->n_computed++;
  if (!c->macro || !c->where || (f->dir && !c->dir)) sc->oom = 1;
}

static void add_macro(scanner *sc, const char *name, size_t name_len, const char *value,
                      size_t value_len, int angle) {
  header_macro *m;
  if (CJ_VEC_RESERVE(sc->macros, sc->cap_macros, sc->n_macros + 1) != 0) {
    sc->oom = 1;
    return;
  }
  m = &sc->macros[sc->n_macros++];
  m->name = cj_memdup(name, name_len);
  m->value = cj_memdup(value, value_len);
  m->angle = angle;
  if (!m->name || !m->value) sc->oom = 1;
}

/* The operand of #include / __has_include at p. Returns where it ends, or NULL when it is
 * a header name left open (no header name can follow it on the line). */
static const char *operand(scanner *sc, const char *p, const char *end, const pending_file *f,
                           int line, int all) {
  const char *name, *after;
  size_t n;
  int angle;
  p = blank_end(p, end);
  if (p < end && (*p == '"' || *p == '<')) {
    after = header_name(p, end, &name, &n, &angle);
    if (after) resolve(sc, name, n, angle ? NULL : f->dir, all);
    return after;
  }
  n = ident_len(p, end);
  if (n) add_computed(sc, p, n, f, line);
  return p + n;
}

/* #define NAME "x.h" (or <x.h>): remembered for #include NAME. */
static void define(scanner *sc, const char *p, const char *end) {
  const char *name = blank_end(p, end), *value;
  size_t n = ident_len(name, end), vn;
  int angle;
  if (!n || (name + n < end && name[n] == '(')) return;
  if (header_name(blank_end(name + n, end), end, &value, &vn, &angle) && vn)
    add_macro(sc, name, n, value, vn, angle);
}

/* __has_include("x.h") in an #if or #elif line: the header's presence changes the output,
 * so it is followed like an include. */
static void has_include(scanner *sc, const char *p, const char *end, const pending_file *f,
                        int line) {
  static const char kw[] = "__has_include";
  const char *q = p;
  while (q && (q = memmem(q, (size_t)(end - q), kw, sizeof kw - 1)) != NULL) {
    q += sizeof kw - 1;
    if (end - q >= 5 && memcmp(q, "_next", 5) == 0) q += 5;
    q = blank_end(q, end);
    if (q < end && *q == '(') q = operand(sc, q + 1, end, f, line, 1);
  }
}

/* A directive's logical line from just after its '#' to its end, comments made blanks and
 * line splices removed. */
static void directive(scanner *sc, const char *p, const char *end, const pending_file *f,
                      int line) {
  size_t n;
  p = blank_end(p, end);
  n = ident_len(p, end);
  if (word_is(p, n, "include") || word_is(p, n, "include_next"))
    operand(sc, p + n, end, f, line, word_is(p, n, "include_next"));
  else if (word_is(p, n, "define"))
    define(sc, p + n, end);
  else if (word_is(p, n, "if") || word_is(p, n, "elif"))
    has_include(sc, p + n, end, f, line);
}

/* ---- finding directives: one pass over a file ----
 * A small lexer that knows line splices, comments, string and character literals (one
 * left open ends with its line), raw strings and numbers with digit separators, so that
 * it looks at every byte a bounded number of times. A directive is a '#' (or "%:") that is
 * the first token of a logical line; a block comment before it is a blank, even one that
 * spans lines. */

/* Bytes examined by this thread's scans, for the test that the scan is linear; each file's
 * lexer counts its own and adds them here once (a thread-local variable of a shared
 * library costs a call to reach, which once a byte was most of the scan). */
static _Thread_local uint64_t examined;

uint64_t cj_scan_bytes_examined(void) { return examined; }

typedef struct lexer {
  scanner *sc;
  const pending_file *f;
  const char *p, *end; /* p never rests on a line splice */
  const char *counted; /* the newlines before it are counted in line */
  int line;
  int keep;          /* 1 while a directive's line is copied to sc->dline */
  uint64_t examined; /* bytes looked at */
} lexer;

/* The length of a line splice (a backslash ending a line) at p, or 0. */
static size_t splice_at(const char *p, const char *end) {
  if (p >= end || *p != '\\') return 0;
  if (end - p >= 2 && p[1] == '\n') return 2;
  if (end - p >= 3 && p[1] == '\r' && p[2] == '\n') return 3;
  return 0;
}

static const char *past_splices(lexer *lx, const char *p) {
  size_t n;
  while ((n = splice_at(p, lx->end)) != 0) {
    p += n;
    lx->examined += n;
  }
  return p;
}

static int cur(const lexer *lx) { return lx->p < lx->end ? (unsigned char)*lx->p : -1; }

/* The character after the current one, or -1. */
static int ahead(lexer *lx) {
  const char *q;
  if (lx->p >= lx->end) return -1;
  q = past_splices(lx, lx->p + 1);
  return q < lx->end ? (unsigned char)*q : -1;
}

static void put(scanner *sc, char c) {
  if (CJ_VEC_RESERVE(sc->dline, sc->cap_dline, sc->n_dline + 1) != 0) {
    sc->oom = 1;
    return;
  }
  sc->dline[sc->n_dline++] = c;
}

/* Moves past the current character (copying it while a directive is kept). */
static void step(lexer *lx) {
  if (lx->keep) put(lx->sc, *lx->p);
  lx->p = past_splices(lx, lx->p + 1);
  lx->examined++;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* A character of an identifier or a number (bytes of UTF-8 sequences included). */
static int word_char(int c) { return c >= 0x80 || (c >= 0 && ident_char((char)c)) || c == '$'; }

/* The line of `at`, which never goes back. */
static int line_at(lexer *lx, const char *at) {
  const char *q;
  while ((q = memchr(lx->counted, '\n', (size_t)(at - lx->counted))) != NULL) {
    lx->line++;
    lx->counted = q + 1;
  }
  lx->examined += (size_t)(at - lx->counted);
  lx->counted = at;
  return lx->line;
}

/* Past a comment (a block or a line comment at p); a block comment is copied as one blank. One left
 * open takes the rest of the file; a line comment stops before its newline. */
static void comment(lexer *lx) {
  int keep = lx->keep, block = ahead(lx) == '*';
  lx->keep = 0;
  step(lx);
  step(lx);
  if (block) {
    while (lx->p < lx->end && !(*lx->p == '*' && ahead(lx) == '/')) step(lx);
    if (lx->p < lx->end) {
      step(lx);
      step(lx);
    }
  } else {
    while (lx->p < lx->end && *lx->p != '\n') step(lx);
  }
  lx->keep = keep;
  if (keep) put(lx->sc, ' ');
}

/* Past a string or character literal; one left open ends with its line. */
static void quoted(lexer *lx) {
  int close = cur(lx), c;
  step(lx);
  while (lx->p < lx->end && *lx->p != '\n') {
    c = cur(lx);
    step(lx);
    if (c == close) return;
    if (c == '\\' && lx->p < lx->end && *lx->p != '\n') step(lx);
  }
}

static int delimiter_char(char c) {
  return c > ' ' && c < 127 && c != '(' && c != ')' && c != '\\';
}

/* Where the raw string whose '"' is at q ends (its text read as written, splices kept);
 * the end of the file when it is left open. NULL when q does not open a raw string. */
static const char *raw_string_end(const char *q, const char *end, uint64_t *looked) {
  const char *d = q + 1, *c = d;
  size_t n;
  while (c < end && c - d <= 16 && delimiter_char(*c)) c++;
  if (c >= end || *c != '(' || c - d > 16) return NULL;
  n = (size_t)(c - d);
  while ((c = memchr(c, ')', (size_t)(end - c))) != NULL) {
    *looked += n + 1;
    if ((size_t)(end - c) > n + 1 && memcmp(c + 1, d, n) == 0 && c[n + 1] == '"') return c + n + 2;
    c++;
  }
  return end;
}

/* Past the raw string that may follow a prefix of `n` characters (R, LR, uR, UR, u8R). */
static void raw_string(lexer *lx, const char *prefix, size_t n) {
  const char *stop;
  if (cur(lx) != '"' || n == 0 || n > 3 || prefix[n - 1] != 'R') return;
  if (n == 2 && prefix[0] != 'L' && prefix[0] != 'u' && prefix[0] != 'U') return;
  if (n == 3 && (prefix[0] != 'u' || prefix[1] != '8')) return;
  if (!(stop = raw_string_end(lx->p, lx->end, &lx->examined)))
    return; /* not raw: an ordinary string */
  lx->examined += (size_t)(stop - lx->p);
  while (lx->keep && lx->p < stop && !lx->sc->oom) put(lx->sc, *lx->p++);
  lx->p = past_splices(lx, stop);
}

/* Past an identifier, and past the raw string it may prefix. */
static void identifier(lexer *lx) {
  char prefix[4];
  size_t n = 0;
  while (word_char(cur(lx))) {
    if (n < sizeof prefix) prefix[n] = *lx->p;
    n++;
    step(lx);
  }
  raw_string(lx, prefix, n);
}

/* Past a number, its digit separators (1'000) and exponent signs (1e+5) included. */
static void number(lexer *lx) {
  int c, next;
  step(lx);
  for (;;) {
    c = cur(lx);
    if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') &&
        ((next = ahead(lx)) == '+' || next == '-')) {
      step(lx);
      step(lx);
    } else if (c == '\'' && word_char(ahead(lx))) {
      step(lx);
      step(lx);
    } else if (word_char(c) || c == '.') {
      step(lx);
    } else {
      return;
    }
  }
}

/* Past one token or blank, never past the newline that ends the line. */
static void token(lexer *lx) {
  int c = cur(lx), next = ahead(lx);
  if (c == '/' && (next == '*' || next == '/'))
    comment(lx);
  else if (c == '"' || c == '\'')
    quoted(lx);
  else if (is_digit(c) || (c == '.' && is_digit(next)))
    number(lx);
  else if (word_char(c))
    identifier(lx);
  else
    step(lx);
}

/* Past blanks and block comments (which may span lines). */
static void blanks(lexer *lx) {
  for (;;) {
    if (blank(cur(lx)))
      step(lx);
    else if (cur(lx) == '/' && ahead(lx) == '*')
      comment(lx);
    else
      return;
  }
}

/* 1 when the directive copied so far is "include" or "include_next". */
static int include_so_far(const scanner *sc) {
  const char *p, *end;
  size_t n;
  if (sc->n_dline == 0) return 0;
  end = sc->dline + sc->n_dline;
  p = blank_end(sc->dline, end);
  n = ident_len(p, end);
  return word_is(p, n, "include") || word_is(p, n, "include_next");
}

/* A directive whose '#' (or "%:") is at `hash` and was just passed: its logical line is
 * copied to sc->dline and handed to directive(). An include's <name> is copied whole, so
 * that a comment's opening in it opens none. */
static void directive_line(lexer *lx, const char *hash) {
  scanner *sc = lx->sc;
  int line = line_at(lx, hash);
  sc->n_dline = 0;
  lx->keep = 1;
  blanks(lx);
  if (word_char(cur(lx))) identifier(lx);
  blanks(lx);
  if (cur(lx) == '<' && include_so_far(sc))
    while (lx->p < lx->end && *lx->p != '\n' && *lx->p != '>') step(lx);
  while (lx->p < lx->end && *lx->p != '\n') token(lx);
  lx->keep = 0;
  lx->examined += sc->n_dline;
  if (!sc->oom && sc->n_dline) /* "#" alone is a null directive */
    directive(sc, sc->dline, sc->dline + sc->n_dline, lx->f, line);
}

/* Whether text[0, len) may hold a directive: a '#', a "%:", or a line splice (which can
 * join the two characters of "%:"). A text with none has nothing to find. */
static int may_have_directive(const char *text, size_t len) {
  const char *end = text + len, *q = text;
  if (memchr(text, '#', len) || memchr(text, '\\', len)) return 1;
  for (; q < end && (q = memchr(q, '%', (size_t)(end - q))) != NULL; q++)
    if (q + 1 < end && q[1] == ':') return 1;
  return 0;
}

/* Past the rest of the current line when it holds nothing that changes what follows: no
 * comment, literal or splice can start where none of '/', '"', '\'' and '\\' is; such a
 * line is skipped at once instead of token by token. */
static void rest_of_line(lexer *lx) {
  const char *nl, *q;
  if (lx->p >= lx->end) return;
  if (!(nl = memchr(lx->p, '\n', (size_t)(lx->end - lx->p)))) nl = lx->end;
  for (q = lx->p; q < nl; q++)
    if (*q == '/' || *q == '"' || *q == '\'' || *q == '\\') break;
  lx->examined += (size_t)(q - lx->p);
  if (q == nl) {
    lx->p = nl;
    return;
  }
  while (lx->p < lx->end && *lx->p != '\n') token(lx);
}

static void scan_text(scanner *sc, const pending_file *f) {
  lexer lx;
  const char *hash;
  if (!may_have_directive(f->text, f->len)) {
    examined += f->len;
    return;
  }
  memset(&lx, 0, sizeof lx);
  lx.sc = sc;
  lx.f = f;
  lx.end = f->text + f->len;
  lx.p = past_splices(&lx, f->text);
  lx.counted = f->text;
  lx.line = 1;
  while (lx.p < lx.end && !sc->oom && !sc->bypass[0]) {
    blanks(&lx);
    hash = lx.p;
    if (cur(&lx) == '#' || (cur(&lx) == '%' && ahead(&lx) == ':')) {
      step(&lx);
      if (*hash == '%') step(&lx);
      directive_line(&lx, hash);
    }
    rest_of_line(&lx);
    if (lx.p < lx.end) step(&lx);
  }
  examined += lx.examined;
}

/* ---- options that change the search, or that cannot be cached ---- */

/* "-Xvalue", "-X=value", "-X value" or the next string; also "--long=value" or the next
 * string. Returns the value (NULL when o is not this option) and advances *i past it. */
static const char *option_value(const cj_request *r, size_t *i, const char *shrt, const char *lng) {
  const char *o = r->user_options[*i];
  size_t ls = shrt ? strlen(shrt) : 0, ll = strlen(lng);
  if ((shrt && strcmp(o, shrt) == 0) || strcmp(o, lng) == 0)
    return *i + 1 < r->n_user_options ? r->user_options[++*i] : NULL;
  if (strncmp(o, lng, ll) == 0 && o[ll] == '=') return o + ll + 1;
  if (shrt && strncmp(o, shrt, ls) == 0) {
    o += ls;
    if (*o == '=') o++;
    while (*o == ' ') o++;
    return o;
  }
  return NULL;
}

static int option_is(const char *o, const char *name) {
  size_t n = strlen(name);
  return strncmp(o, name, n) == 0 && (o[n] == '\0' || o[n] == '=');
}

/* NVRTC options that read or write files cujit cannot key on, or that must run. */
static const char *const untracked[] = {"-pch",
                                        "--pch",
                                        "-create-pch",
                                        "--create-pch",
                                        "-use-pch",
                                        "--use-pch",
                                        "-pch-dir",
                                        "--pch-dir",
                                        "-time",
                                        "--time",
                                        "-fdevice-time-trace",
                                        "--fdevice-time-trace"};

static int read_options(scanner *sc) {
  const cj_request *r = sc->r;
  size_t i, k, n_inc = cj_request_include_count(r);
  const char *v;
  sc->dirs = cj_calloc(n_inc + r->n_user_options + 1, sizeof *sc->dirs);
  sc->pre = cj_calloc(r->n_user_options + 1, sizeof *sc->pre);
  if (!sc->dirs || !sc->pre) return -1;
  for (i = 0; i < n_inc; i++) sc->dirs[sc->n_dirs++] = cj_request_include_dir(r, i);
  for (i = 0; i < r->n_user_options; i++) {
    const char *o = r->user_options[i];
    for (k = 0; k < CJ_COUNT(untracked); k++)
      if (option_is(o, untracked[k]))
        set_bypass(sc, "NVRTC option '%s' reads or writes files%s", o,
                   " that the cache cannot track");
    if (strcmp(o, "-no-source-include") == 0 || strcmp(o, "--no-source-include") == 0)
      sc->source_include = 0;
    else if ((v = option_value(r, &i, "-include", "--pre-include")) != NULL)
      sc->pre[sc->n_pre++] = v;
    else if ((v = option_value(r, &i, "-I", "--include-path")) != NULL)
      sc->dirs[sc->n_dirs++] = v;
  }
  sc->toolkit = cj_calloc(sc->n_dirs + 1, 1);
  if (!sc->toolkit) return -1;
  for (i = 0; i < sc->n_dirs; i++) sc->toolkit[i] = (unsigned char)is_toolkit_dir(sc->dirs[i]);
  return 0;
}

/* ---- the scan ---- */

static void drain(scanner *sc) {
  while (sc->head < sc->n_queue && !sc->oom && !sc->bypass[0]) {
    size_t i = sc->head++;
    pending_file f = sc->queue[i]; /* a copy: the scan queues files, which moves the queue */
    scan_text(sc, &f);
    if (f.owned) cj_free(f.text);
    sc->queue[i].text = NULL;
  }
}

/* Header-name macros also come from the defines ("NAME=\"x.h\""). */
static void option_macros(scanner *sc) {
  size_t i;
  for (i = 0; i < sc->r->n_defines; i++) {
    const char *d = sc->r->defines[i], *eq = strchr(d, '='), *value;
    size_t vn;
    int angle;
    if (!eq) continue;
    if (header_name(eq + 1, eq + strlen(eq), &value, &vn, &angle) && vn)
      add_macro(sc, d, (size_t)(eq - d), value, vn, angle);
  }
}

/* Resolves #include MACRO with every definition of MACRO seen; 1 if anything was new. */
static int resolve_computed(scanner *sc) {
  size_t i, k, before = sc->n_queue;
  for (i = 0; i < sc->n_computed; i++) {
    computed_include *c = &sc->computed[i];
    for (k = 0; k < sc->n_macros; k++) {
      header_macro *m = &sc->macros[k];
      if (strcmp(m->name, c->macro) != 0) continue;
      c->resolved = 1;
      resolve(sc, m->value, strlen(m->value), m->angle ? NULL : c->dir, 0);
    }
  }
  return sc->n_queue != before;
}

static void scan_all(scanner *sc) {
  size_t i;
  for (i = 0; i < sc->n_pre && !sc->oom; i++) resolve(sc, sc->pre[i], strlen(sc->pre[i]), "", 0);
  if (!sc->oom && enqueue(sc, (char *)sc->r->source, sc->r->source_len, 0, dir_part(sc->r->name),
                          cj_strdup(sc->r->name)) != 0)
    return;
  option_macros(sc);
  do drain(sc);
  while (!sc->oom && !sc->bypass[0] && resolve_computed(sc));
  for (i = 0; i < sc->n_computed && !sc->bypass[0]; i++)
    if (!sc->computed[i].resolved)
      set_bypass(sc,
                 "%s: #include %s names a header through a macro that is not defined "
                 "as \"file\" or <file>",
                 sc->computed[i].where, sc->computed[i].macro);
}

static void scanner_free(scanner *sc) {
  size_t i;
  for (i = sc->head; i < sc->n_queue; i++)
    if (sc->queue[i].owned) cj_free(sc->queue[i].text);
  for (i = 0; i < sc->n_queue; i++) {
    cj_free(sc->queue[i].dir);
    cj_free(sc->queue[i].label);
  }
  for (i = 0; i < sc->n_computed; i++) {
    cj_free(sc->computed[i].macro);
    cj_free(sc->computed[i].dir);
    cj_free(sc->computed[i].where);
  }
  for (i = 0; i < sc->n_macros; i++) {
    cj_free(sc->macros[i].name);
    cj_free(sc->macros[i].value);
  }
  for (i = 0; i < sc->cap_done; i++) cj_free(sc->done[i].key);
  cj_free(sc->done);
  cj_free(sc->dline);
  cj_free(sc->toolkit);
  cj_free(sc->queue);
  cj_free(sc->computed);
  cj_free(sc->macros);
  cj_free(sc->dirs);
  cj_free(sc->pre);
  cj_free(sc->memory_seen);
}

cujit_status cj_scan_request(const cj_request *r, cj_deps **deps, char *bypass,
                             size_t bypass_size) {
  scanner sc;
  memset(&sc, 0, sizeof sc);
  *deps = NULL;
  bypass[0] = '\0';
  sc.r = r;
  sc.bypass = bypass;
  sc.bypass_size = bypass_size;
  sc.source_include = 1;
  sc.deps = cj_calloc(1, sizeof *sc.deps);
  sc.memory_seen = cj_calloc(r->n_headers + 1, 1);
  if (!sc.deps || !sc.memory_seen || read_options(&sc) != 0)
    sc.oom = 1;
  else if (!bypass[0])
    scan_all(&sc);
  scanner_free(&sc);
  if (sc.oom) {
    cj_deplist_destroy(sc.deps);
    bypass[0] = '\0';
    return cj_fail_oom("scanning the source's includes");
  }
  *deps = sc.deps;
  return CUJIT_OK;
}

/* ewtext.c - what an elementwise operation's text says about how it touches its arrays:
 * whether every array is read or written only as `name[i]`, i being the loop's index, so
 * that the generator may run it on chunks of consecutive elements held in registers
 * (elementwise.c). The text is CUDA C++, read by a tokeniser, not a parser: anything it
 * cannot vouch for makes the answer "no", and the operation then runs as it is written,
 * one i at a time.
 *
 * Yes needs all of these:
 *  - no loop_prep or after_loop (they could name the arrays or keep state across i), and a
 *    preamble without preprocessor lines (a macro could hide an index);
 *  - the operation's tokens all known: no preprocessor, line splice, raw string, digraph;
 *  - each array named only as `name [ i ]`, never after `&`, `.`, `->` or `::`, never
 *    followed by `[` or `(`;
 *  - `i` elsewhere only where it cannot be declared again (after an operator that takes a
 *    value), so that every `[i]` is the loop's element;
 *  - nothing whose meaning depends on the thread or on the loop around the operation:
 *    return, break, continue, goto, asm, the thread and block indices, barriers and warp
 *    operations, shared memory, lambdas, names of cujit's own (cj_...).
 * Besides yes or no it says which arrays the operation uses, which it may write (after an
 * assignment, ++ or --, before a member, or as an argument of a call when the preamble has
 * an `&`, so that its functions may take references) and which it assigns whole first (a
 * statement of its own, `name[i] = ...`, before anything else names the array): those
 * need not be read. Where it misses a write (`(z[i]) = 1`), the kernel with chunks reads
 * the array as const and does not compile, and elementwise.c uses the one at a time. */
#include <string.h>

#include "gen/gen.h"

enum { TK_IDENT, TK_NUMBER, TK_LITERAL, TK_PUNCT };

typedef struct tok {
  int kind;
  const char *s;
  size_t n;
} tok;

typedef struct toks {
  tok *t;
  size_t n, cap;
} toks;

static int is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Punctuators, longest first. Digraphs and `#` are left out: the tokeniser refuses them. */
static const char *const puncts[] = {"<<=", ">>=", "->*", "...", "->", "++", "--", "<<", ">>", "<=",
                                     ">=",  "==",  "!=",  "&&",  "||", "+=", "-=", "*=", "/=", "%=",
                                     "&=",  "|=",  "^=",  "::",  ".*", "{",  "}",  "[",  "]",  "(",
                                     ")",   ";",   ":",   ",",   ".",  "?",  "+",  "-",  "*",  "/",
                                     "%",   "&",   "|",   "^",   "!",  "~",  "=",  "<",  ">"};

static int push(toks *ts, int kind, const char *s, size_t n) {
  if (CJ_VEC_RESERVE(ts->t, ts->cap, ts->n + 1) != 0) return -1;
  ts->t[ts->n++] = (tok){kind, s, n};
  return 0;
}

/* The end of a string or character literal opened at p (its quote), or NULL. */
static const char *literal_end(const char *p) {
  char q = *p++;
  for (; *p && *p != q && *p != '\n'; p++)
    if (*p == '\\' && !*++p) return NULL;
  return *p == q ? p + 1 : NULL;
}

/* The end of the punctuator at p, or NULL for a character the tokeniser does not take. */
static const char *punct_end(const char *p) {
  size_t i, n;
  if ((p[0] == '<' && (p[1] == ':' || p[1] == '%')) || (p[0] == '%' && p[1] == ':') ||
      (p[0] == '?' && p[1] == '?'))
    return NULL; /* digraphs (and trigraphs): `<:` is `[`, `%:` is `#` */
  for (i = 0; i < CJ_COUNT(puncts); i++) {
    n = strlen(puncts[i]);
    if (strncmp(p, puncts[i], n) == 0) return p + n;
  }
  return NULL;
}

/* Splits `s` into tokens, comments and spaces left out. -1 for what it does not take (or
 * out of memory). */
static int tokenize(const char *s, toks *ts) {
  const char *p = s, *e;
  while (*p) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
      p++;
    } else if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      if (!(e = strstr(p + 2, "*/"))) return -1;
      p = e + 2;
    } else if (is_ident_start(*p)) {
      for (e = p; is_ident_char(*e); e++) continue;
      if (*e == '"' && e[-1] == 'R') return -1; /* a raw string */
      if (push(ts, TK_IDENT, p, (size_t)(e - p)) != 0) return -1;
      p = e;
    } else if (is_digit(*p) || (*p == '.' && is_digit(p[1]))) {
      for (e = p; is_ident_char(*e) || *e == '.' || *e == '\'' ||
                  ((*e == '+' || *e == '-') && strchr("eEpP", e[-1]));
           e++)
        continue;
      if (push(ts, TK_NUMBER, p, (size_t)(e - p)) != 0) return -1;
      p = e;
    } else if (*p == '"' || *p == '\'') {
      if (!(e = literal_end(p)) || push(ts, TK_LITERAL, p, (size_t)(e - p)) != 0) return -1;
      p = e;
    } else {
      if (!(e = punct_end(p)) || push(ts, TK_PUNCT, p, (size_t)(e - p)) != 0) return -1;
      p = e;
    }
  }
  return 0;
}

static int is(const tok *t, const char *s) {
  return t && t->n == strlen(s) && strncmp(t->s, s, t->n) == 0;
}
static int is_kind(const tok *t, int kind) { return t && t->kind == kind; }
static int is_one_of(const tok *t, const char *const *list, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (is(t, list[i])) return 1;
  return 0;
}

/* Names whose meaning depends on the thread, the block or the loop around the operation. */
static int forbidden(const tok *t) {
  static const char *const names[] = {"return", "break", "continue", "goto", "asm", "__asm",
                                      "__asm__", "threadIdx", "blockIdx", "blockDim", "gridDim",
                                      "warpSize", "__shared__", "__syncwarp", "__activemask",
                                      "cooperative_groups", "this_grid", "this_thread_block",
                                      "tiled_partition", "coalesced_threads", "const_cast",
                                      "__builtin_assume_aligned",
                                      /* a declarator may follow their parentheses */
                                      "decltype", "typeof", "__typeof__", "__typeof", "alignas",
                                      "_Alignas", "__attribute__", "__align__", "__declspec"};
  static const char *const prefixes[] = {"cj_",    "__syncthreads", "__shfl",  "__ballot", "__all_",
                                         "__any_", "__uni",         "__match", "__reduce_"};
  size_t i;
  if (is_one_of(t, names, CJ_COUNT(names))) return 1;
  for (i = 0; i < CJ_COUNT(prefixes); i++)
    if (t->n >= strlen(prefixes[i]) && strncmp(t->s, prefixes[i], strlen(prefixes[i])) == 0)
      return 1;
  return 0;
}

static const char *const assigns[] = {"=",  "+=", "-=",  "*=",  "/=", "%=", "&=",
                                      "|=", "^=", "<<=", ">>=", "++", "--"};

/* Whether a bare `i` at t (tokens before it: p, then pp) is a value and cannot be a
 * declaration of another i: after an operator that takes a value. */
static int i_is_value(const tok *pp, const tok *p) {
  static const char *const ops[] = {"=",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=",
                                    "^=", "<<=", ">>=", "+",  "-",  "/",  "%",  "<",
                                    "<=", ">=",  "==",  "!=", "!",  "~",  "^",  "|",
                                    "||", "?",   ":",   "[",  ")",  "<<", ";",  "{"};
  static const char *const conds[] = {"if", "while", "switch", "sizeof"};
  if (!p || is_one_of(p, ops, CJ_COUNT(ops))) return 1;
  if (is(p, "*") || is(p, "&") || is(p, "&&")) /* binary: after a value, not a type */
    return is_kind(pp, TK_NUMBER) || is_kind(pp, TK_LITERAL) || is(pp, ")") || is(pp, "]");
  if (is(p, "(")) /* grouping, or a condition: not `T (i)` nor a call */
    return !pp || (!is_kind(pp, TK_IDENT) && !is(pp, ">")) || is_one_of(pp, conds, CJ_COUNT(conds));
  return 0;
}

/* The array declared with this name, or -1. */
static int array_named(const tok *t, const cj_gen_decl *d, size_t n) {
  size_t k;
  for (k = 0; k < n; k++)
    if (d[k].is_array && t->n == strlen(d[k].name) && strncmp(t->s, d[k].name, t->n) == 0)
      return (int)k;
  return -1;
}

/* Whether the statement from token j (after `name[i] =`) to the next `;` outside brackets
 * names the array again. */
static int named_again(const toks *ts, size_t j, const tok *name) {
  int depth = 0;
  for (; j < ts->n; j++) {
    const tok *t = &ts->t[j];
    if (is(t, "(") || is(t, "[") || is(t, "{")) depth++;
    if (is(t, ")") || is(t, "]") || is(t, "}")) depth--;
    if (depth == 0 && is(t, ";")) return 0;
    if (t->kind == TK_IDENT && t->n == name->n && strncmp(t->s, name->s, t->n) == 0) return 1;
  }
  return 0;
}

enum { MAX_DEPTH = 64 };

/* The walk's state: open brackets (and whether each `(` or `{` takes arguments: a call,
 * a constructor), depth. */
typedef struct walk {
  char open[MAX_DEPTH];
  char call[MAX_DEPTH];
  int depth;
} walk;

static int walk_bracket(walk *w, const tok *p, const tok *t) {
  static const char *const not_calls[] = {"if", "while", "for", "switch", "return", "sizeof"};
  char c = t->s[0];
  if (t->kind != TK_PUNCT || t->n != 1) return 0;
  if (c == '(' || c == '[' || c == '{') {
    if (w->depth == MAX_DEPTH) return -1;
    w->open[w->depth] = c;
    w->call[w->depth] = (c != '[') && p &&
                        (is(p, ">") || is(p, ")") || is(p, "]") ||
                         (p->kind == TK_IDENT && !is_one_of(p, not_calls, CJ_COUNT(not_calls))));
    w->depth++;
    return 0;
  }
  if (c == ')' || c == ']' || c == '}') {
    if (w->depth == 0 || w->open[w->depth - 1] != (c == ')' ? '(' : c == ']' ? '[' : '{'))
      return -1;
    w->depth--;
  }
  return 0;
}

/* One use of array k at token j (`name [ i ]` checked by the caller): what it tells. */
static void array_use(const toks *ts, size_t j, int k, const walk *w, int may_take_refs,
                      cj_gen_ew_access *a) {
  const tok *p = j ? &ts->t[j - 1] : NULL, *q = j + 4 < ts->n ? &ts->t[j + 4] : NULL;
  uint64_t bit = (uint64_t)1 << k;
  int as_arg = p && (is(p, "(") || is(p, ",")) && w->depth && w->call[w->depth - 1];
  if (is_one_of(q, assigns, CJ_COUNT(assigns)) || is(p, "++") || is(p, "--") || is(q, ".") ||
      is(q, "->") || is(q, ".*") || is(q, "->*") || (as_arg && may_take_refs))
    a->written |= bit;
  if (!(a->used & bit) && w->depth == 0 && (!p || is(p, ";")) && is(q, "=") &&
      !named_again(ts, j + 5, &ts->t[j]))
    a->whole |= bit;
  a->used |= bit;
}

/* The walk over the operation's tokens; 0 when it can be run on chunks. */
static int scan(const toks *ts, const cj_gen_decl *d, size_t n, int may_take_refs,
                cj_gen_ew_access *a) {
  walk w;
  size_t j;
  memset(&w, 0, sizeof w);
  for (j = 0; j < ts->n; j++) {
    const tok *t = &ts->t[j], *p = j ? &ts->t[j - 1] : NULL, *pp = j > 1 ? &ts->t[j - 2] : NULL;
    int k;
    if (t->kind == TK_IDENT && forbidden(t)) return -1;
    if (is(t, "&") || is(t, "&&")) { /* binary only: not an address, not a reference */
      if (!(is_kind(p, TK_NUMBER) || is_kind(p, TK_LITERAL) || is(p, ")") || is(p, "]"))) return -1;
    }
    if (is(t, "[") && (!(is_kind(p, TK_IDENT) || is(p, "]") || is(p, ")")) || is(p, "auto")))
      return -1; /* a lambda, or a structured binding: auto [i, j] = ... */
    if (t->kind == TK_IDENT && (k = array_named(t, d, n)) >= 0) {
      const tok *q = j + 4 < ts->n ? &ts->t[j + 4] : NULL;
      if (is(p, ".") || is(p, "->") || is(p, "::") || is(p, ".*") || is(p, "->*") ||
          (is_kind(p, TK_IDENT) && !is(p, "sizeof") && !is(p, "else") && !is(p, "do")))
        return -1;
      if (j + 3 >= ts->n || !is(&ts->t[j + 1], "[") || !is(&ts->t[j + 2], "i") ||
          !is(&ts->t[j + 3], "]") || is(q, "[") || is(q, "("))
        return -1;
      array_use(ts, j, k, &w, may_take_refs, a);
      j += 3; /* past `[ i ]`, which open and close nothing else */
      continue;
    }
    if (is(t, "i") && !i_is_value(pp, p)) return -1;
    if (walk_bracket(&w, p, t) != 0) return -1;
  }
  return w.depth == 0 ? 0 : -1;
}

void cj_gen_ew_access_of(const char *op, const cj_gen_decl *d, size_t n, const char *preamble,
                         const char *loop_prep, const char *after_loop, cj_gen_ew_access *a) {
  toks ts = {NULL, 0, 0};
  size_t k;
  int ok;
  memset(a, 0, sizeof a[0]);
  if ((loop_prep && loop_prep[0]) || (after_loop && after_loop[0]) || n > 64) return;
  if (preamble && (strchr(preamble, '#') || strstr(preamble, "%:") || strstr(preamble, "cj_")))
    return;
  for (k = 0; k < n; k++)
    if (strcmp(d[k].name, "i") == 0 || strncmp(d[k].name, "cj_", 3) == 0) return;
  ok = tokenize(op, &ts) == 0 && scan(&ts, d, n, preamble && strchr(preamble, '&'), a) == 0;
  cj_free(ts.t);
  if (!ok || !a->used) memset(a, 0, sizeof a[0]);
  a->chunks = ok && a->used;
}

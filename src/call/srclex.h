/* srclex.h - a small lexer for CUDA C sources, enough to read declarations: comments and
 * literals are skipped, object-like macros are expanded, `#if 0` blocks are dropped and other
 * directives are ignored. Private; not installed. */
#ifndef CUJIT_SRCLEX_H
#define CUJIT_SRCLEX_H

#include <stdint.h>

#include "common/common.h"

typedef enum cj_tok_kind {
  CJ_TOK_IDENT,
  CJ_TOK_NUMBER,
  CJ_TOK_STRING, /* string or character literal */
  CJ_TOK_PUNCT,  /* "::", "&&", "...", "->" or one character */
  CJ_TOK_AMBIG   /* a macro defined more than once, left unexpanded (its name) */
} cj_tok_kind;

typedef struct cj_tok {
  const char *p; /* in the source (or in a macro's body there) */
  uint32_t len;
  uint32_t line; /* where it appears in the source (a macro's tokens: where it is used) */
  uint32_t kind; /* cj_tok_kind */
} cj_tok;

typedef struct cj_macro cj_macro; /* srclex.c */

typedef struct cj_lex {
  cj_tok *toks; /* the source's tokens with macros expanded */
  size_t n, cap;
  cj_tok *body; /* macro bodies' tokens */
  size_t nbody, capbody;
  cj_macro *macros;
  size_t nmacros, capmacros;
  uint32_t *slots; /* hash of macro names: index + 1, 0 for empty */
  size_t nslots;
  int oom;
} cj_lex;

/* Makes room for `need` elements of `elem` bytes in the array *v of capacity *cap
 * (doubling). Returns 0, or -1 when out of memory (the array is unchanged then). */
int cj_grow(void **v, size_t *cap, size_t need, size_t elem);

/* Lexes `src` (NUL-terminated; must outlive the result). */
cujit_status cj_lex_source(const char *src, cj_lex *lx);
void cj_lex_free(cj_lex *lx);
/* 1 when token t is exactly `s`. */
int cj_tok_is(const cj_tok *t, const char *s);
/* For a name that is a function-like macro or a macro defined more than once, writes the
 * lines it is defined on into b (if non-NULL; ", "-separated) and returns 1 (function-like) or 2
 * (defined more than once); 0 for other names. */
int cj_lex_macro_info(const cj_lex *lx, const char *name, size_t len, cj_buf *b);

#endif

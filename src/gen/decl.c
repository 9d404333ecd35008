/* decl.c - reading the generators' argument declarations ("float a, float *x, ...") into
 * names, element types and whether each is an array. The grammar is small on purpose: a
 * type from the table below (const allowed anywhere), an optional '*', a name. */
#include <ctype.h>
#include <string.h>

#include "gen/gen.h"

static int ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static cujit_status bad(const char *args, const char *at, const char *what) {
  int len = 0;
  while (at[len] && at[len] != ',' && !isspace((unsigned char)at[len]) && len < 40) len++;
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "argument declarations, column %d: %s at '%.*s' "
                 "in \"%s\" (declare each as TYPE NAME or TYPE *NAME, e.g. \"float a, float "
                 "*x\")",
                 (int)(at - args) + 1, what, len ? len : 1, *at ? at : "(end)", args);
}

/* Appends one word (an identifier, or a template like complex<float>) of the type. */
static const char *type_word(const char *p, char *words, size_t size) {
  size_t n = strlen(words);
  const char *q = p;
  while (ident_char(*q) || *q == ':' || *q == '<' || *q == '>') q++;
  if (n && n + 1 < size) words[n++] = ' ';
  while (p < q && n + 1 < size) words[n++] = *p++;
  words[n] = '\0';
  return q;
}

/* Reads one declaration from *p to the next comma or the end. */
static cujit_status one(const char *args, const char **p, cj_gen_decl *d) {
  char words[128] = "", *last;
  const char *s = *p, *name_at = NULL;
  memset(d, 0, sizeof *d);
  while (*s && *s != ',') {
    if (isspace((unsigned char)*s)) {
      s++;
    } else if (*s == '*') {
      if (d->is_array) return bad(args, s, "a pointer to a pointer is not an array");
      if (name_at) type_word(name_at, words, sizeof words); /* the type's last word */
      name_at = NULL;
      d->is_array = 1;
      s++;
    } else if (ident_start(*s)) {
      const char *w = s;
      char word[64] = "";
      s = type_word(s, word, sizeof word);
      if (strcmp(word, "const") == 0) {
        d->is_const = 1;
        continue;
      }
      if (name_at && d->is_array) return bad(args, w, "a word after the name");
      if (name_at) type_word(name_at, words, sizeof words); /* it was part of the type */
      name_at = w;
    } else {
      return bad(args, s, "an unexpected character");
    }
  }
  if (!name_at) return bad(args, s, "a declaration without a name");
  if (!words[0]) return bad(args, name_at, "a name without a type");
  if ((d->type = cj_scalar_by_spelling(words)) < 0) {
    const char *type_at = *p;
    while (isspace((unsigned char)*type_at)) type_at++;
    return bad(args, type_at, "an element type cujit does not know");
  }
  last = d->name;
  while (ident_char(*name_at) && (size_t)(last - d->name) + 1 < sizeof d->name)
    *last++ = *name_at++;
  *last = '\0';
  if (ident_char(*name_at)) return bad(args, name_at, "a name longer than 63 characters");
  *p = *s ? s + 1 : s;
  return CUJIT_OK;
}

cujit_status cj_gen_decl_parse(const char *args, cj_gen_decl **out, size_t *n) {
  const char *p = args;
  size_t cap = 0, k;
  cujit_status st = CUJIT_OK;
  *out = NULL;
  *n = 0;
  CJ_CHECK(args && args[0], CUJIT_ERROR_INVALID_VALUE,
           "argument declarations are %s; declare at least "
           "one array, e.g. \"float *x\"",
           args ? "empty" : "NULL");
  while (st == CUJIT_OK && *p) {
    if (CJ_VEC_RESERVE(*out, cap, *n + 1) != 0) {
      st = cj_fail_oom("reading argument declarations");
      break;
    }
    if ((st = one(args, &p, &(*out)[*n])) != CUJIT_OK) break;
    for (k = 0; k < *n; k++)
      if (strcmp((*out)[k].name, (*out)[*n].name) == 0)
        st = cj_fail(CUJIT_ERROR_INVALID_VALUE,
                     "argument declarations: '%s' is declared twice "
                     "in \"%s\"",
                     (*out)[k].name, args);
    ++*n;
  }
  if (st != CUJIT_OK) {
    cj_free(*out);
    *out = NULL;
    *n = 0;
  }
  return st;
}

/* runner.c - runs programs of array operations through cujit's public array API, for the
 * differential test against NumPy (difftest.py). It reads programs from standard input, one
 * statement a line, and writes what each statement did to standard output: its status,
 * whether a message came with a failure, the type and shape of the array it made or wrote,
 * and (unless --no-values) that array's bytes; after the last statement, the bytes of every
 * array still live. One process runs any number of programs, each with arrays of its own.
 * With --contiguous-values, a strided array's bytes are not read (reading it takes a
 * kernel, which the checking fake driver does not run): "~" stands for them.
 *
 * A program:
 *     program NAME
 *     v0 = host f32 [2,3] 0000803f...      (one statement a line; see README.md)
 *     v1 = binary add v0 v0
 *     v1 <- unary sin v0                   ('<-': the output is the live array v1)
 *     end
 *
 * What it writes for one:
 *     program NAME
 *     s INDEX STATUS MSG [TYPE SHAPE]      (MSG 1: a failure's message names a function)
 *     m HEX                                (after a failure: its message's first 1,000 bytes)
 *     d VAR HEX                            (the array just made or written; "~": not read)
 *     f VAR TYPE SHAPE HEX                 (after the last statement, each live array)
 *     end NAME
 * A statement that names an array the program does not hold (a failed one's) is written
 * "s INDEX skip". Output is flushed after every program, so that the last "program" line
 * names the one a crash interrupted. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit_array.h"
#include "fakedriver/checkdriver.h"

#define MAX_VARS 512
#define MAX_TOKENS 80
#define MAX_LINE (1 << 24)

static cujit_array *vars[MAX_VARS];
static int dump_values = 1;
static int contiguous_only = 0; /* --contiguous-values */

static const struct {
  const char *name;
  cujit_type type;
} type_names[] = {{"bool", CUJIT_TYPE_BOOL}, {"i8", CUJIT_TYPE_I8},     {"u8", CUJIT_TYPE_U8},
                  {"i16", CUJIT_TYPE_I16},   {"u16", CUJIT_TYPE_U16},   {"i32", CUJIT_TYPE_I32},
                  {"u32", CUJIT_TYPE_U32},   {"i64", CUJIT_TYPE_I64},   {"u64", CUJIT_TYPE_U64},
                  {"f16", CUJIT_TYPE_F16},   {"bf16", CUJIT_TYPE_BF16}, {"f32", CUJIT_TYPE_F32},
                  {"f64", CUJIT_TYPE_F64},   {"c64", CUJIT_TYPE_C64},   {"c128", CUJIT_TYPE_C128}};

static const char *const binops[] = {"add",  "sub", "mul", "div", "pow", "minimum", "maximum",
                                     "fmod", "eq",  "ne",  "lt",  "le",  "gt",      "ge"};
static const char *const unops[] = {"neg",  "fabs", "sqrt", "exp",   "log",  "log10",
                                    "sin",  "cos",  "tan",  "asin",  "acos", "atan",
                                    "sinh", "cosh", "tanh", "floor", "ceil"};
static const char *const redops[] = {"sum", "min", "max", "prod", "any", "all", "argmin", "argmax"};
static const char *const modes[] = {"raise", "wrap", "clip"};

/* A statement: its tokens, and where the words after the operation's name start. */
typedef struct stmt {
  char *tok[MAX_TOKENS];
  int n;
  int target; /* the array the result goes to: -1 none */
  int given;  /* 1: '<-', the output is that live array */
  int arg;    /* index of the first argument token */
  int bad;    /* set when a token cannot be read */
} stmt;

static const char *type_name(cujit_type t) {
  size_t i;
  for (i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (type_names[i].type == t) return type_names[i].name;
  return "?";
}

/* Looks `s` up in `names` (n of them): its index, or -1 (and st->bad set). */
static int lookup(stmt *st, const char *s, const char *const *names, int n) {
  int i;
  for (i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  st->bad = 1;
  return -1;
}

static const char *word(stmt *st, int i) {
  if (st->arg + i >= st->n) {
    st->bad = 1;
    return "";
  }
  return st->tok[st->arg + i];
}

static cujit_type type_arg(stmt *st, int i) {
  const char *s = word(st, i);
  size_t k;
  for (k = 0; k < sizeof type_names / sizeof type_names[0]; k++)
    if (strcmp(s, type_names[k].name) == 0) return type_names[k].type;
  /* a number: a type the API refuses, passed as it is */
  if (isdigit((unsigned char)s[0]) || s[0] == '-') return (cujit_type)atoi(s);
  st->bad = 1;
  return CUJIT_TYPE_BYTES;
}

static void check_host_value(cujit_type t, const unsigned char *v, const double *value);

static long long int_arg(stmt *st, int i) { return strtoll(word(st, i), NULL, 10); }

/* "d:" and the 16 hex digits of a double's bits. */
static double double_arg(stmt *st, int i) {
  const char *s = word(st, i);
  uint64_t bits;
  double d;
  if (strncmp(s, "d:", 2) != 0) {
    st->bad = 1;
    return 0;
  }
  bits = strtoull(s + 2, NULL, 16);
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* The array named by token `s` ("v12"): NULL (st->bad unset) when it is not live. */
static cujit_array *var_of(stmt *st, const char *s) {
  int k;
  if (s[0] != 'v' || !isdigit((unsigned char)s[1])) {
    st->bad = 1;
    return NULL;
  }
  k = atoi(s + 1);
  if (k < 0 || k >= MAX_VARS) {
    st->bad = 1;
    return NULL;
  }
  return vars[k];
}

static cujit_array *array_arg(stmt *st, int i) { return var_of(st, word(st, i)); }

/* "[2,3]" into shape; the number of dimensions, or -1. A negative size passes as it is. */
static int shape_arg(stmt *st, int i, int64_t *shape) {
  const char *s = word(st, i);
  int n = 0;
  if (*s++ != '[') {
    st->bad = 1;
    return -1;
  }
  while (*s && *s != ']') {
    char *end;
    if (n == 8) {
      st->bad = 1;
      return -1;
    }
    shape[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s != ']') {
      st->bad = 1;
      return -1;
    }
  }
  return n;
}

/* The axes of a reduction along axes: "[0,-1]" (naxes 2), "[]" (naxes 0, *axes NULL), or
 * "null:N" (*axes NULL, naxes N, which the API refuses above 0). Returns naxes. */
static int axes_arg(stmt *st, int i, int *axes, const int **out) {
  const char *s = word(st, i);
  int64_t v[8];
  int n, k;
  *out = NULL;
  if (strncmp(s, "null:", 5) == 0) return atoi(s + 5);
  n = shape_arg(st, i, v);
  for (k = 0; k < n; k++) axes[k] = (int)v[k];
  if (n > 0) *out = axes;
  return n < 0 ? 0 : n;
}

/* Hex digits into a new buffer (freed by the caller, one byte more for a NUL); *n gets the
 * byte count. NULL for odd digits or no memory. */
static unsigned char *unhex(const char *s, size_t *n) {
  size_t len = strlen(s), k;
  unsigned char *b;
  if (len % 2 || !(b = malloc(len / 2 + 1))) return NULL;
  for (k = 0; k < len / 2; k++) {
    unsigned v;
    if (sscanf(s + 2 * k, "%2x", &v) != 1) {
      free(b);
      return NULL;
    }
    b[k] = (unsigned char)v;
  }
  b[len / 2] = 0;
  *n = len / 2;
  return b;
}

/* `prefix` and hex digits: the bytes (see unhex), or NULL with st->bad set. */
static unsigned char *prefixed_arg(stmt *st, int i, const char *prefix, size_t *bytes) {
  const char *s = word(st, i);
  unsigned char *b = NULL;
  if (strncmp(s, prefix, 2) == 0) b = unhex(s + 2, bytes);
  if (!b) st->bad = 1;
  return b;
}

/* "x:" and an element's (or an array's) bytes. */
static unsigned char *hex_arg(stmt *st, int i, size_t *bytes) {
  return prefixed_arg(st, i, "x:", bytes);
}

/* "s:" and the hex of a text: the text, NUL-terminated. */
static char *text_arg(stmt *st, int i) {
  size_t n;
  return (char *)prefixed_arg(st, i, "s:", &n);
}

/* A typed scalar "T:x:HEX" of where/if_positive, or an array "vN". */
static cujit_arg value_arg(stmt *st, int i, unsigned char *keep, int *missing) {
  const char *s = word(st, i);
  const char *colon = strchr(s, ':');
  cujit_arg a;
  memset(&a, 0, sizeof a);
  if (s[0] == 'v') {
    cujit_array *v = var_of(st, s);
    if (!v) *missing = 1;
    return cujit_arr(v);
  }
  if (!colon) {
    st->bad = 1;
    return a;
  }
  {
    char tname[16];
    size_t k, n = (size_t)(colon - s), bytes = 0;
    cujit_type t = CUJIT_TYPE_BYTES;
    unsigned char *b;
    snprintf(tname, sizeof tname, "%.*s", (int)(n < 15 ? n : 15), s);
    for (k = 0; k < sizeof type_names / sizeof type_names[0]; k++)
      if (strcmp(tname, type_names[k].name) == 0) t = type_names[k].type;
    b = strncmp(colon + 1, "x:", 2) == 0 ? unhex(colon + 3, &bytes) : NULL;
    st->bad |= !b || t == CUJIT_TYPE_BYTES || bytes > 16;
    if (!b || bytes > 16) {
      free(b);
      return a;
    }
    memcpy(keep, b, bytes);
    free(b);
    /* as the constructors (cujit_f32(), cujit_c64() ...) make it; f16 and bf16 have none */
    return cujit_arg_scalar_(t, bytes, keep);
  }
}

/* ---- output ---- */

static void put_shape(const cujit_array *a) {
  int d, n = cujit_array_ndim(a);
  putchar('[');
  for (d = 0; d < n; d++) printf("%s%lld", d ? "," : "", (long long)cujit_array_shape(a, d));
  putchar(']');
}

static void put_hex(const cujit_array *a) {
  size_t n = cujit_array_nbytes(a), i;
  unsigned char *h;
  cujit_status st;
  if (contiguous_only && !cujit_array_contiguous(a)) {
    printf(" ~");
    return;
  }
  h = malloc(n ? n : 1);
  if (!h) {
    printf(" !oom");
    return;
  }
  st = cujit_array_read(a, h, n);
  if (st != CUJIT_OK) {
    printf(" !%d", (int)st);
  } else {
    putchar(' ');
    for (i = 0; i < n; i++) printf("%02x", h[i]);
    if (!n) putchar('-');
  }
  free(h);
}

/* ---- statements ---- */

/* The output argument of a statement: the target's array when given, else NULL (new). */
static cujit_array *out_of(const stmt *st) { return st->given ? vars[st->target] : NULL; }

/* Runs one statement whose arrays are all live; *wrote gets the array it made or wrote. */
static cujit_status run(stmt *st, cujit_array **res, cujit_array **wrote, int *missing) {
  const char *op = st->tok[st->arg - 1];
  cujit_array *o = out_of(st);
  cujit_status r = CUJIT_ERROR_INVALID_VALUE;
  int64_t shape[8];
  *res = NULL;
  *wrote = NULL;
#define ARR(i) (array_arg(st, (i)) ? array_arg(st, (i)) : (*missing = 1, (cujit_array *)NULL))
  if (strcmp(op, "empty") == 0 || strcmp(op, "zeros") == 0 || strcmp(op, "full") == 0 ||
      strcmp(op, "host") == 0) {
    cujit_type t = type_arg(st, 0);
    int nd = shape_arg(st, 1, shape);
    size_t bytes = 0;
    unsigned char *b = (op[0] == 'f' || op[0] == 'h') ? hex_arg(st, 2, &bytes) : NULL;
    if (st->bad) {
      free(b);
      return CUJIT_ERROR_INVALID_VALUE;
    }
    if (op[0] == 'e') r = cujit_array_empty(res, t, nd, shape);
    if (op[0] == 'z') r = cujit_array_zeros(res, t, nd, shape);
    if (op[0] == 'f') r = cujit_array_full(res, t, nd, shape, b);
    if (op[0] == 'h') r = cujit_array_from_host(res, t, nd, shape, b);
    free(b);
  } else if (strcmp(op, "arange") == 0) {
    cujit_type t = type_arg(st, 0);
    double a = double_arg(st, 1), b = double_arg(st, 2), c = double_arg(st, 3);
    if (!st->bad) r = cujit_array_arange(res, t, a, b, c);
  } else if (strcmp(op, "like") == 0) {
    cujit_array *a = ARR(0);
    if (a) r = cujit_array_empty_like(res, a);
  } else if (strcmp(op, "view") == 0) {
    cujit_array *a = ARR(0);
    if (a) r = cujit_array_view(a, int_arg(st, 1), int_arg(st, 2), res);
  } else if (strcmp(op, "reshape") == 0) {
    cujit_array *a = ARR(0);
    int nd = shape_arg(st, 1, shape);
    if (a && !st->bad) r = cujit_array_reshape(a, nd, shape, res);
  } else if (strcmp(op, "slice") == 0) {
    cujit_array *a = ARR(0);
    if (a)
      r = cujit_array_slice(a, (int)int_arg(st, 1), int_arg(st, 2), int_arg(st, 3), int_arg(st, 4),
                            res);
  } else if (strcmp(op, "transpose") == 0) {
    cujit_array *a = ARR(0);
    if (a) r = cujit_array_transpose(a, res);
  } else if (strcmp(op, "copy") == 0 || strcmp(op, "astype") == 0) {
    cujit_array *a = ARR(0);
    *res = o;
    if (a)
      r = op[0] == 'c' ? cujit_array_copy(a, res) : cujit_array_astype(a, type_arg(st, 1), res);
  } else if (strcmp(op, "fill") == 0 || strcmp(op, "write") == 0) {
    cujit_array *a = ARR(0);
    size_t bytes = 0;
    unsigned char *b = hex_arg(st, 1, &bytes);
    if (a && b) r = op[0] == 'f' ? cujit_array_fill(a, b) : cujit_array_write(a, b, bytes);
    free(b);
    *wrote = a;
  } else if (strcmp(op, "binary") == 0) {
    int k = lookup(st, word(st, 0), binops, 14);
    cujit_array *a = ARR(1), *b = ARR(2);
    *res = o;
    if (a && b && !st->bad) r = cujit_array_binary((cujit_binop)k, a, b, res);
  } else if (strcmp(op, "scalar") == 0) {
    int k = lookup(st, word(st, 0), binops, 14);
    cujit_array *a = ARR(1);
    double s = double_arg(st, 2);
    unsigned flags = (unsigned)int_arg(st, 3);
    *res = o;
    if (a && !st->bad) r = cujit_array_binary_scalar((cujit_binop)k, a, s, flags, res);
  } else if (strcmp(op, "unary") == 0) {
    int k = lookup(st, word(st, 0), unops, 17);
    cujit_array *a = ARR(1);
    *res = o;
    if (a && !st->bad) r = cujit_array_unary((cujit_unop)k, a, res);
  } else if (strcmp(op, "map") == 0) {
    char *expr = text_arg(st, 0);
    int n = (int)int_arg(st, 1), i;
    const char *names[CUJIT_MAP_MAX_ARRAYS];
    const cujit_array *arrays[CUJIT_MAP_MAX_ARRAYS];
    if (n < 0 || n > 8) st->bad = 1;
    for (i = 0; i < n && !st->bad; i++) {
      names[i] = word(st, 2 + 2 * i);
      arrays[i] = ARR(3 + 2 * i);
    }
    *res = o;
    if (expr && !st->bad && !*missing) r = cujit_array_map(res, expr, (size_t)n, names, arrays);
    free(expr);
  } else if (strcmp(op, "where") == 0 || strcmp(op, "ifpos") == 0) {
    unsigned char ka[16], kb[16];
    cujit_array *c = ARR(0);
    cujit_arg a = value_arg(st, 1, ka, missing), b = value_arg(st, 2, kb, missing);
    *res = o;
    if (c && !*missing && !st->bad)
      r = op[0] == 'w' ? cujit_array_where(c, a, b, res) : cujit_array_if_positive(c, a, b, res);
  } else if (strcmp(op, "take") == 0) {
    cujit_array *a = ARR(0), *i = ARR(1);
    const char *m = word(st, 2);
    int mode = isdigit((unsigned char)m[0]) || m[0] == '-' ? atoi(m) : lookup(st, m, modes, 3);
    *res = o;
    if (a && i && !st->bad) r = cujit_array_take(a, i, (cujit_index_mode)mode, res);
  } else if (strcmp(op, "put") == 0) {
    cujit_array *a = ARR(0), *i = ARR(1), *v = ARR(2);
    const char *m = word(st, 3);
    int mode = isdigit((unsigned char)m[0]) || m[0] == '-' ? atoi(m) : lookup(st, m, modes, 3);
    if (a && i && v && !st->bad) r = cujit_array_put(a, i, v, (cujit_index_mode)mode);
    *wrote = a;
  } else if (strcmp(op, "concat") == 0 || strcmp(op, "stack") == 0) {
    int n = (int)int_arg(st, 0), i;
    const cujit_array *arrays[64];
    if (n < 0 || n > 64) st->bad = 1;
    for (i = 0; i < n && !st->bad; i++) arrays[i] = ARR(1 + i);
    *res = o;
    if (!st->bad && !*missing)
      r = op[0] == 'c' ? cujit_array_concatenate((size_t)n, n ? arrays : NULL, res)
                       : cujit_array_stack((size_t)n, n ? arrays : NULL, res);
  } else if (strcmp(op, "reduce") == 0 || strcmp(op, "reduceas") == 0) {
    const char *w = word(st, 0);
    int k = isdigit((unsigned char)w[0]) || w[0] == '-' ? atoi(w) : lookup(st, w, redops, 8);
    cujit_array *a = ARR(1);
    *res = o;
    if (a && !st->bad)
      r = op[6] ? cujit_array_reduce_as((cujit_redop)k, a, type_arg(st, 2), res)
                : cujit_array_reduce((cujit_redop)k, a, res);
  } else if (strcmp(op, "reduceaxis") == 0 || strcmp(op, "reduceaxisas") == 0) {
    const char *w = word(st, 0);
    int k = isdigit((unsigned char)w[0]) || w[0] == '-' ? atoi(w) : lookup(st, w, redops, 8);
    cujit_array *a = ARR(1);
    int axes[8], naxes, keep = (int)int_arg(st, 3);
    const int *ax;
    naxes = axes_arg(st, 2, axes, &ax);
    *res = o;
    if (a && !st->bad)
      r = op[10]
              ? cujit_array_reduce_axis_as((cujit_redop)k, a, naxes, ax, keep, type_arg(st, 4), res)
              : cujit_array_reduce_axis((cujit_redop)k, a, naxes, ax, keep, res);
  } else if (strcmp(op, "dot") == 0) {
    cujit_array *a = ARR(0), *b = ARR(1);
    *res = o;
    if (a && b) r = cujit_array_dot(a, b, res);
  } else if (strcmp(op, "reducehost") == 0 || strcmp(op, "dothost") == 0) {
    /* the value into a variable of type T (its size passed), then a 0-d array of T */
    int dot = op[0] == 'd';
    const char *w = dot ? "sum" : word(st, 0);
    int k = isdigit((unsigned char)w[0]) || w[0] == '-' ? atoi(w) : lookup(st, w, redops, 8);
    cujit_array *a = ARR(dot ? 0 : 1), *b = dot ? ARR(1) : NULL;
    cujit_type t = type_arg(st, 2);
    unsigned char v[16];
    double value = 0, *pv = t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128 ? NULL : &value;
    if (a && (!dot || b) && !st->bad && !st->given) {
      size_t size = cujit_type_size(t);
      r = dot ? cujit_array_dot_host(a, b, v, size, pv)
              : cujit_array_reduce_host((cujit_redop)k, a, v, size, pv);
      if (r == CUJIT_OK) { /* value is v read as the result type (of the 0-d result's) */
        cujit_array *ref = NULL;
        if ((dot ? cujit_array_dot(a, b, &ref) : cujit_array_reduce((cujit_redop)k, a, &ref)) ==
            CUJIT_OK)
          check_host_value(cujit_array_type(ref), v, pv);
        cujit_array_destroy(ref);
        r = cujit_array_from_host(res, t, 0, NULL, v);
      }
    } else if (st->given) {
      st->bad = 1;
    }
  } else if (strcmp(op, "allclose") == 0 || strcmp(op, "allclosehost") == 0) {
    /* whether a and b are close, as a 0-d bool array */
    int host = op[8] != '\0';
    cujit_array *a = ARR(0), *b = host ? NULL : ARR(1);
    size_t bytes = 0;
    unsigned char *data = host ? hex_arg(st, 1, &bytes) : NULL;
    double rtol = double_arg(st, 2), atol = double_arg(st, 3);
    int eq = (int)int_arg(st, 4), close = -1;
    if (a && (host ? data != NULL : b != NULL) && !st->bad && !st->given) {
      r = host ? cujit_array_allclose_host(a, data, bytes, rtol, atol, eq, &close)
               : cujit_array_allclose(a, b, rtol, atol, eq, &close);
      if (r == CUJIT_OK) {
        unsigned char c = (unsigned char)close;
        if (close != 0 && close != 1) {
          fprintf(stderr, "%s: close is %d, neither 0 nor 1\n", op, close);
          abort();
        }
        r = cujit_array_from_host(res, CUJIT_TYPE_BOOL, 0, NULL, &c);
      }
    } else if (st->given) {
      st->bad = 1;
    }
    free(data);
  } else if (strcmp(op, "cumsum") == 0) {
    cujit_array *a = ARR(0);
    *res = o;
    if (a) r = cujit_array_cumsum(a, (int)int_arg(st, 1), res);
  } else if (strcmp(op, "scan") == 0) {
    cujit_type t = type_arg(st, 0);
    char *expr = text_arg(st, 1), *neutral = text_arg(st, 2);
    int exclusive = (int)int_arg(st, 3);
    cujit_array *a = ARR(4);
    cujit_scan *s = NULL;
    *res = o;
    if (a && expr && neutral && !st->bad) {
      r = cujit_scan_create(&s, t, expr, neutral, exclusive, NULL);
      if (r == CUJIT_OK) r = cujit_scan_call(s, a, res);
      cujit_scan_destroy(s);
    }
    free(expr);
    free(neutral);
  } else {
    st->bad = 1;
  }
#undef ARR
  if (*missing || st->bad) return CUJIT_ERROR_INVALID_VALUE;
  if (!*wrote) *wrote = *res;
  return r;
}

/* The double that cujit_array_reduce_host gave beside the value v (its bytes, of the
 * result type t) must be that value (64-bit integers rounded to the nearest double); a
 * runner that finds otherwise dies, which fails the run. */
static void check_host_value(cujit_type t, const unsigned char *v, const double *value) {
  double want;
  int64_t s;
  uint64_t u;
  if (!value) return;
  switch (t) {
    case CUJIT_TYPE_BOOL: want = v[0] != 0; break;
    case CUJIT_TYPE_I8: want = (int8_t)v[0]; break;
    case CUJIT_TYPE_U8: want = v[0]; break;
    case CUJIT_TYPE_I64: memcpy(&s, v, 8), want = (double)s; break;
    case CUJIT_TYPE_U64: memcpy(&u, v, 8), want = (double)u; break;
    case CUJIT_TYPE_F32: {
      float f;
      memcpy(&f, v, 4);
      want = f;
      break;
    }
    case CUJIT_TYPE_F64: memcpy(&want, v, 8); break;
    default: return; /* the 16-bit floats and the other integers: test_gpu_array_close */
  }
  if (!(*value == want || (*value != *value && want != want))) {
    fprintf(stderr, "reducehost: value %a, but the result is %a\n", *value, want);
    abort();
  }
}

/* Splits a line into tokens in place. */
static int split(char *line, char **tok) {
  int n = 0;
  char *s = strtok(line, " \t\r\n");
  while (s && n < MAX_TOKENS - 1) {
    tok[n++] = s;
    s = strtok(NULL, " \t\r\n");
  }
  return n;
}

/* A failure's message names the function that failed (every array function's does). */
static int has_message(void) {
  const char *m = cujit_last_error();
  return m && strstr(m, "cujit_") != NULL;
}

/* A failure's message, as "m HEX" (its first 1,000 bytes): what the harness looks for in
 * it. */
static void put_message(void) {
  const char *m = cujit_last_error();
  size_t i;
  if (!m || !*m) return;
  printf("m ");
  for (i = 0; m[i] && i < 1000; i++) printf("%02x", (unsigned char)m[i]);
  putchar('\n');
}

static void statement(char *line, int index) {
  stmt st;
  cujit_array *res = NULL, *wrote = NULL;
  cujit_status r;
  int missing = 0;
  memset(&st, 0, sizeof st);
  st.n = split(line, st.tok);
  st.target = -1;
  if (st.n == 0) return;
  if (strcmp(st.tok[0], "destroy") == 0) {
    if (st.n == 2 && var_of(&st, st.tok[1])) {
      int k = atoi(st.tok[1] + 1);
      cujit_array_destroy(vars[k]);
      vars[k] = NULL;
      printf("s %d 0 0\n", index);
    } else {
      printf("s %d skip\n", index);
    }
    return;
  }
  if (st.n >= 3 && (strcmp(st.tok[1], "=") == 0 || strcmp(st.tok[1], "<-") == 0)) {
    st.target = atoi(st.tok[0] + 1);
    st.given = st.tok[1][0] == '<';
    st.arg = 3;
    if (st.target < 0 || st.target >= MAX_VARS)
      st.bad = 1;
    else if (st.given && !vars[st.target])
      missing = 1;
    else if (!st.given && vars[st.target])
      st.bad = 1; /* a name is made once */
  } else {
    st.arg = 1;
  }
  if (!st.bad && !missing) {
    r = run(&st, &res, &wrote, &missing);
  } else {
    r = CUJIT_ERROR_INVALID_VALUE;
  }
  if (missing || st.bad) {
    printf("s %d %s\n", index, st.bad ? "bad" : "skip");
    return;
  }
  if (r != CUJIT_OK) {
    printf("s %d %d %d\n", index, (int)r, has_message());
    put_message();
    if (!st.given && res) cujit_array_destroy(res); /* never: a failed call makes none */
    return;
  }
  if (st.target >= 0 && !st.given) vars[st.target] = res;
  printf("s %d 0 0", index);
  if (wrote) {
    printf(" %s ", type_name(cujit_array_type(wrote)));
    put_shape(wrote);
  }
  putchar('\n');
  if (wrote && dump_values) {
    int k = st.target >= 0 ? st.target : atoi(st.tok[st.arg] + 1);
    printf("d v%d", k);
    put_hex(wrote);
    putchar('\n');
  }
}

/* On the checking fake driver (CUJIT_LIBCUDA naming it): the violations it recorded during
 * the program, as "x COUNT" and one "x! TEXT" line for the first of them; then forgotten. */
static void verdict(void) {
  static checkdriver_api api;
  static int state; /* 0: not looked for, 1: found, -1: absent */
  char text[512];
  unsigned long n;
  if (state == 0) state = checkdriver_open(getenv("CUJIT_LIBCUDA"), &api) == 0 ? 1 : -1;
  if (state < 0) return;
  n = api.violations();
  printf("x %lu\n", n);
  if (n) {
    api.report(text, sizeof text);
    text[strcspn(text, "\n")] = 0;
    printf("x! %s\n", text);
    api.clear();
  }
}

/* After the last statement: every live array's type, shape and bytes; then all are freed. */
static void finish(void) {
  int k;
  for (k = 0; k < MAX_VARS; k++) {
    if (!vars[k]) continue;
    if (dump_values) {
      printf("f v%d %s ", k, type_name(cujit_array_type(vars[k])));
      put_shape(vars[k]);
      put_hex(vars[k]);
      putchar('\n');
    }
  }
  for (k = MAX_VARS - 1; k >= 0; k--) {
    cujit_array_destroy(vars[k]);
    vars[k] = NULL;
  }
  {
    /* a fault in queued work shows here (the fake driver runs its queue and checks it) */
    cujit_status st = cujit_synchronize();
    if (st != CUJIT_OK && st != CUJIT_ERROR_NO_DRIVER && st != CUJIT_ERROR_NO_DEVICE)
      printf("y %d\n", (int)st);
  }
  verdict();
}

int main(int argc, char **argv) {
  char *line = malloc(MAX_LINE), name[256] = "";
  int i, index = 0;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-values") == 0) {
      dump_values = 0;
    } else if (strcmp(argv[i], "--contiguous-values") == 0) {
      contiguous_only = 1;
    } else {
      fprintf(stderr, "usage: %s [--no-values | --contiguous-values] < programs\n", argv[0]);
      return 2;
    }
  }
  if (!line) return 1;
  while (fgets(line, MAX_LINE, stdin)) {
    if (strncmp(line, "program ", 8) == 0) {
      snprintf(name, sizeof name, "%s", line + 8);
      name[strcspn(name, "\r\n")] = 0;
      index = 0;
      printf("program %s\n", name);
    } else if (strncmp(line, "end", 3) == 0) {
      finish();
      printf("end %s\n", name);
      fflush(stdout);
    } else {
      statement(line, index++);
    }
  }
  free(line);
  return 0;
}

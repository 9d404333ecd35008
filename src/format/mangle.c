/* mangle.c - the parameter list of an Itanium-mangled function name.
 *
 * The symbol is read into a small graph of nodes (types, names, lists) following the
 * ABI's grammar, keeping the table of substitution candidates the grammar refers back to
 * (S_, S0_, ...), and the function's own template arguments for its template parameters
 * (T_, T0_, ...). Each parameter is then classified and spelled as C. Every read is
 * checked against the end of the input; nesting, node count and spelling length are
 * bounded, so that a hostile name costs little and fails cleanly. */
#include <string.h>

#include "format/mangle.h"

enum {
  MAX_DEPTH = 64,       /* nesting while reading */
  MAX_PRINT_DEPTH = 96, /* nesting while spelling or classifying (substitutions nest too) */
  MAX_NODES = 1 << 16,
  MAX_SPELLING = 512,  /* characters of one parameter's spelling */
  MAX_NUMBER = 1 << 20 /* source-name lengths, array sizes, indexes */
};

typedef enum nkind {
  K_BUILTIN,  /* text: its C name; cls */
  K_NAME,     /* a: the enclosing name or -1; text: the identifier */
  K_TEMPLATE, /* a: the template's name; b: its argument list */
  K_PTR,      /* a: the pointee */
  K_LREF,
  K_RREF,
  K_CV,      /* a: the qualified type; quals */
  K_FUNC,    /* a: the return type; b: the parameter list; variadic */
  K_ARRAY,   /* a: the element; b: the bound (an expression or literal), or -1 */
  K_MEMPTR,  /* a: the class; b: the member's type */
  K_TPARAM,  /* a: its index among the function's template arguments */
  K_LITERAL, /* a: its type (or -1 for nullptr); text: the digits; negative */
  K_PACK,    /* a: the list of an argument pack; also a pack expansion of type a */
  K_EXPAND,  /* a: the type expanded */
  K_VECTOR,  /* a: the element (GCC's vector extension); text: the count */
  K_COMPLEX, /* a: the element; imaginary when `variadic` is set */
  K_EXPR,    /* an operator: text; a, b: its operands (b -1 for one) */
  K_CELL     /* a list cell: a: the item; b: the next cell or -1 */
} nkind;

enum { Q_RESTRICT = 1, Q_VOLATILE = 2, Q_CONST = 4 };

typedef struct mnode {
  uint8_t kind;
  uint8_t cls;   /* K_BUILTIN: cj_mclass */
  uint8_t quals; /* K_CV */
  uint8_t flag;  /* K_FUNC: variadic; K_LITERAL: negative; K_COMPLEX: imaginary */
  int a, b;
  const char *text; /* into the symbol, or a static string */
  uint32_t len;
} mnode;

typedef struct mp {
  const char *s, *p, *end;
  mnode *nodes;
  size_t n, cap;
  int *subs;
  size_t nsubs, capsubs;
  int targs; /* the function's template arguments (a list), or -1 */
  int pack;  /* while a pack expansion is read out: the element a pack stands for */
  int depth;
  int std;         /* the node for "std", made on first use, or -1 */
  const char *why; /* the first failure */
  size_t why_at;
  int oom;
} mp;

/* ---- reading ---- */

static char peek(const mp *m, size_t k) { return (size_t)(m->end - m->p) > k ? m->p[k] : '\0'; }

static int eat(mp *m, char c) {
  if (peek(m, 0) != c || c == '\0') return 0;
  m->p++;
  return 1;
}

static int fail(mp *m, const char *why) {
  if (!m->why) {
    m->why = why;
    m->why_at = (size_t)(m->p - m->s);
  }
  return -1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(char c) { return c >= 'a' && c <= 'z'; }

static int node(mp *m, nkind kind, int a, int b) {
  mnode *v;
  if (m->n >= MAX_NODES) return fail(m, "the name is too large");
  if (CJ_VEC_RESERVE(m->nodes, m->cap, m->n + 1) != 0) {
    m->oom = 1;
    return fail(m, "out of memory");
  }
  v = &m->nodes[m->n];
  memset(v, 0, sizeof *v);
  v->kind = (uint8_t)kind;
  v->a = a;
  v->b = b;
  return (int)m->n++;
}

static int text_node(mp *m, nkind kind, int a, const char *text, size_t len) {
  int n = node(m, kind, a, -1);
  if (n >= 0) {
    m->nodes[n].text = text;
    m->nodes[n].len = (uint32_t)len;
  }
  return n;
}

/* Adds n to the substitution candidates; returns n, or -1. */
static int candidate(mp *m, int n) {
  if (n < 0) return -1;
  if (CJ_VEC_RESERVE(m->subs, m->capsubs, m->nsubs + 1) != 0) {
    m->oom = 1;
    return fail(m, "out of memory");
  }
  m->subs[m->nsubs++] = n;
  return n;
}

/* A decimal number of at least one digit, at most MAX_NUMBER; -1 when there is none. */
static long number(mp *m) {
  long v = 0;
  if (!is_digit(peek(m, 0))) return -1;
  while (is_digit(peek(m, 0))) {
    v = v * 10 + (*m->p++ - '0');
    if (v > MAX_NUMBER) return -1;
  }
  return v;
}

/* Appends item to the list whose first cell is *head and last *tail. */
static int append(mp *m, int *head, int *tail, int item) {
  int c = node(m, K_CELL, item, -1);
  if (c < 0) return -1;
  if (*head < 0)
    *head = c;
  else
    m->nodes[*tail].b = c;
  *tail = c;
  return 0;
}

static int type(mp *m);
static int name(mp *m, int *was_sub);
static int template_args(mp *m);

/* <source-name> ::= <length> <identifier>, then any ABI tags (B <source-name>). */
static int source_name(mp *m, int prefix) {
  long len = number(m);
  int n;
  if (len <= 0 || (size_t)(m->end - m->p) < (size_t)len)
    return fail(m, "a name's length runs past the end");
  n = text_node(m, K_NAME, prefix, m->p, (size_t)len);
  m->p += len;
  while (n >= 0 && peek(m, 0) == 'B') {
    m->p++;
    len = number(m);
    if (len <= 0 || (size_t)(m->end - m->p) < (size_t)len)
      return fail(m, "an ABI tag's length runs past the end");
    m->p += len;
  }
  return n;
}

static int std_node(mp *m) {
  if (m->std < 0) m->std = text_node(m, K_NAME, -1, "std", 3);
  return m->std;
}

/* <substitution>: S_, S<seq-id>_, or one of the std:: abbreviations (the S is read). */
static int substitution(mp *m) {
  static const struct {
    char c;
    const char *name;
  } abbrev[] = {{'a', "allocator"}, {'b', "basic_string"}, {'s', "string"},
                {'i', "istream"},   {'o', "ostream"},      {'d', "iostream"}};
  size_t i, id = 0;
  char c = peek(m, 0);
  for (i = 0; i < CJ_COUNT(abbrev); i++)
    if (c == abbrev[i].c) {
      m->p++;
      return text_node(m, K_NAME, std_node(m), abbrev[i].name, strlen(abbrev[i].name));
    }
  if (c != '_') {
    if (!is_digit(c) && !is_upper(c)) return fail(m, "an unknown substitution");
    while (is_digit(peek(m, 0)) || is_upper(peek(m, 0))) {
      c = *m->p++;
      id = id * 36 + (size_t)(is_digit(c) ? c - '0' : c - 'A' + 10);
      if (id > MAX_NODES) return fail(m, "a substitution that refers to nothing");
    }
    id++;
  }
  if (!eat(m, '_')) return fail(m, "a substitution without its closing _");
  if (id >= m->nsubs) return fail(m, "a substitution that refers to nothing");
  return m->subs[id];
}

/* <template-param> ::= T_ | T <number> _ (the T is read). */
static int template_param(mp *m) {
  long i = 0;
  if (!eat(m, '_')) {
    if ((i = number(m)) < 0 || !eat(m, '_')) return fail(m, "a bad template parameter");
    i++;
  }
  return node(m, K_TPARAM, (int)i, -1);
}

/* <unqualified-name>: a source name, an unnamed type or a closure type. */
static int unqualified(mp *m, int prefix) {
  char c = peek(m, 0);
  int head = -1, tail = -1;
  if (c == 'L') { /* internal linkage */
    m->p++;
    c = peek(m, 0);
  }
  if (is_digit(c)) return source_name(m, prefix);
  if (c == 'U' && peek(m, 1) == 't') {
    m->p += 2;
    number(m);
    if (!eat(m, '_')) return fail(m, "an unnamed type without its closing _");
    return text_node(m, K_NAME, prefix, "(unnamed)", 9);
  }
  if (c == 'U' && peek(m, 1) == 'l') {
    m->p += 2;
    while (peek(m, 0) != 'E') {
      int t = type(m);
      if (t < 0 || append(m, &head, &tail, t) < 0) return -1;
    }
    m->p++;
    number(m);
    if (!eat(m, '_')) return fail(m, "a closure type without its closing _");
    return text_node(m, K_NAME, prefix, "(lambda)", 8);
  }
  if (is_lower(c)) return fail(m, "an operator name");
  if (c == 'C' || c == 'D') return fail(m, "a constructor, destructor or decltype in a name");
  return fail(m, "an unknown name");
}

/* <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E
 * (the N is read). Each prefix is a substitution candidate. */
static int nested(mp *m) {
  int cur = -1;
  while (peek(m, 0) == 'r' || peek(m, 0) == 'V' || peek(m, 0) == 'K') m->p++;
  if (peek(m, 0) == 'R' || peek(m, 0) == 'O') m->p++;
  for (;;) {
    char start = peek(m, 0);
    if (start == 'E') {
      m->p++;
      return cur >= 0 ? cur : fail(m, "an empty nested name");
    }
    if (start == 'S' && cur < 0) {
      m->p++;
      cur = eat(m, 't') ? std_node(m) : substitution(m);
    } else if (start == 'I' && cur >= 0) {
      int args = template_args(m);
      cur = args < 0 ? -1 : node(m, K_TEMPLATE, cur, args);
    } else if (start == 'T' && cur < 0) {
      m->p++;
      cur = template_param(m);
    } else if (start == 'M' && cur >= 0) { /* a closure's context, already named */
      m->p++;
      continue;
    } else {
      cur = unqualified(m, cur);
    }
    if (cur < 0) return -1;
    if (start != 'S' && peek(m, 0) != 'E' && candidate(m, cur) < 0) return -1;
  }
}

/* <name>: nested, unscoped, or an unscoped template with its arguments. *was_sub is set
 * when the whole name is a substitution (then no new candidate). */
static int name(mp *m, int *was_sub) {
  char c = peek(m, 0);
  int n, args;
  *was_sub = 0;
  if (c == 'N') {
    m->p++;
    return nested(m);
  }
  if (c == 'Z') return fail(m, "a name local to a function");
  if (c == 'S') {
    m->p++;
    if (eat(m, 't')) {
      n = unqualified(m, std_node(m));
    } else {
      n = substitution(m);
      if (n >= 0 && peek(m, 0) != 'I') *was_sub = 1;
      if (n < 0 || peek(m, 0) != 'I') return n;
      args = template_args(m);
      return args < 0 ? -1 : node(m, K_TEMPLATE, n, args);
    }
  } else {
    n = unqualified(m, -1);
  }
  if (n < 0 || peek(m, 0) != 'I') return n;
  if (candidate(m, n) < 0 || (args = template_args(m)) < 0) return -1;
  return node(m, K_TEMPLATE, n, args);
}

/* <expr-primary> ::= L <type> <value> E (the L is read). */
static int literal(mp *m) {
  const char *v;
  int t, n, neg = 0;
  if (peek(m, 0) == '_' || peek(m, 0) == 'Z') return fail(m, "an address as a template argument");
  if (peek(m, 0) == 'D' && peek(m, 1) == 'n' && peek(m, 2) == 'E') {
    m->p += 3;
    return text_node(m, K_LITERAL, -1, "nullptr", 7);
  }
  if ((t = type(m)) < 0) return -1;
  if (eat(m, 'n')) neg = 1;
  v = m->p;
  while (peek(m, 0) != 'E') {
    char c = peek(m, 0);
    if (!is_digit(c) && !is_lower(c) && !is_upper(c) && c != '_' && c != '.')
      return fail(m, "a literal without its closing E");
    m->p++;
  }
  n = text_node(m, K_LITERAL, t, v, (size_t)(m->p - v));
  m->p++;
  if (n >= 0) m->nodes[n].flag = (uint8_t)neg;
  return n;
}

/* <expression>, the few kinds that template arguments and array bounds use: template
 * parameters, literals, sizeof and alignof of a type, and arithmetic, comparison and
 * logical operators on those. */
static int expression(mp *m) {
  static const struct {
    const char code[3], *op;
    int arity;
  } ops[] = {{"ng", "-", 1},  {"ps", "+", 1},  {"co", "~", 1},      {"nt", "!", 1},
             {"pl", "+", 2},  {"mi", "-", 2},  {"ml", "*", 2},      {"dv", "/", 2},
             {"rm", "%", 2},  {"an", "&", 2},  {"or", "|", 2},      {"eo", "^", 2},
             {"ls", "<<", 2}, {"rs", ">>", 2}, {"eq", "==", 2},     {"ne", "!=", 2},
             {"lt", "<", 2},  {"gt", ">", 2},  {"le", "<=", 2},     {"ge", ">=", 2},
             {"aa", "&&", 2}, {"oo", "||", 2}, {"st", "sizeof", 0}, {"at", "alignof", 0}};
  size_t i;
  int a, b = -1, e;
  char c = peek(m, 0);
  if (++m->depth > MAX_DEPTH) return fail(m, "the name nests too deeply");
  if (c == 'T') {
    m->p++;
    e = template_param(m);
  } else if (c == 'L') {
    m->p++;
    e = literal(m);
  } else {
    for (i = 0; i < CJ_COUNT(ops); i++)
      if (c == ops[i].code[0] && peek(m, 1) == ops[i].code[1]) break;
    if (i == CJ_COUNT(ops)) return fail(m, "an expression cujit does not read");
    m->p += 2;
    a = ops[i].arity ? expression(m) : type(m);
    if (a >= 0 && ops[i].arity == 2) b = expression(m);
    if (a < 0 || (ops[i].arity == 2 && b < 0)) return -1;
    e = text_node(m, K_EXPR, a, ops[i].op, strlen(ops[i].op));
    if (e >= 0) {
      m->nodes[e].b = b;
      m->nodes[e].flag = (uint8_t)ops[i].arity;
    }
  }
  m->depth--;
  return e;
}

/* <template-args> ::= I <template-arg>* E (at the I). */
static int template_args(mp *m) {
  int head = -1, tail = -1, arg;
  if (!eat(m, 'I')) return fail(m, "expected template arguments");
  if (++m->depth > MAX_DEPTH) return fail(m, "the name nests too deeply");
  while (!eat(m, 'E')) {
    char c = peek(m, 0);
    if (c == 'L') {
      m->p++;
      arg = literal(m);
    } else if (c == 'X') {
      m->p++;
      arg = expression(m);
      if (arg >= 0 && !eat(m, 'E')) return fail(m, "an expression without its closing E");
    } else if (c == 'J') { /* an argument pack: its arguments as a list */
      int ph = -1, pt = -1;
      m->p++;
      while (!eat(m, 'E')) {
        int t = peek(m, 0) == 'L' ? (m->p++, literal(m)) : type(m);
        if (t < 0 || append(m, &ph, &pt, t) < 0) return -1;
      }
      arg = node(m, K_PACK, ph, -1);
    } else if (c == '\0') {
      return fail(m, "template arguments without their closing E");
    } else {
      arg = type(m);
    }
    if (arg < 0 || append(m, &head, &tail, arg) < 0) return -1;
  }
  m->depth--;
  return head >= 0 ? head : node(m, K_CELL, -1, -1); /* <>: a list of one empty cell */
}

/* Types up to `stop` (or the end of the input when stop is 0) as a list; a lone void is
 * no parameter, a trailing ellipsis sets *variadic. */
static int type_list(mp *m, char stop, int *variadic) {
  int head = -1, tail = -1, count = 0, t;
  *variadic = 0;
  for (;;) {
    char c = peek(m, 0);
    if (stop ? c == stop : (c == '\0' || c == '.')) break;
    if (stop == 'E' && (c == 'R' || c == 'O') && peek(m, 1) == 'E') { /* ref-qualifier */
      m->p++;
      continue;
    }
    if (c == '\0') return fail(m, "a parameter list without its end");
    if (c == 'z') {
      m->p++;
      *variadic = 1;
      continue;
    }
    if ((t = type(m)) < 0) return -1;
    if (count++ == 0 && m->nodes[t].kind == K_BUILTIN && m->nodes[t].text[0] == 'v' &&
        (stop ? peek(m, 0) == stop : (peek(m, 0) == '\0' || peek(m, 0) == '.')))
      break; /* (void) */
    if (append(m, &head, &tail, t) < 0) return -1;
  }
  return head;
}

/* <function-type> ::= F [Y] <bare-function-type> [<ref-qualifier>] E (at the F). */
static int function_type(mp *m) {
  int ret, params, variadic, f;
  if (!eat(m, 'F')) return fail(m, "expected a function type");
  eat(m, 'Y');
  if ((ret = type(m)) < 0) return -1;
  params = type_list(m, 'E', &variadic);
  if (m->why) return -1;
  m->p++;
  f = node(m, K_FUNC, ret, params);
  if (f >= 0) m->nodes[f].flag = (uint8_t)variadic;
  return f;
}

typedef struct builtin {
  const char *code; /* after the first letter for D codes */
  const char *name;
  uint8_t cls;
} builtin;

static const builtin one_letter[] =
    {{"v", "void", CJ_MC_OTHER},        {"w", "wchar_t", CJ_MC_I32},
     {"b", "bool", CJ_MC_BOOL},         {"c", "char", CJ_MC_I8},
     {"a", "signed char", CJ_MC_I8},    {"h", "unsigned char", CJ_MC_U8},
     {"s", "short", CJ_MC_I16},         {"t", "unsigned short", CJ_MC_U16},
     {"i", "int", CJ_MC_I32},           {"j", "unsigned int", CJ_MC_U32},
     {"l", "long", CJ_MC_I64},          {"m", "unsigned long", CJ_MC_U64},
     {"x", "long long", CJ_MC_I64},     {"y", "unsigned long long", CJ_MC_U64},
     {"n", "__int128", CJ_MC_OTHER},    {"o", "unsigned __int128", CJ_MC_OTHER},
     {"f", "float", CJ_MC_F32},         {"d", "double", CJ_MC_F64},
     {"e", "long double", CJ_MC_OTHER}, {"g", "__float128", CJ_MC_OTHER}};

static const builtin d_letter[] = {{"h", "half", CJ_MC_F16},
                                   {"i", "char32_t", CJ_MC_U32},
                                   {"s", "char16_t", CJ_MC_U16},
                                   {"u", "char8_t", CJ_MC_U8},
                                   {"n", "std::nullptr_t", CJ_MC_PTR},
                                   {"a", "auto", CJ_MC_OTHER},
                                   {"c", "decltype(auto)", CJ_MC_OTHER},
                                   {"d", "_Decimal64", CJ_MC_OTHER},
                                   {"e", "_Decimal128", CJ_MC_OTHER},
                                   {"f", "_Decimal32", CJ_MC_OTHER},
                                   {"F16b", "__bf16", CJ_MC_BF16},
                                   {"F16_", "_Float16", CJ_MC_F16},
                                   {"F32_", "_Float32", CJ_MC_F32},
                                   {"F64_", "_Float64", CJ_MC_F64},
                                   {"F128_", "_Float128", CJ_MC_OTHER},
                                   {"F32x", "_Float32x", CJ_MC_OTHER},
                                   {"F64x", "_Float64x", CJ_MC_OTHER}};

static int builtin_node(mp *m, const builtin *b) {
  int n = text_node(m, K_BUILTIN, -1, b->name, strlen(b->name));
  if (n >= 0) m->nodes[n].cls = b->cls;
  return n;
}

/* A builtin type from table t at the input (its codes after `skip` letters), or -2 when
 * none matches. */
static int builtin_at(mp *m, const builtin *t, size_t count, size_t skip) {
  size_t i, j;
  for (i = 0; i < count; i++) {
    size_t len = strlen(t[i].code);
    for (j = 0; j < len && peek(m, skip + j) == t[i].code[j]; j++) {
    }
    if (j < len) continue;
    m->p += skip + len;
    return builtin_node(m, &t[i]);
  }
  return -2;
}

/* The D types that are not builtins: pack expansions, noexcept function types, vectors. */
static int d_type(mp *m) {
  int t;
  char c = peek(m, 1);
  if ((t = builtin_at(m, d_letter, CJ_COUNT(d_letter), 1)) != -2) return t;
  if (c == 'B' || c == 'U') { /* _BitInt(N) */
    m->p += 2;
    if (number(m) < 0 || !eat(m, '_')) return fail(m, "a bad _BitInt type");
    return builtin_node(m, &(builtin){"", c == 'B' ? "_BitInt" : "unsigned _BitInt", CJ_MC_OTHER});
  }
  m->p += 2;
  switch (c) {
    case 'p': /* a pack expansion */
      t = type(m);
      return candidate(m, t < 0 ? -1 : node(m, K_EXPAND, t, -1));
    case 'x': /* transaction_safe */
    case 'o': /* noexcept */ return candidate(m, function_type(m));
    case 'v': {
      const char *v = m->p;
      long count = number(m);
      if (count < 0 || !eat(m, '_')) return fail(m, "a vector type with an expression");
      t = type(m);
      if (t < 0) return -1;
      t = node(m, K_VECTOR, t, -1);
      if (t >= 0) {
        m->nodes[t].text = v;
        m->nodes[t].len = (uint32_t)(m->p - v);
      }
      return candidate(m, t);
    }
    default: return fail(m, "a decltype, an exception specification or an unknown D type");
  }
}

static int qualified(mp *m) {
  unsigned q = 0;
  int t, n;
  while (peek(m, 0) == 'U') { /* vendor qualifiers (address spaces): read and left out */
    m->p++;
    if (source_name(m, -1) < 0) return -1;
    if (peek(m, 0) == 'I' && template_args(m) < 0) return -1;
  }
  while (peek(m, 0) == 'r' || peek(m, 0) == 'V' || peek(m, 0) == 'K') {
    char c = *m->p++;
    q |= c == 'r' ? Q_RESTRICT : c == 'V' ? Q_VOLATILE : Q_CONST;
  }
  /* a qualified function type is one candidate, not two */
  if ((t = peek(m, 0) == 'F' ? function_type(m) : type(m)) < 0) return -1;
  n = node(m, K_CV, t, -1);
  if (n >= 0) m->nodes[n].quals = (uint8_t)q;
  return candidate(m, n);
}

/* <type>. Builtins and plain substitutions are not candidates; everything else is. */
static int type_at(mp *m) {
  char c = peek(m, 0);
  int t, was_sub, args;
  if (c == '\0') return fail(m, "a type runs past the end");
  if ((t = builtin_at(m, one_letter, CJ_COUNT(one_letter), 0)) != -2) return t;
  switch (c) {
    case 'D': return d_type(m);
    case 'u': /* a vendor's builtin type */
      m->p++;
      t = source_name(m, -1);
      if (t >= 0 && peek(m, 0) == 'I')
        t = (args = template_args(m)) < 0 ? -1 : node(m, K_TEMPLATE, t, args);
      return candidate(m, t);
    case 'r':
    case 'V':
    case 'K':
    case 'U': return qualified(m);
    case 'P':
    case 'R':
    case 'O':
    case 'C':
    case 'G':
      m->p++;
      if ((t = type(m)) < 0) return -1;
      t = node(m, c == 'P' ? K_PTR : c == 'R' ? K_LREF : c == 'O' ? K_RREF : K_COMPLEX, t, -1);
      if (t >= 0 && c == 'G') m->nodes[t].flag = 1;
      return candidate(m, t);
    case 'F': return candidate(m, function_type(m));
    case 'A': {
      const char *dim;
      int bound = -1;
      m->p++;
      dim = m->p;
      if (number(m) >= 0)
        bound = text_node(m, K_LITERAL, -1, dim, (size_t)(m->p - dim));
      else if (peek(m, 0) != '_' && (bound = expression(m)) < 0)
        return -1;
      if (!eat(m, '_')) return fail(m, "an array bound without its closing _");
      if ((t = type(m)) < 0) return -1;
      return candidate(m, node(m, K_ARRAY, t, bound));
    }
    case 'M': {
      int cls, mem;
      m->p++;
      if ((cls = type(m)) < 0 || (mem = type(m)) < 0) return -1;
      return candidate(m, node(m, K_MEMPTR, cls, mem));
    }
    case 'T':
      if (peek(m, 1) == 's' || peek(m, 1) == 'u' || peek(m, 1) == 'e') {
        m->p += 2;
        return candidate(m, name(m, &was_sub));
      }
      m->p++;
      t = candidate(m, template_param(m));
      if (t < 0 || peek(m, 0) != 'I') return t;
      return candidate(m, (args = template_args(m)) < 0 ? -1 : node(m, K_TEMPLATE, t, args));
    case 'S':
      if (peek(m, 1) != 't' && !is_lower(peek(m, 1))) {
        m->p++;
        t = substitution(m);
        if (t < 0 || peek(m, 0) != 'I') return t;
        return candidate(m, (args = template_args(m)) < 0 ? -1 : node(m, K_TEMPLATE, t, args));
      }
      t = name(m, &was_sub);
      return was_sub ? t : candidate(m, t);
    default:
      if (is_digit(c) || c == 'N' || c == 'Z') return candidate(m, name(m, &was_sub));
      return fail(m, "an unknown type");
  }
}

static int type(mp *m) {
  int t;
  if (++m->depth > MAX_DEPTH) return fail(m, "the name nests too deeply");
  t = type_at(m);
  m->depth--;
  return t;
}

/* <encoding> ::= <name> <bare-function-type>: the parameter list (a list, -1 when empty).
 * A function template's parameters start with its return type, which is skipped. */
static int encoding(mp *m, int *fname) {
  int was_sub, variadic, params;
  if (m->end - m->p < 2 || m->p[0] != '_' || m->p[1] != 'Z') return fail(m, "not a mangled name");
  m->p += 2;
  eat(m, 'L');
  if ((*fname = name(m, &was_sub)) < 0) return -1;
  if (peek(m, 0) == '\0' || peek(m, 0) == '.') return fail(m, "a variable, not a function");
  if (m->nodes[*fname].kind == K_TEMPLATE) {
    m->targs = m->nodes[*fname].b;
    if (type(m) < 0) return -1;
  }
  params = type_list(m, 0, &variadic);
  if (m->why) return -1;
  if (variadic) return fail(m, "a variadic function");
  if (m->p < m->end && *m->p != '.') return fail(m, "bytes after the parameter list");
  return params;
}

/* ---- classifying ---- */

/* Item i of list c, or -1. */
static int nth(const mp *m, int c, int i) {
  for (; c >= 0 && i > 0; i--) c = m->nodes[c].b;
  return c >= 0 ? m->nodes[c].a : -1;
}

/* The node t stands for, with template parameters replaced by the function's arguments
 * and top-level qualifiers dropped. -1 when a parameter has no argument. */
static int resolve(const mp *m, int t) {
  int hops;
  for (hops = 0; t >= 0 && hops < MAX_PRINT_DEPTH; hops++) {
    const mnode *n = &m->nodes[t];
    if (n->kind == K_CV) {
      t = n->a;
    } else if (n->kind == K_TPARAM) {
      t = nth(m, m->targs, n->a);
    } else if (n->kind == K_PACK && m->pack >= 0) {
      t = nth(m, n->a, m->pack);
    } else {
      return t;
    }
  }
  return -1;
}

static int ident_is(const mnode *n, const char *s) {
  return n->len == strlen(s) && memcmp(n->text, s, n->len) == 0;
}

/* CUDA's vector types (vector_types.h): a base name, a lane count and an optional
 * alignment suffix (double4_32a). 0 when `n` names none. */
static int cuda_vector(const mnode *n, cj_mparam *p) {
  static const struct {
    const char *base;
    uint8_t cls;
  } bases[] = {{"char", CJ_MC_I8},       {"uchar", CJ_MC_U8},  {"short", CJ_MC_I16},
               {"ushort", CJ_MC_U16},    {"int", CJ_MC_I32},   {"uint", CJ_MC_U32},
               {"long", CJ_MC_I64},      {"ulong", CJ_MC_U64}, {"longlong", CJ_MC_I64},
               {"ulonglong", CJ_MC_U64}, {"float", CJ_MC_F32}, {"double", CJ_MC_F64}};
  size_t i, k = 0;
  const char *rest;
  size_t rl;
  static const struct {
    const char *name;
    uint8_t cls, lanes;
  } named[] = {{"__half2", CJ_MC_F16, 2},
               {"__nv_bfloat162", CJ_MC_BF16, 2},
               {"dim3", CJ_MC_U32, 3}};
  for (i = 0; i < CJ_COUNT(named); i++) {
    if (!ident_is(n, named[i].name)) continue;
    p->elem = named[i].cls;
    p->lanes = named[i].lanes;
    return 1;
  }
  while (k < n->len && !is_digit(n->text[k])) k++;
  if (k == n->len || n->text[k] < '1' || n->text[k] > '4') return 0;
  rest = n->text + k + 1;
  rl = n->len - k - 1;
  if (rl == 4 && (memcmp(rest, "_16a", 4) == 0 || memcmp(rest, "_32a", 4) == 0))
    p->align = rest[1] == '1' ? 16 : 32;
  else if (rl != 0)
    return 0;
  for (i = 0; i < CJ_COUNT(bases); i++) {
    if (strlen(bases[i].base) != k || memcmp(bases[i].base, n->text, k) != 0) continue;
    p->elem = bases[i].cls;
    p->lanes = (uint8_t)(n->text[k] - '0');
    return 1;
  }
  p->align = 0;
  return 0;
}

static void classify(const mp *m, int t, cj_mparam *p) {
  const mnode *n;
  p->cls = CJ_MC_OTHER;
  if ((t = resolve(m, t)) < 0) return;
  n = &m->nodes[t];
  switch (n->kind) {
    case K_BUILTIN: p->cls = n->cls; return;
    case K_PTR:
    case K_ARRAY:
    case K_FUNC: p->cls = CJ_MC_PTR; return;
    case K_TEMPLATE: p->cls = CJ_MC_NAMED; return;
    case K_NAME:
      p->cls = CJ_MC_NAMED;
      if (n->a >= 0) return; /* CUDA's types are in the global namespace */
      if (ident_is(n, "__half"))
        p->cls = CJ_MC_F16;
      else if (ident_is(n, "__nv_bfloat16"))
        p->cls = CJ_MC_BF16;
      else if (cuda_vector(n, p))
        p->cls = CJ_MC_VECTOR;
      return;
    default: return;
  }
}

/* ---- spelling ---- */

static void spell(const mp *m, int t, cj_buf *b, int depth);

static int full(const cj_buf *b, int depth) {
  return b->len > MAX_SPELLING || b->oom || depth > MAX_PRINT_DEPTH;
}

static void spell_list(const mp *m, int c, cj_buf *b, int depth) {
  int first = 1;
  for (; c >= 0 && !full(b, depth); c = m->nodes[c].b) {
    if (m->nodes[c].a < 0) continue;
    if (!first) cj_buf_puts(b, ", ");
    first = 0;
    spell(m, m->nodes[c].a, b, depth + 1);
  }
}

static void spell_literal(const mp *m, const mnode *n, cj_buf *b, int depth) {
  static const struct {
    const char *type, *suffix;
  } ints[] = {{"int", ""},         {"unsigned int", "u"},
              {"long", "l"},       {"unsigned long", "ul"},
              {"long long", "ll"}, {"unsigned long long", "ull"}};
  const mnode *t = n->a >= 0 ? &m->nodes[n->a] : NULL;
  size_t i;
  if (!t) {
    cj_buf_append(b, n->text, n->len);
    return;
  }
  if (t->kind == K_BUILTIN && ident_is(t, "bool") && n->len == 1 && !n->flag) {
    cj_buf_puts(b, n->text[0] == '0' ? "false" : "true");
    return;
  }
  for (i = 0; t->kind == K_BUILTIN && i < CJ_COUNT(ints); i++) {
    if (!ident_is(t, ints[i].type)) continue;
    cj_buf_printf(b, "%s%.*s%s", n->flag ? "-" : "", (int)n->len, n->text, ints[i].suffix);
    return;
  }
  cj_buf_puts(b, "(");
  spell(m, n->a, b, depth + 1);
  cj_buf_printf(b, ")%s%.*s", n->flag ? "-" : "", (int)n->len, n->text);
}

/* Whether a declarator written after node t needs parentheses around it. */
static int needs_parens(const mp *m, int t) {
  t = resolve(m, t);
  return t >= 0 && (m->nodes[t].kind == K_FUNC || m->nodes[t].kind == K_ARRAY);
}

/* Appends c after a space unless the text ends in a declarator character already. */
static void decl_char(cj_buf *b, const char *s) {
  char last = b->len ? b->data[b->len - 1] : '(';
  if (last != '*' && last != '&' && last != '(' && last != ' ') cj_buf_puts(b, " ");
  cj_buf_puts(b, s);
}

/* Appends a qualifier of what the text spells so far: "float *const", "int volatile". */
static void decl_word(cj_buf *b, const char *s) {
  char last = b->len ? b->data[b->len - 1] : '*';
  if (last != '*' && last != '&') cj_buf_puts(b, " ");
  cj_buf_puts(b, s);
}

static void spell_left(const mp *m, int t, cj_buf *b, int depth);

/* The part of a type written after its declarator: parameter lists and array bounds. */
static void spell_right(const mp *m, int t, cj_buf *b, int depth) {
  const mnode *n;
  if (t < 0 || full(b, depth)) return;
  n = &m->nodes[t];
  switch (n->kind) {
    case K_TPARAM: spell_right(m, resolve(m, t), b, depth + 1); return;
    case K_PTR:
    case K_LREF:
    case K_RREF:
      if (needs_parens(m, n->a)) cj_buf_puts(b, ")");
      spell_right(m, n->a, b, depth + 1);
      return;
    case K_MEMPTR:
      if (needs_parens(m, n->b)) cj_buf_puts(b, ")");
      spell_right(m, n->b, b, depth + 1);
      return;
    case K_CV: spell_right(m, n->a, b, depth + 1); return;
    case K_FUNC:
      cj_buf_puts(b, "(");
      spell_list(m, n->b, b, depth + 1);
      if (n->flag) cj_buf_puts(b, n->b >= 0 ? ", ..." : "...");
      cj_buf_puts(b, ")");
      spell_right(m, n->a, b, depth + 1);
      return;
    case K_ARRAY:
      cj_buf_puts(b, "[");
      if (n->b >= 0) spell(m, n->b, b, depth + 1);
      cj_buf_puts(b, "]");
      spell_right(m, n->a, b, depth + 1);
      return;
    default: return;
  }
}

/* The part of a type written before its declarator. */
static void spell_left(const mp *m, int t, cj_buf *b, int depth) {
  const mnode *n;
  if (full(b, depth)) return;
  if (t < 0) {
    cj_buf_puts(b, "?");
    return;
  }
  n = &m->nodes[t];
  switch (n->kind) {
    case K_BUILTIN: cj_buf_append(b, n->text, n->len); return;
    case K_NAME:
      if (n->a >= 0) {
        spell_left(m, n->a, b, depth + 1);
        cj_buf_puts(b, "::");
      }
      if (n->len >= 10 && memcmp(n->text, "_GLOBAL__N", 10) == 0)
        cj_buf_puts(b, "(anonymous namespace)");
      else
        cj_buf_append(b, n->text, n->len);
      return;
    case K_TEMPLATE:
      spell_left(m, n->a, b, depth + 1);
      cj_buf_puts(b, "<");
      spell_list(m, n->b, b, depth + 1);
      cj_buf_puts(b, ">");
      return;
    case K_TPARAM:
      if (resolve(m, t) < 0) {
        cj_buf_printf(b, "T%d", n->a);
        return;
      }
      spell_left(m, resolve(m, t), b, depth + 1);
      return;
    case K_LITERAL: spell_literal(m, n, b, depth); return;
    case K_EXPR:
      if (n->flag == 0) { /* sizeof(type), alignof(type) */
        cj_buf_printf(b, "%.*s(", (int)n->len, n->text);
        spell(m, n->a, b, depth + 1);
        cj_buf_puts(b, ")");
        return;
      }
      cj_buf_puts(b, "(");
      if (n->flag == 1) cj_buf_append(b, n->text, n->len);
      spell(m, n->a, b, depth + 1);
      if (n->flag == 2) {
        cj_buf_printf(b, " %.*s ", (int)n->len, n->text);
        spell(m, n->b, b, depth + 1);
      }
      cj_buf_puts(b, ")");
      return;
    case K_PACK: spell_list(m, n->a, b, depth + 1); return;
    case K_EXPAND:
      spell(m, n->a, b, depth + 1);
      cj_buf_puts(b, "...");
      return;
    case K_VECTOR:
      spell(m, n->a, b, depth + 1);
      cj_buf_printf(b, " __attribute__((vector_size(%.*s)))", (int)n->len, n->text);
      return;
    case K_COMPLEX:
      spell(m, n->a, b, depth + 1);
      cj_buf_puts(b, n->flag ? " _Imaginary" : " _Complex");
      return;
    case K_CV: {
      int inner = resolve(m, n->a);
      int decl = inner >= 0 && (m->nodes[inner].kind == K_PTR || m->nodes[inner].kind == K_LREF ||
                                m->nodes[inner].kind == K_RREF || m->nodes[inner].kind == K_MEMPTR);
      if (!decl) {
        if (n->quals & Q_CONST) cj_buf_puts(b, "const ");
        if (n->quals & Q_VOLATILE) cj_buf_puts(b, "volatile ");
      }
      spell_left(m, n->a, b, depth + 1);
      if (decl && (n->quals & Q_CONST)) decl_word(b, "const");
      if (decl && (n->quals & Q_VOLATILE)) decl_word(b, "volatile");
      if (n->quals & Q_RESTRICT) decl_word(b, "__restrict__");
      return;
    }
    case K_PTR:
    case K_LREF:
    case K_RREF:
      spell_left(m, n->a, b, depth + 1);
      if (needs_parens(m, n->a)) decl_char(b, "(");
      decl_char(b, n->kind == K_PTR ? "*" : n->kind == K_LREF ? "&" : "&&");
      return;
    case K_MEMPTR:
      spell_left(m, n->b, b, depth + 1);
      decl_char(b, needs_parens(m, n->b) ? "(" : ""); /* "int C::*", "void (C::*)(int)" */
      spell(m, n->a, b, depth + 1);
      cj_buf_puts(b, "::*");
      return;
    case K_FUNC: spell_left(m, n->a, b, depth + 1); return;
    case K_ARRAY: spell_left(m, n->a, b, depth + 1); return;
    default: return;
  }
}

static void spell(const mp *m, int t, cj_buf *b, int depth) {
  size_t before = b->len;
  spell_left(m, t, b, depth);
  if (t >= 0 && (m->nodes[t].kind == K_FUNC || m->nodes[t].kind == K_ARRAY) && b->len > before)
    cj_buf_puts(b, " ");
  spell_right(m, t, b, depth);
}

/* ---- the result ---- */

int cj_mangled(const char *sym) { return sym && sym[0] == '_' && sym[1] == 'Z'; }

void cj_mparams_free(cj_mparams *p) {
  size_t i;
  if (!p) return;
  for (i = 0; i < p->n; i++) cj_free(p->v[i].spelling);
  cj_free(p->v);
  p->v = NULL;
  p->n = 0;
}

static void mp_free(mp *m) {
  cj_free(m->nodes);
  cj_free(m->subs);
}

static cujit_status mp_fail(mp *m, const char *sym, size_t len) {
  cujit_status st;
  if (m->oom) {
    mp_free(m);
    return cj_fail_oom("reading a kernel's parameter types");
  }
  st = cj_fail(CUJIT_ERROR_SIGNATURE,
               "cannot read the parameter types from the symbol "
               "'%.*s': %s at offset %zu",
               len > 300 ? 300 : (int)len, sym, m->why ? m->why : "it is not a function's name",
               m->why_at);
  mp_free(m);
  return st;
}

/* How many elements the argument pack that pattern t expands has (its first template
 * parameter that stands for a pack), or -1 when it expands none. */
static int pack_length(const mp *m, int t, int depth) {
  const mnode *n;
  int k, len = -1;
  if (t < 0 || depth > MAX_PRINT_DEPTH) return -1;
  n = &m->nodes[t];
  if (n->kind == K_TPARAM) {
    int p = nth(m, m->targs, n->a);
    if (p < 0 || m->nodes[p].kind != K_PACK) return -1;
    for (k = 0, p = m->nodes[p].a; p >= 0; p = m->nodes[p].b) k += m->nodes[p].a >= 0;
    return k;
  }
  if (n->kind == K_CELL || n->kind == K_TEMPLATE || n->kind == K_FUNC || n->kind == K_MEMPTR ||
      n->kind == K_ARRAY || n->kind == K_EXPR)
    len = pack_length(m, n->b, depth + 1);
  if (len < 0 && n->kind != K_EXPAND && n->kind != K_LITERAL) len = pack_length(m, n->a, depth + 1);
  return len;
}

/* Classifies and spells parameter t into p. */
static int one_param(const mp *m, int t, cj_mparam *p) {
  cj_buf b = {0};
  classify(m, t, p);
  spell(m, t, &b, 0);
  if (b.len > MAX_SPELLING) {
    b.len = MAX_SPELLING;
    cj_buf_puts(&b, "...");
  }
  p->spelling = cj_buf_take(&b);
  return p->spelling ? 0 : -1;
}

/* Classifies and spells every parameter of list `params` into *out; a pack expansion
 * (Ts... xs) gives one parameter per element of its pack. */
static cujit_status collect(mp *m, int params, cj_mparams *out) {
  size_t n = 0, i = 0;
  int c, k, len;
  for (c = params; c >= 0; c = m->nodes[c].b) {
    int t = m->nodes[c].a;
    len = t >= 0 && m->nodes[t].kind == K_EXPAND ? pack_length(m, m->nodes[t].a, 0) : -1;
    n += len >= 0 ? (size_t)len : 1;
  }
  out->n = 0;
  out->v = n ? cj_calloc(n, sizeof *out->v) : NULL;
  if (n && !out->v) return cj_fail_oom("reading a kernel's parameter types");
  for (c = params; c >= 0; c = m->nodes[c].b) {
    int t = m->nodes[c].a;
    len = t >= 0 && m->nodes[t].kind == K_EXPAND ? pack_length(m, m->nodes[t].a, 0) : -1;
    for (k = 0; k < (len >= 0 ? len : 1); k++, i++) {
      m->pack = len >= 0 ? k : -1;
      out->n = i + 1;
      if (one_param(m, len >= 0 ? m->nodes[t].a : t, &out->v[i]) != 0) {
        cj_mparams_free(out);
        return cj_fail_oom("reading a kernel's parameter types");
      }
    }
  }
  m->pack = -1;
  return CUJIT_OK;
}

static void mp_init(mp *m, const char *sym, size_t len) {
  memset(m, 0, sizeof *m);
  m->s = m->p = sym;
  m->end = sym + len;
  m->targs = -1;
  m->pack = -1;
  m->std = -1;
}

cujit_status cj_mangle_params(const char *sym, size_t len, cj_mparams *out) {
  mp m;
  int fname, params;
  cujit_status st;
  out->n = 0;
  out->v = NULL;
  mp_init(&m, sym, len);
  params = encoding(&m, &fname);
  if (m.why) return mp_fail(&m, sym, len);
  st = collect(&m, params, out);
  mp_free(&m);
  return st;
}

cujit_status cj_mangle_probe_params(const char *sym, size_t len, const char *probe,
                                    cj_mparams *out) {
  mp m;
  int fname, arg = -1;
  const mnode *f;
  cujit_status st;
  out->n = 0;
  out->v = NULL;
  mp_init(&m, sym, len);
  encoding(&m, &fname);
  if (m.why) return mp_fail(&m, sym, len);
  f = &m.nodes[fname];
  if (f->kind == K_TEMPLATE && f->b >= 0 && m.nodes[f->b].b < 0 && m.nodes[f->a].kind == K_NAME &&
      m.nodes[f->a].a < 0 && ident_is(&m.nodes[f->a], probe))
    arg = resolve(&m, m.nodes[f->b].a);
  if (arg >= 0 && m.nodes[arg].kind == K_PTR) arg = resolve(&m, m.nodes[arg].a);
  if (arg < 0 || m.nodes[arg].kind != K_FUNC || m.nodes[arg].flag) {
    m.why = "it is not the probe's instance for a kernel";
    m.why_at = 0;
    return mp_fail(&m, sym, len);
  }
  st = collect(&m, m.nodes[arg].b, out);
  mp_free(&m);
  return st;
}

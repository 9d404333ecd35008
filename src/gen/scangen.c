/* scangen.c - the scan generator (PyCUDA's InclusiveScanKernel and ExclusiveScanKernel): a
 * scan of a type, an associative operator in a and b and its neutral element, kept with its
 * name and preamble, and run by the scan engine (reduce/scan.c) on 1-D arrays. */
#include <string.h>

#include "gen/gen.h"

struct cujit_scan {
  int type;
  int exclusive;
  char *op, *neutral, *name, *preamble;
};

static cujit_status check_text(const char *text, const char *what, const char *example) {
  CJ_CHECK(text && text[0], CUJIT_ERROR_INVALID_VALUE,
           "cujit_scan_create: %s is %s; pass an expression "
           "such as \"%s\"",
           what, text ? "empty" : "NULL", example);
  return CUJIT_OK;
}

/* A kernel name is a C identifier. */
static cujit_status check_name(const char *name) {
  CJ_CHECK(cj_is_identifier(name), CUJIT_ERROR_INVALID_VALUE,
           "cujit_scan_create: the kernel name \"%s\" is "
           "not a C identifier",
           name);
  return CUJIT_OK;
}

static cujit_status scan_check(cujit_scan **out, cujit_type type, const char *scan_expr,
                               const char *neutral, const cujit_generator_options *user,
                               cujit_generator_options *opts) {
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_scan_create: out is NULL");
  *out = NULL;
  CJ_TRY(cj_gen_options("cujit_scan_create", user, opts));
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "cujit_scan_create: type %d is not an element "
           "type arrays hold (use CUJIT_TYPE_BOOL, _I8 ... _U64, _F16, _BF16, _F32, "
           "_F64, _C64 or _C128)",
           (int)type);
  CJ_TRY(check_text(scan_expr, "scan_expr", "a + b"));
  CJ_TRY(check_text(neutral, "neutral", "0"));
  return opts && opts->name ? check_name(opts->name) : CUJIT_OK;
}

cujit_status cujit_scan_create(cujit_scan **out, cujit_type type, const char *scan_expr,
                               const char *neutral, int exclusive,
                               const cujit_generator_options *user) {
  cujit_generator_options own, *opts = &own;
  cujit_scan *s;
  const char *preamble;
  CJ_TRY(scan_check(out, type, scan_expr, neutral, user, opts));
  preamble = opts->preamble ? opts->preamble : "";
  if (!(s = cj_calloc(1, sizeof *s))) return cj_fail_oom("making a scan");
  s->type = type;
  s->exclusive = exclusive != 0;
  s->op = cj_strdup(scan_expr);
  s->neutral = cj_strdup(neutral);
  s->name = cj_strdup(opts && opts->name ? opts->name : "scan");
  s->preamble = cj_strdup(preamble);
  if (!s->op || !s->neutral || !s->name || !s->preamble) {
    cujit_scan_destroy(s);
    return cj_fail_oom("making a scan");
  }
  *out = s;
  return CUJIT_OK;
}

cujit_status cujit_scan_call(cujit_scan *s, const cujit_array *h, cujit_array **out) {
  cj_reduce_scan_spec spec;
  cj_array *in;
  CJ_CHECK(s, CUJIT_ERROR_INVALID_VALUE, "cujit_scan_call: the scan is NULL");
  CJ_TRACE("cujit: scan %s", s->name);
  CJ_TRY(cj_array_get(h, "cujit_scan_call", "in", &in));
  CJ_CHECK(in->type == s->type, CUJIT_ERROR_INVALID_VALUE,
           "cujit_scan_call: in holds %s, the scan was made "
           "for %s; convert it with cujit_array_astype()",
           cj_elem_of(in->type)->name, cj_elem_of(s->type)->name);
  CJ_CHECK(in->ndim == 1, CUJIT_ERROR_INVALID_VALUE,
           "cujit_scan_call: in has %d dimensions; scans "
           "take 1-D arrays (make a 1-D view with cujit_array_reshape())",
           in->ndim);
  memset(&spec, 0, sizeof spec);
  spec.in_type = spec.type = s->type;
  spec.op = s->op;
  spec.neutral = s->neutral;
  spec.exclusive = s->exclusive;
  spec.name = s->name;
  spec.preamble = s->preamble[0] ? s->preamble : NULL;
  return cj_reduce_scan(&spec, in, out, "cujit_scan_call");
}

void cujit_scan_destroy(cujit_scan *s) {
  if (!s) return;
  cj_free(s->op);
  cj_free(s->neutral);
  cj_free(s->name);
  cj_free(s->preamble);
  cj_free(s);
}

/* envvalue.c - the typed values of the environment's tuning variables (sizes, counts,
 * seconds, flags): a bad value is warned about, once for each value in a row, and the
 * default used. Apart from env.c, whose table and lookup the log reads too, so that the
 * log's own variable is read without a warning it could not yet give. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"

static const char *form_of(const cj_env_var *v) {
  if (v->form) return v->form;
  switch (v->kind) {
    case CJ_ENV_FLAG: return "on (1, on, yes, true) or off (0, off, no, false)";
    case CJ_ENV_LEVEL: return "a log level (off, error, warn, info or debug)";
    case CJ_ENV_SIZE: return CJ_ENV_SIZE_FORM;
    case CJ_ENV_COUNT: return "a number (digits only)";
    case CJ_ENV_SECONDS: return "a number of seconds";
    default: return "a usable value";
  }
}

/* Warns about a bad value of a tuning variable, once for each value in a row. */
static int bad(const cj_env_var *v, const char *value, const char *form) {
  /* recorded as said only where the log shows it: a program may turn warnings on later */
  if (v->warn_bad && cj_log_enabled(CUJIT_LOG_WARN) && cj_env_bad_is_new(v, value)) {
    char shown[CJ_SHOWN_SIZE];
    cj_warn("%s='%s' is not %s; using the default %s", v->name, cj_shown(shown, value), form,
            v->dflt);
  }
  return CJ_ENV_BAD;
}

/* ---- the kinds ---- */

static int parse_u64(const cj_env_var *v, const char *s, uint64_t *out) {
  if (v->kind == CJ_ENV_SIZE) return cj_parse_size(s, out);
  if (v->kind == CJ_ENV_COUNT) return cj_parse_count(s, UINT64_MAX, out);
  return -1;
}

int cj_env_u64(const char *name, uint64_t *out) {
  const cj_env_var *v = cj_env_find(name);
  const char *s = cj_env_value(v);
  uint64_t x;
  if (!v || parse_u64(v, v->dflt, out) != 0) *out = 0;
  if (!s) return CJ_ENV_UNSET;
  if (parse_u64(v, s, &x) != 0) return bad(v, s, form_of(v));
  if (x < v->min || (v->max && x > v->max)) return bad(v, s, v->range ? v->range : form_of(v));
  *out = x;
  return CJ_ENV_SET;
}

static int parse_seconds(const char *s, double max, double *out) {
  char *end;
  double t = strtod(s, &end);
  if (end == s || *end != '\0' || !(t >= 0 && t < max)) return -1;
  *out = t;
  return 0;
}

int cj_env_seconds(const char *name, double *out) {
  const cj_env_var *v = cj_env_find(name);
  const char *s = cj_env_value(v);
  *out = 0;
  if (!v || v->kind != CJ_ENV_SECONDS) return CJ_ENV_UNSET;
  parse_seconds(v->dflt, v->max_seconds, out);
  if (!s) return CJ_ENV_UNSET;
  return parse_seconds(s, v->max_seconds, out) == 0 ? CJ_ENV_SET : bad(v, s, form_of(v));
}

/* 1 or 0 for a flag's words, -1 for anything else. */
static int parse_flag(const char *s) {
  static const char *const off[] = {"0", "off", "no", "false"};
  static const char *const on[] = {"1", "on", "yes", "true"};
  size_t i;
  for (i = 0; i < CJ_COUNT(off); i++)
    if (strcasecmp(s, off[i]) == 0) return 0;
  for (i = 0; i < CJ_COUNT(on); i++)
    if (strcasecmp(s, on[i]) == 0) return 1;
  return -1;
}

int cj_env_flag(const char *name, int *on) {
  const cj_env_var *v = cj_env_find(name);
  const char *s = cj_env_value(v);
  int f;
  *on = v && v->kind == CJ_ENV_FLAG && parse_flag(v->dflt) == 1;
  if (!s || !v || v->kind != CJ_ENV_FLAG) return CJ_ENV_UNSET;
  if ((f = parse_flag(s)) < 0) return bad(v, s, form_of(v));
  *on = f;
  return CJ_ENV_SET;
}

/* Reads every tuning variable that is set, so that a bad value is warned about when the
 * library starts, in a program that never reaches its use too, and before a program that
 * forks children for more of the same work (`cujit compile` of many files) has any: they
 * inherit what was said, and do not say it again. */
void cj_env_check_all(void) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  for (i = 0; i < n; i++) {
    uint64_t u;
    double d;
    int f;
    if (!t[i].warn_bad || !cj_env_value(&t[i])) continue;
    if (t[i].kind == CJ_ENV_SIZE || t[i].kind == CJ_ENV_COUNT) (void)cj_env_u64(t[i].name, &u);
    if (t[i].kind == CJ_ENV_SECONDS) (void)cj_env_seconds(t[i].name, &d);
    if (t[i].kind == CJ_ENV_FLAG) (void)cj_env_flag(t[i].name, &f);
  }
}

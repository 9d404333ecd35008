/* explain.c - cujit_cache_explain(): the request made as cujit_module_from_source() or
 * cujit_module_from_file() makes it, then explained by the cache layer (cache/explain.c). */
#include <string.h>

#include "cache/cache.h"
#include "module/module.h"

#define EXPLANATION_V1 CJ_SIZE_V1(cujit_cache_explanation, entries)

static cujit_status explain(const char *fn, const char *source, const char *name,
                            const cujit_options *opts, const char *dir,
                            cujit_cache_explanation *user, cujit_cache_difference_fn dfn,
                            void *duser) {
  cujit_cache_explanation own;
  cj_request req;
  cujit_status st;
  memset(&own, 0, sizeof own);
  own.size = sizeof own;
  CJ_CHECK(user, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_sized_out(fn, "cujit_cache_explanation", user, EXPLANATION_V1, &own, sizeof own));
  CJ_CHECK(source && source[0], CUJIT_ERROR_INVALID_SOURCE, "%s: the source is %s", fn,
           source ? "empty" : "NULL");
  CJ_TRY(cj_request_init(&req, source, name, opts, dir));
  st = cj_cache_explain(&req, &own, dfn, duser);
  cj_request_free(&req);
  if (st != CUJIT_OK) return st;
  return cj_sized_out(fn, "cujit_cache_explanation", user, EXPLANATION_V1, &own, sizeof own);
}

cujit_status cujit_cache_explain(const char *source, const char *name, const cujit_options *opts,
                                 cujit_cache_explanation *out, cujit_cache_difference_fn fn,
                                 void *user) {
  return explain("cujit_cache_explain", source, name ? name : "source.cu", opts, NULL, out, fn,
                 user);
}

cujit_status cujit_cache_explain_file(const char *path, const cujit_options *opts,
                                      cujit_cache_explanation *out,
                                      cujit_cache_difference_fn fn, void *user) {
  static const char fn_name[] = "cujit_cache_explain_file";
  char *text, *dir;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn_name);
  CJ_TRY(cj_source_file(fn_name, path, &text, &dir));
  st = explain(fn_name, text, path, opts, dir, out, fn, user);
  cj_free(dir);
  cj_free(text);
  return st;
}

/* batch.c - many sources in, one module each out (cujit_batch_compile), on top of the
 * asynchronous compiles of job.c. A source given twice (same text, same name) is compiled
 * once and its module shared by image: the second module costs no compile even with the
 * caches off. One source alone is compiled on the calling thread, as
 * cujit_module_from_source() compiles it. */
#include <string.h>

#include "cache/cache.h"
#include "module/module.h"

/* A second module of the same image, with the same origin (for export and the probe). */
static cujit_status module_again(const cujit_module *h, cujit_module **out) {
  const cj_module *m = cj_module_find(h); /* made by this batch: live */
  cj_module *again;
  cj_request r;
  cujit_status st;
  CJ_TRY(cj_origin_request(m, &r));
  st = cj_module_new_kept(cj_image_ref(m->image), &r, m->origin.arch, &again);
  if (st != CUJIT_OK)
    cj_image_unref(m->image);
  else
    *out = cj_module_handle(again);
  cj_request_free(&r);
  return st;
}

typedef struct item {
  unsigned char hash[16]; /* of the source, to find repeats quickly */
  size_t first;           /* the index of the first equal source (itself when none) */
  cujit_compile_job *job;
  cujit_status status;
  char *message; /* its failure's detail (NULL: none or out of memory) */
} item;

static const char *name_of(const char *const *names, size_t i) {
  return names && names[i] ? names[i] : "source.cu";
}

/* Marks each source that repeats an earlier one (same text, same name). */
static void find_repeats(item *it, const char *const *sources, const char *const *names, size_t n) {
  size_t i, k;
  for (i = 0; i < n; i++) {
    it[i].first = i;
    if (!sources[i]) continue;
    cj_hash128(sources[i], strlen(sources[i]), it[i].hash);
    for (k = 0; k < i; k++) {
      if (it[k].first != k || !sources[k] || memcmp(it[k].hash, it[i].hash, 16) != 0 ||
          strcmp(sources[k], sources[i]) != 0 || strcmp(name_of(names, k), name_of(names, i)) != 0)
        continue;
      it[i].first = k;
      break;
    }
  }
}

static void fail_item(item *it, cujit_status st) {
  it->status = st;
  it->message = cj_strdup(cujit_last_error());
}

/* The detail of a batch with failures: how many, then each one's own detail. */
static cujit_status report(const item *it, const char *const *names, size_t n) {
  cj_buf b = {0};
  size_t i, failed = 0, first = n;
  for (i = 0; i < n; i++)
    if (it[i].status != CUJIT_OK && failed++ == 0) first = i;
  if (!failed) return CUJIT_OK;
  cj_buf_printf(&b, "%zu of %zu sources did not compile (the statuses say which):", failed, n);
  for (i = 0; i < n; i++) {
    if (it[i].status == CUJIT_OK) continue;
    cj_buf_printf(&b, "\n\nsource %zu ('%s'): %s: %s", i, name_of(names, i),
                  cujit_status_name(it[i].status),
                  it[i].message ? it[i].message : cujit_status_string(it[i].status));
  }
  if (b.oom) {
    cj_buf_free(&b);
    return cj_fail(it[first].status,
                   "%zu of %zu sources did not compile; the first is source "
                   "%zu",
                   failed, n, first);
  }
  cj_fail(it[first].status, "%s", b.data);
  cj_buf_free(&b);
  return it[first].status;
}

/* Starts every first occurrence, then waits for each; repeats take their first's module. */
static void compile_all(item *it, cujit_module **mods, const char *const *sources,
                        const char *const *names, size_t n, const cujit_options *opts) {
  size_t i;
  cujit_status st;
  for (i = 0; i < n; i++)
    if (it[i].first == i &&
        (st = cujit_compile_job_start(&it[i].job, sources[i], name_of(names, i), opts)) != CUJIT_OK)
      fail_item(&it[i], st);
  for (i = 0; i < n; i++) {
    if (it[i].first != i || !it[i].job) continue;
    if ((st = cujit_compile_job_wait(it[i].job, &mods[i])) != CUJIT_OK) fail_item(&it[i], st);
    cujit_compile_job_destroy(it[i].job);
    it[i].job = NULL;
  }
  for (i = 0; i < n; i++) {
    const item *f = &it[it[i].first];
    if (it[i].first == i) continue;
    if (f->status != CUJIT_OK) {
      it[i].status = f->status;
      it[i].message = f->message ? cj_strdup(f->message) : NULL;
    } else if ((st = module_again(mods[it[i].first], &mods[i])) != CUJIT_OK) {
      fail_item(&it[i], st);
    }
  }
}

cujit_status cujit_batch_compile(cujit_module **mods, cujit_status *statuses,
                                 const char *const *sources, const char *const *names, size_t n,
                                 const cujit_options *opts) {
  item *it;
  cujit_status st;
  size_t i;
  CJ_CHECK(mods && sources, CUJIT_ERROR_INVALID_VALUE, "cujit_batch_compile: %s is NULL",
           mods ? "sources" : "mods");
  for (i = 0; i < n; i++) {
    mods[i] = NULL;
    if (statuses) statuses[i] = CUJIT_OK;
  }
  if (n == 1) {
    st = cujit_module_from_source(&mods[0], sources[0], names ? names[0] : NULL, opts);
    if (statuses) statuses[0] = st;
    return st;
  }
  if (n == 0) return CUJIT_OK;
  if (!(it = cj_calloc(n, sizeof *it))) return cj_fail_oom("starting a batch of compiles");
  find_repeats(it, sources, names, n);
  compile_all(it, mods, sources, names, n, opts);
  st = report(it, names, n);
  for (i = 0; i < n; i++) {
    if (statuses) statuses[i] = it[i].status;
    cj_free(it[i].message);
  }
  cj_free(it);
  return st;
}

/* diff.c - how an entry's manifest differs from a request's (format/manifest.c reads
 * both), part by part and in words: what explaining a miss reports (explain.c) and why an
 * entry cannot be verified (verify.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

typedef struct differ {
  cj_diff_fn fn;
  void *user;
  unsigned count;
  int stopped;
} differ;

static int same(cj_text a, cj_text b) { return a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0); }

/* At most 120 bytes of t, anything but printable ASCII as '?', into out. */
static const char *shown(cj_text t, char *out, size_t size) {
  size_t i, max = t.n < 120 ? t.n : 120;
  if (max >= size) max = size - 1;
  for (i = 0; i < max; i++) out[i] = t.p[i] >= 0x20 && t.p[i] < 0x7f ? t.p[i] : '?';
  out[max] = '\0';
  if (max < t.n && max >= 3) memcpy(out + max - 3, "...", 3);
  return out;
}

static void report(differ *d, int part, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(differ *d, int part, const char *what, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  d->count++;
  if (!d->fn || d->stopped) return;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (d->fn(part, what, detail, d->user) != 0) d->stopped = 1;
}

static const char *target(cj_text t, char *out, size_t size) {
  char s[128];
  if (!t.n) return "NVRTC's default";
  snprintf(out, size, "'%s'", shown(t, s, sizeof s));
  return out;
}

/* The line (from 1) where two texts first differ. */
static size_t first_line(cj_text a, cj_text b) {
  size_t i, line = 1, n = a.n < b.n ? a.n : b.n;
  for (i = 0; i < n && a.p[i] == b.p[i]; i++) line += a.p[i] == '\n';
  return line;
}

static void diff_top(differ *d, const cj_manifest *was, const cj_manifest *now) {
  char a[160], b[160];
  if (!same(was->nvrtc, now->nvrtc))
    report(d, CUJIT_CACHE_PART_NVRTC, "", "NVRTC differs: the entry's is %s, this one is %s",
           shown(was->nvrtc, a, sizeof a), shown(now->nvrtc, b, sizeof b));
  if (!same(was->arch, now->arch))
    report(d, CUJIT_CACHE_PART_ARCH, "", "the target differs: %s in the entry, %s now",
           target(was->arch, a, sizeof a), target(now->arch, b, sizeof b));
  if (!same(was->name, now->name))
    report(d, CUJIT_CACHE_PART_NAME, "", "the program name differs: '%s' in the entry, '%s' now",
           shown(was->name, a, sizeof a), shown(now->name, b, sizeof b));
  if (!same(was->source, now->source))
    report(d, CUJIT_CACHE_PART_SOURCE, "",
           "the source differs from line %zu on (%zu bytes in "
           "the entry, %zu now)",
           first_line(was->source, now->source), was->source.n, now->source.n);
}

static void diff_headers(differ *d, const cj_manifest *was, const cj_manifest *now) {
  size_t i;
  for (i = 0; i < now->deps.n; i++) {
    const cj_dep *y = &now->deps.v[i], *x = cj_deplist_find(&was->deps, y->path);
    if (!x)
      report(d, CUJIT_CACHE_PART_HEADER, y->path,
             "header '%s' is included now; the entry's "
             "compile did not include it",
             y->path);
    else if (x->size != y->size || memcmp(x->hash, y->hash, 16) != 0)
      report(d, CUJIT_CACHE_PART_HEADER, y->path,
             "header '%s' changed (%llu bytes in the "
             "entry, %llu now%s)",
             y->path, (unsigned long long)x->size, (unsigned long long)y->size,
             x->size == y->size ? ", other contents" : "");
  }
  for (i = 0; i < was->deps.n; i++)
    if (!cj_deplist_find(&now->deps, was->deps.v[i].path))
      report(d, CUJIT_CACHE_PART_HEADER, was->deps.v[i].path,
             "header '%s', included by the "
             "entry's compile, is not included now",
             was->deps.v[i].path);
}

/* 1 when the part holds this item. */
static int holds(cj_text part, cj_text item) {
  size_t pos = 0;
  cj_text x;
  while (cj_manifest_item(part, &pos, &x))
    if (same(x, item)) return 1;
  return 0;
}

static const int public_part[CJ_NPARTS] = {CUJIT_CACHE_PART_INCLUDE_DIRS,
                                           CUJIT_CACHE_PART_DEFINES,
                                           CUJIT_CACHE_PART_OPTIONS,
                                           CUJIT_CACHE_PART_MEMORY_HEADERS,
                                           CUJIT_CACHE_PART_NAME_EXPRESSIONS,
                                           CUJIT_CACHE_PART_TOOLKIT};
static const char *const item_names[CJ_NPARTS] = {"include directory", "define",
                                                  "NVRTC option",      "in-memory header",
                                                  "name expression",   ""};

/* A list part: items added and removed, or the same items in another order. */
static void diff_list(differ *d, int p, cj_text was, cj_text now) {
  size_t pos = 0;
  unsigned before = d->count;
  cj_text x;
  char s[160];
  while (cj_manifest_item(now, &pos, &x))
    if (!holds(was, x))
      report(d, public_part[p], shown(x, s, sizeof s), "%s '%s' is given now, not in the entry",
             item_names[p], s);
  pos = 0;
  while (cj_manifest_item(was, &pos, &x))
    if (!holds(now, x))
      report(d, public_part[p], shown(x, s, sizeof s),
             "%s '%s' was given for the entry, not "
             "now",
             item_names[p], s);
  if (d->count == before)
    report(d, public_part[p], "", "the %s are the same but in another order (order matters)",
           cj_part_name(p));
}

/* In-memory headers: pairs of name and text. */
static int find_header(cj_text part, cj_text name, cj_text *text) {
  size_t pos = 0;
  cj_text n;
  while (cj_manifest_item(part, &pos, &n) && cj_manifest_item(part, &pos, text))
    if (same(n, name)) return 1;
  return 0;
}

static void diff_memory_headers(differ *d, cj_text was, cj_text now) {
  size_t pos = 0;
  unsigned before = d->count;
  cj_text name, text, other;
  char s[160];
  while (cj_manifest_item(now, &pos, &name) && cj_manifest_item(now, &pos, &text)) {
    shown(name, s, sizeof s);
    if (!find_header(was, name, &other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, s,
             "in-memory header '%s' is given now, not "
             "in the entry",
             s);
    else if (!same(text, other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, s,
             "in-memory header '%s' changed from line "
             "%zu on (%zu bytes in the entry, %zu now)",
             s, first_line(other, text), other.n, text.n);
  }
  pos = 0;
  while (cj_manifest_item(was, &pos, &name) && cj_manifest_item(was, &pos, &text))
    if (!find_header(now, name, &other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, shown(name, s, sizeof s),
             "in-memory header "
             "'%s' was given for the entry, not now",
             s);
  if (d->count == before)
    report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, "",
           "the in-memory headers are the same but in "
           "another order (order matters)");
}

static void diff_toolkit(differ *d, const cj_manifest *was, const cj_manifest *now) {
  if (was->toolkit != now->toolkit)
    report(d, CUJIT_CACHE_PART_TOOLKIT, "",
           "the toolkit's headers were %s for the entry and "
           "are %s now (CUJIT_OPT_NO_TOOLKIT_INCLUDES)",
           was->toolkit ? "searched" : "not searched", now->toolkit ? "searched" : "not searched");
  else if (now->toolkit && memcmp(was->toolkit_env, now->toolkit_env, 16) != 0)
    report(d, CUJIT_CACHE_PART_TOOLKIT, "",
           "the toolkit's location differs (env CUDA_PATH or "
           "CUDA_HOME, which choose the toolkit's headers)");
}

unsigned cj_cache_manifest_diff(const cj_manifest *was, const cj_manifest *now, cj_diff_fn fn,
                                void *user) {
  differ d = {fn, user, 0, 0};
  int p;
  diff_top(&d, was, now);
  diff_headers(&d, was, now);
  for (p = 0; p < CJ_PART_TOOLKIT; p++) {
    if (was->count[p] == now->count[p] && same(was->part[p], now->part[p])) continue;
    if (p == CJ_PART_HEADERS)
      diff_memory_headers(&d, was->part[p], now->part[p]);
    else
      diff_list(&d, p, was->part[p], now->part[p]);
  }
  diff_toolkit(&d, was, now);
  return d.count;
}

/* test_explain - questioning the cache: cujit_cache_explain names the tier that would serve
 * a request and, on a miss, the part that differs from the nearest entry; cujit_cache_verify
 * compiles entries again and tells a reproduced entry from a tampered one and from one
 * whose inputs changed. Needs NVRTC, no GPU. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "cachetest.h"

static const char kTemplate[] =
    "#include \"p.h\"\n"
    "template <class T> __global__ void fill(T *x) { x[threadIdx.x] = (T)P; }\n";

static char dir[4200]; /* holds p.h */
static const char *incs[2] = {dir, NULL};
static const char *defs[2] = {"A=1", NULL};
static const char *exprs[2] = {"fill<float>", NULL};

static int setup(void **state) {
  if (cache_setup(state) != 0) return -1;
  snprintf(dir, sizeof dir, "%s", cache);
  *strrchr(dir, '/') = '\0';
  return test_write_file(dir, "p.h", "#define P 1\n") == 0 ? 0 : -1;
}

#define EXPLAIN_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, cache_teardown)

static cujit_options base(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "compute_80";
  o.include_dirs = incs;
  o.defines = defs;
  o.name_expressions = exprs;
  return o;
}

/* The differences one explanation reported. */
typedef struct seen {
  int n;
  cujit_cache_part part[16];
  char what[16][256];
  char detail[16][1024];
} seen;

static int keep(const cujit_cache_difference *d, void *user) {
  seen *s = user;
  assert_int_equal(d->size, sizeof *d);
  if (s->n < 16) {
    s->part[s->n] = d->part;
    snprintf(s->what[s->n], sizeof s->what[0], "%s", d->what);
    snprintf(s->detail[s->n], sizeof s->detail[0], "%s", d->detail);
  }
  s->n++;
  return 0;
}

static void explain(const char *src, const cujit_options *o, cujit_cache_explanation *e, seen *s) {
  cujit_cache_explanation fresh = CUJIT_CACHE_EXPLANATION_INIT;
  memset(s, 0, sizeof *s);
  *e = fresh;
  assert_ok(cujit_cache_explain(src, "t.cu", o, e, keep, s));
  assert_int_equal(e->differences, (unsigned)s->n);
}

/* Compiles the base request, then forgets it in memory so that the disk must answer. */
static void compile_base(char key[33]) {
  cujit_options o = base();
  cujit_cache_explanation e;
  seen s;
  assert_int_equal(compile_count(kTemplate, "t.cu", &o), 1);
  cj_memcache_clear();
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_DISK);
  memcpy(key, e.key, 33);
}

/* A miss whose nearest entry is `key` and whose only differences are of `part`, the first
 * naming `what` (a substring; NULL: not checked). */
static void misses_by(const char *src, const cujit_options *o, const char *key,
                      cujit_cache_part part, const char *what) {
  cujit_cache_explanation e;
  seen s;
  int i;
  explain(src, o, &e, &s);
  assert_int_equal(e.hit, 0);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_COMPILE);
  assert_non_null(strstr(e.reason, "no entry under this key"));
  assert_int_equal(e.has_nearest, 1);
  assert_string_equal(e.nearest_key, key);
  assert_string_equal(e.nearest_name, "t.cu");
  assert_int_equal(e.entries, 1);
  assert_true(s.n >= 1);
  for (i = 0; i < s.n; i++)
    if (s.part[i] != part)
      fail_msg("difference %d is of part %d (%s), not %d", i, s.part[i], s.detail[i], part);
  if (what && !strstr(s.what[0], what)) fail_msg("'%s' does not name '%s'", s.what[0], what);
  if (what && !strstr(s.detail[0], what)) fail_msg("'%s' does not name '%s'", s.detail[0], what);
}

static void empty_cache(void **state) {
  cujit_options o = base();
  cujit_cache_explanation e;
  seen s;
  uint64_t programs = cj_nvrtc_programs_created();
  (void)state;
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.hit, 0);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_COMPILE);
  assert_int_equal(strlen(e.key), 32);
  assert_int_equal(e.has_nearest, 0);
  assert_int_equal(e.entries, 0);
  assert_int_equal(s.n, 0);
  assert_int_equal(cj_nvrtc_programs_created(), programs); /* nothing compiled to explain */
}

static void hit_in_memory_then_on_disk(void **state) {
  cujit_options o = base();
  cujit_cache_explanation e;
  seen s;
  uint64_t programs;
  (void)state;
  assert_int_equal(compile_count(kTemplate, "t.cu", &o), 1);
  programs = cj_nvrtc_programs_created();
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.hit, 1);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_MEMORY);
  assert_int_equal(e.has_nearest, 0);
  cj_memcache_clear();
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.hit, 1);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_DISK);
  assert_string_equal(e.reason, "");
  assert_int_equal(s.n, 0);
  assert_int_equal(cj_nvrtc_programs_created(), programs);
  /* the file variant names the request as cujit_module_from_file does: another name */
  test_write_file(dir, "t.cu", kTemplate);
  {
    char path[4300];
    cujit_cache_explanation f = CUJIT_CACHE_EXPLANATION_INIT;
    snprintf(path, sizeof path, "%s/t.cu", dir);
    memset(&s, 0, sizeof s);
    assert_ok(cujit_cache_explain_file(path, &o, &f, keep, &s));
    assert_int_equal(f.tier, CUJIT_CACHE_TIER_COMPILE);
    assert_int_equal(s.part[0], CUJIT_CACHE_PART_NAME);
  }
}

static void miss_names_the_source(void **state) {
  cujit_options o = base();
  char key[33], src[512];
  (void)state;
  compile_base(key);
  snprintf(src, sizeof src, "%s// an edit\n", kTemplate);
  misses_by(src, &o, key, CUJIT_CACHE_PART_SOURCE, NULL);
}

static void miss_names_the_header(void **state) {
  cujit_options o = base();
  char key[33];
  (void)state;
  compile_base(key);
  test_write_file(dir, "p.h", "#define P 2\n");
  misses_by(kTemplate, &o, key, CUJIT_CACHE_PART_HEADER, "p.h");
}

static void miss_names_the_option(void **state) {
  cujit_options o = base();
  const char *opts[] = {"-lineinfo", NULL}, *defs2[] = {"A=2", NULL};
  char key[33];
  (void)state;
  compile_base(key);
  o.nvrtc_options = opts;
  misses_by(kTemplate, &o, key, CUJIT_CACHE_PART_OPTIONS, "-lineinfo");
  o = base();
  o.defines = defs2;
  misses_by(kTemplate, &o, key, CUJIT_CACHE_PART_DEFINES, "A=2");
}

static void miss_names_the_arch(void **state) {
  cujit_options o = base();
  char key[33];
  cujit_cache_explanation e;
  seen s;
  (void)state;
  compile_base(key);
  o.arch = "compute_90";
  misses_by(kTemplate, &o, key, CUJIT_CACHE_PART_ARCH, NULL);
  explain(kTemplate, &o, &e, &s);
  assert_non_null(strstr(s.detail[0], "'compute_80' in the entry, 'compute_90' now"));
}

static void miss_names_the_name_expression(void **state) {
  cujit_options o = base();
  const char *other[] = {"fill<double>", NULL};
  char key[33];
  (void)state;
  compile_base(key);
  o.name_expressions = other;
  misses_by(kTemplate, &o, key, CUJIT_CACHE_PART_NAME_EXPRESSIONS, "fill<double>");
}

/* Of two entries, the one with fewer differences is the nearest. */
static void nearest_is_the_closest(void **state) {
  cujit_options o = base(), far = base();
  const char *opts[] = {"-lineinfo", NULL};
  cujit_cache_explanation e;
  char key[33];
  seen s;
  (void)state;
  compile_base(key);
  far.arch = "compute_90";
  far.nvrtc_options = opts;
  assert_int_equal(compile_count(kTemplate, "t.cu", &far), 1);
  o.nvrtc_options = opts;
  o.arch = "compute_90";
  o.defines = NULL; /* the far one is one difference away (the define), the base three */
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.entries, 2);
  assert_int_equal(s.n, 1);
  assert_int_equal(s.part[0], CUJIT_CACHE_PART_DEFINES);
  assert_string_not_equal(e.nearest_key, key);
}

static void explain_errors(void **state) {
  cujit_options o = base();
  cujit_cache_explanation e = CUJIT_CACHE_EXPLANATION_INIT;
  (void)state;
  assert_status_detail(cujit_cache_explain(kTemplate, "t.cu", &o, NULL, NULL, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  e.size = 3;
  assert_status_detail(cujit_cache_explain(kTemplate, "t.cu", &o, &e, NULL, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_cache_explanation");
  e.size = sizeof e;
  assert_int_equal(cujit_cache_explain("", "t.cu", &o, &e, NULL, NULL), CUJIT_ERROR_INVALID_SOURCE);
  assert_status_detail(cujit_cache_explain_file("/nonexistent/x.cu", &o, &e, NULL, NULL),
                       CUJIT_ERROR_FILE, "/nonexistent/x.cu");
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_cache_explain(kTemplate, "t.cu", &o, &e, NULL, NULL));
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_UNCACHED);
  assert_non_null(strstr(e.reason, "CUJIT_OPT_NO_CACHE"));
}

/* ---- verify ---- */

typedef struct verdicts {
  int n, match, mismatch, skipped;
  char detail[1024];
} verdicts;

static int count_verdict(const cujit_cache_verified *v, void *user) {
  verdicts *s = user;
  assert_int_equal(strlen(v->key), 32);
  s->n++;
  if (v->verdict == CUJIT_CACHE_VERDICT_MATCH) s->match++;
  if (v->verdict == CUJIT_CACHE_VERDICT_MISMATCH) s->mismatch++;
  if (v->verdict == CUJIT_CACHE_VERDICT_SKIPPED) s->skipped++;
  if (v->verdict != CUJIT_CACHE_VERDICT_MATCH)
    snprintf(s->detail, sizeof s->detail, "%s", v->detail);
  if (v->verdict == CUJIT_CACHE_VERDICT_MATCH) assert_string_equal(v->detail, "");
  return 0;
}

static void verify(size_t sample, verdicts *v, cujit_cache_verify_summary *sum) {
  cujit_cache_verify_summary fresh = CUJIT_CACHE_VERIFY_SUMMARY_INIT;
  memset(v, 0, sizeof *v);
  *sum = fresh;
  assert_ok(cujit_cache_verify(sample, count_verdict, v, sum));
  assert_int_equal(sum->matched, (uint64_t)v->match);
  assert_int_equal(sum->mismatched, (uint64_t)v->mismatch);
  assert_int_equal(sum->skipped, (uint64_t)v->skipped);
}

/* Three entries, one with an anonymous namespace (whose names NVRTC makes up). */
static void compile_three(void) {
  cujit_options o = base(), sm = CUJIT_OPTIONS_INIT;
  assert_int_equal(compile_count(kTemplate, "t.cu", &o), 1);
  assert_int_equal(compile_count(kKernel, "k.cu", NULL), 1);
  sm.arch = "sm_80";
  assert_int_equal(compile_count("namespace { __device__ int z; }\n"
                                 "__global__ void g(int *x) { x[0] = z; }\n",
                                 "anon.cu", &sm),
                   1);
}

/* In-memory headers are part of the manifest too: a request with them finds its nearest
 * entry, a changed header text is named, and verify compiles such an entry again. */
static void in_memory_headers_are_explained(void **state) {
  static const char src[] = "#include \"mem.h\"\n__global__ void k(int *x) { x[0] = MEM; }\n";
  cujit_header h1[] = {{"mem.h", "#define MEM 1\n"}, {NULL, NULL}};
  cujit_header h2[] = {{"mem.h", "#define MEM 2\n"}, {NULL, NULL}};
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_cache_explanation e;
  cujit_cache_verify_summary sum;
  verdicts v;
  seen s;
  char key[33];
  (void)state;
  o.arch = "compute_80";
  o.headers = h1;
  assert_int_equal(compile_count(src, "t.cu", &o), 1);
  cj_memcache_clear();
  explain(src, &o, &e, &s);
  assert_int_equal(e.tier, CUJIT_CACHE_TIER_DISK);
  memcpy(key, e.key, 33);
  o.headers = h2;
  misses_by(src, &o, key, CUJIT_CACHE_PART_MEMORY_HEADERS, "mem.h");
  verify(0, &v, &sum);
  assert_int_equal(v.match, 1);
  if (v.mismatch || v.skipped) fail_msg("%s", v.detail);
}

static void verify_all_match(void **state) {
  cujit_cache_verify_summary sum;
  verdicts v;
  (void)state;
  compile_three();
  verify(0, &v, &sum);
  assert_int_equal(sum.entries, 3);
  assert_int_equal(v.match, 3);
  if (v.mismatch || v.skipped) fail_msg("%s", v.detail);
  verify(2, &v, &sum); /* a sample */
  assert_int_equal(v.n, 2);
  assert_int_equal(v.match, 2);
  assert_ok(cujit_cache_verify(1, NULL, NULL, NULL));
}

/* The PTX of the only entry changed and its checksum recomputed: a valid entry that NVRTC
 * does not reproduce. */
static void verify_reports_tampering(void **state) {
  static unsigned char buf[1 << 20];
  char paths[1][4200];
  cujit_cache_verify_summary sum;
  verdicts v;
  uint64_t psize = 0, s;
  size_t n, i;
  unsigned char *ptx;
  FILE *f;
  (void)state;
  assert_int_equal(compile_count(kKernel, "k.cu", NULL), 1);
  assert_int_equal(find_entries(cache, paths, 1), 1);
  f = fopen(paths[0], "rb");
  n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ptx = memmem(buf, n, ".target", 7);
  assert_non_null(ptx);
  ptx[1] = 'T'; /* ".Target": another image, of the same size */
  for (i = 0; i < 8; i++) psize |= (uint64_t)buf[32 + i] << (8 * i);
  s = cj_checksum(buf, 40, buf + CJ_ENTRY_HEADER_SIZE, (size_t)psize);
  for (i = 0; i < 8; i++) buf[40 + i] = (unsigned char)(s >> (8 * i));
  f = fopen(paths[0], "wb");
  assert_int_equal(fwrite(buf, 1, n, f), n);
  fclose(f);
  chmod(paths[0], 0600);
  verify(0, &v, &sum);
  assert_int_equal(v.mismatch, 1);
  assert_non_null(strstr(v.detail, "the PTX differs"));
}

static void verify_skips_changed_inputs(void **state) {
  cujit_options o = base();
  cujit_cache_verify_summary sum;
  verdicts v;
  (void)state;
  assert_int_equal(compile_count(kTemplate, "t.cu", &o), 1);
  test_write_file(dir, "p.h", "#define P 3\n");
  verify(0, &v, &sum);
  assert_int_equal(v.skipped, 1);
  assert_int_equal(v.mismatch, 0);
  assert_non_null(strstr(v.detail, "not reproducible"));
  assert_non_null(strstr(v.detail, "p.h"));
}

/* An entry of the format before manifests: explain compares nothing with it, verify skips
 * it, neither fails. */
static void old_entries_are_skipped(void **state) {
  char shard[4300], path[4400];
  cujit_options o = base();
  cujit_cache_explanation e;
  cujit_cache_verify_summary sum;
  verdicts v;
  seen s;
  FILE *in, *out;
  unsigned char buf[4096];
  size_t n;
  (void)state;
  snprintf(shard, sizeof shard, "%s/ab", cache);
  mkdir(cache, 0700);
  assert_int_equal(mkdir(shard, 0700), 0);
  snprintf(path, sizeof path, "%s/ab0123456789abcdef0123456789abcd.cujit", shard);
  in = fopen(CUJIT_TEST_DATA "/cache_entry_v1.bin", "rb");
  assert_non_null(in);
  n = fread(buf, 1, sizeof buf, in);
  fclose(in);
  out = fopen(path, "wb");
  fwrite(buf, 1, n, out);
  fclose(out);
  explain(kTemplate, &o, &e, &s);
  assert_int_equal(e.entries, 0);
  assert_int_equal(e.has_nearest, 0);
  verify(0, &v, &sum);
  assert_int_equal(v.skipped, 1);
  assert_non_null(strstr(v.detail, "cache format 1"));
}

static void verify_errors(void **state) {
  cujit_cache_verify_summary sum = CUJIT_CACHE_VERIFY_SUMMARY_INIT;
  (void)state;
  sum.size = 5;
  assert_status_detail(cujit_cache_verify(0, NULL, NULL, &sum), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_cache_verify_summary");
  setenv("CUJIT_CACHE", "0", 1);
  assert_int_equal(cujit_cache_verify(0, NULL, NULL, NULL), CUJIT_ERROR_CACHE);
  unsetenv("CUJIT_CACHE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      EXPLAIN_TEST(empty_cache),
      EXPLAIN_TEST(hit_in_memory_then_on_disk),
      EXPLAIN_TEST(miss_names_the_source),
      EXPLAIN_TEST(miss_names_the_header),
      EXPLAIN_TEST(miss_names_the_option),
      EXPLAIN_TEST(miss_names_the_arch),
      EXPLAIN_TEST(in_memory_headers_are_explained),
      EXPLAIN_TEST(miss_names_the_name_expression),
      EXPLAIN_TEST(nearest_is_the_closest),
      EXPLAIN_TEST(explain_errors),
      EXPLAIN_TEST(verify_all_match),
      EXPLAIN_TEST(verify_reports_tampering),
      EXPLAIN_TEST(verify_skips_changed_inputs),
      EXPLAIN_TEST(old_entries_are_skipped),
      EXPLAIN_TEST(verify_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_cache_faults - every allocation on the cache's paths fails in turn: a miss that
 * scans headers and stores the entry, a memory hit that revalidates headers, a disk hit,
 * and the recovery from a damaged entry. Each call returns CUJIT_OK (a failure that only
 * cost the cache) or CUJIT_ERROR_OUT_OF_MEMORY with a message; nothing crashes or leaks
 * (this group runs under AddressSanitizer in scripts/check). Built only with
 * -DCUJIT_FAULT_INJECTION=ON. */
#include "cachetest.h"

void cujit_test_fail_alloc_after(long n);
long cujit_test_alloc_countdown(void);

static char *incdir;
static char entry_copy[1 << 16];
static size_t entry_copy_len;

static const char kSrc[] =
    "#include \"mem.h\"\n#include \"disk.h\"\n"
    "template <typename T> __global__ void scale(T *x) { x[threadIdx.x] *= (T)(M + D); }\n";

static cujit_status compile(cujit_module **m) {
  cujit_header h[] = {{"mem.h", "#define M 3\n"}, {NULL, NULL}};
  const char *names[] = {"scale<float>", NULL}, *dirs[] = {incdir, NULL};
  cujit_options o = {0};
  o.arch = "compute_80";
  o.headers = h;
  o.name_expressions = names;
  o.include_dirs = dirs;
  return cujit_module_from_source(m, kSrc, "faults.cu", &o);
}

/* Runs prepare() then compile() with the n-th allocation failing, n = 1, 2, ... until a
 * run reaches no failure. Returns how many runs had an allocation fail. */
static int fail_each(void (*prepare)(void)) {
  int n, failed_runs = 0;
  for (n = 1; n < 100000; n++) {
    cujit_module *m = NULL;
    cujit_status st;
    int reached;
    prepare();
    cujit_test_fail_alloc_after(n);
    st = compile(&m);
    reached = cujit_test_alloc_countdown() == 0;
    cujit_test_fail_alloc_after(0);
    if (st != CUJIT_OK &&
        (st != CUJIT_ERROR_OUT_OF_MEMORY || !strstr(cujit_last_error(), "out of host memory")))
      fail_msg("allocation %d: %s: %s", n, cujit_status_name(st), cujit_last_error());
    if (st == CUJIT_OK) {
      assert_non_null(m);
      assert_non_null(strstr(cujit_module_ptx(m, NULL), "scale"));
      assert_int_equal(cujit_module_name_expression_count(m), 1);
    } else {
      assert_null(m);
    }
    cujit_module_destroy(m);
    if (!reached) break;
    failed_runs++;
  }
  return failed_runs;
}

static void nothing(void) {}

static void forget_memory(void) { cj_memcache_clear(); }

/* The entry saved after the first store, written back damaged before each run. */
static void damage_entry(void) {
  char paths[2][4200];
  FILE *f;
  cj_memcache_clear();
  if (find_entries(cache, paths, 2) != 1) return;
  f = fopen(paths[0], "wb");
  if (!f) return;
  fwrite(entry_copy, 1, entry_copy_len / 2, f);
  fclose(f);
}

static void save_entry(void) {
  char paths[2][4200];
  FILE *f;
  assert_int_equal(find_entries(cache, paths, 2), 1);
  f = fopen(paths[0], "rb");
  assert_non_null(f);
  entry_copy_len = fread(entry_copy, 1, sizeof entry_copy, f);
  fclose(f);
}

static void cache_paths(void **state) {
  (void)state;
  cache = fresh_cache("cachefaults");
  incdir = malloc(4200);
  snprintf(incdir, 4200, "%.*s", (int)(strrchr(cache, '/') - cache), cache);
  assert_int_equal(test_write_file(incdir, "disk.h", "#define D 4\n"), 0);
  log_capture(CUJIT_LOG_OFF);
  assert_true(fail_each(nothing) > 20); /* miss: scan, compile, store */
  cj_memcache_clear(); /* a failure while storing leaves the image in memory only */
  {
    cujit_module *m = NULL;
    assert_ok(compile(&m)); /* stores it if it was not stored */
    cujit_module_destroy(m);
  }
  save_entry();
  assert_true(fail_each(nothing) >= 2);      /* memory hit (disk.h is new: rehashed) */
  assert_true(fail_each(forget_memory) > 8); /* disk hit */
  assert_true(fail_each(damage_entry) > 20); /* damaged entry: compile and replace */
  free(incdir);
  drop_cache(cache);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(cache_paths)};
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_faults - every allocation of the compile path fails in turn: the call returns
 * CUJIT_ERROR_OUT_OF_MEMORY with a message (or succeeds when the failure only cost the cache),
 * never crashes, and leaks nothing (the suite runs this group under AddressSanitizer).
 * Built only with -DCUJIT_FAULT_INJECTION=ON. */
#include "testutil.h"

void cujit_test_fail_alloc_after(long n);
long cujit_test_alloc_countdown(void);

static const char kSrc[] =
    "#include \"p.h\"\n"
    "template <typename T> __global__ void scale(T *x) { x[threadIdx.x] *= (T)P; }\n"
    "template __global__ void scale<float>(float *);\n";

/* Runs `compile` with the n-th allocation failing, for n = 1, 2, ... until a run completes
 * without reaching the failure. Returns how many runs hit a failure. */
static int each_allocation_fails(cujit_status (*compile)(cujit_module **)) {
  int n, fired_count = 0;
  for (n = 1; n < 100000; n++) {
    cujit_module *m = NULL;
    cujit_status st;
    int fired;
    cujit_test_fail_alloc_after(n);
    st = compile(&m);
    fired = cujit_test_alloc_countdown() == 0;
    cujit_test_fail_alloc_after(0);
    if (!fired) {
      assert_ok(st);
      assert_non_null(m);
      cujit_module_destroy(m);
      break;
    }
    fired_count++;
    if (st != CUJIT_OK) {
      if (st != CUJIT_ERROR_OUT_OF_MEMORY)
        fail_msg("allocation %d: %s: %s", n, cujit_status_name(st), cujit_last_error());
      assert_non_null(strstr(cujit_last_error(), "out of host memory"));
      assert_null(m);
    }
    cujit_module_destroy(m);
  }
  return fired_count;
}

static cujit_status compile_uncached(cujit_module **m) {
  cujit_header h[] = {{"p.h", "#define P 3\n"}, {NULL, NULL}};
  const char *defs[] = {"A=1", "B", NULL}, *names[] = {"scale<float>", NULL};
  const char *nv[] = {"-default-device", NULL}, *dirs[] = {".", NULL};
  cujit_options o = {0};
  o.arch = "sm_90";
  o.headers = h;
  o.defines = defs;
  o.name_expressions = names;
  o.nvrtc_options = nv;
  o.include_dirs = dirs;
  o.flags = CUJIT_OPT_NO_CACHE;
  return cujit_module_from_source(m, kSrc, "faults.cu", &o);
}

static cujit_status compile_cached(cujit_module **m) {
  cujit_header h[] = {{"p.h", "#define P 5\n"}, {NULL, NULL}};
  const char *names[] = {"scale<float>", NULL};
  cujit_options o = {0};
  o.arch = "sm_90";
  o.headers = h;
  o.name_expressions = names;
  return cujit_module_from_source(m, kSrc, "faults.cu", &o);
}

/* Compiled (from the caches after the first run), exported and imported back. */
static cujit_status export_import(cujit_module **m) {
  cujit_header h[] = {{"p.h", "#define P 7\n"}, {NULL, NULL}};
  const char *names[] = {"scale<float>", NULL}, *dirs[] = {".", NULL};
  cujit_options o = {0};
  cujit_module *compiled = NULL;
  void *blob = NULL;
  size_t size = 0;
  cujit_status st;
  o.arch = "sm_90";
  o.headers = h;
  o.name_expressions = names;
  o.include_dirs = dirs;
  st = cujit_module_from_source(&compiled, kSrc, "faults.cu", &o);
  if (st == CUJIT_OK) st = cujit_module_export(compiled, &blob, &size);
  if (st == CUJIT_OK) st = cujit_module_import(m, blob, size, kSrc, "faults.cu", &o);
  cujit_free(blob);
  cujit_module_destroy(compiled);
  return st;
}

static void compile_path(void **state) {
  (void)state;
  assert_true(each_allocation_fails(compile_uncached) > 10);
}

static void cache_path(void **state) {
  (void)state;
  /* first round: misses and writes the cache; second: hits it */
  assert_true(each_allocation_fails(compile_cached) > 10);
  /* a memory hit allocates only the module, which holds its name (the source is the
   * image's): exactly one allocation to fail */
  assert_int_equal(each_allocation_fails(compile_cached), 1);
}

static void export_import_path(void **state) {
  (void)state;
  assert_true(each_allocation_fails(export_import) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compile_path),
      cmocka_unit_test(cache_path),
      cmocka_unit_test(export_import_path),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

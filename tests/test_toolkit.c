/* test_toolkit - the CUDA toolkit's headers with no options: <cuda_fp16.h>,
 * <curand_kernel.h>, CUB and libcu++ compile and are cached; the C library headers NVRTC
 * lacks come built in with the right values; the toolkit's files are keyed by its place,
 * not scanned; turning it off, or a header found nowhere, says where cujit looked. */
#include "cachetest.h"

static cujit_options opts(unsigned flags) {
  cujit_options o = ptx_options();
  o.flags = flags;
  return o;
}

/* Skips the test, saying why, when no toolkit was found (the headers cannot be had). */
static void need_toolkit(void) {
  size_t n;
  cj_toolkit_include_dirs(&n);
  if (n) return;
  test_skip_part("no CUDA toolkit include directory found");
  skip();
}

/* The number of headers from disk the cache key of a compile of `src` holds. */
static size_t keyed_headers(const char *src, const cujit_options *o) {
  char bypass[256];
  cj_request r;
  cj_deps *deps = NULL;
  size_t n;
  assert_ok(cj_request_init(&r, src, "tk.cu", o, NULL));
  assert_ok(cj_scan_request(&r, &deps, bypass, sizeof bypass));
  assert_string_equal(bypass, "");
  n = cj_deplist_count_present(deps);
  cj_deplist_destroy(deps);
  cj_request_free(&r);
  return n;
}

static const char kLibraries[] =
    "#include <cuda_fp16.h>\n"
    "#include <curand_kernel.h>\n"
    "#include <cub/block/block_reduce.cuh>\n"
    "#include <cuda/std/cstdint>\n"
    "__global__ void libs(float *out, unsigned long long seed) {\n"
    "  using Reduce = cub::BlockReduce<float, 128>;\n"
    "  __shared__ typename Reduce::TempStorage tmp;\n"
    "  curandStatePhilox4_32_10_t st;\n"
    "  curand_init(seed, threadIdx.x, 0, &st);\n"
    "  float v = __half2float(__float2half(curand_uniform(&st)));\n"
    "  float s = Reduce(tmp).Sum(v);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = s + (cuda::std::uint32_t)1;\n"
    "}\n";

static void libraries_need_no_options(void **state) {
  cujit_options o = opts(0);
  (void)state;
  need_toolkit();
  assert_int_equal(compile_count(kLibraries, "tk.cu", &o), 1);
  cj_memcache_clear();
  assert_int_equal(compile_count(kLibraries, "tk.cu", &o), 0); /* a disk hit */
  cj_memcache_clear();
  assert_int_equal(keyed_headers(kLibraries, &o), 0); /* the toolkit's files are not hashed */
}

static void toolkit_on_the_include_path_is_not_scanned(void **state) {
  char cccl[4200], inc[4200];
  size_t n;
  const char *const *dirs;
  const char *paths[3];
  cujit_options o = opts(CUJIT_OPT_NO_TOOLKIT_INCLUDES);
  (void)state;
  need_toolkit();
  dirs = cj_toolkit_include_dirs(&n);
  snprintf(inc, sizeof inc, "%s", dirs[n - 1]);
  snprintf(cccl, sizeof cccl, "%s/cccl", inc);
  paths[0] = cccl;
  paths[1] = inc;
  paths[2] = NULL;
  o.include_dirs = paths;
  assert_int_equal(keyed_headers(kLibraries, &o), 0); /* CCCL's hundreds of headers too */
}

static void c_headers_are_built_in(void **state) {
  static const char src[] =
      "#include <stdint.h>\n#include <stddef.h>\n#include <limits.h>\n#include <float.h>\n"
      "struct pair { int32_t a; uint64_t b; };\n"
      "__global__ void c_headers(float *f, double *d, int *i, size_t *z) {\n"
      "  ptrdiff_t p = (char *)f - (char *)f;\n"
      "  f[0] = FLT_MAX;\n  d[0] = DBL_EPSILON;\n"
      "  i[0] = INT_MAX - (int)p + CHAR_BIT * 0;\n"
      "  z[0] = offsetof(struct pair, b) + (f == NULL) + UINT64_C(0) + INT8_MAX * 0;\n"
      "}\n";
  cujit_options o = opts(0);
  cujit_module *m = NULL;
  const char *ptx;
  (void)state;
  need_toolkit();
  assert_ok(cujit_module_from_source(&m, src, "c.cu", &o));
  ptx = cujit_module_ptx(m, NULL);
  /* the stores' bit patterns: FLT_MAX 0x7f7fffff, DBL_EPSILON 0x3cb0000000000000 */
  if (!strstr(ptx, "2139095039")) fail_msg("FLT_MAX is not 0x7f7fffff in:\n%s", ptx);
  if (!strstr(ptx, "4372995238176751616")) fail_msg("DBL_EPSILON is not 2^-52 in:\n%s", ptx);
  if (!strstr(ptx, "2147483647")) fail_msg("INT_MAX is not 2147483647 in:\n%s", ptx);
  if (!strstr(ptx, "9, 8,")) fail_msg("offsetof(struct pair, b) is not 8 in:\n%s", ptx);
  cujit_module_destroy(m);
}

static void callers_header_wins_over_built_in(void **state) {
  static const char src[] = "#include <stdint.h>\n__global__ void mine(my_int *x) { x[0] = 7; }\n";
  cujit_header headers[] = {{"stdint.h", "typedef int my_int;\n"}, {NULL, NULL}};
  cujit_options o = opts(0);
  (void)state;
  need_toolkit();
  o.headers = headers;
  assert_int_equal(compile_count(src, "mine.cu", &o), 1);
}

static void turned_off_or_missing_says_where_it_looked(void **state) {
  static const char fp16[] = "#include <cuda_fp16.h>\n__global__ void h(__half *x) {}\n";
  static const char nothere[] = "#include \"nothere.h\"\n__global__ void n(int *x) {}\n";
  const char *dirs[] = {"/nonexistent/include", NULL};
  cujit_options o = opts(CUJIT_OPT_NO_TOOLKIT_INCLUDES);
  cujit_module *m = NULL;
  (void)state;
  need_toolkit();
  assert_status_detail(cujit_module_from_source(&m, fp16, "h.cu", &o), CUJIT_ERROR_COMPILE,
                       "not searched: CUJIT_OPT_NO_TOOLKIT_INCLUDES");
  o = opts(0);
  o.include_dirs = dirs;
  assert_status_detail(cujit_module_from_source(&m, nothere, "n.cu", &o), CUJIT_ERROR_COMPILE,
                       "searched, in order: the in-memory headers");
  assert_non_null(strstr(cujit_last_error(), "/nonexistent/include"));
  assert_non_null(strstr(cujit_last_error(), "/cccl"));
  assert_null(m);
}

static void turning_it_off_is_another_key(void **state) {
  cujit_options on = opts(0), off = opts(CUJIT_OPT_NO_TOOLKIT_INCLUDES);
  (void)state;
  need_toolkit();
  assert_int_equal(compile_count(kKernel, "k.cu", &on), 1);
  assert_int_equal(compile_count(kKernel, "k.cu", &off), 1);
  assert_int_equal(compile_count(kKernel, "k.cu", &on), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(libraries_need_no_options),
      CACHE_TEST(toolkit_on_the_include_path_is_not_scanned),
      CACHE_TEST(c_headers_are_built_in),
      CACHE_TEST(callers_header_wins_over_built_in),
      CACHE_TEST(turned_off_or_missing_says_where_it_looked),
      CACHE_TEST(turning_it_off_is_another_key),
  };
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}

/* test_cache - the kernel cache in one process: hits and misses, what invalidates an
 * entry (source, options, arch, defines, every kind of header), name expressions from a
 * hit, bad entries recovering with a warning, eviction in LRU order, the cache turned off,
 * and the API's error paths. Needs no GPU. A hit must create no NVRTC program: every test
 * counts them (cj_nvrtc_programs_created). */
#include <fcntl.h>
#include <sys/time.h>

#include "cachetest.h"
#include "module/function.h" /* internal: what a module's lookup read */

/* ---- hits and misses ---- */

static void hit_after_miss(void **state) {
  cujit_options o = ptx_options();
  cujit_cache_stats s0 = CUJIT_CACHE_STATS_INIT, s = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats d = CUJIT_CACHE_STATS_INIT;
  cujit_module *a = NULL, *b = NULL;
  (void)state;
  assert_ok(cujit_cache_get_stats(&s0));
  assert_ok(cujit_module_from_source(&a, kKernel, "scale.cu", &o));
  assert_int_equal(compile_count(kKernel, "scale.cu", &o), 0); /* memory hit */
  cj_memcache_clear();
  {
    uint64_t before = cj_nvrtc_programs_created();
    assert_ok(cujit_module_from_source(&b, kKernel, "scale.cu", &o)); /* disk hit */
    assert_int_equal(cj_nvrtc_programs_created(), before);
  }
  assert_string_equal(cujit_module_ptx(a, NULL), cujit_module_ptx(b, NULL));
  assert_string_equal(cujit_module_arch(b), "compute_80");
  assert_string_equal(cujit_module_log(b), cujit_module_log(a));
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.misses - s0.misses, 1);
  assert_int_equal(s.hits - s0.hits, 2);
  assert_int_equal(s.memory_hits - s0.memory_hits, 1);
  assert_int_equal(s.compiles - s0.compiles, 1);
  assert_int_equal(s.entries, 1);
  assert_true(s.bytes > 100);
  assert_ok(cujit_cache_get_disk_stats(&d));
  assert_int_equal(d.hits, 1); /* memory hits are not recorded on disk */
  assert_int_equal(d.misses, 1);
  assert_int_equal(d.compiles, 1);
  assert_int_equal(d.entries, 1);
  assert_string_equal(cujit_cache_dir(), cache);
  cujit_module_destroy(a);
  cujit_module_destroy(b);
  assert_not_logged("[2]");
}

static void cubin_comes_back_from_disk(void **state) {
  cujit_options o = {0};
  cujit_module *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  (void)state;
  o.arch = "sm_90";
  assert_ok(cujit_module_from_source(&a, kKernel, "scale.cu", &o));
  cj_memcache_clear();
  assert_int_equal(compile_count(kKernel, "scale.cu", &o), 0);
  assert_ok(cujit_module_from_source(&b, kKernel, "scale.cu", &o));
  assert_non_null(cujit_module_cubin(b, &nb));
  cujit_module_cubin(a, &na);
  assert_int_equal(na, nb);
  assert_memory_equal(cujit_module_cubin(a, NULL), cujit_module_cubin(b, NULL), na);
  cujit_module_destroy(a);
  cujit_module_destroy(b);
}

/* A disk hit reads its entry in place and takes the kernels and variables from the index
 * the entry keeps: a lookup reads no PTX, and says what a lookup that read it says. */
static void disk_hit_lookups_use_the_index(void **state) {
  static const char src[] = "__global__ void over(int *x) {}\n"
                            "__global__ void over(float *x) {}\n"
                            "extern \"C\" __global__ void plain(float a, double *b) {}\n"
                            "__constant__ float coef[4];\n";
  cujit_options o = ptx_options();
  cujit_module *a = NULL, *b = NULL;
  cujit_function *fn = NULL;
  cj_module *m;
  (void)state;
  assert_ok(cujit_module_from_source(&a, src, "index.cu", &o));
  cj_memcache_clear();
  assert_int_equal(compile_count(src, "index.cu", &o), 0);
  assert_ok(cujit_module_from_source(&b, src, "index.cu", &o)); /* a disk hit */
  m = cj_module_find(b);
  assert_non_null(m->image->block);
  assert_true(m->image->ptx > (char *)m->image->block &&
              m->image->ptx < (char *)m->image->block + m->image->block_size);
  assert_non_null(m->image->index);
  assert_int_equal(m->image->index->n_kernels, 3);
  assert_status_detail(cujit_module_get_function(b, "over", &fn), CUJIT_ERROR_AMBIGUOUS,
                       "'over' matches 2 kernels of module 'index.cu': over (_Z4overPi), over "
                       "(_Z4overPf)");
  assert_status_detail(cujit_module_get_function(b, "nope", &fn), CUJIT_ERROR_NOT_FOUND,
                       "module 'index.cu' has no kernel 'nope'; its kernels: over (_Z4overPi), "
                       "over (_Z4overPf), plain");
  assert_status_detail(cujit_module_get_global(b, "coeff", &(CUdeviceptr){0}, NULL),
                       CUJIT_ERROR_NOT_FOUND, "has no variable 'coeff'; its variables: coef");
  assert_non_null(m->dev);
  assert_true(m->dev->syms.borrowed); /* the index's lists, not a reading of the PTX */
  assert_ptr_equal(m->dev->syms.kernels, m->image->index->kernel_names);
  cujit_module_destroy(a);
  cujit_module_destroy(b);
}

/* A memory hit needs the same text, not the same address: text edited in place at the
 * address of a cached source misses, and a copy of a cached source elsewhere hits. */
static void memory_hit_compares_text(void **state) {
  cujit_options o = ptx_options(), o2 = ptx_options();
  char *buf = strdup(kKernel), *copy = strdup(kKernel), *tail;
  cujit_cache_stats s0 = CUJIT_CACHE_STATS_INIT, s = CUJIT_CACHE_STATS_INIT;
  cujit_module *a = NULL, *b = NULL;
  (void)state;
  assert_non_null(buf);
  assert_non_null(copy);
  assert_ok(cujit_module_from_source(&a, buf, "t.cu", &o));
  assert_ok(cujit_cache_get_stats(&s0));
  assert_int_equal(compile_count(buf, "t.cu", &o), 0);  /* same text, same address */
  assert_int_equal(compile_count(copy, "t.cu", &o), 0); /* same text elsewhere */
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.memory_hits - s0.memory_hits, 2);
  o2.arch = "compute_86"; /* same address and text, other options */
  assert_int_equal(compile_count(buf, "t.cu", &o2), 1);
  assert_int_equal(compile_count(buf, "u.cu", &o), 1);
  assert_int_equal(compile_count(buf, "t.cu", &o), 0); /* the address now hints at t.cu */
  /* the same length, one character changed: "*= f" becomes "+= f" */
  tail = strstr(buf, "*= f");
  assert_non_null(tail);
  tail[0] = '+';
  assert_int_equal(compile_count(buf, "t.cu", &o), 1);
  assert_ok(cujit_module_from_source(&b, buf, "t.cu", &o));
  assert_string_not_equal(cujit_module_ptx(a, NULL), cujit_module_ptx(b, NULL));
  strcpy(buf, kKernel); /* back to the first text at the same address: a hit again */
  assert_int_equal(compile_count(buf, "t.cu", &o), 0);
  cujit_module_destroy(a);
  cujit_module_destroy(b);
  free(buf);
  free(copy);
}

/* Every input that changes the output misses; going back hits. */
static void each_change_misses(void **state) {
  const char *d1[] = {"W=1", NULL}, *d2[] = {"W=2", NULL}, *nv[] = {"-lineinfo", NULL};
  const char *names[] = {"scale", NULL};
  cujit_header h1[] = {{"p.h", "#define P 1\n"}, {NULL, NULL}};
  cujit_header h2[] = {{"p.h", "#define P 2\n"}, {NULL, NULL}};
  cujit_options base = ptx_options(), o;
  (void)state;
  base.defines = d1;
  base.headers = h1;
  assert_int_equal(compile_count(kKernel, "k.cu", &base), 1);
  assert_int_equal(compile_count(KERNEL "// edit\n", "k.cu", &base), 1); /* source */
  assert_int_equal(compile_count(kKernel, "other.cu", &base), 1);        /* name (__FILE__) */
  o = base, o.arch = "compute_86";
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1); /* arch */
  o = base, o.defines = d2;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1); /* define */
  o = base, o.nvrtc_options = nv;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1); /* option */
  o = base, o.headers = h2;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1); /* in-memory header */
  o = base, o.name_expressions = names;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1); /* name expression */
  /* NVRTC's own cache changes no output: same entry */
  o = base, o.flags = CUJIT_OPT_NVRTC_CACHE;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 0);
  cj_memcache_clear();
  assert_int_equal(compile_count(kKernel, "k.cu", &base), 0); /* from disk */
  o = base, o.arch = "compute_86";
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 0);
}

static void name_expressions_restored(void **state) {
  static const char src[] =
      "template <typename T> __global__ void fill(T *x, T v) { x[threadIdx.x] = v; }\n";
  const char *names[] = {"fill<float>", "fill<int>", NULL};
  const char *la = NULL, *lb = NULL;
  cujit_options o = ptx_options();
  cujit_module *a = NULL, *b = NULL;
  (void)state;
  o.name_expressions = names;
  assert_ok(cujit_module_from_source(&a, src, "fill.cu", &o));
  cj_memcache_clear();
  assert_int_equal(compile_count(src, "fill.cu", &o), 0);
  assert_ok(cujit_module_from_source(&b, src, "fill.cu", &o));
  assert_int_equal(cujit_module_name_expression_count(b), 2);
  assert_ok(cujit_module_get_lowered_name(a, "fill<int>", &la));
  assert_ok(cujit_module_get_lowered_name(b, "fill<int>", &lb));
  assert_string_equal(la, lb);
  assert_non_null(strstr(cujit_module_ptx(b, NULL), lb));
  assert_string_equal(cujit_module_name_expression(b, 0, &lb), "fill<float>");
  assert_ok(cujit_module_get_lowered_name(a, "fill<float>", &la));
  assert_string_equal(la, lb);
  cujit_module_destroy(a);
  cujit_module_destroy(b);
}

/* ---- headers ---- */

/* A new directory beside the cache (in the test's temporary directory). */
static char *dir_in(const char *name) {
  char *d = malloc(4200);
  snprintf(d, 4200, "%.*s/%s", (int)(strrchr(cache, '/') - cache), cache, name);
  mkdir(d, 0700);
  return d;
}

/* Compiles and returns the PTX (caller frees), asserting `programs` NVRTC programs. */
static char *ptx_of(const char *src, const char *name, const cujit_options *o, uint64_t programs) {
  uint64_t before = cj_nvrtc_programs_created();
  cujit_module *m = NULL;
  char *ptx;
  assert_ok(cujit_module_from_source(&m, src, name, o));
  ptx = strdup(cujit_module_ptx(m, NULL));
  cujit_module_destroy(m);
  if (cj_nvrtc_programs_created() - before != programs)
    fail_msg("%s: %llu NVRTC programs, expected %llu", name,
             (unsigned long long)(cj_nvrtc_programs_created() - before),
             (unsigned long long)programs);
  return ptx;
}

static void assert_ptx_has(char *ptx, const char *needle) {
  if (!strstr(ptx, needle)) fail_msg("PTX lacks %s", needle);
  free(ptx);
}

static const char kUsesV[] = "#include \"v.h\"\n__global__ void k(int *x) { x[0] = V; }\n";

/* A header beside the .cu file: an edit of the same size still misses; restoring the old
 * text hits the old entry. */
static void header_edit_file_relative(void **state) {
  char *dir = dir_in("src"), path[4300];
  cujit_module *m = NULL;
  cujit_options o = ptx_options();
  uint64_t before;
  (void)state;
  test_write_file(dir, "k.cu", kUsesV);
  test_write_file(dir, "v.h", "#define V 1111\n");
  snprintf(path, sizeof path, "%s/k.cu", dir);
  before = cj_nvrtc_programs_created();
  assert_ok(cujit_module_from_file(&m, path, &o));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "1111"));
  cujit_module_destroy(m);
  assert_ok(cujit_module_from_file(&m, path, &o)); /* memory hit */
  cujit_module_destroy(m);
  assert_int_equal(cj_nvrtc_programs_created() - before, 1);
  test_write_file(dir, "v.h", "#define V 2222\n");
  assert_ok(cujit_module_from_file(&m, path, &o));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "2222"));
  cujit_module_destroy(m);
  assert_int_equal(cj_nvrtc_programs_created() - before, 2);
  test_write_file(dir, "v.h", "#define V 1111\n");
  cj_memcache_clear();
  assert_ok(cujit_module_from_file(&m, path, &o)); /* the first entry, from disk */
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "1111"));
  cujit_module_destroy(m);
  assert_int_equal(cj_nvrtc_programs_created() - before, 2);
  free(dir);
}

/* -I directories: a nested header's edit misses; a header created earlier in the search
 * path (shadowing the one used) misses too. */
static void header_edit_include_dirs(void **state) {
  char *d1 = dir_in("inc1"), *d2 = dir_in("inc2");
  const char *dirs[] = {d1, d2, NULL};
  cujit_options o = ptx_options();
  (void)state;
  o.include_dirs = dirs;
  test_write_file(d2, "v.h", "#include \"w.h\"\n");
  test_write_file(d2, "w.h", "#define V 3333\n");
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 1), "3333");
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 0), "3333");
  test_write_file(d2, "w.h", "#define V 4444\n");
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 1), "4444");
  test_write_file(d1, "w.h", "#define V 5555\n"); /* found first now (v.h's own dir is d2) */
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 0), "4444");
  test_write_file(d1, "v.h", "#define V 6666\n"); /* shadows d2/v.h */
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 1), "6666");
  cj_memcache_clear();
  assert_ptx_has(ptx_of(kUsesV, "inc.cu", &o, 0), "6666");
  free(d1);
  free(d2);
}

/* An in-memory header that includes a file from the include path: editing the file
 * misses. Angle includes are followed too. */
static void header_edit_through_memory_header(void **state) {
  char *d = dir_in("inc3");
  const char *dirs[] = {d, NULL};
  cujit_header h[] = {{"v.h", "#include <w.h>\n"}, {NULL, NULL}};
  cujit_options o = ptx_options();
  (void)state;
  o.include_dirs = dirs;
  o.headers = h;
  test_write_file(d, "w.h", "#define V 7777\n");
  assert_ptx_has(ptx_of(kUsesV, "mem.cu", &o, 1), "7777");
  test_write_file(d, "w.h", "#define V 8888\n");
  assert_ptx_has(ptx_of(kUsesV, "mem.cu", &o, 1), "8888");
  cj_memcache_clear();
  assert_ptx_has(ptx_of(kUsesV, "mem.cu", &o, 0), "8888");
  free(d);
}

/* Headers named by macros, -I and --pre-include given as NVRTC options, __has_include. */
static void header_edit_other_ways(void **state) {
  static const char by_macro[] =
      "#define HDR \"m.h\"\n#include HDR\n__global__ void k(int *x) { x[0] = M; }\n";
  static const char probe[] =
      "#if __has_include(\"opt.h\")\n#include \"opt.h\"\n#else\n#define OPT 10101\n#endif\n"
      "__global__ void k(int *x) { x[0] = OPT + PRE; }\n";
  char *d = dir_in("inc4"), inc[4300], pre[4300];
  const char *dirs[] = {d, NULL}, *nv[] = {inc, pre, NULL};
  cujit_options o = ptx_options();
  (void)state;
  o.include_dirs = dirs;
  test_write_file(d, "m.h", "#define M 1212\n");
  assert_ptx_has(ptx_of(by_macro, "macro.cu", &o, 1), "1212");
  test_write_file(d, "m.h", "#define M 3434\n");
  assert_ptx_has(ptx_of(by_macro, "macro.cu", &o, 1), "3434");
  o.include_dirs = NULL;
  o.nvrtc_options = nv;
  snprintf(inc, sizeof inc, "-I%s", d);
  snprintf(pre, sizeof pre, "--pre-include=%s/pre.h", d);
  test_write_file(d, "pre.h", "#define PRE 1\n");
  assert_ptx_has(ptx_of(probe, "probe.cu", &o, 1), "10102");
  test_write_file(d, "pre.h", "#define PRE 2\n");
  assert_ptx_has(ptx_of(probe, "probe.cu", &o, 1), "10103");
  test_write_file(d, "opt.h", "#define OPT 20000\n"); /* now __has_include finds it */
  assert_ptx_has(ptx_of(probe, "probe.cu", &o, 1), "20002");
  free(d);
}

/* ---- a header edited while NVRTC compiles ---- */

/* When set, the header to rewrite, and its new text, as NVRTC is about to compile: the
 * library logs "compiling '...'" at debug level just before it does. */
static const char *edit_path, *edit_text;

static void edit_while_compiling(cujit_log_level level, const char *message, void *user) {
  keep_log(level, message, user);
  if (edit_path && strncmp(message, "compiling '", 11) == 0) {
    FILE *f = fopen(edit_path, "wb");
    if (f) fputs(edit_text, f);
    if (f) fclose(f);
    edit_path = NULL;
  }
}

/* Compiles with `path` rewritten to `text` during the compile; returns the PTX (caller
 * frees). The result must not be cached, on disk or in memory. */
static char *ptx_with_edit(const char *src, const cujit_options *o, const char *path,
                           const char *text) {
  cujit_module *m = NULL;
  char *ptx;
  edit_path = path;
  edit_text = text;
  cujit_log_set_callback(edit_while_compiling, NULL);
  cujit_log_set_level(CUJIT_LOG_DEBUG);
  assert_ok(cujit_module_from_source(&m, src, "edited.cu", o));
  cujit_log_set_level(CUJIT_LOG_WARN);
  assert_null(edit_path); /* the edit was made */
  ptx = strdup(cujit_module_ptx(m, NULL));
  cujit_module_destroy(m);
  assert_logged("changed while 'edited.cu' was compiled");
  assert_logged("not cached");
  assert_int_equal(count_files(cache, ".cujit"), 0);
  assert_int_equal(cj_memcache_count(), 0);
  return ptx;
}

/* The header as scanned (and keyed) is not the one NVRTC read: the result is used, but
 * stored under the original header's key it would be loaded for the original header. */
static void header_edited_during_compile(void **state) {
  char *d = dir_in("edit"), hdr[4300];
  const char *dirs[] = {d, NULL};
  cujit_options o = ptx_options();
  (void)state;
  o.include_dirs = dirs;
  snprintf(hdr, sizeof hdr, "%s/v.h", d);
  test_write_file(d, "v.h", "#define V 1111\n");
  assert_ptx_has(ptx_with_edit(kUsesV, &o, hdr, "#define V 2222\n"), "2222");
  assert_logged("v.h");
  test_write_file(d, "v.h", "#define V 1111\n"); /* the original text, as another process sees it */
  assert_ptx_has(ptx_of(kUsesV, "edited.cu", &o, 1), "1111");
  cj_memcache_clear();
  assert_ptx_has(ptx_of(kUsesV, "edited.cu", &o, 0), "1111");
  free(d);
}

/* A header created during the compile earlier in the search path than the one scanned. */
static void header_created_during_compile(void **state) {
  char *d1 = dir_in("new1"), *d2 = dir_in("new2"), hdr[4300];
  const char *dirs[] = {d1, d2, NULL};
  cujit_options o = ptx_options();
  (void)state;
  o.include_dirs = dirs;
  snprintf(hdr, sizeof hdr, "%s/v.h", d1);
  test_write_file(d2, "v.h", "#define V 3333\n");
  assert_ptx_has(ptx_with_edit(kUsesV, &o, hdr, "#define V 4444\n"), "4444");
  assert_int_equal(unlink(hdr), 0);
  assert_ptx_has(ptx_of(kUsesV, "edited.cu", &o, 1), "3333");
  cj_memcache_clear();
  assert_ptx_has(ptx_of(kUsesV, "edited.cu", &o, 0), "3333");
  free(d1);
  free(d2);
}

/* What cannot be keyed is compiled every time, and says why at info level. */
static void untrackable_bypasses_the_cache(void **state) {
  static const char computed[] =
      "#define STR(x) #x\n#define XSTR(x) STR(x)\n#include XSTR(NAME.h)\n"
      "__global__ void k(int *x) { x[0] = 1; }\n";
  char *d = dir_in("inc5"), time_opt[4300];
  const char *dirs[] = {d, NULL}, *nv[] = {time_opt, NULL};
  cujit_options o = ptx_options();
  (void)state;
  log_capture(CUJIT_LOG_INFO);
  o.include_dirs = dirs;
  test_write_file(d, "NAME.h", "\n");
  assert_int_equal(compile_count(computed, "computed.cu", &o), 1);
  assert_int_equal(compile_count(computed, "computed.cu", &o), 1);
  assert_logged("compiled without the cache");
  assert_logged("computed.cu:3: #include XSTR");
  snprintf(time_opt, sizeof time_opt, "--time=%s/times.csv", d);
  o.nvrtc_options = nv;
  assert_int_equal(compile_count(kKernel, "timed.cu", &o), 1);
  assert_int_equal(compile_count(kKernel, "timed.cu", &o), 1);
  assert_logged("reads or writes files");
  assert_int_equal(count_files(cache, ".cujit"), 0);
  free(d);
}

/* ---- bad entries ---- */

static void rewrite(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}

static size_t slurp(const char *path, unsigned char *buf, size_t size) {
  FILE *f = fopen(path, "rb");
  size_t n;
  assert_non_null(f);
  n = fread(buf, 1, size, f);
  fclose(f);
  return n;
}

/* Damages the entry with `damage`, then: the compile succeeds by compiling, warns with
 * `why`, and the entry is good again afterwards. */
static void recovers(const char *why,
                     void (*damage)(const char *path, unsigned char *buf, size_t n)) {
  static unsigned char buf[1 << 20];
  char paths[4][4200];
  cujit_options o = ptx_options();
  size_t n;
  assert_int_equal(compile_count(kKernel, "bad.cu", &o), 1);
  assert_int_equal(find_entries(cache, paths, 4), 1);
  n = slurp(paths[0], buf, sizeof buf);
  damage(paths[0], buf, n);
  cj_memcache_clear();
  log_capture(CUJIT_LOG_WARN);
  assert_int_equal(compile_count(kKernel, "bad.cu", &o), 1);
  assert_logged("cache entry");
  assert_logged(why);
  assert_logged("compiling again and replacing it");
  cj_memcache_clear();
  log_capture(CUJIT_LOG_WARN);
  assert_int_equal(compile_count(kKernel, "bad.cu", &o), 0);
  assert_not_logged("[2]");
}

static void flip_byte(const char *p, unsigned char *b, size_t n) {
  b[CJ_ENTRY_HEADER_SIZE + 20] ^= 0x40; /* in the payload (a hit never reads the manifest) */
  rewrite(p, b, n);
}
static void truncate_half(const char *p, unsigned char *b, size_t n) { rewrite(p, b, n / 2); }
static void zero_length(const char *p, unsigned char *b, size_t n) {
  (void)n;
  rewrite(p, b, 0);
}
static void foreign(const char *p, unsigned char *b, size_t n) {
  static const char text[] = "#!/bin/sh\necho this is not a cache entry\n";
  (void)b;
  (void)n;
  rewrite(p, text, strlen(text));
}
static void old_format(const char *p, unsigned char *b, size_t n) {
  b[8] = 0; /* format version 0 */
  rewrite(p, b, n);
}
static void symlink_instead(const char *p, unsigned char *b, size_t n) {
  char target[4300];
  snprintf(target, sizeof target, "%s", p);
  strcpy(strrchr(target, '/'), "/elsewhere");
  rewrite(target, b, n);
  unlink(p);
  assert_int_equal(symlink(target, p), 0);
}

static void corrupted_entry_recovers(void **state) {
  (void)state;
  recovers("checksum mismatch", flip_byte);
}
static void truncated_entry_recovers(void **state) {
  (void)state;
  recovers("truncated", truncate_half);
}
static void empty_entry_recovers(void **state) {
  (void)state;
  recovers("is empty", zero_length);
}
static void foreign_file_recovers(void **state) {
  (void)state;
  recovers("is not a cujit cache entry", foreign);
}
static void old_format_recovers(void **state) {
  (void)state;
  recovers("cache format 0", old_format);
}
static void symlinked_entry_is_not_followed(void **state) {
  char paths[4][4200];
  struct stat st;
  (void)state;
  recovers("symbolic link", symlink_instead);
  assert_int_equal(find_entries(cache, paths, 4), 1);
  assert_int_equal(lstat(paths[0], &st), 0);
  assert_true(S_ISREG(st.st_mode)); /* the link was replaced, its target left alone */
}

/* ---- eviction ---- */

static void set_mtime(const char *path, time_t t) {
  struct timeval tv[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimes(path, tv), 0);
}

/* The entry of program `name`, found through cujit_cache_list(). */
typedef struct lookup_name {
  const char *name;
  char path[4300];
  int found;
  char order[256];
} lookup_name;

static int note_entry(const cujit_cache_entry *e, void *user) {
  lookup_name *l = user;
  strncat(l->order, e->name, sizeof l->order - strlen(l->order) - 2);
  strcat(l->order, " ");
  if (l->name && strcmp(e->name, l->name) == 0) {
    snprintf(l->path, sizeof l->path, "%s/%.2s/%s.cujit", cache, e->key, e->key);
    l->found = 1;
  }
  return 0;
}

static char *entry_of(const char *name) {
  static lookup_name l;
  memset(&l, 0, sizeof l);
  l.name = name;
  assert_ok(cujit_cache_list(note_entry, &l));
  assert_true(l.found);
  return l.path;
}

static char *lru_order(void) {
  static lookup_name l;
  memset(&l, 0, sizeof l);
  assert_ok(cujit_cache_list(note_entry, &l));
  return l.order;
}

static void eviction_in_lru_order(void **state) {
  cujit_options o = ptx_options();
  cujit_cache_stats s0 = CUJIT_CACHE_STATS_INIT, s = CUJIT_CACHE_STATS_INIT;
  time_t now = time(NULL);
  (void)state;
  assert_ok(cujit_cache_get_stats(&s0));
  compile_count(KERNEL "// a\n", "a.cu", &o);
  compile_count(KERNEL "// b\n", "b.cu", &o);
  compile_count(KERNEL "// c\n", "c.cu", &o);
  set_mtime(entry_of("a.cu"), now - 300);
  set_mtime(entry_of("b.cu"), now - 200);
  set_mtime(entry_of("c.cu"), now - 100);
  assert_string_equal(lru_order(), "a.cu b.cu c.cu ");
  cj_memcache_clear();
  assert_int_equal(compile_count(KERNEL "// a\n", "a.cu", &o), 0); /* a hit is a use */
  assert_string_equal(lru_order(), "b.cu c.cu a.cu ");
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.entries, 3);
  assert_ok(cujit_cache_prune(s.bytes - 1)); /* room for two: b goes */
  assert_string_equal(lru_order(), "c.cu a.cu ");
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.evictions - s0.evictions, 1);
  assert_ok(cujit_cache_prune(1));
  assert_string_equal(lru_order(), "");
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.entries, 0);
  assert_int_equal(s.evictions - s0.evictions, 3);
}

/* Writes past CUJIT_CACHE_MAX_SIZE prune the cache to the limit by themselves. */
static void size_limit_holds(void **state) {
  cujit_options o = ptx_options();
  cujit_cache_stats s0 = CUJIT_CACHE_STATS_INIT, s = CUJIT_CACHE_STATS_INIT;
  char src[256], limit[32];
  uint64_t one;
  int i;
  (void)state;
  compile_count(KERNEL "// 0\n", "0.cu", &o);
  assert_ok(cujit_cache_get_stats(&s0));
  one = s0.bytes;
  snprintf(limit, sizeof limit, "%llu", (unsigned long long)(one * 5 / 2));
  setenv("CUJIT_CACHE_MAX_SIZE", limit, 1);
  assert_int_equal(cujit_cache_max_size(), one * 5 / 2);
  for (i = 1; i <= 6; i++) {
    snprintf(src, sizeof src, "%s// %d\n", kKernel, i);
    compile_count(src, "n.cu", &o);
    assert_ok(cujit_cache_get_stats(&s));
    assert_true(s.bytes <= one * 5 / 2 + one / 8);
  }
  assert_true(s.evictions - s0.evictions >= 4);
  assert_true(s.entries >= 1 && s.entries <= 2);
  cj_memcache_clear();
  assert_int_equal(compile_count(src, "n.cu", &o), 0); /* the newest stays */
  setenv("CUJIT_CACHE_MAX_SIZE", "lots", 1);
  log_capture(CUJIT_LOG_WARN);
  assert_int_equal(cujit_cache_max_size(), (uint64_t)1 << 30);
  assert_logged("CUJIT_CACHE_MAX_SIZE='lots' is not a size");
}

/* ---- turned off ---- */

static void off_by_environment(void **state) {
  cujit_options o = ptx_options();
  (void)state;
  setenv("CUJIT_CACHE", "0", 1);
  assert_null(cujit_cache_dir());
  assert_non_null(strstr(cujit_last_error(), "the disk cache is off (CUJIT_CACHE=0)"));
  assert_int_equal(compile_count(kKernel, "off.cu", &o), 1);
  assert_int_equal(compile_count(kKernel, "off.cu", &o), 0); /* the memory cache stays on */
  cj_memcache_clear();
  assert_int_equal(compile_count(kKernel, "off.cu", &o), 1);
  assert_int_equal(count_files(cache, ".cujit"), 0);
  assert_not_logged("[2]");
  assert_ok(cujit_cache_clear()); /* nothing to clear on disk: fine */
  assert_ok(cujit_cache_prune(0));
  setenv("CUJIT_CACHE", "maybe", 1); /* neither on nor off: warned, and on */
  assert_non_null(cujit_cache_dir());
  assert_logged("CUJIT_CACHE='maybe' is not on (1, on, yes, true) or off");
  setenv("CUJIT_CACHE", "YES", 1);
  assert_non_null(cujit_cache_dir());
  unsetenv("CUJIT_CACHE");
  setenv("CUJIT_CACHE_MAX_SIZE", "0", 1);
  assert_true(cujit_cache_max_size() == (uint64_t)1 << 30);
  assert_logged("CUJIT_CACHE_MAX_SIZE='0' is not more than 0 (to turn the disk cache off, set "
                "CUJIT_CACHE=0); using the default 1G");
  unsetenv("CUJIT_CACHE_MAX_SIZE");
}

static void off_by_flag(void **state) {
  cujit_options o = ptx_options();
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_int_equal(compile_count(kKernel, "flag.cu", &o), 1);
  assert_int_equal(compile_count(kKernel, "flag.cu", &o), 1);
  assert_int_equal(count_files(cache, ".cujit"), 0);
  o.flags = 0;
  assert_int_equal(compile_count(kKernel, "flag.cu", &o), 1);
  assert_int_equal(count_files(cache, ".cujit"), 1);
}

/* ---- where the cache lives ---- */

static void location_from_environment(void **state) {
  char *base = dir_in("home"), want[4300];
  const char *saved = getenv("HOME");
  char *home = saved ? strdup(saved) : NULL;
  struct stat st;
  (void)state;
  unsetenv("CUJIT_CACHE_DIR");
  setenv("XDG_CACHE_HOME", base, 1);
  snprintf(want, sizeof want, "%s/cujit", base);
  assert_string_equal(cujit_cache_dir(), want);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", base, 1);
  snprintf(want, sizeof want, "%s/.cache/cujit", base);
  assert_string_equal(cujit_cache_dir(), want);
  assert_int_equal(stat(want, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_ok(cujit_cache_set_dir(cache));
  assert_string_equal(cujit_cache_dir(), cache);
  assert_ok(cujit_cache_set_dir(NULL));
  assert_string_equal(cujit_cache_dir(), want);
  unsetenv("HOME");
  assert_null(cujit_cache_dir());
  assert_non_null(strstr(cujit_last_error(), "neither CUJIT_CACHE_DIR, XDG_CACHE_HOME nor HOME"));
  /* no HOME: compiles go on, with one warning */
  assert_int_equal(compile_count(kKernel, "nohome.cu", NULL), 1);
  assert_int_equal(compile_count(KERNEL "//2\n", "nohome.cu", NULL), 1);
  assert_logged("no cache directory");
  if (home) setenv("HOME", home, 1);
  setenv("CUJIT_CACHE_DIR", cache, 1);
  free(home);
  free(base);
}

/* A directory others could write to, or that another user owns, is not used. */
static void unsafe_directories_are_refused(void **state) {
  char *d = dir_in("shared");
  cujit_options o = ptx_options();
  struct stat st;
  (void)state;
  setenv("CUJIT_CACHE_DIR", d, 1);
  assert_int_equal(chmod(d, 0770), 0);
  assert_null(cujit_cache_dir());
  assert_non_null(strstr(cujit_last_error(), "is writable by its group (mode 770)"));
  assert_int_equal(compile_count(kKernel, "unsafe.cu", &o), 1);
  assert_logged("writable by its group");
  assert_status_detail(cujit_cache_set_dir(d), CUJIT_ERROR_CACHE, "chmod 700");
  assert_ok(cujit_cache_set_dir(NULL));
  assert_int_equal(chmod(d, 0707), 0);
  assert_null(cujit_cache_dir());
  assert_non_null(strstr(cujit_last_error(), "writable by others"));
  assert_int_equal(chmod(d, 0700), 0);
  if (geteuid() == 0) {
    assert_int_equal(chown(d, 12345, 12345), 0);
    log_capture(CUJIT_LOG_WARN);
    assert_int_equal(compile_count(KERNEL "//x\n", "unsafe.cu", &o), 1);
    assert_logged("belongs to uid 12345, not to this user");
  } else {
    test_skip_part("the foreign-owner case of the cache directory needs root to give a "
                   "directory away");
  }
  assert_int_equal(stat(d, &st), 0);
  assert_int_equal(count_files(d, ".cujit"), 0);
  test_write_file(d, "../plain", "x");
  {
    char file[4300];
    snprintf(file, sizeof file, "%s/../plain", d);
    setenv("CUJIT_CACHE_DIR", file, 1);
    assert_null(cujit_cache_dir());
    assert_non_null(strstr(cujit_last_error(), "is not a directory"));
  }
  setenv("CUJIT_CACHE_DIR", cache, 1);
  free(d);
}

/* ---- error paths of the API ---- */

static int stop_at_first(const cujit_cache_entry *e, void *user) {
  (void)e;
  ++*(int *)user;
  return 1;
}

static void api_errors(void **state) {
  int n = 0;
  (void)state;
  assert_status_detail(cujit_cache_get_stats(NULL), CUJIT_ERROR_INVALID_VALUE, "stats is NULL");
  assert_status_detail(cujit_cache_get_disk_stats(NULL), CUJIT_ERROR_INVALID_VALUE,
                       "stats is NULL");
  assert_status_detail(cujit_cache_set_dir(""), CUJIT_ERROR_INVALID_VALUE, "empty string");
  assert_status_detail(cujit_cache_list(NULL, NULL), CUJIT_ERROR_INVALID_VALUE, "fn is NULL");
  compile_count(KERNEL "// 1\n", "1.cu", NULL);
  compile_count(KERNEL "// 2\n", "2.cu", NULL);
  assert_ok(cujit_cache_list(stop_at_first, &n));
  assert_int_equal(n, 1);
  setenv("CUJIT_CACHE", "off", 1);
  assert_status_detail(cujit_cache_list(stop_at_first, &n), CUJIT_ERROR_CACHE, "is off");
  {
    cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
    assert_status_detail(cujit_cache_get_disk_stats(&s), CUJIT_ERROR_CACHE, "is off");
  }
  unsetenv("CUJIT_CACHE");
  assert_ok(cujit_cache_clear());
  assert_int_equal(count_files(cache, ".cujit"), 0);
  assert_int_equal(cj_memcache_count(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(hit_after_miss),
      CACHE_TEST(cubin_comes_back_from_disk),
      CACHE_TEST(disk_hit_lookups_use_the_index),
      CACHE_TEST(memory_hit_compares_text),
      CACHE_TEST(each_change_misses),
      CACHE_TEST(name_expressions_restored),
      CACHE_TEST(header_edit_file_relative),
      CACHE_TEST(header_edit_include_dirs),
      CACHE_TEST(header_edit_through_memory_header),
      CACHE_TEST(header_edit_other_ways),
      CACHE_TEST(header_edited_during_compile),
      CACHE_TEST(header_created_during_compile),
      CACHE_TEST(untrackable_bypasses_the_cache),
      CACHE_TEST(corrupted_entry_recovers),
      CACHE_TEST(truncated_entry_recovers),
      CACHE_TEST(empty_entry_recovers),
      CACHE_TEST(foreign_file_recovers),
      CACHE_TEST(old_format_recovers),
      CACHE_TEST(symlinked_entry_is_not_followed),
      CACHE_TEST(eviction_in_lru_order),
      CACHE_TEST(size_limit_holds),
      CACHE_TEST(off_by_environment),
      CACHE_TEST(off_by_flag),
      CACHE_TEST(location_from_environment),
      CACHE_TEST(unsafe_directories_are_refused),
      CACHE_TEST(api_errors),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1); /* the same on every machine */
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}

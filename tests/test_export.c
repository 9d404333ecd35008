/* test_export - compiling once for many processes: a module exported as a blob and imported
 * with the same source, name and options is the same module (code, names, log) and costs
 * no NVRTC compile; an import whose compile would differ is refused naming the part that
 * differs (NVRTC, target, name, each kind of option, source, a header on disk, the toolkit's
 * location); a damaged blob is refused saying how, never crashes; an imported module is
 * stored in the caches unless CUJIT_OPT_NO_CACHE says not to. Needs NVRTC, no GPU. Some
 * cases run this binary again ("--child import BLOBFILE") with another environment. */
#include <fcntl.h>
#include <unistd.h>

#include "cachetest.h"
#include "dl/nvrtc.h"    /* internal: cj_libnvrtc_loaded */
#include "format/blob.h" /* internal: the blob's layout, for damaging it */

#define SOURCE                                                        \
  "template <typename T> __global__ void scale(T *x, T f, int n) {\n" \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                \
  "  if (i < n) x[i] *= f;\n"                                         \
  "}\n"                                                               \
  "extern \"C\" __global__ void add_offset(int *x, int n) {\n"        \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                \
  "  if (i < n) x[i] += OFFSET;\n"                                    \
  "}\n"

static const char kSource[] = SOURCE;
static const char *const kDefines[] = {"OFFSET=3", NULL};
static const char *const kNames[] = {"scale<float>", "scale<double>", NULL};

/* The options every exporter and importer here starts from. */
static cujit_options base_options(void) {
  cujit_options o = {0};
  o.arch = "sm_80";
  o.defines = kDefines;
  o.name_expressions = kNames;
  return o;
}

/* One exported module shared by the tests (made by the group setup). */
static void *g_blob;
static size_t g_size;

static int group_setup(void **state) {
  cujit_options o = base_options();
  cujit_module *m = NULL;
  char *c = fresh_cache("export-setup");
  (void)state;
  if (cujit_module_from_source(&m, kSource, "k.cu", &o) != CUJIT_OK ||
      cujit_module_export(m, &g_blob, &g_size) != CUJIT_OK) {
    fprintf(stderr, "setup: %s\n", cujit_last_error());
    return -1;
  }
  cujit_module_destroy(m);
  drop_cache(c);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  cujit_free(g_blob);
  return 0;
}

/* Imports `blob` as `name` with options o; the status, with the module destroyed. */
static cujit_status import_with(const void *blob, size_t size, const char *src, const char *name,
                                const cujit_options *o) {
  cujit_module *m = NULL;
  cujit_status st = cujit_module_import(&m, blob, size, src, name, o);
  if (st == CUJIT_OK)
    assert_non_null(m);
  else
    assert_null(m);
  cujit_module_destroy(m);
  return st;
}

/* ---- round trip ---- */

static void assert_same_module(const cujit_module *a, const cujit_module *b) {
  size_t na, nb, i;
  const void *ca, *cb;
  const char *pa = cujit_module_ptx(a, &na), *pb = cujit_module_ptx(b, &nb), *la, *lb;
  assert_int_equal(na, nb);
  assert_memory_equal(pa, pb, na);
  ca = cujit_module_cubin(a, &na);
  cb = cujit_module_cubin(b, &nb);
  assert_non_null(ca);
  assert_int_equal(na, nb);
  assert_memory_equal(ca, cb, na);
  assert_string_equal(cujit_module_arch(a), cujit_module_arch(b));
  assert_string_equal(cujit_module_log(a), cujit_module_log(b));
  assert_string_equal(cujit_module_name(a), cujit_module_name(b));
  assert_int_equal(cujit_module_name_expression_count(a), cujit_module_name_expression_count(b));
  for (i = 0; i < cujit_module_name_expression_count(a); i++) {
    assert_string_equal(cujit_module_name_expression(a, i, &la),
                        cujit_module_name_expression(b, i, &lb));
    assert_string_equal(la, lb);
  }
}

static void assert_same_ptx(const cujit_module *a, const cujit_module *b) {
  size_t na, nb;
  const char *pa = cujit_module_ptx(a, &na), *pb = cujit_module_ptx(b, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(pa, pb, na);
}

static void round_trip(void **state) {
  cujit_options o = base_options();
  cujit_module *compiled = NULL, *imported = NULL;
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  const char *lowered = NULL, *want = NULL;
  char entry[128];
  uint64_t programs;
  void *blob = NULL;
  size_t size = 0;
  (void)state;
  assert_ok(cujit_module_from_source(&compiled, kSource, "k.cu", &o));
  assert_ok(cujit_module_export(compiled, &blob, &size));
  assert_true(size > cujit_module_name_expression_count(compiled));
  assert_ok(cujit_cache_clear()); /* nothing to find but the blob */
  assert_ok(cujit_cache_get_stats(&before));
  programs = cj_nvrtc_programs_created();
  assert_ok(cujit_module_import(&imported, blob, size, kSource, "k.cu", &o));
  assert_int_equal(cj_nvrtc_programs_created(), programs);
  assert_ok(cujit_cache_get_stats(&after));
  assert_int_equal(after.compiles, before.compiles);
  assert_same_module(compiled, imported);
  /* its kernels are found by name: the name expressions' lowered names, and both
   * kernels' entries in the PTX */
  assert_ok(cujit_module_get_lowered_name(compiled, "scale<double>", &want));
  assert_ok(cujit_module_get_lowered_name(imported, "scale<double>", &lowered));
  assert_string_equal(lowered, want);
  snprintf(entry, sizeof entry, ".entry %s(", lowered);
  assert_non_null(strstr(cujit_module_ptx(imported, NULL), entry));
  assert_non_null(strstr(cujit_module_ptx(imported, NULL), ".entry add_offset("));
  assert_status_detail(cujit_module_get_lowered_name(imported, "scale<int>", &lowered),
                       CUJIT_ERROR_NOT_FOUND, "not a name expression of module 'k.cu'");
  cujit_free(blob);
  /* an imported module exports again, to the same bytes */
  assert_ok(cujit_module_export(imported, &blob, &size));
  assert_int_equal(size, g_size);
  assert_memory_equal(blob, g_blob, size);
  cujit_free(blob);
  cujit_module_destroy(imported);
  cujit_module_destroy(compiled);
}

/* Options that only change how the compile runs, not what it makes, import alike. */
static void harmless_differences(void **state) {
  const char *const nocache[] = {"-no-cache", NULL};
  cujit_options o = base_options();
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE | CUJIT_OPT_NVRTC_CACHE;
  assert_ok(import_with(g_blob, g_size, kSource, "k.cu", &o));
  o = base_options();
  o.nvrtc_options = nocache;
  assert_ok(import_with(g_blob, g_size, kSource, "k.cu", &o));
}

/* ---- the caches ---- */

static void import_is_cached(void **state) {
  cujit_options o = base_options();
  cujit_module *m = NULL;
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  uint64_t programs;
  (void)state;
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  programs = cj_nvrtc_programs_created();
  assert_ok(import_with(g_blob, g_size, kSource, "k.cu", &o));
  assert_int_equal(find_entries(cache, NULL, 0), 1);
  /* the same request compiled here is a memory hit */
  assert_ok(cujit_cache_get_stats(&before));
  assert_ok(cujit_module_from_source(&m, kSource, "k.cu", &o));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_get_stats(&after));
  assert_int_equal(after.memory_hits, before.memory_hits + 1);
  /* and, in a process without it in memory, a disk hit */
  cj_memcache_clear();
  assert_ok(cujit_module_from_source(&m, kSource, "k.cu", &o));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_get_stats(&before));
  assert_int_equal(before.hits, after.hits + 1);
  assert_int_equal(before.memory_hits, after.memory_hits);
  assert_int_equal(cj_nvrtc_programs_created(), programs);
  /* a second import finds the entry there and leaves it alone */
  assert_ok(import_with(g_blob, g_size, kSource, "k.cu", &o));
  assert_int_equal(find_entries(cache, NULL, 0), 1);
  assert_not_logged("cache entry");
}

static void import_no_cache(void **state) {
  cujit_options o = base_options();
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(import_with(g_blob, g_size, kSource, "k.cu", &o));
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  assert_int_equal(cj_memcache_count(), 0);
}

/* ---- mismatches ---- */

#define REFUSED "cujit_module_import: the blob does not hold what this process would compile for "

static void assert_refused_blob(const void *blob, size_t size, const char *src, const char *name,
                                const cujit_options *o, const char *why) {
  char want[512];
  snprintf(want, sizeof want, REFUSED "'%s': %s", name, why);
  assert_status_detail(import_with(blob, size, src, name, o), CUJIT_ERROR_INVALID_VALUE, want);
  assert_non_null(strstr(cujit_last_error(), "or compile here with cujit_module_from_source()"));
}

static void assert_refused(const cujit_options *o, const char *src, const char *name,
                           const char *why) {
  assert_refused_blob(g_blob, g_size, src, name, o, why);
}

static void other_target(void **state) {
  cujit_options o = base_options();
  (void)state;
  o.arch = "sm_90";
  assert_refused(&o, kSource, "k.cu",
                 "the target architecture differs (the blob's: 'sm_80'; here: 'sm_90')");
  o.arch = "compute_80";
  assert_refused(&o, kSource, "k.cu",
                 "the target architecture differs (the blob's: 'sm_80'; here: 'compute_80')");
  o.arch = NULL; /* no device here, no CUJIT_ARCH: NVRTC's default */
  unsetenv("CUJIT_ARCH");
  assert_refused(&o, kSource, "k.cu",
                 "the target architecture differs (the blob's: 'sm_80'; "
                 "here: NVRTC's default (no arch given and no device))");
}

static void other_name_or_source(void **state) {
  cujit_options o = base_options();
  char src[sizeof kSource + 16], why[160];
  size_t n = strlen(kSource);
  (void)state;
  assert_refused(&o, kSource, "other.cu",
                 "the program name differs (the blob's: 'k.cu'; here: 'other.cu')");
  snprintf(src, sizeof src, "%s// more\n", kSource);
  snprintf(why, sizeof why, "the source differs (the blob's: %zu bytes; here: %zu bytes)", n,
           n + 8);
  assert_refused(&o, src, "k.cu", why);
  strcpy(src, kSource);
  *strstr(src, "+=") = '-'; /* the same length */
  snprintf(why, sizeof why,
           "the source differs (the blob's: %zu bytes; here: %zu bytes, other "
           "text)",
           n, n);
  assert_refused(&o, src, "k.cu", why);
}

static void other_options(void **state) {
  const char *const offset4[] = {"OFFSET=4", NULL}, *const two[] = {"OFFSET=3", "X", NULL};
  const char *const one_name[] = {"scale<float>", NULL}, *const lineinfo[] = {"-lineinfo", NULL};
  const char *const dirs[] = {"/usr/include", NULL};
  const cujit_header headers[] = {{"x.h", "#define X 1\n"}, {NULL, NULL}};
  cujit_options o = base_options();
  (void)state;
  o.defines = offset4;
  assert_refused(&o, kSource, "k.cu", "the defines differ (the blob's: 1; here: 1, other values)");
  o.defines = two;
  assert_refused(&o, kSource, "k.cu", "the defines differ (the blob's: 1; here: 2)");
  o = base_options();
  o.name_expressions = one_name;
  assert_refused(&o, kSource, "k.cu", "the name expressions differ (the blob's: 2; here: 1)");
  o = base_options();
  o.nvrtc_options = lineinfo;
  assert_refused(&o, kSource, "k.cu", "the NVRTC options differ (the blob's: 0; here: 1)");
  o = base_options();
  o.include_dirs = dirs;
  assert_refused(&o, kSource, "k.cu", "the include directories differ (the blob's: 0; here: 1)");
  o = base_options();
  o.headers = headers;
  assert_refused(&o, kSource, "k.cu", "the in-memory headers differ (the blob's: 0; here: 1)");
  o = base_options();
  o.flags = CUJIT_OPT_NO_TOOLKIT_INCLUDES;
  assert_refused(&o, kSource, "k.cu",
                 "the toolkit include directories searched "
                 "(CUJIT_OPT_NO_TOOLKIT_INCLUDES) differ (the blob's: 1; here: 0)");
}

/* A module from a file: its directory is searched first, and the headers it includes from
 * there are part of the key. */
static void from_file_and_headers(void **state) {
  char *dir = test_tempdir("export-file"), path[4200], size_note[160];
  const char *dirs[2] = {NULL, NULL};
  cujit_options o = {0};
  cujit_module *m = NULL, *imported = NULL;
  void *blob = NULL;
  size_t size = 0;
  (void)state;
  assert_non_null(dir);
  o.arch = "compute_80";
  assert_int_equal(test_write_file(dir, "p.h", "#define P 2\n"), 0);
  assert_int_equal(test_write_file(dir, "k.cu",
                                   "#include \"p.h\"\n"
                                   "__global__ void times_p(int *x) { x[threadIdx.x] *= P; }\n"),
                   0);
  snprintf(path, sizeof path, "%s/k.cu", dir);
  assert_ok(cujit_module_from_file(&m, path, &o));
  assert_ok(cujit_module_export(m, &blob, &size));
  assert_ok(cujit_module_import_file(&imported, blob, size, path, &o));
  assert_same_ptx(m, imported);
  cujit_module_destroy(imported);
  /* the same as the source with the file's directory first on the include path */
  dirs[0] = dir;
  o.include_dirs = dirs;
  {
    char text[256];
    FILE *f = fopen(path, "rb");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_ok(import_with(blob, size, text, path, &o));
    o.include_dirs = NULL;
    assert_refused_blob(blob, size, text, path, &o,
                        "the include directories differ (the blob's: 1; here: 0)");
  }
  /* a header changed: refused by name, and no longer exported */
  assert_int_equal(test_write_file(dir, "p.h", "#define P 20\n"), 0);
  snprintf(size_note, sizeof size_note,
           "header '%s/p.h' differs (12 bytes where the blob was "
           "compiled, 13 here)",
           dir);
  assert_status_detail(cujit_module_import_file(&imported, blob, size, path, &o),
                       CUJIT_ERROR_INVALID_VALUE, size_note);
  assert_null(imported);
  cujit_free(blob);
  blob = NULL;
  assert_status_detail(cujit_module_export(m, &blob, &size), CUJIT_ERROR_INVALID_VALUE,
                       "a header that '");
  assert_non_null(strstr(cujit_last_error(), "changed after the module was compiled"));
  assert_null(blob);
  assert_int_equal(size, 0);
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(dir);
}

/* ---- damaged blobs ---- */

static unsigned char *copy_blob(void) {
  unsigned char *b = malloc(g_size);
  memcpy(b, g_blob, g_size);
  return b;
}

/* Writes a new checksum over the blob (so that its parser sees the bytes as they are). */
static void reseal(unsigned char *b, size_t size) {
  uint64_t sum = cj_checksum(b, 32, b + 40, size - 40);
  int i;
  for (i = 0; i < 8; i++) b[32 + i] = (unsigned char)(sum >> (8 * i));
}

static void assert_damaged(const void *b, size_t size, const char *why) {
  cujit_options o = base_options();
  assert_status_detail(import_with(b, size, kSource, "k.cu", &o), CUJIT_ERROR_INVALID_VALUE, why);
}

static void damaged_blobs(void **state) {
  unsigned char *b = copy_blob(), junk[64];
  cujit_options o = base_options();
  cujit_module *m = (cujit_module *)1;
  size_t n, fp_size;
  (void)state;
  assert_status_detail(cujit_module_import(&m, NULL, 10, kSource, "k.cu", &o),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_module_import: the blob is NULL");
  assert_null(m);
  assert_damaged(b, 0, "the blob is empty (size 0)");
  assert_status_detail(cujit_module_import(NULL, b, g_size, kSource, "k.cu", &o),
                       CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  assert_status_detail(import_with(b, g_size, NULL, "k.cu", &o), CUJIT_ERROR_INVALID_SOURCE,
                       "the source of 'k.cu' is NULL");
  assert_status_detail(cujit_module_import_file(&m, b, g_size, "/nonexistent/k.cu", &o),
                       CUJIT_ERROR_FILE, "/nonexistent/k.cu");
  memset(junk, 'x', sizeof junk);
  assert_damaged(junk, sizeof junk,
                 "the blob is not a module blob from cujit_module_export() "
                 "(64 bytes");
  assert_damaged(b, 20, "the blob is truncated (20 bytes, less than its 40-byte header)");
  /* every truncation and every flipped byte is refused */
  for (n = 1; n < g_size; n++) assert_damaged(b, n, "cujit_module_import: the blob ");
  assert_damaged(b, g_size - 1, "is truncated or padded");
  for (n = 0; n < g_size; n++) {
    b[n] ^= 0x5a;
    assert_damaged(b, g_size, "cujit_module_import: the blob ");
    b[n] ^= 0x5a;
  }
  b[g_size / 2] ^= 1;
  assert_damaged(b, g_size, "the blob is corrupted (checksum mismatch)");
  b[g_size / 2] ^= 1;
  /* another format version */
  b[8] = 2;
  reseal(b, g_size);
  assert_damaged(b, g_size, "was made in blob format 2 (this cujit reads format 1)");
  b[8] = 1;
  /* a malformed fingerprint: the number of parts */
  memcpy(&fp_size, b + 16, sizeof fp_size); /* little-endian on the machines cujit runs on */
  b[40 + fp_size - CJ_NPARTS * 20 - 4] = 99;
  reseal(b, g_size);
  assert_damaged(b, g_size, "the blob has a malformed fingerprint section");
  b[40 + fp_size - CJ_NPARTS * 20 - 4] = CJ_NPARTS;
  /* the entry inside damaged, the blob resealed around it: its payload, its manifest */
  b[40 + fp_size + CJ_ENTRY_HEADER_SIZE + 20] ^= 1;
  reseal(b, g_size);
  assert_damaged(b, g_size, "the compiled module in the blob is corrupted (checksum mismatch)");
  b[40 + fp_size + CJ_ENTRY_HEADER_SIZE + 20] ^= 1;
  b[g_size - 2] ^= 1;
  reseal(b, g_size);
  assert_damaged(b, g_size, "the compiled module in the blob has a corrupted manifest");
  b[g_size - 2] ^= 1;
  reseal(b, g_size);
  assert_ok(import_with(b, g_size, kSource, "k.cu", &o));
  free(b);
}

/* ---- export errors ---- */

static void export_refusals(void **state) {
  static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                            ".visible .entry k()\n{\n\tret;\n}\n";
  static const char computed[] = "#define STR(x) #x\n#define XSTR(x) STR(x)\n"
                                 "#include XSTR(h.h)\n__global__ void k() {}\n";
  const cujit_header h[] = {{"h.h", "\n"}, {NULL, NULL}};
  cujit_options o = {0};
  cujit_module *m = NULL;
  void *blob = (void *)1;
  size_t size = 1;
  (void)state;
  assert_status_detail(cujit_module_export(NULL, &blob, &size), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_export: mod is NULL");
  assert_null(blob);
  assert_int_equal(size, 0);
  assert_ok(cujit_module_from_image(&m, ptx, sizeof ptx - 1, "k.ptx"));
  assert_status_detail(cujit_module_export(m, &blob, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "size is NULL");
  assert_status_detail(cujit_module_export(m, &blob, &size), CUJIT_ERROR_INVALID_VALUE,
                       "module 'k.ptx' was made from prebuilt code");
  cujit_module_destroy(m);
  o.arch = "compute_80";
  o.headers = h;
  assert_ok(cujit_module_from_source(&m, computed, "computed.cu", &o));
  assert_status_detail(cujit_module_export(m, &blob, &size), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_export: 'computed.cu' cannot be keyed completely (");
  cujit_module_destroy(m);
}

/* ---- other processes: another NVRTC, none at all, another toolkit location ---- */

static char self_path[4096];

/* Runs this binary as `--child import FILE` with `env` before it; returns its exit status
 * and its output in out. */
static int run_child(const char *env, const char *file, char *out, size_t size) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "env %s '%s' --child import '%s' 2>&1", env, self_path, file);
  return test_capture(cmd, out, size);
}

static void child_processes(void **state) {
  char *dir = test_tempdir("export-child"), file[4200], env[8400], out[8192];
  FILE *f;
  (void)state;
  snprintf(file, sizeof file, "%s/blob", dir);
  f = fopen(file, "wb");
  assert_int_equal(fwrite(g_blob, 1, g_size, f), g_size);
  fclose(f);
  /* as NVRTC, a file with another build (this binary): refused, naming NVRTC */
  snprintf(env, sizeof env, "CUJIT_NVRTC='%s' CUJIT_CACHE_DIR='%s/c1'", self_path, dir);
  if (run_child(env, file, out, sizeof out) != 1 || !strstr(out, "CUJIT_ERROR_INVALID_VALUE") ||
      !strstr(out, "': NVRTC differs (the blob's: "))
    fail_msg("child with another NVRTC:\n%s", out);
  /* no NVRTC at all: the blob's is taken, and NVRTC is never loaded */
  snprintf(env, sizeof env, "CUJIT_NVRTC=/nonexistent/libnvrtc.so CUJIT_CACHE_DIR='%s/c2'", dir);
  if (run_child(env, file, out, sizeof out) != 0 || !strstr(out, "imported; nvrtc loaded 0"))
    fail_msg("child without NVRTC:\n%s", out);
  /* the toolkit's headers elsewhere */
  snprintf(env, sizeof env, "CUDA_PATH=/nonexistent/cuda CUJIT_CACHE_DIR='%s/c3'", dir);
  if (run_child(env, file, out, sizeof out) != 1 ||
      !strstr(out, "the CUDA toolkit's location differs (env CUDA_PATH or CUDA_HOME"))
    fail_msg("child with another CUDA_PATH:\n%s", out);
  test_rmtree(dir);
  free(dir);
}

static int child_import(const char *file) {
  static unsigned char blob[1 << 20];
  cujit_options o = base_options();
  cujit_module *m = NULL;
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(blob, 1, sizeof blob, f) : 0;
  cujit_status st;
  if (f) fclose(f);
  st = cujit_module_import(&m, blob, n, kSource, "k.cu", &o);
  if (st != CUJIT_OK) {
    printf("%s: %s\n", cujit_status_name(st), cujit_last_error());
    return 1;
  }
  cujit_module_destroy(m);
  /* compiling the same request here is a hit, needing no NVRTC */
  st = cujit_module_from_source(&m, kSource, "k.cu", &o);
  printf("%s; nvrtc loaded %d\n", st == CUJIT_OK ? "imported" : cujit_last_error(),
         cj_libnvrtc_loaded());
  cujit_module_destroy(m);
  return st == CUJIT_OK ? 0 : 2;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(round_trip),       CACHE_TEST(harmless_differences),
      CACHE_TEST(import_is_cached), CACHE_TEST(import_no_cache),
      CACHE_TEST(other_target),     CACHE_TEST(other_name_or_source),
      CACHE_TEST(other_options),    CACHE_TEST(from_file_and_headers),
      CACHE_TEST(damaged_blobs),    CACHE_TEST(export_refusals),
      CACHE_TEST(child_processes),
  };
  ssize_t n;
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_import(argv[3]);
  n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (n <= 0) return 1;
  self_path[n] = '\0';
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/* test_link.c - programs of several parts linked with nvJitLink, without a device: the
 * link of sources and prebuilt parts, link-time optimisation, kernels and variables found
 * in any part, every link error with its log, the linked module's cache entry read by a
 * second process, and nvJitLink never taken from the working directory. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <fcntl.h>

#include "cachetest.h"
#include "dl/nvjitlink.h" /* internal: cj_nvjitlink_loaded */
#include "linktest.h"

static cujit_options arch_options(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = LINK_ARCH;
  return o;
}

static cujit_status link2(cujit_module **m, const char *a, const char *b, unsigned flags) {
  cujit_link_part parts[2];
  cujit_options o = arch_options();
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  parts[0] = link_source(a, "main.cu");
  parts[1] = link_source(b, "lib.cu");
  l.flags = flags;
  return cujit_module_link(m, parts, 2, &o, &l);
}

/* ---- linking ---- */

static void links_two_sources(void **state) {
  cujit_module *m = NULL;
  size_t size = 0;
  const void *cubin;
  (void)state;
  assert_ok(link2(&m, kLinkMain, kLinkLib, 0));
  cubin = cujit_module_cubin(m, &size);
  assert_non_null(cubin);
  assert_memory_equal(cubin, "\177ELF", 4);
  assert_string_equal(cujit_module_arch(m), LINK_ARCH);
  assert_string_equal(cujit_module_name(m), "linked");
  /* without LTO the call stays a call: the callee is in the CUBIN's symbol table */
  assert_true(bytes_hold(cubin, size, "_Z5twicef"));
  assert_string_equal(cujit_module_ptx(m, NULL), "");
  cujit_module_destroy(m);
}

static void lto_inlines_across_sources(void **state) {
  cujit_module *m = NULL;
  size_t size = 0;
  const void *cubin;
  const char *ptx;
  (void)state;
  assert_ok(link2(&m, kLinkMain, kLinkLib, CUJIT_LINK_OPT_LTO));
  cubin = cujit_module_cubin(m, &size);
  ptx = cujit_module_ptx(m, NULL);
  assert_non_null(cubin);
  /* twice() was inlined into the kernel: no function of it (nor a clone) is left in the
   * CUBIN's symbol table, while the kernel and the variables are there */
  assert_false(bytes_hold(cubin, size, "_Z5twicef"));
  assert_true(bytes_hold(cubin, size, "_Z5applyPfi"));
  assert_true(bytes_hold(cubin, size, "scale"));
  assert_string_equal(ptx, "");
  cujit_module_destroy(m);
}

static void finds_symbols_of_every_part(void **state) {
  cujit_module *m = NULL;
  cujit_status st;
  (void)state;
  assert_ok(link2(&m, kLinkMain, kLinkLib, 0));
  /* the variable of the second source is found by name; a missing one is listed */
  st = cujit_module_get_global(m, "scale", &(CUdeviceptr){0}, NULL);
  if (st != CUJIT_ERROR_NO_DRIVER && st != CUJIT_ERROR_NO_DEVICE) assert_ok(st);
  assert_status_detail(cujit_module_get_global(m, "nothing", &(CUdeviceptr){0}, NULL),
                       CUJIT_ERROR_NOT_FOUND, "scale");
  /* kernels are found by name without a device: a missing one lists the kernel there is */
  assert_status_detail(cujit_module_get_function(m, "nothing", &(cujit_function *){NULL}),
                       CUJIT_ERROR_NOT_FOUND, "apply");
  cujit_module_destroy(m);
}

static void links_prebuilt_parts(void **state) {
  cujit_module *lib = NULL, *m = NULL;
  cujit_options o = arch_options();
  const char *const rdc[] = {"-rdc=true", NULL};
  cujit_link_part parts[2];
  size_t size = 0;
  const void *cubin;
  (void)state;
  /* the library source compiled elsewhere as relocatable code: its CUBIN and its PTX */
  o.nvrtc_options = rdc;
  assert_ok(cujit_module_from_source(&lib, kLinkLib, "lib.cu", &o));
  cubin = cujit_module_cubin(lib, &size);
  o.nvrtc_options = NULL;
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_bytes(CUJIT_LINK_CUBIN, cubin, size, "lib.cubin");
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  cujit_module_destroy(m);
  parts[1] = link_bytes(CUJIT_LINK_PTX, cujit_module_ptx(lib, NULL), 0, "lib.ptx");
  parts[1].data_size = strlen(cujit_module_ptx(lib, NULL));
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  cujit_module_destroy(m);
  cujit_module_destroy(lib);
}

/* Parts nvcc made: a fatbin, a host object, a static library, each holding the library's
 * relocatable code; LTO-IR in a fatbin, linked with link-time optimisation. The main
 * source's kernel is there and its call into the part resolved (else the link fails
 * with an undefined symbol). */
static void links_nvcc_parts(void **state) {
  static const struct {
    int kind;
    const char *file;
    unsigned flags;
  } cases[] = {{CUJIT_LINK_FATBIN, "lib.fatbin", 0},
               {CUJIT_LINK_OBJECT, "lib.o", 0},
               {CUJIT_LINK_LIBRARY, "liblib.a", 0},
               {CUJIT_LINK_FATBIN, "lib_lto.fatbin", CUJIT_LINK_OPT_LTO}};
  char *dir = test_tempdir("link-nvcc"), why[8192], path[4200];
  cujit_options o = arch_options();
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  cujit_link_part parts[2];
  cujit_module *m = NULL;
  size_t i, size;
  const void *cubin;
  (void)state;
  if (link_nvcc_parts(dir, 90, why, sizeof why)) {
    test_rmtree(dir);
    free(dir);
    test_skip_part("%s", why);
    skip();
  }
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    parts[0] = link_source(kLinkMain, "main.cu");
    parts[1] = link_file(cases[i].kind, dir, cases[i].file, path, sizeof path);
    l.flags = cases[i].flags;
    if (cujit_module_link(&m, parts, 2, &o, &l) != CUJIT_OK)
      fail_msg("linking %s: %s", cases[i].file, cujit_last_error());
    cubin = cujit_module_cubin(m, &size);
    assert_true(bytes_hold(cubin, size, "_Z5applyPfi"));
    /* with LTO the library's function is inlined away; otherwise it is there */
    assert_int_equal(bytes_hold(cubin, size, "_Z5twicef"), cases[i].flags ? 0 : 1);
    cujit_module_destroy(m);
  }
  test_rmtree(dir);
  free(dir);
}

static void links_source_files(void **state) {
  char *dir = test_tempdir("link"), path[4200], hdr[4200];
  cujit_module *m = NULL;
  cujit_options o = arch_options();
  cujit_link_part parts[2];
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  const void *cubin;
  size_t size = 0;
  FILE *f;
  (void)state;
  /* a source file including a header beside it */
  snprintf(hdr, sizeof hdr, "%s/k.h", dir);
  snprintf(path, sizeof path, "%s/lib.cu", dir);
  f = fopen(hdr, "w");
  fputs("#define SCALE 3.0f\n", f);
  fclose(f);
  f = fopen(path, "w");
  fputs("#include \"k.h\"\n__device__ float scale = SCALE;\n__device__ int calls = 0;\n"
        "__device__ float twice(float x) { return 2.0f * x + 1.0f; }\n",
        f);
  fclose(f);
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_source(NULL, NULL);
  parts[1].path = path;
  l.flags = CUJIT_LINK_OPT_LTO;
  l.name = "program";
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  assert_string_equal(cujit_module_name(m), "program");
  cubin = cujit_module_cubin(m, &size);
  assert_non_null(cubin);
  assert_false(bytes_hold(cubin, size, "_Z5twicef")); /* inlined across the sources */
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(dir);
}

static void links_device_runtime(void **state) {
  cujit_module *m = NULL;
  cujit_options o = arch_options();
  cujit_link_part parts[2];
  (void)state;
  parts[0] = link_source(kLinkParent, "parent.cu");
  /* without the device runtime the child launch is an undefined symbol */
  assert_status_detail(cujit_module_link(&m, parts, 1, &o, NULL), CUJIT_ERROR_LINK,
                       "CUJIT_LINK_CUDADEVRT");
  parts[1] = link_bytes(CUJIT_LINK_CUDADEVRT, NULL, 0, NULL);
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  assert_status_detail(cujit_module_get_function(m, "nothing", &(cujit_function *){NULL}),
                       CUJIT_ERROR_NOT_FOUND, "parent");
  cujit_module_destroy(m);
}

/* ---- errors ---- */

static void link_errors_have_logs(void **state) {
  cujit_module *m = NULL, *lib = NULL;
  cujit_options o = arch_options();
  const char *const rdc[] = {"-rdc=true", NULL};
  cujit_link_part parts[2];
  static const unsigned char junk[64] = {1, 2, 3, 4};
  cujit_link_options lto = CUJIT_LINK_OPTIONS_INIT;
  static const char kBadPtx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry k() { this is not PTX; }\n";
  (void)state;
  lto.flags = CUJIT_LINK_OPT_LTO;
  /* undefined: twice(), scale and calls are declared, never defined */
  parts[0] = link_source(kLinkMain, "main.cu");
  assert_status_detail(cujit_module_link(&m, parts, 1, &o, NULL), CUJIT_ERROR_LINK, "twice");
  assert_status_detail(cujit_module_link(&m, parts, 1, &o, NULL), CUJIT_ERROR_LINK,
                       "define the symbol");
  /* defined twice */
  parts[0] = link_source(kLinkLib, "lib.cu");
  parts[1] = link_source("__device__ float scale = 4.0f;\n", "lib2.cu");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_LINK, "scale");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_LINK,
                       "part 'lib.cu' and again in part 'lib2.cu'");
  /* the same with link-time optimisation, where nvJitLink finds it: its log */
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, &lto), CUJIT_ERROR_LINK,
                       "multiply defined");
  /* PTX that nvJitLink cannot compile: its log, and the part named */
  parts[1] = link_bytes(CUJIT_LINK_PTX, kBadPtx, sizeof kBadPtx - 1, "bad.ptx");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_LINK, "bad.ptx");
  /* bytes that do not start as their kind does */
  parts[1] = link_bytes(CUJIT_LINK_LTOIR, junk, sizeof junk, "junk.ltoir");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "junk.ltoir");
  parts[1] = link_bytes(CUJIT_LINK_LIBRARY, junk, sizeof junk, "junk.a");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "ar archive");
  parts[1] = link_bytes(CUJIT_LINK_OBJECT, junk, sizeof junk, "junk.o");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "ELF object");
  /* bytes that are not of their kind */
  parts[1] = link_bytes(CUJIT_LINK_CUBIN, junk, sizeof junk, "junk.cubin");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "junk.cubin");
  parts[1] = link_bytes(CUJIT_LINK_CUBIN, kLinkLib, sizeof kLinkLib - 1, "lib.txt");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "lib.txt");
  /* a part built for another architecture */
  o.arch = "sm_80";
  o.nvrtc_options = rdc;
  assert_ok(cujit_module_from_source(&lib, kLinkLib, "lib.cu", &o));
  o = arch_options();
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_bytes(CUJIT_LINK_CUBIN, cujit_module_cubin(lib, NULL), 0, "lib80.cubin");
  cujit_module_cubin(lib, &parts[1].data_size);
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_LINK, "lib80.cubin");
  cujit_module_destroy(lib);
  /* a source that does not compile: NVRTC's log, with its name */
  parts[1] = link_source("__device__ float scale = ;\n", "broken.cu");
  assert_status_detail(cujit_module_link(&m, parts, 2, &o, NULL), CUJIT_ERROR_COMPILE, "broken.cu");
  assert_null(m);
}

static void bad_arguments(void **state) {
  cujit_module *m = NULL;
  cujit_options o = arch_options();
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  const char *const bad_opt[] = {"-arch=sm_80", NULL};
  const char *const unknown_opt[] = {"-no-such-option", NULL};
  const char *const dlto[] = {"-dlto", NULL};
  cujit_link_part p = link_source(kLinkLib, "lib.cu");
  (void)state;
  assert_status_detail(cujit_module_link(NULL, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "out is NULL");
  assert_status_detail(cujit_module_link(&m, NULL, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "parts is NULL");
  assert_status_detail(cujit_module_link(&m, &p, 0, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "count is 0");
  p.kind = 99;
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "kind 99");
  p = link_bytes(CUJIT_LINK_PTX, NULL, 0, NULL);
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "neither data nor a path");
  p = link_bytes(CUJIT_LINK_CUBIN, "x", 0, NULL);
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "data_size 0");
  p = link_bytes(CUJIT_LINK_CUBIN, NULL, 0, NULL);
  p.path = "/nonexistent/lib.cubin";
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_FILE,
                       "/nonexistent/lib.cubin");
  p = link_source(kLinkLib, "lib.cu");
  p.size = 3;
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_VALUE, "_INIT");
  p = link_source(kLinkLib, "lib.cu");
  l.options = bad_opt;
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, &l), CUJIT_ERROR_INVALID_OPTION,
                       "cujit's to set");
  l.options = unknown_opt;
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, &l), CUJIT_ERROR_INVALID_OPTION,
                       "-no-such-option");
  l.options = NULL;
  l.flags = 8;
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, &l), CUJIT_ERROR_INVALID_VALUE,
                       "unknown bits");
  o.arch = "compute_90";
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_OPTION, "sm_XX");
  {
    /* parts of unequal sizes (an array is stepped through by its first part's size) */
    cujit_link_part two[2];
    two[0] = link_source(kLinkMain, "main.cu");
    two[1] = link_source(kLinkLib, "lib.cu");
    two[1].size = 0;
    o.arch = LINK_ARCH;
    assert_status_detail(cujit_module_link(&m, two, 2, &o, NULL), CUJIT_ERROR_INVALID_VALUE,
                         "part 1 has size 0 but part 0 has");
    /* a bundle given as a part is refused as such, never read as another kind */
    {
      const char *const archs[] = {LINK_ARCH};
      void *bundle = NULL;
      size_t bsize = 0;
      assert_ok(cujit_bundle_from_source(&bundle, &bsize, kLinkLib, "lib.cu", &o, archs, 1));
      two[1] = link_bytes(CUJIT_LINK_CUBIN, bundle, bsize, "lib.bundle");
      assert_status_detail(cujit_module_link(&m, two, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                           "is a cujit bundle, which nvJitLink cannot read");
      two[1].kind = CUJIT_LINK_PTX;
      assert_status_detail(cujit_module_link(&m, two, 2, &o, NULL), CUJIT_ERROR_INVALID_SOURCE,
                           "is a cujit bundle");
      cujit_free(bundle);
    }
    o.arch = "compute_90";
  }
  p = link_bytes(CUJIT_LINK_LTOIR, "\xed\x43\x4e\x7f", 4, NULL);
  assert_status_detail(cujit_module_link(&m, &p, 1, &o, NULL), CUJIT_ERROR_INVALID_OPTION, "sm_XX");
  /* -dlto alone makes what no device loads */
  o = arch_options();
  o.nvrtc_options = dlto;
  assert_status_detail(cujit_module_from_source(&m, kLinkLib, "lib.cu", &o),
                       CUJIT_ERROR_INVALID_OPTION, "cujit_module_link");
  assert_null(m);
}

/* ---- the cache ---- */

static int child_link(const char *mode) {
  cujit_module *m = NULL;
  uint64_t before = cj_nvrtc_programs_created();
  unsigned flags = strcmp(mode, "lto") == 0 ? CUJIT_LINK_OPT_LTO : 0;
  if (link2(&m, kLinkMain, kLinkLib, flags) != CUJIT_OK) {
    fprintf(stderr, "child: %s\n", cujit_last_error());
    return 1;
  }
  if (!cujit_module_cubin(m, NULL)) return 2;
  cujit_module_destroy(m);
  /* 100, plus 1 when nvJitLink was loaded, plus 2 when NVRTC compiled */
  return 100 + cj_nvjitlink_loaded() + (cj_nvrtc_programs_created() != before ? 2 : 0);
}

static int child_no_linker(const char *unused) {
  cujit_module *m = NULL;
  (void)unused;
  setenv("CUJIT_NVJITLINK", "/nonexistent/libnvJitLink.so", 1);
  cujit_cache_set_dir(NULL);
  if (link2(&m, kLinkMain, kLinkLib, 0) != CUJIT_ERROR_NO_NVJITLINK) return 1;
  if (!strstr(cujit_last_error(), "/nonexistent/libnvJitLink.so") ||
      !strstr(cujit_last_error(), "CUJIT_NVJITLINK"))
    return 2;
  return 100;
}

/* A bare CUJIT_NVJITLINK, with a file of that name in the working directory: refused
 * naming the variable, and the link fails rather than use either file. */
static int child_relative_linker(const char *dir) {
  cujit_module *m = NULL;
  if (chdir(dir) != 0) return 1;
  setenv("CUJIT_NVJITLINK", "libnvJitLink.so.13", 1);
  cujit_cache_set_dir(NULL);
  if (link2(&m, kLinkMain, kLinkLib, 0) != CUJIT_ERROR_NO_NVJITLINK) return 2;
  if (!strstr(cujit_last_error(), "CUJIT_NVJITLINK is 'libnvJitLink.so.13', which is not an "
                                  "absolute path"))
    return 3;
  return cj_nvjitlink_identity()[0] || cj_nvjitlink_loaded() ? 4 : 100;
}

/* A bare CUJIT_NVRTC is refused, and nvJitLink is then not looked for "beside" it in the
 * working directory, where a file of its name waits. */
static int child_linker_not_from_cwd(const char *dir) {
  char planted[4200];
  if (chdir(dir) != 0) return 1;
  setenv("CUJIT_NVRTC", "libnvrtc.so.13", 1);
  unsetenv("CUJIT_NVJITLINK");
  snprintf(planted, sizeof planted, "%s/", dir);
  if (strstr(cj_nvjitlink_path(), planted) || cj_nvjitlink_path()[0] == '.') {
    fprintf(stderr, "child: nvJitLink from the working directory: %s\n", cj_nvjitlink_path());
    return 2;
  }
  return 100;
}

/* The path of the loaded library that holds `sym`. */
static int library_of(void *sym, char *out, size_t size) {
  Dl_info info;
  if (!sym || !dladdr(sym, &info) || !info.dli_fname || info.dli_fname[0] != '/') return -1;
  snprintf(out, size, "%s", info.dli_fname);
  return 0;
}

/* The file CUJIT_NVJITLINK names is replaced between the look that names it in link keys
 * and the first link's load: the link is refused rather than run under another
 * nvJitLink's keys. (Two libraries of the C runtime, each with a build ID of its own,
 * stand in for the two nvJitLinks.) */
static int child_replaced_linker(const char *dir) {
  char first[4096], second[4096], path[4200];
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  cujit_module *m = NULL;
  if (!libm || library_of(dlsym(RTLD_DEFAULT, "printf"), first, sizeof first) != 0 ||
      library_of(dlsym(libm, "cos"), second, sizeof second) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/libnvJitLink.so.13", dir);
  if (symlink(first, path) != 0) return 2;
  setenv("CUJIT_NVJITLINK", path, 1);
  cujit_cache_set_dir(NULL);
  if (strncmp(cj_nvjitlink_identity(), "nvjitlink build ", 16) != 0) return 3;
  if (unlink(path) != 0 || symlink(second, path) != 0) return 4;
  if (link2(&m, kLinkMain, kLinkLib, 0) != CUJIT_ERROR_NO_NVJITLINK) return 5;
  if (!strstr(cujit_last_error(), "is not the file")) {
    fprintf(stderr, "child: %s\n", cujit_last_error());
    return 6;
  }
  return 100;
}

static int run_child(const char *mode, const char *arg) {
  pid_t pid = spawn_child(mode, arg, -1);
  return wait_child(pid);
}

static void second_process_hits(void **state) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  (void)state;
  /* the first process compiles and links; the second finds both, loading neither */
  assert_int_equal(run_child("link", "plain"), 103);
  assert_int_equal(run_child("link", "plain"), 100);
  assert_int_equal(run_child("link", "lto"), 103);
  assert_int_equal(run_child("link", "lto"), 100);
  /* entries: two sources twice (with and without -dlto) and two links */
  assert_int_equal(find_entries(cache, NULL, 0), 6);
  assert_ok(cujit_cache_get_disk_stats(&s));
  assert_int_equal(s.misses, 6);
}

static void memory_hit_and_key_parts(void **state) {
  cujit_module *m = NULL;
  cujit_cache_stats a = CUJIT_CACHE_STATS_INIT, b = CUJIT_CACHE_STATS_INIT;
  cujit_options o = arch_options();
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  const char *const o0[] = {"-O0", NULL};
  cujit_link_part parts[2];
  (void)state;
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_source(kLinkLib, "lib.cu");
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  cujit_module_destroy(m);
  assert_int_equal(find_entries(cache, NULL, 0), 3);
  assert_ok(cujit_cache_get_stats(&a));
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_get_stats(&b));
  assert_int_equal(b.compiles, a.compiles);
  assert_int_equal(b.memory_hits, a.memory_hits + 3); /* two sources and the link */
  /* link options are part of the key: a new entry */
  l.options = o0;
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  cujit_module_destroy(m);
  assert_int_equal(find_entries(cache, NULL, 0), 4);
  /* so is the order of the parts */
  parts[0] = link_source(kLinkLib, "lib.cu");
  parts[1] = link_source(kLinkMain, "main.cu");
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  cujit_module_destroy(m);
  assert_int_equal(find_entries(cache, NULL, 0), 5);
  /* CUJIT_OPT_NO_CACHE reads and writes nothing */
  o.flags = CUJIT_OPT_NO_CACHE;
  l.options = NULL;
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  cujit_module_destroy(m);
  assert_int_equal(find_entries(cache, NULL, 0), 5);
}

static void missing_linker_says_where(void **state) {
  (void)state;
  assert_int_equal(run_child("nolinker", "-"), 100);
}

static void a_replaced_linker_is_not_loaded(void **state) {
  char *dir = test_tempdir("link-swap");
  (void)state;
  assert_non_null(dir);
  assert_int_equal(run_child("swaplinker", dir), 100);
  test_rmtree(dir);
  free(dir);
}

static void relative_paths_are_refused(void **state) {
  char *dir = test_tempdir("link-rel");
  (void)state;
  assert_non_null(dir);
  assert_int_equal(test_write_file(dir, "libnvJitLink.so.13", "planted"), 0);
  assert_int_equal(test_write_file(dir, "libnvrtc.so.13", "planted"), 0);
  assert_int_equal(run_child("rellinker", dir), 100);
  assert_int_equal(run_child("cwdlinker", dir), 100);
  test_rmtree(dir);
  free(dir);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(links_two_sources),
      CACHE_TEST(lto_inlines_across_sources),
      CACHE_TEST(finds_symbols_of_every_part),
      CACHE_TEST(links_prebuilt_parts),
      CACHE_TEST(links_nvcc_parts),
      CACHE_TEST(links_source_files),
      CACHE_TEST(links_device_runtime),
      CACHE_TEST(link_errors_have_logs),
      CACHE_TEST(bad_arguments),
      CACHE_TEST(second_process_hits),
      CACHE_TEST(memory_hit_and_key_parts),
      CACHE_TEST(missing_linker_says_where),
      CACHE_TEST(relative_paths_are_refused),
      CACHE_TEST(a_replaced_linker_is_not_loaded),
  };
  if (argc == 4 && strcmp(argv[1], "--child") == 0) {
    if (strcmp(argv[2], "link") == 0) return child_link(argv[3]);
    if (strcmp(argv[2], "nolinker") == 0) return child_no_linker(argv[3]);
    if (strcmp(argv[2], "rellinker") == 0) return child_relative_linker(argv[3]);
    if (strcmp(argv[2], "cwdlinker") == 0) return child_linker_not_from_cwd(argv[3]);
    if (strcmp(argv[2], "swaplinker") == 0) return child_replaced_linker(argv[3]);
    return 99;
  }
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}

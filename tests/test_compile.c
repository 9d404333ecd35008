/* test_compile - NVRTC compiles from strings and files: targets, options, headers, name
 * expressions, errors and threads. Needs no GPU. Uses explicit archs where the result
 * would otherwise depend on the machine's device. */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "compile/compile.h" /* cj_arch_clamp */

static const char *const kMul = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                                "{\n"
                                "  const int i = threadIdx.x;\n"
                                "  dest[i] = a[i] * b[i];\n"
                                "}\n";

static cujit_options no_cache(void) {
  cujit_options o = {0};
  o.flags = CUJIT_OPT_NO_CACHE;
  return o;
}

/* CUJIT_ARCH is read once per process, so the cases that set it run in a fresh process:
 * this program again, with the argument --arch-env (see main). */
static char self_path[4096];

/* In that process: compiles with no target given, prints the target, sets CUJIT_ARCH to
 * something else and does it again (the change must not be seen); or prints the status
 * and detail of the failure and exits 1. */
static int arch_env_child(void) {
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  int i;
  for (i = 0; i < 2; i++) {
    cujit_status st = cujit_module_from_source(&m, kMul, "a.cu", &o);
    if (st != CUJIT_OK) {
      printf("%s: %s\n", cujit_status_name(st), cujit_last_error());
      return 1;
    }
    printf("%s\n", cujit_module_arch(m));
    cujit_module_destroy(m);
    m = NULL;
    setenv("CUJIT_ARCH", "compute_75", 1);
  }
  return 0;
}

/* Runs arch_env_child with CUJIT_ARCH set to `value`; returns its exit status, its output
 * in out. */
static int arch_env_run(const char *value, char *out, size_t size) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "CUJIT_ARCH='%s' '%s' --arch-env 2>&1", value, self_path);
  return test_capture(cmd, out, size);
}

static void ptx_for_virtual_arch(void **state) {
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  size_t n = 0;
  (void)state;
  o.arch = "compute_80";
  assert_ok(cujit_module_from_source(&m, kMul, "mul.cu", &o));
  assert_non_null(strstr(cujit_module_ptx(m, &n), ".target sm_80"));
  assert_int_equal(n, strlen(cujit_module_ptx(m, NULL)));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "multiply_them"));
  assert_null(cujit_module_cubin(m, &n));
  assert_int_equal(n, 0);
  assert_string_equal(cujit_module_arch(m), "compute_80");
  assert_string_equal(cujit_module_name(m), "mul.cu");
  assert_string_equal(cujit_module_log(m), "");
  cujit_module_destroy(m);
}

static void cubin_and_ptx_for_real_arch(void **state) {
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  const unsigned char *elf;
  size_t n = 0;
  (void)state;
  o.arch = "sm_90";
  assert_ok(cujit_module_from_source(&m, kMul, NULL, &o));
  elf = cujit_module_cubin(m, &n);
  assert_non_null(elf);
  assert_true(n > 64);
  assert_memory_equal(elf, "\177ELF", 4);
  assert_non_null(strstr(cujit_module_ptx(m, NULL), ".target sm_90"));
  assert_string_equal(cujit_module_arch(m), "sm_90");
  assert_string_equal(cujit_module_name(m), "source.cu");
  cujit_module_destroy(m);
}

static void arch_via_nvrtc_option_and_env(void **state) {
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  const char *opts[] = {"-arch=sm_80", NULL};
  char out[2048];
  (void)state;
  o.nvrtc_options = opts;
  assert_ok(cujit_module_from_source(&m, kMul, "a.cu", &o));
  assert_string_equal(cujit_module_arch(m), "sm_80");
  cujit_module_destroy(m);
  o.arch = "sm_90"; /* conflicting */
  assert_status_detail(cujit_module_from_source(&m, kMul, "a.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "two architectures");
  /* the environment, read once: changing it later changes nothing */
  if (arch_env_run("compute_86", out, sizeof out) != 0) fail_msg("%s", out);
  assert_string_equal(out, "compute_86\ncompute_86\n");
}

static void invalid_arch(void **state) {
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "sm_20";
  assert_status_detail(cujit_module_from_source(&m, kMul, "a.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "not supported by this NVRTC");
  assert_non_null(strstr(cujit_last_error(), "90")); /* lists what is supported */
  o.arch = "pentium";
  assert_status_detail(cujit_module_from_source(&m, kMul, "a.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "invalid architecture 'pentium'");
  assert_null(m);
}

/* 'a' targets exist from 90 on, 'f' targets from 100 on: anything else is a bad option,
 * found before NVRTC runs. */
static void arch_suffixes(void **state) {
  static const char *const bad[] = {"sm_80a", "sm_90f", "compute_80a", "sm_89a", "sm_75f"};
  static const char *const good[] = {"sm_90a",       "compute_90a", "sm_100a", "sm_100f",
                                     "compute_100f", "sm_120a",     "sm_120f"};
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof *bad; i++) {
    o.arch = bad[i];
    assert_status_detail(cujit_module_from_source(&m, kMul, "a.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                         bad[i]);
    assert_non_null(strstr(cujit_last_error(), "'a' suffix needs 90 or newer"));
    assert_non_null(strstr(cujit_last_error(), "'f' suffix needs 100 or newer"));
    assert_null(m);
  }
  for (i = 0; i < sizeof good / sizeof *good; i++) {
    int num = atoi(strchr(good[i], '_') + 1), archs[64];
    size_t n = 0, j, have = 0;
    assert_ok(cujit_nvrtc_get_archs(archs, 64, &n));
    for (j = 0; j < n; j++) have |= archs[j] == num;
    if (!have) continue; /* an older NVRTC */
    o.arch = good[i];
    assert_ok(cujit_module_from_source(&m, kMul, "a.cu", &o));
    assert_string_equal(cujit_module_arch(m), good[i]);
    cujit_module_destroy(m);
    m = NULL;
  }
}

/* A bad CUJIT_ARCH says that it came from there. */
static void arch_env_is_named(void **state) {
  char out[2048];
  (void)state;
  assert_int_equal(arch_env_run("sm_80a", out, sizeof out), 1);
  assert_non_null(strstr(out, cujit_status_name(CUJIT_ERROR_INVALID_OPTION)));
  assert_non_null(strstr(out, "'sm_80a' (from CUJIT_ARCH) does not exist"));
  assert_int_equal(arch_env_run("i386", out, sizeof out), 1);
  assert_non_null(strstr(out, cujit_status_name(CUJIT_ERROR_INVALID_OPTION)));
  assert_non_null(strstr(out, "'i386' (from CUJIT_ARCH)"));
}

/* Counts in the environment (CUJIT_DEVICE, CUJIT_STAGING_THREADS): digits only. */
static void counts_parse_strictly(void **state) {
  static const char *const bad[] = {"",   "-1",   "+1",  " 1",  "1 ",
                                    "1x", "0x10", "1e3", "abc", "18446744073709551616"};
  uint64_t v = 7;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof *bad; i++)
    if (cj_parse_count(bad[i], UINT64_MAX, &v) == 0) fail_msg("'%s' parsed", bad[i]);
  assert_int_equal(v, 7);
  assert_int_equal(cj_parse_count("0", 10, &v), 0);
  assert_int_equal(v, 0);
  assert_int_equal(cj_parse_count("010", 10, &v), 0);
  assert_int_equal(v, 10);
  assert_int_equal(cj_parse_count("11", 10, &v), -1);
  assert_int_equal(cj_parse_count("18446744073709551615", UINT64_MAX, &v), 0);
  assert_true(v == UINT64_MAX);
}

static void arch_clamping(void **state) {
  const int archs[] = {75, 80, 86, 89, 90, 100, 120};
  (void)state;
  assert_int_equal(cj_arch_clamp(90, archs, 7), 90);
  assert_int_equal(cj_arch_clamp(87, archs, 7), 86);   /* nearest older target */
  assert_int_equal(cj_arch_clamp(121, archs, 7), 120); /* newer device than NVRTC knows */
  assert_int_equal(cj_arch_clamp(200, archs, 7), 120);
  assert_int_equal(cj_arch_clamp(60, archs, 7), 75); /* older than all: the oldest */
  assert_int_equal(cj_arch_clamp(90, archs, 0), 0);
}

static void nvrtc_archs_and_version(void **state) {
  int maj = 0, min = 0, archs[64];
  size_t n = 0, i;
  int has90 = 0;
  (void)state;
  assert_ok(cujit_nvrtc_get_version(&maj, &min));
  assert_true(maj >= 12);
  assert_ok(cujit_nvrtc_get_archs(NULL, 0, &n));
  assert_true(n > 0);
  assert_ok(cujit_nvrtc_get_archs(archs, 64, &n));
  for (i = 0; i < n; i++) has90 |= archs[i] == 90;
  assert_true(has90);
  assert_int_equal(cujit_nvrtc_get_archs(NULL, 4, &n), CUJIT_ERROR_INVALID_VALUE);
}

static void defines_take_effect(void **state) {
  static const char src[] = "#ifndef WIDTH\n#error WIDTH not defined\n#endif\n"
                            "#ifndef FLAG\n#error FLAG not defined\n#endif\n"
                            "__global__ void k(int *x) { x[0] = WIDTH; }\n";
  const char *defs[] = {"WIDTH=123456", "FLAG", NULL};
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  assert_status_detail(cujit_module_from_source(&m, src, "d.cu", &o), CUJIT_ERROR_COMPILE,
                       "WIDTH not defined");
  o.defines = defs;
  assert_ok(cujit_module_from_source(&m, src, "d.cu", &o));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "123456"));
  cujit_module_destroy(m);
  defs[0] = "-DWIDTH=1";
  assert_status_detail(cujit_module_from_source(&m, src, "d.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "without -D");
}

static void include_dirs_and_file_relative(void **state) {
  char *dir = test_tempdir("inc"), *sub, path[4200];
  const char *dirs[2] = {NULL, NULL};
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  assert_non_null(dir);
  sub = malloc(4200);
  snprintf(sub, 4200, "%s/sub", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  assert_int_equal(test_write_file(sub, "val.h", "#define VAL 777001\n"), 0);
  assert_int_equal(test_write_file(dir, "near.h", "#define NEAR 777002\n"), 0);
  assert_int_equal(test_write_file(dir, "k.cu",
                                   "#include \"near.h\"\n#include \"val.h\"\n"
                                   "__global__ void k(int *x) { x[0] = VAL + NEAR; }\n"),
                   0);
  o.arch = "compute_80";
  snprintf(path, sizeof path, "%s/k.cu", dir);
  /* val.h is in sub/, which is not on the path yet */
  assert_status_detail(cujit_module_from_file(&m, path, &o), CUJIT_ERROR_COMPILE, "val.h");
  assert_non_null(strstr(cujit_last_error(), path)); /* the log names the file */
  dirs[0] = sub;
  o.include_dirs = dirs;
  assert_ok(cujit_module_from_file(&m, path, &o));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "1554003")); /* 777001 + 777002 */
  assert_string_equal(cujit_module_name(m), path);
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(sub);
  free(dir);
}

static void in_memory_headers(void **state) {
  static const char src[] = "#include \"params.h\"\n#include <cfg/more.h>\n"
                            "__global__ void k(int *x) { x[0] = P1 * 1000 + P2; }\n";
  cujit_header hdrs[] = {{"params.h", "#define P1 424\n"},
                         {"cfg/more.h", "#define P2 242\n"},
                         {NULL, NULL}};
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  o.headers = hdrs;
  assert_ok(cujit_module_from_source(&m, src, "h.cu", &o));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "424242"));
  cujit_module_destroy(m);
  hdrs[1].source = NULL;
  assert_status_detail(cujit_module_from_source(&m, src, "h.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "in-memory header 1");
}

static void name_expressions_are_lowered(void **state) {
  static const char src[] =
      "template <typename T, int N> __global__ void scale(T *x) { x[threadIdx.x] *= N; }\n"
      "template __global__ void scale<float, 2>(float *);\n";
  const char *names[] = {"scale<float, 2>", "scale<double, 3>", NULL};
  const char *lowered = NULL, *low2 = NULL;
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  o.name_expressions = names;
  assert_ok(cujit_module_from_source(&m, src, "t.cu", &o));
  assert_ok(cujit_module_get_lowered_name(m, "scale<float, 2>", &lowered));
  assert_string_equal(lowered, "_Z5scaleIfLi2EEvPT_");
  assert_ok(cujit_module_get_lowered_name(m, "scale<double, 3>", &lowered));
  assert_string_equal(lowered, "_Z5scaleIdLi3EEvPT_");
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "_Z5scaleIdLi3EEvPT_"));
  assert_int_equal(cujit_module_name_expression_count(m), 2);
  assert_string_equal(cujit_module_name_expression(m, 1, &low2), "scale<double, 3>");
  assert_string_equal(low2, "_Z5scaleIdLi3EEvPT_");
  assert_null(cujit_module_name_expression(m, 2, NULL));
  assert_status_detail(cujit_module_get_lowered_name(m, "scale<int, 1>", &lowered),
                       CUJIT_ERROR_NOT_FOUND, "name_expressions");
  cujit_module_destroy(m);
}

static void compile_error_names_the_line(void **state) {
  static const char src[] = "// line 1\n"
                            "__global__ void k(float *x)\n"
                            "{\n"
                            "  x[0] = undefined_thing;\n" /* line 4 */
                            "}\n";
  cujit_module *m = (cujit_module *)1;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  assert_status_detail(cujit_module_from_source(&m, src, "broken.cu", &o), CUJIT_ERROR_COMPILE,
                       "broken.cu(4): error");
  assert_non_null(strstr(cujit_last_error(), "undefined_thing"));
  assert_non_null(strstr(cujit_last_error(), "options: -arch=compute_80"));
  assert_int_equal(cujit_last_nvrtc_result(), 6 /* NVRTC_ERROR_COMPILATION */);
  assert_null(m);
}

static void warnings_go_to_the_log(void **state) {
  static const char src[] = "__global__ void k(int *x) { int unused = 3; x[0] = 1; }\n";
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  assert_ok(cujit_module_from_source(&m, src, "w.cu", &o));
  assert_non_null(strstr(cujit_module_log(m), "unused"));
  cujit_module_destroy(m);
}

static void invalid_options(void **state) {
  const char *bad[] = {"-definitely-not-an-option", NULL};
  const char *noDash[] = {"use_fast_math", NULL};
  const char *empty[] = {"", NULL};
  cujit_module *m = NULL;
  cujit_options o = no_cache();
  (void)state;
  o.arch = "compute_80";
  o.nvrtc_options = bad;
  assert_status_detail(cujit_module_from_source(&m, kMul, "o.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "-definitely-not-an-option");
  o.nvrtc_options = noDash;
  assert_status_detail(cujit_module_from_source(&m, kMul, "o.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "does not start with '-'");
  o.nvrtc_options = empty;
  assert_status_detail(cujit_module_from_source(&m, kMul, "o.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "empty string");
  o.nvrtc_options = NULL;
  o.include_dirs = empty;
  assert_status_detail(cujit_module_from_source(&m, kMul, "o.cu", &o), CUJIT_ERROR_INVALID_OPTION,
                       "include directory 0");
  assert_null(m);
}

static void null_and_empty_inputs(void **state) {
  cujit_module *m = NULL;
  const char *p = NULL;
  (void)state;
  assert_status_detail(cujit_module_from_source(&m, NULL, "n.cu", NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "NULL");
  assert_status_detail(cujit_module_from_source(&m, "", "e.cu", NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "empty");
  assert_int_equal(cujit_module_from_source(NULL, kMul, "x.cu", NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_module_from_file(NULL, "x.cu", NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_module_from_file(&m, NULL, NULL), CUJIT_ERROR_FILE);
  assert_int_equal(cujit_module_from_file(&m, "", NULL), CUJIT_ERROR_FILE);
  cujit_module_destroy(NULL);
  assert_null(cujit_module_ptx(NULL, NULL));
  assert_null(cujit_module_cubin(NULL, NULL));
  assert_int_equal(cujit_module_get_lowered_name(NULL, "x", &p), CUJIT_ERROR_INVALID_VALUE);
  assert_null(m);
}

/* A destroyed module is refused by every function that takes one, also once a new module
 * may have its memory, and destroying it again frees nothing of the new one. */
static void destroyed_modules_are_refused(void **state) {
  cujit_module *a = NULL, *b = NULL;
  cujit_function *f = NULL;
  CUdeviceptr d = 0;
  size_t n = 1;
  void *blob = NULL;
  const char *p = NULL;
  float x = 0;
  static int not_a_module[64];
  (void)state;
  assert_ok(cujit_module_from_source(&a, kMul, "a.cu", NULL));
  cujit_module_destroy(a);
  assert_ok(cujit_module_from_source(&b, kMul, "b.cu", NULL));
  cujit_module_destroy(a); /* a second time: nothing of b is freed */
  assert_null(cujit_module_name(a));
  assert_null(cujit_module_ptx(a, &n));
  assert_int_equal(n, 0);
  assert_null(cujit_module_cubin(a, NULL));
  assert_null(cujit_module_log(a));
  assert_null(cujit_module_arch(a));
  assert_int_equal(cujit_module_name_expression_count(a), 0);
  assert_null(cujit_module_name_expression(a, 0, NULL));
  assert_null(cujit_module_loaded_as(a, 0));
  assert_status_detail(cujit_module_get_function(a, "multiply_them", &f), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_get_function: mod is not a live module (destroyed already");
  assert_null(f);
  assert_status_detail(cujit_module_get_global(a, "g", &d, &n), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_get_global: mod is not a live module");
  assert_status_detail(cujit_module_write_global(a, "g", &x, sizeof x), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_write_global: mod is not a live module");
  assert_status_detail(cujit_module_read_global(a, "g", &x, sizeof x), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_read_global: mod is not a live module");
  assert_status_detail(cujit_module_get_lowered_name(a, "x", &p), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_get_lowered_name: mod is not a live module");
  assert_status_detail(cujit_module_export(a, &blob, &n), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_export: mod is not a live module");
  assert_null(blob);
  /* what cujit never made is refused too */
  assert_status_detail(cujit_module_get_function((cujit_module *)(void *)not_a_module, "k", &f),
                       CUJIT_ERROR_INVALID_VALUE, "not a live module");
  cujit_module_destroy((cujit_module *)(void *)not_a_module);
  /* b is whole */
  assert_string_equal(cujit_module_name(b), "b.cu");
  assert_non_null(cujit_module_ptx(b, &n));
  assert_true(n > 0);
  cujit_module_destroy(b);
}

static void unreadable_and_empty_files(void **state) {
  char *dir = test_tempdir("file"), path[4200];
  cujit_module *m = NULL;
  (void)state;
  snprintf(path, sizeof path, "%s/missing.cu", dir);
  assert_status_detail(cujit_module_from_file(&m, path, NULL), CUJIT_ERROR_FILE,
                       "No such file or directory");
  assert_non_null(strstr(cujit_last_error(), path));
  assert_status_detail(cujit_module_from_file(&m, dir, NULL), CUJIT_ERROR_FILE,
                       "not a regular file");
  assert_int_equal(test_write_file(dir, "empty.cu", ""), 0);
  snprintf(path, sizeof path, "%s/empty.cu", dir);
  assert_status_detail(cujit_module_from_file(&m, path, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "is empty");
  if (geteuid() != 0) { /* root reads anything */
    assert_int_equal(test_write_file(dir, "secret.cu", "__global__ void k(){}\n"), 0);
    snprintf(path, sizeof path, "%s/secret.cu", dir);
    chmod(path, 0);
    assert_status_detail(cujit_module_from_file(&m, path, NULL), CUJIT_ERROR_FILE,
                         "Permission denied");
  }
  assert_null(m);
  test_rmtree(dir);
  free(dir);
}

/* A FIFO would block open() until a writer came; other non-regular files are refused too. */
static void special_files_are_refused(void **state) {
  char *dir = test_tempdir("fifo"), path[4200];
  cujit_module *m = NULL;
  (void)state;
  snprintf(path, sizeof path, "%s/pipe.cu", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  alarm(20); /* a regression blocks: fail rather than hang */
  assert_status_detail(cujit_module_from_file(&m, path, NULL), CUJIT_ERROR_FILE, "is a FIFO");
  alarm(0);
  assert_non_null(strstr(cujit_last_error(), path));
  assert_status_detail(cujit_module_from_file(&m, dir, NULL), CUJIT_ERROR_FILE, "is a directory");
  assert_status_detail(cujit_module_from_file(&m, "/dev/null", NULL), CUJIT_ERROR_FILE,
                       "'/dev/null' is a character device, not a regular file");
  assert_null(m);
  test_rmtree(dir);
  free(dir);
}

/* A NUL byte would cut the source short without a word: refused, with its offset. */
static void nul_byte_is_refused(void **state) {
  static const char text[] = "__global__ void k(int *x) { *x = 1; }\n\0garbage\n";
  char *dir = test_tempdir("nul"), path[4200];
  cujit_module *m = NULL;
  FILE *f;
  (void)state;
  snprintf(path, sizeof path, "%s/nul.cu", dir);
  f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
  assert_int_equal(fclose(f), 0);
  assert_status_detail(cujit_module_from_file(&m, path, NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "NUL byte at offset 38");
  assert_non_null(strstr(cujit_last_error(), path));
  assert_null(m);
  test_rmtree(dir);
  free(dir);
}

typedef struct job {
  int id;
  int ok;
  char err[256];
} job;

static void *compile_job(void *arg) {
  job *j = arg;
  char src[512];
  int round;
  cujit_options o = no_cache();
  o.arch = j->id % 2 ? "compute_80" : "sm_90";
  j->ok = 1;
  for (round = 0; round < 3; round++) {
    cujit_module *m = NULL;
    char want[64];
    snprintf(src, sizeof src, "__global__ void k%d(int *x) { x[0] = %d; }\n", j->id,
             j->id * 1000 + 17 + round);
    snprintf(want, sizeof want, "%d", j->id * 1000 + 17 + round);
    if (cujit_module_from_source(&m, src, "thread.cu", &o) != CUJIT_OK ||
        !strstr(cujit_module_ptx(m, NULL), want)) {
      snprintf(j->err, sizeof j->err, "%s", cujit_last_error());
      j->ok = 0;
    }
    cujit_module_destroy(m);
  }
  return NULL;
}

static void concurrent_compiles(void **state) {
  pthread_t t[4];
  job jobs[4];
  int i;
  (void)state;
  for (i = 0; i < 4; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].id = i + 1;
    assert_int_equal(pthread_create(&t[i], NULL, compile_job, &jobs[i]), 0);
  }
  for (i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (i = 0; i < 4; i++)
    if (!jobs[i].ok) fail_msg("thread %d: %s", i, jobs[i].err);
}

int main(int argc, char **argv) {
  ssize_t n;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ptx_for_virtual_arch),
      cmocka_unit_test(cubin_and_ptx_for_real_arch),
      cmocka_unit_test(arch_via_nvrtc_option_and_env),
      cmocka_unit_test(invalid_arch),
      cmocka_unit_test(arch_suffixes),
      cmocka_unit_test(arch_env_is_named),
      cmocka_unit_test(counts_parse_strictly),
      cmocka_unit_test(arch_clamping),
      cmocka_unit_test(nvrtc_archs_and_version),
      cmocka_unit_test(defines_take_effect),
      cmocka_unit_test(include_dirs_and_file_relative),
      cmocka_unit_test(in_memory_headers),
      cmocka_unit_test(name_expressions_are_lowered),
      cmocka_unit_test(compile_error_names_the_line),
      cmocka_unit_test(warnings_go_to_the_log),
      cmocka_unit_test(invalid_options),
      cmocka_unit_test(null_and_empty_inputs),
      cmocka_unit_test(destroyed_modules_are_refused),
      cmocka_unit_test(unreadable_and_empty_files),
      cmocka_unit_test(special_files_are_refused),
      cmocka_unit_test(nul_byte_is_refused),
      cmocka_unit_test(concurrent_compiles),
  };
  if (argc > 1 && strcmp(argv[1], "--arch-env") == 0) return arch_env_child();
  n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (n <= 0) {
    perror("test_compile: /proc/self/exe");
    return 1;
  }
  self_path[n] = '\0';
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_prebuilt - modules from prebuilt PTX, CUBIN and fatbin bytes and files, without a
 * device: the kind told from the content, what the module reports, every refusal of bad
 * bytes or files, and lookups, which resolve names from the PTX or the CUBIN's symbols and
 * need the driver for the rest. The driver path is forced to a missing file, so this runs
 * the same on machines with and without a GPU. */
#include <sys/stat.h>
#include <unistd.h>

#include "prebuilttest.h"

static char *tmp;

static int setup(void **state) {
  (void)state;
  tmp = test_tempdir("prebuilt");
  return tmp ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

static uint64_t compiles_now(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  assert_ok(cujit_cache_get_stats(&s));
  return s.compiles;
}

/* Asserts that loading `data` fails as INVALID_SOURCE with `needle` in the detail. */
static void refused(const void *data, size_t size, const char *needle) {
  cujit_module *m = (cujit_module *)1;
  assert_status_detail(cujit_module_from_image(&m, data, size, "bad.bin"),
                       CUJIT_ERROR_INVALID_SOURCE, needle);
  assert_null(m);
}

static void ptx_of_a_compiled_module(void **state) {
  cujit_module *c = prebuilt_compiled("compute_80"), *m = NULL;
  size_t n = 0, got = 0;
  const char *ptx = cujit_module_ptx(c, &n);
  uint64_t before = compiles_now();
  (void)state;
  assert_ok(cujit_module_from_image(&m, ptx, n, "kernels.ptx"));
  assert_string_equal(cujit_module_ptx(m, &got), ptx);
  assert_int_equal(got, n);
  assert_null(cujit_module_cubin(m, &got));
  assert_int_equal(got, 0);
  assert_string_equal(cujit_module_arch(m), "compute_80");
  assert_string_equal(cujit_module_name(m), "kernels.ptx");
  assert_string_equal(cujit_module_log(m), "");
  assert_int_equal(cujit_module_name_expression_count(m), 0);
  cujit_module_destroy(m);
  /* with its NUL, and unnamed */
  assert_ok(cujit_module_from_image(&m, ptx, n + 1, NULL));
  assert_int_equal(strlen(cujit_module_ptx(m, &got)), n);
  assert_int_equal(got, n);
  assert_string_equal(cujit_module_name(m), "image.ptx");
  assert_int_equal(compiles_now(), before); /* NVRTC was not involved */
  cujit_module_destroy(m);
  cujit_module_destroy(c);
}

static void cubin_of_a_compiled_module(void **state) {
  cujit_module *c = prebuilt_compiled("sm_90"), *m = NULL;
  size_t n = 0, got = 1;
  const void *cubin = cujit_module_cubin(c, &n);
  uint64_t before = compiles_now();
  (void)state;
  assert_non_null(cubin);
  assert_ok(cujit_module_from_image(&m, cubin, n, NULL));
  assert_string_equal(cujit_module_name(m), "image.cubin");
  assert_string_equal(cujit_module_arch(m), "sm_90");
  assert_string_equal(cujit_module_ptx(m, &got), "");
  assert_int_equal(got, 0);
  assert_memory_equal(cujit_module_cubin(m, &got), cubin, n);
  assert_int_equal(got, n);
  assert_int_equal(compiles_now(), before);
  cujit_module_destroy(m);
  cujit_module_destroy(c);
}

static void fatbin_from_nvcc(void **state) {
  char path[4096], why[8192];
  cujit_module *m = NULL;
  size_t got = 1;
  (void)state;
  if (prebuilt_nvcc_fatbin(tmp,
                           "-gencode arch=compute_80,code=[sm_80,compute_80] "
                           "-gencode arch=compute_90,code=sm_90",
                           path, sizeof path, why, sizeof why)) {
    test_skip_part("fatbin_from_nvcc: %s", why);
    skip();
  }
  assert_ok(cujit_module_from_image_file(&m, path));
  assert_string_equal(cujit_module_name(m), path);
  assert_non_null(strstr(cujit_module_arch(m), "sm_80"));
  assert_non_null(strstr(cujit_module_arch(m), "compute_80"));
  assert_non_null(strstr(cujit_module_arch(m), "sm_90"));
  assert_string_equal(cujit_module_ptx(m, &got), "");
  assert_int_equal(got, 0);
  assert_null(cujit_module_cubin(m, &got));
  assert_int_equal(got, 0);
  cujit_module_destroy(m);
}

static void kinds_told_apart_by_content(void **state) {
  static const char ptx[] = "// a comment\n\t.version 8.0\n  .target sm_75\n.address_size 64\n";
  static const char no_target[] = ".version 8.0\n.address_size 64\n";
  static const char cu[] = "__global__ void f(int *x) { *x = 1; }\n";
  static const char nul_inside[] = ".version 8.0\n.target sm_75\0\n.entry f()\n{\n}\n";
  cujit_module *m = NULL;
  (void)state;
  assert_ok(cujit_module_from_image(&m, ptx, strlen(ptx), NULL));
  assert_string_equal(cujit_module_arch(m), "compute_75");
  cujit_module_destroy(m);
  refused(no_target, strlen(no_target),
          "'bad.bin' (30 bytes) is neither PTX, a CUBIN, a fatbin "
          "nor a cujit bundle: expected PTX text with .version and .target directives");
  refused(cu, strlen(cu), "CUDA C source goes to cujit_module_from_source");
  refused(nul_inside, sizeof nul_inside, "is neither PTX");
  refused("\177EL", 3, "is neither PTX"); /* too short to be ELF */
}

static void null_empty_and_garbage(void **state) {
  static const unsigned char garbage[] = {0x00, 0x01, 0xfe, 0xff, 0x42, 0x13, 0x37, 0x00};
  cujit_module *m = (cujit_module *)1;
  (void)state;
  assert_status_detail(cujit_module_from_image(&m, NULL, 10, "x"), CUJIT_ERROR_INVALID_SOURCE,
                       "cujit_module_from_image: data is NULL");
  assert_null(m);
  assert_status_detail(cujit_module_from_image(&m, "x", 0, "x"), CUJIT_ERROR_INVALID_SOURCE,
                       "data is empty (size 0)");
  assert_status_detail(cujit_module_from_image(NULL, "x", 1, "x"), CUJIT_ERROR_INVALID_VALUE,
                       "out is NULL");
  refused(garbage, sizeof garbage,
          "'bad.bin' (8 bytes) is neither PTX, a CUBIN, a fatbin nor a "
          "cujit bundle");
  m = (cujit_module *)1;
  assert_status_detail(cujit_module_from_image(&m, garbage, sizeof garbage, NULL),
                       CUJIT_ERROR_INVALID_SOURCE, "'image' (8 bytes)");
}

static void put_le(unsigned char *p, size_t off, uint64_t v, int width) {
  int i;
  for (i = 0; i < width; i++) p[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void damaged_elf_headers(void **state) {
  cujit_module *c = prebuilt_compiled("sm_90");
  size_t n = 0, shoff = 0;
  const unsigned char *cubin = cujit_module_cubin(c, &n);
  unsigned char *b = malloc(n);
  int i;
  (void)state;
  assert_non_null(b);
  memcpy(b, cubin, n);
  for (i = 7; i >= 0; i--) shoff = (shoff << 8) | b[0x28 + i];
  assert_true(shoff > 64 && shoff < n);
  refused(b, 40,
          "'bad.bin' is a truncated ELF file: 40 bytes, fewer than the 64 of an ELF "
          "header");
  b[4] = 1;
  refused(b, n, "is a 32-bit ELF file, but a CUBIN is 64-bit ELF");
  b[4] = 2, b[5] = 2;
  refused(b, n, "is a big-endian ELF file");
  b[5] = 1;
  put_le(b, 0x12, 62, 2); /* x86-64 */
  refused(b, n,
          "'bad.bin' is an ELF file for machine 62 (a host object or library?), not a "
          "CUBIN (machine 190, NVIDIA CUDA); pass the bytes nvcc -cubin");
  put_le(b, 0x12, 190, 2);
  refused(b, shoff + 10, "is a truncated or damaged CUBIN: its section headers lie outside");
  put_le(b, 0x28, UINT64_MAX - 8, 8);
  refused(b, n, "section headers lie outside");
  put_le(b, 0x28, 64, 8);
  put_le(b, 0x3c, 0xffff, 2);
  refused(b, n, "section headers lie outside");
  free(b);
  cujit_module_destroy(c);
}

/* A fatbin of one entry of `kind` with `payload` bytes after a 64-byte entry header. */
static size_t make_fatbin(unsigned char *b, unsigned kind, size_t payload) {
  memset(b, 0, 16 + 64 + payload);
  put_le(b, 0, 0xBA55ED50u, 4);
  put_le(b, 4, 1, 2);
  put_le(b, 6, 16, 2);
  put_le(b, 8, 64 + payload, 8);
  put_le(b, 16, kind, 2);
  put_le(b, 18, 0x101, 2);
  put_le(b, 20, 64, 4);
  put_le(b, 24, payload, 8);
  put_le(b, 44, 90, 4);
  return 16 + 64 + payload;
}

static void damaged_fatbin_headers(void **state) {
  unsigned char b[256];
  size_t n;
  cujit_module *m = NULL;
  (void)state;
  n = make_fatbin(b, 2, 32);
  assert_ok(cujit_module_from_image(&m, b, n, NULL)); /* a well-formed header is accepted */
  assert_string_equal(cujit_module_arch(m), "sm_90");
  assert_string_equal(cujit_module_name(m), "image.fatbin");
  cujit_module_destroy(m);
  refused(b, 10,
          "'bad.bin' is a truncated or damaged fatbin: its 10 bytes do not hold the "
          "header and the entries it announces");
  refused(b, n - 1, "its 111 bytes do not hold the header and the entries it announces");
  put_le(b, 6, 4, 2); /* header smaller than itself */
  refused(b, n, "truncated or damaged fatbin");
  put_le(b, 6, 16, 2);
  put_le(b, 24, 33, 8); /* the entry's payload runs past the entries */
  refused(b, n,
          "'bad.bin' is a truncated or damaged fatbin: entry 1 runs past the end of its "
          "entries");
  put_le(b, 24, 32, 8);
  put_le(b, 20, 8, 4); /* an entry header too small to read */
  refused(b, n, "entry 1 runs past the end");
  put_le(b, 20, 64, 4);
  put_le(b, 8, 64 + 32 + 8, 8); /* 8 stray bytes after the entry, announced as entries */
  memset(b + n, 0, 8);
  refused(b, n + 8, "entry 2 runs past the end");
  n = make_fatbin(b, 7, 32);
  refused(b, n, "'bad.bin' is a fatbin with no PTX or CUBIN entry (1 entry of other kinds)");
  put_le(b, 8, 0, 8);
  refused(b, 16, "'bad.bin' is a fatbin with no entries");
}

static void files_regular_fifo_missing(void **state) {
  char path[4096], fifo[4096], missing[4096];
  cujit_module *c = prebuilt_compiled("compute_80"), *m = (cujit_module *)1;
  FILE *f;
  (void)state;
  snprintf(path, sizeof path, "%s/k.ptx", tmp);
  f = fopen(path, "wb");
  assert_non_null(f);
  fputs(cujit_module_ptx(c, NULL), f);
  assert_int_equal(fclose(f), 0);
  assert_ok(cujit_module_from_image_file(&m, path));
  assert_string_equal(cujit_module_ptx(m, NULL), cujit_module_ptx(c, NULL));
  assert_string_equal(cujit_module_name(m), path);
  cujit_module_destroy(m);
  snprintf(fifo, sizeof fifo, "%s/fifo.cubin", tmp);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_status_detail(cujit_module_from_image_file(&m, fifo), CUJIT_ERROR_FILE,
                       "fifo.cubin' is a FIFO (named pipe), not a regular file; give the path of a "
                       "PTX, "
                       "CUBIN, fatbin or bundle file");
  assert_null(m);
  assert_status_detail(cujit_module_from_image_file(&m, tmp), CUJIT_ERROR_FILE,
                       "is a directory, not a regular file");
  assert_status_detail(cujit_module_from_image_file(&m, "/dev/null"), CUJIT_ERROR_FILE,
                       "'/dev/null' is a character device, not a regular file");
  snprintf(missing, sizeof missing, "%s/missing.fatbin", tmp);
  assert_status_detail(cujit_module_from_image_file(&m, missing), CUJIT_ERROR_FILE,
                       "cannot open '");
  assert_non_null(strstr(cujit_last_error(), "missing.fatbin': No such file or directory"));
  assert_int_equal(test_write_file(tmp, "empty.ptx", ""), 0);
  snprintf(path, sizeof path, "%s/empty.ptx", tmp);
  assert_status_detail(cujit_module_from_image_file(&m, path), CUJIT_ERROR_INVALID_SOURCE,
                       "empty.ptx' is empty; it must hold PTX, a CUBIN, a fatbin or a cujit "
                       "bundle");
  assert_int_equal(test_write_file(tmp, "k.cu", kPrebuiltSrc), 0);
  snprintf(path, sizeof path, "%s/k.cu", tmp);
  assert_status_detail(cujit_module_from_image_file(&m, path), CUJIT_ERROR_INVALID_SOURCE,
                       "k.cu' (");
  assert_status_detail(cujit_module_from_image_file(&m, ""), CUJIT_ERROR_FILE, "path is empty");
  assert_status_detail(cujit_module_from_image_file(&m, NULL), CUJIT_ERROR_FILE, "path is NULL");
  assert_status_detail(cujit_module_from_image_file(NULL, path), CUJIT_ERROR_INVALID_VALUE,
                       "out is NULL");
  cujit_module_destroy(c);
}

static void lookups_without_a_driver(void **state) {
  cujit_module *c = prebuilt_compiled("sm_90"), *ptx = NULL, *cubin = NULL;
  cujit_function *fn = (cujit_function *)1;
  CUdeviceptr d = 1;
  size_t n = 0;
  const void *bytes = cujit_module_cubin(c, &n);
  (void)state;
  assert_ok(cujit_module_from_image(&cubin, bytes, n, "k.cubin"));
  bytes = cujit_module_ptx(c, &n);
  assert_ok(cujit_module_from_image(&ptx, bytes, n, "k.ptx"));
  /* PTX: names resolve as for a compiled module */
  assert_status_detail(cujit_module_get_function(ptx, "nope", &fn), CUJIT_ERROR_NOT_FOUND,
                       "module 'k.ptx' has no kernel 'nope'; its kernels: ");
  assert_null(fn);
  assert_non_null(strstr(cujit_last_error(), "scale (_Z5scalePffi)"));
  assert_non_null(strstr(cujit_last_error(), "add_one"));
  assert_status_detail(cujit_module_get_function(ptx, "scale", &fn), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  /* CUBIN: the driver lists the kernels, so every lookup needs it */
  assert_status_detail(cujit_module_get_function(cubin, "nope", &fn), CUJIT_ERROR_NO_DRIVER,
                       "/nonexistent/libcuda.so.1");
  assert_status_detail(cujit_module_get_function(cubin, "scale", &fn), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  /* variables: from the PTX, and from the CUBIN's ELF symbols */
  assert_status_detail(cujit_module_get_global(cubin, "nope", &d, NULL), CUJIT_ERROR_NOT_FOUND,
                       "module 'k.cubin' has no variable 'nope'; its variables: ");
  assert_int_equal(d, 0);
  assert_non_null(strstr(cujit_last_error(), "counter"));
  assert_non_null(strstr(cujit_last_error(), "coef"));
  assert_non_null(strstr(cujit_last_error(), "ns::bias (_ZN2ns4biasE)"));
  assert_status_detail(cujit_module_get_global(ptx, "nope", &d, NULL), CUJIT_ERROR_NOT_FOUND,
                       "ns::bias (_ZN2ns4biasE)");
  assert_status_detail(cujit_module_get_global(cubin, "bias", &d, NULL), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_module_read_global(ptx, "counter", &n, 4), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  cujit_module_destroy(ptx);
  cujit_module_destroy(cubin);
  cujit_module_destroy(c);
}

/* The variables of an nvcc fatbin are read from its ELF entries. */
static void fatbin_variables_without_a_driver(void **state) {
  char path[4096], why[8192];
  cujit_module *m = NULL;
  cujit_function *fn = NULL;
  CUdeviceptr d = 1;
  (void)state;
  if (prebuilt_nvcc_fatbin(tmp, "-arch=sm_90", path, sizeof path, why, sizeof why)) {
    test_skip_part("fatbin_variables_without_a_driver: %s", why);
    skip();
  }
  assert_ok(cujit_module_from_image_file(&m, path));
  assert_string_equal(cujit_module_arch(m), "sm_90 compute_90");
  assert_status_detail(cujit_module_get_global(m, "nope", &d, NULL), CUJIT_ERROR_NOT_FOUND,
                       "ns::bias (_ZN2ns4biasE)");
  assert_status_detail(cujit_module_get_function(m, "scale", &fn), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ptx_of_a_compiled_module),
      cmocka_unit_test(cubin_of_a_compiled_module),
      cmocka_unit_test(fatbin_from_nvcc),
      cmocka_unit_test(kinds_told_apart_by_content),
      cmocka_unit_test(null_empty_and_garbage),
      cmocka_unit_test(damaged_elf_headers),
      cmocka_unit_test(damaged_fatbin_headers),
      cmocka_unit_test(files_regular_fifo_missing),
      cmocka_unit_test(lookups_without_a_driver),
      cmocka_unit_test(fatbin_variables_without_a_driver),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return test_group_result(cmocka_run_group_tests(tests, setup, teardown));
}

/* test_kparams - a kernel's parameters read from a CUBIN's own description of them (the
 * attributes ptxas writes for the driver, format/code.c), so that the module layer knows
 * how many a prebuilt or linked kernel has without asking the driver past the last one:
 * CUBINs that NVRTC, nvJitLink and nvcc (where it is on PATH) make, with no parameters,
 * many of every size (1 byte, 16-byte aligned, structs, more than 4 KiB), C++ templates,
 * relocatable code and linked code; and descriptions damaged every way, which are read as
 * "not described" and never past their bytes. No device is needed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "compile/symbols.h"
#include "dl/zstd.h"
#include "format/code.h"
#include "format/prebuilt.h"

static const char kSource[] =
    "struct S { double a; char b; float c[3]; };\n"
    "struct __align__(16) V { float x, y, z, w; };\n"
    "struct Big { int v[2000]; };\n"
    "struct Huge { int v[8000]; };\n"
    "extern \"C\" __global__ void none() {}\n"
    "extern \"C\" __global__ void one_byte(char c) {}\n"
    "extern \"C\" __global__ void mixed(float *a, int b, char c, double d, S s, V v, short e,\n"
    "                                   bool f, float4 g, long long h, unsigned char i) {\n"
    "  if (a) a[0] = b + c + d + s.a + v.x + e + f + g.y + h + i;\n"
    "}\n"
    "extern \"C\" __global__ void big(int x, Big b, char y) {}\n"
    "extern \"C\" __global__ void huge(int x, Huge b, char y) {}\n"
    "template <typename T> __global__ void tmpl(T *a, T b) { a[0] = b; }\n";

typedef struct expect {
  const char *kernel; /* its symbol */
  size_t n;
  cj_kparam p[12];
} expect;

/* What cuobjdump -elf shows for kSource's kernels built for sm_90 (nvcc 13.0): the same
 * places as the C ABI gives them. */
static const expect kExpected[] = {
    {"none", 0, {{0, 0}}},
    {"one_byte", 1, {{0, 1}}},
    {"mixed",
     11,
     {{0, 8},
      {8, 4},
      {12, 1},
      {16, 8},
      {24, 24},
      {48, 16},
      {64, 2},
      {66, 1},
      {80, 16},
      {96, 8},
      {104, 1}}},
    {"big", 3, {{0, 4}, {4, 8000}, {8004, 1}}},
    {"huge", 3, {{0, 4}, {4, 32000}, {32004, 1}}},
    {"_Z4tmplIdEvPT_S0_", 2, {{0, 8}, {8, 8}}},
    {"_Z4tmplIcEvPT_S0_", 2, {{0, 8}, {8, 1}}},
};

static const char *const kNames[] = {"tmpl<double>", "tmpl<char>", NULL};

static char *tmp;

static int setup(void **state) {
  (void)state;
  tmp = test_tempdir("kparams");
  return tmp ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

/* Asserts that the CUBIN describes every kernel of kExpected as it says. */
static void describes_all(const void *cubin, size_t size, const char *what) {
  size_t i, j, n;
  cj_kparam *p;
  for (i = 0; i < sizeof kExpected / sizeof kExpected[0]; i++) {
    const expect *e = &kExpected[i];
    if (cj_cubin_kparams(cubin, size, e->kernel, &n, &p) != 1)
      fail_msg("%s: kernel %s is not described", what, e->kernel);
    if (n != e->n) fail_msg("%s: kernel %s has %zu parameters, read %zu", what, e->kernel, e->n, n);
    for (j = 0; j < n; j++)
      if (p[j].offset != e->p[j].offset || p[j].size != e->p[j].size)
        fail_msg("%s: kernel %s parameter %zu at %u (%u bytes), read at %u (%u bytes)", what,
                 e->kernel, j, e->p[j].offset, e->p[j].size, p[j].offset, p[j].size);
    if (n == 0) assert_null(p);
    free(p);
  }
  assert_int_equal(cj_cubin_kparams(cubin, size, "tmpl", &n, &p), 0); /* not a symbol */
  assert_int_equal(cj_cubin_kparams(cubin, size, "mixe", &n, &p), 0);
  assert_int_equal(cj_cubin_kparams(cubin, size, "", &n, &p), 0);
  assert_int_equal(n, 0);
  assert_null(p);
}

static cujit_module *compiled(const char *const *nvrtc_options) {
  cujit_module *m = NULL;
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "sm_90";
  o.nvrtc_options = nvrtc_options;
  o.name_expressions = kNames;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, kSource, "kparams.cu", &o));
  return m;
}

static void nvrtc_cubins(void **state) {
  static const char *const rdc[] = {"-rdc=true", NULL};
  static const char *const debug[] = {"-G", NULL};
  const char *const *variants[] = {NULL, rdc, debug};
  size_t i, size;
  (void)state;
  for (i = 0; i < 3; i++) {
    cujit_module *m = compiled(variants[i]);
    const void *cubin = cujit_module_cubin(m, &size);
    assert_non_null(cubin);
    describes_all(cubin, size, i == 0 ? "NVRTC" : i == 1 ? "NVRTC -rdc=true" : "NVRTC -G");
    cujit_module_destroy(m);
  }
}

/* The PTX's parameter list agrees with the CUBIN where the PTX alone fixes the places (the
 * module layer takes the count from either). */
static void agrees_with_the_ptx(void **state) {
  cujit_module *m = compiled(NULL);
  size_t size, n, np, *off, *sz, i, k;
  const void *cubin = cujit_module_cubin(m, &size);
  const char *ptx = cujit_module_ptx(m, &np);
  cj_kparam *p;
  (void)state;
  for (k = 0; k < sizeof kExpected / sizeof kExpected[0]; k++) {
    assert_int_equal(cj_cubin_kparams(cubin, size, kExpected[k].kernel, &n, &p), 1);
    assert_ok(cj_ptx_params(ptx, kExpected[k].kernel, &np, &off, &sz));
    assert_int_equal(np, n);
    for (i = 0; i < n; i++) assert_int_equal(sz[i], p[i].size);
    free(p);
    free(off);
    free(sz);
  }
  cujit_module_destroy(m);
}

static void linked_cubins(void **state) {
  static const char lib[] = "__device__ float twice(float x) { return 2.0f * x; }\n";
  static const char main_src[] =
      "__device__ float twice(float x);\n"
      "struct P { int a; double b; };\n"
      "extern \"C\" __global__ void linked(float *o, P p, char c) { o[0] = twice(p.b) + c; }\n"
      "extern \"C\" __global__ void linked_none() {}\n";
  cujit_link_part parts[2] = {CUJIT_LINK_PART_INIT, CUJIT_LINK_PART_INIT};
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  size_t size, n;
  const void *cubin;
  cj_kparam *p;
  (void)state;
  parts[0].kind = parts[1].kind = CUJIT_LINK_SOURCE;
  parts[0].data = main_src;
  parts[0].name = "main.cu";
  parts[1].data = lib;
  parts[1].name = "lib.cu";
  o.arch = "sm_90";
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  assert_non_null(cubin = cujit_module_cubin(m, &size));
  assert_int_equal(cj_cubin_kparams(cubin, size, "linked", &n, &p), 1);
  assert_int_equal(n, 3);
  assert_int_equal(p[0].offset, 0);
  assert_int_equal(p[0].size, 8);
  assert_int_equal(p[1].offset, 8);
  assert_int_equal(p[1].size, 16);
  assert_int_equal(p[2].offset, 24);
  assert_int_equal(p[2].size, 1);
  free(p);
  assert_int_equal(cj_cubin_kparams(cubin, size, "linked_none", &n, &p), 1);
  assert_int_equal(n, 0);
  /* a __device__ function has a description too, but no parameters in it: it is no kernel,
   * and is never asked for */
  cujit_module_destroy(m);
}

/* The whole of a file, malloc'd. */
static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf;
  long n;
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  buf = malloc((size_t)n);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void nvcc_cubins(void **state) {
  static const char *const flags[] = {"-cubin -arch=sm_90", "-cubin -rdc=true -arch=sm_90",
                                      "-cubin -arch=sm_100", "-cubin -arch=sm_75"};
  char cmd[8192], out[4096], path[4096], src[8192];
  unsigned char *b;
  size_t i, size;
  (void)state;
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    test_skip_part("nvcc_cubins: nvcc is not on PATH");
    skip();
  }
  /* the template's two instances, as NVRTC's name expressions make them */
  snprintf(src, sizeof src,
           "%stemplate __global__ void tmpl<double>(double *, double);\n"
           "template __global__ void tmpl<char>(char *, char);\n",
           kSource);
  assert_int_equal(test_write_file(tmp, "k.cu", src), 0);
  for (i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    snprintf(path, sizeof path, "%s/k%zu.cubin", tmp, i);
    snprintf(cmd, sizeof cmd, "nvcc %s -w -o '%s' '%s/k.cu' 2>&1", flags[i], path, tmp);
    if (test_capture(cmd, out, sizeof out) != 0) fail_msg("%s: %s", cmd, out);
    b = slurp(path, &size);
    describes_all(b, size, flags[i]);
    free(b);
  }
}

/* A fatbin nvcc compressed (zstd): its CUBIN entry, decompressed, describes the kernels as
 * the plain CUBIN does; a frame cut short, or bytes that are no frame, are refused. */
static void compressed_entries(void **state) {
  char cmd[8192], out[4096], path[4096], src[8192];
  unsigned char *b, *plain;
  cj_code *codes;
  size_t size, n, i, psize;
  int found = 0;
  (void)state;
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    test_skip_part("compressed_entries: nvcc is not on PATH");
    skip();
  }
  snprintf(src, sizeof src,
           "%stemplate __global__ void tmpl<double>(double *, double);\n"
           "template __global__ void tmpl<char>(char *, char);\n",
           kSource);
  assert_int_equal(test_write_file(tmp, "z.cu", src), 0);
  snprintf(path, sizeof path, "%s/z.fatbin", tmp);
  snprintf(cmd, sizeof cmd,
           "nvcc -fatbin -Xfatbin=-compress-all -gencode arch=compute_90,code=sm_90 -w -o '%s' "
           "'%s/z.cu' 2>&1",
           path, tmp);
  if (test_capture(cmd, out, sizeof out) != 0) fail_msg("%s: %s", cmd, out);
  b = slurp(path, &size);
  assert_ok(cj_prebuilt_codes(b, size, CJ_PREBUILT_FATBIN, &codes, &n));
  for (i = 0; i < n; i++) {
    if (codes[i].kind != CJ_PREBUILT_CUBIN) continue;
    assert_true(codes[i].compressed);
    assert_true(cj_zstd_is_frame(codes[i].data, codes[i].size));
    assert_int_equal(cj_zstd_decompress(codes[i].data, codes[i].size, 1 << 30, &plain, &psize),
                     CUJIT_OK);
    describes_all(plain, psize, "a compressed nvcc fatbin entry");
    free(plain);
    /* cut short; bigger than allowed; not a frame */
    assert_int_equal(cj_zstd_decompress(codes[i].data, codes[i].size / 2, 1 << 30, &plain, &psize),
                     CUJIT_ERROR_INVALID_SOURCE);
    assert_null(plain);
    assert_int_equal(cj_zstd_decompress(codes[i].data, codes[i].size, 16, &plain, &psize),
                     CUJIT_ERROR_INVALID_SOURCE);
    assert_int_equal(cj_zstd_decompress(b, 64, 1 << 30, &plain, &psize),
                     CUJIT_ERROR_INVALID_SOURCE);
    found = 1;
  }
  assert_true(found);
  cj_free(codes);
  free(b);
}

/* A zstd frame of one raw block holding "hello" (written by hand, as the format says). */
static const unsigned char kHelloFrame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x29,
                                            0x00, 0x00, 'h',  'e',  'l',  'l',  'o'};

/* In a new process (libzstd is looked for once): decompresses kHelloFrame; exit 0 when it
 * gave "hello", 3 when libzstd was not loaded (the reason on stdout), 4 otherwise. */
static int zstd_child(void) {
  unsigned char *out;
  size_t n;
  int rc;
  cujit_status st = cj_zstd_decompress(kHelloFrame, sizeof kHelloFrame, 64, &out, &n);
  if (st == CUJIT_ERROR_NOT_SUPPORTED) {
    printf("%s\n", cj_zstd_error());
    return 3;
  }
  rc = st == CUJIT_OK && n == 5 && memcmp(out, "hello", 5) == 0 ? 0 : 4;
  free(out);
  return rc;
}

/* Runs zstd_child with CUJIT_LIBZSTD set to `value` (unset for NULL); its exit status and
 * what it printed. */
static int zstd_run(const char *value, char *out, size_t size) {
  char cmd[4200], self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  assert_true(len > 0);
  self[len] = '\0';
  if (value)
    snprintf(cmd, sizeof cmd, "CUJIT_LIBZSTD='%s' '%s' --zstd", value, self);
  else
    snprintf(cmd, sizeof cmd, "env -u CUJIT_LIBZSTD '%s' --zstd", self);
  return test_capture(cmd, out, size);
}

/* libzstd by the system's search, or by CUJIT_LIBZSTD's absolute path; a relative one is
 * not loaded (a bare name would be the working directory's file), nor a missing file, and
 * the reason names the variable. */
static void zstd_is_found_or_refused(void **state) {
  char out[4096];
  (void)state;
  if (zstd_run(NULL, out, sizeof out) == 3) {
    test_skip_part("zstd_is_found_or_refused: libzstd.so.1 is not installed (%s)", out);
    skip();
  }
  assert_int_equal(zstd_run(NULL, out, sizeof out), 0);
  assert_int_equal(zstd_run("libzstd.so.1", out, sizeof out), 3);
  assert_non_null(strstr(out, "CUJIT_LIBZSTD is 'libzstd.so.1', which is not an absolute path"));
  assert_int_equal(zstd_run("/nonexistent/libzstd.so.1", out, sizeof out), 3);
  assert_non_null(strstr(out, "from CUJIT_LIBZSTD"));
  assert_non_null(strstr(out, "looked only at /nonexistent/libzstd.so.1"));
  assert_non_null(strstr(out, "Install libzstd ("));
}

/* The file C's library is loaded from (an absolute path, from this process's map). */
static int libc_path(char *out, size_t size) {
  char line[4096], *path;
  FILE *f = fopen("/proc/self/maps", "r");
  int found = 0;
  if (!f) return 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if ((path = strchr(line, '/')) != NULL && strstr(path, "/libc.so.6") && strlen(path) < size) {
      strcpy(out, path);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* A library that is not libzstd (C's own) is loaded and refused, naming what it lacks
 * and what to do, in the words every library's loading uses. */
static void zstd_that_lacks_an_entry_is_refused(void **state) {
  char out[4096], libc[1024];
  (void)state;
  assert_true(libc_path(libc, sizeof libc));
  assert_int_equal(zstd_run(libc, out, sizeof out), 3);
  if (!strstr(out, "libzstd in ") || !strstr(out, libc) || !strstr(out, " lacks ZSTD_") ||
      !strstr(out, "(libzstd 1.3 or newer is needed); install libzstd ("))
    fail_msg("%s", out);
}

/* Finds kernel `name`'s description in a CUBIN: its offset and size (the ELF's section
 * headers, read here without the parser under test). */
static void find_info(const unsigned char *b, size_t size, const char *name, size_t *at,
                      size_t *len) {
  uint64_t shoff, names;
  unsigned shentsize, shnum, shstrndx, i;
  char want[256];
  memcpy(&shoff, b + 0x28, 8);
  shentsize = b[0x3a] | b[0x3b] << 8;
  shnum = b[0x3c] | b[0x3d] << 8;
  shstrndx = b[0x3e] | b[0x3f] << 8;
  memcpy(&names, b + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
  snprintf(want, sizeof want, ".nv.info.%s", name);
  for (i = 0; i < shnum; i++) {
    const unsigned char *h = b + shoff + (uint64_t)i * shentsize;
    uint32_t nm;
    uint64_t off, sz;
    memcpy(&nm, h, 4);
    memcpy(&off, h + 0x18, 8);
    memcpy(&sz, h + 0x20, 8);
    if (names + nm < size && strcmp((const char *)b + names + nm, want) == 0) {
      *at = (size_t)off;
      *len = (size_t)sz;
      return;
    }
  }
  fail_msg("no section %s", want);
}

/* The KPARAM entry for ordinal `ord` in the description at b[at, at + len): its offset. */
static size_t entry_of(const unsigned char *b, size_t at, size_t len, unsigned ord) {
  size_t pos = at;
  while (pos < at + len) {
    unsigned fmt = b[pos], attr = b[pos + 1],
             l = fmt == 4 ? (unsigned)(b[pos + 2] | b[pos + 3] << 8) : 0;
    if (fmt == 4 && (attr == 0x17 || attr == 0x45) &&
        (unsigned)(b[pos + 8] | b[pos + 9] << 8) == ord)
      return pos;
    pos += fmt == 4 ? 4 + l : 4;
  }
  fail_msg("no entry for ordinal %u", ord);
  return 0;
}

/* Damaged descriptions are "not described", never read past: an ordinal given twice or out
 * of range, a size of 0, a length past the section, an unknown format, a truncated file;
 * and every byte of the description changed, one at a time, to every value. */
static void damaged_descriptions(void **state) {
  cujit_module *m = compiled(NULL);
  size_t size, at = 0, len = 0, n, e, i;
  const unsigned char *cubin = cujit_module_cubin(m, &size);
  unsigned char *b = malloc(size);
  cj_kparam *p;
  int v, r;
  (void)state;
  memcpy(b, cubin, size);
  find_info(b, size, "mixed", &at, &len);
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 1);
  free(p);
  e = entry_of(b, at, len, 3);
  b[e + 8] = 2; /* ordinal 3 says 2: 2 twice, 3 missing */
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 0);
  assert_null(p);
  assert_int_equal(n, 0);
  b[e + 8] = 11; /* past the last */
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 0);
  b[e + 8] = 3;
  memset(b + e + 12, 0, 4); /* a size of 0 */
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 0);
  memcpy(b + e + 12, cubin + e + 12, 4);
  b[at + 2] = 0xff; /* the first attribute's length runs past the section */
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 0);
  b[at + 2] = cubin[at + 2];
  b[at] = 9; /* an unknown format */
  assert_int_equal(cj_cubin_kparams(b, size, "mixed", &n, &p), 0);
  b[at] = cubin[at];
  assert_int_equal(cj_cubin_kparams(b, at + len - 1, "mixed", &n, &p), 0); /* cut short */
  assert_int_equal(cj_cubin_kparams(b, 63, "mixed", &n, &p), 0);
  assert_int_equal(cj_cubin_kparams(b, 0, "mixed", &n, &p), 0);
  /* every byte of the description, every value: no read past it (ASan's job), and what is
   * read has its count of parameters, each inside the kernel's parameter space */
  for (i = at; i < at + len; i++) {
    for (v = 0; v < 256; v++) {
      b[i] = (unsigned char)v;
      r = cj_cubin_kparams(b, size, "mixed", &n, &p);
      assert_true(r == 0 || r == 1);
      if (r == 1) {
        assert_true(n <= len / 16);
        free(p);
      }
    }
    b[i] = cubin[i];
  }
  free(b);
  cujit_module_destroy(m);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nvrtc_cubins),
      cmocka_unit_test(agrees_with_the_ptx),
      cmocka_unit_test(linked_cubins),
      cmocka_unit_test(nvcc_cubins),
      cmocka_unit_test(damaged_descriptions),
      cmocka_unit_test(compressed_entries),
      cmocka_unit_test(zstd_is_found_or_refused),
      cmocka_unit_test(zstd_that_lacks_an_entry_is_refused),
  };
  if (argc > 1 && strcmp(argv[1], "--zstd") == 0) return zstd_child();
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return test_group_result(cmocka_run_group_tests(tests, setup, teardown));
}

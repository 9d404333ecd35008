/* test_bundle - bundles for several GPUs, without a device: one made from source holds a
 * CUBIN per sm_XX (the same bytes a compile for that target gives), PTX for the newest,
 * a cache entry per target, the source and the options; `cujit compile --arch A,B` writes
 * it and `cujit info` lists it; it loads as a module; every damaged form (truncated, bad
 * magic or version, bad checksums, entries outside it or overlapping, huge counts) is
 * refused saying what is wrong; warming a cache from it makes a later compile of each
 * target a hit in another process, and an entry whose key differs here is refused naming
 * the part; an nvcc fatbin is listed entry by entry (when nvcc is on PATH). Needs NVRTC. */
#define _GNU_SOURCE /* memmem */
#include "cachetest.h"
#include "format/bundle.h" /* internal: the layout, for damaging a bundle */

#define SOURCE                                                        \
  "#include \"factor.h\"\n"                                           \
  "template <typename T> __global__ void scale(T *x, T f, int n) {\n" \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                \
  "  if (i < n) x[i] *= f * FACTOR + OFFSET;\n"                       \
  "}\n"                                                               \
  "template __global__ void scale<float>(float *, float, int);\n"

static const char *const kDefines[] = {"OFFSET=1", NULL};
static const char *const kArchs[] = {"sm_80", "sm_90", "sm_100"};
enum { N_ARCHS = 3 };

static char *tmp; /* holds k.cu and factor.h */
static char src_path[4200];

static cujit_options base_options(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.defines = kDefines;
  return o;
}

/* A bundle of k.cu for kArchs; free with cujit_free. */
static void *make_bundle(size_t *size) {
  cujit_options o = base_options();
  void *b = NULL;
  assert_ok(cujit_bundle_from_file(&b, size, src_path, &o, kArchs, N_ARCHS));
  assert_non_null(b);
  return b;
}

/* The whole of a file, malloc'd; NULL when it cannot be read. */
static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
      !(buf = malloc((size_t)n)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = buf ? (size_t)n : 0;
  return buf;
}

static int group_setup(void **state) {
  (void)state;
  tmp = test_tempdir("bundle");
  if (!tmp || test_write_file(tmp, "factor.h", "#define FACTOR 3\n") != 0 ||
      test_write_file(tmp, "k.cu", SOURCE) != 0)
    return -1;
  snprintf(src_path, sizeof src_path, "%s/k.cu", tmp);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

/* ---- what a bundle holds ---- */

static const cj_bundle_part *part(const cj_bundle_part *p, size_t n, uint32_t kind,
                                  const char *arch) {
  size_t i;
  for (i = 0; i < n; i++)
    if (p[i].kind == kind && strcmp(p[i].arch, arch) == 0) return &p[i];
  return NULL;
}

static void holds_every_target(void **state) {
  size_t size = 0, n = 0, i;
  void *b = make_bundle(&size);
  cj_bundle_part *p = NULL;
  cj_bundle_opts opts;
  char why[256];
  (void)state;
  assert_int_equal(cj_bundle_parse(b, size, &p, &n, why, sizeof why), 0);
  for (i = 0; i < N_ARCHS; i++) {
    cujit_options o = base_options();
    cujit_module *m = NULL;
    const cj_bundle_part *cubin = part(p, n, CJ_BE_CUBIN, kArchs[i]);
    size_t len = 0;
    const void *want;
    o.arch = kArchs[i];
    assert_ok(cujit_module_from_file(&m, src_path, &o));
    want = cujit_module_cubin(m, &len);
    assert_non_null(cubin);
    assert_int_equal(cubin->size, len);
    assert_memory_equal(cubin->data, want, len);
    assert_non_null(part(p, n, CJ_BE_BLOB, kArchs[i]));
    cujit_module_destroy(m);
  }
  /* PTX for the newest target only */
  assert_non_null(part(p, n, CJ_BE_PTX, "compute_100"));
  assert_null(part(p, n, CJ_BE_PTX, "compute_80"));
  assert_null(part(p, n, CJ_BE_PTX, "compute_90"));
  assert_int_equal(part(p, n, CJ_BE_SOURCE, "")->size, strlen(SOURCE));
  assert_memory_equal(part(p, n, CJ_BE_SOURCE, "")->data, SOURCE, strlen(SOURCE));
  assert_int_equal(cj_bundle_opts_decode(part(p, n, CJ_BE_OPTIONS, "")->data,
                                         part(p, n, CJ_BE_OPTIONS, "")->size, &opts, why,
                                         sizeof why),
                   0);
  assert_string_equal(opts.name, src_path);
  assert_string_equal(opts.dir, tmp);
  assert_string_equal(opts.defines[0], "OFFSET=1");
  assert_null(opts.defines[1]);
  assert_null(opts.include_dirs[0]);
  cj_bundle_opts_free(&opts);
  cj_free(p);
  cujit_free(b);
}

/* The PTX a bundle carries is a plain target's, in either order of the targets: an
 * arch-specific (sm_90a) PTX runs only on its own GPU. */
static void ptx_is_of_a_plain_target(void **state) {
  static const char *const orders[2][2] = {{"sm_90a", "sm_90"}, {"sm_90", "sm_90a"}};
  int k;
  (void)state;
  for (k = 0; k < 2; k++) {
    void *b = NULL;
    size_t size = 0, n = 0;
    cj_bundle_part *p = NULL;
    char why[256];
    assert_ok(cujit_bundle_from_source(&b, &size, "__global__ void k(int *x) { x[0] = 1; }\n",
                                       "plain.cu", NULL, orders[k], 2));
    assert_int_equal(cj_bundle_parse(b, size, &p, &n, why, sizeof why), 0);
    assert_non_null(part(p, n, CJ_BE_PTX, "compute_90"));
    assert_null(part(p, n, CJ_BE_PTX, "compute_90a"));
    assert_non_null(part(p, n, CJ_BE_CUBIN, "sm_90a"));
    cj_free(p);
    cujit_free(b);
  }
}

/* A bundle loads as a module that lists its targets; the load needs a device. */
static void loads_as_a_module(void **state) {
  size_t size = 0;
  void *b = make_bundle(&size);
  cujit_module *m = NULL;
  char *text = NULL;
  (void)state;
  assert_ok(cujit_module_from_image(&m, b, size, NULL));
  assert_string_equal(cujit_module_name(m), "image.bundle");
  assert_string_equal(cujit_module_arch(m), "sm_80 sm_90 sm_100 compute_100");
  assert_null(cujit_module_loaded_as(m, 0)); /* nothing loaded yet */
  assert_null(cujit_module_loaded_as(NULL, 0));
  cujit_module_destroy(m);
  assert_ok(cujit_image_describe(b, size, "k.bundle", &text));
  assert_non_null(strstr(text, "cujit bundle (format 1)"));
  assert_non_null(strstr(text, "CUBIN        sm_90"));
  assert_non_null(strstr(text, "PTX          compute_100"));
  assert_non_null(strstr(text, "cache entry  sm_80"));
  assert_non_null(strstr(text, "-DOFFSET=1"));
  cujit_free(text);
  cujit_free(b);
}

/* The CLI writes the bundle and lists it. */
static void cli_writes_and_lists(void **state) {
  char cmd[8192], out[16384], path[4300];
  size_t size = 0, n = 0;
  unsigned char *b;
  cj_bundle_part *p = NULL;
  char why[256];
  (void)state;
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' compile k.cu --arch sm_80,sm_90 -DOFFSET=1 2>&1", tmp,
           CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  snprintf(path, sizeof path, "%s/k.bundle", tmp);
  assert_non_null(b = read_all(path, &size));
  assert_int_equal(cj_bundle_parse(b, size, &p, &n, why, sizeof why), 0);
  assert_non_null(part(p, n, CJ_BE_CUBIN, "sm_80"));
  assert_non_null(part(p, n, CJ_BE_CUBIN, "sm_90"));
  assert_non_null(part(p, n, CJ_BE_PTX, "compute_90"));
  cj_free(p);
  free(b);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' info k.bundle 2>&1", tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "k.bundle: cujit bundle (format 1)"));
  assert_non_null(strstr(out, "CUBIN        sm_80"));
  assert_non_null(strstr(out, "cache entry  sm_90"));
  assert_non_null(strstr(out, "options      name 'k.cu' directory '.' -DOFFSET=1"));
  /* the machine's setup, as before, without a file */
  snprintf(cmd, sizeof cmd, "'%s' info 2>&1", CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "cujit "));
  /* a damaged file is named with what is wrong */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && head -c 100 k.bundle > cut.bundle && '%s' info "
           "cut.bundle 2>&1",
           tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 1);
  assert_non_null(strstr(out, "'cut.bundle' is truncated: 100 bytes, but its header says"));
}

/* ---- damaged bundles ---- */

static void put(unsigned char *p, size_t at, uint64_t v, int bytes) {
  int i;
  for (i = 0; i < bytes; i++) p[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* Makes the header's checksum match the (changed) header and table again, for a bundle
 * of `size` bytes. */
static void reseal(unsigned char *b, size_t size) {
  uint64_t n = b[24] | (uint64_t)b[25] << 8 | (uint64_t)b[26] << 16 | (uint64_t)b[27] << 24;
  /* a count whose table runs past the end: the checksum cannot cover it, nor is it reached */
  if (n > (size - CJ_BUNDLE_HEADER_SIZE) / CJ_BUNDLE_ENTRY_SIZE) n = 0;
  put(b, 32, cj_checksum(b, 32, b + CJ_BUNDLE_HEADER_SIZE, (size_t)n * CJ_BUNDLE_ENTRY_SIZE), 8);
}

/* Expects the damaged bytes refused by the loader and the lister. */
static void refused_load(const unsigned char *b, size_t size, const char *needle) {
  cujit_module *m = (cujit_module *)1;
  char *text = (char *)1;
  assert_status_detail(cujit_module_from_image(&m, b, size, "d.bundle"), CUJIT_ERROR_INVALID_SOURCE,
                       needle);
  assert_null(m);
  assert_status_detail(cujit_image_describe(b, size, "d.bundle", &text), CUJIT_ERROR_INVALID_SOURCE,
                       needle);
  assert_null(text);
}

/* ... and by the warmer. */
static void refused(const unsigned char *b, size_t size, const char *needle) {
  refused_load(b, size, needle);
  assert_status_detail(cujit_bundle_warm(b, size, NULL), CUJIT_ERROR_INVALID_VALUE, needle);
}

static uint64_t entry_field(const unsigned char *b, size_t i, size_t at) {
  const unsigned char *e = b + CJ_BUNDLE_HEADER_SIZE + i * CJ_BUNDLE_ENTRY_SIZE + at;
  uint64_t v = 0;
  int k;
  for (k = 7; k >= 0; k--) v = v << 8 | e[k];
  return v;
}

/* Entry i's payload checksum, then the header's, made to match changed bytes. */
static void reseal_entry(unsigned char *b, size_t size, size_t i) {
  put(b, CJ_BUNDLE_HEADER_SIZE + i * CJ_BUNDLE_ENTRY_SIZE + 40,
      cj_checksum(b + entry_field(b, i, 24), entry_field(b, i, 32), "", 0), 8);
  reseal(b, size);
}

/* The index of the first entry of `kind`. */
static size_t entry_of(const unsigned char *b, uint32_t kind) {
  size_t i = 0;
  while ((uint32_t)entry_field(b, i, 0) != kind) i++;
  return i;
}

/* Entries whose checksums match but whose bytes or target are not what their kind must
 * be (a CUBIN or PTX the loader cannot take, a source that is not text, options of another
 * format): refused by every reader, warming included (whose blobs are intact), and the
 * loader too where it would not read the entry. */
static void payloads_refused(const unsigned char *good, size_t size, unsigned char *b) {
  size_t ptx = entry_of(good, CJ_BE_PTX), cubin = entry_field(good, 0, 24), i;
  char *at;
  memcpy(b, good, size);
  b[cubin] = 'X';
  reseal_entry(b, size, 0);
  refused(b, size, "has a CUBIN entry 0 (sm_80) that is not an ELF file");
  memcpy(b, good, size);
  b[cubin + 4] = 1; /* ELFCLASS32 */
  reseal_entry(b, size, 0);
  refused(b, size, "has a CUBIN entry 0 (sm_80) that is a 32-bit ELF file, but a CUBIN is 64-bit");
  memcpy(b, good, size);
  put(b, cubin + 0x12, 62, 2); /* a host object's machine */
  reseal_entry(b, size, 0);
  refused(b, size, "has a CUBIN entry 0 (sm_80) that is an ELF file for machine 62");
  memcpy(b, good, size);
  at = memmem(b + entry_field(good, ptx, 24), entry_field(good, ptx, 32), ".target", 7);
  assert_non_null(at);
  at[1] = 'T';
  reseal_entry(b, size, ptx);
  refused(b, size, "(compute_100) that is not PTX text (it has no .target line)");
  memcpy(b, good, size);
  memcpy(b + CJ_BUNDLE_HEADER_SIZE + 8, "sm_8x", 5);
  reseal(b, size);
  refused(b, size, "has a CUBIN entry 0 whose target 'sm_8x' is not sm_XX");
  memcpy(b, good, size);
  i = entry_of(good, CJ_BE_SOURCE);
  b[entry_field(good, i, 24) + 3] = '\0';
  reseal_entry(b, size, i);
  refused(b, size, "that is not text (it holds a NUL byte)");
  memcpy(b, good, size);
  i = entry_of(good, CJ_BE_OPTIONS);
  put(b, entry_field(good, i, 24), 9, 4);
  reseal_entry(b, size, i);
  refused(b, size, "has an options entry of another format (this cujit reads format 1)");
}

static void damaged_forms(void **state) {
  size_t size = 0, cut;
  unsigned char *good = make_bundle(&size), *b = malloc(size + 16);
  size_t e1 = CJ_BUNDLE_HEADER_SIZE + CJ_BUNDLE_ENTRY_SIZE;
  (void)state;
  /* truncated anywhere */
  for (cut = 8; cut < size; cut += cut < 200 ? 7 : 997) {
    memcpy(b, good, cut);
    refused(b, cut, cut < CJ_BUNDLE_HEADER_SIZE ? "is truncated (" : "is truncated:");
  }
  /* followed by more bytes */
  memcpy(b, good, size);
  memset(b + size, 0, 16);
  refused(b, size + 16, "is followed by other bytes");
  /* bad magic: then it is no bundle at all */
  memcpy(b, good, size);
  b[3] ^= 0xff;
  refused_load(b, size, "is neither PTX, a CUBIN, a fatbin nor a cujit bundle");
  assert_status_detail(cujit_bundle_warm(b, size, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "is not a cujit bundle (");
  /* another version, another header size */
  memcpy(b, good, size);
  put(b, 8, 7, 4);
  refused(b, size, "is in bundle format 7, but this cujit reads format 1");
  memcpy(b, good, size);
  put(b, 12, 64, 4);
  refused(b, size, "has a header of 64 bytes (expected 40)");
  /* a changed table without a matching checksum */
  memcpy(b, good, size);
  b[e1 + 8] = 'x';
  refused(b, size, "the checksum of its header and entry table does not match");
  /* a changed payload */
  memcpy(b, good, size);
  b[entry_field(good, 0, 24) + 100] ^= 1;
  refused(b, size, "entry 0 (CUBIN sm_80) does not match its checksum");
  /* huge counts */
  memcpy(b, good, size);
  put(b, 24, 0xffffffffu, 4);
  reseal(b, size);
  refused(b, size, "announces 4294967295 entries, more than its");
  memcpy(b, good, size);
  put(b, 24, (size - CJ_BUNDLE_HEADER_SIZE) / CJ_BUNDLE_ENTRY_SIZE + 1, 4);
  reseal(b, size);
  refused(b, size, "entries, more than its");
  /* offsets outside, inside the table, sizes past the end (wrapping) */
  memcpy(b, good, size);
  put(b, e1 + 24, size + 1, 8);
  reseal(b, size);
  refused(b, size, "has entry 1 (cache entry) at bytes");
  memcpy(b, good, size);
  put(b, e1 + 24, 0, 8);
  reseal(b, size);
  refused(b, size, "outside the payloads");
  memcpy(b, good, size);
  put(b, e1 + 32, UINT64_MAX - 8, 8);
  reseal(b, size);
  refused(b, size, "outside the payloads");
  /* two entries over the same bytes (the checksum matches: the same payload) */
  memcpy(b, good, size);
  memcpy(b + e1, b + CJ_BUNDLE_HEADER_SIZE, CJ_BUNDLE_ENTRY_SIZE);
  reseal(b, size);
  refused(b, size, "has overlapping entries");
  /* an unknown kind, an unterminated target */
  memcpy(b, good, size);
  put(b, e1, 99, 4);
  reseal(b, size);
  refused(b, size, "has entry 1 of unknown kind 99");
  memcpy(b, good, size);
  memset(b + e1 + 8, 'a', 16);
  reseal(b, size);
  refused(b, size, "has entry 1 whose target is not terminated");
  payloads_refused(good, size, b);
  free(b);
  cujit_free(good);
}

/* ---- warming a cache ---- */

/* In a child: compiles k.cu for `arch` as cujit compile would; exit 100 + NVRTC programs
 * made, 1 on failure. */
static int child_compile(const char *arch) {
  cujit_options o = base_options();
  cujit_module *m = NULL;
  uint64_t before = cj_nvrtc_programs_created();
  o.arch = arch;
  if (cujit_module_from_file(&m, src_path, &o) != CUJIT_OK) {
    fprintf(stderr, "child: %s\n", cujit_last_error());
    return 1;
  }
  cujit_module_destroy(m);
  return 100 + (int)(cj_nvrtc_programs_created() - before);
}

static void warm_then_hit_elsewhere(void **state) {
  size_t size = 0, stored = 0, i;
  void *b = make_bundle(&size);
  (void)state;
  /* the bundle was made in this cache: start from an empty one */
  drop_cache(cache);
  cache = fresh_cache("bundle-warm");
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  assert_ok(cujit_bundle_warm(b, size, &stored));
  assert_int_equal(stored, N_ARCHS);
  assert_int_equal(find_entries(cache, NULL, 0), N_ARCHS);
  for (i = 0; i < N_ARCHS; i++) {
    pid_t pid = spawn_child("compile", kArchs[i], -1);
    assert_int_equal(wait_child(pid), 100); /* no NVRTC program made */
  }
  /* a target that was not in the bundle still compiles */
  assert_int_equal(wait_child(spawn_child("compile", "sm_86", -1)), 101);
  cujit_free(b);
}

static void warm_with_the_cli(void **state) {
  char cmd[8192], out[16384];
  (void)state;
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' compile k.cu --arch sm_80,sm_90 -DOFFSET=1 -o w.bundle "
           "2>&1",
           tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  drop_cache(cache);
  cache = fresh_cache("bundle-cli");
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' warm --bundle w.bundle 2>&1", tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "w.bundle: stored 2 cache entries"));
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' compile k.cu --arch sm_90 -DOFFSET=1 -o - >/dev/null "
           "&& '%s' cache stats 2>&1",
           tmp, CUJIT_CLI_PATH, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "compiles          0"));
}

/* A header that differs here: that target's entry is refused naming it, none is stored. */
static void warm_refuses_what_differs(void **state) {
  size_t size = 0, stored = 9;
  void *b = make_bundle(&size);
  (void)state;
  drop_cache(cache);
  cache = fresh_cache("bundle-refuse");
  assert_int_equal(test_write_file(tmp, "factor.h", "#define FACTOR 4\n"), 0);
  assert_status_detail(cujit_bundle_warm(b, size, &stored), CUJIT_ERROR_INVALID_VALUE,
                       "0 of the bundle's 3 cache entries stored; the first refused: "
                       "cujit_module_import: the blob does not hold what this process would "
                       "compile");
  assert_non_null(strstr(cujit_last_error(), "factor.h' differs"));
  assert_int_equal(stored, 0);
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  assert_int_equal(test_write_file(tmp, "factor.h", "#define FACTOR 3\n"), 0);
  cujit_free(b);
}

/* A bundle without source cannot warm; a bundle of PTX only loads. */
static void bundles_without_source(void **state) {
  static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n";
  cj_bundle_part p = {CJ_BE_PTX, "compute_80", (const unsigned char *)ptx, sizeof ptx - 1};
  cj_buf b = {0};
  cujit_module *m = NULL;
  (void)state;
  assert_int_equal(cj_bundle_build(&p, 1, &b), 0);
  assert_status_detail(cujit_bundle_warm(b.data, b.len, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "the bundle holds no source, so it cannot warm a cache");
  assert_ok(cujit_module_from_image(&m, b.data, b.len, "p.bundle"));
  assert_string_equal(cujit_module_arch(m), "compute_80");
  cujit_module_destroy(m);
  cj_buf_free(&b);
  /* no CUBIN or PTX at all */
  p.kind = CJ_BE_SOURCE;
  p.arch[0] = '\0';
  assert_int_equal(cj_bundle_build(&p, 1, &b), 0);
  assert_status_detail(cujit_module_from_image(&m, b.data, b.len, "s.bundle"),
                       CUJIT_ERROR_INVALID_SOURCE,
                       "'s.bundle' is a cujit bundle with no CUBIN "
                       "or PTX entry");
  cj_buf_free(&b);
}

/* ---- the interface's refusals ---- */

static void api_refusals(void **state) {
  const char *dup[] = {"sm_80", "sm_80"}, *bad[] = {"sm_80", "gfx90a"}, *none[] = {NULL};
  const char *unknown_first[] = {"sm_12345", "sm_80"}, *unknown_last[] = {"sm_80", "sm_12345"};
  void *out = (void *)1;
  size_t size = 1;
  (void)state;
  assert_status_detail(cujit_bundle_from_source(NULL, &size, SOURCE, NULL, NULL, kArchs, 1),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_bundle_from_source: out is NULL");
  assert_status_detail(cujit_bundle_from_source(&out, &size, SOURCE, NULL, NULL, kArchs, 0),
                       CUJIT_ERROR_INVALID_VALUE, "no targets given");
  assert_null(out);
  assert_int_equal(size, 0);
  assert_status_detail(cujit_bundle_from_source(&out, &size, SOURCE, NULL, NULL, dup, 2),
                       CUJIT_ERROR_INVALID_OPTION, "target 'sm_80' is given twice");
  assert_status_detail(cujit_bundle_from_source(&out, &size, SOURCE, NULL, NULL, bad, 2),
                       CUJIT_ERROR_INVALID_OPTION, "target 'gfx90a' is not sm_XX or compute_XX");
  assert_status_detail(cujit_bundle_from_source(&out, &size, SOURCE, NULL, NULL, none, 1),
                       CUJIT_ERROR_INVALID_OPTION, "target 0 is NULL");
  assert_status_detail(cujit_bundle_from_file(&out, &size, "/nonexistent/k.cu", NULL, kArchs, 1),
                       CUJIT_ERROR_FILE, "cannot open '/nonexistent/k.cu'");
  assert_status_detail(cujit_bundle_warm(NULL, 0, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_bundle_warm: the bundle is NULL");
  assert_status_detail(cujit_image_describe("x", 1, NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "text is NULL");
  /* a compile error for one target fails the whole bundle with NVRTC's log */
  assert_status_detail(cujit_bundle_from_source(&out, &size, "__global__ void k() { oops; }",
                                                "bad.cu", NULL, kArchs, 2),
                       CUJIT_ERROR_COMPILE, "oops");
  assert_null(out);
  /* the targets compile at once; the failure told is the first in the order given, as if
   * they had compiled one after the other */
  assert_status_detail(cujit_bundle_from_source(&out, &size, SOURCE, NULL, NULL, unknown_first, 2),
                       CUJIT_ERROR_INVALID_OPTION, "invalid architecture 'sm_12345'");
  assert_status_detail(cujit_bundle_from_source(&out, &size, "__global__ void k() { oops; }",
                                                "bad.cu", NULL, unknown_last, 2),
                       CUJIT_ERROR_COMPILE, "oops");
  assert_null(out);
}

/* ---- nvcc's fatbins ---- */

static void nvcc_fatbin_listed(void **state) {
  char cmd[8192], out[16384], path[4300];
  unsigned char *fb;
  size_t size = 0;
  char *text = NULL;
  cujit_module *m = NULL;
  (void)state;
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    test_skip_part("listing an nvcc fatbin: nvcc is not on PATH");
    skip();
  }
  snprintf(path, sizeof path, "%s/n.fatbin", tmp);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && nvcc -fatbin -DOFFSET=1 -gencode arch=compute_80,code=sm_80 "
           "-gencode arch=compute_90,code=[sm_90,compute_90] -o n.fatbin k.cu 2>&1",
           tmp);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(fb = read_all(path, &size));
  assert_ok(cujit_image_describe(fb, size, path, &text));
  assert_non_null(strstr(text, "fatbin, "));
  assert_non_null(strstr(text, "3 CUBIN or PTX entries"));
  assert_non_null(strstr(text, "CUBIN        sm_80"));
  assert_non_null(strstr(text, "CUBIN        sm_90"));
  assert_non_null(strstr(text, "PTX          compute_90"));
  cujit_free(text);
  assert_ok(cujit_module_from_image(&m, fb, size, "n.fatbin"));
  assert_string_equal(cujit_module_arch(m), "sm_80 sm_90 compute_90");
  cujit_module_destroy(m);
  free(fb);
  /* compressed entries are listed as such, and through the CLI */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && nvcc -fatbin -Xfatbin=-compress-all -DOFFSET=1 "
           "-gencode arch=compute_80,code=sm_80 -o c.fatbin k.cu 2>&1 && '%s' info c.fatbin",
           tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "c.fatbin: fatbin, "));
  assert_non_null(strstr(out, "(compressed)"));
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(holds_every_target),     CACHE_TEST(ptx_is_of_a_plain_target),
      CACHE_TEST(loads_as_a_module),      CACHE_TEST(cli_writes_and_lists),
      CACHE_TEST(damaged_forms),          CACHE_TEST(warm_then_hit_elsewhere),
      CACHE_TEST(warm_with_the_cli),      CACHE_TEST(warm_refuses_what_differs),
      CACHE_TEST(bundles_without_source), CACHE_TEST(api_refusals),
      CACHE_TEST(nvcc_fatbin_listed),
  };
  int rc;
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (argc == 4 && strcmp(argv[1], "--child") == 0) { /* the parent's directory */
    snprintf(src_path, sizeof src_path, "%s/k.cu", getenv("CUJIT_TEST_BUNDLE_DIR"));
    return child_compile(argv[3]);
  }
  if (group_setup(NULL) != 0) return 1;
  setenv("CUJIT_TEST_BUNDLE_DIR", tmp, 1);
  rc = test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
  group_teardown(NULL);
  return rc;
}

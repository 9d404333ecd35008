/* test_cache_format - the cache entry format: a golden entry in tests/data pins the layout
 * (reading it gives the expected image; writing the same image gives the same bytes), and
 * damaged or hostile entries are rejected without crashing or allocating what their
 * lengths claim. To regenerate the golden file after a deliberate format change (which
 * must also raise CJ_CACHE_FORMAT), run with CUJIT_UPDATE_GOLDEN=1. */
#include "testutil.h"
#include "cache/cache.h"
#include "compile/symbols.h"

#define GOLDEN CUJIT_TEST_DATA "/cache_entry_v3.bin"
#define GOLDEN_V1 CUJIT_TEST_DATA "/cache_entry_v1.bin" /* the format before manifests */
#define GOLDEN_V2 CUJIT_TEST_DATA "/cache_entry_v2.bin" /* before the index and padding */

static const char kPtx[] = "//\n// golden\n//\n.version 8.0\n.target sm_90\n.address_size 64\n"
                           ".global .align 4 .u32 counter;\n"
                           ".visible .entry fill(\n"
                           "\t.param .u64 fill_param_0,\n"
                           "\t.param .align 16 .b8 fill_param_1[16],\n"
                           "\t.param .u8 fill_param_2\n"
                           ")\n{\n\tret;\n}\n";
static const unsigned char kCubin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xde, 0xad, 0xbe, 0xef};
static const char kHeaderText[] = "#define GOLDEN 1\n";
/* The entry format keeps a manifest as bytes it does not interpret (manifest.c's own tests
 * are in test_explain): any bytes pin the layout. */
static const char kManifest[] = "manifest bytes";

/* The image, deps and metadata the golden entry holds. */
typedef struct golden {
  cj_image im;
  char *exprs[2], *lowered[2];
  cj_deps deps;
  cj_dep dep;
  cj_entry_meta meta;
  cj_key key;
  cj_buf manifest;
} golden;

static void make_golden(golden *g) {
  size_t i;
  memset(g, 0, sizeof *g);
  g->im.ptx = (char *)kPtx;
  g->im.ptx_size = strlen(kPtx);
  g->im.cubin = (unsigned char *)kCubin;
  g->im.cubin_size = sizeof kCubin;
  g->im.log = (char *)"golden.cu(3): warning: a warning\n";
  strcpy(g->im.arch, "sm_90");
  g->exprs[0] = (char *)"fill<float>";
  g->lowered[0] = (char *)"_Z4fillIfEvPT_S0_";
  g->exprs[1] = (char *)"fill<int>";
  g->lowered[1] = (char *)"_Z4fillIiEvPT_S0_";
  g->im.n_names = 2;
  g->im.name_exprs = g->exprs;
  g->im.lowered = g->lowered;
  g->dep.path = (char *)"include/golden.h";
  g->dep.present = 1;
  g->dep.size = strlen(kHeaderText);
  cj_hash128(kHeaderText, strlen(kHeaderText), g->dep.hash);
  g->deps.v = &g->dep;
  g->deps.n = 1;
  snprintf(g->meta.name, sizeof g->meta.name, "golden.cu");
  g->meta.nvrtc_major = 13;
  g->meta.nvrtc_minor = 0;
  for (i = 0; i < sizeof g->key.b; i++) g->key.b[i] = (unsigned char)(0xa0 + i);
  g->manifest.data = (char *)kManifest;
  g->manifest.len = strlen(kManifest);
}

static unsigned char *read_file(const char *path, size_t *n) {
  static unsigned char buf[4096];
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  *n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

static unsigned char *read_golden(size_t *n) { return read_file(GOLDEN, n); }

static void writer_reproduces_golden(void **state) {
  golden g;
  cj_buf b = {0};
  size_t n;
  unsigned char *want;
  (void)state;
  make_golden(&g);
  assert_int_equal(cj_entry_encode(&g.key, &g.im, &g.deps, &g.meta, &g.manifest, &b), 0);
  if (getenv("CUJIT_UPDATE_GOLDEN")) {
    FILE *f = fopen(GOLDEN, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    fclose(f);
  }
  want = read_golden(&n);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, want, n);
  /* the layout the format's comment describes */
  assert_memory_equal(want, "CUJITKC\x1a", 8);
  assert_int_equal(want[8], CJ_CACHE_FORMAT);
  assert_int_equal(want[12], CJ_ENTRY_HEADER_SIZE);
  assert_memory_equal(want + 16, g.key.b, 16);
  assert_memory_equal(want + 64, "META", 4);
  assert_int_equal(want[48], strlen(kManifest));
  assert_memory_equal(want + n - strlen(kManifest), kManifest, strlen(kManifest));
  cj_buf_free(&b);
}

static void reader_understands_golden(void **state) {
  golden g;
  cj_image *im = NULL;
  cj_deps deps = {0};
  cj_entry_meta meta;
  char why[160] = "";
  size_t n;
  unsigned char *data = read_golden(&n);
  (void)state;
  make_golden(&g);
  if (cj_entry_decode(&g.key, data, n, &im, &deps, &meta, why, sizeof why) != 0)
    fail_msg("the golden entry does not decode: %s", why);
  assert_string_equal(im->ptx, kPtx);
  assert_int_equal(im->ptx_size, strlen(kPtx));
  assert_int_equal(im->cubin_size, sizeof kCubin);
  assert_memory_equal(im->cubin, kCubin, sizeof kCubin);
  assert_string_equal(im->log, g.im.log);
  assert_string_equal(im->arch, "sm_90");
  assert_int_equal(im->n_names, 2);
  assert_string_equal(im->name_exprs[1], "fill<int>");
  assert_string_equal(im->lowered[1], "_Z4fillIiEvPT_S0_");
  assert_true(cj_deplist_same_files(&deps, &g.deps));
  assert_string_equal(meta.name, "golden.cu");
  assert_int_equal(meta.nvrtc_major, 13);
  /* the index read from the PTX when it was written */
  assert_non_null(im->index);
  assert_int_equal(im->index->n_kernels, 1);
  assert_string_equal(im->index->kernels[0].name, "fill");
  assert_ptr_equal(im->index->kernel_names[0], im->index->kernels[0].name);
  assert_true(im->index->kernels[0].params_known);
  assert_int_equal(im->index->kernels[0].nparams, 3);
  assert_int_equal(im->index->kernels[0].params[1].offset, 16);
  assert_int_equal(im->index->kernels[0].params[1].size, 16);
  assert_int_equal(im->index->kernels[0].params[1].align, 16);
  assert_true(im->index->kernels[0].params[1].array);
  assert_int_equal(im->index->kernels[0].params[2].offset, 32);
  assert_int_equal(im->index->n_globals, 1);
  assert_string_equal(im->index->globals[0], "counter");
  cj_image_unref(im);
  cj_deplist_clear(&deps);
  /* a listing reads the start only */
  {
    cj_key k;
    assert_int_equal(cj_entry_peek(data, 200, &k, &meta), 0);
    assert_string_equal(meta.arch, "sm_90");
    assert_memory_equal(k.b, g.key.b, 16);
  }
  /* the manifest is found by its span and checked by its own checksum */
  {
    uint64_t at, size;
    assert_int_equal(cj_entry_manifest_span(data, n, &at, &size), 0);
    assert_int_equal(size, strlen(kManifest));
    assert_memory_equal(data + at, kManifest, size);
    assert_int_equal(cj_entry_manifest_check(data, data + at, (size_t)size), 0);
    assert_int_equal(cj_entry_manifest_check(data, data + at, (size_t)size - 1), 1);
    assert_int_equal(cj_entry_manifest_span(data, n - 1, &at, &size), 1);
  }
}

/* An entry of an older format (before manifests; before the index) is not an entry: a
 * miss with the reason, which the next write replaces. */
static void old_format_is_a_miss(void **state) {
  static const char *const files[] = {GOLDEN_V1, GOLDEN_V2};
  golden g;
  cj_entry_meta meta;
  cj_key k;
  uint64_t at, size;
  size_t n, i;
  (void)state;
  make_golden(&g);
  for (i = 0; i < 2; i++) {
    cj_image *im = (cj_image *)1;
    cj_deps deps = {0};
    char why[160] = "", format[32];
    unsigned char *data = read_file(files[i], &n);
    assert_int_equal(cj_entry_decode(&g.key, data, n, &im, &deps, &meta, why, sizeof why), 1);
    assert_null(im);
    snprintf(format, sizeof format, "cache format %zu", i + 1);
    if (!strstr(why, format)) fail_msg("reason \"%s\" lacks \"%s\"", why, format);
    assert_int_equal(cj_entry_peek(data, n, &k, &meta), 1);
    assert_int_equal(cj_entry_manifest_span(data, n, &at, &size), 1);
  }
}

/* A hit uses the bytes it read in place: the image's PTX, CUBIN and log are views into
 * them (aligned, each text ending in a NUL), freed with the image; a bad entry leaves them
 * to the caller. */
static void owned_decode_reads_in_place(void **state) {
  golden g;
  cj_image *im = NULL;
  cj_deps deps = {0};
  cj_entry_meta meta;
  char why[160] = "";
  size_t n;
  const unsigned char *good = read_golden(&n);
  unsigned char *data = malloc(n);
  (void)state;
  make_golden(&g);
  assert_non_null(data);
  memcpy(data, good, n);
  assert_int_equal(cj_entry_decode_owned(&g.key, data, n, &im, &deps, &meta, why, sizeof why), 0);
  assert_ptr_equal(im->block, data);
  assert_int_equal(im->block_size, n);
  assert_true((unsigned char *)im->ptx > data && (unsigned char *)im->ptx < data + n);
  assert_true(im->cubin > data && im->cubin < data + n);
  assert_int_equal((uintptr_t)im->cubin % 16, 0);
  assert_string_equal(im->ptx, kPtx);
  assert_memory_equal(im->cubin, kCubin, sizeof kCubin);
  assert_string_equal(im->log, g.im.log);
  assert_non_null(im->index);
  assert_true(cj_image_bytes(im) >= n);
  cj_image_unref(im); /* frees data */
  cj_deplist_clear(&deps);
  data = malloc(n);
  assert_non_null(data);
  memcpy(data, good, n);
  data[n - strlen(kManifest) - 1] ^= 1;
  im = (cj_image *)1;
  assert_int_equal(cj_entry_decode_owned(&g.key, data, n, &im, &deps, &meta, why, sizeof why), 1);
  assert_null(im);
  free(data); /* still the caller's */
}

/* Decodes `data` expecting a rejection whose reason contains `why_part`. */
static void rejected(const unsigned char *data, size_t n, const cj_key *key, const char *why_part) {
  cj_image *im = (cj_image *)1;
  cj_deps deps = {0};
  cj_entry_meta meta;
  char why[160] = "";
  assert_int_equal(cj_entry_decode(key, data, n, &im, &deps, &meta, why, sizeof why), 1);
  assert_null(im);
  assert_int_equal(deps.n, 0);
  if (!strstr(why, why_part)) fail_msg("reason \"%s\" lacks \"%s\"", why, why_part);
}

/* Rewrites the payload's checksum (the payload being what is left before the manifest the
 * header names) so that only the structure can reject the entry. */
static void reseal(unsigned char *d, size_t n) {
  uint64_t msize = 0, sum;
  int i;
  for (i = 0; i < 8; i++) msize |= (uint64_t)d[48 + i] << (8 * i);
  sum = cj_checksum(d, 40, d + 64, n - 64 - msize);
  for (i = 0; i < 8; i++) d[40 + i] = (unsigned char)(sum >> (8 * i));
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  int i;
  for (i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Offset of section `tag` in an entry. */
static size_t section_at(const unsigned char *d, size_t n, const char *tag) {
  size_t at = 64;
  while (at + 16 <= n) {
    uint64_t len = 0;
    int i;
    if (memcmp(d + at, tag, 4) == 0) return at;
    for (i = 0; i < 8; i++) len |= (uint64_t)d[at + 8 + (size_t)i] << (8 * i);
    at += 16 + (size_t)len + (16 - (size_t)len % 16); /* the bytes, then 1 to 16 zeros */
  }
  fail_msg("no section %s", tag);
  return 0;
}

static void damaged_entries_are_rejected(void **state) {
  static unsigned char d[4096];
  golden g;
  cj_key other;
  size_t n, at;
  unsigned char *good = read_golden(&n);
  (void)state;
  make_golden(&g);
  other = g.key;
  other.b[0] ^= 1;
  rejected(good, 0, &g.key, "is empty");
  rejected(good, 63, &g.key, "is not a cujit cache entry");
  rejected(good, n - 1, &g.key, "truncated");
  rejected(good, n, &other, "another key");
  memcpy(d, good, n);
  d[n - strlen(kManifest) - 1] ^= 1; /* the payload's last byte */
  rejected(d, n, &g.key, "checksum");
  memcpy(d, good, n);
  d[8] = 4;
  rejected(d, n, &g.key, "cache format 4");
  memcpy(d, good, n);
  d[12] = 48;
  rejected(d, n, &g.key, "header of 48 bytes");
  /* a manifest size that does not fit what is there */
  memcpy(d, good, n);
  put_le(d + 48, n, 8);
  rejected(d, n, &g.key, "truncated");
  memcpy(d, good, n);
  put_le(d + 48, (uint64_t)-1, 8);
  rejected(d, n, &g.key, "truncated");
  /* a damaged manifest leaves the image alone: a hit does not read it */
  {
    cj_image *im = NULL;
    cj_deps deps = {0};
    cj_entry_meta meta;
    char why[160];
    uint64_t manifest_at, size;
    memcpy(d, good, n);
    d[n - 1] ^= 1;
    assert_int_equal(cj_entry_decode(&g.key, d, n, &im, &deps, &meta, why, sizeof why), 0);
    cj_image_unref(im);
    cj_deplist_clear(&deps);
    assert_int_equal(cj_entry_manifest_span(d, n, &manifest_at, &size), 0);
    assert_int_equal(cj_entry_manifest_check(d, d + manifest_at, (size_t)size), 1);
  }
  /* lengths that claim more than the file holds, with a valid checksum */
  memcpy(d, good, n);
  put_le(d + section_at(d, n, "PTX ") + 8, (uint64_t)1 << 62, 8);
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  memcpy(d, good, n);
  at = section_at(d, n, "NAME");
  put_le(d + at + 16, 0xffffffffu, 4); /* four billion names */
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  memcpy(d, good, n);
  at = section_at(d, n, "NAME");
  put_le(d + at + 20, 0xfffffff0u, 4); /* the first name's length */
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  memcpy(d, good, n);
  at = section_at(d, n, "DEPS");
  put_le(d + at + 16, 0x7fffffffu, 4);
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  memcpy(d, good, n);
  at = section_at(d, n, "ARCH");
  memcpy(d + at, "ARCX", 4); /* sections out of order or unknown */
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  /* padding that is not zeros */
  memcpy(d, good, n);
  at = section_at(d, n, "ARCH");
  d[at + 16 + 5] = 'x'; /* "sm_90" and its first padding byte */
  reseal(d, n);
  rejected(d, n, &g.key, "malformed");
  /* an index that claims more than it holds, or parameters no kernel can have */
  {
    static const struct {
      size_t at; /* in SYMS's bytes */
      uint32_t v;
    } bad[] = {
        {4, 0x10000000u},  /* kernels */
        {8, 0x10000000u},  /* variables */
        {12, 0x10000000u}, /* parameters in all */
        {12, 2},           /* ... fewer than the kernels have */
        {16, 0x7fffffffu}, /* bytes of symbols */
        {16, 12},          /* ... fewer than the symbols take */
        {20, 0xfffffff0u}, /* the kernel's name's length */
        {20, 0},           /* an empty name */
        {28, 2},           /* "parameters read" neither 0 nor 1 */
        {32, 0x01000000u}, /* its parameters */
        {36, 4},           /* the first parameter's offset: unaligned */
        {40, 0},           /* its size */
        {44, 3},           /* its alignment: not a power of two */
        {48, 2},           /* "an aggregate" neither 0 nor 1 */
        {52, 0},           /* the second overlaps the first */
    };
    size_t i;
    for (i = 0; i < CJ_COUNT(bad); i++) {
      memcpy(d, good, n);
      at = section_at(d, n, "SYMS") + 16;
      put_le(d + at + bad[i].at, bad[i].v, 4);
      reseal(d, n);
      rejected(d, n, &g.key, "malformed");
    }
  }
  /* an index of another version is not used: the PTX is read instead */
  {
    cj_image *im = NULL;
    cj_deps deps = {0};
    cj_entry_meta meta;
    char why[160];
    memcpy(d, good, n);
    put_le(d + section_at(d, n, "SYMS") + 16, CJ_PTX_INDEX_VERSION + 1, 4);
    reseal(d, n);
    assert_int_equal(cj_entry_decode(&g.key, d, n, &im, &deps, &meta, why, sizeof why), 0);
    assert_null(im->index);
    assert_string_equal(im->ptx, kPtx);
    cj_image_unref(im);
    cj_deplist_clear(&deps);
  }
  /* every truncation of the payload, resealed with a consistent size */
  for (at = 64; at < n - strlen(kManifest); at++) {
    memcpy(d, good, at);
    put_le(d + 32, at - 64, 8);
    put_le(d + 48, 0, 8);
    reseal(d, at);
    rejected(d, at, &g.key, "malformed");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(writer_reproduces_golden),     cmocka_unit_test(reader_understands_golden),
      cmocka_unit_test(damaged_entries_are_rejected), cmocka_unit_test(old_format_is_a_miss),
      cmocka_unit_test(owned_decode_reads_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gpu_array_scan - scans on a GPU against host references: inclusive and exclusive
 * cumsum of i32, i64, f32 and f64 at sizes 0, 1, 31 and 1000003 (and sizes around the
 * tiles and chunks the scan cuts the array into); the result types of narrow inputs; a
 * max-scan and an order-sensitive (non-commutative) scan through the generator; scans in
 * place; the pool's memory given back; and a cumsum of 2^31 + 17 int8 ones into i64, whose
 * last elements must equal their index + 1 (the 64-bit index path). */
#include "testutil.h"
#include "cujit_array.h"

static const int64_t kSizes[] = {0, 1, 31, 1000003};

/* Small values, negative ones too, so that float sums stay exact (below 2^24). */
static int value_at(int64_t i) { return (int)((uint64_t)(i * 2654435761u) % 7) - 3; }

static cujit_array *input(cujit_type type, int64_t n) {
  size_t es = cujit_type_size(type);
  unsigned char *host = malloc((size_t)n * es + 1);
  cujit_array *a = NULL;
  int64_t i;
  for (i = 0; i < n; i++) {
    int v = value_at(i);
    if (type == CUJIT_TYPE_I32) ((int32_t *)host)[i] = v;
    if (type == CUJIT_TYPE_I64) ((int64_t *)host)[i] = v;
    if (type == CUJIT_TYPE_F32) ((float *)host)[i] = (float)v;
    if (type == CUJIT_TYPE_F64) ((double *)host)[i] = v;
  }
  assert_ok(cujit_array_from_host(&a, type, 1, &n, host));
  free(host);
  return a;
}

/* Element i of the result (i64 or a float type) as a double. */
static double element(const void *host, cujit_type type, int64_t i) {
  switch (type) {
    case CUJIT_TYPE_I64: return (double)((const int64_t *)host)[i];
    case CUJIT_TYPE_F32: return ((const float *)host)[i];
    default: return ((const double *)host)[i];
  }
}

/* cumsum of value_at over n elements, checked element by element (exact: small integers). */
static void check_cumsum(cujit_array *out, cujit_type type, int64_t n, int exclusive,
                         const char *what) {
  void *host = malloc((size_t)n * 8 + 1);
  int64_t i, sum = 0;
  assert_int_equal(cujit_array_type(out), type);
  assert_int_equal(cujit_array_ndim(out), 1);
  assert_int_equal(cujit_array_size(out), n);
  assert_ok(cujit_array_read(out, host, cujit_array_nbytes(out)));
  for (i = 0; i < n; i++) {
    int64_t want = exclusive ? sum : sum + value_at(i);
    sum += value_at(i);
    if (element(host, type, i) != (double)want)
      fail_msg("%s, n %lld: element %lld is %g, wanted %lld", what, (long long)n, (long long)i,
               element(host, type, i), (long long)want);
  }
  free(host);
}

static void cumsum_against_host(void **state) {
  static const struct {
    cujit_type in, out;
  } types[] = {{CUJIT_TYPE_I32, CUJIT_TYPE_I64},
               {CUJIT_TYPE_I64, CUJIT_TYPE_I64},
               {CUJIT_TYPE_F32, CUJIT_TYPE_F32},
               {CUJIT_TYPE_F64, CUJIT_TYPE_F64}};
  size_t t, s;
  int exclusive;
  (void)state;
  for (t = 0; t < 4; t++)
    for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++)
      for (exclusive = 0; exclusive < 2; exclusive++) {
        cujit_array *a = input(types[t].in, kSizes[s]), *out = NULL;
        char what[64];
        snprintf(what, sizeof what, "type %d, %s", types[t].in,
                 exclusive ? "exclusive" : "inclusive");
        assert_ok(cujit_array_cumsum(a, exclusive, &out));
        check_cumsum(out, types[t].out, kSizes[s], exclusive, what);
        cujit_array_destroy(out);
        cujit_array_destroy(a);
      }
}

/* Around one block's tile (2048 elements of 4 bytes), several tiles per chunk (beyond
 * 2048 tiles), and a 2-D input (scanned in C order). */
static void sizes_around_tiles_and_chunks(void **state) {
  static const int64_t sizes[] = {2,    33,   255,  256,  257,   2047,
                                  2048, 2049, 4097, 8191, 65537, 2048 * 2048 * 2 + 5};
  int64_t shape[] = {3, 1000};
  cujit_array *a, *out;
  size_t s;
  int exclusive;
  (void)state;
  for (s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (exclusive = 0; exclusive < 2; exclusive++) {
      a = input(CUJIT_TYPE_I32, sizes[s]);
      out = NULL;
      assert_ok(cujit_array_cumsum(a, exclusive, &out));
      check_cumsum(out, CUJIT_TYPE_I64, sizes[s], exclusive, "sizes");
      cujit_array_destroy(out);
      cujit_array_destroy(a);
    }
  a = input(CUJIT_TYPE_F64, 3000);
  assert_ok(cujit_array_reshape(a, 2, shape, &out));
  cujit_array_destroy(a);
  a = NULL;
  assert_ok(cujit_array_cumsum(out, 0, &a));
  check_cumsum(a, CUJIT_TYPE_F64, 3000, 0, "2-D");
  cujit_array_destroy(out);
  cujit_array_destroy(a);
}

/* bool and narrow integers sum into 64 bits: no overflow of the input type. */
static void narrow_types_widen(void **state) {
  int64_t n = 100000, i;
  unsigned char *ones = malloc((size_t)n);
  int64_t *got = malloc((size_t)n * 8);
  cujit_array *b = NULL, *u = NULL, *bs = NULL, *us = NULL;
  (void)state;
  memset(ones, 1, (size_t)n);
  assert_ok(cujit_array_from_host(&b, CUJIT_TYPE_BOOL, 1, &n, ones));
  memset(ones, 200, (size_t)n);
  assert_ok(cujit_array_from_host(&u, CUJIT_TYPE_U8, 1, &n, ones));
  assert_ok(cujit_array_cumsum(b, 0, &bs));
  assert_ok(cujit_array_cumsum(u, 1, &us));
  assert_int_equal(cujit_array_type(bs), CUJIT_TYPE_I64);
  assert_int_equal(cujit_array_type(us), CUJIT_TYPE_U64);
  assert_ok(cujit_array_read(bs, got, (size_t)n * 8));
  for (i = 0; i < n; i++) assert_int_equal(got[i], i + 1);
  assert_ok(cujit_array_read(us, got, (size_t)n * 8));
  for (i = 0; i < n; i++) assert_int_equal(got[i], 200 * i);
  cujit_array_destroy(b);
  cujit_array_destroy(u);
  cujit_array_destroy(bs);
  cujit_array_destroy(us);
  free(ones);
  free(got);
}

static void max_scan(void **state) {
  int64_t n = 1000003, i;
  int32_t *host = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
  cujit_scan *inc = NULL, *exc = NULL;
  cujit_array *a = NULL, *out = NULL;
  cujit_generator_options o = {0};
  int32_t run;
  (void)state;
  for (i = 0; i < n; i++) host[i] = (int32_t)((uint64_t)(i * 2654435761u) % 1000003) - 500000;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_I32, 1, &n, host));
  o.preamble = "__device__ int larger(int a, int b) { return a > b ? a : b; }";
  o.name = "running_max";
  assert_ok(cujit_scan_create(&inc, CUJIT_TYPE_I32, "larger(a, b)", "(-2147483647 - 1)", 0, &o));
  assert_ok(cujit_scan_create(&exc, CUJIT_TYPE_I32, "a > b ? a : b", "(-2147483647 - 1)", 1, NULL));
  assert_ok(cujit_scan_call(inc, a, &out));
  assert_ok(cujit_array_read(out, got, (size_t)n * 4));
  for (i = 0, run = INT32_MIN; i < n; i++) {
    run = host[i] > run ? host[i] : run;
    if (got[i] != run)
      fail_msg("inclusive: element %lld is %d, wanted %d", (long long)i, got[i], run);
  }
  assert_ok(cujit_scan_call(exc, a, &out));
  assert_ok(cujit_array_read(out, got, (size_t)n * 4));
  for (i = 0, run = INT32_MIN; i < n; i++) {
    if (got[i] != run)
      fail_msg("exclusive: element %lld is %d, wanted %d", (long long)i, got[i], run);
    run = host[i] > run ? host[i] : run;
  }
  cujit_scan_destroy(inc);
  cujit_scan_destroy(exc);
  cujit_array_destroy(a);
  cujit_array_destroy(out);
  free(host);
  free(got);
}

/* Affine maps x -> m x + c (mod 2^32) packed as m << 32 | c, composed left to right: an
 * associative operator that is not commutative, so any reordering shows. */
static uint64_t compose(uint64_t f, uint64_t g) {
  uint32_t m = (uint32_t)(g >> 32) * (uint32_t)(f >> 32);
  uint32_t c = (uint32_t)(g >> 32) * (uint32_t)f + (uint32_t)g;
  return (uint64_t)m << 32 | c;
}

static void order_is_kept(void **state) {
  static const int64_t sizes[] = {1, 1000, 1000003, 2048 * 1024 * 3 + 7};
  cujit_generator_options o = {0};
  cujit_scan *s[2] = {NULL, NULL};
  size_t k;
  int exclusive;
  (void)state;
  o.preamble = "__device__ unsigned long long compose(unsigned long long f, unsigned long "
               "long g) {\n  unsigned m = (unsigned)(g >> 32) * (unsigned)(f >> 32);\n"
               "  unsigned c = (unsigned)(g >> 32) * (unsigned)f + (unsigned)g;\n"
               "  return (unsigned long long)m << 32 | c;\n}\n";
  o.name = "affine";
  for (exclusive = 0; exclusive < 2; exclusive++)
    assert_ok(cujit_scan_create(&s[exclusive], CUJIT_TYPE_U64, "compose(a, b)", "1ull << 32",
                                exclusive, &o));
  for (k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    int64_t n = sizes[k], i;
    uint64_t *host = malloc((size_t)n * 8), *got = malloc((size_t)n * 8), run;
    cujit_array *a = NULL, *out = NULL;
    for (i = 0; i < n; i++)
      host[i] = (uint64_t)((uint32_t)(i * 2654435761u) | 1u) << 32 | (uint32_t)(i * 40503u + 7);
    assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_U64, 1, &n, host));
    for (exclusive = 0; exclusive < 2; exclusive++) {
      assert_ok(cujit_scan_call(s[exclusive], a, &out));
      assert_ok(cujit_array_read(out, got, (size_t)n * 8));
      for (i = 0, run = (uint64_t)1 << 32; i < n; i++) {
        uint64_t want = exclusive ? run : compose(run, host[i]);
        run = compose(run, host[i]);
        if (got[i] != want)
          fail_msg("n %lld, %s: element %lld differs", (long long)n,
                   exclusive ? "exclusive" : "inclusive", (long long)i);
      }
    }
    cujit_array_destroy(a);
    cujit_array_destroy(out);
    free(host);
    free(got);
  }
  cujit_scan_destroy(s[0]);
  cujit_scan_destroy(s[1]);
}

/* out == in, for cumsum and for a generated scan, over several chunks. */
static void in_place(void **state) {
  int64_t n = 1000003;
  cujit_array *a, *f, *same;
  cujit_scan *s = NULL;
  size_t before, after;
  (void)state;
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_pool_get_usage(&before, NULL));
  a = input(CUJIT_TYPE_I64, n);
  f = input(CUJIT_TYPE_F32, n);
  same = a;
  assert_ok(cujit_array_cumsum(a, 0, &same));
  assert_true(same == a);
  check_cumsum(a, CUJIT_TYPE_I64, n, 0, "cumsum in place");
  assert_ok(cujit_scan_create(&s, CUJIT_TYPE_F32, "a + b", "0", 1, NULL));
  same = f;
  assert_ok(cujit_scan_call(s, f, &same));
  assert_true(same == f);
  check_cumsum(f, CUJIT_TYPE_F32, n, 1, "scan in place");
  cujit_scan_destroy(s);
  cujit_array_destroy(a);
  cujit_array_destroy(f);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_pool_get_usage(&after, NULL));
  assert_int_equal(after, before); /* the partial sums went back to the pool */
}

/* 2^31 + 17 int8 ones: their cumsum (i64) reaches past 2^31 elements and values. */
static void beyond_two_to_the_31(void **state) {
  int64_t n = ((int64_t)1 << 31) + 17, t[64], i;
  cujit_array *a = NULL, *out = NULL, *tail = NULL;
  signed char one = 1;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &n, &one));
  assert_ok(cujit_array_cumsum(a, 0, &out));
  cujit_array_destroy(a);
  assert_ok(cujit_array_view(out, n - 64, n, &tail));
  assert_ok(cujit_array_read(tail, t, sizeof t));
  for (i = 0; i < 64; i++) assert_int_equal(t[i], n - 64 + i + 1);
  cujit_array_destroy(tail);
  tail = NULL;
  /* the 32 before 2^31 and the 17 from it on (the array ends at 2^31 + 17) */
  assert_ok(cujit_array_view(out, ((int64_t)1 << 31) - 32, n, &tail));
  assert_ok(cujit_array_read(tail, t, 49 * sizeof *t));
  for (i = 0; i < 49; i++) assert_int_equal(t[i], ((int64_t)1 << 31) - 32 + i + 1);
  cujit_array_destroy(tail);
  cujit_array_destroy(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cumsum_against_host),  cmocka_unit_test(sizes_around_tiles_and_chunks),
      cmocka_unit_test(narrow_types_widen),   cmocka_unit_test(max_scan),
      cmocka_unit_test(order_is_kept),        cmocka_unit_test(in_place),
      cmocka_unit_test(beyond_two_to_the_31),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

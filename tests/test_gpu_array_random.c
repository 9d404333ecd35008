/* test_gpu_array_random - random arrays on a GPU: uniform and normal, f32 and f64, equal
 * bit for bit to the host reference (philoxref.h) for the first 1000 elements and for
 * elements far into a large array; the same seed gives the same elements whatever the
 * array's size or shape (hence its grid); other seeds give other numbers; uniform numbers
 * lie in [0, 1); the moments of 10^7 samples are those of the distribution; bad shapes are
 * refused; cujit_array_random_host() gives the same numbers. */
#include "testutil.h"
#include "cujit_array.h"

#include "philoxref.h"

static const cujit_type kTypes[] = {CUJIT_TYPE_F32, CUJIT_TYPE_F64};
static const cujit_distribution kDists[] = {CUJIT_RANDOM_UNIFORM, CUJIT_RANDOM_NORMAL};

/* n elements as doubles. */
static double *fetch(cujit_array *a) {
  int64_t n = cujit_array_size(a), i;
  double *v = malloc((size_t)n * sizeof *v + 1);
  if (cujit_array_type(a) == CUJIT_TYPE_F64) {
    assert_ok(cujit_array_read(a, v, (size_t)n * sizeof *v));
  } else {
    float *f = malloc((size_t)n * sizeof *f + 1);
    assert_ok(cujit_array_read(a, f, (size_t)n * sizeof *f));
    for (i = 0; i < n; i++) v[i] = f[i];
    free(f);
  }
  return v;
}

static double *make(cujit_type type, cujit_distribution dist, int64_t n, uint64_t seed) {
  cujit_array *a = NULL;
  double *v;
  assert_ok(cujit_array_random(&a, type, 1, &n, dist, seed));
  assert_int_equal(cujit_array_type(a), type);
  assert_int_equal(cujit_array_size(a), n);
  v = fetch(a);
  cujit_array_destroy(a);
  return v;
}

/* Bit for bit (as doubles, exact for floats) against the host, from element `from`. */
static void compare(const double *got, int64_t from, int64_t count, int f64, int normal,
                    uint64_t seed) {
  int64_t i;
  for (i = 0; i < count; i++) {
    double want = ref_random(f64, normal, seed, (uint64_t)(from + i));
    if (memcmp(&got[i], &want, sizeof want) != 0)
      fail_msg("%s %s, seed %llu: element %lld is %.17g, the reference %.17g", f64 ? "f64" : "f32",
               normal ? "normal" : "uniform", (unsigned long long)seed, (long long)(from + i),
               got[i], want);
  }
}

static void equal_to_the_host_reference(void **state) {
  static const uint64_t seeds[] = {0, 12345, 0xfedcba9876543210ull};
  size_t t, d, s;
  (void)state;
  ref_init();
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++)
      for (s = 0; s < 3; s++) {
        double *v = make(kTypes[t], kDists[d], 1000, seeds[s]);
        compare(v, 0, 1000, (int)t, (int)d, seeds[s]);
        free(v);
      }
}

/* The end of a 10^7-element array: counters well past the first grid's. */
static void far_elements_too(void **state) {
  int64_t n = 10000000;
  size_t t, d;
  (void)state;
  ref_init();
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      double *v = make(kTypes[t], kDists[d], n, 99);
      compare(v + n - 1001, n - 1001, 1001, (int)t, (int)d, 99);
      free(v);
    }
}

/* Sizes that are and are not multiples of the values one counter gives, a 2-D shape, and
 * a large array (another grid): the common elements are the same. */
static void same_seed_same_numbers(void **state) {
  static const int64_t sizes[] = {1, 3, 7, 1000, 1000003};
  int64_t shape[] = {3, 333};
  size_t t, d, s;
  (void)state;
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      double *first = make(kTypes[t], kDists[d], 1000, 5);
      cujit_array *a = NULL, *empty = NULL;
      double *v;
      int64_t zero = 0;
      for (s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int64_t common = sizes[s] < 1000 ? sizes[s] : 1000;
        v = make(kTypes[t], kDists[d], sizes[s], 5);
        assert_memory_equal(v, first, (size_t)common * sizeof *v);
        free(v);
      }
      assert_ok(cujit_array_random(&a, kTypes[t], 2, shape, kDists[d], 5));
      v = fetch(a);
      assert_memory_equal(v, first, 999 * sizeof *v);
      free(v);
      cujit_array_destroy(a);
      assert_ok(cujit_array_random(&empty, kTypes[t], 1, &zero, kDists[d], 5));
      assert_int_equal(cujit_array_size(empty), 0);
      cujit_array_destroy(empty);
      free(first);
    }
}

static void other_seeds_other_numbers(void **state) {
  static const uint64_t seeds[] = {1, 2, (uint64_t)1 << 32, ((uint64_t)1 << 32) + 1};
  size_t t, d, x, y;
  (void)state;
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      double *v[4];
      for (x = 0; x < 4; x++) v[x] = make(kTypes[t], kDists[d], 10000, seeds[x]);
      for (x = 0; x < 4; x++)
        for (y = x + 1; y < 4; y++) {
          int same = 0, i;
          for (i = 0; i < 10000; i++) same += v[x][i] == v[y][i];
          if (same > 2) fail_msg("seeds %zu and %zu share %d of 10000 elements", x, y, same);
        }
      for (x = 0; x < 4; x++) free(v[x]);
    }
}

/* 10^7 samples: mean and variance within about 5 standard errors; uniform ones in [0, 1);
 * normal ones within one standard deviation 68.27% of the time. */
static void moments_of_ten_million(void **state) {
  int64_t n = 10000000, i;
  size_t t, d;
  (void)state;
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      double *v = make(kTypes[t], kDists[d], n, 2024), sum = 0, sq = 0, mean, var;
      int64_t inside = 0;
      for (i = 0; i < n; i++) {
        if (kDists[d] == CUJIT_RANDOM_UNIFORM && !(v[i] >= 0 && v[i] < 1))
          fail_msg("uniform element %lld is %.17g", (long long)i, v[i]);
        sum += v[i];
        sq += v[i] * v[i];
        inside += fabs(v[i]) < 1;
      }
      mean = sum / (double)n;
      var = sq / (double)n - mean * mean;
      if (kDists[d] == CUJIT_RANDOM_UNIFORM) {
        if (fabs(mean - 0.5) > 5e-4 || fabs(var - 1.0 / 12) > 3e-4)
          fail_msg("uniform %d: mean %g, variance %g", (int)t, mean, var);
      } else {
        double within = (double)inside / (double)n;
        if (fabs(mean) > 2e-3 || fabs(var - 1) > 3e-3 || fabs(within - 0.682689) > 1e-3)
          fail_msg("normal %d: mean %g, variance %g, within 1: %g", (int)t, mean, var, within);
      }
      free(v);
    }
}

/* Shapes are checked as the array is made (after the kernel, which needs no device). */
static void bad_shapes(void **state) {
  int64_t neg[] = {4, -2}, two[] = {2, 2};
  cujit_array *a = (cujit_array *)1;
  (void)state;
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_F64, 2, neg, CUJIT_RANDOM_NORMAL, 1),
                       CUJIT_ERROR_INVALID_VALUE, "dimension 2 has the negative size -2");
  assert_null(a);
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_F32, 9, two, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "ndim is 9");
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_F32, 2, NULL, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "shape is NULL");
  assert_null(a);
}

/* cujit_array_random_host() makes the array's numbers on the host, bit for bit. */
static void host_form_equals_the_array(void **state) {
  enum { N = 100003 };
  static double host[N];
  static float hostf[N];
  size_t t, d;
  int64_t i;
  (void)state;
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      double *v = make(kTypes[t], kDists[d], N, 99);
      assert_ok(
          cujit_array_random_host(t ? (void *)host : (void *)hostf, kTypes[t], N, kDists[d], 99));
      for (i = 0; i < N; i++) {
        double h = t ? host[i] : (double)hostf[i];
        if (memcmp(&h, &v[i], sizeof h) != 0)
          fail_msg("type %d dist %d: element %lld is %.17g on the device, %.17g on the host",
                   (int)kTypes[t], (int)kDists[d], (long long)i, v[i], h);
      }
      free(v);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(equal_to_the_host_reference), cmocka_unit_test(far_elements_too),
      cmocka_unit_test(same_seed_same_numbers),      cmocka_unit_test(other_seeds_other_numbers),
      cmocka_unit_test(moments_of_ten_million),      cmocka_unit_test(bad_shapes),
      cmocka_unit_test(host_form_equals_the_array),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_array_random - random arrays without a device: types and distributions are checked
 * first, the four kernels compile (loading them needs the driver; shapes are checked as the
 * array is made, after that: the GPU group tests them), and the
 * host reference the GPU group compares against is itself checked: Philox-4x32-10 against
 * the published known-answer vectors, its logarithm and sine/cosine against the C
 * library's, and its normal numbers' moments; cujit_array_random_host() gives its numbers. */
#include "testutil.h"
#include "cujit_array.h"

#include "philoxref.h"

static const int64_t kShape[] = {10, 10};

static void arguments(void **state) {
  cujit_array *a = (cujit_array *)1;
  (void)state;
  assert_status_detail(cujit_array_random(NULL, CUJIT_TYPE_F32, 2, kShape, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_random: out is NULL");
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_I32, 2, kShape, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "use CUJIT_TYPE_F32 or CUJIT_TYPE_F64");
  assert_null(a);
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_F16, 2, kShape, CUJIT_RANDOM_NORMAL, 1),
                       CUJIT_ERROR_INVALID_VALUE, "is not a type random arrays are made of");
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_C64, 2, kShape, CUJIT_RANDOM_NORMAL, 1),
                       CUJIT_ERROR_INVALID_VALUE, "is not a type random arrays are made of");
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_PTR, 2, kShape, CUJIT_RANDOM_NORMAL, 1),
                       CUJIT_ERROR_INVALID_VALUE, "is not a type random arrays are made of");
  assert_status_detail(cujit_array_random(&a, CUJIT_TYPE_F32, 2, kShape, (cujit_distribution)7, 1),
                       CUJIT_ERROR_INVALID_VALUE, "distribution 7 is unknown");
  assert_null(a);
}

/* Compiled before the array is made: NVRTC needs no device, so a kernel that did not
 * compile would fail with CUJIT_ERROR_COMPILE; loading it is what needs the driver. */
static void kernels_compile(void **state) {
  cujit_type types[] = {CUJIT_TYPE_F32, CUJIT_TYPE_F64};
  cujit_distribution dists[] = {CUJIT_RANDOM_UNIFORM, CUJIT_RANDOM_NORMAL};
  size_t t, d;
  (void)state;
  for (t = 0; t < 2; t++)
    for (d = 0; d < 2; d++) {
      cujit_array *a = NULL;
      assert_status_detail(cujit_array_random(&a, types[t], 2, kShape, dists[d], 42),
                           CUJIT_ERROR_NO_DRIVER, "");
      assert_null(a);
    }
}

/* Random123's known-answer vectors for philox4x32 with 10 rounds: counter, key, result. */
static void philox_known_answers(void **state) {
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  int v, k;
  (void)state;
  for (v = 0; v < 3; v++) {
    uint32_t c[4];
    memcpy(c, kat[v], sizeof c);
    ref_philox(c, kat[v][4], kat[v][5]);
    for (k = 0; k < 4; k++)
      if (c[k] != kat[v][6 + k])
        fail_msg("vector %d, word %d: %08x, wanted %08x", v, k, c[k], kat[v][6 + k]);
  }
}

static double ulps(double got, double want) {
  return fabs(got - want) / (nextafter(fabs(want), INFINITY) - fabs(want));
}

/* The logarithm within 2 units in the last place of the C library's over (0, 1]; sine and
 * cosine of 2 pi t within 4e-15 over [0, 1). */
static void math_is_accurate(void **state) {
  double worst_log = 0, worst_trig = 0;
  uint64_t x = 88172645463325252ull;
  int i;
  (void)state;
  ref_init();
  assert_true(ref_log(1.0) == 0.0);
  for (i = 0; i < 1000000; i++) {
    double u, t, s, c, two_pi_t;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    u = ((double)(x >> 11) + 1.0) * REF_2M53;
    if (i % 4 == 0) u = ldexp(u, -(i % 53)); /* small ones too */
    worst_log = fmax(worst_log, ulps(ref_log(u), log(u)));
    t = (double)(x >> 11) * REF_2M53;
    ref_sincos_2pi(t, &s, &c);
    two_pi_t = 6.283185307179586476925286766559 * t;
    worst_trig = fmax(worst_trig, fmax(fabs(s - sin(two_pi_t)), fabs(c - cos(two_pi_t))));
  }
  if (worst_log > 2) fail_msg("log is off by %.2f ulp", worst_log);
  if (worst_trig > 4e-15) fail_msg("sin/cos are off by %g", worst_trig);
}

/* The reference's normal numbers have mean 0 and variance 1; its uniform ones lie in
 * [0, 1) with mean 1/2 (10^6 samples of each kind). */
static void reference_moments(void **state) {
  int f64, normal;
  (void)state;
  ref_init();
  for (f64 = 0; f64 < 2; f64++)
    for (normal = 0; normal < 2; normal++) {
      double sum = 0, sq = 0, n = 1e6;
      uint64_t i;
      for (i = 0; i < 1000000; i++) {
        double v = ref_random(f64, normal, 7, i);
        if (!normal && !(v >= 0 && v < 1))
          fail_msg("uniform element %llu is %g", (unsigned long long)i, v);
        sum += v;
        sq += v * v;
      }
      if (fabs(sum / n - (normal ? 0 : 0.5)) > 5e-3 ||
          fabs(sq / n - (sum / n) * (sum / n) - (normal ? 1 : 1.0 / 12)) > 1e-2)
        fail_msg("f64 %d normal %d: mean %g, variance %g", f64, normal, sum / n,
                 sq / n - (sum / n) * (sum / n));
    }
}

/* cujit_array_random_host() gives the reference's numbers bit for bit (so the device's,
 * which the GPU group compares with the reference), over an odd count that ends inside
 * a group, writing nothing past it; its arguments are checked as the array's are. */
static void host_numbers_are_the_arrays(void **state) {
  enum { N = 1001 };
  static float f[N + 1];
  static double d[N + 1];
  int f64, normal;
  size_t i;
  (void)state;
  ref_init();
  for (f64 = 0; f64 < 2; f64++)
    for (normal = 0; normal < 2; normal++) {
      const uint64_t seed = 0x123456789abcdefull + (uint64_t)(2 * f64 + normal);
      f[N] = -7.0f;
      d[N] = -7.0;
      assert_ok(cujit_array_random_host(f64 ? (void *)d : (void *)f,
                                        f64 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, N,
                                        normal ? CUJIT_RANDOM_NORMAL : CUJIT_RANDOM_UNIFORM, seed));
      assert_true(f[N] == -7.0f && d[N] == -7.0);
      for (i = 0; i < N; i++) {
        double want = ref_random(f64, normal, seed, i), got = f64 ? d[i] : (double)f[i];
        if (memcmp(&got, &want, sizeof got) != 0)
          fail_msg("f64 %d normal %d: element %zu is %.17g, wanted %.17g", f64, normal, i, got,
                   want);
      }
    }
  assert_status_detail(cujit_array_random_host(f, CUJIT_TYPE_I32, 4, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_random_host: type");
  assert_status_detail(cujit_array_random_host(f, CUJIT_TYPE_F32, 4, (cujit_distribution)7, 1),
                       CUJIT_ERROR_INVALID_VALUE, "distribution 7 is unknown");
  assert_status_detail(cujit_array_random_host(NULL, CUJIT_TYPE_F32, 4, CUJIT_RANDOM_UNIFORM, 1),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_random_host: host is NULL");
  assert_ok(cujit_array_random_host(NULL, CUJIT_TYPE_F32, 0, CUJIT_RANDOM_UNIFORM, 1));
}

int main(void) {
  /* the same everywhere: on a GPU machine too, no driver is loaded */
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(arguments),
      cmocka_unit_test(kernels_compile),
      cmocka_unit_test(philox_known_answers),
      cmocka_unit_test(math_is_accurate),
      cmocka_unit_test(reference_moments),
      cmocka_unit_test(host_numbers_are_the_arrays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gpu_array - device arrays on a GPU: every element type filled and read back at
 * sizes 0, 1, 31 and 1000003; conversions to and from double for every type; ranges;
 * copies in place and into new arrays; parts of an array read and written (small and
 * large, pageable and page-locked, of views); device-to-device copies, waited for and on
 * a stream; views and reshapes sharing memory; a 2^31+17
 * element array (the 64-bit index path); memory given back to the pool; a destroyed array
 * refused; an array destroyed while a kernel using it runs; small blocks kept for reuse in
 * stream order and given back by a trim; a destroyed array's handle reaching no new array. */
#include <math.h>

#include "gputest.h"
#include "cujit_array.h"

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};
static const int64_t kSizes[] = {0, 1, 31, 1000003};

static void every_type_filled_and_read(void **state) {
  unsigned char value[16], *host = malloc(1000003 * 16);
  size_t t, s, i, k;
  (void)state;
  for (k = 0; k < sizeof value; k++) value[k] = (unsigned char)(0x11 * (k + 1));
  value[0] = 1; /* a bool's only true value */
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    size_t es = cujit_type_size(kTypes[t]);
    for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++) {
      cujit_array *a = NULL;
      assert_ok(cujit_array_full(&a, kTypes[t], 1, &kSizes[s], value));
      assert_int_equal(cujit_array_nbytes(a), (size_t)kSizes[s] * es);
      assert_ok(cujit_array_read(a, host, cujit_array_nbytes(a)));
      for (i = 0; i < (size_t)kSizes[s]; i++)
        if (memcmp(host + i * es, value, es) != 0)
          fail_msg("type %d, size %lld: element %zu differs", kTypes[t], (long long)kSizes[s], i);
      cujit_array_destroy(a);
    }
  }
  free(host);
}

/* arange as double, converted to each type and back: small integers survive every trip. */
static void conversions_through_every_type(void **state) {
  double back[100];
  size_t t, i;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    cujit_array *d = NULL, *x = NULL, *y = NULL;
    assert_ok(cujit_array_arange(&d, CUJIT_TYPE_F64, 0, 100, 1));
    assert_int_equal(cujit_array_size(d), 100);
    assert_ok(cujit_array_astype(d, kTypes[t], &x));
    assert_ok(cujit_array_astype(x, CUJIT_TYPE_F64, &y));
    assert_ok(cujit_array_read(y, back, sizeof back));
    for (i = 0; i < 100; i++) {
      double want = kTypes[t] == CUJIT_TYPE_BOOL ? (i != 0) : (double)i;
      if (back[i] != want) fail_msg("type %d: element %zu came back as %g", kTypes[t], i, back[i]);
    }
    cujit_array_destroy(d);
    cujit_array_destroy(x);
    cujit_array_destroy(y);
  }
}

static void ranges_and_host_copies(void **state) {
  cujit_array *a = NULL, *b = NULL, *c = NULL;
  float f[38], g[38];
  int64_t n = 38;
  int i;
  (void)state;
  assert_ok(cujit_array_arange(&a, CUJIT_TYPE_F32, 0.5, 10, 0.25));
  assert_int_equal(cujit_array_size(a), 38);
  assert_ok(cujit_array_read(a, f, sizeof f));
  for (i = 0; i < 38; i++) assert_true(f[i] == 0.5f + 0.25f * (float)i);
  assert_ok(cujit_array_arange(&b, CUJIT_TYPE_I32, 10, 0, -3)); /* 10 7 4 1 */
  assert_int_equal(cujit_array_size(b), 4);
  cujit_array_destroy(b);
  b = NULL;
  for (i = 0; i < 38; i++) g[i] = (float)(i * i);
  assert_ok(cujit_array_from_host(&b, CUJIT_TYPE_F32, 1, &n, g));
  assert_ok(cujit_array_copy(b, &a)); /* into an existing array */
  assert_ok(cujit_array_read(a, f, sizeof f));
  assert_memory_equal(f, g, sizeof f);
  assert_ok(cujit_array_copy(a, &c)); /* into a new one */
  cujit_array_destroy(a);
  assert_ok(cujit_array_read(c, f, sizeof f));
  assert_memory_equal(f, g, sizeof f);
  cujit_array_destroy(b);
  cujit_array_destroy(c);
}

/* Elements [offset, offset + count) read and written, the rest untouched: small ranges
 * (the small pinned area), large ones (the staging threads), page-locked host memory, a
 * view's range, nothing at all. */
static void parts_read_and_written(void **state) {
  enum { N = 1000 };
  int64_t big = ((int64_t)3 << 20) / 4 + 5; /* 3 MiB of ints and 20 bytes */
  cujit_array *a = NULL, *v = NULL, *b = NULL;
  int x[N], part[100], *pin = NULL, *h = malloc((size_t)big * sizeof(int));
  int64_t i;
  (void)state;
  assert_non_null(h);
  assert_ok(cujit_array_arange(&a, CUJIT_TYPE_I32, 0, N, 1));
  assert_ok(cujit_array_read_range(a, 250, 100, part));
  for (i = 0; i < 100; i++) assert_int_equal(part[i], 250 + i);
  for (i = 0; i < 100; i++) part[i] = (int)-i;
  assert_ok(cujit_array_write_range(a, 900, 100, part));
  assert_ok(cujit_array_write_range(a, 0, 1, part + 7));
  assert_ok(cujit_array_read(a, x, sizeof x));
  for (i = 0; i < N; i++) assert_int_equal(x[i], i == 0 ? -7 : i < 900 ? (int)i : (int)(900 - i));
  assert_ok(cujit_array_read_range(a, N, 0, NULL));
  assert_ok(cujit_array_write_range(a, 0, 0, NULL));
  assert_ok(cujit_host_alloc((void **)&pin, 100 * sizeof(int)));
  assert_ok(cujit_array_read_range(a, 400, 100, pin));
  for (i = 0; i < 100; i++) assert_int_equal(pin[i], 400 + i);
  for (i = 0; i < 100; i++) pin[i] = 5000 + (int)i;
  assert_ok(cujit_array_write_range(a, 300, 100, pin));
  assert_ok(cujit_array_view(a, 250, 450, &v));
  assert_ok(cujit_array_read_range(v, 40, 20, part));
  for (i = 0; i < 20; i++) assert_int_equal(part[i], i < 10 ? 290 + (int)i : 4990 + (int)i);
  assert_status_detail(cujit_array_read_range(v, 190, 20, part), CUJIT_ERROR_INVALID_VALUE,
                       "offset 190 and count 20 are not a range of the array's 200 elements");
  for (i = 0; i < big; i++) h[i] = (int)(i * 3);
  assert_ok(cujit_array_from_host(&b, CUJIT_TYPE_I32, 1, &big, h));
  for (i = 0; i < big - 2; i++) h[i] = -(int)i;
  assert_ok(cujit_array_write_range(b, 1, big - 2, h));
  memset(h, 0, (size_t)big * sizeof(int));
  assert_ok(cujit_array_read_range(b, 0, big, h));
  for (i = 0; i < big; i++)
    if (h[i] != (i == 0 ? 0 : i == big - 1 ? (int)(i * 3) : -(int)(i - 1)))
      fail_msg("element %lld: %d", (long long)i, h[i]);
  assert_ok(cujit_array_read_range(b, 5, big - 10, h));
  for (i = 0; i < big - 10; i++)
    if (h[i] != -(int)(i + 4)) fail_msg("read from 5, element %lld: %d", (long long)i, h[i]);
  cujit_array_destroy(v);
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  assert_ok(cujit_host_free(pin));
  free(h);
}

/* cujit_mem_copy_dtod, waited for and on a stream. */
static void device_to_device_copies(void **state) {
  enum { N = 4096 };
  CUdeviceptr d = 0;
  CUstream s = NULL;
  int x[N], y[N], i;
  (void)state;
  for (i = 0; i < N; i++) x[i] = i * 5 - 3;
  assert_ok(cujit_mem_alloc(&d, 3 * sizeof x));
  assert_ok(cujit_mem_copy_htod(d, x, sizeof x));
  assert_ok(cujit_mem_copy_dtod(d + sizeof x, d, sizeof x));
  assert_ok(cujit_mem_copy_dtoh(y, d + sizeof x, sizeof y));
  assert_memory_equal(x, y, sizeof x);
  assert_ok(cujit_stream_create(&s));
  assert_ok(cujit_mem_copy_dtod_async(d + 2 * sizeof x, d + sizeof x + 16, sizeof x - 16, s));
  assert_ok(cujit_stream_synchronize(s));
  assert_ok(cujit_mem_copy_dtoh(y, d + 2 * sizeof x, sizeof y - 16));
  assert_memory_equal(x + 4, y, sizeof x - 16);
  assert_status_detail(cujit_mem_copy_dtod(d + 8, d, sizeof x), CUJIT_ERROR_INVALID_VALUE,
                       "overlap (they are 8 bytes apart)");
  assert_ok(cujit_stream_destroy(s));
  assert_ok(cujit_mem_free(d));
}

static void outputs_are_checked(void **state) {
  cujit_array *a = NULL, *wrong_type = NULL, *wrong_shape = NULL;
  int64_t n = 10, m = 11;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&wrong_type, CUJIT_TYPE_F64, 1, &n));
  assert_ok(cujit_array_zeros(&wrong_shape, CUJIT_TYPE_F32, 1, &m));
  assert_status_detail(cujit_array_copy(a, &wrong_type), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds f64, the result is f32");
  assert_status_detail(cujit_array_copy(a, &wrong_shape), CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (11,) differs from the result's (10,)");
  cujit_array_destroy(wrong_type);
  assert_status_detail(cujit_array_copy(a, &wrong_type), CUJIT_ERROR_INVALID_VALUE,
                       "*out is not a live array");
  assert_status_detail(cujit_array_fill(wrong_type, &n), CUJIT_ERROR_INVALID_VALUE,
                       "a is not a live array");
  cujit_array_destroy(a);
  cujit_array_destroy(wrong_shape);
}

static void views_share_memory(void **state) {
  cujit_array *a = NULL, *v = NULL, *r = NULL;
  int64_t shape[] = {4, 5}, flat = 20;
  int x[20], seven = 7, nine = 9, i;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 2, shape));
  assert_ok(cujit_array_view(a, 5, 10, &v));
  assert_ok(cujit_array_fill(v, &seven));
  assert_ok(cujit_array_reshape(a, 1, &flat, &r));
  cujit_array_destroy(a); /* the views keep the memory */
  assert_ok(cujit_array_read(r, x, sizeof x));
  for (i = 0; i < 20; i++) assert_int_equal(x[i], i >= 5 && i < 10 ? 7 : 0);
  assert_ok(cujit_array_fill(r, &nine));
  cujit_array_destroy(r);
  assert_ok(cujit_array_read(v, x, 5 * sizeof *x));
  assert_int_equal(x[4], 9);
  cujit_array_destroy(v);
}

static void wrapped_memory_stays_the_callers(void **state) {
  CUdeviceptr d = 0;
  cujit_array *a = NULL;
  int64_t n = 64;
  double v = 2.5, h[64];
  (void)state;
  assert_ok(cujit_mem_alloc(&d, sizeof h));
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F64, 1, &n, d));
  assert_ok(cujit_array_fill(a, &v));
  cujit_array_destroy(a);
  assert_ok(cujit_mem_copy_dtoh(h, d, sizeof h)); /* still the caller's, still there */
  assert_true(h[63] == 2.5);
  assert_ok(cujit_mem_free(d));
}

/* 2^31 + 17 bytes: indices past 2^31 are reached (and read back through a view). */
static void beyond_two_to_the_31(void **state) {
  int64_t n = ((int64_t)1 << 31) + 17;
  cujit_array *a = NULL, *tail = NULL;
  signed char seven = 7, t[40];
  int i;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &n, &seven));
  assert_ok(cujit_array_view(a, n - 40, n, &tail));
  assert_ok(cujit_array_read(tail, t, sizeof t));
  for (i = 0; i < 40; i++) assert_int_equal(t[i], 7);
  cujit_array_destroy(tail);
  cujit_array_destroy(a);
}

/* Arrays made and destroyed in a loop reuse the pool's memory. */
static void pool_is_reused(void **state) {
  int64_t n = 1 << 20;
  size_t before = gpu_pool_in_use();
  int i;
  (void)state;
  for (i = 0; i < 200; i++) {
    cujit_array *a = NULL;
    assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
    cujit_array_destroy(a);
  }
  assert_ok(cujit_synchronize());
  assert_int_equal(gpu_pool_in_use(), before);
}

/* Destroyed while a kernel that writes it still runs on its stream: the memory goes back
 * to the pool only after the kernel (stream order), and nothing faults. */
static void destroyed_while_in_flight(void **state) {
  cujit_function *spin = gpu_function(mod, "spin_then_write");
  cujit_array *a = NULL;
  int64_t n = 1 << 16;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
  assert_ok(CUJIT_LAUNCH(spin, CUJIT_DIM3(256), CUJIT_DIM3(256), cujit_array_arg(a),
                         cujit_i64((int64_t)n), cujit_i64(20000000)));
  cujit_array_destroy(a);
  assert_ok(cujit_synchronize());
}

/* Small blocks given back on the default stream are taken again by the next arrays of
 * their size without the driver: the next user of a block still runs after the kernel that
 * wrote it (stream order), live arrays never share one, and a trim gives them all back. */
static void small_blocks_are_kept_in_order(void **state) {
  cujit_function *spin = gpu_function(mod, "spin_then_write");
  enum { COUNT = 40 };
  cujit_array *a = NULL, *many[COUNT];
  int64_t n = 1 << 12, i;
  int host[1 << 12], k, v;
  size_t before = gpu_pool_in_use(), used = 1, kept = 1;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
  assert_ok(CUJIT_LAUNCH(spin, CUJIT_DIM3(16), CUJIT_DIM3(256), cujit_array_arg(a),
                         cujit_i64((int64_t)n), cujit_i64(20000000)));
  cujit_array_destroy(a); /* while the kernel still runs */
  a = NULL;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n)); /* likely the same block */
  assert_ok(cujit_array_read(a, host, sizeof host));
  for (i = 0; i < n; i++)
    if (host[i] != 0)
      fail_msg("element %lld is %d: zeroed before the kernel wrote it", (long long)i, host[i]);
  cujit_array_destroy(a);
  for (k = 0; k < COUNT; k++) {
    many[k] = NULL;
    v = k;
    assert_ok(cujit_array_full(&many[k], CUJIT_TYPE_I32, 1, &n, &v));
  }
  for (k = 0; k < COUNT; k++) {
    assert_ok(cujit_array_read(many[k], host, sizeof host));
    assert_int_equal(host[0], k);
    assert_int_equal(host[n - 1], k);
    cujit_array_destroy(many[k]);
  }
  assert_ok(cujit_synchronize());
  assert_int_equal(gpu_pool_in_use(), before);
  assert_ok(cujit_mem_pool_trim());
  assert_ok(cujit_mem_pool_get_usage(&used, &kept));
  assert_int_equal(used, before);
  if (before == 0) assert_int_equal(kept, 0);
}

/* A small array moved to a non-blocking stream of its own and destroyed while a kernel
 * there still runs: the next small array on the default stream, which does not wait for
 * that stream, must not get its memory before the kernel is done with it. */
static void small_block_freed_on_a_stream(void **state) {
  cujit_function *spin = gpu_function(mod, "spin_then_write");
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_array *a = NULL, *b = NULL;
  int64_t n = 1 << 12, i;
  int host[1 << 12];
  CUstream s = NULL;
  cujit_arg args[3];
  (void)state;
  assert_ok(cujit_stream_create(&s));
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
  assert_ok(cujit_array_set_stream(a, s));
  args[0] = cujit_array_arg(a), args[1] = cujit_i64(n), args[2] = cujit_i64(40000000);
  o.stream = s;
  assert_ok(cujit_launch(spin, CUJIT_DIM3(16), CUJIT_DIM3(256), args, 3, &o));
  cujit_array_destroy(a);                                  /* while the kernel on s still spins */
  assert_ok(cujit_array_zeros(&b, CUJIT_TYPE_I32, 1, &n)); /* on the default stream */
  assert_ok(cujit_stream_synchronize(s));
  assert_ok(cujit_array_read(b, host, sizeof host));
  for (i = 0; i < n; i++)
    if (host[i] != 0)
      fail_msg("element %lld is %d: written by the other stream's kernel", (long long)i, host[i]);
  cujit_array_destroy(b);
  assert_ok(cujit_stream_destroy(s));
}

/* A destroyed array's handle stays refused once new arrays are made (which may take its
 * memory, its block and its device memory): a fill through it reaches no other array,
 * and destroying it again frees nothing of them. */
static void stale_handles_reach_no_new_array(void **state) {
  enum { ROUNDS = 100, N = 1000 };
  int64_t n = N;
  float host[N], seven = 7.0f, one = 1.0f, three = 3.0f;
  int round, i;
  (void)state;
  for (round = 0; round < ROUNDS; round++) {
    cujit_array *a = NULL, *b = NULL, *c = NULL;
    assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
    cujit_array_destroy(a);
    assert_ok(cujit_array_full(&b, CUJIT_TYPE_F32, 1, &n, &seven));
    assert_status_detail(cujit_array_fill(a, &one), CUJIT_ERROR_INVALID_VALUE,
                         "cujit_array_fill: a is not a live array");
    assert_status_detail(cujit_array_write(a, host, sizeof host), CUJIT_ERROR_INVALID_VALUE,
                         "cujit_array_write: a is not a live array");
    assert_true(cujit_array_data(a) == 0);
    assert_ok(cujit_array_read(b, host, sizeof host));
    for (i = 0; i < N; i++)
      if (host[i] != 7.0f) fail_msg("round %d: element %d of b is %g", round, i, host[i]);
    cujit_array_destroy(a); /* again: b is not freed */
    assert_ok(cujit_array_fill(b, &three));
    assert_ok(cujit_array_copy(b, &c));
    assert_ok(cujit_array_read(c, host, sizeof host));
    for (i = 0; i < N; i++)
      if (host[i] != 3.0f) fail_msg("round %d: element %d of b's copy is %g", round, i, host[i]);
    cujit_array_destroy(b);
    cujit_array_destroy(c);
  }
  { /* launched through a destroyed array: refused, never a null pointer on the device */
    cujit_function *spin = gpu_function(mod, "spin_then_write");
    cujit_array *a = NULL;
    assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
    cujit_array_destroy(a);
    assert_status_detail(CUJIT_LAUNCH(spin, CUJIT_DIM3(4), CUJIT_DIM3(256), cujit_array_arg(a),
                                      cujit_i64((int64_t)n), cujit_i64(0)),
                         CUJIT_ERROR_INVALID_ARGS,
                         "argument 1 of kernel 'spin_then_write' is "
                         "a destroyed or NULL array");
  }
  assert_ok(cujit_synchronize());
}

static const char kSource[] =
    "extern \"C\" __global__ void spin_then_write(int *x, long long n, long long cycles) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = 1;\n"
    "}\n";

GPU_GROUP_MAIN(kSource, "array_test.cu", NULL, cmocka_unit_test(every_type_filled_and_read),
               cmocka_unit_test(conversions_through_every_type),
               cmocka_unit_test(ranges_and_host_copies), cmocka_unit_test(parts_read_and_written),
               cmocka_unit_test(device_to_device_copies), cmocka_unit_test(outputs_are_checked),
               cmocka_unit_test(views_share_memory),
               cmocka_unit_test(wrapped_memory_stays_the_callers),
               cmocka_unit_test(beyond_two_to_the_31), cmocka_unit_test(pool_is_reused),
               cmocka_unit_test(destroyed_while_in_flight),
               cmocka_unit_test(small_blocks_are_kept_in_order),
               cmocka_unit_test(small_block_freed_on_a_stream),
               cmocka_unit_test(stale_handles_reach_no_new_array))

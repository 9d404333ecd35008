/* test_gpu_reset - arrays made before a reset of their primary context
 * (cuDevicePrimaryCtxReset, called by its symbol as a program linked with libcuda calls
 * it, then the context retained and made current again as the runtime does) and destroyed
 * after it: their memory died with the context, so cujit neither frees it nor hands it to
 * the next array of its size, in every size class (small exact-size blocks, kept blocks,
 * the pool); the next arrays get memory of their own, hold what is written to them, and
 * large pageable copies (through pinned chunks made before the reset) still arrive. On a
 * GPU; and on the checking fake driver (CUJIT_LIBCUDA), which also records any use or free
 * of the dead context's memory, pool, pinned memory or events. */
#include <dlfcn.h>

#include "testutil.h"
#include "cujit_array.h"
#include "fakedriver/checkdriver.h"

typedef CUresult (*reset_fn)(CUdevice);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_fn)(CUcontext);

static checkdriver_api cd;
static int on_fake;

static void *driver_symbol(const char *name) {
  const char *path = getenv("CUJIT_LIBCUDA");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *f = h ? dlsym(h, name) : NULL;
  if (h) dlclose(h);
  return f;
}

static void reset_device_0(void) {
  reset_fn reset = (reset_fn)driver_symbol("cuDevicePrimaryCtxReset_v2");
  retain_fn retain = (retain_fn)driver_symbol("cuDevicePrimaryCtxRetain");
  set_fn set = (set_fn)driver_symbol("cuCtxSetCurrent");
  CUcontext c = NULL;
  assert_non_null(reset);
  assert_non_null(retain);
  assert_non_null(set);
  assert_int_equal(reset(0), CUDA_SUCCESS);
  assert_int_equal(retain(&c, 0), CUDA_SUCCESS);
  assert_int_equal(set(c), CUDA_SUCCESS);
}

static cujit_array *made(size_t n, unsigned char v) {
  cujit_array *a = NULL;
  unsigned char *host = malloc(n);
  int64_t shape = (int64_t)n;
  memset(host, v, n);
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_U8, 1, &shape, host));
  free(host);
  return a;
}

static void holds(const cujit_array *a, size_t n, unsigned char v) {
  unsigned char *host = malloc(n);
  size_t i;
  assert_ok(cujit_array_read(a, host, n));
  for (i = 0; i < n; i++)
    if (host[i] != v) fail_msg("byte %zu of %zu is 0x%02x, not 0x%02x", i, n, host[i], v);
  free(host);
}

static void no_violations(void) {
  char text[8192];
  if (!on_fake) return;
  cd.report(text, sizeof text);
  if (cd.violations()) fail_msg("the checking driver recorded:\n%s", text);
}

/* An array of n bytes made before the reset and destroyed after, between two new ones of
 * its size (on an H200 the second got the first one's address: 1 KiB blocks). */
static void made_before_destroyed_after(size_t n) {
  cujit_array *old, *other, *c, *d;
  CUdeviceptr pc, pd;
  assert_ok(cujit_device_set_current(0));
  old = made(n, 0x11);
  other = made(n, 0x22); /* destroyed before the reset: kept, or the pool's */
  cujit_array_destroy(other);
  holds(old, n, 0x11);
  reset_device_0();
  c = made(n, 0xc3); /* the new context may give it the old array's address */
  cujit_array_destroy(old);
  d = made(n, 0xd4);
  pc = cujit_array_data(c);
  pd = cujit_array_data(d);
  if (pc < pd + n && pd < pc + n)
    fail_msg("two live arrays of %zu bytes share device memory: 0x%llx and 0x%llx", n,
             (unsigned long long)pc, (unsigned long long)pd);
  holds(c, n, 0xc3);
  holds(d, n, 0xd4);
  cujit_array_destroy(c);
  cujit_array_destroy(d);
  assert_ok(cujit_mem_pool_trim());
  assert_ok(cujit_synchronize());
  no_violations();
}

static void small_blocks(void **state) {
  (void)state;
  made_before_destroyed_after(1024);
}

static void kept_blocks(void **state) {
  (void)state;
  made_before_destroyed_after(256 << 10);
}

static void pool_memory(void **state) {
  (void)state;
  made_before_destroyed_after(4 << 20);
}

/* An In/Out launch's buffers and the arrays' memory come from a pool made again after a
 * reset, and a kernel launched before it runs after it. */
static void launches_after_a_reset(void **state) {
  static const char src[] = "extern \"C\" __global__ void inc(const int *in, int *out, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) out[i] = in[i] + 1;\n"
                            "}\n";
  enum { N = 1 << 20 };
  cujit_module *m = NULL;
  cujit_function *inc;
  int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), i, round;
  (void)state;
  for (i = 0; i < N; i++) in[i] = i;
  assert_ok(cujit_module_from_source(&m, src, "inc.cu", NULL));
  assert_ok(cujit_module_get_function(m, "inc", &inc));
  for (round = 0; round < 2; round++) {
    memset(out, 0, N * sizeof *out);
    assert_ok(CUJIT_LAUNCH(inc, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_in(in, N * sizeof *in),
                           cujit_out(out, N * sizeof *out), cujit_i32(N)));
    if (!on_fake)
      for (i = 0; i < N; i++) assert_int_equal(out[i], i + 1);
    if (round == 0) reset_device_0();
  }
  cujit_module_destroy(m);
  free(in);
  free(out);
  no_violations();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_blocks),
      cmocka_unit_test(kept_blocks),
      cmocka_unit_test(pool_memory),
      cmocka_unit_test(launches_after_a_reset),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  on_fake = checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) == 0;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

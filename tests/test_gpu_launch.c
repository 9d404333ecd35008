/* test_gpu_launch - launching kernels: Out/In/In buffers, device pointers with an offset,
 * 2-D and 3-D grids, asynchronous launches, the kernel's time, attributes, the suggested
 * block size and the parameter layout (the one a lookup takes from the image's index
 * without asking the driver included). */
#include <pthread.h>

#include "gputest.h"

static const char kSrc[] =
    "__global__ void multiply_them(float *dest, float *a, float *b) {\n"
    "  const int i = threadIdx.x;\n"
    "  dest[i] = a[i] * b[i];\n"
    "}\n"
    "__global__ void fill(float *x, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = v;\n"
    "}\n"
    "__global__ void where(unsigned *out, unsigned nx, unsigned ny) {\n"
    "  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  unsigned z = blockIdx.z * blockDim.z + threadIdx.z;\n"
    "  out[(z * ny + y) * nx + x] = x + 1000u * y + 1000000u * z;\n"
    "}\n"
    "extern \"C\" __global__ void scalars(char c, short s, int i, long long l,\n"
    "    unsigned char uc, float f, bool b, double d, unsigned short us,\n"
    "    float *p, signed char sc, unsigned long long u, char last) {}\n"
    "__global__ void spin(long long cycles, int *done) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) { }\n"
    "  *done = 1;\n"
    "}\n";

static void out_in_in(void **state) {
  enum { N = 400 };
  float a[N], b[N], dest[N];
  cujit_function *f = gpu_function(mod, "multiply_them");
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    a[i] = (float)i * 0.5f - 7.0f;
    b[i] = (float)(i % 17) - 3.25f;
    dest[i] = -1.0f;
  }
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, sizeof dest),
                         cujit_in(a, sizeof a), cujit_in(b, sizeof b)));
  for (i = 0; i < N; i++) assert_true(dest[i] == a[i] * b[i]);
  assert_ptr_equal(gpu_function(mod, "multiply_them"), f); /* one handle per kernel */
  assert_string_equal(cujit_function_name(f), "multiply_them");
  assert_int_equal(gpu_pool_in_use(), 0);
}

static void offset_pointer_leaves_edges(void **state) {
  enum { N = 64, SKIP = 8, LEN = 48 };
  float host[N];
  CUdeviceptr d = 0;
  cujit_function *f = gpu_function(mod, "fill");
  cujit_arg args[3];
  int i;
  (void)state;
  for (i = 0; i < N; i++) host[i] = -1.0f;
  assert_ok(cujit_mem_alloc(&d, sizeof host));
  assert_ok(cujit_mem_copy_htod(d, host, sizeof host));
  args[0] = cujit_ptr_offset(d, SKIP * sizeof(float));
  args[1] = cujit_f32(3.5f);
  args[2] = cujit_i32(LEN);
  assert_ok(
      cujit_launch(f, CUJIT_DIM3(2), CUJIT_DIM3(32), args, 3, NULL)); /* 64 threads, 48 write */
  assert_ok(cujit_mem_copy_dtoh(host, d, sizeof host));
  for (i = 0; i < N; i++) assert_true(host[i] == (i >= SKIP && i < SKIP + LEN ? 3.5f : -1.0f));
  assert_ok(cujit_mem_free(d));
}

static void grids_in_two_and_three_dimensions(void **state) {
  enum { NX = 64, NY = 12, NZ = 6 };
  static unsigned out[NX * NY * NZ];
  cujit_function *f = gpu_function(mod, "where");
  unsigned x, y, z;
  (void)state;
  memset(out, 0xff, sizeof out);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(NX / 16, NY / 4), CUJIT_DIM3(16, 4),
                         cujit_out(out, NX * NY * sizeof(unsigned)), cujit_u32(NX), cujit_u32(NY)));
  for (y = 0; y < NY; y++)
    for (x = 0; x < NX; x++) assert_int_equal(out[y * NX + x], x + 1000u * y);
  memset(out, 0xff, sizeof out);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(NX / 8, NY / 4, NZ / 2), CUJIT_DIM3(8, 4, 2),
                         cujit_out(out, sizeof out), cujit_u32(NX), cujit_u32(NY)));
  for (z = 0; z < NZ; z++)
    for (y = 0; y < NY; y++)
      for (x = 0; x < NX; x++)
        assert_int_equal(out[(z * NY + y) * NX + x], x + 1000u * y + 1000000u * z);
}

static void asynchronous_launch_then_synchronize(void **state) {
  enum { N = 1 << 16 };
  static float host[N];
  CUdeviceptr d = 0;
  cujit_function *f = gpu_function(mod, "fill");
  int i;
  (void)state;
  assert_ok(cujit_mem_alloc(&d, sizeof host));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_ptr(d), cujit_f32(2.0f),
                         cujit_i32(N)));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_ptr(d), cujit_f32(9.0f),
                         cujit_i32(N / 2)));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(host, d, sizeof host));
  for (i = 0; i < N; i++) assert_true(host[i] == (i < N / 2 ? 9.0f : 2.0f));
  assert_ok(cujit_mem_free(d));
}

typedef struct fresh {
  cujit_function *fn;
  CUdeviceptr d;
  cujit_status st;
  char err[300];
} fresh;

/* A thread whose first cujit call is a launch: no context is current in it yet. */
static void *launch_only(void *arg) {
  fresh *t = arg;
  t->st = CUJIT_LAUNCH(t->fn, CUJIT_DIM3(1), CUJIT_DIM3(64), cujit_ptr(t->d), cujit_f32(6.0f),
                       cujit_i32(64));
  if (t->st == CUJIT_OK) t->st = cujit_synchronize();
  snprintf(t->err, sizeof t->err, "%s", cujit_last_error());
  return NULL;
}

static void launch_from_a_thread_without_context(void **state) {
  fresh t = {NULL, 0, CUJIT_OK, ""};
  pthread_t th;
  float host[64];
  int i;
  (void)state;
  t.fn = gpu_function(mod, "fill"); /* loaded here: the thread's launch takes the fast path */
  assert_ok(cujit_mem_alloc(&t.d, sizeof host));
  assert_int_equal(pthread_create(&th, NULL, launch_only, &t), 0);
  pthread_join(th, NULL);
  if (t.st != CUJIT_OK) fail_msg("%s: %s", cujit_status_name(t.st), t.err);
  assert_ok(cujit_mem_copy_dtoh(host, t.d, sizeof host));
  for (i = 0; i < 64; i++) assert_true(host[i] == 6.0f);
  assert_ok(cujit_mem_free(t.d));
}

static void elapsed_time_is_measured(void **state) {
  cujit_function *f = gpu_function(mod, "spin");
  cujit_launch_options o = {0};
  float ms = -1.0f;
  int done = 0;
  (void)state;
  o.elapsed_ms = &ms;
  /* ~10^7 cycles: a few milliseconds at any clock */
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, cujit_i64(10000000),
                            cujit_out(&done, sizeof done)));
  assert_int_equal(done, 1);
  printf("spin kernel took %.3f ms\n", ms);
  assert_true(ms > 0.0f);
  ms = -1.0f;
  done = 0;
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, cujit_i64(1000),
                            cujit_out(&done, sizeof done)));
  assert_true(ms >= 0.0f);
}

static void attributes_block_size_and_layout(void **state) {
  cujit_function *f = gpu_function(mod, "multiply_them"), *g = gpu_function(mod, "fill");
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  int block = 0, grid = 0;
  size_t off = 1, size = 0, i;
  (void)state;
  assert_ok(cujit_function_get_attrs(f, &a));
  assert_int_equal(a.num_params, 3);
  assert_true(a.max_threads_per_block >= 400);
  assert_true(a.num_regs > 0);
  assert_int_equal(a.static_shared_bytes, 0);
  assert_true(a.binary_version >= 50);
  assert_ok(cujit_function_suggest_block(f, 0, &block, &grid));
  assert_true(block >= 32 && block <= a.max_threads_per_block);
  assert_true(grid >= 1);
  for (i = 0; i < 3; i++) {
    assert_ok(cujit_function_get_param_info(f, i, &off, &size));
    assert_int_equal(off, 8 * i);
    assert_int_equal(size, 8);
  }
  assert_ok(cujit_function_get_param_info(g, 2, &off, &size));
  assert_int_equal(off, 12); /* float *, float, int */
  assert_int_equal(size, 4);
  assert_status_detail(cujit_function_get_param_info(f, 3, &off, &size), CUJIT_ERROR_INVALID_VALUE,
                       "kernel 'multiply_them' has 3 parameters; index 3 is out of range");
}

typedef CUresult (*load_data_fn)(CUmodule *, const void *);
typedef CUresult (*get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*param_info_fn)(CUfunction, size_t, size_t *, size_t *);
typedef CUresult (*unload_fn)(CUmodule);

/* A kernel of plain scalars and pointers takes its layout from the image's index, without
 * asking the driver: it must be what the driver says of the same CUBIN. */
static void scalar_layout_is_the_drivers(void **state) {
  cujit_function *f = gpu_function(mod, "scalars");
  void *load = NULL, *get = NULL, *info = NULL, *unload = NULL;
  const void *cubin = cujit_module_cubin(mod, NULL);
  size_t i, off, size, want_off, want_size;
  CUmodule raw;
  CUfunction rf;
  (void)state;
  if (cujit_driver_get_symbol("cuFuncGetParamInfo", &info) != CUJIT_OK || !cubin) {
    test_skip_part("the driver lacks cuFuncGetParamInfo, or the module has no CUBIN");
    return;
  }
  assert_ok(cujit_driver_get_symbol("cuModuleLoadData", &load));
  assert_ok(cujit_driver_get_symbol("cuModuleGetFunction", &get));
  assert_ok(cujit_driver_get_symbol("cuModuleUnload", &unload));
  assert_int_equal(((load_data_fn)load)(&raw, cubin), CUDA_SUCCESS);
  assert_int_equal(((get_function_fn)get)(&rf, raw, "scalars"), CUDA_SUCCESS);
  for (i = 0; i < 13; i++) {
    assert_int_equal(((param_info_fn)info)(rf, i, &want_off, &want_size), CUDA_SUCCESS);
    assert_ok(cujit_function_get_param_info(f, i, &off, &size));
    if (off != want_off || size != want_size)
      fail_msg("parameter %zu: cujit says %zu bytes at %zu, the driver %zu at %zu", i, size, off,
               want_size, want_off);
  }
  /* the source declares 13 (asking the driver for a 14th would be the API error that
   * compute-sanitizer reports) */
  assert_int_equal(cujit_function_get_param_info(f, 13, &off, &size), CUJIT_ERROR_INVALID_VALUE);
  ((unload_fn)unload)(raw);
}

GPU_GROUP_MAIN(kSrc, "launch.cu", NULL, cmocka_unit_test(out_in_in),
               cmocka_unit_test(offset_pointer_leaves_edges),
               cmocka_unit_test(grids_in_two_and_three_dimensions),
               cmocka_unit_test(asynchronous_launch_then_synchronize),
               cmocka_unit_test(launch_from_a_thread_without_context),
               cmocka_unit_test(elapsed_time_is_measured),
               cmocka_unit_test(attributes_block_size_and_layout),
               cmocka_unit_test(scalar_layout_is_the_drivers))

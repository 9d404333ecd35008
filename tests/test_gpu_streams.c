/* test_gpu_streams - launches on streams of the caller's: In/Out with page-locked buffers
 * (cujit_host_alloc and memory the caller registered), ordering after earlier work on the
 * same stream, and asynchronous launches on several streams at once. */
#include "gputest.h"

static const char kSrc[] = "__global__ void scale(float *x, float a, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) x[i] *= a;\n"
                           "}\n"
                           "__global__ void copy(float *dst, const float *src, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) dst[i] = src[i];\n"
                           "}\n";

enum { N = 1 << 20 };

static void pinned_buffers_on_two_streams(void **state) {
  cujit_function *f = gpu_function(mod, "scale");
  cujit_launch_options oa = {0}, ob = {0};
  float *a = NULL, *b = NULL;
  int i;
  (void)state;
  assert_ok(cujit_stream_create(&oa.stream));
  assert_ok(cujit_stream_create(&ob.stream));
  assert_ok(cujit_host_alloc((void **)&a, N * sizeof(float)));
  assert_ok(cujit_host_alloc((void **)&b, N * sizeof(float)));
  for (i = 0; i < N; i++) a[i] = b[i] = (float)(i % 1000);
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), &oa,
                            cujit_inout(a, N * sizeof(float)), cujit_f32(2.0f), cujit_i32(N)));
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), &ob,
                            cujit_inout(b, N * sizeof(float)), cujit_f32(-0.5f), cujit_i32(N)));
  for (i = 0; i < N; i++) { /* both are complete when the launches return */
    assert_true(a[i] == (float)(i % 1000) * 2.0f);
    assert_true(b[i] == (float)(i % 1000) * -0.5f);
  }
  assert_ok(cujit_host_free(a));
  assert_ok(cujit_host_free(b));
  assert_ok(cujit_stream_destroy(oa.stream));
  assert_ok(cujit_stream_destroy(ob.stream));
}

static void out_follows_earlier_work_on_the_stream(void **state) {
  cujit_function *scale = gpu_function(mod, "scale"), *copy = gpu_function(mod, "copy");
  cujit_launch_options o = {0};
  CUdeviceptr d = 0;
  float *host = malloc(N * sizeof(float)), *out = NULL;
  int i;
  (void)state;
  assert_ok(cujit_stream_create(&o.stream));
  assert_ok(cujit_host_alloc((void **)&out, N * sizeof(float)));
  for (i = 0; i < N; i++) host[i] = (float)i;
  assert_ok(cujit_mem_alloc(&d, N * sizeof(float)));
  assert_ok(cujit_mem_copy_htod(d, host, N * sizeof(float)));
  /* asynchronous on the stream, then an Out launch that must see its result */
  assert_ok(CUJIT_LAUNCH_EX(scale, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), &o, cujit_ptr(d),
                            cujit_f32(3.0f), cujit_i32(N)));
  assert_ok(CUJIT_LAUNCH_EX(copy, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), &o,
                            cujit_out(out, N * sizeof(float)), cujit_ptr(d), cujit_i32(N)));
  for (i = 0; i < N; i++) assert_true(out[i] == (float)i * 3.0f);
  assert_ok(cujit_mem_free(d));
  assert_ok(cujit_host_free(out));
  assert_ok(cujit_stream_destroy(o.stream));
  free(host);
}

static void asynchronous_launches_on_many_streams(void **state) {
  enum { S = 4 };
  cujit_function *f = gpu_function(mod, "scale");
  cujit_launch_options o[S];
  CUdeviceptr d[S];
  float *host = malloc(N * sizeof(float));
  int s, i;
  (void)state;
  for (s = 0; s < S; s++) {
    memset(&o[s], 0, sizeof o[s]);
    assert_ok(cujit_stream_create(&o[s].stream));
    assert_ok(cujit_mem_alloc(&d[s], N * sizeof(float)));
    for (i = 0; i < N; i++) host[i] = 1.0f;
    assert_ok(cujit_mem_copy_htod(d[s], host, N * sizeof(float)));
  }
  for (i = 0; i < 3; i++)
    for (s = 0; s < S; s++)
      assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), &o[s], cujit_ptr(d[s]),
                                cujit_f32((float)(s + 2)), cujit_i32(N)));
  for (s = 0; s < S; s++) {
    float want = (float)((s + 2) * (s + 2) * (s + 2));
    assert_ok(cujit_stream_synchronize(o[s].stream));
    assert_ok(cujit_mem_copy_dtoh(host, d[s], N * sizeof(float)));
    for (i = 0; i < N; i += 997) assert_true(host[i] == want);
    assert_ok(cujit_mem_free(d[s]));
    assert_ok(cujit_stream_destroy(o[s].stream));
  }
  free(host);
}

typedef CUresult (*host_register_fn)(void *, size_t, unsigned);
typedef CUresult (*host_unregister_fn)(void *);

static void memory_the_caller_registered(void **state) {
  cujit_function *f = gpu_function(mod, "scale");
  host_register_fn reg = NULL;
  host_unregister_fn unreg = NULL;
  size_t bytes = 8u << 20;
  float *x = NULL;
  int i, n = (int)(bytes / sizeof(float));
  (void)state;
  assert_int_equal(posix_memalign((void **)&x, 4096, bytes), 0);
  assert_ok(cujit_driver_get_symbol("cuMemHostRegister", (void **)&reg));
  assert_ok(cujit_driver_get_symbol("cuMemHostUnregister", (void **)&unreg));
  assert_int_equal(reg(x, bytes, 0), CUDA_SUCCESS);
  for (i = 0; i < n; i++) x[i] = (float)(i & 255);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3((unsigned)n / 256), CUJIT_DIM3(256), cujit_inout(x, bytes),
                         cujit_f32(0.25f), cujit_i32(n)));
  for (i = 0; i < n; i++) assert_true(x[i] == (float)(i & 255) * 0.25f);
  assert_int_equal(unreg(x), CUDA_SUCCESS);
  free(x);
}

GPU_GROUP_MAIN(kSrc, "streams.cu", NULL, cmocka_unit_test(pinned_buffers_on_two_streams),
               cmocka_unit_test(out_follows_earlier_work_on_the_stream),
               cmocka_unit_test(asynchronous_launches_on_many_streams),
               cmocka_unit_test(memory_the_caller_registered))

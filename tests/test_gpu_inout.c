/* test_gpu_inout - In/Out/InOut buffers of several MiB from pageable and page-locked
 * memory (the pageable ones above the staging threshold go through cujit's pinned chunks,
 * in uneven sizes), on the default stream and on the caller's; empty buffers; how host
 * memory is recognised; and the pool's memory kept between launches and trimmed. */
#include "gputest.h"
#include "launch/launch.h"

static const char kSrc[] =
    "__global__ void inc(const float *in, float *out, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) out[i] = in[i] + 1.0f;\n"
    "}\n"
    "__global__ void twice(float *x, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) x[i] *= 2.0f;\n"
    "}\n"
    "__global__ void is_null(const float *p, int *out) { *out = p == nullptr; }\n";

static void fill(float *x, size_t n, unsigned seed) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 100000);
}

/* In + Out of n floats through `inc`, then InOut through `twice`; all values checked. */
static void round_trip(float *in, float *out, size_t n, const cujit_launch_options *o) {
  cujit_function *inc = gpu_function(mod, "inc"), *twice = gpu_function(mod, "twice");
  size_t i;
  fill(in, n, (unsigned)n);
  memset(out, 0xff, n * sizeof(float)); /* every element must be written */
  assert_ok(CUJIT_LAUNCH_EX(inc, CUJIT_DIM3(1024), CUJIT_DIM3(256), o, cujit_in(in, n * sizeof(float)),
                            cujit_out(out, n * sizeof(float)), cujit_u64(n)));
  for (i = 0; i < n; i++)
    if (out[i] != in[i] + 1.0f) fail_msg("Out element %zu of %zu: %g, want %g", i, n, (double)out[i], (double)in[i] + 1);
  assert_ok(CUJIT_LAUNCH_EX(twice, CUJIT_DIM3(1024), CUJIT_DIM3(256), o,
                            cujit_inout(out, n * sizeof(float)), cujit_u64(n)));
  for (i = 0; i < n; i++)
    if (out[i] != (in[i] + 1.0f) * 2.0f) fail_msg("InOut element %zu of %zu: %g", i, n, (double)out[i]);
  assert_int_equal(gpu_pool_in_use(), 0);
}

static void pageable(size_t bytes, const cujit_launch_options *o) {
  size_t n = bytes / sizeof(float);
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  assert_non_null(in);
  assert_non_null(out);
  round_trip(in, out, n, o);
  free(in);
  free(out);
}

static void pageable_several_mib(void **state) {
  (void)state;
  pageable(512u << 10, NULL);             /* below the staging threshold: copied directly */
  pageable((3u << 20) + 12, NULL);        /* staged, the last chunk short */
  pageable((9u << 20) + 12, NULL);
  pageable((33u << 20) + 4, NULL);        /* staged, shares not multiples of a chunk */
  pageable(64u << 20, NULL);
}

static void pageable_on_a_stream(void **state) {
  cujit_launch_options o = {0};
  (void)state;
  assert_ok(cujit_stream_create(&o.stream));
  pageable((17u << 20) + 8, &o);
  assert_ok(cujit_stream_destroy(o.stream));
}

static void pinned_several_mib(void **state) {
  size_t n = ((9u << 20) + 12) / sizeof(float);
  float *in = NULL, *out = NULL;
  (void)state;
  assert_ok(cujit_host_alloc((void **)&in, n * sizeof(float)));
  assert_ok(cujit_host_alloc((void **)&out, n * sizeof(float)));
  round_trip(in, out, n, NULL);
  assert_ok(cujit_host_free(in));
  assert_ok(cujit_host_free(out));
}

static void empty_buffer_is_a_null_pointer(void **state) {
  cujit_function *f = gpu_function(mod, "is_null");
  int flag = -1;
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_in(NULL, 0), cujit_out(&flag, sizeof flag)));
  assert_int_equal(flag, 1);
}

typedef CUresult (*host_register_fn)(void *, size_t, unsigned);
typedef CUresult (*host_unregister_fn)(void *);
typedef CUresult (*alloc_managed_fn)(CUdeviceptr *, size_t, unsigned);

static void host_memory_is_recognised(void **state) {
  host_register_fn reg = NULL;
  host_unregister_fn unreg = NULL;
  alloc_managed_fn managed = NULL;
  size_t bytes = 1u << 20;
  char *page = NULL, *pinned = NULL, *heap = malloc(bytes);
  CUdeviceptr d = 0, m = 0;
  (void)state;
  assert_ok(cujit_driver_symbol("cuMemHostRegister", (void **)&reg));
  assert_ok(cujit_driver_symbol("cuMemHostUnregister", (void **)&unreg));
  assert_ok(cujit_driver_symbol("cuMemAllocManaged", (void **)&managed));
  assert_int_equal(cj_host_kind_of(heap, bytes), CJ_HOST_PAGEABLE);
  assert_ok(cujit_host_alloc((void **)&pinned, bytes));
  assert_int_equal(cj_host_kind_of(pinned, bytes), CJ_HOST_PINNED);
  assert_int_equal(cj_host_kind_of(pinned + 100, bytes - 100), CJ_HOST_PINNED);
  assert_int_equal(posix_memalign((void **)&page, 4096, 2 * bytes), 0);
  assert_int_equal(cj_host_kind_of(page, 2 * bytes), CJ_HOST_PAGEABLE);
  assert_int_equal(reg(page, bytes, 0), CUDA_SUCCESS); /* only the first half */
  assert_int_equal(cj_host_kind_of(page, bytes), CJ_HOST_PINNED);
  assert_int_equal(cj_host_kind_of(page, 2 * bytes), CJ_HOST_PAGEABLE);
  assert_int_equal(unreg(page), CUDA_SUCCESS);
  assert_ok(cujit_mem_alloc(&d, bytes));
  assert_int_equal(cj_host_kind_of((void *)(uintptr_t)d, bytes), CJ_HOST_DEVICE);
  assert_int_equal(managed(&m, bytes, 1 /* CU_MEM_ATTACH_GLOBAL */), CUDA_SUCCESS);
  assert_int_equal(cj_host_kind_of((void *)(uintptr_t)m, bytes), CJ_HOST_PINNED);
  assert_ok(cujit_mem_free(d));
  assert_ok(cujit_mem_free(m));
  assert_ok(cujit_host_free(pinned));
  free(page);
  free(heap);
}

static void pool_keeps_memory_until_trimmed(void **state) {
  size_t used = 1, kept = 0;
  (void)state;
  pageable(8u << 20, NULL);
  assert_ok(cujit_mem_pool_usage(&used, &kept));
  assert_int_equal(used, 0);
  printf("the pool keeps %zu bytes between launches\n", kept);
  assert_true(kept >= (8u << 20)); /* In and Out of the last launches */
  assert_ok(cujit_mem_pool_trim());
  assert_ok(cujit_mem_pool_usage(&used, &kept));
  assert_int_equal(kept, 0);
  pageable(1u << 20, NULL); /* and it grows again when needed */
}

GPU_GROUP_MAIN(kSrc, "inout.cu", NULL,
               cmocka_unit_test(pageable_several_mib),
               cmocka_unit_test(pageable_on_a_stream),
               cmocka_unit_test(pinned_several_mib),
               cmocka_unit_test(empty_buffer_is_a_null_pointer),
               cmocka_unit_test(host_memory_is_recognised),
               cmocka_unit_test(pool_keeps_memory_until_trimmed))

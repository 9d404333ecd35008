/* test_gpu_abi - structs that grow, on a device: launch options laid out as the first
 * version had them (a local copy of that layout) and as a newer header would (unknown
 * fields at the end) reach the kernel through every launch form, with their shared
 * memory and timing applied; kernel attributes are written only up to the caller's size.
 * The kernel reports the dynamic shared memory it was launched with, so a field read at
 * the wrong place shows. */
#include "gputest.h"

static const char kSrc[] = "extern \"C\" __global__ void report(unsigned *out, unsigned add) {\n"
                           "  unsigned n;\n"
                           "  asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(n));\n"
                           "  out[threadIdx.x] = n + add + threadIdx.x;\n"
                           "}\n";

enum { N = 32, SHARED = 256, ADD = 5 };

/* cujit_launch_options as its first version laid it out. */
typedef struct launch_options_v1 {
  size_t size;
  unsigned shared_bytes;
  CUstream stream;
  float *elapsed_ms;
  unsigned flags;
  cujit_dim3 cluster;
} launch_options_v1;

/* A newer header's: more fields at the end. */
typedef struct launch_options_v3 {
  cujit_launch_options known;
  uint32_t later[2];
} launch_options_v3;

static void expect_report(const unsigned *out, unsigned shared) {
  unsigned i;
  for (i = 0; i < N; i++)
    if (out[i] != shared + ADD + i)
      fail_msg("out[%u] = %u, wanted %u: the options were not read as laid out", i, out[i],
               shared + ADD + i);
}

/* Launches `report` with `o` both ways: by value (the direct path) and with an Out
 * buffer (staged), and checks both results. */
static void launch_both_ways(const cujit_launch_options *o, unsigned shared) {
  cujit_function *f = gpu_function(mod, "report");
  unsigned out[N];
  CUdeviceptr d = 0;
  memset(out, 0, sizeof out);
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(N), o, cujit_out(out, sizeof out),
                            cujit_u32(ADD)));
  expect_report(out, shared);
  memset(out, 0, sizeof out);
  assert_ok(cujit_mem_alloc(&d, sizeof out));
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(N), o, cujit_ptr(d), cujit_u32(ADD)));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(out, d, sizeof out));
  assert_ok(cujit_mem_free(d));
  expect_report(out, shared);
}

static void launch_options_of_an_older_program(void **state) {
  launch_options_v1 old;
  float ms = -1.0f;
  (void)state;
  memset(&old, 0, sizeof old);
  old.size = sizeof old;
  old.shared_bytes = SHARED;
  launch_both_ways((const cujit_launch_options *)&old, SHARED);
  old.size = 0;
  old.elapsed_ms = &ms;
  launch_both_ways((const cujit_launch_options *)&old, SHARED);
  assert_true(ms >= 0.0f);
}

static void launch_options_of_a_newer_program(void **state) {
  launch_options_v3 newer;
  cujit_function *f = gpu_function(mod, "report");
  unsigned out[N];
  float ms = -1.0f;
  (void)state;
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.known.shared_bytes = SHARED;
  launch_both_ways(&newer.known, SHARED);
  newer.known.elapsed_ms = &ms;
  launch_both_ways(&newer.known, SHARED);
  assert_true(ms >= 0.0f);
  /* a field this library does not know, set: nothing runs */
  newer.later[0] = 1;
  memset(out, 0xff, sizeof out);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(N), &newer.known,
                                       cujit_out(out, sizeof out), cujit_u32(ADD)),
                       CUJIT_ERROR_NOT_SUPPORTED, "cujit_launch_options sets fields");
  assert_int_equal(out[0], 0xffffffffu);
}

typedef cujit_status (*report_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, unsigned);

/* cujit_call_ex and bound pointers hand options of another layout to cujit_launch, which
 * reads them as their size says. */
static void typed_calls_with_options_of_other_layouts(void **state) {
  cujit_function *f = gpu_function(mod, "report");
  launch_options_v1 old;
  launch_options_v3 newer;
  unsigned out[N];
  CUdeviceptr d = 0;
  void *ptr = NULL;
  report_fn call;
  (void)state;
  memset(&old, 0, sizeof old);
  old.shared_bytes = SHARED; /* size 0 */
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.known.shared_bytes = 2 * SHARED;
  assert_ok(cujit_call_ex(f, CUJIT_DIM3(1), CUJIT_DIM3(N), (const cujit_launch_options *)&old,
                          CUJIT_OUT_PTR(out, sizeof out), (unsigned)ADD));
  expect_report(out, SHARED);
  assert_ok(cujit_mem_alloc(&d, sizeof out));
  assert_ok(cujit_call_ex(f, CUJIT_DIM3(1), CUJIT_DIM3(N), &newer.known, d, (unsigned)ADD));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(out, d, sizeof out));
  expect_report(out, 2 * SHARED);
  assert_ok(cujit_function_bind(f, &newer.known, &ptr));
  call = (report_fn)ptr;
  assert_ok(call(CUJIT_DIM3(1), CUJIT_DIM3(N), d, ADD));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_copy_dtoh(out, d, sizeof out));
  expect_report(out, 2 * SHARED);
  newer.known.size = 3; /* read at every call */
  assert_status_detail(call(CUJIT_DIM3(1), CUJIT_DIM3(N), d, ADD), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_launch_options.size is 3");
  assert_status_detail(cujit_call_ex(f, CUJIT_DIM3(1), CUJIT_DIM3(N), &newer.known, d,
                                     (unsigned)ADD),
                       CUJIT_ERROR_INVALID_VALUE, "CUJIT_LAUNCH_OPTIONS_INIT");
  cujit_function_unbind(f, ptr);
  assert_ok(cujit_mem_free(d));
}

/* cujit_function_attrs as its first version laid it out. */
typedef struct function_attrs_v1 {
  size_t size;
  int num_regs, static_shared_bytes, max_threads_per_block, local_bytes, const_bytes, ptx_version,
      binary_version, num_params;
} function_attrs_v1;

static void function_attrs_stop_at_the_callers_size(void **state) {
  cujit_function *f = gpu_function(mod, "report");
  cujit_function_attrs now = CUJIT_FUNCTION_ATTRS_INIT;
  struct {
    function_attrs_v1 old;
    unsigned char guard[16];
  } mem;
  struct {
    cujit_function_attrs known;
    int later[2];
  } newer;
  unsigned char guard[sizeof mem.guard];
  int i;
  (void)state;
  assert_ok(cujit_function_get_attrs(f, &now));
  assert_int_equal(now.num_params, 2);
  assert_true(now.max_threads_per_block > 0 && now.ptx_version > 0);
  memset(guard, 0xee, sizeof guard);
  for (i = 0; i < 2; i++) { /* the first version's size, then 0 for it */
    memset(&mem, 0xee, sizeof mem);
    mem.old.size = i ? 0 : sizeof mem.old;
    assert_ok(cujit_function_get_attrs(f, (cujit_function_attrs *)&mem.old));
    assert_int_equal(mem.old.num_regs, now.num_regs);
    assert_int_equal(mem.old.max_threads_per_block, now.max_threads_per_block);
    assert_int_equal(mem.old.binary_version, now.binary_version);
    assert_int_equal(mem.old.num_params, 2);
    assert_memory_equal(mem.guard, guard, sizeof guard);
  }
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.later[0] = 42;
  assert_ok(cujit_function_get_attrs(f, &newer.known));
  assert_int_equal(newer.known.num_params, 2);
  assert_int_equal(newer.later[0], 42);
}

GPU_GROUP_MAIN(kSrc, "abi.cu", NULL, cmocka_unit_test(launch_options_of_an_older_program),
               cmocka_unit_test(launch_options_of_a_newer_program),
               cmocka_unit_test(typed_calls_with_options_of_other_layouts),
               cmocka_unit_test(function_attrs_stop_at_the_callers_size))

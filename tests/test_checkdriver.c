/* test_checkdriver - the checking fake CUDA driver (tests/fakedriver), loaded as cujit loads a
 * real one (CUJIT_LIBCUDA), held to what it promises: device memory that copies really
 * move, queued work that finishes only at a synchronisation, and each check firing: freed
 * memory, another device's or context's memory, memory busy on another stream, a launch
 * parameter pointing at memory that is not live, a parameter asked past the last, a call
 * with no context or in a dead one, a reset context's memory, pinned memory and pools, a
 * device fault (which ends CUDA for the process; a reset answers but revives nothing), a
 * forked child. And cujit's lookups of prebuilt and linked kernels (compressed fatbin
 * entries too), which ask the driver for no parameter past the last. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "dl/driver.h"
#include "fakedriver/checkdriver.h"

static checkdriver_api cd;
static CUcontext primary[2];

static const char kSrc[] = "extern \"C\" __global__ void fill(int *p, int n, char c) {}\n"
                           "extern \"C\" __global__ void checkdriver_fault_here(int *p) {}\n"
                           "struct S { double a; char b; };\n"
                           "__global__ void cxx(S s, float *x, unsigned char u) {}\n";

static int setup(void **state) {
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n != 2) return -1;
  if (checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0) return -1;
  if (cj_cu.cuDevicePrimaryCtxRetain(&primary[0], 0) != CUDA_SUCCESS ||
      cj_cu.cuDevicePrimaryCtxRetain(&primary[1], 1) != CUDA_SUCCESS)
    return -1;
  return 0;
}

/* Asserts that exactly `n` violations were recorded since the last call, the last of them
 * holding `needle`; forgets them. */
static void flagged(unsigned long n, const char *needle) {
  char text[65536];
  unsigned long got = cd.violations();
  cd.report(text, sizeof text);
  cd.clear();
  if (got != n) fail_msg("%lu violations, wanted %lu:\n%s", got, n, text);
  if (needle && !strstr(text, needle)) fail_msg("no \"%s\" in:\n%s", needle, text);
}

static void on(int dev) { assert_int_equal(cj_cu.cuCtxSetCurrent(primary[dev]), CUDA_SUCCESS); }

static CUdeviceptr alloc(size_t n) {
  CUdeviceptr p = 0;
  assert_int_equal(cj_cu.cuMemAlloc(&p, n), CUDA_SUCCESS);
  return p;
}

static CUstream stream(unsigned flags) {
  CUstream s = NULL;
  assert_int_equal(cj_cu.cuStreamCreate(&s, flags), CUDA_SUCCESS);
  return s;
}

/* The CUBIN of kSrc for sm_90, made by NVRTC. */
static const void *cubin(cujit_module **m, size_t *size) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "sm_90";
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(m, kSrc, "check.cu", &o));
  return cujit_module_cubin(*m, size);
}

static CUkernel kernel(CUlibrary *lib, const char *name) {
  cujit_module *m;
  size_t size;
  CUkernel k;
  const void *image = cubin(&m, &size);
  assert_int_equal(cj_cu.cuLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
  cujit_module_destroy(m);
  assert_int_equal(cj_cu.cuLibraryGetKernel(&k, *lib, name), CUDA_SUCCESS);
  return k;
}

static void copies_move_bytes_at_synchronisations(void **state) {
  int in[256], out[256], i;
  unsigned char seen[16];
  CUdeviceptr p;
  CUstream s;
  (void)state;
  on(0);
  p = alloc(sizeof in);
  s = stream(CU_STREAM_NON_BLOCKING);
  for (i = 0; i < 256; i++) in[i] = i * 7;
  assert_int_equal(cj_cu.cuMemcpyHtoD(p, in, sizeof in), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemcpyDtoH(out, p, sizeof out), CUDA_SUCCESS);
  assert_memory_equal(in, out, sizeof in);
  /* a memset on a stream is queued: the device holds the old bytes until a sync */
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 0xab, 16, s), CUDA_SUCCESS);
  assert_int_equal(cd.pending(), 1);
  assert_int_equal(cd.peek(p, seen, 16), 1);
  assert_memory_equal(seen, in, 16);
  assert_int_equal(cj_cu.cuStreamSynchronize(s), CUDA_SUCCESS);
  assert_int_equal(cd.peek(p, seen, 16), 0);
  for (i = 0; i < 16; i++) assert_int_equal(seen[i], 0xab);
  assert_int_equal(cd.pending(), 0);
  assert_int_equal(cd.peek(p + sizeof in, seen, 1), -1); /* past the allocation */
  assert_int_equal(cj_cu.cuStreamDestroy(s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void events_finish_work_up_to_their_record(void **state) {
  CUdeviceptr p;
  CUstream s;
  CUevent e;
  unsigned char seen;
  (void)state;
  on(0);
  p = alloc(64);
  s = stream(CU_STREAM_NON_BLOCKING);
  assert_int_equal(cj_cu.cuEventCreate(&e, 0), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 1, 64, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuEventRecord(e, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 2, 64, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuEventSynchronize(e), CUDA_SUCCESS);
  assert_int_equal(cd.peek(p, &seen, 1), 1); /* the second is still queued */
  assert_int_equal(seen, 1);
  assert_int_equal(cj_cu.cuStreamSynchronize(s), CUDA_SUCCESS);
  assert_int_equal(cd.peek(p, &seen, 1), 0);
  assert_int_equal(seen, 2);
  assert_int_equal(cj_cu.cuEventDestroy(e), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuStreamDestroy(s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void freed_memory_is_flagged(void **state) {
  CUdeviceptr p;
  int v = 1;
  (void)state;
  on(0);
  p = alloc(4096);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  assert_int_not_equal(cj_cu.cuMemcpyHtoD(p + 8, &v, sizeof v), CUDA_SUCCESS);
  flagged(1, "is freed memory (freed by cuMemFree)");
  assert_int_not_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  flagged(1, "cuMemFree: 0x");
  assert_int_not_equal(cj_cu.cuMemFree(0x1234), CUDA_SUCCESS);
  flagged(1, "was never allocated");
}

static void another_devices_memory_is_flagged(void **state) {
  CUdeviceptr p;
  (void)state;
  on(0);
  p = alloc(256);
  on(1);
  cj_cu.cuMemsetD8(p, 0, 256);
  flagged(1, "is memory of device 0, but device 1's context is current");
  on(0);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS); /* device 1 still has it queued */
  flagged(1, "cuMemFree: device memory");
  on(1);
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  on(0);
  p = alloc(256);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void memory_busy_on_another_stream_is_flagged(void **state) {
  CUdeviceptr p;
  CUstream nb, b;
  (void)state;
  on(0);
  p = alloc(1024);
  nb = stream(CU_STREAM_NON_BLOCKING);
  b = stream(CU_STREAM_DEFAULT);
  /* the legacy stream does not wait for a non-blocking stream */
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 1, 1024, nb), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8(p + 512, 2, 16), CUDA_SUCCESS);
  flagged(1, "still in use by unfinished work on another stream (a memset queued there)");
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  /* reading what it writes is a conflict too; after its sync there is none */
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 1, 1024, nb), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuStreamSynchronize(nb), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8(p, 3, 16), CUDA_SUCCESS);
  flagged(0, NULL);
  /* it waits for a blocking stream's work, and a blocking stream for its */
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 4, 1024, b), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8(p, 5, 16), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 6, 1024, b), CUDA_SUCCESS);
  flagged(0, NULL);
  /* the legacy stream's sync waits for b's work queued before its last item, not after */
  assert_int_equal(cj_cu.cuStreamSynchronize(NULL), CUDA_SUCCESS);
  assert_int_equal(cd.pending(), 1);
  assert_int_equal(cj_cu.cuStreamSynchronize(b), CUDA_SUCCESS);
  /* two non-blocking streams never wait for each other */
  {
    CUstream nb2 = stream(CU_STREAM_NON_BLOCKING);
    int host[4] = {0};
    assert_int_equal(cj_cu.cuMemsetD8Async(p, 7, 64, nb), CUDA_SUCCESS);
    assert_int_equal(cj_cu.cuMemcpyDtoHAsync(host, p, sizeof host, nb2), CUDA_SUCCESS);
    flagged(1, "cuMemcpyDtoHAsync: device memory");
    assert_int_equal(cj_cu.cuStreamDestroy(nb2), CUDA_SUCCESS);
  }
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuStreamDestroy(nb), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuStreamDestroy(b), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void launches_check_their_pointers(void **state) {
  CUlibrary lib;
  CUkernel k;
  CUdeviceptr p, q;
  CUcontext mine;
  void *cuCtxCreate = NULL, *cuCtxDestroy = NULL;
  int n = 4;
  char c = 1;
  void *params[3] = {&p, &n, &c};
  size_t off, size;
  (void)state;
  on(0);
  k = kernel(&lib, "fill");
  p = alloc(64);
  assert_int_equal(cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                   CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  flagged(0, NULL);
  /* the end of live memory (an empty array there) is a pointer a kernel may be given */
  p += 64;
  assert_int_equal(cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                   CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  flagged(0, NULL);
  p -= 64;
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_SUCCESS);
  cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
  flagged(1, "kernel 'fill', parameter 0): device address");
  p += 64; /* nor its end, once it is freed */
  cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
  flagged(1, "kernel 'fill', parameter 0): device address");
  /* live memory, but of another context on the same device */
  assert_ok(cujit_driver_get_symbol("cuCtxCreate", &cuCtxCreate));
  assert_ok(cujit_driver_get_symbol("cuCtxDestroy", &cuCtxDestroy));
  q = alloc(64);
  assert_int_equal(((CUresult(*)(CUcontext *, CUctxCreateParams *, unsigned,
                                 CUdevice))cuCtxCreate)(&mine, NULL, 0, 0),
                   CUDA_SUCCESS);
  p = q;
  cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
  flagged(1, "is memory of another context");
  assert_int_equal(((CUresult(*)(CUcontext))cuCtxDestroy)(mine), CUDA_SUCCESS);
  on(0);
  assert_int_equal(cj_cu.cuMemFree(q), CUDA_SUCCESS);
  /* parameters: the count is the image's; past it is flagged */
  assert_int_equal(cj_cu.cuKernelGetParamInfo(k, 2, &off, &size), CUDA_SUCCESS);
  assert_int_equal(off, 12);
  assert_int_equal(size, 1);
  assert_int_equal(cj_cu.cuKernelGetParamInfo(k, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
  flagged(1, "cuKernelGetParamInfo: parameter 3 asked of kernel 'fill', which has 3");
  assert_int_equal(cj_cu.cuLibraryUnload(lib), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void *no_context_thread(void *arg) {
  CUdeviceptr p;
  (void)arg;
  return (void *)(intptr_t)cj_cu.cuMemAlloc(&p, 64);
}

static void a_call_with_no_context_is_flagged(void **state) {
  pthread_t t;
  void *r;
  (void)state;
  assert_int_equal(pthread_create(&t, NULL, no_context_thread, NULL), 0);
  assert_int_equal(pthread_join(t, &r), 0);
  assert_int_equal((intptr_t)r, CUDA_ERROR_INVALID_CONTEXT);
  flagged(1, "cuMemAlloc: called with no current context");
}

/* cujit's lookups of a prebuilt CUBIN's, an nvcc fatbin's and a linked module's kernels
 * know each kernel's parameter count from the image, so the driver is asked for none past
 * the last (the fake flags any such question, as compute-sanitizer reports it). */
static void lookups_ask_no_parameter_past_the_last(void **state) {
  static const char lib_src[] = "__device__ int twice(int x) { return 2 * x; }\n";
  static const char main_src[] =
      "__device__ int twice(int x);\n"
      "extern \"C\" __global__ void go(int *p, char c) { *p = twice(c); }\n";
  cujit_link_part parts[2] = {CUJIT_LINK_PART_INIT, CUJIT_LINK_PART_INIT};
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *c, *m;
  cujit_function *fn;
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  char dir[] = "/tmp/checkdriver-XXXXXX", cmd[8192], out[4096], path[4200];
  size_t size;
  const void *image;
  (void)state;
  on(0);
  image = cubin(&c, &size);
  assert_ok(cujit_module_from_image(&m, image, size, "check.cubin"));
  assert_ok(cujit_module_get_function(m, "fill", &fn));
  assert_ok(cujit_function_get_attrs(fn, &a));
  assert_int_equal(a.num_params, 3);
  assert_ok(cujit_module_get_function(m, "cxx", &fn));
  assert_ok(cujit_function_get_attrs(fn, &a));
  assert_int_equal(a.num_params, 3);
  cujit_module_destroy(m);
  cujit_module_destroy(c);
  parts[0].kind = parts[1].kind = CUJIT_LINK_SOURCE;
  parts[0].data = main_src;
  parts[0].name = "main.cu";
  parts[1].data = lib_src;
  parts[1].name = "lib.cu";
  o.arch = "sm_90";
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  assert_ok(cujit_module_get_function(m, "go", &fn));
  assert_ok(cujit_function_get_attrs(fn, &a));
  assert_int_equal(a.num_params, 2);
  cujit_module_destroy(m);
  flagged(0, NULL);
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    test_skip_part("lookups_ask_no_parameter_past_the_last: nvcc is not on PATH (no fatbin)");
    return;
  }
  assert_non_null(mkdtemp(dir));
  assert_int_equal(test_write_file(dir, "k.cu", kSrc), 0);
  snprintf(path, sizeof path, "%s/k.fatbin", dir);
  snprintf(cmd, sizeof cmd,
           "nvcc -fatbin -gencode arch=compute_90,code=[sm_90,compute_90] -o '%s' '%s/k.cu' 2>&1",
           path, dir);
  if (test_capture(cmd, out, sizeof out) != 0) fail_msg("%s: %s", cmd, out);
  assert_ok(cujit_module_from_image_file(&m, path));
  assert_ok(cujit_module_get_function(m, "fill", &fn));
  assert_ok(cujit_function_get_attrs(fn, &a));
  assert_int_equal(a.num_params, 3);
  cujit_module_destroy(m);
  /* compressed entries (zstd): read once decompressed */
  snprintf(cmd, sizeof cmd,
           "nvcc -fatbin -Xfatbin=-compress-all -gencode arch=compute_90,code=[sm_90,compute_90] "
           "-o '%s' '%s/k.cu' 2>&1",
           path, dir);
  if (test_capture(cmd, out, sizeof out) != 0) fail_msg("%s: %s", cmd, out);
  assert_ok(cujit_module_from_image_file(&m, path));
  assert_ok(cujit_module_get_function(m, "cxx", &fn));
  assert_ok(cujit_function_get_attrs(fn, &a));
  assert_int_equal(a.num_params, 3);
  cujit_module_destroy(m);
  test_rmtree(dir);
  flagged(0, NULL);
}

typedef CUresult (*reset_fn)(CUdevice);

/* The reset as a program linked with libcuda calls it: by its symbol. */
static CUresult reset_result(int dev) {
  void *h = dlopen(getenv("CUJIT_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  reset_fn f;
  CUresult r;
  assert_non_null(h);
  *(void **)&f = dlsym(h, "cuDevicePrimaryCtxReset_v2");
  assert_non_null(f);
  r = f(dev);
  dlclose(h);
  return r;
}

static void reset(int dev) { assert_int_equal(reset_result(dev), CUDA_SUCCESS); }

static void a_reset_context_is_dead(void **state) {
  CUdeviceptr q, r, again;
  CUcontext c;
  CUmemoryPool pool;
  CUmemPoolProps props;
  unsigned long long before, after;
  unsigned flags;
  int active;
  void *pinned;
  (void)state;
  on(0);
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  assert_int_equal(cj_cu.cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxGetId(NULL, &before), CUDA_SUCCESS);
  q = alloc(1024);
  r = alloc(4096);
  assert_int_equal(cj_cu.cuMemHostAlloc(&pinned, 4096, 0), CUDA_SUCCESS);
  reset(0);
  /* the handle stays current, the context is dead until retained again */
  assert_int_equal(cj_cu.cuCtxGetCurrent(&c), CUDA_SUCCESS);
  assert_ptr_equal(c, primary[0]);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  assert_int_equal(active, 0);
  assert_int_equal(cj_cu.cuMemAlloc(&again, 64), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  flagged(1, "cuMemAlloc: called in a dead context");
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxGetId(NULL, &after), CUDA_SUCCESS);
  assert_true(after != before);
  /* its memory is handed out again, as on a real device */
  {
    CUdeviceptr got[64];
    int i, n = 0, found = 0;
    while (n < 64 && !found) found = (got[n++] = alloc(1024)) == q;
    assert_true(found);
    for (i = 0; i < n - 1; i++) assert_int_equal(cj_cu.cuMemFree(got[i]), CUDA_SUCCESS);
    again = q;
  }
  assert_int_not_equal(cj_cu.cuMemFree(r), CUDA_SUCCESS);
  flagged(1, "is memory of a dead context");
  assert_int_equal(cj_cu.cuMemFreeHost(pinned), CUDA_SUCCESS);
  flagged(1, "cuMemFreeHost: ");
  assert_int_not_equal(cj_cu.cuMemAllocFromPoolAsync(&r, 64, pool, NULL), CUDA_SUCCESS);
  flagged(1, "was made in a context that died");
  assert_int_equal(cj_cu.cuMemFree(again), CUDA_SUCCESS);
  flagged(0, NULL);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS); /* the retain above */
}

/* Device 1's side of the fault test: a thread with device 1's context current from before
 * the fault (no context can be made current after it). It waits at `gate` before each of
 * its steps and after the last. */
static struct other_side {
  pthread_barrier_t gate;
  CUdeviceptr dead; /* device 0's memory, dead after its reset */
  CUresult set, alloc, memset, free;
} side;

static void *other_side(void *arg) {
  CUdeviceptr q = 0;
  (void)arg;
  side.set = cj_cu.cuCtxSetCurrent(primary[1]);
  pthread_barrier_wait(&side.gate); /* the fault */
  pthread_barrier_wait(&side.gate);
  side.alloc = cj_cu.cuMemAlloc(&q, 64);
  pthread_barrier_wait(&side.gate); /* device 0's reset */
  pthread_barrier_wait(&side.gate);
  side.memset = cj_cu.cuMemsetD8(side.dead, 0, 64);
  side.free = cj_cu.cuMemFree(side.dead);
  pthread_barrier_wait(&side.gate);
  return NULL;
}

/* Last in the group: a fault ends CUDA for the whole process, as cuda.h says of
 * CUDA_ERROR_ILLEGAL_ADDRESS and an H200 showed. Every call that does work fails, in every
 * context; a reset answers CUDA_SUCCESS and kills the context, but no retain,
 * cuCtxSetCurrent or cuCtxCreate brings one back, and the dead context's memory stays dead:
 * a later use or free of it is still flagged. */
static void a_fault_ends_cuda_for_the_process(void **state) {
  CUlibrary lib;
  CUkernel k, bad;
  CUdeviceptr p, q;
  CUcontext c = NULL;
  CUstream s;
  CUdevice d = -1;
  pthread_t t;
  int n = 1, count = 0, active = 1;
  unsigned flags = 0;
  char ch = 0;
  unsigned long long id = 0;
  void *params[3] = {&p, &n, &ch};
  void *create = NULL;
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuCtxCreate", &create));
  on(0);
  p = alloc(64);
  side.dead = alloc(64);
  s = stream(CU_STREAM_NON_BLOCKING);
  bad = kernel(&lib, "checkdriver_fault_here");
  assert_int_equal(cj_cu.cuLibraryGetKernel(&k, lib, "fill"), CUDA_SUCCESS);
  assert_int_equal(pthread_barrier_init(&side.gate, NULL, 2), 0);
  assert_int_equal(pthread_create(&t, NULL, other_side, NULL), 0);
  pthread_barrier_wait(&side.gate);
  assert_int_equal(side.set, CUDA_SUCCESS);
  cd.fault_next_launch(); /* the kernel launched next faults, whatever its name */
  assert_int_equal(cj_cu.cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
                   CUDA_SUCCESS); /* found at the next synchronisation */
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(cj_cu.cuMemAlloc(&q, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(cj_cu.cuLaunchKernel((CUfunction)bad, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
                   CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(cj_cu.cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  /* a free fails and frees nothing, but is checked: a second one is flagged */
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(0, NULL);
  assert_int_equal(cj_cu.cuMemFree(p), CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(1, "freed twice (its first free failed with the sticky error");
  assert_int_equal(cj_cu.cuMemFree(p + 8), CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(1, "is inside an allocation, not its start");
  /* the other device's context fails too */
  pthread_barrier_wait(&side.gate);
  pthread_barrier_wait(&side.gate);
  assert_int_equal(side.alloc, CUDA_ERROR_ILLEGAL_ADDRESS);
  /* no context can be made current or made */
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary[1]), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(cj_cu.cuCtxGetCurrent(&c), CUDA_SUCCESS);
  assert_ptr_equal(c, primary[0]); /* unchanged */
  assert_int_equal(((CUresult(*)(CUcontext *, CUctxCreateParams *, unsigned,
                                 CUdevice))create)(&c, NULL, 0, 0),
                   CUDA_ERROR_ILLEGAL_ADDRESS);
  /* queries still answer, and a stream can be destroyed */
  assert_int_equal(cj_cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
  assert_int_equal(count, 2);
  assert_int_equal(cj_cu.cuCtxGetDevice(&d), CUDA_SUCCESS);
  assert_int_equal(d, 0);
  assert_int_equal(cj_cu.cuStreamDestroy(s), CUDA_SUCCESS);
  flagged(0, NULL);
  /* the reset answers CUDA_SUCCESS and kills the context, and nothing brings it back */
  reset(0);
  assert_int_equal(cj_cu.cuCtxGetId(primary[0], &id), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  assert_int_equal(active, 0);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&c, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  assert_int_equal(active, 0);
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary[0]), CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(0, NULL);
  /* the dead context's memory stays dead: a use or free of it elsewhere is still flagged */
  pthread_barrier_wait(&side.gate);
  pthread_barrier_wait(&side.gate);
  assert_int_equal(pthread_join(t, NULL), 0);
  pthread_barrier_destroy(&side.gate);
  assert_int_equal(side.memset, CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(side.free, CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(2, "cuMemFree: 0x"); /* the memset's and the free's */
  /* a release answers too; device 1's reset kills its context, and no retain revives it */
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  reset(1);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&c, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
  flagged(0, NULL);
}

static void pools_order_reuse_by_stream(void **state) {
  CUmemoryPool pool;
  CUmemPoolProps props;
  CUdeviceptr p, q, r;
  CUstream s, t;
  cuuint64_t reserved = 0, used = 0, keep = 0;
  (void)state;
  on(0);
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  assert_int_equal(cj_cu.cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  keep = UINT64_MAX;
  assert_int_equal(cj_cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
                   CUDA_SUCCESS);
  s = stream(CU_STREAM_NON_BLOCKING);
  t = stream(CU_STREAM_NON_BLOCKING);
  assert_int_equal(cj_cu.cuMemAllocFromPoolAsync(&p, 4096, pool, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemsetD8Async(p, 1, 4096, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFreeAsync(p, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemAllocFromPoolAsync(&q, 4096, pool, t), CUDA_SUCCESS);
  assert_int_not_equal(q, p); /* its free has not run: not for another stream */
  assert_int_equal(cj_cu.cuMemAllocFromPoolAsync(&r, 4096, pool, s), CUDA_SUCCESS);
  assert_int_equal(r, p); /* in the same stream's order */
  assert_int_equal(cj_cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                               &reserved),
                   CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used),
                   CUDA_SUCCESS);
  assert_int_equal(reserved, 8192);
  assert_int_equal(used, 8192);
  /* a free while another stream still uses it */
  assert_int_equal(cj_cu.cuMemsetD8Async(q, 2, 4096, t), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFreeAsync(q, s), CUDA_SUCCESS);
  flagged(1, "cuMemFreeAsync: device memory");
  cj_cu.cuMemsetD8Async(q, 3, 16, t); /* refused here; undefined on a real device */
  flagged(1, "freed memory (freed by cuMemFreeAsync)");
  assert_int_equal(cj_cu.cuMemFreeAsync(r, s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                               &reserved),
                   CUDA_SUCCESS);
  assert_int_equal(reserved, 0);
  assert_int_equal(cj_cu.cuStreamDestroy(s), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuStreamDestroy(t), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemPoolDestroy(pool), CUDA_SUCCESS);
  flagged(0, NULL);
}

static void a_forked_child_is_flagged(void **state) {
  pid_t pid;
  int st;
  (void)state;
  on(0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    CUdeviceptr p;
    cd.clear();
    cj_cu.cuMemAlloc(&p, 64);
    _exit(cd.violations() == 1 ? 0 : 1);
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  flagged(0, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_move_bytes_at_synchronisations),
      cmocka_unit_test(events_finish_work_up_to_their_record),
      cmocka_unit_test(freed_memory_is_flagged),
      cmocka_unit_test(another_devices_memory_is_flagged),
      cmocka_unit_test(memory_busy_on_another_stream_is_flagged),
      cmocka_unit_test(launches_check_their_pointers),
      cmocka_unit_test(a_call_with_no_context_is_flagged),
      cmocka_unit_test(lookups_ask_no_parameter_past_the_last),
      cmocka_unit_test(pools_order_reuse_by_stream),
      cmocka_unit_test(a_forked_child_is_flagged),
      cmocka_unit_test(a_reset_context_is_dead),
      cmocka_unit_test(a_fault_ends_cuda_for_the_process), /* last: it ends CUDA */
  };
  return test_group_result(cmocka_run_group_tests(tests, setup, NULL));
}

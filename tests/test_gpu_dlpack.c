/* test_gpu_dlpack - arrays lent and borrowed as DLPack tensors on a GPU: a strided, reversed
 * view lent with its strides and borrowed back over the same memory, read and written from
 * both sides; every element type there and back; a lent tensor keeping the memory after
 * every array is destroyed, and giving it back to the pool at its deleter, also called from
 * other threads, some with no current context; read-only marks; the device a wrapped
 * array's memory is on, as the driver says (device, managed, page-locked); borrowed memory
 * the driver knows otherwise (managed, page-locked, host, another device) refused with the
 * deleter called once; the legacy struct; and a borrowed tensor's deleter called only after
 * the work on its array's stream has finished. The exchange with CuPy is dlpack_cupy's. */
#include <pthread.h>

#include "gputest.h"
#include "dlpacktest.h"

/* Lent tensors whose deleter the tests count: cujit's deleter, wrapped. */
static void (*cujit_deleter)(DLManagedTensorVersioned *);
static long lent_deleted;

static void counting_deleter(DLManagedTensorVersioned *t) {
  __atomic_add_fetch(&lent_deleted, 1, __ATOMIC_ACQ_REL);
  cujit_deleter(t);
}

static DLManagedTensorVersioned *lend(const cujit_array *a, unsigned flags) {
  DLManagedTensorVersioned *t = NULL;
  assert_ok(cujit_array_to_dlpack(a, flags, &t));
  assert_non_null(t);
  cujit_deleter = t->deleter;
  t->deleter = counting_deleter;
  return t;
}

static size_t pool_in_use(void) {
  size_t used = 0;
  assert_ok(cujit_mem_pool_get_usage(&used, NULL));
  return used;
}

static int current_device(void) {
  int d = -1;
  assert_ok(cujit_device_get_current(&d));
  return d;
}

/* ---- lending and borrowing back ---- */

/* x (4, 6) = 0..23; v = x[:, 5::-2] (4, 3), strides (6, -2). */
static void a_reversed_view_there_and_back(void **state) {
  const int64_t m[] = {4, 6};
  float host[24], got[12], want[12], seven = 7;
  cujit_array *x = NULL, *v = NULL, *b = NULL;
  DLManagedTensorVersioned *t;
  DLTensor *d;
  long before = lent_deleted;
  size_t used0;
  int i, j;
  (void)state;
  for (i = 0; i < 24; i++) host[i] = (float)i;
  used0 = pool_in_use();
  assert_ok(cujit_array_from_host(&x, CUJIT_TYPE_F32, 2, m, host));
  assert_ok(cujit_array_slice(x, 1, 5, -1, -2, &v));
  t = lend(v, 0);
  d = &t->dl_tensor;
  assert_int_equal(t->version.major, 1);
  assert_int_equal(t->version.minor, DLPACK_MINOR_VERSION);
  assert_int_equal(t->flags, 0);
  assert_int_equal(d->device.device_type, kDLCUDA);
  assert_int_equal(d->device.device_id, current_device());
  assert_int_equal(d->dtype.code, kDLFloat);
  assert_int_equal(d->dtype.bits, 32);
  assert_int_equal(d->dtype.lanes, 1);
  assert_int_equal(d->ndim, 2);
  assert_int_equal(d->shape[0], 4);
  assert_int_equal(d->shape[1], 3);
  assert_int_equal(d->strides[0], 6);
  assert_int_equal(d->strides[1], -2);
  assert_int_equal(d->byte_offset, 0);
  assert_true((CUdeviceptr)(uintptr_t)d->data == cujit_array_data(v));
  assert_true((CUdeviceptr)(uintptr_t)d->data == cujit_array_data(x) + 5 * 4);
  /* the array and its view go; the tensor keeps the memory */
  cujit_array_destroy(v);
  cujit_array_destroy(x);
  assert_int_equal(lent_deleted, before);
  assert_true(pool_in_use() > used0);
  assert_ok(cujit_array_from_dlpack(&b, t, 0));
  assert_true(cujit_array_data(b) == (CUdeviceptr)(uintptr_t)d->data);
  assert_int_equal(cujit_array_stride(b, 1), -2);
  assert_int_equal(cujit_array_contiguous(b), 0);
  assert_ok(cujit_array_read(b, got, sizeof got));
  for (i = 0; i < 4; i++)
    for (j = 0; j < 3; j++) want[i * 3 + j] = (float)(i * 6 + 5 - 2 * j);
  assert_memory_equal(got, want, sizeof got);
  /* written through the borrowed array: the lent view's elements change */
  assert_ok(cujit_array_fill(b, &seven));
  assert_ok(cujit_array_read(b, got, sizeof got));
  for (i = 0; i < 12; i++) assert_true(got[i] == 7);
  assert_int_equal(lent_deleted, before);
  cujit_array_destroy(b); /* the last holder: cujit's own deleter, once; the memory back */
  assert_int_equal(lent_deleted, before + 1);
  assert_int_equal(pool_in_use(), used0);
}

/* What the other side sees: a write through a borrowed array lands in the lent one's memory. */
static void writes_are_seen_on_the_other_side(void **state) {
  const int64_t n = 64;
  float host[64], got[64], three = 3;
  cujit_array *a = NULL, *b = NULL, *part = NULL;
  int i;
  (void)state;
  for (i = 0; i < 64; i++) host[i] = (float)i;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, 1, &n, host));
  assert_ok(cujit_array_from_dlpack(&b, lend(a, 0), 0));
  assert_ok(cujit_array_slice(b, 0, 1, 64, 2, &part)); /* odd elements, through b */
  assert_ok(cujit_array_fill(part, &three));
  assert_ok(cujit_array_read(a, got, sizeof got));
  for (i = 0; i < 64; i++) assert_true(got[i] == (i % 2 ? 3.0f : (float)i));
  cujit_array_destroy(part);
  cujit_array_destroy(b);
  cujit_array_destroy(a);
}

static void every_type_there_and_back(void **state) {
  static const struct {
    int type;
    uint8_t code;
  } types[] = {{CUJIT_TYPE_BOOL, kDLBool},   {CUJIT_TYPE_I8, kDLInt},
               {CUJIT_TYPE_U8, kDLUInt},     {CUJIT_TYPE_I16, kDLInt},
               {CUJIT_TYPE_U16, kDLUInt},    {CUJIT_TYPE_I32, kDLInt},
               {CUJIT_TYPE_U32, kDLUInt},    {CUJIT_TYPE_I64, kDLInt},
               {CUJIT_TYPE_U64, kDLUInt},    {CUJIT_TYPE_F16, kDLFloat},
               {CUJIT_TYPE_BF16, kDLBfloat}, {CUJIT_TYPE_F32, kDLFloat},
               {CUJIT_TYPE_F64, kDLFloat},   {CUJIT_TYPE_C64, kDLComplex},
               {CUJIT_TYPE_C128, kDLComplex}};
  unsigned char a_host[100 * 16], b_host[100 * 16];
  size_t k;
  (void)state;
  for (k = 0; k < sizeof types / sizeof *types; k++) {
    cujit_array *a = NULL, *b = NULL;
    DLManagedTensorVersioned *t;
    size_t bytes;
    assert_ok(cujit_array_arange(&a, (cujit_type)types[k].type, 0, 100, 1));
    bytes = cujit_array_nbytes(a);
    t = lend(a, 0);
    assert_int_equal(t->dl_tensor.dtype.code, types[k].code);
    assert_int_equal(t->dl_tensor.dtype.bits, 8 * cujit_type_size((cujit_type)types[k].type));
    assert_int_equal(t->dl_tensor.dtype.lanes, 1);
    assert_ok(cujit_array_from_dlpack(&b, t, 0));
    assert_int_equal(cujit_array_type(b), types[k].type);
    assert_ok(cujit_array_read(a, a_host, bytes));
    assert_ok(cujit_array_read(b, b_host, bytes));
    assert_memory_equal(a_host, b_host, bytes);
    cujit_array_destroy(a);
    cujit_array_destroy(b);
  }
}

/* ---- deleters ---- */

typedef struct deleters_job {
  DLManagedTensorVersioned **t;
  int n, device; /* the device to make current first, or -1: none */
} deleters_job;

static void *call_deleters(void *p) {
  deleters_job *j = p;
  int i;
  if (j->device >= 0) assert_ok(cujit_device_set_current(j->device));
  for (i = 0; i < j->n; i++) j->t[i]->deleter(j->t[i]);
  return NULL;
}

/* 32 tensors lent from arrays already destroyed; 8 threads call their deleters, every
 * other one without a current context: each is called once, and every byte goes back. */
static void deleters_from_other_threads(void **state) {
  enum { N = 32, THREADS = 8 };
  DLManagedTensorVersioned *t[N];
  deleters_job jobs[THREADS];
  pthread_t th[THREADS];
  const int64_t n = 1000;
  long before = lent_deleted;
  size_t used0 = pool_in_use();
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    cujit_array *a = NULL;
    assert_ok(cujit_array_zeros(&a, i % 2 ? CUJIT_TYPE_F64 : CUJIT_TYPE_I8, 1, &n));
    t[i] = lend(a, 0);
    cujit_array_destroy(a);
  }
  assert_true(pool_in_use() > used0);
  for (i = 0; i < THREADS; i++) {
    jobs[i].t = t + i * (N / THREADS);
    jobs[i].n = N / THREADS;
    jobs[i].device = i % 2 ? current_device() : -1;
    assert_int_equal(pthread_create(&th[i], NULL, call_deleters, &jobs[i]), 0);
  }
  for (i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(lent_deleted, before + N);
  assert_int_equal(pool_in_use(), used0);
  assert_ok(cujit_synchronize());
}

/* A borrowed tensor's deleter runs after the work queued on its array's stream. */
static CUstream watched;
static int stream_done_at_delete = -1;
typedef CUresult (*stream_query_fn)(CUstream);
static stream_query_fn stream_query;

static void deleter_checking_the_stream(DLManagedTensorVersioned *self) {
  stream_done_at_delete = stream_query(watched) == CUDA_SUCCESS;
  dl_deleter(self);
}

static void borrowed_memory_is_given_back_after_its_work(void **state) {
  const int64_t n = 4096;
  CUdeviceptr mem = 0;
  cujit_array *b = NULL;
  cujit_function *spin = gpu_function(mod, "spin_then_write");
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_arg args[3];
  DLManagedTensorVersioned *t;
  dl_spec s = dl_f32(0);
  long before = dl_deleted_count();
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuStreamQuery", (void **)&stream_query));
  assert_ok(cujit_mem_alloc(&mem, (size_t)n * 4));
  assert_ok(cujit_stream_create(&watched));
  s.data = mem, s.shape = &n, s.device_id = current_device();
  t = dl_tensor(&s);
  t->deleter = deleter_checking_the_stream;
  assert_ok(cujit_array_from_dlpack(&b, t, 0));
  assert_ok(cujit_array_set_stream(b, watched));
  o.stream = watched;
  args[0] = cujit_array_arg(b), args[1] = cujit_i64(n), args[2] = cujit_i64(200000000);
  assert_ok(cujit_launch(spin, CUJIT_DIM3(16), CUJIT_DIM3(256), args, 3, &o));
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before + 1);
  assert_int_equal(stream_done_at_delete, 1);
  assert_ok(cujit_stream_destroy(watched));
  assert_ok(cujit_mem_free(mem));
}

/* ---- read-only ---- */

static void read_only_marks(void **state) {
  const int64_t n = 16;
  cujit_array *a = NULL, *b = NULL, *v = NULL;
  DLManagedTensorVersioned *t;
  long before = lent_deleted;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
  t = lend(a, CUJIT_DLPACK_READ_ONLY);
  assert_int_equal(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  assert_status_detail(cujit_array_from_dlpack(&b, t, 0), CUJIT_ERROR_INVALID_VALUE,
                       "the tensor is read-only");
  assert_int_equal(lent_deleted, before + 1); /* the refusal gave it back */
  t = lend(a, CUJIT_DLPACK_READ_ONLY);
  assert_ok(cujit_array_from_dlpack(&b, t, CUJIT_DLPACK_READ_ONLY));
  /* lent again, from b or a view of it, without the flag: still read-only */
  assert_ok(cujit_array_slice(b, 0, 0, 16, 4, &v));
  t = lend(v, 0);
  assert_int_equal(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  t->deleter(t);
  t = lend(a, 0); /* a itself was never borrowed read-only */
  assert_int_equal(t->flags, 0);
  t->deleter(t);
  cujit_array_destroy(v);
  cujit_array_destroy(b);
  cujit_array_destroy(a);
  assert_int_equal(lent_deleted, before + 4);
}

/* ---- memory the driver knows ---- */

typedef CUresult (*alloc_managed_fn)(CUdeviceptr *, size_t, unsigned);
typedef CUresult (*mem_free_fn)(CUdeviceptr);

static void wrapped_memory_is_named_as_the_driver_says(void **state) {
  const int64_t n = 256;
  CUdeviceptr dev = 0, managed = 0;
  void *pinned = NULL;
  alloc_managed_fn alloc_managed;
  mem_free_fn mem_free;
  cujit_array *a = NULL;
  DLManagedTensorVersioned *t = NULL;
  float *host = malloc(1024);
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuMemAllocManaged", (void **)&alloc_managed));
  assert_ok(cujit_driver_get_symbol("cuMemFree", (void **)&mem_free));
  assert_ok(cujit_mem_alloc(&dev, 1024));
  assert_int_equal(alloc_managed(&managed, 1024, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  assert_ok(cujit_host_alloc(&pinned, 1024));
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, dev));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(t->dl_tensor.device.device_id, current_device());
  t->deleter(t);
  cujit_array_destroy(a);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, managed));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDAManaged);
  assert_int_equal(t->dl_tensor.device.device_id, 0);
  t->deleter(t);
  cujit_array_destroy(a);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, (CUdeviceptr)(uintptr_t)pinned));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDAHost);
  assert_int_equal(t->dl_tensor.device.device_id, 0);
  t->deleter(t);
  cujit_array_destroy(a);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, (CUdeviceptr)(uintptr_t)host));
  assert_status_detail(cujit_array_to_dlpack(a, 0, &t), CUJIT_ERROR_INVALID_VALUE,
                       "which the driver does not know as device, managed or page-locked memory");
  assert_null(t);
  cujit_array_destroy(a);
  assert_ok(cujit_host_free(pinned));
  assert_int_equal(mem_free(managed), CUDA_SUCCESS);
  assert_ok(cujit_mem_free(dev));
  free(host);
}

/* Borrows a tensor of s and expects a refusal containing needle, the deleter called once. */
static void refused(const dl_spec *s, cujit_status want, const char *needle) {
  DLManagedTensorVersioned *t = dl_tensor(s);
  cujit_array *b = NULL;
  long before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack(&b, t, 0), want, needle);
  assert_null(b);
  assert_int_equal(dl_deleted_count(), before + 1);
}

static void borrowed_memory_the_driver_knows_otherwise(void **state) {
  const int64_t n = 256;
  CUdeviceptr dev = 0, managed = 0;
  void *pinned = NULL;
  alloc_managed_fn alloc_managed;
  mem_free_fn mem_free;
  float *host = malloc(1024);
  dl_spec s = dl_f32(0);
  int count = 0;
  (void)state;
  s.shape = &n, s.device_id = current_device();
  assert_ok(cujit_driver_get_symbol("cuMemAllocManaged", (void **)&alloc_managed));
  assert_ok(cujit_driver_get_symbol("cuMemFree", (void **)&mem_free));
  assert_ok(cujit_mem_alloc(&dev, 1024));
  assert_int_equal(alloc_managed(&managed, 1024, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  assert_ok(cujit_host_alloc(&pinned, 1024));
  s.data = managed;
  refused(&s, CUJIT_ERROR_INVALID_VALUE,
          "the tensor is in CUDA managed memory (the tensor says kDLCUDA; the driver says "
          "managed)");
  s.device_type = kDLCUDAManaged;
  refused(&s, CUJIT_ERROR_INVALID_VALUE, "(kDLCUDAManaged), which cujit does not take");
  s.device_type = kDLCUDA, s.data = (uint64_t)(uintptr_t)pinned;
  refused(&s, CUJIT_ERROR_INVALID_VALUE, "is page-locked host memory");
  s.data = (uint64_t)(uintptr_t)host;
  refused(&s, CUJIT_ERROR_INVALID_VALUE, "but the driver does not know its memory at 0x");
  assert_ok(cujit_device_get_count(&count));
  s.data = dev, s.device_id = count;
  refused(&s, CUJIT_ERROR_NO_DEVICE, "but the driver lists");
  if (count > 1) { /* memory of this device said to be another's */
    s.device_id = current_device() == 0 ? 1 : 0;
    refused(&s, CUJIT_ERROR_INVALID_VALUE, "but its memory is on device");
  }
  s.device_id = current_device(); /* and taken when it says where it is */
  {
    cujit_array *b = NULL;
    long before = dl_deleted_count();
    assert_ok(cujit_array_from_dlpack(&b, dl_tensor(&s), 0));
    assert_int_equal(dl_deleted_count(), before);
    cujit_array_destroy(b);
    assert_int_equal(dl_deleted_count(), before + 1);
  }
  assert_ok(cujit_host_free(pinned));
  assert_int_equal(mem_free(managed), CUDA_SUCCESS);
  assert_ok(cujit_mem_free(dev));
  free(host);
}

/* The legacy struct, over memory of the test's own, with a byte offset. */
static void legacy_tensor_borrowed(void **state) {
  const int64_t n = 100;
  int32_t host[128], got[100];
  CUdeviceptr mem = 0;
  cujit_array *b = NULL;
  dl_spec s = dl_f32(0);
  long before = dl_deleted_count();
  int i;
  (void)state;
  for (i = 0; i < 128; i++) host[i] = i * 3;
  assert_ok(cujit_mem_alloc(&mem, sizeof host));
  assert_ok(cujit_mem_copy_htod(mem, host, sizeof host));
  s.code = kDLInt, s.bits = 32, s.shape = &n, s.data = mem, s.byte_offset = 28 * 4;
  s.device_id = current_device();
  assert_ok(cujit_array_from_dlpack_legacy(&b, dl_tensor_legacy(&s), 0));
  assert_true(cujit_array_data(b) == mem + 28 * 4);
  assert_ok(cujit_array_read(b, got, sizeof got));
  assert_memory_equal(got, host + 28, sizeof got);
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before + 1);
  assert_ok(cujit_mem_free(mem));
}

static const char kSource[] =
    "extern \"C\" __global__ void spin_then_write(float *x, long long n, long long cycles) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = 1;\n"
    "}\n";

GPU_GROUP_MAIN(kSource, "dlpack_test.cu", NULL, cmocka_unit_test(a_reversed_view_there_and_back),
               cmocka_unit_test(writes_are_seen_on_the_other_side),
               cmocka_unit_test(every_type_there_and_back),
               cmocka_unit_test(deleters_from_other_threads),
               cmocka_unit_test(borrowed_memory_is_given_back_after_its_work),
               cmocka_unit_test(read_only_marks),
               cmocka_unit_test(wrapped_memory_is_named_as_the_driver_says),
               cmocka_unit_test(borrowed_memory_the_driver_knows_otherwise),
               cmocka_unit_test(legacy_tensor_borrowed))

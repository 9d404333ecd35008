/* test_dlpack_driver - DLPack lending and borrowing on the checking fake driver (two
 * devices; tests/fakedriver), which flags every use or free of memory that is freed, of
 * another device or context, or busy on another stream, and every call made with no
 * current context: a reversed view lent with its fields right, its memory kept after every
 * array is destroyed and given back at the deleter; every type there and back, bytes
 * compared; deleters called from 8 threads at once, some with no context and some on the
 * other device; a lent array of device 1; borrowed memory checked against the driver
 * (device, host, page-locked, another device, a device it does not list); a borrowed
 * tensor's deleter called after the work queued on its array's stream has run, also from a
 * thread with no context; a borrowed array lent again, the producer's deleter waiting for
 * both; borrowing and destroying from 8 threads; and, in the fault-injection build, every
 * allocation of a borrow and of a lend failing in turn, the tensor handed back exactly once
 * each time (under AddressSanitizer's leak check in scripts/check). */
#include <pthread.h>

#include "testutil.h"
#include "dlpacktest.h"
#include "fakedriver/checkdriver.h"

#ifdef CUJIT_FAULT_INJECTION
void cujit_test_fail_alloc_after(long n);
long cujit_test_alloc_countdown(void);
#endif

static checkdriver_api cd;

static int setup(void **state) {
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n != 2) return -1;
  if (checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0) return -1;
  return cujit_device_set_current(0) == CUJIT_OK ? 0 : -1;
}

/* Asserts that the fake driver flagged nothing since the last call. */
static void nothing_flagged(void) {
  char text[65536];
  unsigned long got = cd.violations();
  cd.report(text, sizeof text);
  cd.clear();
  if (got) fail_msg("%lu violations:\n%s", got, text);
}

/* cujit's deleter of lent tensors, wrapped to count its calls. */
static void (*cujit_deleter)(DLManagedTensorVersioned *);
static long lent_deleted;

static void counting_deleter(DLManagedTensorVersioned *t) {
  __atomic_add_fetch(&lent_deleted, 1, __ATOMIC_ACQ_REL);
  cujit_deleter(t);
}

static long lent_count(void) { return __atomic_load_n(&lent_deleted, __ATOMIC_ACQUIRE); }

static DLManagedTensorVersioned *lend(const cujit_array *a, unsigned flags) {
  DLManagedTensorVersioned *t = NULL;
  assert_ok(cujit_array_to_dlpack(a, flags, &t));
  assert_non_null(t);
  cujit_deleter = t->deleter;
  t->deleter = counting_deleter;
  return t;
}

static size_t in_use(void) {
  size_t used = 0;
  assert_ok(cujit_mem_pool_get_usage(&used, NULL));
  return used;
}

static cujit_array *from_host(cujit_type type, int ndim, const int64_t *shape, const void *host) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_from_host(&a, type, ndim, shape, host));
  return a;
}

/* ---- lending ---- */

/* x (4, 6) = 0..23 and v = x[:, 5::-2] (4, 3), strides (6, -2). */
static void a_reversed_view_lent_and_kept(void **state) {
  const int64_t m[] = {4, 6};
  float host[24], seen[24];
  cujit_array *x, *v = NULL, *b = NULL;
  DLManagedTensorVersioned *t;
  DLTensor *d;
  CUdeviceptr base;
  size_t used0 = in_use();
  long before = lent_count();
  int i;
  (void)state;
  for (i = 0; i < 24; i++) host[i] = (float)i;
  x = from_host(CUJIT_TYPE_F32, 2, m, host);
  base = cujit_array_data(x);
  assert_ok(cujit_array_slice(x, 1, 5, -1, -2, &v));
  t = lend(v, 0);
  d = &t->dl_tensor;
  assert_int_equal(t->version.major, 1);
  assert_int_equal(t->version.minor, DLPACK_MINOR_VERSION);
  assert_int_equal(t->flags, 0);
  assert_int_equal(d->device.device_type, kDLCUDA);
  assert_int_equal(d->device.device_id, 0);
  assert_int_equal(d->dtype.code, kDLFloat);
  assert_int_equal(d->dtype.bits, 32);
  assert_int_equal(d->dtype.lanes, 1);
  assert_int_equal(d->ndim, 2);
  assert_int_equal(d->shape[0], 4);
  assert_int_equal(d->shape[1], 3);
  assert_int_equal(d->strides[0], 6);
  assert_int_equal(d->strides[1], -2);
  assert_int_equal(d->byte_offset, 0);
  assert_true((CUdeviceptr)(uintptr_t)d->data == base + 5 * 4);
  /* every array goes: the tensor keeps the memory, live and as it was */
  cujit_array_destroy(v);
  cujit_array_destroy(x);
  assert_int_equal(lent_count(), before);
  assert_true(in_use() >= used0 + sizeof host);
  assert_int_equal(cd.peek(base, seen, sizeof seen), 0);
  assert_memory_equal(seen, host, sizeof host);
  /* borrowed back: the same address and strides */
  assert_ok(cujit_array_from_dlpack(&b, t, 0));
  assert_true(cujit_array_data(b) == base + 5 * 4);
  assert_int_equal(cujit_array_shape(b, 1), 3);
  assert_int_equal(cujit_array_stride(b, 0), 6);
  assert_int_equal(cujit_array_stride(b, 1), -2);
  assert_int_equal(cujit_array_contiguous(b), 0);
  assert_int_equal(lent_count(), before);
  cujit_array_destroy(b); /* the last holder: cujit's deleter once, the memory back */
  assert_int_equal(lent_count(), before + 1);
  assert_int_equal(in_use(), used0);
  assert_ok(cujit_synchronize());
  nothing_flagged();
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
  unsigned char host[37 * 16], back[37 * 16];
  const int64_t n = 37;
  size_t k, i;
  (void)state;
  for (k = 0; k < sizeof types / sizeof *types; k++) {
    size_t bytes = (size_t)n * cujit_type_size((cujit_type)types[k].type);
    cujit_array *a, *b = NULL;
    DLManagedTensorVersioned *t;
    for (i = 0; i < bytes; i++)
      host[i] = types[k].type == CUJIT_TYPE_BOOL ? (unsigned char)(i % 3 == 0)
                                                 : (unsigned char)(i * 7 + k);
    a = from_host((cujit_type)types[k].type, 1, &n, host);
    t = lend(a, 0);
    assert_int_equal(t->dl_tensor.dtype.code, types[k].code);
    assert_int_equal(t->dl_tensor.dtype.bits, 8 * cujit_type_size((cujit_type)types[k].type));
    assert_int_equal(t->dl_tensor.dtype.lanes, 1);
    assert_ok(cujit_array_from_dlpack(&b, t, 0));
    assert_int_equal(cujit_array_type(b), types[k].type);
    assert_true(cujit_array_data(b) == cujit_array_data(a));
    memset(back, 0, sizeof back);
    assert_ok(cujit_array_read(b, back, bytes));
    assert_memory_equal(back, host, bytes);
    cujit_array_destroy(a);
    cujit_array_destroy(b);
  }
  assert_ok(cujit_synchronize());
  nothing_flagged();
}

typedef struct deleters_job {
  DLManagedTensorVersioned **t;
  int n, device; /* made current first; -1: none */
} deleters_job;

static void *call_deleters(void *p) {
  deleters_job *j = p;
  int i;
  if (j->device >= 0 && cujit_device_set_current(j->device) != CUJIT_OK) abort();
  for (i = 0; i < j->n; i++) j->t[i]->deleter(j->t[i]);
  return NULL;
}

/* 32 tensors of device 0, their arrays destroyed; 8 threads call the deleters, 4 with no
 * current context, 2 on device 1, 2 on device 0: each once, every byte back, no call with
 * no context or on the other device's context. */
static void deleters_from_any_thread(void **state) {
  enum { N = 32, THREADS = 8 };
  DLManagedTensorVersioned *t[N];
  deleters_job jobs[THREADS];
  pthread_t th[THREADS];
  const int64_t small = 100, large = 40000; /* small blocks, and the pool's */
  long before = lent_count();
  size_t used0 = in_use();
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    cujit_array *a = NULL;
    assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, i % 2 ? &large : &small));
    t[i] = lend(a, 0);
    cujit_array_destroy(a);
  }
  for (i = 0; i < THREADS; i++) {
    jobs[i].t = t + i * (N / THREADS);
    jobs[i].n = N / THREADS;
    jobs[i].device = i % 2 ? -1 : i % 4 == 0 ? 1 : 0;
    assert_int_equal(pthread_create(&th[i], NULL, call_deleters, &jobs[i]), 0);
  }
  for (i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(lent_count(), before + N);
  assert_int_equal(in_use(), used0);
  assert_ok(cujit_synchronize());
  nothing_flagged();
}

/* An array of device 1, lent while device 1 is current, deleted on a thread of device 0. */
static void an_array_of_device_one(void **state) {
  const int64_t n = 1000;
  cujit_array *a = NULL;
  DLManagedTensorVersioned *t;
  deleters_job job;
  pthread_t th;
  size_t used1;
  (void)state;
  assert_ok(cujit_device_set_current(1));
  used1 = in_use();
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I32, 1, &n));
  t = lend(a, CUJIT_DLPACK_READ_ONLY);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(t->dl_tensor.device.device_id, 1);
  assert_int_equal(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  cujit_array_destroy(a);
  job.t = &t, job.n = 1, job.device = 0;
  assert_int_equal(pthread_create(&th, NULL, call_deleters, &job), 0);
  pthread_join(th, NULL);
  assert_int_equal(in_use(), used1);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_device_set_current(0));
  nothing_flagged();
}

/* Wrapped memory is named as the driver says it is. */
static void wrapped_memory_lent(void **state) {
  const int64_t n = 64, zero = 0;
  CUdeviceptr dev = 0;
  void *pinned = NULL;
  cujit_array *a = NULL;
  DLManagedTensorVersioned *t = NULL;
  (void)state;
  assert_ok(cujit_mem_alloc(&dev, 256));
  assert_ok(cujit_host_alloc(&pinned, 256));
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, dev));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(t->dl_tensor.device.device_id, 0);
  cujit_array_destroy(a);
  t->deleter(t);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, (CUdeviceptr)(uintptr_t)pinned));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_type, kDLCUDAHost);
  assert_int_equal(t->dl_tensor.device.device_id, 0);
  t->deleter(t);
  cujit_array_destroy(a);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, 0x10000)); /* nothing there */
  assert_status_detail(cujit_array_to_dlpack(a, 0, &t), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_to_dlpack: a wraps 0x10000, which the driver does not know "
                       "as device, managed or page-locked memory");
  assert_null(t);
  cujit_array_destroy(a);
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &zero, 0)); /* empty: the current device */
  assert_ok(cujit_device_set_current(1));
  t = lend(a, 0);
  assert_int_equal(t->dl_tensor.device.device_id, 1);
  assert_null(t->dl_tensor.data);
  t->deleter(t);
  cujit_array_destroy(a);
  assert_ok(cujit_device_set_current(0));
  assert_ok(cujit_host_free(pinned));
  assert_ok(cujit_mem_free(dev));
  nothing_flagged();
}

/* ---- borrowing ---- */

static void refused(const dl_spec *s, cujit_status want, const char *needle) {
  cujit_array *b = (cujit_array *)1;
  long before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack(&b, dl_tensor(s), 0), want, needle);
  assert_null(b);
  assert_int_equal(dl_deleted_count(), before + 1);
}

static void borrowed_memory_is_asked_of_the_driver(void **state) {
  const int64_t n = 64;
  CUdeviceptr dev0 = 0, dev1 = 0;
  void *pinned = NULL, *host = malloc(256);
  dl_spec s = dl_f32(0);
  cujit_array *b = NULL;
  long before;
  (void)state;
  assert_ok(cujit_mem_alloc(&dev0, 256));
  assert_ok(cujit_host_alloc(&pinned, 256));
  assert_ok(cujit_device_set_current(1));
  assert_ok(cujit_mem_alloc(&dev1, 256));
  assert_ok(cujit_device_set_current(0));
  s.shape = &n;
  s.data = dev0, s.device_id = 1;
  refused(&s, CUJIT_ERROR_INVALID_VALUE,
          "cujit_array_from_dlpack: the tensor says CUDA device 1, but its memory is on device 0");
  s.device_id = 2;
  refused(&s, CUJIT_ERROR_NO_DEVICE,
          "the tensor is on CUDA device 2, but the driver lists 2 devices (numbered from 0");
  s.device_id = 0, s.data = (uint64_t)(uintptr_t)host;
  refused(&s, CUJIT_ERROR_INVALID_VALUE,
          "the tensor says CUDA device 0, but the driver does not know its memory at 0x");
  s.data = (uint64_t)(uintptr_t)pinned;
  refused(&s, CUJIT_ERROR_INVALID_VALUE, "is page-locked host memory; an array is device memory");
  /* a reversed tensor is asked about at its lowest element: the allocation's start */
  s.strides = (const int64_t[]){-1}, s.data = dev0 + 63 * 4;
  before = dl_deleted_count();
  assert_ok(cujit_array_from_dlpack(&b, dl_tensor(&s), 0));
  assert_true(cujit_array_data(b) == dev0 + 63 * 4);
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before + 1);
  /* memory of device 1, said to be there, taken while device 0 is current */
  s.strides = NULL, s.data = dev1, s.device_id = 1;
  assert_ok(cujit_array_from_dlpack(&b, dl_tensor(&s), 0));
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before + 2);
  assert_ok(cujit_device_set_current(1));
  assert_ok(cujit_mem_free(dev1));
  assert_ok(cujit_device_set_current(0));
  assert_ok(cujit_host_free(pinned));
  assert_ok(cujit_mem_free(dev0));
  free(host);
  nothing_flagged();
}

/* The deleter runs after the work queued on the array's stream: the fake driver runs queued
 * work only at a synchronisation, so the deleter sees none left only if cujit waited. */
static unsigned long pending_at_delete;

static void deleter_noting_pending_work(DLManagedTensorVersioned *self) {
  pending_at_delete = cd.pending();
  dl_deleter(self);
}

static void *destroy_on_a_bare_thread(void *a) {
  cujit_array_destroy(a); /* this thread has no current context */
  return NULL;
}

static void borrowed_memory_goes_back_after_its_work(void **state) {
  const int64_t n = 1024;
  CUdeviceptr mem = 0;
  CUstream s = NULL;
  cujit_array *b = NULL;
  DLManagedTensorVersioned *t;
  dl_spec spec = dl_f32(0);
  pthread_t th;
  long before = dl_deleted_count();
  (void)state;
  assert_ok(cujit_mem_alloc(&mem, 2 * (size_t)n * 4));
  assert_ok(cujit_stream_create(&s));
  spec.shape = &n, spec.data = mem;
  t = dl_tensor(&spec);
  t->deleter = deleter_noting_pending_work;
  assert_ok(cujit_array_from_dlpack(&b, t, 0));
  assert_ok(cujit_array_set_stream(b, s));
  assert_ok(cujit_mem_copy_dtod_async(mem + (size_t)n * 4, mem, (size_t)n * 4, s));
  assert_true(cd.pending() >= 1);
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before + 1);
  assert_int_equal(pending_at_delete, 0);
  /* on the legacy default stream, destroyed by a thread with no context */
  t = dl_tensor(&spec);
  t->deleter = deleter_noting_pending_work;
  assert_ok(cujit_array_from_dlpack(&b, t, 0));
  assert_ok(cujit_mem_copy_dtod_async(mem + (size_t)n * 4, mem, (size_t)n * 4, NULL));
  assert_true(cd.pending() >= 1);
  pending_at_delete = 99;
  assert_int_equal(pthread_create(&th, NULL, destroy_on_a_bare_thread, b), 0);
  pthread_join(th, NULL);
  assert_int_equal(dl_deleted_count(), before + 2);
  assert_int_equal(pending_at_delete, 0);
  assert_ok(cujit_stream_destroy(s));
  assert_ok(cujit_mem_free(mem));
  nothing_flagged();
}

/* A borrowed array lent again: the producer's deleter waits for the array and the tensor. */
static void borrowed_and_lent_again(void **state) {
  const int64_t n = 64;
  CUdeviceptr mem = 0;
  cujit_array *b = NULL, *v = NULL, *c = NULL;
  DLManagedTensorVersioned *t, *again;
  dl_spec s = dl_f32(0);
  long before = dl_deleted_count(), lent_before = lent_count();
  (void)state;
  assert_ok(cujit_mem_alloc(&mem, 256));
  s.shape = &n, s.data = mem, s.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  t = dl_tensor(&s);
  assert_ok(cujit_array_from_dlpack(&b, t, CUJIT_DLPACK_READ_ONLY));
  assert_ok(cujit_array_slice(b, 0, 1, 64, 2, &v));
  again = lend(v, 0); /* read-only: b was borrowed so */
  assert_int_equal(again->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  assert_int_equal(again->dl_tensor.strides[0], 2);
  assert_true((CUdeviceptr)(uintptr_t)again->dl_tensor.data == mem + 4);
  cujit_array_destroy(v);
  cujit_array_destroy(b);
  assert_int_equal(dl_deleted_count(), before); /* the lent tensor still holds it */
  assert_ok(cujit_array_from_dlpack(&c, again, CUJIT_DLPACK_READ_ONLY)); /* and back again */
  assert_int_equal(lent_count(), lent_before);
  cujit_array_destroy(c);
  assert_int_equal(lent_count(), lent_before + 1);
  assert_int_equal(dl_deleted_count(), before + 1);
  assert_ok(cujit_mem_free(mem));
  nothing_flagged();
}

typedef struct borrow_job {
  CUdeviceptr mem;
  int rounds;
} borrow_job;

static void *borrow_and_destroy(void *p) {
  borrow_job *j = p;
  const int64_t n = 16;
  dl_spec s = dl_f32(0);
  int i;
  s.shape = &n, s.data = j->mem;
  for (i = 0; i < j->rounds; i++) {
    cujit_array *b = NULL, *v = NULL;
    DLManagedTensorVersioned *lent = NULL;
    if (cujit_array_from_dlpack(&b, dl_tensor(&s), 0) != CUJIT_OK ||
        cujit_array_slice(b, 0, 15, -1, -1, &v) != CUJIT_OK ||
        cujit_array_to_dlpack(v, 0, &lent) != CUJIT_OK)
      abort();
    cujit_array_destroy(b);
    cujit_array_destroy(v);
    lent->deleter(lent); /* the last holder: the producer's deleter, from here */
  }
  return NULL;
}

static void threads_borrow_and_lend(void **state) {
  enum { THREADS = 8, ROUNDS = 50 };
  pthread_t th[THREADS];
  borrow_job job;
  long before = dl_deleted_count();
  int i;
  (void)state;
  assert_ok(cujit_mem_alloc(&job.mem, 64));
  job.rounds = ROUNDS;
  for (i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, borrow_and_destroy, &job), 0);
  for (i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(dl_deleted_count(), before + THREADS * ROUNDS);
  assert_ok(cujit_mem_free(job.mem));
  nothing_flagged();
}

#ifdef CUJIT_FAULT_INJECTION
/* Takes the spare array handles and blocks that destroyed arrays left (up to 64 of each), so
 * that the next array made allocates: one wrapped array per spare, kept in held[]. */
#  define HELD_MAX 2048
static cujit_array *held[HELD_MAX];
static int n_held;

static void take_spares(int count) {
  const int64_t n = 1;
  while (count-- > 0 && n_held < HELD_MAX)
    assert_ok(cujit_array_wrap(&held[n_held++], CUJIT_TYPE_F32, 1, &n, 0x10000));
}

/* Every allocation of a borrow, then of a lend, fails in turn. A failed borrow returns
 * CUJIT_ERROR_OUT_OF_MEMORY having called the deleter once; a failed lend takes no hold on
 * the memory, which goes back to the pool when the array is destroyed. */
static void allocation_failures_hand_the_tensor_back(void **state) {
  const int64_t n = 16;
  cujit_array *a = NULL;
  CUdeviceptr mem = 0;
  dl_spec s = dl_f32(0);
  size_t used0;
  int i, k, failed = 0;
  (void)state;
  assert_ok(cujit_mem_alloc(&mem, 64));
  s.shape = &n, s.data = mem;
  take_spares(70);
  for (k = 1; k < 1000; k++) {
    cujit_array *b = NULL;
    long before = dl_deleted_count();
    cujit_status st;
    int reached;
    cujit_test_fail_alloc_after(k);
    st = cujit_array_from_dlpack(&b, dl_tensor(&s), 0);
    reached = cujit_test_alloc_countdown() == 0;
    cujit_test_fail_alloc_after(0);
    if (st == CUJIT_OK) {
      assert_int_equal(dl_deleted_count(), before);
      cujit_array_destroy(b);
    } else {
      assert_status_detail(st, CUJIT_ERROR_OUT_OF_MEMORY, "memory");
      assert_null(b);
    }
    assert_int_equal(dl_deleted_count(), before + 1);
    take_spares(2); /* what this round gave back */
    if (!reached) break;
    failed++;
  }
  assert_true(failed >= 2); /* the array's and the block's allocations, at least */
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
  used0 = in_use();
  for (k = 1; k < 1000; k++) {
    DLManagedTensorVersioned *t = (DLManagedTensorVersioned *)1;
    cujit_status st;
    int reached;
    cujit_test_fail_alloc_after(k);
    st = cujit_array_to_dlpack(a, 0, &t);
    reached = cujit_test_alloc_countdown() == 0;
    cujit_test_fail_alloc_after(0);
    if (st == CUJIT_OK) {
      t->deleter(t);
    } else {
      assert_int_equal(st, CUJIT_ERROR_OUT_OF_MEMORY);
      assert_null(t);
    }
    if (!reached) break;
  }
  assert_true(k > 1); /* a lend allocates */
  cujit_array_destroy(a);
  assert_true(in_use() < used0); /* nothing holds a's memory any more */
  for (i = 0; i < n_held; i++) cujit_array_destroy(held[i]);
  n_held = 0;
  assert_ok(cujit_mem_free(mem));
  nothing_flagged();
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_reversed_view_lent_and_kept),
      cmocka_unit_test(every_type_there_and_back),
      cmocka_unit_test(deleters_from_any_thread),
      cmocka_unit_test(an_array_of_device_one),
      cmocka_unit_test(wrapped_memory_lent),
      cmocka_unit_test(borrowed_memory_is_asked_of_the_driver),
      cmocka_unit_test(borrowed_memory_goes_back_after_its_work),
      cmocka_unit_test(borrowed_and_lent_again),
      cmocka_unit_test(threads_borrow_and_lend),
#ifdef CUJIT_FAULT_INJECTION
      cmocka_unit_test(allocation_failures_hand_the_tensor_back),
#endif
  };
  return test_group_result(cmocka_run_group_tests(tests, setup, NULL));
}

/* dlpack_bridge.c - the C side of dlpack_cupy.py: a small shared library, loaded by the
 * script with ctypes, that makes cujit arrays, lends them as DLPack tensors and borrows
 * CuPy's, runs cujit kernels on them and counts the deleters called. Every call returns 0
 * (or a handle) on success; bridge_error() gives cujit's detail of the last failure.
 *
 * The deleters are counted by wrapping them: a lent tensor's (cujit's own) and a borrowed
 * one's (CuPy's) are replaced by counting ones that call the original, so the script can
 * check that each is called exactly once, and when. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "cujit_array.h"

const char *bridge_error(void);
int bridge_init(void);
int bridge_type_of(const char *numpy_name);
int bridge_current_device(void);
long long bridge_pool_in_use(void);
int bridge_sync(void);
void *bridge_array(int type, int ndim, const int64_t *shape, const void *host);
void *bridge_slice(void *a, int dim, int64_t start, int64_t stop, int64_t step);
void bridge_destroy(void *a);
uint64_t bridge_data(void *a);
int bridge_read(void *a, void *host, size_t bytes);
int bridge_write(void *a, const void *host, size_t bytes);
int64_t bridge_stride(void *a, int dim);
void *bridge_lend(void *a, unsigned flags);
void bridge_delete_lent(void *tensor);
long bridge_lent_deleted(void);
void *bridge_borrow(void *tensor, unsigned flags);
void *bridge_borrow_legacy(void *tensor, unsigned flags);
long bridge_borrowed_deleted(void);
int bridge_scale(void *a, double factor);
int bridge_add_one(void *a);

static cujit_status last = CUJIT_OK;

const char *bridge_error(void) { return last == CUJIT_OK ? "" : cujit_last_error(); }

static int ok(cujit_status st) {
  last = st;
  return st == CUJIT_OK ? 0 : -1;
}

int bridge_init(void) {
  int n = 0;
  if (ok(cujit_device_get_count(&n)) != 0) return -1;
  return n > 0 ? 0 : -1;
}

int bridge_sync(void) { return ok(cujit_synchronize()); }

/* cujit's element type of a NumPy dtype's name, or -1. */
int bridge_type_of(const char *numpy_name) {
  static const struct {
    const char *name;
    cujit_type type;
  } types[] = {
      {"bool", CUJIT_TYPE_BOOL},   {"int8", CUJIT_TYPE_I8},       {"uint8", CUJIT_TYPE_U8},
      {"int16", CUJIT_TYPE_I16},   {"uint16", CUJIT_TYPE_U16},    {"int32", CUJIT_TYPE_I32},
      {"uint32", CUJIT_TYPE_U32},  {"int64", CUJIT_TYPE_I64},     {"uint64", CUJIT_TYPE_U64},
      {"float16", CUJIT_TYPE_F16}, {"bfloat16", CUJIT_TYPE_BF16}, {"float32", CUJIT_TYPE_F32},
      {"float64", CUJIT_TYPE_F64}, {"complex64", CUJIT_TYPE_C64}, {"complex128", CUJIT_TYPE_C128},
  };
  size_t i;
  for (i = 0; i < sizeof types / sizeof *types; i++)
    if (strcmp(types[i].name, numpy_name) == 0) return (int)types[i].type;
  return -1;
}

int bridge_current_device(void) {
  int d = -1;
  ok(cujit_device_get_current(&d));
  return d;
}

long long bridge_pool_in_use(void) {
  size_t used = 0;
  if (ok(cujit_mem_pool_get_usage(&used, NULL)) != 0) return -1;
  return (long long)used;
}

void *bridge_array(int type, int ndim, const int64_t *shape, const void *host) {
  cujit_array *a = NULL;
  ok(cujit_array_from_host(&a, (cujit_type)type, ndim, shape, host));
  return a;
}

void *bridge_slice(void *a, int dim, int64_t start, int64_t stop, int64_t step) {
  cujit_array *v = NULL;
  ok(cujit_array_slice(a, dim, start, stop, step, &v));
  return v;
}

void bridge_destroy(void *a) { cujit_array_destroy(a); }
uint64_t bridge_data(void *a) { return (uint64_t)cujit_array_data(a); }
int64_t bridge_stride(void *a, int dim) { return cujit_array_stride(a, dim); }
int bridge_read(void *a, void *host, size_t bytes) { return ok(cujit_array_read(a, host, bytes)); }
int bridge_write(void *a, const void *host, size_t bytes) {
  return ok(cujit_array_write(a, host, bytes));
}

/* ---- lending ---- */

static void (*cujit_deleter)(DLManagedTensorVersioned *);
static long lent_deleted;

static void counting_lent(DLManagedTensorVersioned *t) {
  __atomic_add_fetch(&lent_deleted, 1, __ATOMIC_ACQ_REL);
  cujit_deleter(t);
}

void *bridge_lend(void *a, unsigned flags) {
  DLManagedTensorVersioned *t = NULL;
  if (ok(cujit_array_to_dlpack(a, flags, &t)) != 0) return NULL;
  cujit_deleter = t->deleter;
  t->deleter = counting_lent;
  return t;
}

/* For a capsule that no consumer took: the producer's side gives the tensor back. */
void bridge_delete_lent(void *tensor) {
  DLManagedTensorVersioned *t = tensor;
  t->deleter(t);
}

long bridge_lent_deleted(void) { return __atomic_load_n(&lent_deleted, __ATOMIC_ACQUIRE); }

/* ---- borrowing ---- */

/* CuPy's deleters, by tensor, while cujit holds the tensors. */
#define MAX_BORROWED 256
static struct {
  void *t;
  void (*versioned)(DLManagedTensorVersioned *);
  void (*legacy)(DLManagedTensor *);
} borrowed[MAX_BORROWED];
static pthread_mutex_t borrowed_lock = PTHREAD_MUTEX_INITIALIZER;
static long borrowed_deleted;

static int remember(void *t, void (*v)(DLManagedTensorVersioned *), void (*l)(DLManagedTensor *)) {
  int i, slot = -1;
  pthread_mutex_lock(&borrowed_lock);
  for (i = 0; i < MAX_BORROWED && slot < 0; i++)
    if (!borrowed[i].t) slot = i;
  if (slot >= 0) borrowed[slot].t = t, borrowed[slot].versioned = v, borrowed[slot].legacy = l;
  pthread_mutex_unlock(&borrowed_lock);
  return slot;
}

static int forget(void *t, void (**v)(DLManagedTensorVersioned *), void (**l)(DLManagedTensor *)) {
  int i, found = 0;
  pthread_mutex_lock(&borrowed_lock);
  for (i = 0; i < MAX_BORROWED && !found; i++)
    if (borrowed[i].t == t) {
      *v = borrowed[i].versioned, *l = borrowed[i].legacy;
      borrowed[i].t = NULL;
      found = 1;
    }
  pthread_mutex_unlock(&borrowed_lock);
  return found;
}

static void counting_borrowed(DLManagedTensorVersioned *t) {
  void (*v)(DLManagedTensorVersioned *) = NULL;
  void (*l)(DLManagedTensor *) = NULL;
  if (!forget(t, &v, &l)) abort(); /* called twice, or for a tensor never borrowed */
  __atomic_add_fetch(&borrowed_deleted, 1, __ATOMIC_ACQ_REL);
  if (v) v(t);
}

static void counting_borrowed_legacy(DLManagedTensor *t) {
  void (*v)(DLManagedTensorVersioned *) = NULL;
  void (*l)(DLManagedTensor *) = NULL;
  if (!forget(t, &v, &l)) abort();
  __atomic_add_fetch(&borrowed_deleted, 1, __ATOMIC_ACQ_REL);
  if (l) l(t);
}

/* Takes over a tensor whose capsule the script renamed "used_dltensor_versioned". */
void *bridge_borrow(void *tensor, unsigned flags) {
  DLManagedTensorVersioned *t = tensor;
  cujit_array *a = NULL;
  if (remember(t, t->deleter, NULL) < 0) abort();
  t->deleter = counting_borrowed;
  ok(cujit_array_from_dlpack(&a, t, flags));
  return a;
}

/* The same for a legacy tensor, whose capsule the script renamed "used_dltensor". */
void *bridge_borrow_legacy(void *tensor, unsigned flags) {
  DLManagedTensor *t = tensor;
  cujit_array *a = NULL;
  if (remember(t, NULL, t->deleter) < 0) abort();
  t->deleter = counting_borrowed_legacy;
  ok(cujit_array_from_dlpack_legacy(&a, t, flags));
  return a;
}

long bridge_borrowed_deleted(void) { return __atomic_load_n(&borrowed_deleted, __ATOMIC_ACQUIRE); }

/* ---- cujit kernels on an array ---- */

/* a *= factor, in place: one of cujit's generated kernels, through a's strides. */
int bridge_scale(void *a, double factor) {
  cujit_array *out = a;
  return ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, a, factor, 0, &out));
}

/* a[i] += 1 for a contiguous float array: a kernel of the program's own, launched on a's
 * address. */
int bridge_add_one(void *a) {
  static const char src[] = "extern \"C\" __global__ void add_one(float *x, long long n) {\n"
                            "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                            "  if (i < n) x[i] += 1.0f;\n"
                            "}\n";
  static cujit_module *m;
  cujit_function *fn = NULL;
  long long n = cujit_array_size(a);
  if (!m && ok(cujit_module_from_source(&m, src, "bridge.cu", NULL)) != 0) return -1;
  if (ok(cujit_module_get_function(m, "add_one", &fn)) != 0) return -1;
  return ok(CUJIT_LAUNCH(fn, CUJIT_DIM3((unsigned)((n + 255) / 256)), CUJIT_DIM3(256),
                         cujit_array_arg(a), cujit_i64(n)));
}

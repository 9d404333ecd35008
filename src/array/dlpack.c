/* dlpack.c - arrays lent to other libraries and borrowed from them as DLPack tensors,
 * without a copy.
 *
 * Lending: a tensor is one allocation holding the DLManagedTensorVersioned, its shape and
 * strides, and a reference on the array's block (as a view holds one), so the memory lives
 * until the last array and tensor let go; the tensor's deleter lets go of it.
 *
 * Borrowing: the tensor is checked without the driver first (version, flags, device type,
 * element type, shape, strides, address), then with it (the device exists, the memory is
 * device memory of that device), and an array is made over a new block whose release calls
 * the producer's deleter. The tensor is handed over at the call: the one place that calls
 * its deleter on failure is the public function, once, and on success only the block's
 * release does, once, when its last holder lets go. */
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "array/array.h"

#if DLPACK_MAJOR_VERSION != 1
#  error "cujit reads and writes DLPack 1.x tensors: the dlpack.h it is built with must be 1.x"
#endif

/* ---- element types ---- */

static const struct {
  int type;
  uint8_t code, bits;
} dtypes[] = {
    {CUJIT_TYPE_BOOL, kDLBool, 8},      {CUJIT_TYPE_I8, kDLInt, 8},
    {CUJIT_TYPE_I16, kDLInt, 16},       {CUJIT_TYPE_I32, kDLInt, 32},
    {CUJIT_TYPE_I64, kDLInt, 64},       {CUJIT_TYPE_U8, kDLUInt, 8},
    {CUJIT_TYPE_U16, kDLUInt, 16},      {CUJIT_TYPE_U32, kDLUInt, 32},
    {CUJIT_TYPE_U64, kDLUInt, 64},      {CUJIT_TYPE_F16, kDLFloat, 16},
    {CUJIT_TYPE_F32, kDLFloat, 32},     {CUJIT_TYPE_F64, kDLFloat, 64},
    {CUJIT_TYPE_BF16, kDLBfloat, 16},   {CUJIT_TYPE_C64, kDLComplex, 64},
    {CUJIT_TYPE_C128, kDLComplex, 128},
};

int cj_dlpack_dtype(int type, uint8_t *code, uint8_t *bits) {
  size_t i;
  for (i = 0; i < CJ_COUNT(dtypes); i++)
    if (dtypes[i].type == type) {
      *code = dtypes[i].code;
      *bits = dtypes[i].bits;
      return 1;
    }
  return 0;
}

int cj_dlpack_type_of(uint8_t code, uint8_t bits, uint16_t lanes) {
  size_t i;
  if (lanes != 1) return -1;
  for (i = 0; i < CJ_COUNT(dtypes); i++)
    if (dtypes[i].code == code && dtypes[i].bits == bits) return dtypes[i].type;
  return -1;
}

/* DLPack's name of a type code, or NULL for one DLPack 1.1 does not name. */
static const char *code_name(uint8_t code) {
  static const char *const names[] = {
      "kDLInt",
      "kDLUInt",
      "kDLFloat",
      "kDLOpaqueHandle",
      "kDLBfloat",
      "kDLComplex",
      "kDLBool",
      "kDLFloat8_e3m4",
      "kDLFloat8_e4m3",
      "kDLFloat8_e4m3b11fnuz",
      "kDLFloat8_e4m3fn",
      "kDLFloat8_e4m3fnuz",
      "kDLFloat8_e5m2",
      "kDLFloat8_e5m2fnuz",
      "kDLFloat8_e8m0fnu",
      "kDLFloat6_e2m3fn",
      "kDLFloat6_e3m2fn",
      "kDLFloat4_e2m1fn",
  };
  return code < CJ_COUNT(names) ? names[code] : NULL;
}

/* The bits an array holds of type code `code` ("8, 16, 32 or 64"), or NULL for none. */
static const char *bits_held(uint8_t code) {
  switch (code) {
    case kDLInt:
    case kDLUInt: return "8, 16, 32 or 64";
    case kDLFloat: return "16, 32 or 64";
    case kDLBfloat: return "16";
    case kDLComplex: return "64 or 128";
    case kDLBool: return "8";
    default: return NULL;
  }
}

static cujit_status check_dtype(DLDataType dt, const char *fn, int *type) {
  const char *name = code_name(dt.code), *bits = bits_held(dt.code);
  char code[32];
  if (name)
    snprintf(code, sizeof code, "%s", name);
  else
    snprintf(code, sizeof code, "type code %u", (unsigned)dt.code);
  CJ_CHECK(dt.lanes == 1, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor's type is %s of %u bits in %u lanes, a vector type; an array holds "
           "one value per element (lanes 1)",
           fn, code, (unsigned)dt.bits, (unsigned)dt.lanes);
  *type = cj_dlpack_type_of(dt.code, dt.bits, dt.lanes);
  if (*type >= 0) return CUJIT_OK;
  if (bits)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "%s: the tensor's type is %s of %u bits; arrays hold %s of %s bits", fn, code,
                   (unsigned)dt.bits, code, bits);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: the tensor's type is %s (%u bits), which arrays do not hold (they hold "
                 "bool, i8 ... u64, f16, bf16, f32, f64, c64 and c128)",
                 fn, code, (unsigned)dt.bits);
}

/* ---- devices ---- */

/* What a device type that is not CUDA device memory names, for messages. */
static const char *other_device(int32_t type) {
  switch (type) {
    case kDLOpenCL: return "an OpenCL device (kDLOpenCL)";
    case kDLVulkan: return "a Vulkan device (kDLVulkan)";
    case kDLMetal: return "a Metal device (kDLMetal)";
    case kDLVPI: return "a Verilog simulator (kDLVPI)";
    case kDLROCM: return "an AMD GPU (kDLROCM)";
    case kDLROCMHost: return "ROCm page-locked host memory (kDLROCMHost)";
    case kDLExtDev: return "an extension device (kDLExtDev)";
    case kDLOneAPI: return "a oneAPI device (kDLOneAPI)";
    case kDLWebGPU: return "a WebGPU device (kDLWebGPU)";
    case kDLHexagon: return "a Hexagon DSP (kDLHexagon)";
    case kDLMAIA: return "a MAIA device (kDLMAIA)";
    case kDLTrn: return "a Trainium device (kDLTrn)";
    default: return NULL;
  }
}

static cujit_status refuse_managed(const char *fn, const char *said) {
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: the tensor is in CUDA managed memory%s, which cujit does not take: an "
                 "array is device memory whose work cujit orders on a stream, and the host may "
                 "touch managed memory or the driver move it while that work runs; copy it into "
                 "device memory first, or wrap its address with cujit_array_wrap if the host "
                 "keeps away from it while cujit uses it",
                 fn, said);
}

/* The device type alone: CUDA device memory, or a refusal saying why not. */
static cujit_status check_device_type(const DLDevice *d, const char *fn) {
  const char *other;
  switch ((int32_t)d->device_type) {
    case kDLCUDA:
      CJ_CHECK(d->device_id >= 0, CUJIT_ERROR_NO_DEVICE,
               "%s: the tensor is on CUDA device %d; devices are numbered from 0", fn,
               (int)d->device_id);
      return CUJIT_OK;
    case kDLCUDAManaged: return refuse_managed(fn, " (kDLCUDAManaged)");
    case kDLCPU:
      return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                     "%s: the tensor is in host memory (kDLCPU); an array is device memory: "
                     "copy it with cujit_array_from_host",
                     fn);
    case kDLCUDAHost:
      return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                     "%s: the tensor is in page-locked host memory (kDLCUDAHost); an array is "
                     "device memory: copy it with cujit_array_from_host",
                     fn);
    default: break;
  }
  other = other_device((int32_t)d->device_type);
  if (other)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "%s: the tensor is on %s; cujit works on NVIDIA GPUs through the CUDA "
                   "driver only",
                   fn, other);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: the tensor's device type is %d, which DLPack %d.%d does not name", fn,
                 (int)d->device_type, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
}

/* ---- shape, strides and address ---- */

/* Where a tensor's elements lie, once checked. */
typedef struct layout {
  int type;
  int64_t size;                          /* elements */
  int64_t strides[CUJIT_ARRAY_MAX_DIMS]; /* in elements; C order when the tensor has none */
  CUdeviceptr first;                     /* element 0 */
  CUdeviceptr lo;                        /* the lowest address an element starts at */
} layout;

static cujit_status check_shape(const DLTensor *t, const char *fn, layout *l) {
  int d;
  CJ_CHECK(t->ndim >= 0 && t->ndim <= CUJIT_ARRAY_MAX_DIMS, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor has %d dimensions; an array has 0 to %d (CUJIT_ARRAY_MAX_DIMS)", fn,
           (int)t->ndim, CUJIT_ARRAY_MAX_DIMS);
  CJ_CHECK(t->shape || !t->ndim, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor's shape is NULL for %d dimensions", fn, (int)t->ndim);
  l->size = 1;
  for (d = 0; d < t->ndim; d++) {
    CJ_CHECK(t->shape[d] >= 0, CUJIT_ERROR_INVALID_VALUE,
             "%s: the tensor's dimension %d has the negative size %lld", fn, d,
             (long long)t->shape[d]);
    CJ_CHECK(!t->shape[d] || l->size <= ((int64_t)1 << 62) / t->shape[d], CUJIT_ERROR_INVALID_VALUE,
             "%s: the tensor holds more than 2^62 elements", fn);
    l->size *= t->shape[d];
  }
  if (t->strides && t->ndim)
    memcpy(l->strides, t->strides, (size_t)t->ndim * sizeof *l->strides);
  else if (t->ndim)
    cj_layout_contiguous(t->ndim, t->shape, l->strides);
  return CUJIT_OK;
}

/* |v| of a stride, or -1 when it has none in int64 (INT64_MIN). */
static int64_t magnitude(int64_t v) { return v == INT64_MIN ? -1 : v < 0 ? -v : v; }

/* Checks that no two positions reach one element, the sufficient rule that every view
 * NumPy, CuPy and cujit make keeps: with the dimensions of more than one element taken by
 * |stride|, each steps past all the elements the smaller ones reach. Also finds how far
 * below and above element 0 the elements lie (*below, *above, in elements). */
static cujit_status check_strides(const DLTensor *t, const layout *l, const char *fn,
                                  int64_t *below, int64_t *above) {
  int order[CUJIT_ARRAY_MAX_DIMS], n = 0, i, j, d;
  int64_t span = 0; /* elements the dimensions taken so far reach, from the lowest */
  *below = *above = 0;
  for (d = 0; d < t->ndim; d++)
    if (t->shape[d] > 1) order[n++] = d;
  for (i = 1; i < n; i++) /* at most 4: insertion sort by |stride| */
    for (j = i; j > 0 && (uint64_t)magnitude(l->strides[order[j]]) <
                             (uint64_t)magnitude(l->strides[order[j - 1]]);
         j--) {
      int k = order[j];
      order[j] = order[j - 1], order[j - 1] = k;
    }
  for (i = 0; i < n; i++) {
    int64_t s = l->strides[order[i]], m = magnitude(s), reach;
    d = order[i];
    CJ_CHECK(m > span, CUJIT_ERROR_INVALID_VALUE,
             "%s: the tensor's strides (in elements) let two positions share an element, or "
             "interleave its dimensions so that cujit cannot tell: dimension %d of %lld "
             "elements steps by %lld, within the %lld elements the smaller strides reach; an "
             "array holds each element once (a broadcast view, with a stride of 0, does not): "
             "make a copy first",
             fn, d, (long long)t->shape[d], (long long)s, (long long)span + 1);
    CJ_CHECK(!__builtin_mul_overflow(m, t->shape[d] - 1, &reach) &&
                 !__builtin_add_overflow(span, reach, &span),
             CUJIT_ERROR_INVALID_VALUE,
             "%s: the tensor's elements span more than 2^63 elements (dimension %d, stride "
             "%lld)",
             fn, d, (long long)s);
    if (s < 0)
      *below += reach;
    else
      *above += reach;
  }
  return CUJIT_OK;
}

/* Element 0's address, its alignment, and the extent of the elements in the address space. */
static cujit_status check_address(const DLTensor *t, layout *l, const char *fn) {
  size_t es = cj_elem_of(l->type)->size;
  uint64_t base = (uint64_t)(uintptr_t)t->data, first, lo_bytes, hi_bytes, last;
  int64_t below, above;
  CJ_CHECK(!__builtin_add_overflow(base, t->byte_offset, &first), CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor's data 0x%llx plus byte_offset %llu leaves the address space", fn,
           (unsigned long long)base, (unsigned long long)t->byte_offset);
  l->first = l->lo = (CUdeviceptr)first;
  if (!l->size) return CUJIT_OK; /* nothing is ever read: any strides and address will do */
  CJ_TRY(check_strides(t, l, fn, &below, &above));
  CJ_CHECK(first, CUJIT_ERROR_INVALID_VALUE, "%s: the tensor's data is NULL for %lld elements", fn,
           (long long)l->size);
  CJ_CHECK(first % es == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor's element 0 is at 0x%llx, not a multiple of its element's %zu "
           "bytes; kernels read elements at aligned addresses",
           fn, (unsigned long long)first, es);
  CJ_CHECK(!__builtin_mul_overflow((uint64_t)below, (uint64_t)es, &lo_bytes) &&
               !__builtin_mul_overflow((uint64_t)above, (uint64_t)es, &hi_bytes) &&
               lo_bytes <= first && !__builtin_add_overflow(first, hi_bytes, &last) &&
               !__builtin_add_overflow(last, (uint64_t)es - 1, &last),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor's elements, from element 0 at 0x%llx by its strides, leave the "
           "address space",
           fn, (unsigned long long)first);
  l->lo = (CUdeviceptr)(first - lo_bytes);
  return CUJIT_OK;
}

/* ---- the memory, asked of the driver ---- */

/* The memory type, whether managed, and the device ordinal of address p (zeros where the
 * driver does not know it). */
static CUresult memory_of(CUdeviceptr p, unsigned *type, unsigned *managed, int *ordinal) {
  CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *data[3];
  CUresult r;
  *type = *managed = 0;
  *ordinal = -1;
  data[0] = type, data[1] = managed, data[2] = ordinal;
  if (cj_cu.cuPointerGetAttributes) return cj_cu.cuPointerGetAttributes(3, attrs, data, p);
  if ((r = cj_cu.cuPointerGetAttribute(type, attrs[0], p)) != CUDA_SUCCESS) return r;
  if ((r = cj_cu.cuPointerGetAttribute(managed, attrs[1], p)) != CUDA_SUCCESS) return r;
  return cj_cu.cuPointerGetAttribute(ordinal, attrs[2], p);
}

/* The device exists and the elements are in its device memory: *dev gets it. */
static cujit_status check_memory(const DLTensor *t, const layout *l, const char *fn,
                                 CUdevice *dev) {
  int count = 0, ordinal;
  unsigned type, managed;
  CUresult r;
  CJ_TRY(cj_driver_load());
  cj_cu.cuDeviceGetCount(&count);
  CJ_CHECK(t->device.device_id < count, CUJIT_ERROR_NO_DEVICE,
           "%s: the tensor is on CUDA device %d, but the driver lists %d device%s (numbered "
           "from 0; CUDA_VISIBLE_DEVICES may hide some)",
           fn, (int)t->device.device_id, count, count == 1 ? "" : "s");
  r = cj_cu.cuDeviceGet(dev, t->device.device_id);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuDeviceGet (the tensor's device)");
  if (!l->size) return CUJIT_OK;
  r = memory_of(l->lo, &type, &managed, &ordinal);
  CJ_CHECK(r == CUDA_SUCCESS && type, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor says CUDA device %d, but the driver does not know its memory at "
           "0x%llx as device memory (%s)",
           fn, (int)t->device.device_id, (unsigned long long)l->lo,
           r == CUDA_SUCCESS ? "ordinary host memory" : cj_cu_name(r));
  if (managed) return refuse_managed(fn, " (the tensor says kDLCUDA; the driver says managed)");
  CJ_CHECK(type == CU_MEMORYTYPE_DEVICE, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor says CUDA device %d, but its memory at 0x%llx is page-locked host "
           "memory; an array is device memory: copy it with cujit_array_from_host",
           fn, (int)t->device.device_id, (unsigned long long)l->lo);
  CJ_CHECK(ordinal == t->device.device_id, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor says CUDA device %d, but its memory is on device %d", fn,
           (int)t->device.device_id, ordinal);
  return CUJIT_OK;
}

/* ---- borrowing ---- */

/* Runs with the primary context of the block's device current when the thread has none
 * (or one of another device): a release may wait for the legacy default stream or give
 * memory back to the pool. Returns the context to restore, and *switched. */
static CUcontext enter_device(const cj_block *b, int *switched) {
  CUcontext cur = NULL;
  CUdevice d;
  *switched = 0;
  if (cj_driver_load() != CUJIT_OK || cj_cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS) return NULL;
  if (cur && cj_cu.cuCtxGetDevice(&d) == CUDA_SUCCESS && d == b->dev) return cur;
  *switched = cujit_device_set_current((int)b->dev) == CUJIT_OK;
  return cur;
}

static void leave_device(CUcontext cur, int switched) {
  if (switched) cj_cu.cuCtxSetCurrent(cur);
}

/* Waits for the work queued on `stream` (the last array's), before the producer may free
 * or reuse its memory. */
static void wait_for_stream(const cj_block *b, CUstream stream) {
  int switched;
  CUcontext cur = enter_device(b, &switched);
  CUresult r = cj_cu.cuStreamSynchronize(stream);
  if (r != CUDA_SUCCESS)
    cj_warn("a borrowed DLPack tensor is given back without waiting for its stream: "
            "cuStreamSynchronize failed (%s)",
            cj_cu_name(r));
  leave_device(cur, switched);
}

static void release_versioned(cj_block *b, CUstream stream) {
  struct DLManagedTensorVersioned *t = b->lender;
  wait_for_stream(b, stream);
  if (t->deleter) t->deleter(t);
}

static void release_legacy(cj_block *b, CUstream stream) {
  struct DLManagedTensor *t = b->lender;
  wait_for_stream(b, stream);
  if (t->deleter) t->deleter(t);
}

/* Everything but the version and the flags, for either struct: *out gets the array. */
static cujit_status borrow(cujit_array **out, const DLTensor *t, cj_block *like, const char *fn) {
  layout l;
  CUdevice dev;
  memset(&l, 0, sizeof l);
  CJ_TRY(check_device_type(&t->device, fn));
  CJ_TRY(check_dtype(t->dtype, fn, &l.type));
  CJ_TRY(check_shape(t, fn, &l));
  CJ_TRY(check_address(t, &l, fn));
  CJ_TRY(check_memory(t, &l, fn, &dev));
  like->dev = dev;
  like->ptr = (CUdeviceptr)(uintptr_t)t->data;
  return cj_array_adopt(out, l.type, t->ndim, t->shape, l.strides, l.first, like, fn);
}

static cujit_status check_flags(unsigned flags, const char *fn) {
  CJ_CHECK(!(flags & ~(unsigned)CUJIT_DLPACK_READ_ONLY), CUJIT_ERROR_INVALID_VALUE,
           "%s: flags 0x%x holds bits cujit does not know (0x%x); pass 0 or "
           "CUJIT_DLPACK_READ_ONLY",
           fn, flags, flags & ~(unsigned)CUJIT_DLPACK_READ_ONLY);
  return CUJIT_OK;
}

static cujit_status borrow_versioned(cujit_array **out, struct DLManagedTensorVersioned *t,
                                     unsigned flags, const char *fn) {
  cj_block like;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  /* another major version may lay everything after the deleter out otherwise */
  CJ_CHECK(t->version.major == DLPACK_MAJOR_VERSION, CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor is of DLPack %u.%u; cujit reads DLPack %d.x tensors (ask the "
           "producer for one, e.g. with max_version=(1, 0))",
           fn, (unsigned)t->version.major, (unsigned)t->version.minor, DLPACK_MAJOR_VERSION);
  CJ_TRY(check_flags(flags, fn));
  CJ_CHECK(!(t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) || (flags & CUJIT_DLPACK_READ_ONLY),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), and an array may be "
           "written by any operation; pass CUJIT_DLPACK_READ_ONLY to take it, promising to "
           "only read it",
           fn);
  memset(&like, 0, sizeof like);
  like.release = release_versioned;
  like.lender = t;
  like.read_only = (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) || (flags & CUJIT_DLPACK_READ_ONLY);
  return borrow(out, &t->dl_tensor, &like, fn);
}

static cujit_status borrow_legacy(cujit_array **out, struct DLManagedTensor *t, unsigned flags,
                                  const char *fn) {
  cj_block like;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(check_flags(flags, fn));
  memset(&like, 0, sizeof like);
  like.release = release_legacy;
  like.lender = t;
  like.read_only = (flags & CUJIT_DLPACK_READ_ONLY) != 0;
  return borrow(out, &t->dl_tensor, &like, fn);
}

/* Ends a failed borrow: the tensor was handed over, so its deleter is called here, and the
 * failure's detail is kept whatever the deleter does (it may call cujit). */
#define CJ_DETAIL_KEPT 1024
static cujit_status handed_back(cujit_status st, void (*deleter)(void *), void *t) {
  char detail[CJ_DETAIL_KEPT];
  CUresult cu = cujit_last_cu_result();
  snprintf(detail, sizeof detail, "%s", cujit_last_error());
  deleter(t);
  return cj_fail_cu(st, cu, "%s", detail);
}

static void delete_versioned(void *p) {
  struct DLManagedTensorVersioned *t = p;
  if (t->deleter) t->deleter(t);
}

static void delete_legacy(void *p) {
  struct DLManagedTensor *t = p;
  if (t->deleter) t->deleter(t);
}

cujit_status cujit_array_from_dlpack(cujit_array **out, struct DLManagedTensorVersioned *tensor,
                                     unsigned flags) {
  static const char fn[] = "cujit_array_from_dlpack";
  cujit_status st;
  if (out) *out = NULL;
  CJ_CHECK(tensor, CUJIT_ERROR_INVALID_VALUE, "%s: tensor is NULL", fn);
  st = borrow_versioned(out, tensor, flags, fn);
  return st == CUJIT_OK ? st : handed_back(st, delete_versioned, tensor);
}

cujit_status cujit_array_from_dlpack_legacy(cujit_array **out, struct DLManagedTensor *tensor,
                                            unsigned flags) {
  static const char fn[] = "cujit_array_from_dlpack_legacy";
  cujit_status st;
  if (out) *out = NULL;
  CJ_CHECK(tensor, CUJIT_ERROR_INVALID_VALUE, "%s: tensor is NULL", fn);
  st = borrow_legacy(out, tensor, flags, fn);
  return st == CUJIT_OK ? st : handed_back(st, delete_legacy, tensor);
}

/* ---- lending ---- */

/* A lent tensor: the struct first, so that the tensor's address is the allocation's. */
typedef struct lent {
  struct DLManagedTensorVersioned t;
  cj_block *block;
  CUstream stream; /* the array's when it was lent: the memory is given back on it */
  int64_t shape[CUJIT_ARRAY_MAX_DIMS], strides[CUJIT_ARRAY_MAX_DIMS];
} lent;

static void lent_deleter(struct DLManagedTensorVersioned *self) {
  lent *e = (lent *)self;
  CUcontext cur = NULL;
  int switched = 0;
  if (!self) return;
  /* memory the last holder gives back: to the pool on the device, or to its producer */
  if (e->block->owned || e->block->release) cur = enter_device(e->block, &switched);
  cj_block_release(e->block, e->stream);
  leave_device(cur, switched);
  cj_free(e);
}

/* The device of a's memory, as DLPack names it. */
static cujit_status device_of(const cj_array *a, const char *fn, DLDevice *d) {
  unsigned type, managed;
  int ordinal;
  CUresult r;
  CUcontext ctx;
  CUdevice dev;
  d->device_type = kDLCUDA;
  /* cujit's memory, or memory borrowed as a device's: its device is known (its ordinal) */
  if (a->block->owned || a->block->release) {
    d->device_id = (int32_t)a->block->dev;
    return CUJIT_OK;
  }
  /* wrapped memory: what the driver says it is; nothing to ask of an empty array */
  if (!a->size) {
    CJ_TRY(cj_ctx_ensure(&ctx, &dev));
    d->device_id = (int32_t)dev;
    return CUJIT_OK;
  }
  CJ_TRY(cj_driver_load());
  r = memory_of(a->data, &type, &managed, &ordinal);
  CJ_CHECK(r == CUDA_SUCCESS && type, CUJIT_ERROR_INVALID_VALUE,
           "%s: a wraps 0x%llx, which the driver does not know as device, managed or "
           "page-locked memory (%s), so no DLPack device can be named for it",
           fn, (unsigned long long)a->data,
           r == CUDA_SUCCESS ? "ordinary host memory" : cj_cu_name(r));
  if (managed || type == CU_MEMORYTYPE_HOST) {
    d->device_type = managed ? kDLCUDAManaged : kDLCUDAHost;
    d->device_id = 0; /* DLPack's rule for managed and page-locked memory */
  } else {
    d->device_id = ordinal;
  }
  return CUJIT_OK;
}

cujit_status cujit_array_to_dlpack(const cujit_array *h, unsigned flags,
                                   struct DLManagedTensorVersioned **out) {
  static const char fn[] = "cujit_array_to_dlpack";
  DLTensor *t;
  DLDevice dev;
  cj_array *a;
  lent *e;
  if (out) *out = NULL;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(check_flags(flags, fn));
  CJ_TRY(device_of(a, fn, &dev));
  e = cj_calloc(1, sizeof *e);
  if (!e) return cj_fail_oom("lending an array as a DLPack tensor");
  e->t.version.major = DLPACK_MAJOR_VERSION;
  e->t.version.minor = DLPACK_MINOR_VERSION;
  e->t.manager_ctx = e;
  e->t.deleter = lent_deleter;
  if ((flags & CUJIT_DLPACK_READ_ONLY) || a->block->read_only)
    e->t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  t = &e->t.dl_tensor;
  t->data = a->size ? (void *)(uintptr_t)a->data : NULL;
  t->device = dev;
  t->ndim = a->ndim;
  cj_dlpack_dtype(a->type, &t->dtype.code, &t->dtype.bits);
  t->dtype.lanes = 1;
  if (a->ndim) {
    memcpy(e->shape, a->shape, (size_t)a->ndim * sizeof *e->shape);
    memcpy(e->strides, a->strides, (size_t)a->ndim * sizeof *e->strides);
  }
  t->shape = e->shape; /* for 0-d too: never NULL for a consumer that reads it anyway */
  t->strides = e->strides;
  t->byte_offset = 0;
  e->block = a->block;
  e->stream = a->stream;
  cj_block_retain(a->block);
  *out = &e->t;
  return CUJIT_OK;
}

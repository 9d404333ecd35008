/* dlpacktest.h - DLPack tensors as another library would make them, for the groups that
 * test lending and borrowing: a tensor of the tests' own (one allocation with its shape and
 * strides) whose deleter counts its calls and frees it, versioned or legacy. */
#ifndef CUJIT_DLPACKTEST_H
#define CUJIT_DLPACKTEST_H

#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "cujit_array.h"

/* Calls of the tests' deleters so far (both kinds), and the last tensor given to one. */
static long dl_deleted;
static void *dl_last_deleted;

static inline long dl_deleted_count(void) { return __atomic_load_n(&dl_deleted, __ATOMIC_ACQUIRE); }
static inline void *dl_last_deleted_tensor(void) {
  return __atomic_load_n(&dl_last_deleted, __ATOMIC_ACQUIRE);
}

typedef struct dl_made {
  DLManagedTensorVersioned m;
  int64_t shape[8], strides[8];
} dl_made;

typedef struct dl_made_legacy {
  DLManagedTensor m;
  int64_t shape[8], strides[8];
} dl_made_legacy;

static void dl_deleter(DLManagedTensorVersioned *self) {
  __atomic_store_n(&dl_last_deleted, (void *)self, __ATOMIC_RELEASE);
  __atomic_add_fetch(&dl_deleted, 1, __ATOMIC_ACQ_REL);
  free(self);
}

static void dl_deleter_legacy(DLManagedTensor *self) {
  __atomic_store_n(&dl_last_deleted, (void *)self, __ATOMIC_RELEASE);
  __atomic_add_fetch(&dl_deleted, 1, __ATOMIC_ACQ_REL);
  free(self);
}

/* What a tensor of the tests holds; dl_tensor() makes one. strides NULL: none (C order). */
typedef struct dl_spec {
  uint8_t code, bits;
  uint16_t lanes;
  int ndim;
  const int64_t *shape, *strides;
  uint64_t data, byte_offset;
  int32_t device_type, device_id;
  uint64_t flags;
} dl_spec;

/* A float32 vector of 8 elements at 0x10000 on CUDA device 0: the spec the tests vary. */
static inline dl_spec dl_f32(uint64_t data) {
  static const int64_t eight = 8;
  dl_spec s;
  memset(&s, 0, sizeof s);
  s.code = kDLFloat, s.bits = 32, s.lanes = 1;
  s.ndim = 1, s.shape = &eight;
  s.data = data;
  s.device_type = kDLCUDA;
  return s;
}

static inline void dl_fill(DLTensor *t, int64_t *shape, int64_t *strides, const dl_spec *s) {
  int d;
  t->data = (void *)(uintptr_t)s->data;
  t->device.device_type = (DLDeviceType)s->device_type;
  t->device.device_id = s->device_id;
  t->ndim = s->ndim;
  t->dtype.code = s->code, t->dtype.bits = s->bits, t->dtype.lanes = s->lanes;
  for (d = 0; d < s->ndim && d < 8; d++) {
    if (s->shape) shape[d] = s->shape[d];
    if (s->strides) strides[d] = s->strides[d];
  }
  t->shape = s->shape ? shape : NULL;
  t->strides = s->strides ? strides : NULL;
  t->byte_offset = s->byte_offset;
}

/* A versioned tensor of DLPack 1.1 (major, minor given), freed by dl_deleter. */
static inline DLManagedTensorVersioned *dl_tensor_v(const dl_spec *s, uint32_t major,
                                                    uint32_t minor) {
  dl_made *t = (dl_made *)calloc(1, sizeof *t);
  if (!t) abort();
  t->m.version.major = major, t->m.version.minor = minor;
  t->m.manager_ctx = t;
  t->m.deleter = dl_deleter;
  t->m.flags = s->flags;
  dl_fill(&t->m.dl_tensor, t->shape, t->strides, s);
  return &t->m;
}

static inline DLManagedTensorVersioned *dl_tensor(const dl_spec *s) {
  return dl_tensor_v(s, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
}

/* A legacy tensor, freed by dl_deleter_legacy. */
static inline DLManagedTensor *dl_tensor_legacy(const dl_spec *s) {
  dl_made_legacy *t = (dl_made_legacy *)calloc(1, sizeof *t);
  if (!t) abort();
  t->m.manager_ctx = t;
  t->m.deleter = dl_deleter_legacy;
  dl_fill(&t->m.dl_tensor, t->shape, t->strides, s);
  return &t->m;
}

#endif

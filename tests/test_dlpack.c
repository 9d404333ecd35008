/* test_dlpack - arrays lent to and borrowed from other libraries as DLPack tensors, without
 * a driver: the element types map one to one both ways; every tensor cujit cannot take is
 * refused with its reason before the driver is asked, and its deleter is called exactly
 * once, as it is for a tensor that passes every check and then finds no driver (the last
 * step); a deleter that calls cujit leaves the refusal's detail as it was; lending checks
 * its arguments and needs the driver to name a wrapped array's device. The paths that need
 * device memory run on the checking fake driver (test_dlpack_driver) and on a GPU
 * (test_gpu_dlpack, dlpack_cupy). */
#include "testutil.h"
#include "dlpacktest.h"
#include "array/array.h"

/* ---- element types ---- */

static void types_map_both_ways(void **state) {
  static const struct {
    int type;
    uint8_t code, bits;
  } want[] = {
      {CUJIT_TYPE_BOOL, kDLBool, 8},      {CUJIT_TYPE_I8, kDLInt, 8},
      {CUJIT_TYPE_I16, kDLInt, 16},       {CUJIT_TYPE_I32, kDLInt, 32},
      {CUJIT_TYPE_I64, kDLInt, 64},       {CUJIT_TYPE_U8, kDLUInt, 8},
      {CUJIT_TYPE_U16, kDLUInt, 16},      {CUJIT_TYPE_U32, kDLUInt, 32},
      {CUJIT_TYPE_U64, kDLUInt, 64},      {CUJIT_TYPE_F16, kDLFloat, 16},
      {CUJIT_TYPE_F32, kDLFloat, 32},     {CUJIT_TYPE_F64, kDLFloat, 64},
      {CUJIT_TYPE_BF16, kDLBfloat, 16},   {CUJIT_TYPE_C64, kDLComplex, 64},
      {CUJIT_TYPE_C128, kDLComplex, 128},
  };
  size_t i, held = 0;
  int type;
  uint8_t code, bits;
  (void)state;
  for (i = 0; i < sizeof want / sizeof *want; i++) {
    assert_int_equal(cj_dlpack_dtype(want[i].type, &code, &bits), 1);
    assert_int_equal(code, want[i].code);
    assert_int_equal(bits, want[i].bits);
    /* bits are the element's size, as DLPack counts them */
    assert_int_equal(bits, 8 * cujit_type_size((cujit_type)want[i].type));
    assert_int_equal(cj_dlpack_type_of(code, bits, 1), want[i].type);
    assert_int_equal(cj_dlpack_type_of(code, bits, 2), -1); /* a vector of two */
  }
  /* every type arrays hold, and no other, has a DLPack type */
  for (type = 0; type <= CUJIT_TYPE_C128; type++) {
    int has = cj_dlpack_dtype(type, &code, &bits);
    cujit_array *a = NULL;
    int64_t n = 1;
    cujit_status st = cujit_array_wrap(&a, (cujit_type)type, 1, &n, 0x10000);
    assert_int_equal(has, st == CUJIT_OK);
    held += (size_t)has;
    cujit_array_destroy(a);
  }
  assert_int_equal(held, sizeof want / sizeof *want);
  assert_int_equal(cj_dlpack_type_of(kDLFloat, 8, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLFloat, 128, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLBool, 1, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLComplex, 32, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLBfloat, 32, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLFloat8_e4m3fn, 8, 1), -1);
  assert_int_equal(cj_dlpack_type_of(kDLOpaqueHandle, 64, 1), -1);
  assert_int_equal(cj_dlpack_type_of(200, 32, 1), -1);
}

/* ---- borrowing: refusals ---- */

/* Borrows a tensor made from s and expects `want` with `needle` in the detail, no array,
 * and the tensor's deleter called exactly once, before the call returned. */
static void expect_borrow(const dl_spec *s, unsigned flags, cujit_status want, const char *needle) {
  DLManagedTensorVersioned *t = dl_tensor(s);
  cujit_array *a = (cujit_array *)1;
  long before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack(&a, t, flags), want, needle);
  assert_null(a);
  if (dl_deleted_count() != before + 1 || dl_last_deleted_tensor() != (void *)t)
    fail_msg("the deleter was called %ld times for \"%s\"", dl_deleted_count() - before, needle);
}

/* The same for the legacy struct. */
static void expect_borrow_legacy(const dl_spec *s, unsigned flags, cujit_status want,
                                 const char *needle) {
  DLManagedTensor *t = dl_tensor_legacy(s);
  cujit_array *a = (cujit_array *)1;
  long before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack_legacy(&a, t, flags), want, needle);
  assert_null(a);
  if (dl_deleted_count() != before + 1 || dl_last_deleted_tensor() != (void *)t)
    fail_msg("the deleter was called %ld times for \"%s\"", dl_deleted_count() - before, needle);
}

#define INVALID CUJIT_ERROR_INVALID_VALUE

static void devices_are_refused_with_their_reason(void **state) {
  dl_spec s = dl_f32(0x10000);
  (void)state;
  s.device_type = kDLCPU;
  expect_borrow(&s, 0, INVALID,
                "cujit_array_from_dlpack: the tensor is in host memory (kDLCPU); an array is "
                "device memory: copy it with cujit_array_from_host");
  s.device_type = kDLCUDAHost;
  expect_borrow(&s, 0, INVALID, "page-locked host memory (kDLCUDAHost)");
  s.device_type = kDLCUDAManaged;
  expect_borrow(&s, 0, INVALID,
                "the tensor is in CUDA managed memory (kDLCUDAManaged), which cujit does not "
                "take");
  expect_borrow(&s, 0, INVALID, "wrap its address with cujit_array_wrap");
  s.device_type = kDLROCM;
  expect_borrow(&s, 0, INVALID,
                "the tensor is on an AMD GPU (kDLROCM); cujit works on NVIDIA GPUs through the "
                "CUDA driver only");
  s.device_type = kDLOneAPI;
  expect_borrow(&s, 0, INVALID, "a oneAPI device (kDLOneAPI)");
  s.device_type = kDLMetal;
  expect_borrow(&s, 0, INVALID, "a Metal device (kDLMetal)");
  s.device_type = 99;
  expect_borrow(&s, 0, INVALID, "the tensor's device type is 99, which DLPack 1.1 does not name");
  s.device_type = kDLCUDA, s.device_id = -1;
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DEVICE, "the tensor is on CUDA device -1");
}

static void types_are_refused_by_name(void **state) {
  dl_spec s = dl_f32(0x10000);
  (void)state;
  s.lanes = 4;
  expect_borrow(&s, 0, INVALID,
                "the tensor's type is kDLFloat of 32 bits in 4 lanes, a vector type; an array "
                "holds one value per element (lanes 1)");
  s.lanes = 0;
  expect_borrow(&s, 0, INVALID, "in 0 lanes");
  s.lanes = 1, s.bits = 8;
  expect_borrow(&s, 0, INVALID,
                "the tensor's type is kDLFloat of 8 bits; arrays hold kDLFloat of 16, 32 or 64 "
                "bits");
  s.code = kDLInt, s.bits = 128;
  expect_borrow(&s, 0, INVALID, "kDLInt of 128 bits; arrays hold kDLInt of 8, 16, 32 or 64");
  s.code = kDLBool, s.bits = 1;
  expect_borrow(&s, 0, INVALID, "kDLBool of 1 bits; arrays hold kDLBool of 8 bits");
  s.code = kDLComplex, s.bits = 32;
  expect_borrow(&s, 0, INVALID, "kDLComplex of 32 bits; arrays hold kDLComplex of 64 or 128");
  s.code = kDLBfloat, s.bits = 32;
  expect_borrow(&s, 0, INVALID, "kDLBfloat of 32 bits; arrays hold kDLBfloat of 16 bits");
  s.code = kDLFloat8_e4m3fn, s.bits = 8;
  expect_borrow(&s, 0, INVALID,
                "the tensor's type is kDLFloat8_e4m3fn (8 bits), which arrays do not hold (they "
                "hold bool, i8 ... u64, f16, bf16, f32, f64, c64 and c128)");
  s.code = kDLFloat4_e2m1fn, s.bits = 4;
  expect_borrow(&s, 0, INVALID, "kDLFloat4_e2m1fn (4 bits), which arrays do not hold");
  s.code = kDLOpaqueHandle, s.bits = 64;
  expect_borrow(&s, 0, INVALID, "kDLOpaqueHandle (64 bits), which arrays do not hold");
  s.code = 200, s.bits = 32;
  expect_borrow(&s, 0, INVALID, "type code 200 (32 bits), which arrays do not hold");
}

static void shapes_and_strides_are_checked(void **state) {
  static const int64_t five[] = {1, 2, 3, 4, 5}, neg[] = {3, -2},
                       huge[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  static const int64_t m34[] = {3, 4}, zero_row[] = {0, 1}, interleaved[] = {2, 3},
                       min_stride[] = {INT64_MIN, 1}, far[] = {(int64_t)1 << 61, 1}, back[] = {-1},
                       fwd[] = {1}, n3[] = {3};
  dl_spec s = dl_f32(0x10000);
  (void)state;
  s.ndim = 5, s.shape = five;
  expect_borrow(&s, 0, INVALID,
                "the tensor has 5 dimensions; an array has 0 to 4 (CUJIT_ARRAY_MAX_DIMS)");
  s.ndim = -1;
  expect_borrow(&s, 0, INVALID, "the tensor has -1 dimensions");
  s.ndim = 2, s.shape = NULL;
  expect_borrow(&s, 0, INVALID, "the tensor's shape is NULL for 2 dimensions");
  s.shape = neg;
  expect_borrow(&s, 0, INVALID, "the tensor's dimension 1 has the negative size -2");
  s.shape = huge;
  expect_borrow(&s, 0, INVALID, "the tensor holds more than 2^62 elements");
  /* a broadcast row: stride 0 over 3 rows */
  s.shape = m34, s.strides = zero_row;
  expect_borrow(&s, 0, INVALID,
                "the tensor's strides (in elements) let two positions share an element, or "
                "interleave its dimensions so that cujit cannot tell: dimension 0 of 3 "
                "elements steps by 0");
  expect_borrow(&s, 0, INVALID, "make a copy first");
  /* (3, 4) by (2, 3): twelve distinct offsets, but interleaved; (3, 4) by (1, 1) overlaps */
  s.strides = interleaved;
  expect_borrow(&s, 0, INVALID, "dimension 1 of 4 elements steps by 3, within the 5 elements");
  s.strides = (const int64_t[]){1, 1};
  expect_borrow(&s, 0, INVALID, "let two positions share an element");
  s.strides = min_stride;
  expect_borrow(&s, 0, INVALID, "steps by -9223372036854775808");
  s.strides = far;
  expect_borrow(&s, 0, INVALID,
                "the tensor's elements, from element 0 at 0x10000 by its "
                "strides, leave the address space");
  /* reversed from 0x10000: element 7 would be below address 0 by far more than 0x10000 */
  s.ndim = 1, s.shape = (const int64_t[]){(int64_t)1 << 20}, s.strides = back;
  expect_borrow(&s, 0, INVALID, "leave the address space");
  s.shape = n3, s.strides = fwd;
  s.data = 0;
  expect_borrow(&s, 0, INVALID, "the tensor's data is NULL for 3 elements");
  s.data = 0x10002;
  expect_borrow(&s, 0, INVALID,
                "the tensor's element 0 is at 0x10002, not a multiple of its element's 4 bytes");
  s.data = 0x10000, s.byte_offset = 6;
  expect_borrow(&s, 0, INVALID, "element 0 is at 0x10006");
  s.data = UINT64_MAX - 3, s.byte_offset = 8;
  expect_borrow(&s, 0, INVALID, "plus byte_offset 8 leaves the address space");
}

static void versions_flags_and_nulls(void **state) {
  dl_spec s = dl_f32(0x10000);
  DLManagedTensorVersioned *t;
  cujit_array *a = (cujit_array *)1;
  long before;
  (void)state;
  /* another major version: refused, deleter called, nothing else read */
  t = dl_tensor_v(&s, 2, 0);
  t->dl_tensor.ndim = 77; /* would be refused differently if it were read */
  before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack(&a, t, 0), INVALID,
                       "cujit_array_from_dlpack: the tensor is of DLPack 2.0; cujit reads DLPack "
                       "1.x tensors");
  assert_int_equal(dl_deleted_count(), before + 1);
  assert_null(a);
  t = dl_tensor_v(&s, 0, 8);
  assert_status_detail(cujit_array_from_dlpack(&a, t, 0), INVALID, "of DLPack 0.8");
  assert_int_equal(dl_deleted_count(), before + 2);
  /* a later minor version reads as 1.x */
  t = dl_tensor_v(&s, 1, 9);
  assert_int_equal(cujit_array_from_dlpack(&a, t, 0), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(dl_deleted_count(), before + 3);
  /* flags */
  expect_borrow(&s, 0x6, INVALID,
                "flags 0x6 holds bits cujit does not know (0x6); pass 0 or "
                "CUJIT_DLPACK_READ_ONLY");
  s.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  expect_borrow(&s, 0, INVALID,
                "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), and an array may be "
                "written by any operation; pass CUJIT_DLPACK_READ_ONLY to take it");
  expect_borrow(&s, CUJIT_DLPACK_READ_ONLY, CUJIT_ERROR_NO_DRIVER, "");
  s.flags = DLPACK_FLAG_BITMASK_IS_COPIED | (1u << 20); /* flags cujit does not act on */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "");
  /* NULL out: refused, and the tensor, handed over, is deleted */
  s.flags = 0;
  t = dl_tensor(&s);
  before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack(NULL, t, 0), INVALID,
                       "cujit_array_from_dlpack: out is NULL");
  assert_int_equal(dl_deleted_count(), before + 1);
  /* NULL tensor: nothing to call */
  a = (cujit_array *)1;
  assert_status_detail(cujit_array_from_dlpack(&a, NULL, 0), INVALID,
                       "cujit_array_from_dlpack: tensor is NULL");
  assert_null(a);
  assert_status_detail(cujit_array_from_dlpack_legacy(&a, NULL, 0), INVALID,
                       "cujit_array_from_dlpack_legacy: tensor is NULL");
  assert_int_equal(dl_deleted_count(), before + 1);
  /* a NULL deleter is not called */
  s.device_type = kDLCPU;
  t = dl_tensor(&s);
  t->deleter = NULL;
  assert_status_detail(cujit_array_from_dlpack(&a, t, 0), INVALID, "kDLCPU");
  assert_int_equal(dl_deleted_count(), before + 1);
  free(t);
}

/* ---- borrowing: tensors that pass every check reach the driver ---- */

static void accepted_tensors_need_the_driver(void **state) {
  static const int64_t m[] = {4, 6}, t_strides[] = {1, 4}, rev[] = {-6, -1}, pad[] = {8, 1};
  static const int64_t empty[] = {0, 5}, odd_strides[] = {0, 0}, one_row[] = {1, 6}, any[] = {0, 1};
  dl_spec s = dl_f32(0x10000);
  int code;
  (void)state;
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.ndim = 2, s.shape = m;
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver"); /* C order */
  s.strides = t_strides;                                         /* a transpose */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.strides = rev, s.data = 0x10000 + 23 * 4; /* reversed both ways */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.strides = pad, s.data = 0x10000, s.byte_offset = 256; /* rows of 8, offset */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.shape = empty, s.strides = odd_strides, s.data = 0, s.byte_offset = 0; /* empty, NULL data */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.shape = one_row, s.strides = any, s.data = 0x10000; /* a dimension of 1 steps by anything */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.ndim = 0, s.shape = NULL, s.strides = NULL; /* 0-d */
  expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s = dl_f32(0x10000);
  for (code = 0; code <= kDLBool; code++) { /* each type code arrays hold, at its widest */
    s.code = (uint8_t)code;
    s.bits = code == kDLBool ? 8 : code == kDLBfloat ? 16 : code == kDLComplex ? 128 : 64;
    if (code == kDLOpaqueHandle) continue;
    expect_borrow(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  }
}

static void legacy_tensors(void **state) {
  static const int64_t m[] = {4, 6}, t_strides[] = {1, 4};
  dl_spec s = dl_f32(0x10000);
  DLManagedTensor *t;
  cujit_array *a = NULL;
  long before;
  (void)state;
  expect_borrow_legacy(&s, 0, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  s.ndim = 2, s.shape = m, s.strides = t_strides;
  expect_borrow_legacy(&s, CUJIT_DLPACK_READ_ONLY, CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  expect_borrow_legacy(&s, 8, INVALID,
                       "cujit_array_from_dlpack_legacy: flags 0x8 holds bits cujit does not know");
  s.device_type = kDLCUDAManaged;
  expect_borrow_legacy(&s, 0, INVALID,
                       "cujit_array_from_dlpack_legacy: the tensor is in CUDA managed memory");
  s.device_type = kDLCUDA, s.lanes = 2;
  expect_borrow_legacy(&s, 0, INVALID, "in 2 lanes");
  s.lanes = 1;
  t = dl_tensor_legacy(&s);
  before = dl_deleted_count();
  assert_status_detail(cujit_array_from_dlpack_legacy(NULL, t, 0), INVALID, "out is NULL");
  assert_int_equal(dl_deleted_count(), before + 1);
  t = dl_tensor_legacy(&s);
  t->deleter = NULL;
  assert_int_equal(cujit_array_from_dlpack_legacy(&a, t, 0), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(dl_deleted_count(), before + 1);
  free(t);
}

/* A producer's deleter may call cujit (and fail there): the refusal's detail stays. */
static void deleter_calling_cujit(DLManagedTensorVersioned *self) {
  cujit_array *none = NULL;
  assert_int_not_equal(cujit_array_empty(&none, CUJIT_TYPE_PTR, 0, NULL), CUJIT_OK);
  dl_deleter(self);
}

static void a_deleter_that_fails_in_cujit_leaves_the_detail(void **state) {
  dl_spec s = dl_f32(0x10000);
  DLManagedTensorVersioned *t;
  cujit_array *a = NULL;
  (void)state;
  s.lanes = 3;
  t = dl_tensor(&s);
  t->deleter = deleter_calling_cujit;
  assert_status_detail(cujit_array_from_dlpack(&a, t, 0), INVALID, "in 3 lanes");
  assert_int_equal(cujit_last_status(), INVALID);
  assert_null(strstr(cujit_last_error(), "element type"));
}

/* ---- lending ---- */

static void lending_without_a_driver(void **state) {
  const int64_t n = 8, zero = 0;
  cujit_array *a = NULL, *e = NULL, *v = NULL, *gone = NULL;
  DLManagedTensorVersioned *t = (DLManagedTensorVersioned *)1;
  (void)state;
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, 0x10000));
  assert_ok(cujit_array_slice(a, 0, 7, -1, -2, &v));
  assert_status_detail(cujit_array_to_dlpack(a, 0, NULL), INVALID,
                       "cujit_array_to_dlpack: out is NULL");
  assert_status_detail(cujit_array_to_dlpack(a, 2, &t), INVALID,
                       "cujit_array_to_dlpack: flags 0x2 holds bits cujit does not know (0x2)");
  assert_null(t);
  /* a wrapped array's device is the driver's to say */
  t = (DLManagedTensorVersioned *)1;
  assert_status_detail(cujit_array_to_dlpack(v, 0, &t), CUJIT_ERROR_NO_DRIVER, "no CUDA driver");
  assert_null(t);
  assert_ok(cujit_array_wrap(&e, CUJIT_TYPE_F32, 1, &zero, 0));
  assert_int_equal(cujit_array_to_dlpack(e, CUJIT_DLPACK_READ_ONLY, &t), CUJIT_ERROR_NO_DRIVER);
  assert_ok(cujit_array_wrap(&gone, CUJIT_TYPE_F32, 1, &n, 0x20000));
  cujit_array_destroy(gone);
  t = (DLManagedTensorVersioned *)1;
  assert_status_detail(cujit_array_to_dlpack(gone, 0, &t), INVALID,
                       "cujit_array_to_dlpack: a is not a live array");
  assert_null(t);
  assert_status_detail(cujit_array_to_dlpack(NULL, 0, &t), INVALID,
                       "cujit_array_to_dlpack: a is NULL");
  cujit_array_destroy(v);
  cujit_array_destroy(e);
  cujit_array_destroy(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(types_map_both_ways),
      cmocka_unit_test(devices_are_refused_with_their_reason),
      cmocka_unit_test(types_are_refused_by_name),
      cmocka_unit_test(shapes_and_strides_are_checked),
      cmocka_unit_test(versions_flags_and_nulls),
      cmocka_unit_test(accepted_tensors_need_the_driver),
      cmocka_unit_test(legacy_tensors),
      cmocka_unit_test(a_deleter_that_fails_in_cujit_leaves_the_detail),
      cmocka_unit_test(lending_without_a_driver),
  };
  /* no driver: these run the paths before it (CUJIT_LIBCUDA names none here) */
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/**
 * @file cujit_array.h
 * @brief cujit's array layer (experimental): device arrays, their operations, reductions,
 * scans, random arrays and kernel generators.
 *
 * Experimental: the functions, types and macros of this header may change in any 0.x
 * release, patch releases included, each change listed in the CHANGELOG; those of
 * cujit.h, which this header includes, are stable within a minor version.
 *
 * Contents
 *   - 15. Device arrays
 *   - 16. Array operations
 *   - 17. Reductions, scans and random arrays
 *   - 18. Kernel generators
 */
#ifndef CUJIT_ARRAY_H_INCLUDED
#define CUJIT_ARRAY_H_INCLUDED

#include <stdio.h> /* FILE, for cujit_array_print() */

#include "cujit.h"

#ifdef __cplusplus
extern "C" {
#endif
/* =======================================================================================
 * 15. Device arrays                                                         experimental
 * ===================================================================================== */

/** @defgroup arrays 15. Device arrays (experimental)
 *  Device arrays (PyCUDA's gpuarray, CuPy's ndarray): typed, shaped device memory that
 *  cujit allocates, fills, copies and frees, and that kernels take as arguments. The
 *  functions that make an array fail with CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE
 *  where there is no device, and with CUJIT_ERROR_DEVICE_MEMORY when it is full. The
 *  "device errors" that the functions below return are those (an array over memory of your
 *  own, cujit_array_wrap(), exists without a device, and its operations fail so), and
 *  CUJIT_ERROR_LAUNCH_FAILED when a kernel faulted, CUJIT_ERROR_DRIVER when a driver call
 *  failed.
 *
 *  Operations with an output: `out` points to an array pointer. When *out is NULL a new
 *  array is made (owned by the caller); otherwise the result goes into *out, which must
 *  have the result's type and shape. *out may be an input, or any view that shares memory
 *  with one (reversed, transposed, shifted, overlapping in part): the result is the one
 *  computed into a temporary and then copied into *out, as NumPy gives it. An output
 *  holding an input's own elements, element for element (the input itself), is computed
 *  in place without a temporary; so is a reduction's, which reads every element before it
 *  writes. cujit_array_put() reads values and indices that share the written array's
 *  memory as they were before the call. Arrays are used on the device that is current
 *  when they are made.
 *
 *  Strided views (cujit_array_slice(), cujit_array_transpose()) hold elements that are not
 *  one after another in C order. The operations of sections 16 and 17, copies, conversions,
 *  fills, reads and writes take them and step through them by their strides; the prefix
 *  scans and the kernel generators, which index arrays as x[i], refuse them
 *  (CUJIT_ERROR_INVALID_VALUE: "... is a strided view ...; make it contiguous with
 *  cujit_array_copy first"), as cujit_array_view() and cujit_array_reshape() refuse a
 *  shape that no view of their elements has. Nothing reads a strided view as if it were
 *  contiguous.
 *  @{ */

/** An array: element type, shape (0 to CUJIT_ARRAY_MAX_DIMS dimensions, C order; 0-d
 *  holds one element, as a reduction's result), strides (contiguous, but in a strided
 *  view), 64-bit element count, device memory on the device that was current when it was
 *  made, and the stream its work is ordered on (the legacy default stream unless set).
 *  A `cujit_array *` is a handle, not an address: cujit never gives the same handle twice
 *  in a process, so every function below that takes one refuses a destroyed array (or
 *  anything cujit did not make) with CUJIT_ERROR_INVALID_VALUE naming the function and
 *  the argument, even after a new array has taken its place; never dereference one. At
 *  most 2^24 arrays (views included) are live at once. */
typedef struct cujit_array cujit_array;

#define CUJIT_ARRAY_MAX_DIMS 4 /**< the most dimensions an array has */

/** @name New arrays
 *  `type` is any cujit_type except CUJIT_TYPE_BYTES and CUJIT_TYPE_PTR; `shape` holds
 *  `ndim` sizes (0 is allowed: an empty array). Memory comes from cujit's stream-ordered
 *  pool, so arrays made and destroyed in a loop allocate nothing new after the first
 *  pass. *out is owned by the caller: cujit_array_destroy(). Each returns CUJIT_OK;
 *  CUJIT_ERROR_INVALID_VALUE naming what is wrong (type, ndim, a negative size, sizes
 *  other than 0 that multiply to more than 2^62, in an empty array too as NumPy counts
 *  them, NULL pointers); CUJIT_ERROR_DEVICE_MEMORY;
 *  CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE.
 *  @{ */

/** An array whose contents are undefined.
 *  @param out    receives the array.
 *  @param type   its element type.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_empty(cujit_array **out, cujit_type type, int ndim,
                                         const int64_t *shape);
/** An array whose bits are all 0.
 *  @param out    receives the array.
 *  @param type   its element type.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_zeros(cujit_array **out, cujit_type type, int ndim,
                                         const int64_t *shape);
/** An array whose every element is *value.
 *  @param out    receives the array.
 *  @param type   its element type.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @param value  an element of `type`, e.g. a float for CUJIT_TYPE_F32, two for C64.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_full(cujit_array **out, cujit_type type, int ndim,
                                        const int64_t *shape, const void *value);
/** A new array of a's type and shape (its dimensions kept, not flattened), its contents
 *  not set, on a's stream; NumPy's empty_like.
 *  @param out  receives the array.
 *  @param a    the array to take the type, shape and stream of.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_empty_like(cujit_array **out, const cujit_array *a);
/** start, start + step, ... below stop (above it for a negative step), as NumPy's arange;
 *  element i is computed as start + i * step in double precision, then converted.
 *  @param out    receives the 1-D array.
 *  @param type   its element type.
 *  @param start  the first value.
 *  @param stop   the bound, not included.
 *  @param step   the difference between neighbours; not 0.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_arange(cujit_array **out, cujit_type type, double start,
                                          double stop, double step);
/** A new array holding a copy of host memory; PyCUDA's gpuarray.to_gpu(). Returns when
 *  the copy is done.
 *  @param out    receives the array.
 *  @param type   its element type.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @param host   size times the element size bytes, C order.
 *  @return as said above. */
CUJIT_API cujit_status cujit_array_from_host(cujit_array **out, cujit_type type, int ndim,
                                             const int64_t *shape, const void *host);
/** An array over device memory the caller owns (for example from cujit_mem_alloc()):
 *  cujit_array_destroy() frees the handle, never the memory.
 *  @param out    receives the array.
 *  @param type   its element type.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @param data   the device memory; must outlive the array.
 *  @return as said above, but never CUJIT_ERROR_DEVICE_MEMORY. */
CUJIT_API cujit_status cujit_array_wrap(cujit_array **out, cujit_type type, int ndim,
                                        const int64_t *shape, CUdeviceptr data);

/** @} */

/** @name Freeing, copying, filling
 *  @{ */

/** Frees the array (and its memory, once no view of it is left), ordered after the work
 *  queued on its stream: a launch on that stream that uses it and is still running is not
 *  disturbed. Work on other streams must be finished first. A handle destroyed already (or
 *  not an array) frees nothing: the call only sets the thread's error detail
 *  (cujit_last_error()) and logs it at debug level. Every other function refuses a
 *  destroyed handle. An array must not be destroyed while another thread uses it.
 *  @param a  the array; NULL is fine. */
CUJIT_API void cujit_array_destroy(cujit_array *a);

/** Copies the array into host memory; returns when the copy is done. PyCUDA's .get(). A
 *  strided view's elements are gathered on the device first (in pool memory), so the host
 *  receives them in C order too.
 *  @param a      the array.
 *  @param host   receives its elements, C order.
 *  @param bytes  must be its cujit_array_nbytes().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a NULL host or
 *          another size; device errors. */
CUJIT_API cujit_status cujit_array_read(const cujit_array *a, void *host, size_t bytes);
/** Copies host memory into the array (into a strided view's elements, through pool memory).
 *  @param a      the array.
 *  @param host   its new elements, C order.
 *  @param bytes  must be its cujit_array_nbytes().
 *  @return as cujit_array_read(). */
CUJIT_API cujit_status cujit_array_write(cujit_array *a, const void *host, size_t bytes);
/** Copies elements [offset, offset + count) of a contiguous array, in C order, into host
 *  memory; returns when the copy is done. A strided view (cujit_array_slice(),
 *  cujit_array_transpose()) is refused: copy it first (cujit_array_copy()).
 *  @param a       the array.
 *  @param offset  the first element; 0 <= offset <= its size.
 *  @param count   how many; offset + count <= its size (0 copies nothing).
 *  @param host    receives `count` elements.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a range outside it
 *          (named, with the array's size), a NULL host or a strided view; device errors. */
CUJIT_API cujit_status cujit_array_read_range(const cujit_array *a, int64_t offset, int64_t count,
                                              void *host);
/** Copies `count` elements of host memory into elements [offset, offset + count) of a
 *  contiguous array, in C order; returns when the copy is done. The rest of the array is unchanged.
 *  @param a       the array.
 *  @param offset  the first element written; 0 <= offset <= its size.
 *  @param count   how many; offset + count <= its size (0 copies nothing).
 *  @param host    `count` elements.
 *  @return as cujit_array_read_range(). */
CUJIT_API cujit_status cujit_array_write_range(cujit_array *a, int64_t offset, int64_t count,
                                               const void *host);
/** Sets every element to *value.
 *  @param a      the array.
 *  @param value  an element of the array's type.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array or a NULL value;
 *          device errors. */
CUJIT_API cujit_status cujit_array_fill(cujit_array *a, const void *value);

/** A copy of `a` (contiguous when new: the way to make a strided view contiguous).
 *  @param a    the array.
 *  @param out  the output (see the output rule above).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array or an output of
 *          another type or shape; device errors. */
CUJIT_API cujit_status cujit_array_copy(const cujit_array *a, cujit_array **out);
/** `a` converted to `type` (C conversions; complex to real takes the real part).
 *  @param a     the array.
 *  @param type  the new element type.
 *  @param out   the output (see the output rule above).
 *  @return as cujit_array_copy(). */
CUJIT_API cujit_status cujit_array_astype(const cujit_array *a, cujit_type type, cujit_array **out);
/** @} */

/** @name Views and streams
 *  @{ */

/** A view of elements [start, stop) of `a` taken as 1-D (C order); it shares a's memory,
 *  which lives until the last of them is destroyed. A strided view gives one only where
 *  its elements are evenly spaced in C order (a[::2], a row or a column).
 *  @param a      the array.
 *  @param start  the first element.
 *  @param stop   one past the last; start <= stop <= its size.
 *  @param view   receives the view; owned by the caller: cujit_array_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a NULL view, a range
 *          outside it, or a strided view whose elements no 1-D view holds. */
CUJIT_API cujit_status cujit_array_view(const cujit_array *a, int64_t start, int64_t stop,
                                        cujit_array **view);
/** A view of `a` with another shape of the same element count. For a strided view, only
 *  where NumPy's reshape would give a view (without a copy): a column (n, 1) as (n,), say,
 *  but not a transposed matrix as 1-D.
 *  @param a      the array.
 *  @param ndim   the new number of dimensions.
 *  @param shape  `ndim` sizes whose product is a's size.
 *  @param view   receives the view; owned by the caller: cujit_array_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a NULL view, a shape
 *          of another size, or one that a strided view's elements cannot take without a
 *          copy. */
CUJIT_API cujit_status cujit_array_reshape(const cujit_array *a, int ndim, const int64_t *shape,
                                           cujit_array **view);
/** A view of `a` with dimension `dim` cut to indices start, start + step, ... before stop
 *  (Python's a[start:stop:step] on that dimension, with start and stop as range() takes
 *  them): a[::2] of n elements is (0, n, 2), a reversed (n - 1, -1, -1), rows 1 to 3 of a
 *  matrix dim 0 (1, 4, 1), its columns 0, 2, 4, ... dim 1 (0, columns, 2). The other
 *  dimensions stay. The view shares a's memory; unless its step is 1 on the last
 *  dimensions it is strided (cujit_array_contiguous() is 0).
 *  @param a      the array.
 *  @param dim    the dimension, below a's ndim.
 *  @param start  the first index; in [0, size of the dimension) unless none is taken.
 *  @param stop   the bound, not included (below start for a negative step; -1 reaches 0).
 *  @param step   the difference between one index and the next; not 0, may be negative.
 *  @param view   receives the view; owned by the caller: cujit_array_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a NULL view, a
 *          dimension a does not have, a step of 0, or indices outside the dimension. */
CUJIT_API cujit_status cujit_array_slice(const cujit_array *a, int dim, int64_t start, int64_t stop,
                                         int64_t step, cujit_array **view);
/** A view of `a` with its dimensions in reverse order (NumPy's a.T): the transpose of a
 *  matrix, a strided view of the same memory. 0-d and 1-D arrays give a view like them.
 *  @param a     the array.
 *  @param view  receives the view; owned by the caller: cujit_array_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array or a NULL view. */
CUJIT_API cujit_status cujit_array_transpose(const cujit_array *a, cujit_array **view);
/** Orders the array's later work (and its freeing) on `stream`.
 *  @param a       the array.
 *  @param stream  a stream of the array's device; NULL: the legacy default.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array. */
CUJIT_API cujit_status cujit_array_set_stream(cujit_array *a, CUstream stream);
/** @} */

/** @name Properties
 *  For a destroyed or NULL array they return 0 (CUJIT_TYPE_BYTES for the type, NULL for
 *  the stream). Each looks the handle up under a short lock, so they may be called on a
 *  launch path.
 *  @{ */
/** @param a  the array.
 *  @return its element type. */
CUJIT_API cujit_type cujit_array_type(const cujit_array *a);
/** @param a  the array.
 *  @return its number of dimensions. */
CUJIT_API int cujit_array_ndim(const cujit_array *a);
/** @param a    the array.
 *  @param dim  a dimension below its ndim.
 *  @return that dimension's size (0 for a dimension it does not have). */
CUJIT_API int64_t cujit_array_shape(const cujit_array *a, int dim);
/** @param a  the array.
 *  @return its element count. */
CUJIT_API int64_t cujit_array_size(const cujit_array *a);
/** @param a  the array.
 *  @return its elements' size in bytes (of a strided view: its elements', not the span
 *          of memory they lie in). */
CUJIT_API size_t cujit_array_nbytes(const cujit_array *a);
/** @param a  the array.
 *  @return the device address of its first element (element 0 in C order; in a reversed
 *          view the highest address). */
CUJIT_API CUdeviceptr cujit_array_data(const cujit_array *a);
/** @param a    the array.
 *  @param dim  a dimension below its ndim.
 *  @return the distance, in elements, from an element to the next along `dim` (negative
 *          in a reversed view; 0 for a dimension it does not have). */
CUJIT_API int64_t cujit_array_stride(const cujit_array *a, int dim);
/** @param a  the array.
 *  @return 1 when its elements lie one after another in C order (every array cujit makes,
 *          and views of a range or of another shape of one), 0 for a strided view. */
CUJIT_API int cujit_array_contiguous(const cujit_array *a);
/** @param a  the array.
 *  @return the stream its work is ordered on. */
CUJIT_API CUstream cujit_array_stream(const cujit_array *a);
/** @} */

/** @name Element sizes and kernel arguments
 *  @{ */
/** @param type  an element type.
 *  @return the bytes of one element of `type` (0 for CUJIT_TYPE_BYTES). */
CUJIT_API size_t cujit_type_size(cujit_type type);

/** An array as a kernel argument: its device pointer, for cujit_launch()/CUJIT_LAUNCH. For
 *  a destroyed or NULL array it is an argument every launch refuses
 *  (CUJIT_ERROR_INVALID_ARGS naming it), never a null pointer; an empty array's pointer
 *  may be 0 and passes as it is. A strided view passes the address of its first element:
 *  a kernel must step through it by its strides (cujit_array_stride()), or be given
 *  cujit_array_copy() of it.
 *  @param a  the array.
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_array_arg(const cujit_array *a) {
  CUdeviceptr d = cujit_array_data(a);
  cujit_arg r = cujit_ptr(d);
  if (!d && cujit_array_type(a) == CUJIT_TYPE_BYTES) r.kind = CUJIT_ARG_ARRAY; /* not live */
  return r;
}
/** An array as an argument of a generated kernel's call (cujit_elementwise_call(),
 *  cujit_reduction_call(); the CUJIT_ELEMENTWISE and CUJIT_REDUCTION macros make it from
 *  the `cujit_array *` itself): the handle, looked up and checked by the call.
 *  @param a  the array.
 *  @return an argument for an array declaration of a generated kernel. */
static inline cujit_arg cujit_arr(const cujit_array *a) {
  cujit_arg r = cujit_ptr((CUdeviceptr)(uintptr_t)a);
  r.kind = CUJIT_ARG_ARRAY;
  return r;
}
/** @} */

/** @name Arrays lent to and borrowed from other libraries (DLPack)
 *  DLPack is the C struct through which array libraries lend each other memory without a
 *  copy; libtorch, CuPy, JAX, Arrow and NumPy speak it. cujit_array_to_dlpack() lends an
 *  array as a DLPack 1.x `DLManagedTensorVersioned`; cujit_array_from_dlpack() (and
 *  cujit_array_from_dlpack_legacy() for the older `DLManagedTensor`) makes an array over
 *  another library's device memory. This header only names the two structs: to read or
 *  fill one, include the `dlpack.h` of DLPack 1.0 or newer, the other library's or DLPack's
 *  own (docs/manual/dlpack.md shows both directions).
 *
 *  A tensor carries its producer's deleter, which its consumer calls exactly once, when it
 *  no longer needs the memory. Types map one to one, always with lanes 1: bool is kDLBool of
 *  8 bits; i8, i16, i32, i64 kDLInt and u8 ... u64 kDLUInt of their bits; f16, f32, f64
 *  kDLFloat; bf16 kDLBfloat of 16; c64 and c128 kDLComplex of 64 and 128. Strides are in
 *  elements, as DLPack counts them; a strided or reversed view keeps its own.
 *
 *  DLPack's C struct carries no stream: the side that takes a tensor must order its work
 *  after the work the other side queued on the memory (synchronise that stream, or work on
 *  the same one, as cujit_array_set_stream() allows).
 *  @{ */

struct DLManagedTensorVersioned;
struct DLManagedTensor;

/** Flags of cujit_array_to_dlpack() and cujit_array_from_dlpack(). */
enum {
  /** The exchange is read-only. Lending: the tensor is marked read-only
   *  (DLPACK_FLAG_BITMASK_READ_ONLY) and its consumer must not write to it. Borrowing: the
   *  caller promises to only read the array, so a tensor marked read-only is taken (cujit
   *  does not stop a write into the array; it only keeps the mark: every tensor lent from
   *  such an array, or its views, is read-only). */
  CUJIT_DLPACK_READ_ONLY = 1u << 0
};

/** Lends the array to another library as a DLPack 1.x tensor, without a copy: version
 *  1.1, device kDLCUDA and the ordinal of the device its memory is on (for an array of
 *  cujit_array_wrap(), what the driver says of the memory: kDLCUDA, or kDLCUDAManaged or
 *  kDLCUDAHost with device 0), a's type (see above), shape and strides, data the address
 *  of element 0 (NULL for an empty array) and byte_offset 0, flags as `flags` asks.
 *
 *  The tensor holds a's memory as a view does: it stays valid after cujit_array_destroy()
 *  of a and of all its views, until the tensor's deleter is called. The consumer owns the
 *  tensor and calls `t->deleter(t)` exactly once when done, from any thread (one whose
 *  current context is none or another device's gets the primary context of the memory's
 *  device for the call); then, if no array or other tensor holds the memory, it goes back
 *  to cujit's pool ordered after the work queued on the stream a had when it was lent
 *  (that stream must still exist then: destroy it only after the deleter, or lend arrays
 *  of the default stream), as cujit_array_destroy() frees it. Work the consumer queued on
 *  other streams must be finished before the deleter is called. A wrapped array's memory
 *  stays the caller's, as for the array: it must outlive the consumer's use of it.
 *  @param a      the array (a view is fine).
 *  @param flags  0, or CUJIT_DLPACK_READ_ONLY.
 *  @param out    receives the tensor, owned by the consumer: its deleter frees it.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, a NULL out, a flag
 *          cujit does not know, or a wrapped array whose memory the driver does not know;
 *          CUJIT_ERROR_OUT_OF_MEMORY; for a wrapped array, CUJIT_ERROR_NO_DRIVER or
 *          driver errors when the driver cannot be asked. *out is NULL on failure. */
CUJIT_API cujit_status cujit_array_to_dlpack(const cujit_array *a, unsigned flags,
                                             struct DLManagedTensorVersioned **out);

/** Makes an array over the memory of another library's DLPack 1.x tensor, without a copy:
 *  its type, shape and strides (a view: cujit_array_contiguous() says whether its
 *  elements are in C order; NULL strides are C order), element 0 at data + byte_offset,
 *  on the legacy default stream (cujit_array_set_stream() changes it). The memory must be
 *  device memory (kDLCUDA) of a device the driver lists, with device_id its ordinal.
 *
 *  The call takes the tensor over, whatever it returns; afterwards the caller must not
 *  touch it nor call its deleter. On success cujit calls the deleter exactly once, when
 *  the last array over the memory (the one made here, its views, the tensors lent from
 *  them) is destroyed, on the thread that destroys it, after waiting for the work queued
 *  on that array's stream, so that the producer may free or reuse the memory at once. On
 *  failure cujit calls the deleter before returning, as DLPack asks of a consumer that
 *  cannot use a tensor. (A tensor taken from a Python capsule: rename the capsule
 *  "used_dltensor_versioned" before passing the tensor, so that the capsule does not call
 *  the deleter too.) A deleter that is NULL is not called.
 *
 *  Refused, each with the reason: a major version other than 1 (no other field is read);
 *  a tensor marked read-only without CUJIT_DLPACK_READ_ONLY; host memory (kDLCPU,
 *  kDLCUDAHost: copy it with cujit_array_from_host()); CUDA managed memory
 *  (kDLCUDAManaged, or kDLCUDA memory the driver says is managed: the host may touch it
 *  or the driver move it while cujit's work runs, which cujit cannot order; copy it, or
 *  wrap its address with cujit_array_wrap() if you keep the host away); another vendor's
 *  device; memory the driver does not know or places on another device than device_id;
 *  a type arrays do not hold (lanes other than 1, bits that do not match, types such as
 *  kDLFloat8_e4m3fn), named; more than CUJIT_ARRAY_MAX_DIMS dimensions, a negative size
 *  or more than 2^62 elements; strides that let two positions share an element (a stride
 *  of 0 over a dimension of more than one, as a broadcast view has) or that interleave
 *  dimensions so that cujit cannot tell; an element 0 not aligned to the element's size,
 *  NULL data for a tensor of elements, or an extent that leaves the address space.
 *  The producer's work on the memory must be finished, or ordered before cujit's (see
 *  above), before cujit uses the array.
 *  @param out     receives the array, owned by the caller: cujit_array_destroy().
 *  @param tensor  the tensor, handed over (see above); NULL is refused and nothing is
 *                 called.
 *  @param flags   0, or CUJIT_DLPACK_READ_ONLY.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL out or tensor, a flag cujit does
 *          not know, or a tensor refused as said above; CUJIT_ERROR_NO_DEVICE for a
 *          device_id the driver does not list; CUJIT_ERROR_NO_DRIVER;
 *          CUJIT_ERROR_OUT_OF_MEMORY; driver errors. *out is NULL on failure. */
CUJIT_API cujit_status cujit_array_from_dlpack(cujit_array **out,
                                               struct DLManagedTensorVersioned *tensor,
                                               unsigned flags);

/** As cujit_array_from_dlpack(), for the unversioned `DLManagedTensor` of DLPack before
 *  1.0, which producers that predate the versioned struct still make. It has no version
 *  and no flags: it is never read-only.
 *  @param out     receives the array, owned by the caller: cujit_array_destroy().
 *  @param tensor  the tensor, handed over as for cujit_array_from_dlpack(); NULL is
 *                 refused and nothing is called.
 *  @param flags   0, or CUJIT_DLPACK_READ_ONLY (the array is then lent read-only again).
 *  @return as cujit_array_from_dlpack(). */
CUJIT_API cujit_status cujit_array_from_dlpack_legacy(cujit_array **out,
                                                      struct DLManagedTensor *tensor,
                                                      unsigned flags);

/** @} */

/** @name Printing
 *  An array as NumPy's print(a) and str(a) show it, with NumPy's default print options:
 *  the elements in brackets, one level a dimension (rows of a matrix on lines of their
 *  own, blocks of a 3-D array apart by a blank line), lines wrapped at 75 characters;
 *  bool as True and False; integers right-aligned to the widest; floats with the fewest
 *  digits that name each value in its type (f16, bf16 and f32 their own: an f32 0.1 is
 *  "0.1"), at most 8 after the point, in fixed notation ("[1.5  2.25]") unless the
 *  nonzero magnitudes reach 10^8 (f64; 10^6 for f32, 10^3 for f16, 10^2 for bf16), go
 *  below 10^-4 or span more than a factor of 1000, then in scientific notation with one
 *  number of digits for all ("[1.0e-05 1.5e+00]"); nan, inf and -inf; complex numbers as
 *  "1.+2.j", the two parts each formatted so. An array of more than 1000 elements is
 *  summarised: only the first and last 3 indices of each dimension of more than 6 are
 *  shown, with "..." between (and read from the device: the rest is never copied). A 0-d
 *  array prints as NumPy prints its scalar ("1.5", "1e+20", "(1+2j)", "True"), an empty
 *  one as "[]". The text is NumPy 2's (2.3 and later, which chose f32's and f16's cutoffs
 *  by their precision) for every type NumPy has; bf16, which NumPy lacks, is printed by
 *  the same rules with its own precision.
 *  @{ */

/** Prints the array's text and a newline to `stream` (Python's print(a)). Waits for the
 *  array's work and reads it (all of it, or the shown corners of a summarised one).
 *  @param a       the array.
 *  @param stream  where to write, e.g. stdout.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed or NULL array or a NULL
 *          stream; CUJIT_ERROR_FILE when writing to the stream fails; device errors. */
CUJIT_API cujit_status cujit_array_print(const cujit_array *a, FILE *stream);
/** The array's text (NumPy's str(a), no newline) into a buffer, as snprintf writes: at most
 *  size - 1 characters and a NUL when size is above 0; *length gets the whole text's
 *  length, so that a call with size 0 measures it and a text longer than the buffer shows
 *  as *length >= size (the buffer then holds its beginning).
 *  @param a       the array.
 *  @param buf     the buffer; may be NULL when size is 0.
 *  @param size    its size in bytes.
 *  @param length  receives the text's length without the NUL; may be NULL.
 *  @return CUJIT_OK (a text cut short too); CUJIT_ERROR_INVALID_VALUE for a destroyed or
 *          NULL array, or a NULL buf with a size; device errors. */
CUJIT_API cujit_status cujit_array_format(const cujit_array *a, char *buf, size_t size,
                                          size_t *length);
/** cujit_array_format() of host memory: the text of an array of `type` and `shape` whose
 *  elements `host` holds (C order), without a device: a host result or a host reference
 *  printed as NumPy prints it. Reads only the elements the text shows.
 *  @param type    the element type.
 *  @param ndim    the number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape   `ndim` sizes.
 *  @param host    the elements, C order; may be NULL for an empty shape.
 *  @param buf     the buffer; may be NULL when size is 0.
 *  @param size    its size in bytes.
 *  @param length  receives the text's length without the NUL; may be NULL.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming what is wrong (a type arrays do not
 *          hold, ndim, a negative size, more than 2^62 elements, a NULL host or shape, a
 *          NULL buf with a size); CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_array_format_host(cujit_type type, int ndim, const int64_t *shape,
                                               const void *host, char *buf, size_t size,
                                               size_t *length);
/** @} */

/** @} */

/* =======================================================================================
 * 16. Array operations                                                      experimental
 * ===================================================================================== */

/** @defgroup array_ops 16. Array operations (experimental)
 *  Array operations (PyCUDA's gpuarray operators and cumath, CuPy's ufuncs). Each runs as
 *  one kernel generated for its types and compiled through cujit's caches (in memory
 *  within a process, on disk across processes), on the stream of its first array input.
 *  Outputs follow the output rule of @ref arrays "Device arrays": *out NULL makes a new
 *  array, else *out receives it.
 *
 *  Type promotion follows NumPy 2. Two arrays: the smallest type that holds both (bool <
 *  integers < floats < complex; a signed and an unsigned integer of one size give the next
 *  larger signed one, u64 with a signed one gives f64; an integer with a float gives a
 *  float wide enough for the integer, e.g. i16+f16 -> f32, i32+f32 -> f64; f16 with bf16
 *  gives f32). A scalar is "weak", as a Python number: it does not widen an array of its
 *  kind (2.0 * f16 array stays f16, 3 * i8 array stays i8); a float scalar with an integer
 *  or bool array gives f64. Comparisons give bool arrays; true division of integers gives
 *  f64; pow and fmod of bools give i8 (as NumPy's); the math functions of an integer
 *  array compute in f64. A float scalar with an f16 or bf16 array is first rounded to the
 *  array's type (0.1 to the nearest f16, 1e10 to its infinity), as NumPy 2 casts it.
 *  Integer arithmetic wraps as NumPy's, modulo 2^bits: INT32_MAX + 1 is INT32_MIN, and
 *  so are -INT32_MIN and INT32_MIN * -1; sums, products, powers, negations, reductions,
 *  dot and cumsum alike. The generated code computes it through unsigned types, so it has
 *  no signed overflow (undefined in C++) for any values.
 *
 *  Complex numbers (cuda::std::complex): addition and subtraction are the parts' IEEE
 *  operations. Products, quotients, powers and the functions are within 32 ulp of the
 *  result's magnitude (a product's of |a||b|; a power's of |x^y| (1 + |y log x|), the
 *  log's rounding carried through the exponent), where no part of the exact result
 *  overflows. sqrt, log, log10, asin, acos, atan, tan, tanh and quotients are cujit's own
 *  formulas, which hold that for every finite argument (cuda::std's cancel: its asin and
 *  acos lose accuracy as |z|^2, its tan and tanh near their poles); exp, sinh and cosh
 *  of z whose real part is beyond the log of the largest finite value (709.78; 88.72 for
 *  C64), sin and cos of z whose imaginary part is, a power whose Re(y log x) is, and a
 *  product whose |a||b| is beyond half the largest finite value, may give an infinite or
 *  NaN part where the result's part is finite. An argument with an infinite or NaN part,
 *  and a zero divisor, give C99 Annex G's special values as cuda::std computes them: an
 *  infinity (a part infinite, the other any value) for an infinity times a nonzero number
 *  or a nonzero number over zero, 0 for a finite number over an infinity, where NumPy may
 *  give NaN; the signs Annex G leaves open are cuda::std's. x^y is 1 where y is 0 (any
 *  x) and, for x = 0, 0 where Re y > 0 and NaN otherwise, as NumPy's.
 *
 *  Shapes broadcast by NumPy's rule: aligned on their last dimensions (an array of fewer
 *  dimensions counting as one with leading dimensions of size 1), each pair of sizes
 *  equal or one of them 1, the size 1 stretched to the other; the result has the larger
 *  of each pair ((4, 1) + (3,) is (4, 3); a 0-d array or b[0:1] goes with any shape).
 *  Any other pair is CUJIT_ERROR_INVALID_VALUE naming both shapes and the two sizes that
 *  differ. A given output must have the result's shape: it is not broadcast. A stretched
 *  array is read, not copied (a stride of 0 along its stretched dimensions). Strided views are
 * taken as they are (see @ref arrays "Device arrays"); arrays that are all contiguous move 16 bytes
 * per access where they are 16-byte aligned.
 *  @{ */

/** @name The operations as tables
 *  Each family of operations is one X-macro table, as CUJIT_STATUS_MAP is: one
 *  `X(NAME, number, numpy, cuda, types, what)` per operation, from which the enum, the
 *  kernels cujit writes and the manual's lists come. Expand a table with a macro of your
 *  own to list every operation (its name, NumPy's, the types it takes). The columns:
 *    - NAME: the enumerator's name after the family's prefix (CUJIT_BINOP_ADD);
 *    - number: its value, which never changes;
 *    - numpy: NumPy's function of the same operation ("add" for numpy.add);
 *    - cuda: what the kernel computes it with. An operator ("+") stands between the
 *      operands (or before the one operand); integers' + - * and negation go through
 *      functions of cujit's own that wrap as NumPy's do (see "Array operations"). A C math
 *      function ("sqrt", "pow", "fmod") is the double one: float values (and the 16-bit
 *      floats, computed in float) call it with an f after it (sqrtf), complex numbers
 *      cuda::std's of that name (abs for fabs; sqrt, log, log10, tan, asin, acos, atan,
 *      tanh, pow and / are cujit's own: see "Array operations"), integers cujit's own
 *      cj_i followed by it (cj_ipow); a name beginning with cj_ is a function cujit writes
 *      into the kernel, for every type. A reduction's is the expression that combines two
 *      values a and b;
 *    - types: the kinds of (promoted) element types it takes: b bool, i the integers, f
 *      the floats (f16, bf16, f32, f64), c the complex types; any other kind is
 *      CUJIT_ERROR_INVALID_VALUE naming the operation and the type;
 *    - what: what it gives.
 *  @{ */

/** The operations of cujit_array_binary() and cujit_array_binary_scalar(). */
#define CUJIT_BINOP_MAP(X)                                                                \
  X(ADD, 0, "add", "+", "bifc", "a + b")                                                  \
  X(SUB, 1, "subtract", "-", "ifc", "a - b")                                              \
  X(MUL, 2, "multiply", "*", "bifc", "a * b")                                             \
  X(DIV, 3, "divide", "/", "bifc", "a / b (true division: integers give f64)")            \
  X(POW, 4, "power", "pow", "bifc", "a to the power b")                                   \
  X(MINIMUM, 5, "minimum", "cj_fmin", "bif", "the smaller of a and b (NaN if either is)") \
  X(MAXIMUM, 6, "maximum", "cj_fmax", "bif", "the larger of a and b (NaN if either is)")  \
  X(FMOD, 7, "fmod", "fmod", "bif", "the remainder of a / b, with a's sign")              \
  X(EQ, 8, "equal", "==", "bifc", "a == b (a bool array)")                                \
  X(NE, 9, "not_equal", "!=", "bifc", "a != b (a bool array)")                            \
  X(LT, 10, "less", "<", "bif", "a < b (a bool array)")                                   \
  X(LE, 11, "less_equal", "<=", "bif", "a <= b (a bool array)")                           \
  X(GT, 12, "greater", ">", "bif", "a > b (a bool array)")                                \
  X(GE, 13, "greater_equal", ">=", "bif", "a >= b (a bool array)")

/** The functions of cujit_array_unary(). */
#define CUJIT_UNOP_MAP(X)                                                                 \
  X(NEG, 0, "negative", "-", "ifc", "-x")                                                 \
  X(FABS, 1, "fabs", "fabs", "bifc", "the absolute value (a complex number's magnitude)") \
  X(SQRT, 2, "sqrt", "sqrt", "bifc", "the square root")                                   \
  X(EXP, 3, "exp", "exp", "bifc", "e to the power x")                                     \
  X(LOG, 4, "log", "log", "bifc", "the natural logarithm")                                \
  X(LOG10, 5, "log10", "log10", "bifc", "the base-10 logarithm")                          \
  X(SIN, 6, "sin", "sin", "bifc", "the sine")                                             \
  X(COS, 7, "cos", "cos", "bifc", "the cosine")                                           \
  X(TAN, 8, "tan", "tan", "bifc", "the tangent")                                          \
  X(ASIN, 9, "arcsin", "asin", "bifc", "the arc sine")                                    \
  X(ACOS, 10, "arccos", "acos", "bifc", "the arc cosine")                                 \
  X(ATAN, 11, "arctan", "atan", "bifc", "the arc tangent")                                \
  X(SINH, 12, "sinh", "sinh", "bifc", "the hyperbolic sine")                              \
  X(COSH, 13, "cosh", "cosh", "bifc", "the hyperbolic cosine")                            \
  X(TANH, 14, "tanh", "tanh", "bifc", "the hyperbolic tangent")                           \
  X(FLOOR, 15, "floor", "floor", "bif", "the largest integer not above x")                \
  X(CEIL, 16, "ceil", "ceil", "bif", "the smallest integer not below x")

/** The reductions of cujit_array_reduce() and cujit_array_reduce_axis(). */
#define CUJIT_REDOP_MAP(X)                                                                  \
  X(SUM, 0, "sum", "a + b", "bifc", "the sum")                                              \
  X(MIN, 1, "min", "(a != a || a < b) ? a : b", "bif", "the smallest element (NaN if any)") \
  X(MAX, 2, "max", "(a != a || a > b) ? a : b", "bif", "the largest element (NaN if any)")  \
  X(PROD, 3, "prod", "a * b", "bifc", "the product")                                        \
  X(ANY, 4, "any", "a || b", "bifc", "whether some element is nonzero (bool)")              \
  X(ALL, 5, "all", "a && b", "bifc", "whether every element is nonzero (bool)")             \
  X(ARGMIN, 6, "argmin", "cj_pick(a, b)", "bif", "the first smallest one's index (i64)")    \
  X(ARGMAX, 7, "argmax", "cj_pick(a, b)", "bif", "the first largest one's index (i64)")

/** An operation on two operands (cujit_array_binary(), cujit_array_binary_scalar()): one
 *  enumerator a row of CUJIT_BINOP_MAP. Of CUJIT_BINOP_POW: an integer to a negative
 *  integer power in an array gives its value truncated toward zero (1 for a base of 1, 1 or
 *  -1 for -1, else 0), where NumPy refuses it; a negative CUJIT_SCALAR_INT exponent is
 *  refused, as NumPy refuses it. Of CUJIT_BINOP_FMOD: 0 for integers divided by 0 (as
 *  NumPy). Of CUJIT_BINOP_SUB: bools are refused (CUJIT_BINOP_NE is their exclusive or). */
typedef enum cujit_binop {
#define CUJIT_BINOP_ENUM_(name, num, numpy, cuda, types, what) CUJIT_BINOP_##name = num,
  CUJIT_BINOP_MAP(CUJIT_BINOP_ENUM_)
#undef CUJIT_BINOP_ENUM_
} cujit_binop;

/** A function of one operand (cujit_array_unary()): one enumerator a row of
 *  CUJIT_UNOP_MAP. CUJIT_UNOP_NEG of bools is refused (CUJIT_BINOP_EQ with false is their
 *  logical not). */
typedef enum cujit_unop {
#define CUJIT_UNOP_ENUM_(name, num, numpy, cuda, types, what) CUJIT_UNOP_##name = num,
  CUJIT_UNOP_MAP(CUJIT_UNOP_ENUM_)
#undef CUJIT_UNOP_ENUM_
} cujit_unop;

/** @} */

/** Flags of cujit_array_binary_scalar(). */
enum {
  CUJIT_SCALAR_FIRST = 1u << 0, /**< compute s op a (as for 2 - a) instead of a op s */
  CUJIT_SCALAR_INT = 1u << 1    /**< s is an integer (a Python int): integer arrays keep
                                     their type; without it s is a float (a Python float) */
};

/** a op b, elementwise; a's and b's shapes broadcast (a + b[0:1] adds b's element to each
 *  of a's; a (4, 4) matrix + a (4,) row adds the row to each row).
 *  @param op   the operation.
 *  @param a    the first operand.
 *  @param b    the second.
 *  @param out  the output (the output rule).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed or NULL array, shapes that
 *          that do not broadcast (both named: "a has shape (4, 4) and b (16,), which do not
 *          broadcast ..."), an output of the wrong
 *          type or shape, an op not defined for the types
 *          (fmod of complex numbers, ordering of complex numbers); CUJIT_ERROR_COMPILE (never
 *          for these built-in ops unless the toolkit is broken); device errors. */
CUJIT_API cujit_status cujit_array_binary(cujit_binop op, const cujit_array *a,
                                          const cujit_array *b, cujit_array **out);
/** a op s (or s op a with CUJIT_SCALAR_FIRST): 2 * a is
 *  `cujit_array_binary_scalar(CUJIT_BINOP_MUL, a, 2, CUJIT_SCALAR_INT, &out)`. With
 *  CUJIT_SCALAR_INT, s must be an integer below 2^63 in magnitude and, when the operation
 *  computes in an integer type, fit it (300 with an i8 array is CUJIT_ERROR_INVALID_VALUE,
 *  as NumPy 2 refuses it).
 *  @param op     the operation.
 *  @param a      the array operand.
 *  @param s      the scalar operand.
 *  @param flags  CUJIT_SCALAR_FIRST, CUJIT_SCALAR_INT or 0.
 *  @param out    the output (the output rule).
 *  @return as cujit_array_binary(). */
CUJIT_API cujit_status cujit_array_binary_scalar(cujit_binop op, const cujit_array *a, double s,
                                                 unsigned flags, cujit_array **out);
/** f(a), elementwise (cumath): NEG keeps the type; FABS of a complex array gives its
 *  magnitude (real type); the others keep floats and complex types and give f64 for
 *  integers and bool.
 *  @param op   the function.
 *  @param a    the operand.
 *  @param out  the output (the output rule).
 *  @return as cujit_array_binary(). */
CUJIT_API cujit_status cujit_array_unary(cujit_unop op, const cujit_array *a, cujit_array **out);
/** The type an operation on types a and b gives.
 *  @param a     the first operand's type.
 *  @param b     the second's; for a scalar pass CUJIT_TYPE_F64, or CUJIT_TYPE_I64 for an
 *               integer, with weak = 1.
 *  @param weak  1 when b is a scalar.
 *  @return the result's type. */
CUJIT_API cujit_type cujit_type_promote(cujit_type a, cujit_type b, int weak);

#define CUJIT_MAP_MAX_ARRAYS 32 /**< the most arrays one cujit_array_map() names */
/** A fused elementwise expression over named arrays, one kernel with no temporaries (CuPy's
 *  fuse, numexpr): `cujit_array_map(&y, "sin(2*x + 1)", 1, names, arrays)` with names[0] =
 *  "x". Each name stands for the element of its array, of that array's type, at the result's
 *  position; the arrays' shapes broadcast; `i` (64-bit) is the result's index (C order). The
 * result's type is the promotion of the arrays' types, also when the expression is math on integers
 * ("sin(x)" of an i32 array is truncated to i32): pass an output of the type you want to choose
 * another.
 *  @param out     the output (the output rule).
 *  @param expr    the expression, in CUDA C; copied.
 *  @param n       the number of arrays, at most CUJIT_MAP_MAX_ARRAYS.
 *  @param names   n names, each a C identifier.
 *  @param arrays  n arrays, names[j] standing for arrays[j].
 *  @return as cujit_array_binary(); CUJIT_ERROR_COMPILE with NVRTC's log and the generated
 *          source when the expression does not compile. */
CUJIT_API cujit_status cujit_array_map(cujit_array **out, const char *expr, size_t n,
                                       const char *const *names, const cujit_array *const *arrays);

/** cond ? a : b, elementwise (NumPy's where): element i of the result is a's where
 *  element i of cond is nonzero (true), else b's. `cond` is an array of any type (a
 *  comparison's bool array, typically); a and b are each an array (cujit_arr(x)) or a
 *  typed scalar (cujit_f32(0), cujit_i64(-1), cujit_bool(1), cujit_c64(0, 1) ...). The
 *  result's type is the promotion of a's and b's types, a scalar's type counting as an
 *  array's does (as a NumPy scalar's: cujit_f64(0) with an F32 array gives F64; pass
 *  cujit_f32(0) to keep F32). The shapes of cond and of the arrays among a and b broadcast.
 *  @param cond  the condition.
 *  @param a     where cond is true: an array or a typed scalar.
 *  @param b     where it is false: an array or a typed scalar.
 *  @param out   the output (the output rule).
 *  @return as cujit_array_binary(); CUJIT_ERROR_INVALID_VALUE naming a or b when it is
 *          neither an array nor a scalar of an element type (a device pointer, bytes, an
 *          In/Out buffer). */
CUJIT_API cujit_status cujit_array_where(const cujit_array *cond, cujit_arg a, cujit_arg b,
                                         cujit_array **out);
/** crit > 0 ? a : b, elementwise (PyCUDA's if_positive): cujit_array_where() with the
 *  condition crit > 0, without an array made for it.
 *  @param crit  an array of a real or integer type (complex numbers have no order).
 *  @param a     where crit > 0: an array or a typed scalar.
 *  @param b     elsewhere: an array or a typed scalar.
 *  @param out   the output (the output rule).
 *  @return as cujit_array_where(). */
CUJIT_API cujit_status cujit_array_if_positive(const cujit_array *crit, cujit_arg a, cujit_arg b,
                                               cujit_array **out);

/** What cujit_array_take() and cujit_array_put() do with an index outside the array
 *  (NumPy's mode=). No mode reads or writes outside it. */
typedef enum cujit_index_mode {
  CUJIT_INDEX_RAISE = 0, /**< indices in [-n, n) (a negative one counts from the end); any
                              other is an error: the call waits for its kernel and returns
                              CUJIT_ERROR_INVALID_VALUE naming the first (lowest) position
                              holding one and its value; that element is not read
                              (take: 0 is written) or not written (put) */
  CUJIT_INDEX_WRAP = 1,  /**< an index is taken modulo n (-1 is n - 1, n is 0) */
  CUJIT_INDEX_CLIP = 2   /**< an index below 0 is 0, one above n - 1 is n - 1 */
} cujit_index_mode;

/** out[k] = a.flat[indices[k]] (NumPy's take without an axis; PyCUDA's take): the
 *  elements of `a` (taken in C order, whatever its shape) at the indices, in an array of
 *  the indices' shape and a's type. Runs on a's stream; with CUJIT_INDEX_RAISE, the call
 *  waits for it.
 *  @param a        the array to read.
 *  @param indices  an array of CUJIT_TYPE_I32 or CUJIT_TYPE_I64 indices, any shape.
 *  @param mode     what an index outside `a` does (cujit_index_mode).
 *  @param out      the output (the output rule).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, indices of another
 *          type, an empty `a` with indices, an unknown mode, a wrong output, or (RAISE)
 *          an index outside `a` ("indices[3] is 12, outside [-10, 10)"); device errors. */
CUJIT_API cujit_status cujit_array_take(const cujit_array *a, const cujit_array *indices,
                                        cujit_index_mode mode, cujit_array **out);
/** a.flat[indices[k]] = values[k] (NumPy's put): writes into `a` (any shape, taken in C
 *  order) at the indices. `values` has the indices' shape, or a single element written
 *  at every index; it is converted to a's type as cujit_array_astype() converts. Where an
 *  index is repeated, which of its values lands is unspecified (NumPy: the last). Runs on
 *  a's stream; with CUJIT_INDEX_RAISE, the call waits for it.
 *  @param a        the array written.
 *  @param indices  an array of CUJIT_TYPE_I32 or CUJIT_TYPE_I64 indices, any shape.
 *  @param values   the values.
 *  @param mode     what an index outside `a` does (cujit_index_mode).
 *  @return as cujit_array_take(); values of another shape are CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_array_put(cujit_array *a, const cujit_array *indices,
                                       const cujit_array *values, cujit_index_mode mode);
/** The 1-D arrays `arrays` one after another in one 1-D array (NumPy's concatenate),
 *  of their promoted type (each converted as cujit_array_astype() converts). Runs on the
 *  first array's stream, one copy per array.
 *  @param n       the number of arrays, at least 1.
 *  @param arrays  n 1-D arrays.
 *  @param out     the output (the output rule): 1-D, of the sizes' sum.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for n of 0, a NULL or destroyed array, one
 *          that is not 1-D (naming it and its shape) or a wrong output; device errors. */
CUJIT_API cujit_status cujit_array_concatenate(size_t n, const cujit_array *const *arrays,
                                               cujit_array **out);
/** The 1-D arrays `arrays`, of one shape (m,), as the rows of a 2-D array (n, m) (NumPy's
 *  stack), of their promoted type. Runs on the first array's stream, one copy per array.
 *  @param n       the number of arrays, at least 1.
 *  @param arrays  n 1-D arrays of one size.
 *  @param out     the output (the output rule): (n, m).
 *  @return as cujit_array_concatenate(); arrays of different sizes are
 *          CUJIT_ERROR_INVALID_VALUE naming both shapes. */
CUJIT_API cujit_status cujit_array_stack(size_t n, const cujit_array *const *arrays,
                                         cujit_array **out);

/** @} */

/* =======================================================================================
 * 17. Reductions, scans and random arrays                                   experimental
 * ===================================================================================== */

/** @defgroup reductions 17. Reductions, scans and random arrays (experimental)
 *  Built-in reductions and prefix sums of arrays, and arrays of random numbers. Outputs
 *  follow the output rule of @ref arrays "Device arrays".
 *  @{ */

/** A reduction (cujit_array_reduce(), cujit_array_reduce_axis()): one enumerator a row of
 *  CUJIT_REDOP_MAP. ARGMIN and ARGMAX give the index in C order over the whole array, or
 *  along the reduced axis. */
typedef enum cujit_redop {
#define CUJIT_REDOP_ENUM_(name, num, numpy, cuda, types, what) CUJIT_REDOP_##name = num,
  CUJIT_REDOP_MAP(CUJIT_REDOP_ENUM_)
#undef CUJIT_REDOP_ENUM_
} cujit_redop;

/** Reduces all of `a` (any shape, a strided view too) to one element, in a 0-d array
 *  (ndim 0, size 1) of the result type: SUM and PROD of bool and integers narrower than 64
 *  bits give i64 (u64 for unsigned ones), of floats and complex numbers their own type,
 *  accumulated by a tree (not serially); MIN/MAX keep the type; ANY/ALL give bool;
 *  ARGMIN/ARGMAX give the i64 index of the first extremum in C order. NaN wins MIN, MAX,
 *  ARGMIN and ARGMAX, as NumPy's (the first NaN's index); complex numbers have none of
 *  those four. 16-bit floats are combined in float. As the tree's order is not the
 *  elements', a float sum or product whose partial results may leave the type's range
 *  (of the type combined in) gives one of the IEEE outcomes an order gives: a sum +-inf
 *  where its positive (negative) elements together reach the largest finite value, NaN
 *  where both may; a product +-inf where the elements above 1 in magnitude multiply past
 *  it, 0 where those below 1 multiply below the smallest subnormal, NaN where both may or
 *  a zero meets an infinity; and where a partial product may be subnormal, its rounding
 *  there (half the smallest subnormal) is multiplied by the elements still to come.
 *  Complex sums add their parts apart; complex products and dot products that may
 *  overflow may be any infinity or NaN (Annex G, in the tree's order). cujit_array_dot()
 *  and cujit_array_cumsum() sum likewise. An empty array sums to 0, has a product of 1,
 *  ANY false and ALL true; its MIN, MAX, ARGMIN and ARGMAX are CUJIT_ERROR_INVALID_VALUE.
 *  Runs on a's stream. Read the result with cujit_array_read().
 *  @param op   the reduction.
 *  @param a    the array.
 *  @param out  the output rule's output (a given one must be 0-d of the result type).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE as said, for a destroyed array, or an op
 *          that is none of these; device errors. */
CUJIT_API cujit_status cujit_array_reduce(cujit_redop op, const cujit_array *a, cujit_array **out);
/** SUM or PROD of `a` with the elements converted to `type` and combined in it (NumPy's
 *  sum(a, dtype=type)): the sum of an int8 array as i64 without overflow, of F16 as F32
 *  (into a 16-bit type each element is rounded to it, the values are combined in float
 *  and the result rounded once: an i32 70000 is an F16 infinity). The result is a 0-d
 *  array of `type`; cujit_array_reduce() says what a partial result beyond the range
 *  gives.
 *  @param op    CUJIT_REDOP_SUM or CUJIT_REDOP_PROD.
 *  @param a     the array.
 *  @param type  the accumulator's and the result's type; a complex array needs a complex
 *               one (a real type would drop the imaginary parts).
 *  @param out   the output (the output rule; a given one is 0-d of `type`).
 *  @return as cujit_array_reduce(); another op, or a type arrays do not hold, is
 *          CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_array_reduce_as(cujit_redop op, const cujit_array *a, cujit_type type,
                                             cujit_array **out);
/** Reduces `a` along the dimensions `axes` (NumPy's a.sum(axis=0), a.max(axis=(0, 2),
 *  keepdims=True), a.argmax(axis=1)): one result for each position of the other dimensions,
 *  in an array of those dimensions in their order (with `keepdims` every dimension stays,
 *  each reduced one of size 1), of the type cujit_array_reduce() gives. `axes` holds `naxes`
 *  distinct dimensions of a, in any order, a negative one counting from the last (-1 is the
 *  last). All of them give the one element cujit_array_reduce() gives (NumPy's axis=None),
 *  in an array of shape () or, with keepdims, (1, 1, ...); naxes 0 reduces along none
 *  (NumPy's axis=()): each element is its own result, in the result type. ARGMIN and ARGMAX
 *  take one axis (as NumPy's) and give the i64 index along it of the first extremum. As in
 *  cujit_array_reduce(): the result types, NaN winning MIN, MAX, ARGMIN and ARGMAX, no
 *  ordering of complex numbers, float sums combined by a tree (not in index order), integer
 *  sums and products wrapping. Along an axis of size 0, SUM gives 0, PROD 1, ANY false and
 *  ALL true; MIN, MAX, ARGMIN and ARGMAX are refused (as NumPy refuses them, even where the
 *  result has no element). Takes strided views. A given output must have the result's
 *  type and shape; one that shares memory with `a`, or is a strided view, gets the result
 *  through a temporary. Runs on a's stream.
 *  @param op        the reduction.
 *  @param a         the array.
 *  @param naxes     the number of axes, 0 to a's ndim.
 *  @param axes      `naxes` dimensions; may be NULL when naxes is 0.
 *  @param keepdims  nonzero: keep the reduced dimensions, of size 1.
 *  @param out       the output (the output rule).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed array, an op that is none, a
 *          negative naxes, a NULL axes with naxes above 0, an axis outside a's dimensions
 *          (a 0-d array has none) or given twice, more than one axis for ARGMIN or ARGMAX,
 *          MIN, MAX, ARGMIN or ARGMAX of complex numbers or along an axis of size 0, an
 *          output of another type or shape, a NULL out; device errors. */
CUJIT_API cujit_status cujit_array_reduce_axis(cujit_redop op, const cujit_array *a, int naxes,
                                               const int *axes, int keepdims, cujit_array **out);
/** cujit_array_reduce_axis() of SUM or PROD with the elements converted to `type` and
 *  combined in it (NumPy's a.sum(axis=0, dtype=type)), as cujit_array_reduce_as() does for
 *  the whole array; the results are of `type`.
 *  @param op        CUJIT_REDOP_SUM or CUJIT_REDOP_PROD.
 *  @param a         the array.
 *  @param naxes     the number of axes.
 *  @param axes      `naxes` dimensions; may be NULL when naxes is 0.
 *  @param keepdims  nonzero: keep the reduced dimensions, of size 1.
 *  @param type      the accumulator's and the results' type; a complex array needs a
 *                   complex one.
 *  @param out       the output (the output rule).
 *  @return as cujit_array_reduce_axis(); another op, or a type arrays do not hold, is
 *          CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_array_reduce_axis_as(cujit_redop op, const cujit_array *a, int naxes,
                                                  const int *axes, int keepdims, cujit_type type,
                                                  cujit_array **out);
/** sum(a * b) of two arrays of one shape (strided views too), in a 0-d array of their
 *  promoted type.
 *  @param a    the first array.
 *  @param b    the second.
 *  @param out  the output (the output rule).
 *  @return as cujit_array_reduce(). */
CUJIT_API cujit_status cujit_array_dot(const cujit_array *a, const cujit_array *b,
                                       cujit_array **out);
/** A reduction's value in host memory, in one call that waits for it (PyCUDA's
 *  gpuarray.max(a).get(), CuPy's float(a.max())): cujit_array_reduce() of `a` copied to
 *  `result`, a variable of the result type cujit_array_reduce() says (a float for the max
 *  of an F32 array, an int64_t for the sum of an I32 one, an int64_t index for ARGMAX),
 *  and as a double to `value`, either of them NULL when not wanted:
 *
 *      float maximum;
 *      cujit_array_reduce_host(CUJIT_REDOP_MAX, a, &maximum, sizeof maximum, NULL);
 *
 *  The double is the value itself for every result type but i64 and u64, whose values
 *  beyond 2^53 in magnitude are rounded to the nearest double; a complex result has none.
 *  @param op      the reduction.
 *  @param a       the array.
 *  @param result  receives the result, of the result type; or NULL.
 *  @param bytes   the size of *result (sizeof of it): the result type's size, checked; 0
 *                 with a NULL result.
 *  @param value   receives the result as a double; or NULL.
 *  @return as cujit_array_reduce(); CUJIT_ERROR_INVALID_VALUE, before any work, for
 *          result and value both NULL, bytes that are not the result type's size (the
 *          message names the type), or a value for a complex result. Nothing is written
 *          unless the call succeeds. */
CUJIT_API cujit_status cujit_array_reduce_host(cujit_redop op, const cujit_array *a, void *result,
                                               size_t bytes, double *value);
/** cujit_array_dot() in host memory, as cujit_array_reduce_host() (CuPy's float(cp.dot(a,
 *  b))): the result is of the arrays' promoted type.
 *  @param a       the first array.
 *  @param b       the second, of a's shape.
 *  @param result  receives the result, of the promoted type; or NULL.
 *  @param bytes   the size of *result: the promoted type's size; 0 with a NULL result.
 *  @param value   receives the result as a double; or NULL.
 *  @return as cujit_array_dot() and cujit_array_reduce_host(). */
CUJIT_API cujit_status cujit_array_dot_host(const cujit_array *a, const cujit_array *b,
                                            void *result, size_t bytes, double *value);
/** NumPy's allclose: whether every element of `a` is close to `b`'s at its index, close
 *  meaning |a - b| <= atol + rtol * |b| with b's magnitude (so the test is not symmetric),
 *  as numpy.allclose(a, b, rtol, atol, equal_nan) decides it, element for element:
 *    - an infinity is close only to the same infinity (b's must be finite for the rule; a
 *      equal to b is always close), so inf against inf is close, inf against -inf or a
 *      finite value is not;
 *    - NaN is close to nothing, NaN included, unless equal_nan is set: then NaN is close to
 *      NaN (a complex number with a NaN part counts as NaN);
 *    - the arithmetic is NumPy 2's, type for type: b is taken in its own type when it is a
 *      float or complex type, else as f64; a - b in the promotion of a's type with that
 *      (cujit_type_promote()); atol + rtol * |b| in b's type, rtol and atol first rounded
 *      to it (an f16 b rounds atol 1e-8 to 0, as NumPy does); each operation rounded to
 *      its type (16-bit types computed in float and rounded after each), never fused;
 *      complex magnitudes are hypot's (within 2 ulp of the C library's for C128);
 *    - a's and b's shapes broadcast (the array layer's rule for operations; see "Array
 *      operations"): a single element is compared with every element of the other, a row
 *      with every row; arrays with no element are close.
 *  NumPy's defaults are rtol 1e-5, atol 1e-8, equal_nan 0. One generated kernel computes
 *  every element's test and combines them; only the answer is copied to the host, and the
 *  call waits for it. Runs on a's stream.
 *  @param a          the array tested.
 *  @param b          the reference.
 *  @param rtol       the relative tolerance.
 *  @param atol       the absolute tolerance.
 *  @param equal_nan  nonzero: NaN is close to NaN.
 *  @param close      receives 1 when every element is close, else 0.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed or NULL array, a NULL close
 *          or shapes that differ (both named); CUJIT_ERROR_COMPILE (never for these
 *          kernels unless the toolkit is broken); device errors. */
CUJIT_API cujit_status cujit_array_allclose(const cujit_array *a, const cujit_array *b, double rtol,
                                            double atol, int equal_nan, int *close);
/** cujit_array_allclose() of an array and host data: `b` holds a's elements (its shape, C
 *  order, of a's type), or one element of a's type compared with every element of a. The
 *  data is copied to the device (a temporary from the pool) and compared there, by the
 *  kernel cujit_array_allclose() runs.
 *  @param a          the array tested.
 *  @param b          the reference in host memory.
 *  @param bytes      its size: cujit_array_nbytes(a), or one element's.
 *  @param rtol       the relative tolerance.
 *  @param atol       the absolute tolerance.
 *  @param equal_nan  nonzero: NaN is close to NaN.
 *  @param close      receives 1 when every element is close, else 0.
 *  @return as cujit_array_allclose(); CUJIT_ERROR_INVALID_VALUE for another size (the
 *          message says both sizes allowed) or a NULL b; CUJIT_ERROR_DEVICE_MEMORY. */
CUJIT_API cujit_status cujit_array_allclose_host(const cujit_array *a, const void *b, size_t bytes,
                                                 double rtol, double atol, int equal_nan,
                                                 int *close);
/** Inclusive (or, with `exclusive`, exclusive) prefix sum of `a` (read in C order) as a 1-D
 *  array of the type SUM gives (i64 for bool and narrower signed integers, u64 for narrower
 *  unsigned ones, else a's type): CuPy's cumsum.
 *  @param a          the array (contiguous).
 *  @param exclusive  nonzero for an exclusive sum (element i sums the elements before i).
 *  @param out        the output (the output rule; contiguous).
 *  @return as cujit_array_reduce(); a strided view as input or output is
 *          CUJIT_ERROR_INVALID_VALUE (make it contiguous with cujit_array_copy()). */
CUJIT_API cujit_status cujit_array_cumsum(const cujit_array *a, int exclusive, cujit_array **out);

/** What cujit_array_random() draws from. */
typedef enum cujit_distribution {
  CUJIT_RANDOM_UNIFORM, /**< in [0, 1) */
  CUJIT_RANDOM_NORMAL   /**< mean 0, standard deviation 1 */
} cujit_distribution;

/** Random F32 or F64 numbers (PyCUDA's curandom.rand, cp.random.rand / randn) from a
 *  counter-based generator (Philox-4x32-10): element i depends only on (seed, i), so the
 *  same seed gives the same bits on every device, launch configuration and array size
 *  (normal numbers use correctly rounded arithmetic only).
 *  @param out    receives the array; owned by the caller: cujit_array_destroy().
 *  @param type   CUJIT_TYPE_F32 or CUJIT_TYPE_F64; other types are
 *                CUJIT_ERROR_INVALID_VALUE.
 *  @param ndim   its number of dimensions, 0 to CUJIT_ARRAY_MAX_DIMS.
 *  @param shape  `ndim` sizes.
 *  @param dist   the distribution.
 *  @param seed   the seed.
 *  @return as cujit_array_empty(); CUJIT_ERROR_INVALID_VALUE for another type. */
CUJIT_API cujit_status cujit_array_random(cujit_array **out, cujit_type type, int ndim,
                                          const int64_t *shape, cujit_distribution dist,
                                          uint64_t seed);
/** The numbers cujit_array_random() gives, made on the host into host memory (NumPy's
 *  numpy.random.rand / randn for a host array): element i is element i of the array
 *  cujit_array_random() makes with the same type, distribution and seed, bit for bit.
 *  Needs no device.
 *  @param host  receives n elements of `type`.
 *  @param type  CUJIT_TYPE_F32 or CUJIT_TYPE_F64.
 *  @param n     the number of elements.
 *  @param dist  the distribution.
 *  @param seed  the seed.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL host (with n above 0), another
 *          type or an unknown distribution. */
CUJIT_API cujit_status cujit_array_random_host(void *host, cujit_type type, size_t n,
                                               cujit_distribution dist, uint64_t seed);

/** @} */

/* =======================================================================================
 * 18. Kernel generators                                                     experimental
 * ===================================================================================== */

/** @defgroup generators 18. Kernel generators (experimental)
 *  Kernel generators (PyCUDA's ElementwiseKernel, ReductionKernel, InclusiveScanKernel and
 *  ExclusiveScanKernel; CuPy's ElementwiseKernel and ReductionKernel): a declaration string
 *  and expressions in, a kernel compiled through the caches out.
 *
 *  `args` declares the arguments as C does, comma-separated: "float a, float *x, float b,
 *  float *y, float *z". A pointer is an array argument, anything else a scalar. Types: bool,
 *  char, signed/unsigned char, short, int, long, long long (and unsigned ones), int8_t ...
 *  uint64_t, size_t, ptrdiff_t, __half, __nv_bfloat16, float, double, `complex<float>`,
 *  `complex<double>` (cuda::std), with const allowed. A declaration cujit cannot read is
 *  CUJIT_ERROR_INVALID_VALUE naming its column and token.
 *
 *  Calls take the arguments in declaration order (at most 61 for an elementwise kernel,
 *  64 for a reduction), as an array of cujit_arg, or inline through the macros at the end
 *  of this section, which make each from a plain value:
 *
 *      CUJIT_ELEMENTWISE(lin_comb, 5.0f, x, 6, y, z);   for "float a, float *x, float b, ..."
 *
 *  An array argument is its cujit_array * (cujit_arr(x) in an array of cujit_arg); it must
 *  be live, of the declared element type and contiguous (the kernel reads its elements in
 *  C order: a strided view is refused; pass cujit_array_copy() of it). A scalar
 *  argument is a number: in the macros a C value of its own type, as CUJIT_LAUNCH() takes
 *  it (bool, char, short, int, long and long long, signed or not, float, double; in C also
 *  float _Complex and double _Complex), in an array of cujit_arg a constructor's
 *  (cujit_f32(5), cujit_i32(), cujit_u64(), cujit_bool(), cujit_c64(), ...). It is
 *  converted to the declared type by the rule every parameter follows (docs/manual/
 *  launching.md, "What a parameter takes"), the declaration being its prototype: as C
 *  converts an argument to a prototyped parameter, and refused where the value would not
 *  keep its meaning; here a constructor's argument converts as a plain number does, a
 *  complex type takes a complex or real number, and a value given by its bytes
 *  (cujit_value(), CUJIT_VALUE()) passes unchanged when its size is the declared type's.
 *  A device pointer, an In/Out buffer, an array for a scalar and a scalar for an array are
 *  refused. So a double given for a float parameter arrives as the float nearest to it,
 *  never as the double's bytes. Any refusal is CUJIT_ERROR_INVALID_VALUE naming the
 *  function, the argument (position and name), the declared and the given type and the
 *  value; nothing is compiled or launched then.
 *
 *  The array arguments' shapes broadcast as the operations' do (NumPy's rule, "Array
 *  operations"): a call runs over every element of the shape they broadcast to, i being
 *  that shape's flat index (C order), and `x[i]` is x's element at i's position. So with x
 *  of shape (3, 4), y of (4,) and z of (3, 4), "z[i] = x[i] + y[i]" adds y to each row of x,
 *  as NumPy's x + y does, and x of (4, 1) with y of (3,) gives a (4, 3) z. Shapes that do not
 *  broadcast are CUJIT_ERROR_INVALID_VALUE naming two arguments and their shapes; arrays
 *  of one size whose elements are to pair in C order take views of one shape
 *  (cujit_array_reshape()). An array stretched by a call (of fewer elements than the
 *  shape: each of them is the element of several i) is only read: its elements are const
 *  in the operation, and a call whose operation writes one is CUJIT_ERROR_INVALID_VALUE
 *  naming it, before anything launches (its elements would be written for several i at
 *  once, in no order). In such a call the stretched array's name stands for an object
 *  whose [j] is its element at the position of j (any j of the shape, so x[i + 1] too),
 *  not for a pointer: an operation that uses it otherwise (x + i, a pointer passed to a
 *  function) does not compile then. Arrays of one shape (or of shapes that differ only by
 *  leading dimensions of one element) run the kernel as written, pointers and all; a call
 *  that stretches arrays runs a variant of it, compiled once per process for each pattern
 *  of stretched arrays.
 *  @{ */

/** Optional parts of a generated kernel. Start from CUJIT_GENERATOR_OPTIONS_INIT (or zero
 *  it) for none, or pass NULL. The strings are copied. The create functions below return
 *  CUJIT_ERROR_INVALID_VALUE or CUJIT_ERROR_NOT_SUPPORTED for a bad opts->size, as
 *  "Structs that grow" says. */
typedef struct cujit_generator_options {
  size_t size;            /**< sizeof, set by CUJIT_GENERATOR_OPTIONS_INIT; or 0 */
  const char *name;       /**< kernel name ("elementwise", "reduction" or "scan" by default) */
  const char *preamble;   /**< code before the kernel: helper functions, `#include`s */
  const char *loop_prep;  /**< elementwise: statements before the loop over i */
  const char *after_loop; /**< elementwise: statements after it */
} cujit_generator_options;
/** cujit_generator_options with its size set and every part empty. */
#define CUJIT_GENERATOR_OPTIONS_INIT \
  { sizeof(cujit_generator_options), NULL, NULL, NULL, NULL }

/** An elementwise kernel made from a declaration and an operation (PyCUDA's
 *  ElementwiseKernel). */
typedef struct cujit_elementwise cujit_elementwise;
/** `operation` is run for every index i (a 64-bit integer) from 0 to n - 1, n being the
 *  number of elements of the shape the array arguments broadcast to (the arrays' size
 *  when they have one shape): "z[i] = a*x[i] + b*y[i]". Compiled at the first call with
 *  arrays on a device (so that a bad operation fails there with NVRTC's log, the
 *  generated source and its lines).
 *  Where cujit can tell from the operation's text that it names every array only as
 *  `name[i]` (not x[i+1], &x[i], nor i declared again; and the kernel has no loop_prep or
 *  after_loop, nor `#` lines in its preamble), a call with step 1 runs it on chunks of W
 *  consecutive elements (W: 16 bytes over the widest element type of the arrays it
 *  names), each array's part of a chunk read or written by one access, as a copy does;
 *  the elements before the first chunk and after the last run one at a time. That needs
 *  the arrays equally far from a chunk boundary (all arrays cujit makes are; views one
 *  element in, x[1:], are too) and no array the operation writes overlapping another;
 *  otherwise, and for any other operation, every element runs one at a time, in the
 *  order of the loop. An array a call stretches is not in the chunks: it is read element
 *  by element where the operation names it.
 *  @param out        receives the kernel; owned by the caller: cujit_elementwise_destroy().
 *  @param args       the declaration (see above); copied.
 *  @param operation  CUDA C run for each i; copied.
 *  @param opts       NULL, or optional parts.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL argument, declarations cujit
 *          cannot read or holding no array, a kernel name that is not an identifier, or a
 *          bad opts->size (CUJIT_ERROR_NOT_SUPPORTED for fields this libcujit does not
 *          know). */
CUJIT_API cujit_status cujit_elementwise_create(cujit_elementwise **out, const char *args,
                                                const char *operation,
                                                const cujit_generator_options *opts);
/** Runs it over the elements of the shape its array arguments broadcast to (see above),
 *  on the first array argument's stream.
 *  @param k      the kernel.
 *  @param args   `nargs` arguments, one per declaration (see above for what each takes).
 *  @param nargs  their number.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming a wrong argument, two arguments whose
 *          shapes do not broadcast, or a stretched array the operation writes (see above);
 *          CUJIT_ERROR_COMPILE with NVRTC's log and the generated source; device errors. */
CUJIT_API cujit_status cujit_elementwise_call(cujit_elementwise *k, const cujit_arg *args,
                                              size_t nargs);
/** As cujit_elementwise_call() for i = start, start + step, ... below stop (PyCUDA's
 *  range=slice(...)); step may be negative (then i goes down to above stop). The i are flat
 *  indices (C order) of the shape the arrays broadcast to, and every i the range gives
 *  must be one (0 to the shape's size - 1); any int64 values are checked without overflow,
 *  and a range that leaves the shape (or a step of 0) is CUJIT_ERROR_INVALID_VALUE.
 *  @param k      the kernel.
 *  @param start  the first i.
 *  @param stop   the bound, not included.
 *  @param step   the difference between one i and the next; not 0.
 *  @param args   as for cujit_elementwise_call().
 *  @param nargs  their number.
 *  @return as cujit_elementwise_call(). */
CUJIT_API cujit_status cujit_elementwise_call_range(cujit_elementwise *k, int64_t start,
                                                    int64_t stop, int64_t step,
                                                    const cujit_arg *args, size_t nargs);
/** Frees the kernel.
 *  @param k  the kernel; NULL is fine. */
CUJIT_API void cujit_elementwise_destroy(cujit_elementwise *k);

/** A reduction kernel made from a declaration and expressions (PyCUDA's
 *  ReductionKernel). */
typedef struct cujit_reduction cujit_reduction;
/** A reduction to one value of `type`: `map_expr` gives element i's value ("x[i]*y[i]";
 *  the arguments by name, i a long long; the arrays broadcast as an elementwise kernel's,
 *  a stretched one only read), `reduce_expr` combines two values named a and b
 *  ("a+b"; it must be associative and commutative: values are not combined in index
 *  order), and `neutral` is the value that changes nothing ("0"), which is also the
 *  result over 0 elements. Compiled at the first call.
 *  @param out          receives the kernel; owned by the caller: cujit_reduction_destroy().
 *  @param type         the result's type.
 *  @param neutral      the neutral value, in CUDA C; copied.
 *  @param reduce_expr  combines a and b; copied.
 *  @param map_expr     element i's value; copied.
 *  @param args         the declaration (see above); copied.
 *  @param opts         NULL, or optional parts.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a type arrays cannot hold, a NULL or
 *          empty expression, declarations cujit cannot read or holding no array, a
 *          kernel name that is not an identifier. */
CUJIT_API cujit_status cujit_reduction_create(cujit_reduction **out, cujit_type type,
                                              const char *neutral, const char *reduce_expr,
                                              const char *map_expr, const char *args,
                                              const cujit_generator_options *opts);
/** Runs it over the elements of the shape its array arguments broadcast to (as
 *  cujit_elementwise_call() does), on the first array argument's stream; the result
 *  goes to a 0-d array (output rule) or, with cujit_reduction_call_host(), to host memory
 *  of the result type's size (and the call waits for it).
 *  @param r      the kernel.
 *  @param out    the output (the output rule).
 *  @param args   `nargs` arguments, one per declaration (see above for what each takes).
 *  @param nargs  their number.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming a wrong argument (see above), two
 *          arguments whose shapes do not broadcast, a stretched array the map expression
 *          writes, or a wrong output; CUJIT_ERROR_COMPILE with NVRTC's log and the
 *          generated source with line numbers when an expression does not compile; device
 *          errors. */
CUJIT_API cujit_status cujit_reduction_call(cujit_reduction *r, cujit_array **out,
                                            const cujit_arg *args, size_t nargs);
/** As cujit_reduction_call(), with the result copied to host memory; the call waits for it.
 *  @param r       the kernel.
 *  @param result  receives the result: the result type's size.
 *  @param args    as for cujit_reduction_call().
 *  @param nargs   their number.
 *  @return as cujit_reduction_call(). */
CUJIT_API cujit_status cujit_reduction_call_host(cujit_reduction *r, void *result,
                                                 const cujit_arg *args, size_t nargs);
/** Frees the kernel.
 *  @param r  the kernel; NULL is fine. */
CUJIT_API void cujit_reduction_destroy(cujit_reduction *r);

/** A prefix-scan kernel made from an expression (PyCUDA's InclusiveScanKernel and
 *  ExclusiveScanKernel). */
typedef struct cujit_scan cujit_scan;
/** A prefix scan of arrays of `type` with `scan_expr` in a and b ("a+b", associative) and
 *  its `neutral` element; inclusive, or exclusive when `exclusive` is set.
 *  @param out        receives the kernel; owned by the caller: cujit_scan_destroy().
 *  @param type       the element type.
 *  @param scan_expr  combines a and b; copied.
 *  @param neutral    the neutral value, in CUDA C; copied.
 *  @param exclusive  nonzero for an exclusive scan.
 *  @param opts       NULL, or optional parts.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL out, a type arrays cannot hold,
 *          a NULL or empty expression, a kernel name that is not an identifier. */
CUJIT_API cujit_status cujit_scan_create(cujit_scan **out, cujit_type type, const char *scan_expr,
                                         const char *neutral, int exclusive,
                                         const cujit_generator_options *opts);
/** Scans `in` into *out.
 *  @param s    the kernel.
 *  @param in   a contiguous 1-D array of the scan's type.
 *  @param out  the output (the output rule; may be `in` or a view of it; contiguous).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for an array of another type or of more
 *          dimensions, a strided view, or a wrong output; CUJIT_ERROR_COMPILE with NVRTC's
 *          log when the expression does not compile; device errors. */
CUJIT_API cujit_status cujit_scan_call(cujit_scan *s, const cujit_array *in, cujit_array **out);
/** Frees the kernel.
 *  @param s  the kernel; NULL is fine. */
CUJIT_API void cujit_scan_destroy(cujit_scan *s);

/** @name The calls with their arguments inline
 *  The generators' calls with the arguments inline, as plain values (up to 64):
 *  CUJIT_ELEMENTWISE(k, 5.0f, x, 6.0f, y, z), CUJIT_ELEMENTWISE_RANGE(k, start, stop, step,
 *  args...), CUJIT_REDUCTION(r, &out, x, y), CUJIT_REDUCTION_HOST(r, &result, x, y). Each
 *  argument becomes a cujit_arg by its C type (see above), as CUJIT_LAUNCH() makes it: a
 *  `cujit_array *` an array, a number an argument of its own type; a cujit_arg passes as it
 *  is. A value of another type (a pointer such as &a, a long double) does not compile. A
 *  compound literal with commas must be wrapped in parentheses.
 *  @{ */
/** CUJIT_ELEMENTWISE(k, args...): cujit_elementwise_call() with its arguments inline. */
#define CUJIT_ELEMENTWISE(k, ...) cujit_elementwise_call((k), CUJIT_GEN_ARGS_(__VA_ARGS__))
/** CUJIT_ELEMENTWISE_RANGE(k, start, stop, step, args...): cujit_elementwise_call_range()
 *  with its arguments inline. */
#define CUJIT_ELEMENTWISE_RANGE(k, start, stop, step, ...) \
  cujit_elementwise_call_range((k), (start), (stop), (step), CUJIT_GEN_ARGS_(__VA_ARGS__))
/** CUJIT_REDUCTION(r, out, args...): cujit_reduction_call() with its arguments inline. */
#define CUJIT_REDUCTION(r, out, ...) cujit_reduction_call((r), (out), CUJIT_GEN_ARGS_(__VA_ARGS__))
/** CUJIT_REDUCTION_HOST(r, result, args...): cujit_reduction_call_host() with its
 *  arguments inline. */
#define CUJIT_REDUCTION_HOST(r, result, ...) \
  cujit_reduction_call_host((r), (result), CUJIT_GEN_ARGS_(__VA_ARGS__))
/** @} */

/** @} */

/* What the macros expand to: each argument made a cujit_arg (CUJIT_GEN_ARG_), then the
 * array of them and their count. */
#define CUJIT_GEN_ARGS_(...) \
  CUJIT_GEN_LIST_(CUJIT_GEN_MAP_(__VA_ARGS__)), (size_t)CUJIT_NARGS_(__VA_ARGS__)
#ifdef __cplusplus
#  define CUJIT_GEN_LIST_(...) std::initializer_list<cujit_arg>{__VA_ARGS__}.begin()
#  define CUJIT_GEN_ARG_(x) cujit_gen_arg_(x)
#else
#  define CUJIT_GEN_LIST_(...) \
    (const cujit_arg[]) { __VA_ARGS__ }
/* An array as itself; the rest as CUJIT_LAUNCH() takes it (cujit.h's CUJIT_ARG_). */
#  define CUJIT_GEN_ARG_(x) \
    _Generic((x), cujit_arg: cujit_arg_self_, cujit_array *: cujit_arr,                     \
             const cujit_array *: cujit_arr, CUJIT_PLAIN_CASES_)(x)
#endif
/* Applies CUJIT_GEN_ARG_ to each argument. */
#define CUJIT_GEN_MAP_(...) CUJIT_MAP_(CUJIT_GEN_ARG_, __VA_ARGS__)

/* The error mode (see "Conventions" in cujit.h): each function of this header that returns
 * a cujit_status is also a macro of its own name. */
/** @cond */
#ifndef CUJIT_BUILDING_LIBRARY
#  define cujit_array_empty(...) CUJIT_CHECKED_(cujit_array_empty, __VA_ARGS__)
#  define cujit_array_zeros(...) CUJIT_CHECKED_(cujit_array_zeros, __VA_ARGS__)
#  define cujit_array_full(...) CUJIT_CHECKED_(cujit_array_full, __VA_ARGS__)
#  define cujit_array_empty_like(...) CUJIT_CHECKED_(cujit_array_empty_like, __VA_ARGS__)
#  define cujit_array_arange(...) CUJIT_CHECKED_(cujit_array_arange, __VA_ARGS__)
#  define cujit_array_from_host(...) CUJIT_CHECKED_(cujit_array_from_host, __VA_ARGS__)
#  define cujit_array_wrap(...) CUJIT_CHECKED_(cujit_array_wrap, __VA_ARGS__)
#  define cujit_array_read(...) CUJIT_CHECKED_(cujit_array_read, __VA_ARGS__)
#  define cujit_array_read_range(...) CUJIT_CHECKED_(cujit_array_read_range, __VA_ARGS__)
#  define cujit_array_write_range(...) CUJIT_CHECKED_(cujit_array_write_range, __VA_ARGS__)
#  define cujit_array_where(...) CUJIT_CHECKED_(cujit_array_where, __VA_ARGS__)
#  define cujit_array_stack(...) CUJIT_CHECKED_(cujit_array_stack, __VA_ARGS__)
#  define cujit_array_take(...) CUJIT_CHECKED_(cujit_array_take, __VA_ARGS__)
#  define cujit_array_reduce_as(...) CUJIT_CHECKED_(cujit_array_reduce_as, __VA_ARGS__)
#  define cujit_array_reduce_axis(...) CUJIT_CHECKED_(cujit_array_reduce_axis, __VA_ARGS__)
#  define cujit_array_reduce_axis_as(...) CUJIT_CHECKED_(cujit_array_reduce_axis_as, __VA_ARGS__)
#  define cujit_array_if_positive(...) CUJIT_CHECKED_(cujit_array_if_positive, __VA_ARGS__)
#  define cujit_array_transpose(...) CUJIT_CHECKED_(cujit_array_transpose, __VA_ARGS__)
#  define cujit_array_put(...) CUJIT_CHECKED_(cujit_array_put, __VA_ARGS__)
#  define cujit_array_slice(...) CUJIT_CHECKED_(cujit_array_slice, __VA_ARGS__)
#  define cujit_array_concatenate(...) CUJIT_CHECKED_(cujit_array_concatenate, __VA_ARGS__)
#  define cujit_array_write(...) CUJIT_CHECKED_(cujit_array_write, __VA_ARGS__)
#  define cujit_array_fill(...) CUJIT_CHECKED_(cujit_array_fill, __VA_ARGS__)
#  define cujit_array_copy(...) CUJIT_CHECKED_(cujit_array_copy, __VA_ARGS__)
#  define cujit_array_astype(...) CUJIT_CHECKED_(cujit_array_astype, __VA_ARGS__)
#  define cujit_array_view(...) CUJIT_CHECKED_(cujit_array_view, __VA_ARGS__)
#  define cujit_array_reshape(...) CUJIT_CHECKED_(cujit_array_reshape, __VA_ARGS__)
#  define cujit_array_set_stream(...) CUJIT_CHECKED_(cujit_array_set_stream, __VA_ARGS__)
#  define cujit_array_to_dlpack(...) CUJIT_CHECKED_(cujit_array_to_dlpack, __VA_ARGS__)
#  define cujit_array_from_dlpack(...) CUJIT_CHECKED_(cujit_array_from_dlpack, __VA_ARGS__)
#  define cujit_array_from_dlpack_legacy(...) \
    CUJIT_CHECKED_(cujit_array_from_dlpack_legacy, __VA_ARGS__)
#  define cujit_array_binary(...) CUJIT_CHECKED_(cujit_array_binary, __VA_ARGS__)
#  define cujit_array_binary_scalar(...) CUJIT_CHECKED_(cujit_array_binary_scalar, __VA_ARGS__)
#  define cujit_array_unary(...) CUJIT_CHECKED_(cujit_array_unary, __VA_ARGS__)
#  define cujit_array_map(...) CUJIT_CHECKED_(cujit_array_map, __VA_ARGS__)
#  define cujit_array_reduce(...) CUJIT_CHECKED_(cujit_array_reduce, __VA_ARGS__)
#  define cujit_array_dot(...) CUJIT_CHECKED_(cujit_array_dot, __VA_ARGS__)
#  define cujit_array_dot_host(...) CUJIT_CHECKED_(cujit_array_dot_host, __VA_ARGS__)
#  define cujit_array_reduce_host(...) CUJIT_CHECKED_(cujit_array_reduce_host, __VA_ARGS__)
#  define cujit_array_allclose(...) CUJIT_CHECKED_(cujit_array_allclose, __VA_ARGS__)
#  define cujit_array_allclose_host(...) CUJIT_CHECKED_(cujit_array_allclose_host, __VA_ARGS__)
#  define cujit_array_print(...) CUJIT_CHECKED_(cujit_array_print, __VA_ARGS__)
#  define cujit_array_format(...) CUJIT_CHECKED_(cujit_array_format, __VA_ARGS__)
#  define cujit_array_format_host(...) CUJIT_CHECKED_(cujit_array_format_host, __VA_ARGS__)
#  define cujit_array_cumsum(...) CUJIT_CHECKED_(cujit_array_cumsum, __VA_ARGS__)
#  define cujit_array_random(...) CUJIT_CHECKED_(cujit_array_random, __VA_ARGS__)
#  define cujit_array_random_host(...) CUJIT_CHECKED_(cujit_array_random_host, __VA_ARGS__)
#  define cujit_elementwise_create(...) CUJIT_CHECKED_(cujit_elementwise_create, __VA_ARGS__)
#  define cujit_elementwise_call(...) CUJIT_CHECKED_(cujit_elementwise_call, __VA_ARGS__)
#  define cujit_elementwise_call_range(...) \
    CUJIT_CHECKED_(cujit_elementwise_call_range, __VA_ARGS__)
#  define cujit_reduction_create(...) CUJIT_CHECKED_(cujit_reduction_create, __VA_ARGS__)
#  define cujit_reduction_call(...) CUJIT_CHECKED_(cujit_reduction_call, __VA_ARGS__)
#  define cujit_reduction_call_host(...) CUJIT_CHECKED_(cujit_reduction_call_host, __VA_ARGS__)
#  define cujit_scan_create(...) CUJIT_CHECKED_(cujit_scan_create, __VA_ARGS__)
#  define cujit_scan_call(...) CUJIT_CHECKED_(cujit_scan_call, __VA_ARGS__)
#endif
/** @endcond */

#ifdef __cplusplus
} /* extern "C" */

#  include <initializer_list>

/* In C++ an array finds cujit_arr() by overloading, and the rest what CUJIT_LAUNCH() makes
 * of it (cujit.h's cujit_arg_of_): a pointer of any other type (&a, as the calls once
 * took) does not compile. */
static inline cujit_arg cujit_gen_arg_(cujit_array *a) { return cujit_arr(a); }
static inline cujit_arg cujit_gen_arg_(const cujit_array *a) { return cujit_arr(a); }
static inline cujit_arg cujit_gen_arg_(decltype(nullptr)) { return cujit_arr(nullptr); }
template <typename T>
static inline cujit_arg cujit_gen_arg_(const T &v) {
  return cujit_arg_of_(v);
}
#endif
#endif /* CUJIT_ARRAY_H_INCLUDED */

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

#include "cujit.h"

#ifdef __cplusplus
extern "C" {
#endif
/* =======================================================================================
 * 15. Device arrays                                                         experimental
 * ===================================================================================== */

/*
 * Device arrays (PyCUDA's gpuarray, CuPy's ndarray): typed, shaped device memory that
 * cujit allocates, fills, copies and frees, and that kernels take as arguments.
 */

/** An array: element type, shape (0 to CUJIT_ARRAY_MAX_DIMS dimensions, C order; 0-d holds
 *  one element, as a reduction's result,
 *  contiguous), 64-bit element count, device memory on the device that was current when it
 *  was made, and the stream its work is ordered on (the legacy default stream unless set).
 *  A `cujit_array *` is a handle, not an address: cujit never gives the same handle twice
 *  in a process, so every function below that takes one refuses a destroyed array (or
 *  anything cujit did not make) with CUJIT_ERROR_INVALID_VALUE naming the function and
 *  the argument, even after a new array has taken its place; never dereference one. At
 *  most 2^24 arrays (views included) are live at once. */
typedef struct cujit_array cujit_array;

#define CUJIT_ARRAY_MAX_DIMS 4

/** New arrays. `type` is any cujit_type except CUJIT_TYPE_BYTES and CUJIT_TYPE_PTR;
 *  `shape` holds `ndim` sizes (0 is allowed: an empty array). Memory comes from cujit's
 *  stream-ordered pool, so arrays made and destroyed in a loop allocate nothing new after
 *  the first pass. *out is owned by the caller: cujit_array_destroy().
 *  empty: contents undefined; zeros: all bits 0; full: every element is *value (an element
 *  of `type`, e.g. a float for CUJIT_TYPE_F32, two for C64).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming what is wrong (type, ndim, a negative
 *          size, an element count beyond 2^62, NULL pointers); CUJIT_ERROR_DEVICE_MEMORY;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_array_empty(cujit_array **out, cujit_type type, int ndim,
                                         const int64_t *shape);
CUJIT_API cujit_status cujit_array_zeros(cujit_array **out, cujit_type type, int ndim,
                                         const int64_t *shape);
CUJIT_API cujit_status cujit_array_full(cujit_array **out, cujit_type type, int ndim,
                                        const int64_t *shape, const void *value);
/** A new array of a's type and shape (its dimensions kept, not flattened), its contents
 *  not set, on a's stream; NumPy's empty_like. */
CUJIT_API cujit_status cujit_array_empty_like(cujit_array **out, const cujit_array *a);
/** start, start + step, ... below stop (above it for a negative step), as NumPy's arange;
 *  element i is computed as start + i * step in double precision, then converted. */
CUJIT_API cujit_status cujit_array_arange(cujit_array **out, cujit_type type, double start,
                                          double stop, double step);
/** A new array holding a copy of host memory (size times the element size bytes, C order);
 *  PyCUDA's gpuarray.to_gpu(). Returns when the copy is done. */
CUJIT_API cujit_status cujit_array_from_host(cujit_array **out, cujit_type type, int ndim,
                                             const int64_t *shape, const void *host);
/** An array over device memory the caller owns (for example from cujit_mem_alloc()):
 *  cujit_array_destroy() frees the handle, never the memory. */
CUJIT_API cujit_status cujit_array_wrap(cujit_array **out, cujit_type type, int ndim,
                                        const int64_t *shape, CUdeviceptr data);
/** Frees the array (and its memory, once no view of it is left), ordered after the work
 *  queued on its stream: a launch on that stream that uses it and is still running is not
 *  disturbed. Work on other streams must be finished first. NULL is fine. A handle
 *  destroyed already (or not an array) frees nothing: the call only sets the thread's
 *  error detail (cujit_last_error()) and logs it at debug level. Every other function
 *  refuses a destroyed handle. An array must not be destroyed while another thread uses
 *  it. */
CUJIT_API void cujit_array_destroy(cujit_array *a);

/** Copies the array into host memory (`bytes` must be its cujit_array_nbytes()); returns
 *  when the copy is done. PyCUDA's .get(). */
CUJIT_API cujit_status cujit_array_get(const cujit_array *a, void *host, size_t bytes);
/** Copies host memory into the array (`bytes` must be its nbytes). */
CUJIT_API cujit_status cujit_array_set(cujit_array *a, const void *host, size_t bytes);
/** Sets every element to *value (an element of the array's type). */
CUJIT_API cujit_status cujit_array_fill(cujit_array *a, const void *value);

/* Operations with an output: `out` points to an array pointer. When *out is NULL a new
 * array is made (owned by the caller); otherwise the result goes into *out, which must
 * have the result's type and shape (it may be an input: in place; a view that overlaps an
 * input only in part gives an unspecified result). Arrays are used on the device that is
 * current when they are made. */

/** A copy of `a`. */
CUJIT_API cujit_status cujit_array_copy(const cujit_array *a, cujit_array **out);
/** `a` converted to `type` (C conversions; complex to real takes the real part). */
CUJIT_API cujit_status cujit_array_astype(const cujit_array *a, cujit_type type,
                                          cujit_array **out);

/** A view of elements [start, stop) of `a` taken as 1-D (C order); it shares a's memory,
 *  which lives until the last of them is destroyed. Owned by the caller. */
CUJIT_API cujit_status cujit_array_view(const cujit_array *a, int64_t start, int64_t stop,
                                        cujit_array **view);
/** A view of `a` with another shape of the same element count. Owned by the caller. */
CUJIT_API cujit_status cujit_array_reshape(const cujit_array *a, int ndim, const int64_t *shape,
                                           cujit_array **view);
/** Orders the array's later work (and its freeing) on `stream` (NULL: the legacy default). */
CUJIT_API cujit_status cujit_array_set_stream(cujit_array *a, CUstream stream);

/** Properties. For a destroyed or NULL array they return 0 (CUJIT_TYPE_BYTES for the type,
 *  NULL for the stream). Each looks the handle up under a lock (about 35 instructions
 *  besides the lock), so they may be called on a launch path. */
CUJIT_API cujit_type cujit_array_type(const cujit_array *a);
CUJIT_API int cujit_array_ndim(const cujit_array *a);
CUJIT_API int64_t cujit_array_shape(const cujit_array *a, int dim);
CUJIT_API int64_t cujit_array_size(const cujit_array *a);   /**< element count */
CUJIT_API size_t cujit_array_nbytes(const cujit_array *a);
CUJIT_API CUdeviceptr cujit_array_data(const cujit_array *a);
CUJIT_API CUstream cujit_array_stream(const cujit_array *a);
/** Bytes of one element of `type` (0 for CUJIT_TYPE_BYTES). */
CUJIT_API size_t cujit_type_size(cujit_type type);

/** An array as a kernel argument: its device pointer, for cujit_launch()/CUJIT_LAUNCH. For
 *  a destroyed or NULL array it is an argument every launch refuses
 *  (CUJIT_ERROR_INVALID_ARGS naming it), never a null pointer; an empty array's pointer
 *  may be 0 and passes as it is. */
static inline cujit_arg cujit_array_arg(const cujit_array *a) {
  CUdeviceptr d = cujit_array_data(a);
  cujit_arg r = cujit_ptr(d);
  if (!d && cujit_array_type(a) == CUJIT_TYPE_BYTES) r.kind = CUJIT_ARG_ARRAY; /* not live */
  return r;
}
/** An array as an argument of a generated kernel's call (cujit_elementwise_call(),
 *  cujit_reduction_call(); the CUJIT_ELEMENTWISE and CUJIT_REDUCTION macros make it from
 *  the cujit_array * itself): the handle, looked up and checked by the call. */
static inline cujit_arg cujit_arr(const cujit_array *a) {
  cujit_arg r = cujit_ptr((CUdeviceptr)(uintptr_t)a);
  r.kind = CUJIT_ARG_ARRAY;
  return r;
}

/* =======================================================================================
 * 16. Array operations                                                      experimental
 * ===================================================================================== */

/*
 * Array operations (PyCUDA's gpuarray operators and cumath, CuPy's ufuncs). Each runs as
 * one kernel generated for its types and compiled through cujit's caches (in memory
 * within a process, on disk across processes), on the stream of its first array input.
 * Outputs follow the rule above: *out NULL makes a new array, else *out receives it.
 *
 * Type promotion follows NumPy 2. Two arrays: the smallest type that holds both (bool <
 * integers < floats < complex; a signed and an unsigned integer of one size give the next
 * larger signed one, u64 with a signed one gives f64; an integer with a float gives a
 * float wide enough for the integer, e.g. i16+f16 -> f32, i32+f32 -> f64; f16 with bf16
 * gives f32). A scalar is "weak", as a Python number: it does not widen an array of its
 * kind (2.0 * f16 array stays f16, 3 * i8 array stays i8); a float scalar with an integer
 * or bool array gives f64. Comparisons give bool arrays; true division of integers gives
 * f64; the math functions of an integer array compute in f64.
 */

typedef enum cujit_binop {
  CUJIT_ADD, CUJIT_SUB, CUJIT_MUL, CUJIT_DIV, CUJIT_POW, CUJIT_MINIMUM, CUJIT_MAXIMUM,
  CUJIT_FMOD, CUJIT_EQ, CUJIT_NE, CUJIT_LT, CUJIT_LE, CUJIT_GT, CUJIT_GE
} cujit_binop;

typedef enum cujit_unop {
  CUJIT_NEG, CUJIT_FABS, CUJIT_SQRT, CUJIT_EXP, CUJIT_LOG, CUJIT_LOG10, CUJIT_SIN, CUJIT_COS,
  CUJIT_TAN, CUJIT_ASIN, CUJIT_ACOS, CUJIT_ATAN, CUJIT_SINH, CUJIT_COSH, CUJIT_TANH,
  CUJIT_FLOOR, CUJIT_CEIL
} cujit_unop;

/** Flags of cujit_array_binary_scalar(). */
enum {
  CUJIT_SCALAR_FIRST = 1u << 0, /**< compute s op a (as for 2 - a) instead of a op s */
  CUJIT_SCALAR_INT = 1u << 1    /**< s is an integer (a Python int): integer arrays keep
                                     their type; without it s is a float (a Python float) */
};

/** a op b, elementwise; a and b have the same shape.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a destroyed or NULL array, shapes that
 *          differ (both named: "a has shape (4, 4) and b (16,)"), an output of the wrong
 *          type or shape, an op not defined for the types
 *          (fmod of complex numbers, ordering of complex numbers); CUJIT_ERROR_COMPILE (never
 *          for these built-in ops unless the toolkit is broken); device errors. */
CUJIT_API cujit_status cujit_array_binary(cujit_binop op, const cujit_array *a,
                                          const cujit_array *b, cujit_array **out);
/** a op s (or s op a with CUJIT_SCALAR_FIRST): e.g. 2 * a is
 *  cujit_array_binary_scalar(CUJIT_MUL, a, 2, CUJIT_SCALAR_INT, &out). With
 *  CUJIT_SCALAR_INT, s must be an integer below 2^63 in magnitude and, when the operation
 *  computes in an integer type, fit it (300 with an i8 array is CUJIT_ERROR_INVALID_VALUE,
 *  as NumPy 2 refuses it). */
CUJIT_API cujit_status cujit_array_binary_scalar(cujit_binop op, const cujit_array *a, double s,
                                                 unsigned flags, cujit_array **out);
/** f(a), elementwise (cumath): NEG keeps the type; FABS of a complex array gives its
 *  magnitude (real type); the others keep floats and complex types and give f64 for
 *  integers and bool. */
CUJIT_API cujit_status cujit_array_unary(cujit_unop op, const cujit_array *a,
                                         cujit_array **out);
/** The type an operation on types a and b gives (for a scalar b pass CUJIT_TYPE_F64, or
 *  CUJIT_TYPE_I64 for an integer, with weak = 1). */
CUJIT_API cujit_type cujit_promote(cujit_type a, cujit_type b, int weak);

/** A fused elementwise expression over named arrays, one kernel with no temporaries (CuPy's
 *  fuse, numexpr): cujit_array_map(&y, "sin(2*x + 1)", 1, names, arrays) with names[0] =
 *  "x". Each name stands for the element i of its array, of that array's type; the arrays
 *  have the same shape; `i` (64-bit) is the index. The result's type is the promotion of
 *  the arrays' types, also when the expression is math on integers ("sin(x)" of an i32
 *  array is truncated to i32): pass an output of the type you want to choose another.
 *  @return as cujit_array_binary(); CUJIT_ERROR_COMPILE with NVRTC's log and the generated
 *          source when the expression does not compile. */
#define CUJIT_MAP_MAX_ARRAYS 32 /**< the most arrays one cujit_array_map() names */
CUJIT_API cujit_status cujit_array_map(cujit_array **out, const char *expr, size_t n,
                                       const char *const *names,
                                       const cujit_array *const *arrays);


/* =======================================================================================
 * 17. Reductions, scans and random arrays                                   experimental
 * ===================================================================================== */

typedef enum cujit_redop { CUJIT_SUM, CUJIT_MIN, CUJIT_MAX } cujit_redop;

/** Reduces all of `a` to one element, in a 0-d array (ndim 0, size 1) of the result type:
 *  SUM of bool and integers narrower than 64 bits gives i64 (u64 for unsigned ones), of
 *  floats and complex numbers their own type, accumulated by a tree (not serially);
 *  MIN/MAX keep the type (complex refused; NaN wins, as NumPy's); 16-bit floats are
 *  combined in float. An empty array sums to 0; its MIN/MAX is
 *  CUJIT_ERROR_INVALID_VALUE. Runs on a's stream. Read the result with cujit_array_get().
 *  *out follows the output rule (a given one must be 0-d of the result type). */
CUJIT_API cujit_status cujit_array_reduce(cujit_redop op, const cujit_array *a,
                                          cujit_array **out);
/** sum(a * b) of two arrays of one shape, in a 0-d array of their promoted type. */
CUJIT_API cujit_status cujit_array_dot(const cujit_array *a, const cujit_array *b,
                                       cujit_array **out);
/** Inclusive (or, with `exclusive`, exclusive) prefix sum of `a` (read in C order) as a 1-D
 *  array of the type SUM gives (i64 for bool and narrower signed integers, u64 for narrower
 *  unsigned ones, else a's type): CuPy's cumsum. */
CUJIT_API cujit_status cujit_array_cumsum(const cujit_array *a, int exclusive,
                                          cujit_array **out);

typedef enum cujit_distribution {
  CUJIT_UNIFORM, /**< in [0, 1) */
  CUJIT_NORMAL   /**< mean 0, standard deviation 1 */
} cujit_distribution;

/** Random F32 or F64 numbers (PyCUDA's curandom.rand, cp.random.rand / randn) from a
 *  counter-based generator (Philox-4x32-10): element i depends only on (seed, i), so the
 *  same seed gives the same bits on every device, launch configuration and array size
 *  (normal numbers use correctly rounded arithmetic only). Other types are
 *  CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_array_random(cujit_array **out, cujit_type type, int ndim,
                                          const int64_t *shape, cujit_distribution dist,
                                          uint64_t seed);

/* =======================================================================================
 * 18. Kernel generators                                                     experimental
 * ===================================================================================== */

/*
 * Kernel generators (PyCUDA's ElementwiseKernel, ReductionKernel, InclusiveScanKernel and
 * ExclusiveScanKernel; CuPy's ElementwiseKernel and ReductionKernel): a declaration string
 * and expressions in, a kernel compiled through the caches out.
 *
 * `args` declares the arguments as C does, comma-separated: "float a, float *x, float b,
 * float *y, float *z". A pointer is an array argument, anything else a scalar. Types: bool,
 * char, signed/unsigned char, short, int, long, long long (and unsigned ones), int8_t ...
 * uint64_t, size_t, ptrdiff_t, __half, __nv_bfloat16, float, double, complex<float>,
 * complex<double> (cuda::std), with const allowed. A declaration cujit cannot read is
 * CUJIT_ERROR_INVALID_VALUE naming its column and token.
 *
 * Calls take the arguments in declaration order, as an array of cujit_arg, or inline
 * through the macros at the end of this section, which make each from a plain value:
 *     CUJIT_ELEMENTWISE(lin_comb, 5.0f, x, 6, y, z);   for "float a, float *x, float b, ..."
 * An array argument is its cujit_array * (cujit_arr(x) in an array of cujit_arg); it must
 * be live, of the declared element type and of the first array's size. A scalar carries
 * its type: cujit_f32(5), cujit_f64(), cujit_i32(), cujit_u64(), cujit_bool(), cujit_c64()
 * and the other constructors, or in the macros a C value of its own type (bool, char,
 * signed and unsigned char, short, int, long and long long, float, double; in C also
 * float _Complex and double _Complex; a cujit_arg passes as it is). The call converts it
 * to the declared type as C converts an argument to a prototyped parameter, where the
 * value keeps its meaning, and refuses it where it would not:
 *   - integer types: an integer, a bool or a float whose value is an integer (2.0), in
 *     the type's range. Refused: a value out of range (300 for unsigned char, -1 for
 *     unsigned int, which C would wrap), a float with a fraction (2.5, which C would
 *     truncate), infinities and NaN.
 *   - bool: 0 and 1 (false and true) of any of those types; other values are refused.
 *   - floating types (__half, __nv_bfloat16, float, double): an integer, a bool or a
 *     float, rounded to nearest (ties to even) where the type cannot hold it exactly
 *     (0.1 for float, 16777217 for float, 0.1 for __half). Refused: a finite value beyond
 *     the type's range (1e300 for float, 70000 for __half), which C leaves undefined;
 *     infinities and NaN pass.
 *   - complex types: a complex value (each part converted as a float is), or a real one
 *     (imaginary part 0).
 *   - always refused: a complex value for a real or integer parameter (C would drop the
 *     imaginary part), a device pointer (cujit_ptr()), an In/Out buffer, an array for a
 *     scalar and a scalar for an array.
 *   - a value given by its bytes (cujit_value(), CUJIT_VALUE(); a __half's bits, say)
 *     passes unchanged when its size is the declared type's, and is refused otherwise.
 * So a double given for a float parameter arrives as the float nearest to it, never as
 * the double's bytes. Any refusal is CUJIT_ERROR_INVALID_VALUE naming the function, the
 * argument (position and name), the declared and the given type and the value; nothing
 * is compiled or launched then.
 */

/** Optional parts of a generated kernel. Start from CUJIT_GENERATOR_OPTIONS_INIT (or zero
 *  it) for none, or pass NULL. The strings are copied. The create functions below return
 *  CUJIT_ERROR_INVALID_VALUE or CUJIT_ERROR_NOT_SUPPORTED for a bad opts->size, as
 *  "Structs that grow" says. */
typedef struct cujit_generator_options {
  size_t size;            /**< sizeof, set by CUJIT_GENERATOR_OPTIONS_INIT; or 0 */
  const char *name;       /**< kernel name ("elementwise", "reduction" or "scan" by default) */
  const char *preamble;   /**< code before the kernel: helper functions, #includes */
  const char *loop_prep;  /**< elementwise: statements before the loop over i */
  const char *after_loop; /**< elementwise: statements after it */
} cujit_generator_options;
#define CUJIT_GENERATOR_OPTIONS_INIT {sizeof(cujit_generator_options), NULL, NULL, NULL, NULL}

typedef struct cujit_elementwise cujit_elementwise;
/** `operation` is run for every index i (a 64-bit integer) from 0 to n - 1, n being the
 *  first array argument's size: "z[i] = a*x[i] + b*y[i]". Compiled at the first call with
 *  arrays on a device (so that a bad operation fails there with NVRTC's log, the
 *  generated source and its lines). *out is owned by the caller:
 *  cujit_elementwise_destroy(). */
CUJIT_API cujit_status cujit_elementwise_create(cujit_elementwise **out, const char *args,
                                                const char *operation,
                                                const cujit_generator_options *opts);
/** Runs it over the first array argument's elements, on that array's stream. `args`
 *  holds `nargs` arguments, one per declaration (see above for what each takes).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming a wrong argument (see above);
 *          CUJIT_ERROR_COMPILE with NVRTC's log and the generated source; device errors. */
CUJIT_API cujit_status cujit_elementwise_call(cujit_elementwise *k, const cujit_arg *args,
                                              size_t nargs);
/** As cujit_elementwise_call() for i = start, start + step, ... below stop (PyCUDA's
 *  range=slice(...)); step may be negative (then i goes down to above stop). Every i the
 *  range gives must index the arrays; any int64 values are checked without overflow, and
 *  a range that leaves the arrays (or a step of 0) is CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_elementwise_call_range(cujit_elementwise *k, int64_t start,
                                                    int64_t stop, int64_t step,
                                                    const cujit_arg *args, size_t nargs);
CUJIT_API void cujit_elementwise_destroy(cujit_elementwise *k);

typedef struct cujit_reduction cujit_reduction;
/** A reduction to one value of `type`: `map_expr` gives element i's value ("x[i]*y[i]";
 *  the arguments by name, i a long long), `reduce_expr` combines two values named a and b
 *  ("a+b"; it must be associative and commutative: values are not combined in index
 *  order), and `neutral` is the value that changes nothing ("0"), which is also the
 *  result over 0 elements. Compiled at the first call; *out is owned by the caller:
 *  cujit_reduction_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a type arrays cannot hold, a NULL or
 *          empty expression, declarations cujit cannot read or holding no array, a
 *          kernel name that is not an identifier. */
CUJIT_API cujit_status cujit_reduction_create(cujit_reduction **out, cujit_type type,
                                              const char *neutral, const char *reduce_expr,
                                              const char *map_expr, const char *args,
                                              const cujit_generator_options *opts);
/** Runs it over the first array argument's elements, on that array's stream; the result
 *  goes to a 0-d array (output rule) or, with cujit_reduction_call_host, to host memory of
 *  the result type's size (and the call waits for it).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming a wrong argument (see above) or
 *          output; CUJIT_ERROR_COMPILE with NVRTC's log and the generated source with line
 *          numbers when an expression does not compile; device errors. */
CUJIT_API cujit_status cujit_reduction_call(cujit_reduction *r, cujit_array **out,
                                            const cujit_arg *args, size_t nargs);
CUJIT_API cujit_status cujit_reduction_call_host(cujit_reduction *r, void *result,
                                                 const cujit_arg *args, size_t nargs);
CUJIT_API void cujit_reduction_destroy(cujit_reduction *r);

typedef struct cujit_scan cujit_scan;
/** A prefix scan of arrays of `type` with `scan_expr` in a and b ("a+b", associative) and
 *  its `neutral` element; inclusive, or exclusive when `exclusive` is set. */
CUJIT_API cujit_status cujit_scan_create(cujit_scan **out, cujit_type type,
                                         const char *scan_expr, const char *neutral,
                                         int exclusive, const cujit_generator_options *opts);
/** Scans `in` (1-D of the scan's type) into *out (output rule; may be `in`: in place). */
CUJIT_API cujit_status cujit_scan_call(cujit_scan *s, const cujit_array *in, cujit_array **out);
CUJIT_API void cujit_scan_destroy(cujit_scan *s);

/** The generators' calls with the arguments inline, as plain values (up to 32):
 *  CUJIT_ELEMENTWISE(k, 5.0f, x, 6.0f, y, z), CUJIT_ELEMENTWISE_RANGE(k, start, stop, step,
 *  args...), CUJIT_REDUCTION(r, &out, x, y), CUJIT_REDUCTION_HOST(r, &result, x, y). Each
 *  argument becomes a cujit_arg by its C type (see above): a cujit_array * an array, a
 *  float cujit_f32(), a double cujit_f64(), an int cujit_i32(), and so on; a cujit_arg
 *  passes as it is. A value of another type (a pointer such as &a, a long double) does not
 *  compile. A compound literal with commas must be wrapped in parentheses. */
#define CUJIT_ELEMENTWISE(k, ...) \
  cujit_elementwise_call((k), CUJIT_GEN_ARGS_(__VA_ARGS__))
#define CUJIT_ELEMENTWISE_RANGE(k, start, stop, step, ...) \
  cujit_elementwise_call_range((k), (start), (stop), (step), CUJIT_GEN_ARGS_(__VA_ARGS__))
#define CUJIT_REDUCTION(r, out, ...) cujit_reduction_call((r), (out), CUJIT_GEN_ARGS_(__VA_ARGS__))
#define CUJIT_REDUCTION_HOST(r, result, ...) \
  cujit_reduction_call_host((r), (result), CUJIT_GEN_ARGS_(__VA_ARGS__))

/* What the macros expand to: each argument made a cujit_arg (CUJIT_GEN_ARG_), then the
 * array of them and their count. */
#define CUJIT_GEN_ARGS_(...) \
  CUJIT_GEN_LIST_(CUJIT_GEN_MAP_(__VA_ARGS__)), (size_t)CUJIT_NARGS_(__VA_ARGS__)
#ifdef __cplusplus
#  define CUJIT_GEN_LIST_(...) std::initializer_list<cujit_arg>{__VA_ARGS__}.begin()
#  define CUJIT_GEN_ARG_(x) cujit_gen_arg_(x)
#else
#  define CUJIT_GEN_LIST_(...) (const cujit_arg[]){__VA_ARGS__}
#  ifndef __STDC_NO_COMPLEX__
#    define CUJIT_GEN_COMPLEX_ float _Complex: cujit_gen_c64_, double _Complex: cujit_gen_c128_,
#  else
#    define CUJIT_GEN_COMPLEX_
#  endif
#  define CUJIT_GEN_ARG_(x)                                                                 \
  _Generic((x), cujit_arg: cujit_gen_self_, cujit_array *: cujit_arr,                       \
           const cujit_array *: cujit_arr, _Bool: cujit_bool, char: cujit_gen_char_,        \
           signed char: cujit_i8, unsigned char: cujit_u8, short: cujit_i16,                \
           unsigned short: cujit_u16, int: cujit_i32, unsigned: cujit_u32,                  \
           long: cujit_gen_long_, unsigned long: cujit_gen_ulong_, long long: cujit_i64,   \
           unsigned long long: cujit_u64, CUJIT_GEN_COMPLEX_ float: cujit_f32,             \
           double: cujit_f64)(x)
static inline cujit_arg cujit_gen_self_(cujit_arg a) { return a; }
#  ifndef __STDC_NO_COMPLEX__
static inline cujit_arg cujit_gen_c64_(float _Complex z) {
  float v[2];
  memcpy(v, &z, sizeof v); /* C lays a complex number out as its two parts */
  return cujit_c64(v[0], v[1]);
}
static inline cujit_arg cujit_gen_c128_(double _Complex z) {
  double v[2];
  memcpy(v, &z, sizeof v);
  return cujit_c128(v[0], v[1]);
}
#  endif
#endif
/* char, long and unsigned long have the size and signedness of the host's ABI. */
static inline cujit_arg cujit_gen_char_(char v) {
  return (char)-1 < 0 ? cujit_i8((int8_t)v) : cujit_u8((uint8_t)v);
}
static inline cujit_arg cujit_gen_long_(long v) {
  return sizeof v == 8 ? cujit_i64((int64_t)v) : cujit_i32((int32_t)v);
}
static inline cujit_arg cujit_gen_ulong_(unsigned long v) {
  return sizeof v == 8 ? cujit_u64((uint64_t)v) : cujit_u32((uint32_t)v);
}
/* Applies CUJIT_GEN_ARG_ to each of 1 to 32 arguments. */
#define CUJIT_GEN_MAP_(...) CUJIT_GEN_CAT_(CUJIT_GEN_MAP_, CUJIT_NARGS_(__VA_ARGS__))(__VA_ARGS__)
#define CUJIT_GEN_CAT_(a, b) CUJIT_GEN_CAT2_(a, b)
#define CUJIT_GEN_CAT2_(a, b) a##b
#define CUJIT_GEN_MAP_1(a) CUJIT_GEN_ARG_(a)
#define CUJIT_GEN_MAP_2(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_1(__VA_ARGS__)
#define CUJIT_GEN_MAP_3(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_2(__VA_ARGS__)
#define CUJIT_GEN_MAP_4(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_3(__VA_ARGS__)
#define CUJIT_GEN_MAP_5(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_4(__VA_ARGS__)
#define CUJIT_GEN_MAP_6(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_5(__VA_ARGS__)
#define CUJIT_GEN_MAP_7(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_6(__VA_ARGS__)
#define CUJIT_GEN_MAP_8(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_7(__VA_ARGS__)
#define CUJIT_GEN_MAP_9(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_8(__VA_ARGS__)
#define CUJIT_GEN_MAP_10(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_9(__VA_ARGS__)
#define CUJIT_GEN_MAP_11(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_10(__VA_ARGS__)
#define CUJIT_GEN_MAP_12(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_11(__VA_ARGS__)
#define CUJIT_GEN_MAP_13(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_12(__VA_ARGS__)
#define CUJIT_GEN_MAP_14(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_13(__VA_ARGS__)
#define CUJIT_GEN_MAP_15(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_14(__VA_ARGS__)
#define CUJIT_GEN_MAP_16(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_15(__VA_ARGS__)
#define CUJIT_GEN_MAP_17(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_16(__VA_ARGS__)
#define CUJIT_GEN_MAP_18(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_17(__VA_ARGS__)
#define CUJIT_GEN_MAP_19(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_18(__VA_ARGS__)
#define CUJIT_GEN_MAP_20(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_19(__VA_ARGS__)
#define CUJIT_GEN_MAP_21(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_20(__VA_ARGS__)
#define CUJIT_GEN_MAP_22(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_21(__VA_ARGS__)
#define CUJIT_GEN_MAP_23(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_22(__VA_ARGS__)
#define CUJIT_GEN_MAP_24(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_23(__VA_ARGS__)
#define CUJIT_GEN_MAP_25(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_24(__VA_ARGS__)
#define CUJIT_GEN_MAP_26(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_25(__VA_ARGS__)
#define CUJIT_GEN_MAP_27(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_26(__VA_ARGS__)
#define CUJIT_GEN_MAP_28(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_27(__VA_ARGS__)
#define CUJIT_GEN_MAP_29(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_28(__VA_ARGS__)
#define CUJIT_GEN_MAP_30(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_29(__VA_ARGS__)
#define CUJIT_GEN_MAP_31(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_30(__VA_ARGS__)
#define CUJIT_GEN_MAP_32(a, ...) CUJIT_GEN_ARG_(a), CUJIT_GEN_MAP_31(__VA_ARGS__)

#ifdef __cplusplus
} /* extern "C" */

#include <initializer_list>

/* In C++ each value finds its constructor by overloading. A pointer of any other type
 * (&a, as the calls once took) matches the deleted template and does not compile. */
static inline cujit_arg cujit_gen_arg_(cujit_arg a) { return a; }
static inline cujit_arg cujit_gen_arg_(cujit_array *a) { return cujit_arr(a); }
static inline cujit_arg cujit_gen_arg_(const cujit_array *a) { return cujit_arr(a); }
static inline cujit_arg cujit_gen_arg_(decltype(nullptr)) { return cujit_arr(nullptr); }
static inline cujit_arg cujit_gen_arg_(bool v) { return cujit_bool(v); }
static inline cujit_arg cujit_gen_arg_(char v) { return cujit_gen_char_(v); }
static inline cujit_arg cujit_gen_arg_(signed char v) { return cujit_i8(v); }
static inline cujit_arg cujit_gen_arg_(unsigned char v) { return cujit_u8(v); }
static inline cujit_arg cujit_gen_arg_(short v) { return cujit_i16(v); }
static inline cujit_arg cujit_gen_arg_(unsigned short v) { return cujit_u16(v); }
static inline cujit_arg cujit_gen_arg_(int v) { return cujit_i32(v); }
static inline cujit_arg cujit_gen_arg_(unsigned v) { return cujit_u32(v); }
static inline cujit_arg cujit_gen_arg_(long v) { return cujit_gen_long_(v); }
static inline cujit_arg cujit_gen_arg_(unsigned long v) { return cujit_gen_ulong_(v); }
static inline cujit_arg cujit_gen_arg_(long long v) { return cujit_i64(v); }
static inline cujit_arg cujit_gen_arg_(unsigned long long v) { return cujit_u64(v); }
static inline cujit_arg cujit_gen_arg_(float v) { return cujit_f32(v); }
static inline cujit_arg cujit_gen_arg_(double v) { return cujit_f64(v); }
template <typename T> cujit_arg cujit_gen_arg_(T *) = delete;
#endif
#endif /* CUJIT_ARRAY_H_INCLUDED */

/* array.h - the array layer: device arrays (handles, memory shared between views, lent to
 * and borrowed from other libraries), their elements moved and printed, and the engine
 * that writes, compiles and runs the kernels over them, on which the operations (ops/) and
 * the generators (gen/) are built. It sits on top of the launch layer and uses the public
 * API to compile and launch; the pool, the driver table, and for the kernels it wrote
 * itself the launch through a kernel's slot without the argument checks, come from below.
 * Private; not installed. */
#ifndef CUJIT_ARRAY_H
#define CUJIT_ARRAY_H

#include "cujit_array.h"
#include "common/common.h"
#include "dl/driver.h"

/* The device memory behind an array and its views (and the DLPack tensors lent out of
 * them: dlpack.c). */
typedef struct cj_block {
  int refs;
  CUdevice dev;
  CUdeviceptr ptr;
  size_t bytes;
  int owned;        /* 0: the caller's memory (cujit_array_wrap) or another library's */
  cj_mem_ctx owner; /* the context its memory was made in (dead after a reset) */
  /* Memory another library lent (dlpack.c): called once, by the last array or tensor to let
   * go, instead of giving memory to the pool; `stream` is that array's. NULL otherwise. */
  void (*release)(struct cj_block *b, CUstream stream);
  void *lender;  /* what release gives back */
  int read_only; /* lent read-only: every tensor made of it is read-only too */
  /* The stream of the holder that let go of it last while others still held it (atomic):
   * a graph that holds it (array.c) gives it back ordered there, after that holder's work. */
  CUstream last_stream;
} cj_block;

/* An array as this layer sees it. The interface hands out its handle instead (common.h:
 * handles that never alias): a `cujit_array *` is that handle in disguise, and struct
 * cujit_array is never defined, so that a handle cannot be read as an array by mistake.
 * Views and blocks inside the layer are plain pointers. */
typedef struct cj_array {
  int type;
  int ndim;
  int64_t shape[CUJIT_ARRAY_MAX_DIMS];
  int64_t strides[CUJIT_ARRAY_MAX_DIMS]; /* in elements; negative in a reversed view */
  int contig;                            /* the elements in C order, one after another */
  int64_t size;
  size_t nbytes;    /* size times the element size: the elements' bytes, not their span */
  CUdeviceptr data; /* element 0 (the highest address of a reversed view) */
  CUstream stream;
  cj_block *block;
  uintptr_t handle; /* what the caller holds */
} cj_array;

/* ---- types.c: element types ---- */

/* An element type: its entry in the scalar table (size, c_name, header, name). */
typedef cj_scalar cj_elem;

/* The element type `type`, or NULL when arrays cannot hold it. */
const cj_elem *cj_elem_of(int type);
/* For the name of an operation's range (CJ_TRACE, "cujit: add f32"): a type's short name,
 * "?" for none; and CJ_TYPES2_FMT's three strings for two types, "f32", or "f32 f64" where
 * they differ. */
#define CJ_TYPE_NAME(t) (cj_elem_of(t) ? cj_elem_of(t)->name : "?")
#define CJ_TYPES2_FMT "%s%s%s"
#define CJ_TYPES2(a, b) CJ_TYPE_NAME(a), (a) == (b) ? "" : " ", (a) == (b) ? "" : CJ_TYPE_NAME(b)
/* Appends CUDA C converting the expression `x` of type `from` to `to`, as C converts
 * (through float for the 16-bit floats; the real part of a complex number; a complex
 * number from a real one). */
void cj_array_convert(cj_buf *b, int from, int to, const char *x);

/* ---- digits.c: the decimal digits of the floating types ---- */

/* A value of a floating type: zero, finite (m * 2^e), infinite or NaN, and its sign. */
enum { CJ_FP_ZERO, CJ_FP_FINITE, CJ_FP_INF, CJ_FP_NAN };
typedef struct cj_float_parts {
  int kind;
  int sign;   /* 1: the sign bit is set (-0.0 too) */
  uint64_t m; /* finite: the value's magnitude is m * 2^e */
  int e;
  int bits;     /* the type's significand bits, the hidden one included */
  int boundary; /* a power of two above the subnormals: the neighbour below is nearer */
} cj_float_parts;
/* The value of an element of `type` (F16, BF16, F32 or F64) at p. */
void cj_float_parts_of(int type, const void *p, cj_float_parts *v);
/* Its value as a double (exact). */
double cj_float_value(const cj_float_parts *v);
/* x rounded to `type` (F16, BF16, F32, F64) to nearest, ties to even (infinite beyond). */
double cj_float_round(double x, int type);

/* A nonnegative decimal: digits d[0 .. n) (each 0 to 9, the first not 0, the last not 0),
 * its value 0.d[0]d[1]... * 10^point; 0 has no digit. */
#define CJ_DIGITS_MAX 800
typedef struct cj_decimal {
  int n;
  int point;
  char d[CJ_DIGITS_MAX];
} cj_decimal;
/* The magnitude's exact digits (a finite value; no digit for the others). */
void cj_float_exact(const cj_float_parts *v, cj_decimal *out);
/* The shortest digits that name v among its type's values (x: its exact digits). */
void cj_float_shortest(const cj_float_parts *v, const cj_decimal *x, cj_decimal *out);
/* x rounded (to nearest, ties to even) to its first `keep` digits (0 and below: to the
 * place of the digit before its first, where it is 0 or one unit). */
void cj_decimal_round(const cj_decimal *x, int keep, cj_decimal *out);
/* The digits NumPy prints of v's magnitude: the shortest, but at most `precision` after
 * the point (after the first digit when sci; -1: no limit), and at least min_digits there
 * (more of the exact value's), the exact value rounded where it is cut. */
void cj_float_digits(const cj_float_parts *v, int sci, int precision, int min_digits,
                     cj_decimal *out);

/* ---- layout.c: strides, ranges and loops ---- */

/* The most elements an array holds, and the bound on the product of its sizes other than
 * 0 (NumPy's rule: an empty array's other sizes count too). */
#define CJ_LAYOUT_MAX ((int64_t)1 << 62)
/* 0, with the element count in *size, when `shape` is one an array may have: no size
 * below 0, and those other than 0 multiplying to at most CJ_LAYOUT_MAX; -1 otherwise. */
int cj_layout_count(int ndim, const int64_t *shape, int64_t *size);
/* The byte offset of index i along a dimension of `stride` elements of `size` bytes, as an
 * address difference: computed in unsigned arithmetic, so a negative stride (a reversed
 * view) moves down and no product is a signed overflow. */
static inline CUdeviceptr cj_array_step(int64_t i, int64_t stride, size_t size) {
  return (CUdeviceptr)i * (CUdeviceptr)stride * (CUdeviceptr)size;
}
/* C-order strides of `shape` (a size of 0 counting as 1). For a shape cj_layout_count()
 * refuses, the strides past INT64_MAX stay there (never an overflow). */
void cj_layout_contiguous(int ndim, const int64_t *shape, int64_t *strides);
/* Whether elements of these strides follow one another in C order (dimensions of one
 * element, and arrays of none, ignored). */
int cj_layout_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);
/* Strides for the same elements in `new_shape` (of the same count), as NumPy's reshape
 * gives a view: 1 and new_strides, or 0 when only a copy can have that shape. */
int cj_layout_reshape(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim,
                      const int64_t *new_shape, int64_t *new_strides);
/* Where element k (C order) of an array of this shape and strides lies, in elements from
 * its first. */
int64_t cj_layout_offset(int ndim, const int64_t *shape, const int64_t *strides, int64_t k);
/* How an operation's output o meets one of its inputs x. CJ_APART: no byte in common
 * (their spans of memory do not overlap: conservative, so views that interleave count as
 * overlapping). CJ_SAME: element for element, each element of o is the element of x at its
 * own index (one address, one element size, the same steps over o's shape), which an
 * elementwise kernel may compute in place. CJ_OVERLAP: any other overlap, which NumPy's rule
 * makes as if computed into a temporary. */
enum { CJ_APART, CJ_SAME, CJ_OVERLAP };
int cj_layout_meet(const cj_array *x, const cj_array *o);
/* The number of i in start, start + step, ... before stop (up to 2^64 - 1). */
uint64_t cj_range_count(int64_t start, int64_t stop, int64_t step);
/* Whether the `count` indices start, start + step, ... all lie in [0, size), computed
 * without overflow for any int64 values. */
int cj_range_inside(int64_t start, int64_t step, uint64_t count, int64_t size);

/* The loop a kernel runs over arrays of one shape, or of shapes broadcast to it. dims 0:
 * the contiguous loop, element i of every array at its index i, but for those of `bcast`
 * (bit j: array j), of one element read once. dims 1 to 4: the strided loop over `shape`
 * (the result's shape, dimensions merged where every array allows it), array j's element
 * at sum(c[d] * strides[j][d]), a stride of 0 where array j is broadcast. */
typedef struct cj_plan {
  int dims;
  unsigned bcast;
  unsigned chunk;  /* cj_plan_chunks: elements a strided loop may move in one access (1: none) */
  unsigned zinner; /* cj_plan_chunks: the arrays that step by 0 along the innermost dimension */
  size_t n;        /* arrays */
  int64_t shape[CUJIT_ARRAY_MAX_DIMS];
  int64_t strides[CUJIT_MAP_MAX_ARRAYS + 1][CUJIT_ARRAY_MAX_DIMS];
} cj_plan;
/* Plans the loop over `shape` (ndim dimensions) of n arrays: arrays[j] NULL stands for a
 * new array (C order); an array of fewer dimensions stands for the last ones, and one of
 * size 1 along a dimension is broadcast along it (NumPy's rule: a stride of 0); those of
 * `bcast` are single elements broadcast (one element for every index). */
void cj_plan_make(cj_plan *p, int ndim, const int64_t *shape, size_t n,
                  const cj_array *const *arrays, unsigned bcast);
/* A strided plan as the kernel parameter cj_lay<dims, n> (map.c) takes it: its bytes, into
 * out (room for (n + 1) * 4 values). */
size_t cj_plan_pack(const cj_plan *p, int64_t *out);
/* Sets p->chunk and p->zinner for a strided plan of inputs and, last, the output: the most
 * elements (a power of two up to 16) that every array can move in one access of the
 * innermost dimension, each chunk of it at a multiple of its size from the array's first
 * element; 1 where some array steps along it by more than 1, the output by 0, or more than
 * four inputs by 0. An input that steps by 0 there (a row broadcast down a column) is read
 * once a chunk. */
void cj_plan_chunks(cj_plan *p);
/* The plan's key in 10 bits: dims and bcast (up to 5 arrays broadcast), or for a strided
 * plan (which broadcasts nothing) dims, log2 of chunk and zinner. */
static inline unsigned cj_plan_code(const cj_plan *p) {
  unsigned lg = 0;
  if (!p) return 0;
  while (lg < 4 && (1u << (lg + 1)) <= p->chunk) lg++;
  return (unsigned)p->dims | (p->bcast & 0x1fu) << 3 | lg << 3 | (p->zinner & 0xfu) << 6;
}

/* ---- array.c: handles ---- */

/* The array behind handle `h`: CUJIT_OK and *a, else CUJIT_ERROR_INVALID_VALUE naming `fn`
 * and `what` ("a", "out") and saying whether it is NULL or not a live array (destroyed
 * already, or never made by cujit). */
cujit_status cj_array_get(const cujit_array *h, const char *fn, const char *what, cj_array **a);
/* Both, under one lock: the message names the first of them that is not live. */
cujit_status cj_array_get2(const cujit_array *ha, const cujit_array *hb, const char *fn,
                           const char *what_a, const char *what_b, cj_array **a, cj_array **b);
/* The handle the caller holds for `a`. */
static inline cujit_array *cj_array_handle(const cj_array *a) { return (cujit_array *)a->handle; }
/* Validates type and shape and makes an array with memory from the pool (not filled),
 * allocated on and ordered on `stream` (cj_array_new: the legacy default stream): *out
 * gets its handle (NULL on failure) and *a, when a is not NULL, the array. */
cujit_status cj_array_new_on(cujit_array **out, cj_array **a, int type, int ndim,
                             const int64_t *shape, CUstream stream, const char *fn);
cujit_status cj_array_new(cujit_array **out, cj_array **a, int type, int ndim, const int64_t *shape,
                          const char *fn);
/* Whether a and b have one shape: as many dimensions, each of one size. */
int cj_array_same_shape(const cj_array *a, const cj_array *b);
/* An array's shape as NumPy writes it, "(4, 4)", "(16,)" or "()", into out, returned. */
#define CJ_SHAPE_TEXT 96
const char *cj_array_shape_text(const cj_array *a, char out[CJ_SHAPE_TEXT]);
/* The output of an operation: the array of handle *out when given (checked against type
 * and shape), else a new array like `like` with element type `type`, whose handle goes to
 * *out. *o gets the array; *made says whether it was made here (and must be destroyed on
 * failure: cj_array_unmake). */
cujit_status cj_array_output(cujit_array **out, const cj_array *like, int type, const char *fn,
                             cj_array **o, int *made);
/* The same for an output looked up already (o, of handle *out; NULL: make one). */
cujit_status cj_array_output_of(cujit_array **out, cj_array *o_given, const cj_array *like,
                                int type, const char *fn, cj_array **o, int *made);
/* CUJIT_ERROR_INVALID_VALUE naming `fn` and `what` when a is a strided view, which `fn`
 * cannot take: the message says to make it contiguous with cujit_array_copy(). */
cujit_status cj_array_need_contiguous(const cj_array *a, const char *fn, const char *what);
/* Ends an operation: on failure the output it made (made) is destroyed, *out set to NULL. */
cujit_status cj_array_unmake(cujit_status st, cujit_array **out, int made);
/* Work on `stream` uses a's memory: when the stream is being captured into a graph, the
 * graph holds a's block (as a view does) until it is destroyed. For the operations' own
 * copies; kernels' pointer arguments are found when they are captured. */
void cj_array_captured(CUstream stream, const cj_array *a);
/* One more holder of b's memory (a DLPack tensor lent out: dlpack.c). */
void cj_block_retain(cj_block *b);
/* One holder less: the last gives the memory back, ordered on `stream` (the pool's memory;
 * b->release for memory another library lent; nothing for wrapped memory). */
void cj_block_release(cj_block *b, CUstream stream);
/* A new array over memory another library lent (dlpack.c): shape checked as for new
 * arrays (`fn` names the call), `strides` in elements (NULL: C order), element 0 at `data`,
 * on the legacy default stream, over a new block with like's dev, ptr, release, owner and
 * read_only (not owned). On failure nothing is made and like->release is not called. */
cujit_status cj_array_adopt(cujit_array **out, int type, int ndim, const int64_t *shape,
                            const int64_t *strides, CUdeviceptr data, const cj_block *like,
                            const char *fn);

/* ---- io.c: moving arrays ---- */

/* Copies src into dst, of src's shape, converting its elements to dst's type as C does
 * (cujit_array_astype), on `stream`: a device copy for contiguous arrays of one type, else
 * a kernel that steps through either by its strides. */
cujit_status cj_array_copy_into(const cj_array *src, const cj_array *dst, CUstream stream);

/* An output `o` that overlaps an operation's input (cj_layout_meet) gets the result through
 * a temporary: cj_array_stage makes a new contiguous array of o's type and shape on
 * `stream` (*h its handle, *tmp the array) to compute into; cj_array_settle then copies it
 * into o (when `copy` is set and st is CUJIT_OK, or when `copy` is 2: whatever st) and
 * destroys it, returning st, or the copy's failure. */
cujit_status cj_array_stage(const cj_array *o, CUstream stream, const char *fn, cujit_array **h,
                            cj_array **tmp);
cujit_status cj_array_settle(cujit_status st, int copy, cujit_array *h, const cj_array *tmp,
                             const cj_array *o, CUstream stream);
/* A contiguous copy of x on `stream` (*h its handle, *copy the array): an input that an
 * operation's own writes would change under it is read from this instead. */
cujit_status cj_array_copy_of(const cj_array *x, CUstream stream, const char *fn, cujit_array **h,
                              cj_array **copy);

/* ---- dlpack.c: arrays lent to and borrowed from other libraries (DLPack) ---- */

/* DLPack's type code and bits of element type `type`: 1, or 0 for a type arrays do not
 * hold. */
int cj_dlpack_dtype(int type, uint8_t *code, uint8_t *bits);
/* The element type of DLPack's (code, bits, lanes), or -1 for one arrays do not hold. */
int cj_dlpack_type_of(uint8_t code, uint8_t bits, uint16_t lanes);

/* ---- text.c and print.c: arrays as NumPy prints them ---- */

/* Whether an array of this shape prints summarised (more than 1000 elements), and into
 * kept the shape of the elements it shows: the first and last 3 of each dimension of more
 * than 6, every element of the others. */
int cj_text_kept(int ndim, const int64_t *shape, int64_t *kept);
/* Appends the text NumPy's str() gives an array of `type` and `shape`, host holding the
 * elements it shows (all, or of the kept shape when summarised), C order. */
void cj_text_array(cj_buf *b, int type, int ndim, const int64_t *shape, const void *host);
/* b's text into buf as snprintf writes (at most size - 1 characters and a NUL when size is
 * above 0), its length into *length (when not NULL). */
cujit_status cj_text_out(const cj_buf *b, char *buf, size_t size, size_t *length);

/* ---- map.c: the engine of 1:1 elementwise operations ---- */

/* Marks a map kernel without an output (cj_map_kernel.out_type): expr is a statement. */
#define CJ_NO_OUTPUT (-1)

/* A kernel computing out[i] from element i of each input only: the inputs are read 16
 * bytes at a time where every array is 16-byte aligned (see map.c). Its parameters are
 * the inputs (cj_in0...), `scalars`, the output (cj_out, unless out_type is
 * CJ_NO_OUTPUT), the count (cj_n) and, for a strided loop, the plan (cj_lay). */
typedef struct cj_map_kernel {
  const char *name;
  const char *preamble; /* code before the kernel, or NULL */
  size_t n_in;          /* at most CUJIT_MAP_MAX_ARRAYS */
  const int *in_types;
  const char *const *in_names; /* the names `expr` reads element i of each input by */
  const char *scalars;         /* parameters after the inputs ("double s"), or NULL */
  int out_type;                /* or CJ_NO_OUTPUT */
  const char *expr;            /* element i of the output, already of out_type; may use i */
  int dims;                    /* the plan's: 0 for the contiguous loop, else the strided one */
  unsigned bcast;              /* the plan's: inputs of one element (contiguous loop only) */
  unsigned chunk;              /* the plan's (strided loop): 0 or 1 for an element at a time */
  unsigned zinner;             /* the plan's (strided loop with chunks): inputs read once a chunk */
} cj_map_kernel;

/* The unsigned type of `bytes` bytes (a power of two up to 16: "uint4" for 16). */
const char *cj_raw_type(size_t bytes);
/* Elements per 16-byte access for arrays of these element types: 16 over the largest
 * size (1: no chunked loop, an element takes 16 bytes). */
unsigned cj_map_width(const int *types, size_t n);
/* The width of k's chunked loop: cj_map_width of the arrays it reads or writes by chunks
 * (1 when there are none, or for a strided loop). */
unsigned cj_map_kernel_width(const cj_map_kernel *k);
/* Appends `T var[w];` (T: `type`'s C name) filled by one access of w elements at
 * reinterpret_cast<const RAW *>(base)[index], RAW the unsigned type of their size (the
 * address aligned to it), each line after `indent`. */
void cj_chunk_load(cj_buf *b, const char *indent, int type, unsigned w, const char *var,
                   const char *base, const char *index);
/* Appends the store of var's w elements of `type` by one access at
 * reinterpret_cast<RAW *>(base)[index]. */
void cj_chunk_store(cj_buf *b, const char *indent, int type, unsigned w, const char *var,
                    const char *base, const char *index);
/* Appends the kernel's source. */
void cj_map_source(cj_buf *b, const cj_map_kernel *k);
/* Appends the device code of strided access, once per source: cj_lay<D, A> (a loop's shape
 * and A arrays' strides) and cj_off(k, lay, j), the offset of element k (C order) of
 * array j. */
void cj_layout_source(cj_buf *b);
/* Compiles k (once per process and source text). */
cujit_status cj_map_prepare(const cj_map_kernel *k, cujit_function **fn);
/* The items a launch over n elements has: n / w chunks (and the rest) when the OR of the
 * arrays' addresses, `aligned`, is a multiple of 16 and w > 1, else n. */
int64_t cj_map_work(unsigned w, int64_t n, CUdeviceptr aligned);
/* What one launch of a map kernel takes. */
typedef struct cj_map_run {
  int64_t n; /* elements */
  CUstream stream;
  const CUdeviceptr *in; /* the inputs' addresses */
  size_t n_in;
  const cujit_arg *scalars; /* values as the kernel declares them */
  size_t n_scalars;
  CUdeviceptr out;     /* the output's address (none without an output) */
  int has_out;         /* 0 for a kernel of CJ_NO_OUTPUT */
  const cj_plan *plan; /* the plan k was written for; NULL: contiguous, nothing broadcast */
} cj_map_run;
/* Launches a compiled map kernel of width w (cj_map_kernel_width). */
cujit_status cj_map_run_kernel(cujit_function *fn, unsigned w, const cj_map_run *r);
/* The same for a contiguous loop with an output: the inputs' addresses, its scalars and
 * the output's address. */
cujit_status cj_map_launch(cujit_function *fn, unsigned w, int64_t n, CUstream stream,
                           const CUdeviceptr *in, size_t n_in, const cujit_arg *scalars,
                           size_t n_scalars, CUdeviceptr out);

/* ---- kernels.c: generated kernels ---- */

/* The kernel `name` from `source` (compiled once per process and source text, through the
 * caches). The function lives until the process ends. */
cujit_status cj_array_kernel(const char *source, const char *name, cujit_function **fn);
/* The multiprocessors of the current device (132 where it cannot be asked). */
int64_t cj_array_sms(void);
/* Launches a grid-stride kernel over n elements on `stream`. */
cujit_status cj_array_launch(cujit_function *fn, int64_t n, CUstream stream, const cujit_arg *args,
                             size_t nargs);
/* The same for a kernel cujit wrote, whose parameters `params` (kernelParams: nparams
 * pointers to values of the sizes the kernel declares) are known to match it: the
 * arguments are not checked again, the configuration is. `work` sets the grid: blocks of
 * 256 threads, one item each, at most 32 blocks per multiprocessor. */
cujit_status cj_array_launch_params(cujit_function *fn, int64_t work, CUstream stream,
                                    void **params, size_t nparams);
/* The same with the grid and block given: `blocks` blocks (at most 2^31 - 1) of `threads`
 * threads, which the kernel's __launch_bounds__ must allow. */
cujit_status cj_array_launch_blocks(cujit_function *fn, int64_t blocks, unsigned threads,
                                    CUstream stream, void **params, size_t nparams);
/* The source prologue a kernel on these element types needs (their headers). */
void cj_array_includes(cj_buf *b, const int *types, size_t n);

#endif

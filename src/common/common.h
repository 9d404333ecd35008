/* common.h - what every source file of the library uses: errors and the one way to fail,
 * logging, allocation, growable arrays and strings, whole-file reading, the environment.
 * Private; not installed. */
#ifndef CUJIT_COMMON_H
#define CUJIT_COMMON_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/nvtx.h"
#include "cujit.h"

#if defined(__GNUC__)
#  define CJ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#  define CJ_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define CJ_LIKELY(x) __builtin_expect(!!(x), 1)
#  define CJ_HIDDEN __attribute__((visibility("hidden")))
#  define CJ_NOINLINE __attribute__((noinline))
#  define CJ_ALWAYS_INLINE __attribute__((always_inline))
#else
#  define CJ_PRINTF(f, a)
#  define CJ_UNLIKELY(x) (x)
#  define CJ_LIKELY(x) (x)
#  define CJ_HIDDEN
#  define CJ_NOINLINE
#  define CJ_ALWAYS_INLINE
#endif

/* For a zero-initialised static buffer of a kilobyte or more. A fresh process pays a page
 * fault (microseconds on a virtual machine) for each page of static data it touches
 * first; among buffers of whole pages, every small variable (a lock, a flag) would sit on
 * a page of its own. GCC on x86-64 puts ".lbss" after ".bss", so the buffers go there
 * and the small variables share a few pages. Elsewhere it means nothing. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#  define CJ_LARGE __attribute__((section(".lbss")))
#else
#  define CJ_LARGE
#endif

#define CJ_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ---- */

/* Records `st` and a formatted detail for the calling thread, logs it at debug level,
 * and returns `st`, so that `return cj_fail(...)` reads naturally. */
cujit_status cj_fail(cujit_status st, const char *fmt, ...) CJ_PRINTF(2, 3);
/* As cj_fail, also recording the driver's or NVRTC's own result code. A failure whose
 * driver error is a kernel's fault (cj_fail_sticky), and every failure with a driver error
 * after one, says at its end that the CUDA context is lost and the process must end. */
cujit_status cj_fail_cu(cujit_status st, CUresult r, const char *fmt, ...) CJ_PRINTF(3, 4);
/* Whether r is a kernel's fault (CUDA_ERROR_ILLEGAL_ADDRESS and its kin), which leaves the
 * process's CUDA context unusable until the process ends, as cuda.h says of each. */
int cj_fail_sticky(CUresult r);
cujit_status cj_fail_nvrtc(cujit_status st, int r, const char *fmt, ...) CJ_PRINTF(3, 4);
/* Out of host memory while doing `what`. */
cujit_status cj_fail_oom(const char *what);

/* The one way to fail, in a function that returns cujit_status (zstd's RETURN_ERROR_IF and
 * FORWARD_IF_ERROR, libCEED's CeedCheck and CeedCall):
 *
 *   CJ_CHECK(cond, status, fmt, ...)
 *     states what must hold, as assert() does: when `cond` is false, records `status` and
 *     the formatted detail for the calling thread (cj_fail) and returns `status`.
 *       CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_mem_alloc: out is NULL");
 *       CJ_CHECK(n <= max, CUJIT_ERROR_INVALID_VALUE, "%zu is more than %zu", n, max);
 *   CJ_TRY(expr)
 *     evaluates `expr`, a cujit_status, and returns it when it is not CUJIT_OK; the detail
 *     is the one the failing callee recorded.
 *       CJ_TRY(cj_ctx_ensure(&ctx, &dev));
 *
 * Both are single statements (safe in an unbraced if), evaluate `cond` and `expr` exactly
 * once, and mark the failure branch unlikely; the detail's arguments are evaluated only on
 * failure. They return at once: where something must be released before returning, keep
 * a status variable and one goto-cleanup path instead. The format is checked like
 * printf's, and at least the format must be given. */
#define CJ_CHECK(cond, status, ...)                                  \
  do {                                                               \
    if (CJ_UNLIKELY(!(cond))) return cj_fail((status), __VA_ARGS__); \
  } while (0)

#define CJ_TRY(expr)                                                    \
  do {                                                                  \
    cujit_status cj_try_status_ = (expr);                               \
    if (CJ_UNLIKELY(cj_try_status_ != CUJIT_OK)) return cj_try_status_; \
  } while (0)

/* ---- locks across fork() (forklock.c) ---- */

/* Lists a lock that a forked child may take, so that fork() takes it first (forklock.c's
 * first comment says how): one held only briefly, never across a compile, a link or a
 * wait for another process. 0, or -1 when out of memory (the lock is then not listed).
 * cj_fork_unguard() takes a lock off the list before it is destroyed. */
int cj_fork_guard(pthread_mutex_t *m);
void cj_fork_unguard(pthread_mutex_t *m);
/* Registers what fork() does for a layer: `prepare` before the listed locks are taken
 * (a wait for the calls in flight to end), `parent` and `child` after they are given back
 * (the child forgets the parent's threads). NULL for none. Registered once; 0, or -1 when
 * out of memory. */
int cj_fork_hooks(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* Lists a static lock as the library loads: CJ_FORK_GUARDED(guard_name, lock_variable). */
#define CJ_FORK_GUARDED(fn, lock) \
  __attribute__((constructor)) static void fn(void) { cj_fork_guard(&(lock)); }

/* ---- the end of the process (ending.c) ---- */

/* Registers `fn`, something cujit must do for itself when the process ends (remove its
 * directory of precompiled headers): with atexit(), and for the error mode's end, which
 * runs no atexit function. It must be safe while other threads run, and take no lock
 * that may be held long. 0, or -1 when the table is full (a duty more than it holds). */
int cj_at_end(void (*fn)(void));
/* The error mode's end, in three calls (ending.c's first comment says what each does):
 * cj_end_begin(code) returns only on the thread that claims the end (another thread of the
 * process that calls it waits until the process is gone), which will end with exit status
 * `code`; cj_end_say() writes the strings one after the other to descriptor 2, escaped as
 * CJ_ESCAPE_TEXT; cj_end_finish() does cujit's duties, flushes stdio and ends the process
 * with that status. */
void cj_end_begin(int code);
void cj_end_say(const char *const *parts, size_t n);
_Noreturn void cj_end_finish(void);

/* ---- scalar types (scalar.c) ----
 *
 * The one table of the scalar types, indexed by cujit_type tag (every tag of cujit.h's
 * enum has an entry). Sizes and alignments are also compile-time constants,
 * CJ_SCALAR_SIZE_F32 and CJ_SCALAR_ALIGN_F32, for static tables of the layers above. */

typedef enum cj_scalar_kind {
  CJ_SK_BYTES, /* CUJIT_TYPE_BYTES: anything given by its bytes */
  CJ_SK_BOOL,
  CJ_SK_SIGNED,
  CJ_SK_UNSIGNED,
  CJ_SK_FLOAT, /* f16, bf16, f32, f64 */
  CJ_SK_COMPLEX,
  CJ_SK_POINTER
} cj_scalar_kind;

/* X(tag, size, alignment) for each cujit_type. */
/* clang-format off */
#define CJ_SCALAR_LAYOUTS(X)                                                                       \
  X(BYTES, 0, 1) X(BOOL, 1, 1) X(I8, 1, 1) X(U8, 1, 1) X(I16, 2, 2) X(U16, 2, 2) X(I32, 4, 4)      \
  X(U32, 4, 4) X(I64, 8, 8) X(U64, 8, 8) X(F16, 2, 2) X(BF16, 2, 2) X(F32, 4, 4) X(F64, 8, 8)      \
  X(C64, 8, 8) X(C128, 16, 16) X(PTR, 8, 8)
/* clang-format on */
#define CJ_SCALAR_SIZE_(t, s, a) CJ_SCALAR_SIZE_##t = s, CJ_SCALAR_ALIGN_##t = a,
enum { CJ_SCALAR_LAYOUTS(CJ_SCALAR_SIZE_) };
#undef CJ_SCALAR_SIZE_

typedef struct cj_scalar {
  const char *name;   /* the short name of type strings, messages and kernel names: "f32" */
  const char *c_name; /* as CUDA C spells it: "float"; NULL for bytes and pointers */
  const char *header; /* what CUDA C must include for it, or NULL */
  const char *words;  /* in a message, an argument of it: "a float (f32)" */
  const char *ctor;   /* what makes an argument of it: "cujit_f32()" */
  size_t size;        /* bytes (0 for CUJIT_TYPE_BYTES) */
  uint8_t align;
  uint8_t kind;        /* cj_scalar_kind */
  const char *also[6]; /* other spellings of it in CUDA C ("unsigned", "uint32_t"), NULL-ended */
} cj_scalar;

/* The entry of cujit_type `type` (for a plain value's tag, CUJIT_TYPE_PLAIN_ added, its
 * type's), or NULL when it is no cujit_type. */
const cj_scalar *cj_scalar_of(int type);
/* The kind of number a type is, each 0 for a tag that is no cujit_type: an integer (bool
 * included), a floating type (f16, bf16, f32, f64), one of the 16-bit floats (which kernels
 * compute in float), a complex type (c64, c128). */
int cj_scalar_is_int(int type);
int cj_scalar_is_float(int type);
int cj_scalar_is_half(int type);
int cj_scalar_is_complex(int type);
/* The cujit_type CUDA C's `text` (single spaces between words: "unsigned long") spells, or
 * -1 when it is none of the table's spellings. */
int cj_scalar_by_spelling(const char *text);
/* Rounds a double to IEEE binary16 / bfloat16 bits (to nearest, ties to even; a finite
 * value beyond the format's range becomes an infinity). */
uint16_t cj_f16_bits(double d);
uint16_t cj_bf16_bits(double d);

/* ---- time and random bits (clock.c) ---- */

/* Seconds on the monotonic clock (for timeouts and waits, not dates). */
double cj_now_s(void);
/* Sleeps `seconds`, resuming after signals. */
void cj_nap(double seconds);

/* 64 random bits (for unique names). */
uint64_t cj_random64(void);

/* ---- reading little-endian bytes (cursor.c) ---- */

/* A bounded reader over bytes from outside (cache entries, export blobs): every read past
 * the end sets `bad` and yields 0 or NULL, so that a caller checks once at the end. */
typedef struct cj_cursor {
  const unsigned char *p;
  size_t left;
  int bad;
} cj_cursor;

/* The next `bytes` (1 to 8) bytes as a little-endian number. */
uint64_t cj_cursor_get(cj_cursor *c, int bytes);
/* The next n bytes (the cursor moves past them), or NULL when fewer are left. */
const unsigned char *cj_cursor_take(cj_cursor *c, uint64_t n);

/* ---- hashing (hash.c) ---- */

/* A 128-bit hash that names something by its contents (a cache entry, a request). */
typedef struct cj_key {
  unsigned char b[16]; /* XXH3-128, big-endian canonical form */
} cj_key;

/* 32 lowercase hex digits and a NUL. */
void cj_hash128_hex(const cj_key *k, char out[33]);
/* XXH3-128 of bytes, in canonical form. */
void cj_hash128(const void *p, size_t n, unsigned char out[16]);
/* XXH3-64 of head followed by body (the checksum of an entry, a blob, a bundle). */
uint64_t cj_checksum(const void *head, size_t head_len, const void *body, size_t body_len);

/* ---- logging (log.c) ---- */

int cj_log_enabled(cujit_log_level level);
void cj_log(cujit_log_level level, const char *fmt, ...) CJ_PRINTF(2, 3);
/* For a tuning variable with a bad value, where the caller parses the value itself
 * (cj_env_u64 and its siblings below warn the same way on their own): warns, the first
 * time *warned is 0, that `name`'s value is not `form` (e.g. "a size (e.g. 256M)") and
 * that `fallback` (e.g. "the default 1G") is used. */
void cj_env_ignored(int *warned, const char *name, const char *value, const char *form,
                    const char *fallback);
/* The same for a variable set to make failures visible (CUJIT_ERRORS): the warning is given
 * whatever the log's level, to the log callback when one is set, else on stderr. */
void cj_env_refused(int *warned, const char *name, const char *value, const char *form,
                    const char *fallback);
#define cj_warn(...) \
  (cj_log_enabled(CUJIT_LOG_WARN) ? cj_log(CUJIT_LOG_WARN, __VA_ARGS__) : (void)0)
#define cj_info(...) \
  (cj_log_enabled(CUJIT_LOG_INFO) ? cj_log(CUJIT_LOG_INFO, __VA_ARGS__) : (void)0)
#define cj_debug(...) \
  (cj_log_enabled(CUJIT_LOG_DEBUG) ? cj_log(CUJIT_LOG_DEBUG, __VA_ARGS__) : (void)0)

/* ---- allocation (alloc.c): every allocation of the library goes through these, so
 * that tests can make the n-th one fail (built with CUJIT_FAULT_INJECTION). ---- */

#ifdef CUJIT_FAULT_INJECTION
/* Test hooks, exported only by fault-injection builds: the n-th allocation from now fails
 * (0 turns it off); the countdown reads 0 once that allocation has failed. */
CUJIT_API void cujit_test_fail_alloc_after(long n);
CUJIT_API long cujit_test_alloc_countdown(void);
#endif

void *cj_malloc(size_t n);
void *cj_calloc(size_t count, size_t size);
void *cj_realloc(void *p, size_t n);
char *cj_strdup(const char *s);
char *cj_memdup(const void *p, size_t n); /* copies n bytes and adds a NUL */
void cj_free(void *p);
/* Duplicates a NULL-terminated string list; NULL in, NULL out (ok). Returns -1 on OOM. */
int cj_strv_dup(const char *const *in, char ***out, size_t *count);
void cj_strv_free(char **v, size_t count);

/* ---- public structs that grow (sized.c) ---- */

/* The largest size field taken for a version of a public struct; larger is garbage. */
#define CJ_SIZE_MAX 4096
/* The size of a public struct's first version, whose last field was `last`: what a size
 * field of 0 stands for. Written with the field's name, so that it stays the first
 * version's size when fields are added (its end rounded up to the alignment, as sizeof). */
#define CJ_SIZE_V1(type, last)                                                                \
  ((offsetof(type, last) + sizeof(((type *)0)->last) + _Alignof(type) - 1) / _Alignof(type) * \
   _Alignof(type))
/* Nonzero when a caller's struct whose size field is `size` has exactly this library's
 * layout (`own` bytes), so that it may be read where it is: one test, for hot paths. */
#define CJ_SIZED_CURRENT(size, v1, own) (((size) ? (size) : (v1)) == (own))

/* Reads the caller's struct `user` (NULL: all defaults) into `own`, the struct as this
 * library knows it (`own_size` bytes): fields past the caller's size are zero, which
 * means their default, and own's size field is own_size. `fn` and `type` name the
 * function and the struct in messages. CUJIT_ERROR_INVALID_VALUE for a size that is
 * neither 0 nor that of a version (saying to use the *_INIT macro);
 * CUJIT_ERROR_NOT_SUPPORTED when a newer caller sets fields this library does not know. */
cujit_status cj_sized_in(const char *fn, const char *type, const void *user, size_t v1, void *own,
                         size_t own_size);
/* Copies the library's filled struct `own` into the caller's `user` (not NULL) up to the
 * size the caller gave (0: v1), never past it nor past own_size; the caller's size field
 * and any fields this library does not know are left as they are. Fails as cj_sized_in
 * for a bad size, writing nothing. */
cujit_status cj_sized_out(const char *fn, const char *type, void *user, size_t v1, const void *own,
                          size_t own_size);

/* ---- growable arrays (alloc.c) ----
 *
 * An array is a pointer to its first element and a capacity (in elements), both zero to
 * start with; its length is the caller's. Before appending:
 *
 *   if (CJ_VEC_RESERVE(d->v, d->cap, d->n + 1) != 0) return cj_fail_oom("...");
 *   d->v[d->n++] = x;
 *
 * CJ_VEC_RESERVE(arr, cap, need) makes room for at least `need` elements of *arr: it
 * returns 0 (arr and cap updated; the capacity at least doubles when it grows, so that
 * appending n elements costs O(n)), or -1 when out of memory or when the size overflows,
 * leaving arr and cap as they were. `arr` is an lvalue of pointer type, `cap` a size_t
 * lvalue; the element size comes from arr's type. When there is room it is one compare,
 * with no call: `need` and `cap` may be evaluated twice, so give them no side effects. */
#define CJ_VEC_RESERVE(arr, cap, need) \
  ((size_t)(need) <= (cap) ? 0 : cj_vec_reserve(&(arr), &(cap), (need), sizeof *(arr)))
/* What CJ_VEC_RESERVE calls: `arrp` is the address of the array's pointer (a T **). */
int cj_vec_reserve(void *arrp, size_t *cap, size_t need, size_t elem);

/* ---- public handles that never alias (handle.c) ----
 *
 * What the interface hands out for an object that a caller destroys (an array, a module)
 * is not the object's address but a handle: a slot of the kind's table and the slot's
 * generation, so that a handle kept after its object was destroyed is refused (the slot's
 * generation has changed) even when the slot now holds another object, and a handle
 * destroyed twice frees nothing the second time. A handle is a uintptr_t:
 *
 *   bits 56-63 the kind's tag (bit 63 set: never an address a program can dereference on
 *              x86-64 or AArch64, so a handle mistaken for a pointer faults at once)
 *   bits 24-55 the slot's generation, changed each time the slot's object is removed
 *   bits  0-23 the slot
 *
 * A slot whose 32-bit generation has run out is retired, never used again: no handle is
 * ever given twice. The table holds at most 2^24 objects at once. It is not thread-safe:
 * its owner calls it under a lock of its own. Cheap: a lookup is a compare of the tag, a
 * bounds check and a compare of the generation. */

#if UINTPTR_MAX < 0xFFFFFFFFFFFFFFFFu
#  error "cujit's handles need 64-bit pointers (CUDA supports only 64-bit hosts)"
#endif

#define CJ_HANDLE_SLOT_BITS 24
#define CJ_HANDLE_TAG(byte) ((uintptr_t)(0x80u | (byte)) << 56)
#define CJ_HANDLE_TAG_MASK ((uintptr_t)0xFF << 56)

typedef struct cj_handle_slot {
  void *obj;     /* NULL while free */
  uint32_t gen;  /* bumped when the object is removed */
  uint32_t next; /* while free: 1 + the next free slot, 0 for none */
} cj_handle_slot;

typedef struct cj_handles {
  uintptr_t tag; /* CJ_HANDLE_TAG(...) of the kind */
  cj_handle_slot *slots;
  size_t n, cap;     /* slots used so far, and allocated */
  uint32_t free_top; /* 1 + the slot freed last (reused first), 0 for none */
} cj_handles;

#define CJ_HANDLES_INIT(tag) \
  { (tag), NULL, 0, 0, 0 }

/* Puts `obj` (not NULL) in the table and returns its handle; 0 when out of memory or
 * when 2^24 objects are in it already. */
uintptr_t cj_handle_add(cj_handles *t, void *obj);
/* Whether the table holds as many objects as it can (cj_handle_add then fails). */
static inline int cj_handles_full(const cj_handles *t) {
  return t->n == (size_t)1 << CJ_HANDLE_SLOT_BITS && !t->free_top;
}
/* Takes the object of handle `h` out of the table and returns it; NULL (nothing changed)
 * when h is not a live handle of this table. */
void *cj_handle_remove(cj_handles *t, uintptr_t h);
/* The object of handle `h`, or NULL when h is not a live handle of this table (NULL, a
 * destroyed object's, another kind's, or never made). */
static inline void *cj_handle_get(const cj_handles *t, uintptr_t h) {
  uintptr_t slot = h & (((uintptr_t)1 << CJ_HANDLE_SLOT_BITS) - 1);
  if ((h & CJ_HANDLE_TAG_MASK) != t->tag || slot >= t->n) return NULL;
  return t->slots[slot].gen == (uint32_t)(h >> CJ_HANDLE_SLOT_BITS) ? t->slots[slot].obj : NULL;
}

/* ---- text from outside, made safe for a terminal (escape.c) ---- */

/* How cj_escape() writes text. In both, control characters (C0, DEL, C1) and bytes that
 * are not valid UTF-8 become \xNN (ESC as \x1b), so that a terminal acts on none of them;
 * valid UTF-8 passes as it is.
 *   CJ_ESCAPE_VALUE: one value quoted in a line (a name, an environment variable): the
 *     newline, the tab and the carriage return are escaped too, and the backslash is
 *     written \\, so that the value reads back unambiguously.
 *   CJ_ESCAPE_TEXT: a message of several lines (an error's detail, NVRTC's log): the
 *     newline, the tab and a carriage return just before a newline pass, as does the
 *     backslash (a source line keeps its "\n"). */
enum { CJ_ESCAPE_VALUE = 0, CJ_ESCAPE_TEXT = 1 };
typedef void (*cj_escape_fn)(void *user, const char *p, size_t n);
/* Hands the n bytes at p, escaped, to put() in pieces, in order. Allocates nothing. */
void cj_escape(const void *p, size_t n, int mode, cj_escape_fn put, void *user);

/* ---- string buffer (buf.c) ---- */

typedef struct cj_buf {
  char *data; /* NUL-terminated when non-NULL */
  size_t len;
  size_t cap;
  int oom; /* set once an append failed; later appends do nothing */
} cj_buf;

void cj_buf_append(cj_buf *b, const void *p, size_t n);
void cj_buf_puts(cj_buf *b, const char *s);
/* Appends v as `bytes` (1 to 8) little-endian bytes, as cj_cursor_get() reads them. */
void cj_buf_put_le(cj_buf *b, uint64_t v, int bytes);
void cj_buf_printf(cj_buf *b, const char *fmt, ...) CJ_PRINTF(2, 3);
void cj_buf_vprintf(cj_buf *b, const char *fmt, va_list ap);
/* Appends n bytes of a value from outside as cj_escape() writes it in CJ_ESCAPE_VALUE. */
void cj_buf_escaped(cj_buf *b, const void *p, size_t n);
/* The first 64 bytes of a value from outside (an environment variable's), escaped as
 * cj_buf_escaped() does, for a message that quotes it: written to `out` (CJ_SHOWN_SIZE
 * bytes, always NUL-terminated), which is returned. */
#define CJ_SHOWN_SIZE 260
const char *cj_shown(char out[CJ_SHOWN_SIZE], const char *value);
/* Hands the string to the caller (never NULL unless out of memory) and resets b. */
char *cj_buf_take(cj_buf *b);
void cj_buf_free(cj_buf *b);
/* Writes the strings given (a NULL ends them) one after the other into out, which holds
 * size bytes (size > 0), and a NUL. Returns their total length: size or more when they did
 * not fit, and out then holds as much as fit. For names and paths built on a cache hit,
 * where snprintf's code would be pages a fresh process must first fault in. */
size_t cj_join(char *out, size_t size, ...);

/* ---- whole files (file.c) ----
 *
 * Every file the library reads whole goes through cj_file_read: opened without waiting
 * (a FIFO is refused, never waited on), checked on its descriptor to be a regular file no
 * larger than `max`, read, and given a NUL after its contents. A failure says which step
 * failed and with what, and each caller turns that into its own message. */

typedef enum cj_file_rc {
  CJ_FILE_OK = 0,
  CJ_FILE_CANNOT_OPEN, /* open failed: f->err (ELOOP: a symbolic link, with CJ_FILE_NOFOLLOW) */
  CJ_FILE_NOT_REGULAR, /* a directory, FIFO, device or socket: f->st.st_mode says which */
  CJ_FILE_TOO_LARGE,   /* more than `max` bytes: f->st.st_size says how many */
  CJ_FILE_CANNOT_READ, /* fstat or read failed: f->err */
  CJ_FILE_NO_MEMORY
} cj_file_rc;

typedef struct cj_file {
  char *data;     /* the contents and a NUL; cj_malloc'd, the caller frees it with cj_free.
                     NULL unless CJ_FILE_OK */
  size_t len;     /* bytes read: st.st_size, or fewer when the file shrank meanwhile */
  int grew;       /* 1 when the file held more than st.st_size by the time it was read
                     (it changed meanwhile); data holds the first st.st_size bytes */
  struct stat st; /* the descriptor's fstat, from CJ_FILE_NOT_REGULAR on (and with
                     CJ_FILE_STAT_FIRST, the path's stat when that refused it) */
  int err;        /* errno of the step that failed */
} cj_file;

/* Flags of cj_file_open and cj_file_read. */
#define CJ_FILE_NOFOLLOW 1 /* a symbolic link as the last component is refused (ELOOP) */
#define CJ_FILE_STAT_FIRST                                          \
  2 /* the path is looked at before it is opened, so that a special \
       file is refused without being opened (opening a device can   \
       have effects of its own) */

/* Opens `path` for reading: relative to the directory `dir` (AT_FDCWD: the working
 * directory), without blocking (O_NONBLOCK), close-on-exec, never as a controlling
 * terminal. Returns the descriptor, or -1 with errno set. */
int cj_file_open(int dir, const char *path, int flags);
/* Reads the whole regular file behind `fd` (left open), at most `max` bytes, into *f. */
cj_file_rc cj_file_read_fd(int fd, size_t max, cj_file *f);
/* cj_file_open, cj_file_read_fd and close in one. With CJ_FILE_STAT_FIRST, a path whose
 * stat says it is not a regular file is CJ_FILE_NOT_REGULAR (f->st from that stat). */
cj_file_rc cj_file_read(int dir, const char *path, int flags, size_t max, cj_file *f);
/* What a file of this mode is, for messages: "a regular file", "a directory", "a FIFO
 * (named pipe)", "a character device", ... */
const char *cj_file_kind(mode_t mode);

/* ---- trust (file.c) ----
 *
 * What cujit uses from the file system (the cache's directories and entries, the private
 * directory of precompiled headers) must be out of other users' reach. */

/* 1 when a file or directory cujit found may be trusted: owned by this user or root, and
 * not writable by group or others. */
int cj_trusted(const struct stat *st);
/* Why cj_trusted() refused st, for a message: "it belongs to another user", "others may
 * write to it" or "its group may write to it". */
const char *cj_distrust(const struct stat *st);

/* ---- parsing numbers and names (parse.c) ---- */

/* Parses a byte size with optional K/M/G/T suffix (powers of 1024). Returns 0 on success. */
int cj_parse_size(const char *s, uint64_t *out);
/* Parses a count: decimal digits only (no sign, no space), at most max. 0 on success. */
int cj_parse_count(const char *s, uint64_t max, uint64_t *out);
/* 1 when s is a C identifier (ASCII letters, digits and '_', not starting with a digit). */
int cj_is_identifier(const char *s);

/* ---- the environment (env.c, envvalue.c) ----
 *
 * Every environment variable the library reads is in one table (env.c), with its kind,
 * default and meaning; docs/manual/environment.md's table is checked against it by a test.
 * Variables are read only through the functions below, which take the variable's name and
 * find it in the table (a name missing from the table is a bug: it reads as unset). An
 * empty value counts as unset. Each call reads the environment again: a variable read
 * once per process is read once by its caller, which keeps what it found.
 *
 * A value the kind does not accept is "bad". For a tuning variable (warn_bad set) the
 * functions warn about it, once per value, naming the variable, the value, what it should
 * be and the default used instead; for the others the caller reports it (a variable that
 * chooses what runs makes the call that reads it fail). */

typedef enum cj_env_kind {
  CJ_ENV_TEXT,   /* any text, checked by its user (an architecture) */
  CJ_ENV_PATH,   /* a file or directory */
  CJ_ENV_FLAG,   /* on (1, on, yes, true) or off (0, off, no, false), any case */
  CJ_ENV_LEVEL,  /* a log level: off, error, warn (or warning), info, debug, any case */
  CJ_ENV_SIZE,   /* bytes, with an optional K, M, G or T suffix (cj_parse_size) */
  CJ_ENV_COUNT,  /* decimal digits only (cj_parse_count) */
  CJ_ENV_SECONDS /* a decimal number of seconds */
} cj_env_kind;

/* What a size is, for warnings (the size variables' `form`). */
#define CJ_ENV_SIZE_FORM "a size (bytes, or a number with K, M or G)"

/* What cj_env_* found. */
#define CJ_ENV_SET 1    /* a good value */
#define CJ_ENV_UNSET 0  /* unset or empty: the default */
#define CJ_ENV_BAD (-1) /* a bad value: the default (warned when warn_bad) */

typedef struct cj_env_var {
  const char *name;
  cj_env_kind kind;
  const char *dflt;    /* the default as documented ("1G", "60", "on"), or how it is chosen */
  const char *meaning; /* one line, as the manual's table shows it */
  const char *form;    /* for a warning, what a good value is; NULL: the kind's own words */
  uint64_t min, max;   /* the range of a size or count (max 0: no limit) */
  double max_seconds;  /* a number of seconds must be at least 0 and below this */
  const char *range;   /* for a warning, why a value out of range is bad; NULL: `form` */
  int warn_bad;        /* 1: a tuning variable, bad values are warned and the default used */
} cj_env_var;

/* The table, in the manual's order; *n gets its length. */
const cj_env_var *cj_env_table(size_t *n);
/* Registers what the library does at its start: the first time it reads its environment
 * (its first call that sets anything up), before that read, once, on the thread that
 * makes it. fn may read the environment; other threads' reads meanwhile do not wait for
 * it. One function (error.c's check of CUJIT_ERRORS), registered as the library loads. */
void cj_env_at_start(void (*fn)(void));
/* Runs the library's start now, unless it has run: for a caller that must not have it run
 * inside a lock or a pthread_once of its own (the log's, when the start's warning may go to
 * the program's log callback, which may call cujit). */
void cj_env_start(void);
/* The table's entry for `name`, or NULL. */
const cj_env_var *cj_env_find(const char *name);
/* The value of `name` as it is (any kind), or NULL when unset or empty. */
const char *cj_env(const char *name);
/* The same for a table entry (NULL reads as unset). */
const char *cj_env_value(const cj_env_var *v);
/* 1 when `value` is not the bad value last recorded for v (then recorded): a bad value is
 * warned about once for each value in a row. */
int cj_env_bad_is_new(const cj_env_var *v, const char *value);
/* Bad values are not warned about from now on in this process: a compile worker's, whose
 * library read the same environment and warned (worker/worker.c). */
void cj_env_warnings_off(void);
int cj_env_warnings_are_off(void);
/* The typed values (envvalue.c), each warning about a bad value of a tuning variable. */
/* A size or count: *out gets the value, or the table's default (0 when the default is not
 * a number; the caller then chooses). */
int cj_env_u64(const char *name, uint64_t *out);
/* A number of seconds, as cj_env_u64. */
int cj_env_seconds(const char *name, double *out);
/* A flag: *on gets 1 or 0, or the default. */
int cj_env_flag(const char *name, int *on);
/* A log level (env.c): *level gets a cujit_log_level, or CUJIT_LOG_OFF. Never warns (the
 * log is what it configures); the caller reports a bad value. */
int cj_env_level(const char *name, int *level);
/* Reads every tuning variable that is set, warning about each bad value (envvalue.c); at
 * the library's start (error.c). */
void cj_env_check_all(void);

/* ---- ranges for a profiler (trace.c, over nvtx.c) ----
 *
 * NVTX ranges in the domain "cujit", which Nsight Systems (or any NVTX tool) shows beside
 * the driver's calls: what compiled, which cache tier answered, which copies belong to which
 * launch. The layers mark their work with one line, and never include NVTX themselves:
 *
 *   CJ_TRACE("cujit: compile %s", r->name);    a range named by a format
 *   CJ_TRACE_NAMED(&name);                     a range of a fixed name, registered once
 *
 * Either opens a range that closes where the enclosing block ends, every return included
 * (a variable with a cleanup), so put it where the work starts, after any goto that could
 * jump past it. Ranges nest per thread. Where no tool is attached, or CUJIT_NVTX=0, the
 * first range of the process finds that out, and from then on each site costs one load of
 * cj_trace_live and a branch: the format is never evaluated. A build configured with
 * CUJIT_NVTX=OFF (CJ_NO_NVTX) has no ranges at all. */

/* A fixed name: registered with the tool at its first use (static storage, shared by every
 * thread; `registered` is nvtx.c's). */
typedef struct cj_trace_name {
  const char *text;
  void *registered;
} cj_trace_name;
#define CJ_TRACE_NAME(text) \
  { (text), NULL }

/* 0 once the process is known to emit no ranges; else the first range decides, or a tool
 * is attached. Read only through the macros below. */
extern int cj_trace_live;
/* Open a range (1), or do nothing when ranges are off (0). */
int cj_trace_begin(const char *fmt, ...) CJ_PRINTF(1, 2);
int cj_trace_begin_named(cj_trace_name *name);
/* The cleanup of the macros' variable: closes its range when one was opened. It calls
 * NVTX's file alone (nvtx.c, which stands on nothing of the library): this header's own
 * code leads to no file that includes it. */
static inline void cj_trace_end(int *begun) {
  if (CJ_UNLIKELY(*begun)) cj_nvtx_pop();
}

#if defined(CJ_NO_NVTX) || !defined(__GNUC__)
/* no ranges: the arguments are still checked, never evaluated */
#  define CJ_TRACE(...)                         \
    do {                                        \
      if (0) (void)cj_trace_begin(__VA_ARGS__); \
    } while (0)
#  define CJ_TRACE_NAMED(name)                 \
    do {                                       \
      if (0) (void)cj_trace_begin_named(name); \
    } while (0)
#else
#  define CJ_TRACE_ON() CJ_UNLIKELY(__atomic_load_n(&cj_trace_live, __ATOMIC_RELAXED))
#  define CJ_TRACE_VAR_(line) cj_trace_at_##line
#  define CJ_TRACE_AT_(line, begin)                                          \
    int CJ_TRACE_VAR_(line) __attribute__((cleanup(cj_trace_end), unused)) = \
        CJ_TRACE_ON() ? (begin) : 0
#  define CJ_TRACE(...) CJ_TRACE_AT_(__LINE__, cj_trace_begin(__VA_ARGS__))
#  define CJ_TRACE_NAMED(name) CJ_TRACE_AT_(__LINE__, cj_trace_begin_named(name))
#endif

#endif

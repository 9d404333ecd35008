/* common.h - what every source file of the library uses: errors, logging, allocation,
 * a growable string buffer. Private; not installed. */
#ifndef CUJIT_COMMON_H
#define CUJIT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

#define CJ_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ---- */

/* Records `st` and a formatted detail for the calling thread, logs it at debug level,
 * and returns `st`, so that `return cj_fail(...)` reads naturally. */
cujit_status cj_fail(cujit_status st, const char *fmt, ...) CJ_PRINTF(2, 3);
/* As cj_fail, also recording the driver's or NVRTC's own result code. */
cujit_status cj_fail_cu(cujit_status st, CUresult r, const char *fmt, ...) CJ_PRINTF(3, 4);
cujit_status cj_fail_nvrtc(cujit_status st, int r, const char *fmt, ...) CJ_PRINTF(3, 4);
/* Out of host memory while doing `what`. */
cujit_status cj_fail_oom(const char *what);

/* ---- logging (log.c) ---- */

int cj_log_enabled(cujit_log_level level);
void cj_log(cujit_log_level level, const char *fmt, ...) CJ_PRINTF(2, 3);
/* For a tuning variable with a bad value: warns, the first time *warned is 0, that `name`'s
 * value is not `form` (e.g. "a size (e.g. 256M)") and that `fallback` (e.g. "the default
 * 1G") is used. */
void cj_env_ignored(int *warned, const char *name, const char *value, const char *form,
                    const char *fallback);
#define cj_warn(...) (cj_log_enabled(CUJIT_LOG_WARN) ? cj_log(CUJIT_LOG_WARN, __VA_ARGS__) : (void)0)
#define cj_info(...) (cj_log_enabled(CUJIT_LOG_INFO) ? cj_log(CUJIT_LOG_INFO, __VA_ARGS__) : (void)0)
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
#define CJ_SIZE_V1(type, last)                                                     \
  ((offsetof(type, last) + sizeof(((type *)0)->last) + _Alignof(type) - 1) /        \
   _Alignof(type) * _Alignof(type))
/* Nonzero when a caller's struct whose size field is `size` has exactly this library's
 * layout (`own` bytes), so that it may be read where it is: one test, for hot paths. */
#define CJ_SIZED_CURRENT(size, v1, own) (((size) ? (size) : (v1)) == (own))

/* Reads the caller's struct `user` (NULL: all defaults) into `own`, the struct as this
 * library knows it (`own_size` bytes): fields past the caller's size are zero, which
 * means their default, and own's size field is own_size. `fn` and `type` name the
 * function and the struct in messages. CUJIT_ERROR_INVALID_VALUE for a size that is
 * neither 0 nor that of a version (saying to use the *_INIT macro);
 * CUJIT_ERROR_NOT_SUPPORTED when a newer caller sets fields this library does not know. */
cujit_status cj_sized_in(const char *fn, const char *type, const void *user, size_t v1,
                         void *own, size_t own_size);
/* Copies the library's filled struct `own` into the caller's `user` (not NULL) up to the
 * size the caller gave (0: v1), never past it nor past own_size; the caller's size field
 * and any fields this library does not know are left as they are. Fails as cj_sized_in
 * for a bad size, writing nothing. */
cujit_status cj_sized_out(const char *fn, const char *type, void *user, size_t v1,
                          const void *own, size_t own_size);

/* ---- string buffer (buf.c) ---- */

typedef struct cj_buf {
  char *data;  /* NUL-terminated when non-NULL */
  size_t len;
  size_t cap;
  int oom;     /* set once an append failed; later appends do nothing */
} cj_buf;

void cj_buf_append(cj_buf *b, const void *p, size_t n);
void cj_buf_puts(cj_buf *b, const char *s);
void cj_buf_printf(cj_buf *b, const char *fmt, ...) CJ_PRINTF(2, 3);
void cj_buf_vprintf(cj_buf *b, const char *fmt, va_list ap);
/* Hands the string to the caller (never NULL unless out of memory) and resets b. */
char *cj_buf_take(cj_buf *b);
void cj_buf_free(cj_buf *b);

/* ---- environment (env.c) ---- */

/* getenv that treats an empty value as unset. */
const char *cj_getenv(const char *name);
/* Parses a byte size with optional K/M/G/T suffix (powers of 1024). Returns 0 on success. */
int cj_parse_size(const char *s, uint64_t *out);
/* Parses a count: decimal digits only (no sign, no space), at most max. 0 on success. */
int cj_parse_count(const char *s, uint64_t max, uint64_t *out);

#endif

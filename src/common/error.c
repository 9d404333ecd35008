/* error.c - the status table, the thread's error detail and the error mode (the handler a
 * failing call of the program calls). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"

typedef struct cj_tls {
  char *detail;
  size_t cap;
  cujit_status status;
  CUresult cu;
  int nvrtc;
} cj_tls;

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_ok;

static void tls_destroy(void *p) {
  cj_tls *t = p;
  if (!t) return;
  free(t->detail);
  free(t);
}

static void tls_init(void) { tls_ok = pthread_key_create(&tls_key, tls_destroy) == 0; }

/* The thread's record, created on first use; NULL only when out of memory. Uses plain
 * malloc on purpose: error reporting must keep working while allocations are failing. */
static cj_tls *tls_get(void) {
  cj_tls *t;
  pthread_once(&tls_once, tls_init);
  if (!tls_ok) return NULL;
  t = pthread_getspecific(tls_key);
  if (t) return t;
  t = calloc(1, sizeof *t);
  if (t && pthread_setspecific(tls_key, t) != 0) {
    free(t);
    t = NULL;
  }
  return t;
}

const char *cujit_status_name(cujit_status status) {
  switch (status) {
#define CJ_NAME_(name, num, msg) \
  case CUJIT_##name: return "CUJIT_" #name;
    CUJIT_STATUS_MAP(CJ_NAME_)
#undef CJ_NAME_
  }
  return "CUJIT_UNKNOWN_STATUS";
}

const char *cujit_status_string(cujit_status status) {
  switch (status) {
#define CJ_MSG_(name, num, msg) \
  case CUJIT_##name: return msg;
    CUJIT_STATUS_MAP(CJ_MSG_)
#undef CJ_MSG_
  }
  return "unknown status";
}

const char *cujit_last_error(void) {
  cj_tls *t = tls_get();
  return t && t->detail ? t->detail : "";
}

cujit_status cujit_last_status(void) {
  cj_tls *t = tls_get();
  return t ? t->status : CUJIT_OK;
}

CUresult cujit_last_cu_result(void) {
  cj_tls *t = tls_get();
  return t ? t->cu : CUDA_SUCCESS;
}

int cujit_last_nvrtc_result(void) {
  cj_tls *t = tls_get();
  return t ? t->nvrtc : 0;
}

static void set_detail(cj_tls *t, const char *fmt, va_list ap) {
  va_list ap2;
  int n;
  va_copy(ap2, ap);
  n = vsnprintf(t->detail, t->detail ? t->cap : 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  if ((size_t)n >= t->cap) {
    char *d = realloc(t->detail, (size_t)n + 1);
    if (!d) { /* keep what fitted */
      if (t->detail && t->cap) t->detail[t->cap - 1] = '\0';
      return;
    }
    t->detail = d;
    t->cap = (size_t)n + 1;
    vsnprintf(t->detail, t->cap, fmt, ap);
  }
}

/* ---- a kernel's fault, which the process does not survive ---- */

int cj_fail_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_TIMEOUT: return 1;
    default: return 0;
  }
}

/* Set (atomic) once a failure carried a kernel's fault: from then on every failure with a
 * driver error ends with the note below, whichever call made it, and whatever error the
 * driver gave (the fault's own, or another that a lost context brings). */
static int faulted;
static const char fault_note[] =
    "; the CUDA context is no longer usable since a kernel faulted, so every later GPU call "
    "of this process fails too, even after a reset of the device: save what you can and end "
    "the process (a new process can use the GPU)";

/* Adds the note to t's detail, once. */
static void note_fault(cj_tls *t) {
  size_t n = t->detail ? strlen(t->detail) : 0;
  char *d;
  if (t->detail && strstr(t->detail, fault_note)) return;
  if (n + sizeof fault_note > t->cap) {
    if (!(d = realloc(t->detail, n + sizeof fault_note))) return; /* keep what there is */
    t->detail = d;
    t->cap = n + sizeof fault_note;
  }
  memcpy(t->detail + n, fault_note, sizeof fault_note);
}

static cujit_status record(cujit_status st, CUresult cu, int nvrtc, const char *fmt, va_list ap) {
  cj_tls *t = tls_get();
  if (!t) return st;
  t->status = st;
  t->cu = cu;
  t->nvrtc = nvrtc;
  set_detail(t, fmt, ap);
  if (cu != CUDA_SUCCESS && (cj_fail_sticky(cu) || __atomic_load_n(&faulted, __ATOMIC_RELAXED))) {
    __atomic_store_n(&faulted, 1, __ATOMIC_RELAXED);
    note_fault(t);
  }
  cj_debug("%s: %s", cujit_status_name(st), t->detail ? t->detail : "");
  return st;
}

cujit_status cj_fail(cujit_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(st, CUDA_SUCCESS, 0, fmt, ap);
  va_end(ap);
  return st;
}

cujit_status cj_fail_cu(cujit_status st, CUresult r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(st, r, 0, fmt, ap);
  va_end(ap);
  return st;
}

cujit_status cj_fail_nvrtc(cujit_status st, int r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(st, CUDA_SUCCESS, r, fmt, ap);
  va_end(ap);
  return st;
}

cujit_status cj_fail_oom(const char *what) {
  return cj_fail(CUJIT_ERROR_OUT_OF_MEMORY, "out of host memory while %s; free memory and retry",
                 what);
}

/* ---- the error mode ----
 *
 * The public header makes every call that returns a status a macro that calls
 * cujit_error_raise_() when the status is a failure; the library's own sources are built
 * without those macros, so only a call the program made gets here. The handler is read
 * under a lock (a failure is rare) and called outside it, so that it may call cujit,
 * change the handler or end the process. */

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_handler, handler_lock)
static cujit_error_fn handler_fn;
static void *handler_user;
static int handler_chosen; /* the program called cujit_error_set_handler() */

static pthread_once_t errors_env_once = PTHREAD_ONCE_INIT;
static cujit_error_fn errors_env_fn; /* what CUJIT_ERRORS chose */
static int errors_env_warned;

/* CUJIT_ERRORS's handler into *fn (NULL: none): 1, or 0 for a value that is neither
 * `return` nor `exit`, which is warned about, once in the process. */
static int errors_env_parse(cujit_error_fn *fn) {
  const char *s = cj_env("CUJIT_ERRORS");
  *fn = NULL;
  if (!s || strcasecmp(s, "return") == 0) return 1;
  if (strcasecmp(s, "exit") == 0) {
    *fn = cujit_error_exit;
    return 1;
  }
  cj_env_refused(&errors_env_warned, "CUJIT_ERRORS", s, "`return` or `exit`",
                 "`return` (every call returns its status)");
  return 0;
}

/* Checked when the library starts (common/env.c), so that a bad value is warned about in a
 * program that never fails too; the tuning variables with it (envvalue.c). */
static void errors_env_check(void) {
  cujit_error_fn fn;
  errors_env_parse(&fn);
  cj_env_check_all();
}

__attribute__((constructor)) static void errors_env_at_start(void) {
  cj_env_at_start(errors_env_check);
}

/* The handler CUJIT_ERRORS chooses, read at the first failure of a program that chose none
 * (after a setenv() the program made, if it made one). */
static void errors_env_read(void) { errors_env_parse(&errors_env_fn); }

void cujit_error_set_handler(cujit_error_fn fn, void *user) {
  pthread_mutex_lock(&handler_lock);
  handler_fn = fn;
  handler_user = user;
  handler_chosen = 1;
  pthread_mutex_unlock(&handler_lock);
}

cujit_status cujit_error_raise_(cujit_status status, const char *call) {
  cujit_error_fn fn;
  void *user;
  int chosen;
  pthread_mutex_lock(&handler_lock);
  fn = handler_fn;
  user = handler_user;
  chosen = handler_chosen;
  pthread_mutex_unlock(&handler_lock);
  if (!chosen) {
    pthread_once(&errors_env_once, errors_env_read);
    fn = errors_env_fn;
    user = NULL;
  }
  if (fn) fn(status, call ? call : "a cujit call", cujit_last_error(), user);
  return status;
}

/* The exit status the error mode ends with: CUJIT_EXIT_NO_GPU where the failure is that
 * no GPU can be used here (a script, CTest or Automake then reports a skip, not a fault),
 * else 1. */
static int exit_code(cujit_status status) {
  return status == CUJIT_ERROR_NO_DRIVER || status == CUJIT_ERROR_NO_DEVICE ? CUJIT_EXIT_NO_GPU
                                                                            : EXIT_FAILURE;
}

void cujit_error_exit(cujit_status status, const char *call, const char *detail, void *user) {
  const char *parts[] = {"cujit: ", call ? call : "a cujit call",
                         ": ",      cujit_status_name(status),
                         ": ",      detail && *detail ? detail : cujit_status_string(status),
                         "\n"};
  (void)user;
  cj_end_begin(exit_code(status));
  cj_end_say(parts, CJ_COUNT(parts));
  cj_end_finish();
}

/* driver.c - libcuda loaded at run time (its table for the loader, then every entry point
 * through cuGetProcAddress), error translation, contexts, devices. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dl/driver.h"
#include "dl/loader.h"

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

cj_driver cj_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_done; /* load_once_fn has run (whatever it found) */
static cujit_status load_status;
static CUresult load_result;
static char load_detail[768];
static get_proc_fn get_proc;

static void load_failed(cujit_status st, CUresult r, const char *fmt, ...) CJ_PRINTF(3, 4);
static void load_failed(cujit_status st, CUresult r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(load_detail, sizeof load_detail, fmt, ap);
  va_end(ap);
  load_status = st;
  load_result = r;
}

/* The CUDA version whose form of `name` cuda.h declares. Asking for CUDA_VERSION gives the
 * newest form, which for these few gained parameters in CUDA 13 (cuCtxGetDevice_v2 takes a
 * context) while cuda.h still declares the old form under the base name; calling the new
 * form through the old prototype passes garbage. */
static int declared_version(const char *name) {
  static const char *const old_form[] = {"cuCtxGetDevice", "cuCtxSynchronize", "cuStreamGetCtx"};
  size_t i;
  for (i = 0; i < CJ_COUNT(old_form); i++)
    if (strcmp(name, old_form[i]) == 0) return 12000;
  return CUDA_VERSION;
}

static int resolve(get_proc_fn get, const char *name, void **slot) {
  CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *slot = NULL;
  if (get(name, slot, declared_version(name), CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) !=
          CUDA_SUCCESS ||
      q != CU_GET_PROC_ADDRESS_SUCCESS)
    *slot = NULL;
  return *slot != NULL;
}

static int resolve_all(get_proc_fn get) {
#define CJ_RESOLVE_REQ_(fn)                                          \
  if (!resolve(get, #fn, (void **)&cj_cu.fn)) {                      \
    load_failed(CUJIT_ERROR_NO_DRIVER, CUDA_ERROR_NOT_FOUND,         \
                "the CUDA driver lacks %s; it is too old for cujit " \
                "(a driver for CUDA 12.0 or newer is needed)",       \
                #fn);                                                \
    return 0;                                                        \
  }
#define CJ_RESOLVE_OPT_(fn) resolve(get, #fn, (void **)&cj_cu.fn);
  CJ_DRIVER_REQUIRED(CJ_RESOLVE_REQ_)
  CJ_DRIVER_OPTIONAL(CJ_RESOLVE_OPT_)
#undef CJ_RESOLVE_REQ_
#undef CJ_RESOLVE_OPT_
  return 1;
}

static const char *const libcuda_names[] = {"libcuda.so.1"};
/* Every other entry point is asked of cuGetProcAddress, by the version cuda.h declares. */
static const cj_dsym libcuda_syms[] = {{"cuGetProcAddress_v2", 0, 0}};

/* Loaded by the system's search (or CUJIT_LIBCUDA): the driver is the machine's. */
static const cj_dlib libcuda = {
    .env = "CUJIT_LIBCUDA",
    .sonames = libcuda_names,
    .n_sonames = CJ_COUNT(libcuda_names),
    .syms = libcuda_syms,
    .n_syms = CJ_COUNT(libcuda_syms),
};

/* Loads the library: 0, or -1 with load_failed() called. */
static int open_libcuda(void) {
  static CJ_LARGE cj_dlib_file file;
  char why[PATH_MAX + 512];
  void *lib, *sym = NULL;
  const char *path, *from;
  cj_dlib_rc rc;
  cj_dlib_locate(&libcuda, &file);
  rc = cj_dlib_load(&libcuda, &file, &sym, &lib, why, sizeof why);
  /* a path chosen by CUJIT_LIBCUDA is named as such, so that a wrong one is found */
  path = file.env ? file.env : libcuda_names[0];
  from = file.env ? " (from CUJIT_LIBCUDA; fix or unset it)" : "";
  switch (rc) {
    case CJ_DLIB_LOADED: get_proc = (get_proc_fn)sym; return 0;
    case CJ_DLIB_REFUSED: /* a relative path would be the working directory's */
      load_failed(CUJIT_ERROR_NO_DRIVER, CUDA_ERROR_NOT_FOUND,
                  "no CUDA driver loaded: CUJIT_LIBCUDA is '%s', which is not an absolute "
                  "path, so it was not loaded; set it to the full path of libcuda.so.1, or "
                  "unset it",
                  cj_env("CUJIT_LIBCUDA"));
      return -1;
    case CJ_DLIB_LACKS:
      load_failed(CUJIT_ERROR_NO_DRIVER, CUDA_ERROR_NOT_FOUND,
                  "the CUDA driver in %s%s has no cuGetProcAddress_v2; it is not a CUDA driver "
                  "or too old for cujit (a driver for CUDA 12.0 or newer is needed)",
                  path, from);
      return -1;
    default:
      load_failed(CUJIT_ERROR_NO_DRIVER, CUDA_ERROR_NOT_FOUND,
                  "no CUDA driver found: %s%s could not be loaded (%s); install the NVIDIA "
                  "driver, or run on a machine with a GPU (compiling works without one)",
                  path, from, why[0] ? why : "unknown reason");
      return -1;
  }
}

static void load_tried(void) {
  CUresult r;
  if (open_libcuda() != 0) return;
  if (!resolve_all(get_proc)) return;
  r = cj_cu.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    load_failed(CUJIT_ERROR_NO_DEVICE, r,
                "the CUDA driver found no device (cuInit: CUDA_ERROR_NO_DEVICE); check "
                "nvidia-smi and CUDA_VISIBLE_DEVICES");
    return;
  }
  if (r != CUDA_SUCCESS) {
    const char *name = NULL;
    cj_cu.cuGetErrorName(r, &name);
    load_failed(CUJIT_ERROR_DRIVER, r,
                "cuInit failed: %s (%d); the driver is installed but cannot start, "
                "check nvidia-smi and the driver's installation",
                name ? name : "?", (int)r);
    return;
  }
  cj_cu.cuDriverGetVersion(&cj_cu.version);
  load_status = CUJIT_OK;
}

static void load_once_fn(void) {
  load_tried();
  __atomic_store_n(&load_done, 1, __ATOMIC_RELEASE);
}

cujit_status cj_driver_load(void) {
  pthread_once(&load_once, load_once_fn);
  if (CJ_UNLIKELY(load_status != CUJIT_OK))
    return cj_fail_cu(load_status, load_result, "%s", load_detail);
  return CUJIT_OK;
}

const char *cj_cu_name(CUresult r) {
  const char *name = NULL;
  if (cj_cu.cuGetErrorName) cj_cu.cuGetErrorName(r, &name);
  return name ? name : "CUDA_ERROR_UNKNOWN";
}

cujit_status cj_cu_status(CUresult r) {
  if (cj_fail_sticky(r)) return CUJIT_ERROR_LAUNCH_FAILED; /* a kernel's fault */
  switch (r) {
    case CUDA_SUCCESS: return CUJIT_OK;
    case CUDA_ERROR_OUT_OF_MEMORY: return CUJIT_ERROR_DEVICE_MEMORY;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE: return CUJIT_ERROR_NO_DEVICE;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE: return CUJIT_ERROR_LAUNCH_CONFIG;
    default: return cj_cu_capture_error(r) ? CUJIT_ERROR_CAPTURE : CUJIT_ERROR_DRIVER;
  }
}

/* What a refusal of the driver's during a capture means, and what to do. */
static const char *capture_advice(CUresult r) {
  if (r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    return "; an earlier call made while the stream was being captured into a graph "
           "invalidated the capture (its own error said which): end it with cujit_graph_end(), "
           "which fails, and capture again without that call";
  if (r == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
    return "; a capture begun in global or thread-local mode ends on the thread that began it";
  return "; a stream is being captured into a graph, and the driver refuses this call until "
         "the capture ends (it would wait for the captured work, use the legacy default stream "
         "beside a blocking stream being captured, or act outside the stream's order): make "
         "it before cujit_graph_begin() or after cujit_graph_end(); the capture may be "
         "invalidated now, and cujit_graph_end() then fails";
}

cujit_status cj_cu_fail(CUresult r, const char *what) {
  const char *text = NULL;
  if (cj_cu.cuGetErrorString) cj_cu.cuGetErrorString(r, &text);
  return cj_fail_cu(cj_cu_status(r), r, "%s failed: %s (%s)%s", what, cj_cu_name(r),
                    text ? text : "no description",
                    cj_cu_capture_error(r) ? capture_advice(r) : "");
}

/* ---- contexts ---- */

/* CUJIT_DEVICE, read once: the ordinal, or the value when it is not one. */
static pthread_once_t device_env_once = PTHREAD_ONCE_INIT;
static int device_env_ordinal;
static char device_env_bad[72];

static void device_env_init(void) {
  uint64_t v;
  if (cj_env_u64("CUJIT_DEVICE", &v) == CJ_ENV_BAD)
    snprintf(device_env_bad, sizeof device_env_bad, "%.64s", cj_env("CUJIT_DEVICE"));
  else
    device_env_ordinal = (int)v;
}

/* The ordinal, or -1 when the value is not one (without an error detail). */
static int device_env_peek(void) {
  pthread_once(&device_env_once, device_env_init);
  return device_env_bad[0] ? -1 : device_env_ordinal;
}

cujit_status cj_device_env(int *ordinal) {
  CJ_CHECK((*ordinal = device_env_peek()) >= 0, CUJIT_ERROR_INVALID_VALUE,
           "CUJIT_DEVICE='%s' is not a device ordinal; set it to a device's number "
           "(0, 1, ...: digits only, 0 for the first device) or unset it",
           device_env_bad);
  return CUJIT_OK;
}

#define CJ_MAX_DEVICES 64
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[CJ_MAX_DEVICES];
static int device_cc[CJ_MAX_DEVICES];  /* by CUdevice: major*10+minor once asked; 0: not yet */
static int ordinal_cc[CJ_MAX_DEVICES]; /* the same by ordinal, for threads with no context */

/* ---- the context started early, beside the first compile ----
 *
 * A process's first result waits for the driver and the device's context (hundreds of
 * milliseconds) and for its first compile (tens to hundreds), and NVRTC needs no context.
 * So when a compile that a launch will likely follow starts (cujit_module_from_source and
 * _from_file, on a cache miss: cj_ctx_early), and the process has no context for the
 * device cujit would choose, a thread of its own loads the driver and retains that
 * device's primary context (CUJIT_DEVICE's), making it current nowhere, while the calling
 * thread compiles. The first call that needs the context (primary_ctx) waits for that
 * thread and takes what it made, as if it had made it itself; a failure is not kept: that
 * call meets it again and reports it as it would have (the driver's load keeps its own
 * answer). Started at most once per process, never on a thread with a context of its own
 * current, never where the program has loaded the driver and made its own context. A
 * context made so that the program does not use (the first call that needs a context
 * finds another one current) is released then. A fork waits for the thread to end, so a
 * child never holds a context half made, and so does exit(), so that the driver is not torn
 * down under it. CUJIT_EARLY_CONTEXT=0 and
 * CUJIT_OPT_NO_EARLY_CONTEXT turn it off. */

enum { EARLY_NONE, EARLY_RUNNING, EARLY_DONE };
static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t early_change = PTHREAD_COND_INITIALIZER;
static int early_state;         /* EARLY_*, changed under early_lock (atomic: read without it) */
static int early_ordinal;       /* the device it is for */
static int exit_waits;          /* early_at_exit is registered (under early_lock) */
static CUcontext early_ctx;     /* what it made that no thread has taken (changed under
                                   primary_lock; read without it) */
static double early_wait_s = 5; /* the most a fork or exit() waits for the thread */

/* Takes early_lock and waits, for at most early_wait_s, until no early thread runs. */
static void early_settle(void) {
  struct timespec until;
  long long ns;
  clock_gettime(CLOCK_REALTIME, &until);
  ns = until.tv_nsec + (long long)(early_wait_s * 1e9);
  until.tv_sec += (time_t)(ns / 1000000000);
  until.tv_nsec = (long)(ns % 1000000000);
  pthread_mutex_lock(&early_lock);
  while (early_state == EARLY_RUNNING &&
         pthread_cond_timedwait(&early_change, &early_lock, &until) != ETIMEDOUT) {
  }
}

static void early_fork_prepare(void) { early_settle(); }

static void early_fork_parent(void) { pthread_mutex_unlock(&early_lock); }

/* The child has no thread making a context: one still running in the parent (past the
 * wait) is as if never started, and nothing waits for it. */
static void early_fork_child(void) {
  if (early_state == EARLY_RUNNING) __atomic_store_n(&early_state, EARLY_NONE, __ATOMIC_RELEASE);
  pthread_cond_init(&early_change, NULL);
  pthread_mutex_unlock(&early_lock);
}

__attribute__((constructor)) static void early_fork_hooks(void) {
  cj_fork_hooks(early_fork_prepare, early_fork_parent, early_fork_child);
}

/* exit() waits for the thread too: the driver's destructors, which exit() runs after the
 * functions registered with atexit(), would tear the driver down under it (a program that
 * compiles and returns from main at once). The error mode's end runs no destructors. */
static void early_at_exit(void) {
  early_settle();
  pthread_mutex_unlock(&early_lock);
}

/* The thread: the driver, then the primary context of early_ordinal. */
static void *early_main(void *arg) {
  int ordinal = (int)(intptr_t)arg, count = 0;
  CUcontext ctx = NULL;
  CUdevice dev;
  pthread_once(&load_once, load_once_fn);
  if (load_status == CUJIT_OK && cj_cu.cuDeviceGetCount(&count) == CUDA_SUCCESS &&
      ordinal < count && cj_cu.cuDeviceGet(&dev, ordinal) == CUDA_SUCCESS) {
    pthread_mutex_lock(&primary_lock);
    if (!primary[ordinal] && cj_cu.cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS) {
      __atomic_store_n(&primary[ordinal], ctx, __ATOMIC_RELEASE);
      __atomic_store_n(&early_ctx, ctx, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&primary_lock);
  }
  cj_debug("device %d's context was %s beside the compile", ordinal,
           ctx ? "made" : "not made (the first call that needs it says why)");
  pthread_mutex_lock(&early_lock);
  __atomic_store_n(&early_state, EARLY_DONE, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&early_change);
  pthread_mutex_unlock(&early_lock);
  return NULL;
}

/* Waits for the early thread when it is making device `ordinal`'s context. */
static void early_wait(int ordinal) {
  if (CJ_LIKELY(__atomic_load_n(&early_state, __ATOMIC_ACQUIRE) != EARLY_RUNNING)) return;
  pthread_mutex_lock(&early_lock);
  while (early_state == EARLY_RUNNING && early_ordinal == ordinal)
    pthread_cond_wait(&early_change, &early_lock);
  pthread_mutex_unlock(&early_lock);
}

/* A call that needs a context found `current` current: the early context, unless it is that
 * one, is not what the program uses, and is released. */
static CJ_NOINLINE void early_unused(CUcontext current) {
  CUcontext ctx;
  CUdevice dev;
  pthread_mutex_lock(&primary_lock);
  ctx = __atomic_exchange_n(&early_ctx, NULL, __ATOMIC_RELAXED);
  if (ctx && ctx != current) {
    __atomic_store_n(&primary[early_ordinal], NULL, __ATOMIC_RELEASE);
    if (cj_cu.cuDeviceGet(&dev, early_ordinal) == CUDA_SUCCESS && cj_cu.cuDevicePrimaryCtxRelease)
      cj_cu.cuDevicePrimaryCtxRelease(dev);
    cj_debug("device %d's context, made beside the compile, was not used: released", early_ordinal);
  }
  pthread_mutex_unlock(&primary_lock);
}

/* Whether the program has loaded the CUDA driver itself (and so may have a context of its
 * own current on this thread, which only the driver can tell). */
static int driver_in_process(void) {
  const char *path = cj_env("CUJIT_LIBCUDA");
  return cj_dlib_mapped(path && path[0] == '/' ? path : libcuda_names[0]);
}

void cj_ctx_early(void) {
  CUcontext ctx = NULL;
  pthread_attr_t at;
  pthread_t t;
  sigset_t all, old;
  int ordinal = device_env_peek(), on = 1, started;
  if (__atomic_load_n(&early_state, __ATOMIC_ACQUIRE) != EARLY_NONE) return; /* once */
  cj_env_flag("CUJIT_EARLY_CONTEXT", &on);
  if (!on || ordinal < 0 || ordinal >= CJ_MAX_DEVICES ||
      __atomic_load_n(&primary[ordinal], __ATOMIC_ACQUIRE))
    return;
  if (__atomic_load_n(&load_done, __ATOMIC_ACQUIRE) || driver_in_process()) {
    /* the driver can say whether this thread has a context: the program's is used */
    pthread_once(&load_once, load_once_fn);
    if (load_status != CUJIT_OK || cj_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx) return;
  } /* else no driver in the process yet: nothing of CUDA is current anywhere */
  pthread_mutex_lock(&early_lock);
  started = early_state == EARLY_NONE && pthread_attr_init(&at) == 0;
  if (started) {
    __atomic_store_n(&early_state, EARLY_RUNNING, __ATOMIC_RELEASE);
    early_ordinal = ordinal;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    sigfillset(&all); /* no handler of the program runs on it */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (!exit_waits) exit_waits = atexit(early_at_exit) == 0; /* before the thread */
    if (pthread_create(&t, &at, early_main, (void *)(intptr_t)ordinal) != 0)
      __atomic_store_n(&early_state, EARLY_DONE, __ATOMIC_RELEASE); /* no thread: made later */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
  }
  pthread_mutex_unlock(&early_lock);
}

/* Makes the primary context of device `ordinal` current on this thread, retaining it once
 * per process; `who` names what chose the ordinal in the message when there is no such
 * device ("CUJIT_DEVICE=1", "cujit_device_set_current(1)"). */
static cujit_status primary_ctx(int ordinal, const char *who, CUcontext *ctx, CUdevice *dev) {
  CUresult r;
  int count = 0;
  cj_cu.cuDeviceGetCount(&count);
  CJ_CHECK(ordinal >= 0 && ordinal < count && ordinal < CJ_MAX_DEVICES, CUJIT_ERROR_NO_DEVICE,
           "%s but there %s %d CUDA device%s; use 0..%d (cujit_device_get_count() says how many; "
           "CUDA_VISIBLE_DEVICES may hide some)",
           who, count == 1 ? "is" : "are", count, count == 1 ? "" : "s", count - 1);
  r = cj_cu.cuDeviceGet(dev, ordinal);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuDeviceGet");
  early_wait(ordinal);
  pthread_mutex_lock(&primary_lock);
  *ctx = primary[ordinal];
  r = CUDA_SUCCESS;
  if (!*ctx && (r = cj_cu.cuDevicePrimaryCtxRetain(ctx, *dev)) == CUDA_SUCCESS)
    __atomic_store_n(&primary[ordinal], *ctx, __ATOMIC_RELEASE); /* read without the lock */
  if (*ctx && *ctx == early_ctx)                                 /* handed to a thread: kept */
    __atomic_store_n(&early_ctx, NULL, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&primary_lock);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuDevicePrimaryCtxRetain");
  r = cj_cu.cuCtxSetCurrent(*ctx);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxSetCurrent");
  return CUJIT_OK;
}

static _Thread_local CUcontext not_primary; /* the last context found not to be one */

/* The slow path of cj_ctx_retained: whether current ctx is its device's primary context,
 * which is then retained (once per device) so that it outlives the program's use of it. */
static int adopt_primary(CUcontext ctx) {
  CUcontext pc = NULL;
  CUdevice dev;
  unsigned flags;
  int active = 0, stored;
  if (!cj_cu.cuDevicePrimaryCtxGetState || !cj_cu.cuDevicePrimaryCtxRelease ||
      cj_cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0 || dev >= CJ_MAX_DEVICES ||
      cj_cu.cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
      cj_cu.cuDevicePrimaryCtxRetain(&pc, dev) != CUDA_SUCCESS) {
    not_primary = ctx;
    return 0;
  }
  pthread_mutex_lock(&primary_lock);
  stored = pc == ctx && !primary[dev];
  if (stored) __atomic_store_n(&primary[dev], pc, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&primary_lock);
  if (!stored) cj_cu.cuDevicePrimaryCtxRelease(dev); /* the reference just taken */
  if (pc == ctx && __atomic_load_n(&primary[dev], __ATOMIC_ACQUIRE) == ctx) return 1;
  not_primary = ctx;
  return 0;
}

int cj_ctx_retained(CUcontext ctx) {
  int i;
  if (!ctx || ctx == not_primary) return 0;
  for (i = 0; i < CJ_MAX_DEVICES; i++)
    if (__atomic_load_n(&primary[i], __ATOMIC_ACQUIRE) == ctx) return 1;
  return adopt_primary(ctx);
}

unsigned long long cj_ctx_id(CUcontext ctx) {
  unsigned long long id = 0;
  if (!cj_cu.cuCtxGetId || cj_cu.cuCtxGetId(ctx, &id) != CUDA_SUCCESS) id = 0;
  return id;
}

int cj_ctx_mem_dead(const cj_mem_ctx *owner) {
  return owner->id && cj_ctx_id(owner->ctx) != owner->id;
}

cujit_status cj_ctx_ensure(CUcontext *ctx, CUdevice *dev) {
  CUresult r;
  int ordinal;
  char who[40];
  /* before the driver: a malformed CUJIT_DEVICE is reported wherever it is set */
  CJ_TRY(cj_device_env(&ordinal));
  CJ_TRY(cj_driver_load());
  r = cj_cu.cuCtxGetCurrent(ctx);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxGetCurrent");
  if (*ctx) {
    if (CJ_UNLIKELY(__atomic_load_n(&early_ctx, __ATOMIC_RELAXED) != NULL)) early_unused(*ctx);
    r = cj_cu.cuCtxGetDevice(dev);
    return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuCtxGetDevice");
  }
  snprintf(who, sizeof who, "CUJIT_DEVICE=%d", ordinal);
  return primary_ctx(ordinal, who, ctx, dev);
}

/* The compute capability every device has, when they all have the same (a machine with
 * one GPU, or several of one kind), else 0. Devices do not change while a process runs,
 * so it is asked once; compiles then need no driver call to choose their target. */
static pthread_once_t uniform_once = PTHREAD_ONCE_INIT;
static int uniform_cc;

static void uniform_once_fn(void) {
  int count = 0, i, major, minor, cc = 0;
  CUdevice dev;
  if (cj_cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) return;
  for (i = 0; i < count; i++) {
    if (cj_cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
        cj_cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
            CUDA_SUCCESS ||
        cj_cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
            CUDA_SUCCESS)
      return;
    if (i > 0 && major * 10 + minor != cc) return;
    cc = major * 10 + minor;
  }
  uniform_cc = cc;
}

cujit_status cj_device_cc_for_compile(int *cc) {
  CUcontext ctx = NULL;
  CUdevice dev;
  int major = 0, minor = 0, count = 0, ordinal = -1;
  pthread_once(&load_once, load_once_fn);
  CJ_TRY(load_status);
  pthread_once(&uniform_once, uniform_once_fn);
  if (CJ_LIKELY(uniform_cc)) {
    *cc = uniform_cc;
    return CUJIT_OK;
  }
  if (cj_cu.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx &&
      cj_cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
  } else {
    ordinal = device_env_peek(); /* -1 when malformed: no device */
    if (ordinal >= 0 && ordinal < CJ_MAX_DEVICES &&
        (*cc = __atomic_load_n(&ordinal_cc[ordinal], __ATOMIC_RELAXED)))
      return CUJIT_OK;
    if (cj_cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || ordinal < 0 || ordinal >= count)
      return CUJIT_ERROR_NO_DEVICE;
    if (cj_cu.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) return CUJIT_ERROR_NO_DEVICE;
  }
  /* a device's compute capability never changes: ask once */
  if (!(dev >= 0 && dev < CJ_MAX_DEVICES &&
        (*cc = __atomic_load_n(&device_cc[dev], __ATOMIC_RELAXED)))) {
    if (cj_cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
            CUDA_SUCCESS ||
        cj_cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
            CUDA_SUCCESS)
      return CUJIT_ERROR_DRIVER;
    *cc = major * 10 + minor;
    if (dev >= 0 && dev < CJ_MAX_DEVICES) __atomic_store_n(&device_cc[dev], *cc, __ATOMIC_RELAXED);
  }
  if (!ctx && ordinal >= 0 && ordinal < CJ_MAX_DEVICES)
    __atomic_store_n(&ordinal_cc[ordinal], *cc, __ATOMIC_RELAXED);
  return CUJIT_OK;
}

/* ---- public: driver and devices ---- */

cujit_status cujit_driver_get_version(int *version) {
  CJ_CHECK(version, CUJIT_ERROR_INVALID_VALUE, "cujit_driver_get_version: version is NULL");
  CJ_TRY(cj_driver_load());
  *version = cj_cu.version;
  return CUJIT_OK;
}

cujit_status cujit_device_get_count(int *count) {
  CUresult r;
  CJ_CHECK(count, CUJIT_ERROR_INVALID_VALUE, "cujit_device_get_count: count is NULL");
  *count = 0;
  CJ_TRY(cj_driver_load());
  r = cj_cu.cuDeviceGetCount(count);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuDeviceGetCount");
}

cujit_status cujit_device_get_info(int device, char *name, size_t name_size, int *cc_major,
                                   int *cc_minor) {
  CUdevice dev;
  CUresult r;
  int count = 0;
  CJ_TRY(cj_driver_load());
  cj_cu.cuDeviceGetCount(&count);
  CJ_CHECK(device >= 0 && device < count, CUJIT_ERROR_NO_DEVICE,
           "device %d does not exist (%d device%s)", device, count, count == 1 ? "" : "s");
  r = cj_cu.cuDeviceGet(&dev, device);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuDeviceGet");
  if (name && name_size) {
    r = cj_cu.cuDeviceGetName(name, (int)(name_size > 4096 ? 4096 : name_size), dev);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuDeviceGetName");
    name[name_size - 1] = '\0';
  }
  if (cc_major)
    cj_cu.cuDeviceGetAttribute(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (cc_minor)
    cj_cu.cuDeviceGetAttribute(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return CUJIT_OK;
}

cujit_status cujit_device_set_current(int ordinal) {
  CUcontext ctx;
  CUdevice dev;
  char who[48];
  CJ_CHECK(ordinal >= 0, CUJIT_ERROR_NO_DEVICE,
           "cujit_device_set_current(%d): a device ordinal is "
           "0 or more (0 for the first device; cujit_device_get_count() says how many)",
           ordinal);
  CJ_CHECK(ordinal < CJ_MAX_DEVICES, CUJIT_ERROR_NO_DEVICE,
           "cujit_device_set_current(%d): cujit "
           "supports devices 0..%d in one process",
           ordinal, CJ_MAX_DEVICES - 1);
  pthread_once(&load_once, load_once_fn);
  if (load_status != CUJIT_OK)
    return cj_fail_cu(load_status, load_result, "cujit_device_set_current(%d): %s", ordinal,
                      load_detail);
  snprintf(who, sizeof who, "cujit_device_set_current(%d)", ordinal);
  return primary_ctx(ordinal, who, &ctx, &dev);
}

/* The ordinal of CUdevice `dev` (the same number on every driver so far, but the driver
 * promises only a handle). */
static cujit_status ordinal_of(CUdevice dev, int *ordinal) {
  CUdevice d;
  int count = 0, i;
  cj_cu.cuDeviceGetCount(&count);
  for (i = 0; i < count; i++) {
    if (cj_cu.cuDeviceGet(&d, i) == CUDA_SUCCESS && d == dev) {
      *ordinal = i;
      return CUJIT_OK;
    }
  }
  return cj_fail(CUJIT_ERROR_NO_DEVICE,
                 "the current context's device (%d) is not one of the "
                 "%d devices the driver lists",
                 (int)dev, count);
}

cujit_status cujit_device_get_current(int *ordinal) {
  CUcontext ctx = NULL;
  CUdevice dev;
  CUresult r;
  int env;
  CJ_CHECK(ordinal, CUJIT_ERROR_INVALID_VALUE, "cujit_device_get_current: ordinal is NULL");
  *ordinal = -1;
  CJ_TRY(cj_device_env(&env));
  /* without a driver no context can be current: the device cujit would choose is the
   * default, and the driver's absence is reported by the call that needs it */
  pthread_once(&load_once, load_once_fn);
  if (load_status == CUJIT_OK) {
    r = cj_cu.cuCtxGetCurrent(&ctx);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxGetCurrent");
  }
  if (!ctx) {
    *ordinal = env;
    return CUJIT_OK;
  }
  r = cj_cu.cuCtxGetDevice(&dev);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxGetDevice");
  return ordinal_of(dev, ordinal);
}

cujit_status cujit_driver_get_symbol(const char *name, void **fn) {
  CJ_CHECK(name && fn, CUJIT_ERROR_INVALID_VALUE, "cujit_driver_get_symbol: NULL argument");
  *fn = NULL;
  CJ_TRY(cj_driver_load());
  CJ_CHECK(resolve(get_proc, name, fn), CUJIT_ERROR_NOT_FOUND,
           "the CUDA driver has no entry point '%s' (use the base name, e.g. \"cuMemAlloc\", "
           "not \"cuMemAlloc_v2\")",
           name);
  return CUJIT_OK;
}

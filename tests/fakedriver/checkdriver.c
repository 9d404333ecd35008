/* checkdriver.c - a checking fake CUDA driver, for testing cujit's memory and context paths on
 * a machine without a GPU: CUJIT_LIBCUDA=<absolute path of libcujit-checkdriver.so> makes
 * cujit load it as it loads libcuda (cuGetProcAddress and the entry points of
 * src/dl/driver.h's tables). Never shipped; the tests' own.
 *
 * What it models:
 * - CHECKDRIVER_DEVICES devices (default 2, at most 8) of compute capability 9.0.
 * - Primary contexts (one handle per device for the process, as the real driver keeps it)
 *   and user contexts (cuCtxCreate/cuCtxDestroy; a destroyed one's handle is given to the
 *   next one made), each life of a context with an ID of its own (cuCtxGetId). A primary
 *   context reset (cuDevicePrimaryCtxReset, exported for dlsym too) ends its life: its
 *   memory, streams, events, pools, pinned host memory and functions die with it, its
 *   queued work is dropped, and the handle stays current on threads; calls made in it then
 *   fail with CUDA_ERROR_CONTEXT_IS_DESTROYED until cuDevicePrimaryCtxRetain starts a new
 *   life (what CUDA.jl and others report of the real driver). The retain count is kept
 *   across a reset, as cuda.h says.
 * - Device memory backed by host memory: copies and memsets move bytes, reads give back
 *   what was written. Addresses are given first-fit from each device's range, so freed
 *   memory (and a reset context's plain allocations) is handed out again at once, as the
 *   real driver did on an H200; pool memory of a reset context is never given again.
 * - A queue per stream: copies, memsets and kernels are queued and finish (move their
 *   bytes) only at a synchronisation point: cuStreamSynchronize, cuStreamQuery,
 *   cuEventSynchronize, cuCtxSynchronize, and the implicit ones: cuMemFree and
 *   cuMemFreeHost wait for the context's work; cuMemcpyHtoD from pageable memory waits
 *   for the legacy stream, then queues the copy of a snapshot; from page-locked memory
 *   and cuMemcpyDtoH it finishes before returning (with what it waits for); an async copy
 *   between the device and pageable memory snapshots (to the device) or finishes (to the
 *   host) at the call. The legacy default stream (NULL, CU_STREAM_LEGACY and
 *   CU_STREAM_PER_THREAD alike) waits for the work queued before on the context's
 *   blocking streams, and they wait for its work; non-blocking streams wait for nothing.
 * - Events (recorded at a point of a stream's queue), stream-ordered pools (a device's
 *   default pool, cuMemPoolCreate; cuMemAllocAsync, cuMemAllocFromPoolAsync,
 *   cuMemFreeAsync; a block freed on a stream is taken again on that stream at once, on
 *   another only once its free has run; at a synchronisation a pool gives back what it
 *   keeps above its release threshold, default 0; cuMemPoolTrimTo; the threshold, reserved
 *   and used attributes), cuMemAlloc and cuMemFree, page-locked host memory
 *   (cuMemHostAlloc, cuMemHostRegister; made inaccessible, PROT_NONE, when its context
 *   dies, as the real driver unmaps it).
 * - Libraries from a CUBIN (for sm_90 or an older 9.x), PTX (compute_90 or older) or a
 *   fatbin holding either (uncompressed, or compressed with zstd): their kernels by name, and each
 * kernel's parameters from the image itself (the CUBIN's description, format/code.c; the PTX's
 * parameter list, compile/symbols.c), and its limit on threads per block (__launch_bounds__:
 *   the CUBIN's EIATTR_MAX_THREADS, the PTX's .maxntid; 1024 without). A launch
 *   (cuLaunchKernel, cuLaunchKernelEx) checks the block against it, checks its
 *   parameters and queues a kernel that does nothing when it runs, except a kernel named
 *   "checkdriver_fault..." or one after checkdriver_fault_next_launch(), which faults.
 * - Stream capture and graphs: work queued on a stream being captured (cuStreamBeginCapture;
 *   copies, memsets, launches, graph launches) becomes nodes of the capture's graph instead
 *   of being queued; cuStreamEndCapture gives the graph (or, when a call invalidated the
 *   capture, none and CUDA_ERROR_STREAM_CAPTURE_INVALIDATED); the calls a capture forbids
 *   fail and invalidate it (the capture section below says which: waits, the legacy stream
 *   beside a blocking capture, pageable copies, and the calls deemed unsafe in a thread
 *   whose capture mode forbids them, cuThreadExchangeStreamCaptureMode). A graph made
 *   executable (cuGraphInstantiateWithFlags) is launched by queuing a copy of each of its
 *   nodes on the stream, their memory checked live then, its kernels' libraries loaded,
 *   its host memory page-locked, after its earlier launches; launched on a capturing stream,
 *   its nodes join that capture. cuGraphExecUpdate takes the parameters of a graph of the
 *   same nodes (another count: CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED; another kind:
 *   _NODE_TYPE_CHANGED; a copy of another direction: _PARAMETERS_CHANGED), and
 *   cuGraphExecKernelNodeSetParams one kernel node's, named by the node of the graph it was
 *   made from. cuStreamGetCaptureInfo names the node made last; cuGraphGetNodes lists a
 *   graph's nodes, in the order they were made, and cuGraphNodeGetType says each one's kind.
 * - A fault (as an illegal address on a GPU) ends CUDA for the whole process, as cuda.h
 *   documents of CUDA_ERROR_ILLEGAL_ADDRESS (the process is left in an inconsistent state and
 *   must end before CUDA can be used again). From the synchronisation that finds it, work
 *   queued anywhere is dropped, and for the rest of the process every call that does work,
 *   in any context of any device, returns CUDA_ERROR_ILLEGAL_ADDRESS; so do
 *   cuDevicePrimaryCtxRetain, cuCtxSetCurrent (which then changes nothing) and cuCtxCreate.
 *   The calls that end a context's life answer CUDA_SUCCESS: a primary context's release and
 *   reset, cuCtxDestroy. They end nothing but that life: its memory, streams, pools and
 *   pinned memory die as in any reset, and the error stays, so no context works again.
 *   Frees fail and free nothing, and copies and memsets do nothing, but the memory they name
 *   is checked as ever (freed memory or memory of a dead context is flagged, and so is a
 *   second free of memory whose first one failed so). Queries (of devices, libraries and
 *   kernels, pointers, a pool's attributes, the current context, its device and ID, a
 *   primary context's state, error names) and destroying a stream, an event or a library
 *   still answer. This is what a real driver does: on an H200 (driver 580, CUDA 13.0) the
 *   primary context's reset after each of 109 faults of test_memmodel returned CUDA_SUCCESS,
 *   and the cuDevicePrimaryCtxRetain or cuCtxSetCurrent that followed it returned
 *   CUDA_ERROR_ILLEGAL_ADDRESS. Inferred, not seen: that release and cuCtxDestroy answer as
 *   the reset does, that the error stands in every context of the process rather than in the
 *   faulted one alone (a GPU with one device cannot tell; the stricter reading is modelled),
 *   and which queries answer.
 *
 * What it flags (records, and with checkdriver_set_abort(1) or CHECKDRIVER_ABORT=1 aborts
 * on, with a message naming the call): any use (copy, memset, launch parameter), free or
 * handing out of memory that is freed, of a dead context, of another device or another
 * context than the current one, or still in use by unfinished work on another stream
 * that the new work is not ordered after; a free of memory that was not allocated, or twice;
 * a launch whose pointer-sized parameter points into fake device memory that is not live
 * in the current context; cuKernelGetParamInfo or cuFuncGetParamInfo past the last
 * parameter; any call that needs a context made with none current, or in a dead one; a
 * stream, event, pool or function of a dead context; any call from a child made by fork()
 * after cuInit.
 *
 * What it does not model: kernels' own work (a launch reads no argument's memory beyond
 * its pointers and writes nothing, but the last launch's parameters are kept for
 * checkdriver_last_params()); module globals (cuLibraryGetGlobal and the module API
 * answer CUDA_ERROR_NOT_SUPPORTED); textures, arrays, host functions, peer access, managed
 * memory; graph memory nodes (an allocation or free on a capturing stream is flagged),
 * graphs built node by node, streams forked from a capture by events; compressed fatbin entries
 * other than zstd's (refused with CUDA_ERROR_NOT_SUPPORTED; zstd's are read with libzstd, as cujit
 * reads them); the PTX JIT's errors; timing (cuEventElapsedTime answers 0.001 ms per finished item
 * between the two events); memory limits (cuMemGetInfo reports 80 GiB per device, less what is
 * allocated, and allocations do not fail). One lock serialises every call.
 *
 * Making a primary context can be slowed and made to fail, to show work beside it:
 * CHECKDRIVER_CONTEXT_DELAY_MS=N makes each cuDevicePrimaryCtxRetain take N ms more (before
 * it takes the lock, so that other calls go on meanwhile), CHECKDRIVER_RETAIN_FAIL=R makes
 * each one fail with CUresult R; checkdriver_primary_retains() counts the calls and
 * checkdriver_primary_maker() names the thread (its kernel ID) that made a context first.
 *
 * Every call is counted by entry point (checkdriver_calls), so that a test can show a call
 * is not made, and the next calls of any entry point can be made to fail with a CUresult of
 * the test's choosing, doing nothing (checkdriver_fail_next).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "compile/symbols.h"
#include "dl/zstd.h"
#include "format/code.h"
#include "format/prebuilt.h"

#define EXPORT __attribute__((visibility("default")))

enum { MAX_DEV = 8, MAX_CTX = 64, MAX_STREAMS = 4096, MAX_EVENTS = 8192, MAX_POOLS = 4096 };
enum { A_LIVE = 0, A_FREED = 1, A_DEAD = 2 };
enum { OP_HTOD, OP_DTOH, OP_DTOD, OP_SET, OP_KERNEL, OP_FREE };
enum { MAGIC_KERNEL = 0x6b65726e, MAGIC_FUNC = 0x66756e63 };

#define ARENA_BASE 0x7f0000000000ull
#define ARENA_SIZE (1ull << 40)
#define GRAIN 512ull

/* ---- objects ---- */

typedef struct fctx fctx;
typedef struct fstream fstream;
typedef struct fgraph fgraph;
typedef struct gnode gnode;

struct fctx {
  int used, dev, primary, alive, retains;
  unsigned long long id;
};

struct fstream {
  int used, legacy, nonblocking, destroyed;
  fctx *ctx;
  unsigned long long ctx_id;
  /* a capture (cuStreamBeginCapture): its graph, mode, thread and ID, whether a call made
   * during it invalidated it, and the node made last (the next one's dependency) */
  fgraph *cap;
  int cap_mode, cap_invalid;
  pthread_t cap_thread;
  unsigned long long cap_id;
  gnode *cap_last;
};

typedef struct fpool {
  int used, dev, is_default, dead;
  fctx *ctx;
  unsigned long long ctx_id;
  cuuint64_t threshold;
} fpool;

typedef struct falloc {
  CUdeviceptr base;
  size_t size, reserved;
  unsigned char *host;
  int dev, state, refs, cached; /* cached: freed into its pool, kept there */
  fctx *ctx;
  unsigned long long ctx_id;
  fpool *pool;
  fstream *free_stream;
  unsigned long long free_seq;
  int free_done, refused; /* refused: a free of it failed with the sticky error */
  const char *freed_by;
} falloc;

typedef struct fevent {
  int used, recorded, captured; /* captured: last recorded in a capture */
  fctx *ctx;
  unsigned long long ctx_id;
  fstream *s;
  unsigned long long seq, done_at;
} fevent;

typedef struct pinned {
  unsigned char *lo, *hi;
  int mapped, dead; /* mapped: ours (cuMemHostAlloc), else registered */
  int refused;      /* a free of it failed with the sticky error */
  fctx *ctx;
  unsigned long long ctx_id;
} pinned;

typedef struct touch {
  falloc *a;
  CUdeviceptr lo, hi;
  int write;
} touch;

typedef struct op {
  unsigned long long seq;
  int kind, fault;
  fstream *s;
  fctx *ctx;
  unsigned long long ctx_id;
  touch t[2]; /* copies and memsets: destination, source */
  int nt;
  touch *kt; /* a kernel's pointer parameters */
  int nkt;
  unsigned char *snapshot; /* a pageable source, copied at the call */
  void *host;              /* the host side of a copy from or to page-locked memory */
  size_t n;
  unsigned char value;
  falloc *freed;   /* OP_FREE */
  const void *tag; /* the executable graph whose launch queued it, or NULL */
} op;

typedef struct flib flib;
typedef struct fkernel {
  int magic;
  flib *lib;
  char *name;
  int params_known;
  size_t nparams, *off, *size;
  int dyn_smem;
  int max_threads; /* __launch_bounds__'s, or 1024 */
} fkernel;

typedef struct ffunc {
  int magic;
  fkernel *k;
  fctx *ctx;
  unsigned long long ctx_id;
} ffunc;

struct flib {
  int loaded;
  unsigned char *image; /* the code read: a CUBIN or NUL-terminated PTX */
  size_t size;
  int is_ptx;
  cj_symtab syms;
  fkernel **kernels;
  size_t n_kernels;
  ffunc **funcs;
  size_t n_funcs;
};

/* ---- state, under one lock ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ndev = 2, inited, abort_on;
static pid_t init_pid;
static unsigned long long next_id = 1, next_seq = 1, finished_items;
static fctx ctxs[MAX_CTX]; /* [0, ndev): the primary contexts */
static fstream legacy[MAX_CTX], streams[MAX_STREAMS];
static fevent events[MAX_EVENTS];
static fpool pools[MAX_POOLS];
static falloc **allocs; /* every allocation ever made, live or not (freed ones pruned) */
static size_t n_allocs, cap_allocs;
static op *ops; /* queued work, in order */
static size_t n_ops, cap_ops;
static pinned *pins;
static size_t n_pins, cap_pins;
static flib **libs;
static size_t n_libs, cap_libs;
static struct range {
  CUdeviceptr lo, hi;
} * arena[MAX_DEV]; /* free address ranges of each device, by address */
static size_t n_arena[MAX_DEV], cap_arena[MAX_DEV];
static unsigned long n_violations;
/* The sticky error of a device fault: once a faulting kernel has run, every call that does
 * work returns it, in every context of the process, and nothing ends it (see the first
 * comment). */
static CUresult sticky_error;
static char report_text[65536];
static size_t report_len;
/* Each thread's current context and fault request. Thread-specific data rather than
 * thread-local variables: this library is loaded with dlopen, and LeakSanitizer misreads the
 * dynamic TLS of such a library in threads that the program made. */
static pthread_key_t current_key, fault_key, mode_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void keys_make(void) {
  pthread_key_create(&current_key, NULL);
  pthread_key_create(&fault_key, NULL);
  pthread_key_create(&mode_key, NULL);
}

static fctx *current_get(void) {
  pthread_once(&keys_once, keys_make);
  return pthread_getspecific(current_key);
}

static void current_set(fctx *c) {
  pthread_once(&keys_once, keys_make);
  pthread_setspecific(current_key, c);
}

static int fault_take(void) {
  int f;
  pthread_once(&keys_once, keys_make);
  f = pthread_getspecific(fault_key) != NULL;
  pthread_setspecific(fault_key, NULL);
  return f;
}

/* The last launch's parameter buffer: each parameter's bytes at its offset, gaps zero. */
static unsigned char last_params[4096];
static size_t last_params_len;

#define GROW(v, cap, need)                       \
  do {                                           \
    if ((need) > (cap)) {                        \
      size_t c_ = (cap) ? 2 * (cap) : 64;        \
      while (c_ < (need)) c_ *= 2;               \
      void *p_ = realloc((v), c_ * sizeof *(v)); \
      if (!p_) abort();                          \
      (v) = p_;                                  \
      (cap) = c_;                                \
    }                                            \
  } while (0)

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  size_t n;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  n = strlen(line);
  line[n++] = '\n';
  line[n] = '\0';
  n_violations++;
  if (report_len + n < sizeof report_text) {
    memcpy(report_text + report_len, line, n + 1);
  }
  report_len += n;
  if (abort_on) {
    fprintf(stderr, "checkdriver: %s", line);
    abort();
  }
}

/* A child made by fork() gets the lock anew (another thread may have held it at the fork).
 * The lock is not taken for the fork: this library is loaded after cujit, so its fork
 * hooks run before cujit's, and cujit's wait for its own threads that may be about to call
 * here (the context made beside a first compile), which would then wait for the lock until
 * cujit gave up on them. A call another thread had in flight at the fork may have left
 * the child's copy of the state half changed; a child's call after cuInit is flagged
 * before it reads any of it. */
static void lock_fork_child(void) { pthread_mutex_init(&lock, NULL); }

/* ---- calls counted, and failures asked for (checkdriver_calls, checkdriver_fail_next) ---- */

static struct {
  const char *name;
  unsigned long n;
} counted[256];            /* each entry point called so far, by the name it is entered under */
static char fail_name[64]; /* the entry point whose next calls fail; "" for none */
static CUresult fail_result;
static unsigned long fail_count; /* how many of them still fail */

/* Counts a call of `fn` (lock held): the failure asked for it, or CUDA_SUCCESS. */
static CUresult called(const char *fn) {
  size_t i;
  for (i = 0; i < sizeof counted / sizeof *counted && counted[i].name; i++)
    if (counted[i].name == fn || strcmp(counted[i].name, fn) == 0) break;
  if (i < sizeof counted / sizeof *counted) {
    counted[i].name = fn;
    counted[i].n++;
  }
  if (!fail_name[0] || strcmp(fail_name, fn) != 0) return CUDA_SUCCESS;
  if (--fail_count == 0) fail_name[0] = '\0';
  return fail_result;
}

/* Every entry point takes the lock through this; a call from a forked child is flagged. */
static int enter(const char *fn) {
  pthread_mutex_lock(&lock);
  if (inited && getpid() != init_pid) {
    violation("%s: the driver used in a child made by fork() after cuInit", fn);
    return 0;
  }
  return 1;
}

/* Enters entry point fn, counted; returns at once the failure asked for it. */
#define ENTER(fn)                                \
  do {                                           \
    CUresult asked_;                             \
    if (!enter(fn)) {                            \
      pthread_mutex_unlock(&lock);               \
      return CUDA_ERROR_NOT_INITIALIZED;         \
    }                                            \
    if ((asked_ = called(fn)) != CUDA_SUCCESS) { \
      pthread_mutex_unlock(&lock);               \
      return asked_;                             \
    }                                            \
  } while (0)
#define RETURN(r)                \
  do {                           \
    CUresult r_ = (r);           \
    pthread_mutex_unlock(&lock); \
    return r_;                   \
  } while (0)

/* ---- address ranges ---- */

static void arena_init(int dev) {
  GROW(arena[dev], cap_arena[dev], 1);
  arena[dev][0].lo = ARENA_BASE + (CUdeviceptr)dev * ARENA_SIZE;
  arena[dev][0].hi = arena[dev][0].lo + ARENA_SIZE;
  n_arena[dev] = 1;
}

static CUdeviceptr arena_take(int dev, size_t bytes) {
  size_t i;
  for (i = 0; i < n_arena[dev]; i++) {
    struct range *r = &arena[dev][i];
    if (r->hi - r->lo >= bytes) {
      CUdeviceptr p = r->lo;
      r->lo += bytes;
      if (r->lo == r->hi) {
        memmove(r, r + 1, (n_arena[dev] - i - 1) * sizeof *r);
        n_arena[dev]--;
      }
      return p;
    }
  }
  abort(); /* a terabyte per device is never used up by the tests */
}

static void arena_give(int dev, CUdeviceptr p, size_t bytes) {
  size_t i = 0, n = n_arena[dev];
  struct range *a;
  while (i < n && arena[dev][i].lo < p) i++;
  GROW(arena[dev], cap_arena[dev], n + 1);
  a = arena[dev];
  memmove(a + i + 1, a + i, (n - i) * sizeof *a);
  a[i].lo = p;
  a[i].hi = p + bytes;
  n_arena[dev] = ++n;
  if (i + 1 < n && a[i].hi == a[i + 1].lo) { /* join the next */
    a[i].hi = a[i + 1].hi;
    memmove(a + i + 1, a + i + 2, (n - i - 2) * sizeof *a);
    n_arena[dev] = --n;
  }
  if (i > 0 && a[i - 1].hi == a[i].lo) { /* join the previous */
    a[i - 1].hi = a[i].hi;
    memmove(a + i, a + i + 1, (n - i - 1) * sizeof *a);
    n_arena[dev] = --n;
  }
}

static int in_arena(CUdeviceptr p) {
  return p >= ARENA_BASE && p < ARENA_BASE + (CUdeviceptr)MAX_DEV * ARENA_SIZE;
}

/* ---- contexts ---- */

static void init_once(void) {
  const char *v = getenv("CHECKDRIVER_DEVICES");
  int i;
  if (inited) return;
  if (v && atoi(v) >= 1 && atoi(v) <= MAX_DEV) ndev = atoi(v);
  v = getenv("CHECKDRIVER_ABORT");
  if (v && strcmp(v, "1") == 0) abort_on = 1;
  for (i = 0; i < ndev; i++) {
    ctxs[i].used = ctxs[i].primary = 1;
    ctxs[i].dev = i;
    arena_init(i);
  }
  init_pid = getpid();
  inited = 1;
}

static int ctx_index(const fctx *c) { return (int)(c - ctxs); }

static int is_ctx(CUcontext h) {
  const fctx *c = (const fctx *)(void *)h;
  return c >= ctxs && c < ctxs + MAX_CTX;
}

static fstream *legacy_of(fctx *c) {
  fstream *s = &legacy[ctx_index(c)];
  s->used = s->legacy = 1;
  s->ctx = c;
  s->ctx_id = c->id;
  return s;
}

/* The current context, which the call `fn` needs: CUDA_SUCCESS, or the error the real
 * driver gives (flagged: cujit must not call there). The sticky error of a fault is
 * returned unflagged. */
static CUresult need_ctx(const char *fn, fctx **out) {
  fctx *c = current_get();
  *out = c;
  if (!c) {
    violation("%s: called with no current context", fn);
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (!c->used || !c->alive) {
    violation("%s: called in a dead context (reset or destroyed; ID %llu)", fn, c->id);
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  }
  if (sticky_error) return sticky_error;
  return CUDA_SUCCESS;
}

/* ---- allocations ---- */

static falloc *alloc_new(fctx *c, size_t bytes, fpool *pool) {
  falloc *a = calloc(1, sizeof *a);
  size_t reserved = (bytes + GRAIN - 1) / GRAIN * GRAIN;
  if (!a) abort();
  if (!reserved) reserved = GRAIN;
  a->reserved = reserved;
  a->size = bytes;
  a->base = arena_take(c->dev, reserved);
  a->host = malloc(reserved);
  if (!a->host) abort();
  memset(a->host, 0xcd, reserved); /* what fresh device memory holds: anything */
  a->dev = c->dev;
  a->ctx = c;
  a->ctx_id = c->id;
  a->pool = pool;
  GROW(allocs, cap_allocs, n_allocs + 1);
  allocs[n_allocs++] = a;
  return a;
}

/* Frees what an allocation no longer needs: its host copy once nothing queued reads it and
 * it is neither live nor kept in a pool. */
static void alloc_settle(falloc *a) {
  if (a->state != A_LIVE && !a->cached && a->refs == 0 && a->host) {
    free(a->host);
    a->host = NULL;
  }
}

/* The live allocation holding [p, p + n), else NULL; *dead_or_freed the newest other record
 * holding p. */
static falloc *alloc_find(CUdeviceptr p, size_t n, falloc **other) {
  size_t i;
  *other = NULL;
  for (i = n_allocs; i-- > 0;) {
    falloc *a = allocs[i];
    if (p < a->base || p >= a->base + (a->size ? a->size : 1)) continue;
    if (a->state == A_LIVE && n <= a->base + a->size - p) return a;
    if (!*other) *other = a;
  }
  return NULL;
}

/* Drops records of freed memory beyond the newest 1024 (whose host copies are gone). */
static void alloc_prune(void) {
  size_t i, j, old = 0;
  for (i = 0; i < n_allocs; i++) old += allocs[i]->state != A_LIVE && !allocs[i]->cached;
  if (old <= 2048) return;
  for (i = j = 0; i < n_allocs; i++) {
    falloc *a = allocs[i];
    if (old > 1024 && a->state != A_LIVE && !a->cached && a->refs == 0) {
      alloc_settle(a);
      free(a);
      old--;
      continue;
    }
    allocs[j++] = a;
  }
  n_allocs = j;
}

static const char *state_text(const falloc *a) {
  return a->state == A_DEAD ? "memory of a dead context" : "freed memory";
}

/* ---- ordering between streams ---- */

/* Whether work queued on stream `later` waits for work queued before it on `earlier`. */
static int ordered(const fstream *later, const fstream *earlier) {
  if (later == earlier) return 1;
  if (later->ctx != earlier->ctx) return 0;
  if (later->legacy) return !earlier->nonblocking;
  if (earlier->legacy) return !later->nonblocking;
  return 0;
}

static const char *op_name(int kind) {
  static const char *const names[] = {"a copy to the device",
                                      "a copy to the host",
                                      "a device copy",
                                      "a memset",
                                      "a kernel",
                                      "a free"};
  return names[kind];
}

static int overlaps(const touch *t, CUdeviceptr lo, CUdeviceptr hi, int write) {
  return t->lo < hi && lo < t->hi && (write || t->write);
}

/* Flags queued work on other streams, not ordered before new work on s, that touches
 * [lo, hi) (either writing). */
static void check_busy(const char *fn, fstream *s, CUdeviceptr lo, CUdeviceptr hi, int write) {
  size_t i;
  int k;
  for (i = 0; i < n_ops; i++) {
    const op *o = &ops[i];
    if (ordered(s, o->s)) continue;
    for (k = 0; k < o->nt + o->nkt; k++) {
      const touch *t = k < o->nt ? &o->t[k] : &o->kt[k - o->nt];
      if (overlaps(t, lo, hi, write)) {
        violation("%s: device memory 0x%llx (%llu bytes) is still in use by unfinished work "
                  "on another stream (%s queued there), which this is not ordered after",
                  fn, (unsigned long long)lo, (unsigned long long)(hi - lo), op_name(o->kind));
        return;
      }
    }
  }
}

/* Checks device memory [p, p + n) that a call `fn` on stream s in context c uses: live, of
 * c, not busy elsewhere. The allocation, or NULL (flagged) when it is not live memory. */
static falloc *use(const char *fn, fctx *c, fstream *s, CUdeviceptr p, size_t n, int write) {
  falloc *other, *a = alloc_find(p, n ? n : 1, &other);
  if (!a) {
    if (other)
      violation("%s: device address 0x%llx (%zu bytes) is %s (%s)", fn, (unsigned long long)p, n,
                state_text(other), other->freed_by ? other->freed_by : "its context died");
    else
      violation("%s: device address 0x%llx (%zu bytes) is not inside any allocation", fn,
                (unsigned long long)p, n);
    return NULL;
  }
  if (a->dev != c->dev)
    violation("%s: device address 0x%llx is memory of device %d, but device %d's context is "
              "current",
              fn, (unsigned long long)p, a->dev, c->dev);
  else if (a->ctx != c || a->ctx_id != c->id)
    violation("%s: device address 0x%llx is memory of another context (ID %llu) than the "
              "current one (ID %llu)",
              fn, (unsigned long long)p, a->ctx_id, c->id);
  if (s) check_busy(fn, s, p, p + n, write);
  return a;
}

/* ---- the queue ---- */

static op *op_new(fstream *s, int kind) {
  op *o;
  GROW(ops, cap_ops, n_ops + 1);
  o = &ops[n_ops++];
  memset(o, 0, sizeof *o);
  o->seq = next_seq++;
  o->kind = kind;
  o->s = s;
  o->ctx = s->ctx;
  o->ctx_id = s->ctx_id;
  return o;
}

static void op_touch(op *o, falloc *a, CUdeviceptr p, size_t n, int write) {
  touch *t = &o->t[o->nt++];
  t->a = a;
  t->lo = p;
  t->hi = p + n;
  t->write = write;
  if (a) a->refs++;
}

static void op_release(op *o) {
  int k;
  for (k = 0; k < o->nt + o->nkt; k++) {
    touch *t = k < o->nt ? &o->t[k] : &o->kt[k - o->nt];
    if (t->a) {
      t->a->refs--;
      alloc_settle(t->a);
    }
  }
  free(o->kt);
  free(o->snapshot);
}

static pinned *pinned_find(const void *p, size_t n) {
  const unsigned char *lo = p;
  size_t i;
  for (i = 0; i < n_pins; i++)
    if (lo >= pins[i].lo && lo + n <= pins[i].hi) return &pins[i];
  return NULL;
}

/* Does o's work. */
static void op_run(op *o) {
  unsigned char *dst, *src;
  finished_items++;
  switch (o->kind) {
    case OP_HTOD:
      dst = o->t[0].a->host + (o->t[0].lo - o->t[0].a->base);
      src = o->snapshot ? o->snapshot : o->host;
      if (!o->snapshot) {
        pinned *pin = pinned_find(o->host, o->n);
        if (!pin || pin->dead) {
          violation("a copy to the device read page-locked host memory %p that died before it "
                    "ran",
                    o->host);
          break;
        }
      }
      memcpy(dst, src, o->n);
      break;
    case OP_DTOH: {
      pinned *pin = pinned_find(o->host, o->n);
      if (!pin || pin->dead) {
        violation("a copy to the host wrote page-locked host memory %p that died before it ran",
                  o->host);
        break;
      }
      memcpy(o->host, o->t[1].a->host + (o->t[1].lo - o->t[1].a->base), o->n);
      break;
    }
    case OP_DTOD:
      memmove(o->t[0].a->host + (o->t[0].lo - o->t[0].a->base),
              o->t[1].a->host + (o->t[1].lo - o->t[1].a->base), o->n);
      break;
    case OP_SET: memset(o->t[0].a->host + (o->t[0].lo - o->t[0].a->base), o->value, o->n); break;
    case OP_KERNEL:
      if (o->fault) sticky_error = CUDA_ERROR_ILLEGAL_ADDRESS; /* the process's CUDA ends */
      break;
    case OP_FREE: o->freed->free_done = 1; break;
    default: break;
  }
}

/* Frees the slots of streams destroyed with work queued, once it has all run. */
static int n_destroyed;
static void streams_reap(void) {
  size_t i, k;
  if (!n_destroyed) return;
  for (i = 0; i < MAX_STREAMS; i++) {
    int busy = 0;
    if (!streams[i].used || !streams[i].destroyed) continue;
    for (k = 0; k < n_ops && !busy; k++) busy = ops[k].s == &streams[i];
    if (!busy) {
      streams[i].used = 0;
      n_destroyed--;
    }
  }
}

/* Runs queued work: every item `need` marks, in queue order; once a fault has run, the
 * rest is dropped (the device runs nothing more for the process). */
static void run_marked(const char *need) {
  size_t i, j;
  for (i = j = 0; i < n_ops; i++) {
    op *o = &ops[i];
    if (!need[i]) {
      ops[j++] = *o;
      continue;
    }
    if (!sticky_error && o->ctx->alive && o->ctx->id == o->ctx_id) op_run(o);
    op_release(o);
  }
  n_ops = j;
  streams_reap();
}

/* Marks what must finish for queued work up to sequence `upto` on stream s (all of its
 * queue when upto is 0) to finish: that work and, transitively, the work on other streams
 * it waits for. */
static void mark_waited(char *need);
static char *mark_for(fstream *s, unsigned long long upto) {
  char *need = calloc(n_ops + 1, 1);
  size_t i;
  if (!need) abort();
  for (i = 0; i < n_ops; i++) need[i] = ops[i].s == s && (!upto || ops[i].seq <= upto);
  mark_waited(need);
  return need;
}

/* Marks, transitively, the work the marked work waits for. */
static void mark_waited(char *need) {
  size_t i, k;
  int grew = 1;
  while (grew) {
    grew = 0;
    for (i = n_ops; i-- > 0;) {
      if (!need[i]) continue;
      for (k = 0; k < i; k++)
        if (!need[k] && ordered(ops[i].s, ops[k].s)) need[k] = grew = 1;
    }
  }
}

static void pools_release(void);

static void finish_stream(fstream *s, unsigned long long upto) {
  char *need = mark_for(s, upto);
  run_marked(need);
  free(need);
  pools_release();
}

static void finish_ctx(fctx *c) {
  char *need = calloc(n_ops + 1, 1);
  size_t i;
  if (!need) abort();
  for (i = 0; i < n_ops; i++) need[i] = ops[i].ctx == c;
  run_marked(need);
  free(need);
  pools_release();
}

/* Drops the queued work of context c (it died). */
static void drop_ctx_work(fctx *c) {
  size_t i, j;
  for (i = j = 0; i < n_ops; i++) {
    if (ops[i].ctx == c) {
      op_release(&ops[i]);
      continue;
    }
    ops[j++] = ops[i];
  }
  n_ops = j;
  streams_reap();
}

static CUresult sticky(void) { return sticky_error; }

/* The stream a handle names in context c (NULL and the special handles: its legacy
 * stream); NULL, flagged, for a destroyed stream or one of another or a dead context. */
static fstream *stream_of(const char *fn, fctx *c, CUstream h) {
  fstream *s = (fstream *)(void *)h;
  if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) return legacy_of(c);
  if (s < streams || s >= streams + MAX_STREAMS || !s->used || s->destroyed) {
    violation("%s: stream %p is not a live stream", fn, (void *)h);
    return NULL;
  }
  if (!s->ctx->alive || s->ctx->id != s->ctx_id) {
    violation("%s: stream %p belongs to a dead context (ID %llu)", fn, (void *)h, s->ctx_id);
    return NULL;
  }
  if (s->ctx != c)
    violation("%s: stream %p belongs to another context than the current one", fn, (void *)h);
  return s;
}

/* ---- stream capture: what a capturing stream records, and what a capture forbids ----
 *
 * Work queued on a stream being captured (copies, memsets, launches, graph launches) is
 * recorded as nodes of the capture's graph instead of queued, its memory checked live now
 * and again at each launch of the graph. A call the real driver refuses during a capture
 * fails as cuda.h documents it, and invalidates the captures it conflicts with (the end then
 * returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED): waiting for a capturing stream, its
 * context or an event recorded in a capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
 * CUDA_ERROR_CAPTURED_EVENT), the legacy stream while a blocking stream of its context is
 * captured (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), a copy of pageable host memory, and the
 * calls cuda.h calls potentially unsafe (its example is cudaMalloc) made in a thread whose
 * capture mode forbids them: cuMemAlloc, cuMemFree, cuMemHostAlloc, cuMemFreeHost,
 * cuMemHostRegister and Unregister, cuLibraryLoadData and Unload, cuKernelGetFunction (which
 * of these the real driver refuses is inferred, not seen: all are taken as unsafe, so that a
 * test sees a library make them in the relaxed mode). */

struct gnode {
  int kind;             /* OP_HTOD, OP_DTOH, OP_DTOD, OP_SET, OP_KERNEL */
  CUdeviceptr dst, src; /* device sides */
  void *host;           /* the page-locked host side of a copy */
  size_t n;
  unsigned char value;   /* a memset's */
  const void *h;         /* a kernel's handle: CUkernel or CUfunction */
  unsigned char *params; /* its parameters, each at its offset */
  size_t params_len;
  unsigned dims[6]; /* grid, block */
};

struct fgraph {
  int magic;
  fctx *ctx;
  unsigned long long ctx_id;
  gnode **nodes;
  size_t n, cap;
};

enum { MAGIC_GRAPH = 0x67726170, MAGIC_EXEC = 0x65786563 };
static int n_capturing; /* streams capturing now: every check below is skipped at 0 */
static unsigned long n_capture_queries; /* cuStreamIsCapturing and cuStreamGetCaptureInfo */
static int host_pinned(const char *fn, const void *p, size_t n);

static int thread_mode(void) {
  pthread_once(&keys_once, keys_make);
  return (int)(uintptr_t)pthread_getspecific(mode_key); /* 0: global, the default */
}

/* Calls cuda.h deems unsafe during a capture: refused (and the captures that forbid them
 * invalidated) unless this thread's mode is relaxed, while this thread has a capture that is
 * not relaxed, or (in global mode) another thread has a global one. */
static CUresult unsafe_gate(void) {
  int mode, refused = 0, i;
  pthread_t self = pthread_self();
  if (!n_capturing || (mode = thread_mode()) == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
  for (i = 0; i < MAX_STREAMS; i++) {
    fstream *s = &streams[i];
    if (!s->used || !s->cap || s->cap_mode == CU_STREAM_CAPTURE_MODE_RELAXED) continue;
    if (pthread_equal(s->cap_thread, self) ||
        (mode == CU_STREAM_CAPTURE_MODE_GLOBAL && s->cap_mode == CU_STREAM_CAPTURE_MODE_GLOBAL))
      s->cap_invalid = refused = 1;
  }
  return refused ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* Work on the legacy stream while a blocking stream of its context is captured: it would
 * wait for captured work. */
static CUresult legacy_gate(fctx *c, const fstream *s) {
  int refused = 0, i;
  if (!n_capturing || !s->legacy) return CUDA_SUCCESS;
  for (i = 0; i < MAX_STREAMS; i++)
    if (streams[i].used && streams[i].cap && streams[i].ctx == c && !streams[i].nonblocking)
      streams[i].cap_invalid = refused = 1;
  return refused ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

/* A wait for the whole context while a stream of it is captured. */
static CUresult ctx_gate(fctx *c) {
  int refused = 0, i;
  if (!n_capturing) return CUDA_SUCCESS;
  for (i = 0; i < MAX_STREAMS; i++)
    if (streams[i].used && streams[i].cap && streams[i].ctx == c)
      streams[i].cap_invalid = refused = 1;
  return refused ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* What a capturing stream refuses: the call fails and the capture is invalidated. */
static CUresult capture_refuse(fstream *s, CUresult r) {
  s->cap_invalid = 1;
  return r;
}

static gnode *node_add(fstream *s, int kind) {
  gnode *g = calloc(1, sizeof *g);
  if (!g) abort();
  g->kind = kind;
  GROW(s->cap->nodes, s->cap->cap, s->cap->n + 1);
  s->cap->nodes[s->cap->n++] = g;
  s->cap_last = g;
  return g;
}

/* A copy or memset recorded by a capturing stream: its device memory must be live (and the
 * host side page-locked) now; each launch of the graph checks them again. */
static CUresult capture_copy(const char *fn, fctx *c, fstream *s, int kind, CUdeviceptr dst,
                             CUdeviceptr src, void *host, size_t n, unsigned char value) {
  gnode *g;
  if (s->cap_invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (!n) return CUDA_SUCCESS;
  if ((kind == OP_HTOD || kind == OP_DTOH) && host_pinned(fn, host, n) <= 0)
    return capture_refuse(s, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); /* pageable */
  if ((kind != OP_DTOH && !use(fn, c, NULL, dst, n, 1)) ||
      ((kind == OP_DTOH || kind == OP_DTOD) && !use(fn, c, NULL, src, n, 0)))
    return CUDA_ERROR_INVALID_VALUE;
  g = node_add(s, kind);
  g->dst = dst;
  g->src = src;
  g->host = host;
  g->n = n;
  g->value = value;
  return CUDA_SUCCESS;
}

/* ---- pools ---- */

static fpool *default_pool(int dev, fctx *c) {
  int i;
  for (i = 0; i < MAX_POOLS; i++)
    if (pools[i].used && pools[i].is_default && pools[i].dev == dev && !pools[i].dead)
      return &pools[i];
  for (i = 0; i < MAX_POOLS && pools[i].used; i++) {
  }
  if (i == MAX_POOLS) abort();
  pools[i].used = pools[i].is_default = 1;
  pools[i].dev = dev;
  pools[i].ctx = c;
  pools[i].ctx_id = c->id;
  return &pools[i];
}

static size_t pool_reserved(const fpool *p, int used_only) {
  size_t i, n = 0;
  for (i = 0; i < n_allocs; i++)
    if (allocs[i]->pool == p && (allocs[i]->state == A_LIVE || (!used_only && allocs[i]->cached)))
      n += allocs[i]->reserved;
  return n;
}

/* Gives back what pool p keeps, freed and done, above `keep` bytes. */
static void pool_trim(fpool *p, size_t keep) {
  size_t i, have = pool_reserved(p, 0);
  for (i = 0; i < n_allocs && have > keep; i++) {
    falloc *a = allocs[i];
    if (a->pool != p || !a->cached || !a->free_done) continue;
    a->cached = 0;
    have -= a->reserved;
    arena_give(a->dev, a->base, a->reserved);
    alloc_settle(a);
  }
}

static void pools_release(void) {
  int i;
  for (i = 0; i < MAX_POOLS; i++)
    if (pools[i].used && !pools[i].dead)
      pool_trim(&pools[i], pools[i].threshold > SIZE_MAX ? SIZE_MAX : (size_t)pools[i].threshold);
}

static int pool_live(const char *fn, fpool *p, fctx *c) {
  if (p < pools || p >= pools + MAX_POOLS || !p->used) {
    violation("%s: %p is not a memory pool", fn, (void *)p);
    return 0;
  }
  if (p->dead || !p->ctx->alive || p->ctx->id != p->ctx_id) {
    violation("%s: memory pool %p was made in a context that died (ID %llu)", fn, (void *)p,
              p->ctx_id);
    return 0;
  }
  if (c && p->dev != c->dev)
    violation("%s: memory pool %p is device %d's, but device %d's context is current", fn,
              (void *)p, p->dev, c->dev);
  return 1;
}

static falloc *pool_take(fpool *p, fctx *c, fstream *s, size_t bytes) {
  size_t reserved = (bytes + GRAIN - 1) / GRAIN * GRAIN, i;
  falloc *a;
  if (!reserved) reserved = GRAIN;
  for (i = n_allocs; i-- > 0;) {
    a = allocs[i];
    if (a->pool != p || !a->cached || a->reserved != reserved) continue;
    if (!a->free_done && a->free_stream != s) continue; /* its free has not run */
    a->cached = 0;
    a->state = A_LIVE;
    a->size = bytes;
    a->ctx = c;
    a->ctx_id = c->id;
    a->freed_by = NULL;
    a->free_stream = NULL;
    return a;
  }
  return alloc_new(c, bytes, p);
}

/* ---- dying ---- */

static void graph_drop(fgraph *g);

static void kill_ctx(fctx *c) {
  size_t i;
  drop_ctx_work(c);
  for (i = 0; i < n_allocs; i++) {
    falloc *a = allocs[i];
    if (a->ctx != c || a->ctx_id != c->id || (a->state != A_LIVE && !a->cached)) continue;
    if (!a->pool) arena_give(a->dev, a->base, a->reserved); /* handed out again */
    a->state = A_DEAD;
    a->cached = 0;
    alloc_settle(a);
  }
  for (i = 0; i < MAX_STREAMS; i++)
    if (streams[i].used && streams[i].ctx == c && streams[i].ctx_id == c->id) {
      if (streams[i].cap) { /* its capture dies with it */
        graph_drop(streams[i].cap);
        streams[i].cap = NULL;
        n_capturing--;
      }
      streams[i].used = 0;
    }
  for (i = 0; i < MAX_EVENTS; i++)
    if (events[i].used && events[i].ctx == c && events[i].ctx_id == c->id) events[i].used = 0;
  for (i = 0; i < MAX_POOLS; i++)
    if (pools[i].used && pools[i].ctx == c && pools[i].ctx_id == c->id) pools[i].dead = 1;
  for (i = 0; i < n_pins; i++)
    if (pins[i].ctx == c && pins[i].ctx_id == c->id && !pins[i].dead) {
      pins[i].dead = 1;
      /* unmapped, as the real driver does; the range stays reserved, inaccessible */
      if (pins[i].mapped &&
          mmap(pins[i].lo, (size_t)(pins[i].hi - pins[i].lo), PROT_NONE,
               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
        abort();
    }
  c->alive = 0;
}

/* ---- entry points: driver, devices ---- */

static CUresult f_init(unsigned flags) {
  (void)flags;
  pthread_mutex_lock(&lock);
  init_once();
  RETURN(CUDA_SUCCESS);
}

static CUresult f_version(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

static CUresult f_error_name(CUresult r, const char **s) {
  switch (r) {
#define NAME_(e) \
  case e: *s = #e; break;
    NAME_(CUDA_SUCCESS)
    NAME_(CUDA_ERROR_INVALID_VALUE)
    NAME_(CUDA_ERROR_OUT_OF_MEMORY)
    NAME_(CUDA_ERROR_NOT_INITIALIZED)
    NAME_(CUDA_ERROR_INVALID_DEVICE)
    NAME_(CUDA_ERROR_INVALID_IMAGE)
    NAME_(CUDA_ERROR_INVALID_CONTEXT)
    NAME_(CUDA_ERROR_CONTEXT_IS_DESTROYED)
    NAME_(CUDA_ERROR_NO_BINARY_FOR_GPU)
    NAME_(CUDA_ERROR_INVALID_HANDLE)
    NAME_(CUDA_ERROR_NOT_FOUND)
    NAME_(CUDA_ERROR_NOT_READY)
    NAME_(CUDA_ERROR_ILLEGAL_ADDRESS)
    NAME_(CUDA_ERROR_NOT_SUPPORTED)
    NAME_(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
    NAME_(CUDA_ERROR_ILLEGAL_STATE)
    NAME_(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    NAME_(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    NAME_(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
    NAME_(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    NAME_(CUDA_ERROR_CAPTURED_EVENT)
    NAME_(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
    NAME_(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
#undef NAME_
    default: *s = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}

static CUresult f_device_count(int *n) {
  pthread_mutex_lock(&lock);
  init_once();
  *n = ndev;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_device_get(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ordinal >= 0 && ordinal < ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult f_device_name(char *name, int len, CUdevice d) {
  snprintf(name, (size_t)len, "checking fake CUDA device %d", (int)d);
  return CUDA_SUCCESS;
}

static CUresult f_device_attribute(int *v, CUdevice_attribute a, CUdevice d) {
  if (d < 0 || d >= ndev) return CUDA_ERROR_INVALID_DEVICE;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: *v = 1; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

/* ---- contexts ---- */

static unsigned long primary_retains; /* cuDevicePrimaryCtxRetain calls (atomic) */
static long primary_maker;            /* the thread that first made one alive (atomic) */

/* CHECKDRIVER_CONTEXT_DELAY_MS, slept before a retain; CHECKDRIVER_RETAIN_FAIL's CUresult
 * (0: none). */
static void retain_knobs(long *delay_ms, int *fail) {
  const char *v = getenv("CHECKDRIVER_CONTEXT_DELAY_MS");
  *delay_ms = v ? atol(v) : 0;
  v = getenv("CHECKDRIVER_RETAIN_FAIL");
  *fail = v ? atoi(v) : 0;
}

static CUresult f_primary_retain(CUcontext *out, CUdevice d) {
  struct timespec nap;
  fctx *c;
  long delay_ms, zero = 0;
  int fail;
  __atomic_fetch_add(&primary_retains, 1, __ATOMIC_RELAXED);
  retain_knobs(&delay_ms, &fail);
  if (delay_ms > 0) {
    nap.tv_sec = delay_ms / 1000;
    nap.tv_nsec = delay_ms % 1000 * 1000000L;
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
    }
  }
  ENTER("cuDevicePrimaryCtxRetain");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  if (fail) RETURN((CUresult)fail);
  if (sticky_error) RETURN(sticky_error);
  c = &ctxs[d];
  if (!c->alive) {
    c->alive = 1;
    c->id = next_id++;
    __atomic_compare_exchange_n(&primary_maker, &zero, (long)syscall(SYS_gettid), 0,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
  c->retains++;
  *out = (CUcontext)(void *)c;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_primary_release(CUdevice d) {
  fctx *c;
  ENTER("cuDevicePrimaryCtxRelease");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  c = &ctxs[d];
  if (c->retains <= 0) {
    violation("cuDevicePrimaryCtxRelease: device %d's primary context is not retained", (int)d);
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (--c->retains == 0 && c->alive) kill_ctx(c);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_primary_state(CUdevice d, unsigned *flags, int *active) {
  ENTER("cuDevicePrimaryCtxGetState");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  *flags = 0;
  *active = ctxs[d].alive;
  RETURN(CUDA_SUCCESS);
}

/* After a fault the reset still answers CUDA_SUCCESS and kills the context, but the error
 * stays: no retain brings a context back (see the first comment). */
static CUresult f_primary_reset(CUdevice d) {
  ENTER("cuDevicePrimaryCtxReset");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  if (ctxs[d].alive) kill_ctx(&ctxs[d]);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_ctx_create(CUcontext *out, CUctxCreateParams *params, unsigned flags,
                             CUdevice d) {
  int i;
  (void)params, (void)flags;
  ENTER("cuCtxCreate");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  if (sticky_error) RETURN(sticky_error);
  for (i = ndev; i < MAX_CTX && ctxs[i].used; i++) {
  }
  if (i == MAX_CTX) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  memset(&ctxs[i], 0, sizeof ctxs[i]);
  ctxs[i].used = ctxs[i].alive = 1;
  ctxs[i].dev = d;
  ctxs[i].id = next_id++;
  current_set(&ctxs[i]);
  *out = (CUcontext)(void *)&ctxs[i];
  RETURN(CUDA_SUCCESS);
}

static CUresult f_ctx_destroy(CUcontext h) {
  fctx *c = (fctx *)(void *)h;
  ENTER("cuCtxDestroy");
  if (!is_ctx(h) || c->primary || !c->used) {
    violation("cuCtxDestroy: %p is not a context made with cuCtxCreate", (void *)h);
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (c->alive) kill_ctx(c);
  c->used = 0;
  if (current_get() == c) current_set(NULL);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_ctx_get(CUcontext *out) {
  *out = (CUcontext)(void *)current_get();
  return CUDA_SUCCESS;
}

/* After a fault it fails with the sticky error and changes nothing (see the first
 * comment). */
static CUresult f_ctx_set(CUcontext h) {
  CUresult r;
  if (h && !is_ctx(h)) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  if ((r = called("cuCtxSetCurrent")) == CUDA_SUCCESS) r = sticky_error;
  pthread_mutex_unlock(&lock);
  if (r != CUDA_SUCCESS) return r;
  current_set((fctx *)(void *)h);
  return CUDA_SUCCESS;
}

static CUresult f_ctx_device(CUdevice *d) {
  fctx *c = current_get();
  CUresult r;
  ENTER("cuCtxGetDevice");
  /* after a fault a program cannot make another context current than the dead one it may
   * have reset (cuCtxSetCurrent fails): asking which device it is is not flagged then */
  if (sticky_error && c && (!c->used || !c->alive)) RETURN(CUDA_ERROR_CONTEXT_IS_DESTROYED);
  if ((r = need_ctx("cuCtxGetDevice", &c)) == CUDA_ERROR_INVALID_CONTEXT ||
      r == CUDA_ERROR_CONTEXT_IS_DESTROYED)
    RETURN(r);
  *d = c->dev;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_ctx_id(CUcontext h, unsigned long long *id) {
  fctx *c = h ? (fctx *)(void *)h : current_get();
  ENTER("cuCtxGetId");
  if (!c) {
    violation("cuCtxGetId: no context given and none current");
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (!is_ctx((CUcontext)(void *)c) || !c->used || !c->alive)
    RETURN(CUDA_ERROR_CONTEXT_IS_DESTROYED);
  *id = c->id;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_ctx_sync(void) {
  fctx *c;
  CUresult r;
  ENTER("cuCtxSynchronize");
  if ((r = need_ctx("cuCtxSynchronize", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = ctx_gate(c)) != CUDA_SUCCESS) RETURN(r);
  finish_ctx(c);
  RETURN(sticky());
}

/* ---- memory ---- */

static CUresult f_mem_alloc(CUdeviceptr *p, size_t bytes) {
  fctx *c;
  CUresult r;
  ENTER("cuMemAlloc");
  if ((r = need_ctx("cuMemAlloc", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!bytes) RETURN(CUDA_ERROR_INVALID_VALUE);
  *p = alloc_new(c, bytes, NULL)->base;
  alloc_prune();
  RETURN(CUDA_SUCCESS);
}

/* Marks allocation a freed by `fn` (checked: live, of the current context). */
static CUresult free_checked(const char *fn, fctx *c, fstream *s, CUdeviceptr p, falloc **out) {
  falloc *other, *a = alloc_find(p, 1, &other);
  *out = NULL;
  if (!a || a->base != p) {
    if (a)
      violation("%s: 0x%llx is inside an allocation, not its start", fn, (unsigned long long)p);
    else if (other && other->base == p)
      violation("%s: 0x%llx is %s (%s)", fn, (unsigned long long)p, state_text(other),
                other->freed_by ? other->freed_by : "its context died");
    else
      violation("%s: 0x%llx was never allocated", fn, (unsigned long long)p);
    return CUDA_ERROR_INVALID_VALUE;
  }
  use(fn, c, s, p, a->size, 1);
  *out = a;
  return CUDA_SUCCESS;
}

/* A free asked after a fault: it fails with the sticky error and frees nothing (the memory
 * stays allocated until the process ends), but is checked all the same: a free of memory
 * that is freed, dead or was never allocated, or a second free of memory whose first free
 * failed so, is flagged (the program cannot know whether the first one took). */
static CUresult refuse_free(const char *fn, fctx *c, CUdeviceptr p) {
  falloc *a;
  if (free_checked(fn, c, NULL, p, &a) == CUDA_SUCCESS) {
    if (a->refused)
      violation("%s: 0x%llx freed twice (its first free failed with the sticky error of a "
                "fault)",
                fn, (unsigned long long)p);
    a->refused = 1;
  }
  return sticky_error;
}

static CUresult f_mem_free(CUdeviceptr p) {
  fctx *c;
  falloc *a;
  CUresult r;
  ENTER("cuMemFree");
  r = need_ctx("cuMemFree", &c);
  if (r != CUDA_SUCCESS && r == sticky_error) RETURN(refuse_free("cuMemFree", c, p));
  if (r != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  finish_ctx(c); /* the real driver waits for the device before freeing */
  if ((r = sticky()) != CUDA_SUCCESS) RETURN(r);
  /* work queued in other contexts is not waited for */
  if ((r = free_checked("cuMemFree", c, legacy_of(c), p, &a)) != CUDA_SUCCESS) RETURN(r);
  if (a->pool)
    violation("cuMemFree: 0x%llx is pool memory (free it with cuMemFreeAsync)",
              (unsigned long long)p);
  a->state = A_FREED;
  a->freed_by = "freed by cuMemFree";
  if (!a->pool) arena_give(a->dev, a->base, a->reserved);
  alloc_settle(a);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_mem_info(size_t *free_b, size_t *total) {
  fctx *c;
  size_t used = 0, i;
  CUresult r;
  ENTER("cuMemGetInfo");
  if ((r = need_ctx("cuMemGetInfo", &c)) != CUDA_SUCCESS) RETURN(r);
  for (i = 0; i < n_allocs; i++)
    if (allocs[i]->dev == c->dev && (allocs[i]->state == A_LIVE || allocs[i]->cached))
      used += allocs[i]->reserved;
  *total = (size_t)80 << 30;
  *free_b = *total - used;
  RETURN(CUDA_SUCCESS);
}

/* ---- page-locked host memory ---- */

static CUresult f_host_alloc(void **p, size_t bytes, unsigned flags) {
  fctx *c;
  CUresult r;
  size_t len = (bytes + 4095) / 4096 * 4096;
  void *m;
  (void)flags;
  ENTER("cuMemHostAlloc");
  if ((r = need_ctx("cuMemHostAlloc", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!bytes) RETURN(CUDA_ERROR_INVALID_VALUE);
  m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  GROW(pins, cap_pins, n_pins + 1);
  pins[n_pins].lo = m;
  pins[n_pins].hi = (unsigned char *)m + len;
  pins[n_pins].mapped = 1;
  pins[n_pins].dead = 0;
  pins[n_pins].ctx = c;
  pins[n_pins].ctx_id = c->id;
  n_pins++;
  *p = m;
  RETURN(CUDA_SUCCESS);
}

static void pin_remove(size_t i) {
  if (pins[i].mapped) munmap(pins[i].lo, (size_t)(pins[i].hi - pins[i].lo));
  pins[i] = pins[--n_pins];
}

static CUresult f_host_free(void *p) {
  fctx *c;
  CUresult r;
  size_t i;
  ENTER("cuMemFreeHost");
  if ((r = need_ctx("cuMemFreeHost", &c)) != CUDA_SUCCESS && r != sticky_error) RETURN(r);
  if (!r && (r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!r) finish_ctx(c);
  for (i = 0; i < n_pins; i++)
    if (pins[i].lo == p && pins[i].mapped) break;
  if (i == n_pins) {
    violation("cuMemFreeHost: %p is not page-locked memory from cuMemHostAlloc", p);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  if (r) { /* after a fault: refused, checked as refuse_free() checks device memory */
    if (pins[i].refused)
      violation("cuMemFreeHost: %p freed twice (its first free failed with the sticky error "
                "of a fault)",
                p);
    pins[i].refused = 1;
    RETURN(r);
  }
  if (pins[i].dead)
    violation("cuMemFreeHost: %p is page-locked memory of a dead context (ID %llu)", p,
              pins[i].ctx_id);
  pin_remove(i);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_host_register(void *p, size_t bytes, unsigned flags) {
  fctx *c;
  CUresult r;
  (void)flags;
  ENTER("cuMemHostRegister");
  if ((r = need_ctx("cuMemHostRegister", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!p || !bytes || pinned_find(p, 1)) RETURN(CUDA_ERROR_INVALID_VALUE);
  GROW(pins, cap_pins, n_pins + 1);
  pins[n_pins].lo = p;
  pins[n_pins].hi = (unsigned char *)p + bytes;
  pins[n_pins].mapped = 0;
  pins[n_pins].dead = 0;
  pins[n_pins].ctx = c;
  pins[n_pins].ctx_id = c->id;
  n_pins++;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_host_unregister(void *p) {
  fctx *c;
  CUresult r;
  size_t i;
  ENTER("cuMemHostUnregister");
  if ((r = need_ctx("cuMemHostUnregister", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  finish_ctx(c);
  for (i = 0; i < n_pins; i++)
    if (pins[i].lo == p && !pins[i].mapped) break;
  if (i == n_pins) RETURN(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  pin_remove(i);
  RETURN(CUDA_SUCCESS);
}

/* Whether host memory [p, p + n) is page-locked; flags page-locked memory of a dead
 * context (it is unmapped there). */
static int host_pinned(const char *fn, const void *p, size_t n) {
  pinned *pin = pinned_find(p, n ? n : 1);
  if (pin && pin->dead) {
    violation("%s: host memory %p is page-locked memory of a dead context (ID %llu)", fn, p,
              pin->ctx_id);
    return -1;
  }
  return pin != NULL;
}

/* ---- copies and memsets ---- */

/* A copy or memset asked after a fault (need_ctx gave r, the sticky error): it does nothing,
 * but the device memory [p, p + n) it names is checked all the same; freed memory or memory
 * of a dead context is flagged. Other errors are returned as they are. */
static CUresult refuse_use(const char *fn, CUresult r, CUdeviceptr p, size_t n) {
  falloc *other;
  if (r == CUDA_SUCCESS || r != sticky_error || !n) return r;
  if (!alloc_find(p, n, &other) && other)
    violation("%s: device address 0x%llx (%zu bytes) is %s (%s)", fn, (unsigned long long)p, n,
              state_text(other), other->freed_by ? other->freed_by : "its context died");
  return r;
}

static CUresult htod(const char *fn, CUdeviceptr dst, const void *src, size_t n, CUstream h,
                     int sync) {
  fctx *c;
  fstream *s;
  falloc *a;
  op *o;
  CUresult r;
  int pin;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return refuse_use(fn, r, dst, n);
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) return capture_copy(fn, c, s, OP_HTOD, dst, 0, (void *)(uintptr_t)src, n, 0);
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!n) return CUDA_SUCCESS;
  if ((pin = host_pinned(fn, src, n)) < 0) return CUDA_ERROR_INVALID_VALUE;
  if (sync && !pin) finish_stream(s, 0); /* a stream sync before a pageable copy */
  if ((r = sticky()) != CUDA_SUCCESS) return r;
  if (!(a = use(fn, c, s, dst, n, 1))) return CUDA_ERROR_INVALID_VALUE;
  o = op_new(s, OP_HTOD);
  op_touch(o, a, dst, n, 1);
  o->n = n;
  if (pin) {
    o->host = (void *)(uintptr_t)src;
  } else {
    if (!(o->snapshot = malloc(n))) abort();
    memcpy(o->snapshot, src, n);
  }
  if (sync && pin) finish_stream(s, o->seq);
  return sticky();
}

static CUresult dtoh(const char *fn, void *dst, CUdeviceptr src, size_t n, CUstream h, int sync) {
  fctx *c;
  fstream *s;
  falloc *a;
  op *o;
  CUresult r;
  int pin;
  unsigned char *bounce = NULL;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return refuse_use(fn, r, src, n);
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) return capture_copy(fn, c, s, OP_DTOH, 0, src, dst, n, 0);
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!n) return CUDA_SUCCESS;
  if ((pin = host_pinned(fn, dst, n)) < 0) return CUDA_ERROR_INVALID_VALUE;
  if (!(a = use(fn, c, s, src, n, 0))) return CUDA_ERROR_INVALID_VALUE;
  o = op_new(s, OP_DTOH);
  o->t[0].a = NULL;
  o->nt = 1; /* the host side */
  op_touch(o, a, src, n, 0);
  o->n = n;
  if (pin) {
    o->host = dst;
  } else { /* the driver copies through its own page-locked buffer and waits */
    GROW(pins, cap_pins, n_pins + 1);
    bounce = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bounce == MAP_FAILED) abort();
    pins[n_pins].lo = bounce;
    pins[n_pins].hi = bounce + n;
    pins[n_pins].mapped = 1;
    pins[n_pins].dead = 0;
    pins[n_pins].ctx = NULL;
    pins[n_pins].ctx_id = 0;
    n_pins++;
    o->host = bounce;
  }
  if (sync || !pin) finish_stream(s, o->seq);
  if (bounce) {
    size_t i;
    if (!sticky_error) memcpy(dst, bounce, n);
    for (i = 0; i < n_pins; i++)
      if (pins[i].lo == bounce) pin_remove(i);
  }
  return sticky();
}

static CUresult dtod(const char *fn, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h) {
  fctx *c;
  fstream *s;
  falloc *a, *b;
  op *o;
  CUresult r;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS)
    return refuse_use(fn, refuse_use(fn, r, dst, n), src, n);
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) return capture_copy(fn, c, s, OP_DTOD, dst, src, NULL, n, 0);
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!n) return CUDA_SUCCESS;
  if (!(a = use(fn, c, s, dst, n, 1)) || !(b = use(fn, c, s, src, n, 0)))
    return CUDA_ERROR_INVALID_VALUE;
  o = op_new(s, OP_DTOD);
  op_touch(o, a, dst, n, 1);
  op_touch(o, b, src, n, 0);
  o->n = n;
  return sticky();
}

static CUresult memset8(const char *fn, CUdeviceptr dst, unsigned char v, size_t n, CUstream h) {
  fctx *c;
  fstream *s;
  falloc *a;
  op *o;
  CUresult r;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return refuse_use(fn, r, dst, n);
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) return capture_copy(fn, c, s, OP_SET, dst, 0, NULL, n, v);
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!n) return CUDA_SUCCESS;
  if (!(a = use(fn, c, s, dst, n, 1))) return CUDA_ERROR_INVALID_VALUE;
  o = op_new(s, OP_SET);
  op_touch(o, a, dst, n, 1);
  o->n = n;
  o->value = v;
  return sticky();
}

#define LOCKED(name, call) \
  ENTER(name);             \
  RETURN(call)

static CUresult f_htod(CUdeviceptr d, const void *s, size_t n) {
  LOCKED("cuMemcpyHtoD", htod("cuMemcpyHtoD", d, s, n, NULL, 1));
}
static CUresult f_htod_async(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  LOCKED("cuMemcpyHtoDAsync", htod("cuMemcpyHtoDAsync", d, s, n, st, 0));
}
static CUresult f_dtoh(void *d, CUdeviceptr s, size_t n) {
  LOCKED("cuMemcpyDtoH", dtoh("cuMemcpyDtoH", d, s, n, NULL, 1));
}
static CUresult f_dtoh_async(void *d, CUdeviceptr s, size_t n, CUstream st) {
  LOCKED("cuMemcpyDtoHAsync", dtoh("cuMemcpyDtoHAsync", d, s, n, st, 0));
}
static CUresult f_dtod_async(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  LOCKED("cuMemcpyDtoDAsync", dtod("cuMemcpyDtoDAsync", d, s, n, st));
}
static CUresult f_memset(CUdeviceptr d, unsigned char v, size_t n) {
  LOCKED("cuMemsetD8", memset8("cuMemsetD8", d, v, n, NULL));
}
static CUresult f_memset_async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
  LOCKED("cuMemsetD8Async", memset8("cuMemsetD8Async", d, v, n, st));
}

/* ---- pools ---- */

static CUresult f_pool_create(CUmemoryPool *out, const CUmemPoolProps *props) {
  fctx *c;
  CUresult r;
  int i;
  ENTER("cuMemPoolCreate");
  if ((r = need_ctx("cuMemPoolCreate", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
      props->location.id >= ndev)
    RETURN(CUDA_ERROR_INVALID_VALUE);
  for (i = 0; i < MAX_POOLS && pools[i].used; i++) {
  }
  if (i == MAX_POOLS) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  memset(&pools[i], 0, sizeof pools[i]);
  pools[i].used = 1;
  pools[i].dev = props->location.id;
  pools[i].ctx = c;
  pools[i].ctx_id = c->id;
  *out = (CUmemoryPool)(void *)&pools[i];
  RETURN(CUDA_SUCCESS);
}

static CUresult f_pool_destroy(CUmemoryPool h) {
  fpool *p = (fpool *)(void *)h;
  size_t i;
  ENTER("cuMemPoolDestroy");
  if (!pool_live("cuMemPoolDestroy", p, NULL)) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (sticky_error) RETURN(sticky_error);
  for (i = 0; i < n_allocs; i++)
    if (allocs[i]->pool == p && allocs[i]->state == A_LIVE)
      violation("cuMemPoolDestroy: pool %p still has 0x%llx allocated", (void *)p,
                (unsigned long long)allocs[i]->base);
  pool_trim(p, 0);
  p->used = 0;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_default_pool(CUmemoryPool *out, CUdevice d) {
  ENTER("cuDeviceGetDefaultMemPool");
  if (d < 0 || d >= ndev) RETURN(CUDA_ERROR_INVALID_DEVICE);
  if (sticky_error) RETURN(sticky_error);
  if (!ctxs[d].alive) RETURN(CUDA_ERROR_INVALID_CONTEXT);
  *out = (CUmemoryPool)(void *)default_pool(d, &ctxs[d]);
  RETURN(CUDA_SUCCESS);
}

static CUresult alloc_async(const char *fn, CUdeviceptr *p, size_t bytes, fpool *pool, CUstream h) {
  fctx *c;
  fstream *s;
  CUresult r;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return r;
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) { /* a memory node: not modelled */
    violation("%s: an allocation on a stream being captured (a graph memory node, which this "
              "driver does not model)",
              fn);
    return capture_refuse(s, CUDA_ERROR_NOT_SUPPORTED);
  }
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!pool) pool = default_pool(c->dev, c);
  if (!pool_live(fn, pool, c)) return CUDA_ERROR_INVALID_VALUE;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *p = pool_take(pool, c, s, bytes)->base;
  alloc_prune();
  return CUDA_SUCCESS;
}

static CUresult f_alloc_async(CUdeviceptr *p, size_t bytes, CUstream s) {
  LOCKED("cuMemAllocAsync", alloc_async("cuMemAllocAsync", p, bytes, NULL, s));
}

static CUresult f_alloc_from_pool(CUdeviceptr *p, size_t bytes, CUmemoryPool pool, CUstream s) {
  LOCKED("cuMemAllocFromPoolAsync",
         alloc_async("cuMemAllocFromPoolAsync", p, bytes, (fpool *)(void *)pool, s));
}

static CUresult f_free_async(CUdeviceptr p, CUstream h) {
  fctx *c;
  fstream *s;
  falloc *a;
  op *o;
  CUresult r;
  ENTER("cuMemFreeAsync");
  r = need_ctx("cuMemFreeAsync", &c);
  if (r != CUDA_SUCCESS && r == sticky_error) RETURN(refuse_free("cuMemFreeAsync", c, p));
  if (r != CUDA_SUCCESS) RETURN(r);
  if (!(s = stream_of("cuMemFreeAsync", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (s->cap) { /* a memory node: not modelled */
    violation("cuMemFreeAsync: 0x%llx freed on a stream being captured (a graph memory node, "
              "which this driver does not model)",
              (unsigned long long)p);
    RETURN(capture_refuse(s, CUDA_ERROR_NOT_SUPPORTED));
  }
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) RETURN(r);
  if ((r = free_checked("cuMemFreeAsync", c, s, p, &a)) != CUDA_SUCCESS) RETURN(r);
  if (a->pool && !pool_live("cuMemFreeAsync", a->pool, NULL)) RETURN(CUDA_ERROR_INVALID_VALUE);
  a->state = A_FREED;
  a->freed_by = "freed by cuMemFreeAsync";
  a->free_stream = s;
  a->free_done = 0;
  if (a->pool) {
    a->cached = 1;
    o = op_new(s, OP_FREE);
    o->freed = a;
  } else { /* cuMemAlloc memory freed in stream order: given back once it has run */
    finish_stream(s, 0);
    arena_give(a->dev, a->base, a->reserved);
    alloc_settle(a);
  }
  RETURN(sticky());
}

static CUresult f_pool_trim(CUmemoryPool h, size_t keep) {
  fpool *p = (fpool *)(void *)h;
  ENTER("cuMemPoolTrimTo");
  if (!pool_live("cuMemPoolTrimTo", p, NULL)) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (sticky_error) RETURN(sticky_error);
  pool_trim(p, keep);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_pool_set(CUmemoryPool h, CUmemPool_attribute attr, void *value) {
  fpool *p = (fpool *)(void *)h;
  ENTER("cuMemPoolSetAttribute");
  if (!pool_live("cuMemPoolSetAttribute", p, NULL)) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (sticky_error) RETURN(sticky_error);
  if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) p->threshold = *(cuuint64_t *)value;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_pool_get(CUmemoryPool h, CUmemPool_attribute attr, void *value) {
  fpool *p = (fpool *)(void *)h;
  ENTER("cuMemPoolGetAttribute");
  if (!pool_live("cuMemPoolGetAttribute", p, NULL)) RETURN(CUDA_ERROR_INVALID_VALUE);
  switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = pool_reserved(p, 0); break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = pool_reserved(p, 1); break;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = 1; break;
    default: RETURN(CUDA_ERROR_NOT_SUPPORTED);
  }
  RETURN(CUDA_SUCCESS);
}

/* ---- pointers ---- */

static int pointer_attr(CUpointer_attribute a, void *data, CUdeviceptr p) {
  falloc *other, *al = in_arena(p) ? alloc_find(p, 1, &other) : NULL;
  pinned *pin = pinned_find((const void *)(uintptr_t)p, 1);
  if (!al && !(pin && !pin->dead)) return 0;
  switch (a) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *(unsigned *)data = al ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = al ? al->dev : 0; break;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *(CUcontext *)data = (CUcontext)(void *)(al ? al->ctx : pin->ctx);
      break;
    default: return -1;
  }
  return 1;
}

static CUresult f_pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  int r;
  ENTER("cuPointerGetAttribute");
  r = pointer_attr(a, data, p);
  RETURN(r == 1 ? CUDA_SUCCESS : r == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED);
}

/* Ordinary memory is answered with zeros, as the real driver does. */
static CUresult f_pointer_attributes(unsigned n, CUpointer_attribute *a, void **data,
                                     CUdeviceptr p) {
  unsigned i;
  ENTER("cuPointerGetAttributes");
  for (i = 0; i < n; i++)
    if (pointer_attr(a[i], data[i], p) != 1) memset(data[i], 0, sizeof(unsigned));
  RETURN(CUDA_SUCCESS);
}

/* ---- streams and events ---- */

static CUresult f_stream_create(CUstream *out, unsigned flags) {
  fctx *c;
  CUresult r;
  int i;
  ENTER("cuStreamCreate");
  if ((r = need_ctx("cuStreamCreate", &c)) != CUDA_SUCCESS) RETURN(r);
  for (i = 0; i < MAX_STREAMS && streams[i].used; i++) {
  }
  if (i == MAX_STREAMS) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  memset(&streams[i], 0, sizeof streams[i]);
  streams[i].used = 1;
  streams[i].nonblocking = (flags & CU_STREAM_NON_BLOCKING) != 0;
  streams[i].ctx = c;
  streams[i].ctx_id = c->id;
  *out = (CUstream)(void *)&streams[i];
  RETURN(CUDA_SUCCESS);
}

/* A stream destroyed with work queued lets it finish first (cuda.h: its resources are
 * released once the device is done with it): here, when its context synchronises. */
static CUresult f_stream_destroy(CUstream h) {
  fctx *c;
  fstream *s;
  size_t i;
  int busy = 0;
  CUresult r;
  ENTER("cuStreamDestroy");
  if ((r = need_ctx("cuStreamDestroy", &c)) != CUDA_SUCCESS && r != CUDA_ERROR_ILLEGAL_ADDRESS)
    RETURN(r);
  if (!h || !(s = stream_of("cuStreamDestroy", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (s->cap) RETURN(capture_refuse(s, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED));
  for (i = 0; i < n_ops; i++) busy |= ops[i].s == s;
  if (busy) {
    s->destroyed = 1; /* the slot is kept until its work is done */
    n_destroyed++;
  } else
    s->used = 0;
  RETURN(CUDA_SUCCESS);
}

static CUresult stream_wait(const char *fn, CUstream h) {
  fctx *c;
  fstream *s;
  CUresult r;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return r;
  if (!(s = stream_of(fn, c, h))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap) return capture_refuse(s, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  finish_stream(s, 0);
  return sticky();
}

static CUresult f_stream_sync(CUstream h) {
  LOCKED("cuStreamSynchronize", stream_wait("cuStreamSynchronize", h));
}
static CUresult f_stream_query(CUstream h) {
  LOCKED("cuStreamQuery", stream_wait("cuStreamQuery", h));
}

static CUresult f_stream_ctx(CUstream h, CUcontext *out) {
  fctx *c;
  fstream *s;
  CUresult r;
  ENTER("cuStreamGetCtx");
  if ((r = need_ctx("cuStreamGetCtx", &c)) != CUDA_SUCCESS && r != CUDA_ERROR_ILLEGAL_ADDRESS)
    RETURN(r);
  if (!(s = stream_of("cuStreamGetCtx", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *out = (CUcontext)(void *)s->ctx;
  RETURN(CUDA_SUCCESS);
}

static fevent *event_of(const char *fn, CUevent h) {
  fevent *e = (fevent *)(void *)h;
  if (e < events || e >= events + MAX_EVENTS || !e->used) {
    violation("%s: %p is not a live event", fn, (void *)h);
    return NULL;
  }
  if (!e->ctx->alive || e->ctx->id != e->ctx_id) {
    violation("%s: event %p belongs to a dead context (ID %llu)", fn, (void *)h, e->ctx_id);
    return NULL;
  }
  return e;
}

static CUresult f_event_create(CUevent *out, unsigned flags) {
  fctx *c;
  CUresult r;
  int i;
  (void)flags;
  ENTER("cuEventCreate");
  if ((r = need_ctx("cuEventCreate", &c)) != CUDA_SUCCESS) RETURN(r);
  for (i = 0; i < MAX_EVENTS && events[i].used; i++) {
  }
  if (i == MAX_EVENTS) RETURN(CUDA_ERROR_OUT_OF_MEMORY);
  memset(&events[i], 0, sizeof events[i]);
  events[i].used = 1;
  events[i].ctx = c;
  events[i].ctx_id = c->id;
  *out = (CUevent)(void *)&events[i];
  RETURN(CUDA_SUCCESS);
}

static CUresult f_event_destroy(CUevent h) {
  fevent *e;
  ENTER("cuEventDestroy");
  if (!(e = event_of("cuEventDestroy", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  e->used = 0;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_event_record(CUevent h, CUstream st) {
  fctx *c;
  fevent *e;
  fstream *s;
  CUresult r;
  ENTER("cuEventRecord");
  if ((r = need_ctx("cuEventRecord", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(e = event_of("cuEventRecord", h)) || !(s = stream_of("cuEventRecord", c, st)))
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (e->ctx != c) violation("cuEventRecord: event %p belongs to another context", (void *)h);
  if (s->cap) { /* a point of the capture, for other streams to wait for: nothing recorded */
    e->captured = 1;
    RETURN(s->cap_invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS);
  }
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) RETURN(r);
  e->captured = 0;
  e->recorded = 1;
  e->s = s;
  e->seq = next_seq++;
  e->done_at = 0;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_event_sync(CUevent h) {
  fevent *e;
  ENTER("cuEventSynchronize");
  if (!(e = event_of("cuEventSynchronize", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (e->captured) RETURN(CUDA_ERROR_CAPTURED_EVENT);
  if (e->recorded) {
    finish_stream(e->s, e->seq);
    if (!e->done_at) e->done_at = finished_items + 1;
  }
  RETURN(sticky());
}

static CUresult f_event_elapsed(float *ms, CUevent a, CUevent b) {
  fevent *x, *y;
  ENTER("cuEventElapsedTime");
  if (!(x = event_of("cuEventElapsedTime", a)) || !(y = event_of("cuEventElapsedTime", b)))
    RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!x->done_at || !y->done_at) RETURN(CUDA_ERROR_NOT_READY);
  *ms = 0.001f * (float)(y->done_at > x->done_at ? y->done_at - x->done_at : 0);
  RETURN(CUDA_SUCCESS);
}

/* ---- libraries and kernels ---- */

/* The bytes an ELF file spans (the driver is given no size): to the end of its furthest
 * header table or section contents. */
static uint64_t elf_extent(const unsigned char *p) {
  uint64_t phoff, shoff, end, i;
  unsigned phent = p[0x36] | (p[0x37] << 8), phnum = p[0x38] | (p[0x39] << 8);
  unsigned shent = p[0x3a] | (p[0x3b] << 8), shnum = p[0x3c] | (p[0x3d] << 8);
  memcpy(&phoff, p + 0x20, 8);
  memcpy(&shoff, p + 0x28, 8);
  end = shoff + (uint64_t)shnum * shent;
  if (phoff + (uint64_t)phnum * phent > end) end = phoff + (uint64_t)phnum * phent;
  for (i = 0; i < shnum; i++) {
    const unsigned char *h = p + shoff + i * shent;
    uint32_t type;
    uint64_t off, size;
    memcpy(&type, h + 4, 4);
    memcpy(&off, h + 0x18, 8);
    memcpy(&size, h + 0x20, 8);
    if (type != 8 /* SHT_NOBITS */ && off + size > end) end = off + size;
  }
  return end;
}

/* The code of an image to model: a CUBIN or PTX (as a NUL-terminated copy), an uncompressed
 * fatbin's CUBIN for sm_90 (else its PTX). */
static CUresult image_code(const void *image, flib *l) {
  const unsigned char *p = image;
  char arch[64];
  uint64_t magic = 0;
  size_t n = 0, i;
  if (memcmp(p, "\177ELF", 4) == 0) {
    uint64_t end = elf_extent(p);
    if (cj_cubin_check(p, end, "image", arch, sizeof arch) != CUJIT_OK)
      return CUDA_ERROR_INVALID_IMAGE;
    if (strncmp(arch, "sm_9", 4) != 0 || atoi(arch + 3) > 90) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    l->size = (size_t)end;
    l->image = malloc(l->size);
    memcpy(l->image, p, l->size);
    return CUDA_SUCCESS;
  }
  cj_get_le(p, 8, 0, 4, &magic);
  if (magic == 0xBA55ED50u) {
    cj_code *codes = NULL;
    uint64_t hsize = 0, total = 0;
    int best = -1;
    cj_get_le(p, 16, 6, 2, &hsize);
    cj_get_le(p, 16, 8, 8, &total);
    if (cj_prebuilt_codes(p, hsize + total, CJ_PREBUILT_FATBIN, &codes, &n) != CUJIT_OK)
      return CUDA_ERROR_INVALID_IMAGE;
    for (i = 0; i < n; i++) {
      if (codes[i].kind == CJ_PREBUILT_CUBIN && codes[i].arch / 10 == 9 && codes[i].arch <= 90)
        best = (int)i;
      else if (best < 0 && codes[i].kind == CJ_PREBUILT_PTX && codes[i].arch <= 90)
        best = (int)i;
    }
    if (best < 0) {
      cj_free(codes);
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    l->is_ptx = codes[best].kind == CJ_PREBUILT_PTX;
    if (codes[best].compressed) { /* zstd, as nvcc compresses: decompressed with libzstd */
      unsigned char *plain;
      size_t size;
      if (cj_zstd_decompress(codes[best].data, codes[best].size, (size_t)1 << 30, &plain, &size) !=
          CUJIT_OK) {
        cj_free(codes);
        return CUDA_ERROR_NOT_SUPPORTED; /* another compression: not modelled */
      }
      l->size = size;
      l->image = malloc(size + 1);
      memcpy(l->image, plain, size);
      l->image[size] = '\0';
      cj_free(plain);
      cj_free(codes);
      return CUDA_SUCCESS;
    }
    l->size = codes[best].size;
    l->image = malloc(l->size + 1);
    memcpy(l->image, codes[best].data, l->size);
    l->image[l->size] = '\0';
    cj_free(codes);
    return CUDA_SUCCESS;
  }
  n = strlen(image);
  if (!cj_code_ptx_check(p, n, arch, sizeof arch)) return CUDA_ERROR_INVALID_IMAGE;
  if (atoi(strchr(arch, '_') ? strchr(arch, '_') + 1 : "0") > 90)
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  l->is_ptx = 1;
  l->size = n;
  l->image = malloc(n + 1);
  memcpy(l->image, image, n + 1);
  return CUDA_SUCCESS;
}

static CUresult f_library_load(CUlibrary *out, const void *image, CUjit_option *o, void **ov,
                               unsigned no, CUlibraryOption *lo, void **lov, unsigned nlo) {
  flib *l;
  CUresult r;
  int known = 0;
  (void)o, (void)ov, (void)no, (void)lo, (void)lov, (void)nlo;
  ENTER("cuLibraryLoadData");
  if (!image) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (sticky_error) RETURN(sticky_error);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!(l = calloc(1, sizeof *l))) abort();
  if ((r = image_code(image, l)) != CUDA_SUCCESS) {
    free(l);
    RETURN(r);
  }
  if (l->is_ptx)
    cj_symtab_build((const char *)l->image, &l->syms);
  else
    cj_cubin_globals(l->image, l->size, 1, &l->syms, &known);
  l->loaded = 1;
  GROW(libs, cap_libs, n_libs + 1);
  libs[n_libs++] = l;
  *out = (CUlibrary)(void *)l;
  RETURN(CUDA_SUCCESS);
}

static flib *lib_of(const char *fn, CUlibrary h) {
  size_t i;
  for (i = 0; i < n_libs; i++)
    if (libs[i] == (flib *)(void *)h) {
      if (libs[i]->loaded) return libs[i];
      break;
    }
  violation("%s: %p is not a loaded library", fn, (void *)h);
  return NULL;
}

static CUresult f_library_unload(CUlibrary h) {
  flib *l;
  CUresult r;
  ENTER("cuLibraryUnload");
  if (!(l = lib_of("cuLibraryUnload", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  l->loaded = 0; /* kept, so that a handle used later is recognised as unloaded */
  RETURN(CUDA_SUCCESS);
}

/* The product of the first three numbers after `p` (separated by commas and blanks). */
static int three_sizes(const char *p, const char *end) {
  long v[3] = {1, 1, 1};
  int i;
  for (i = 0; i < 3 && p < end; i++) {
    char *q;
    while (p < end && (*p == ' ' || *p == ',')) p++;
    v[i] = strtol(p, &q, 10);
    if (q == p) return 1024;
    p = q;
  }
  return v[0] > 0 && v[1] > 0 && v[2] > 0 && v[0] * v[1] * v[2] <= 1024 ? (int)(v[0] * v[1] * v[2])
                                                                        : 1024;
}

/* A kernel's limit on threads per block, as __launch_bounds__ set it: the CUBIN's
 * EIATTR_MAX_THREADS (0x05: three 32-bit sizes), or the PTX's .maxntid between the entry's
 * parameters and its body; 1024 without. */
static int max_threads_of(const flib *l, const char *name) {
  if (!l->is_ptx) {
    const unsigned char *v;
    size_t n;
    uint32_t s[3];
    if (!cj_cubin_kernel_attr(l->image, l->size, name, 0x05, &v, &n) || n < 12) return 1024;
    memcpy(s, v, 12);
    return s[0] && s[1] && s[2] && (uint64_t)s[0] * s[1] * s[2] <= 1024 ? (int)(s[0] * s[1] * s[2])
                                                                        : 1024;
  }
  {
    const char *text = (const char *)l->image, *at = text, *body, *m;
    size_t len = strlen(name);
    while ((at = strstr(at, ".entry ")) != NULL) {
      at += 7;
      if (strncmp(at, name, len) == 0 && (at[len] == '(' || at[len] == ' ' || at[len] == '\n'))
        break;
    }
    if (!at || !(body = strchr(at, '{'))) return 1024;
    m = strstr(at, ".maxntid");
    return m && m < body ? three_sizes(m + 8, body) : 1024;
  }
}

static fkernel *kernel_make(flib *l, const char *name) {
  fkernel *k;
  size_t i;
  for (i = 0; i < l->n_kernels; i++)
    if (strcmp(l->kernels[i]->name, name) == 0) return l->kernels[i];
  if (!(k = calloc(1, sizeof *k))) abort();
  k->magic = MAGIC_KERNEL;
  k->lib = l;
  k->name = strdup(name);
  k->dyn_smem = 49152;
  k->max_threads = max_threads_of(l, name);
  if (l->is_ptx) {
    k->params_known =
        cj_ptx_params((const char *)l->image, name, &k->nparams, &k->off, &k->size) == CUJIT_OK;
  } else {
    cj_kparam *kp;
    size_t n;
    if (cj_cubin_kparams(l->image, l->size, name, &n, &kp) == 1) {
      k->params_known = 1;
      k->nparams = n;
      k->off = malloc((n + 1) * sizeof(size_t));
      k->size = malloc((n + 1) * sizeof(size_t));
      for (i = 0; i < n; i++) k->off[i] = kp[i].offset, k->size[i] = kp[i].size;
      cj_free(kp);
    }
  }
  l->kernels = realloc(l->kernels, (l->n_kernels + 1) * sizeof *l->kernels);
  l->kernels[l->n_kernels++] = k;
  return k;
}

static CUresult f_library_kernel(CUkernel *out, CUlibrary h, const char *name) {
  flib *l;
  size_t i;
  ENTER("cuLibraryGetKernel");
  if (!(l = lib_of("cuLibraryGetKernel", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  for (i = 0; i < l->syms.n_kernels; i++)
    if (strcmp(l->syms.kernels[i], name) == 0) break;
  if (i == l->syms.n_kernels) RETURN(CUDA_ERROR_NOT_FOUND);
  *out = (CUkernel)(void *)kernel_make(l, name);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_library_kernel_count(unsigned *n, CUlibrary h) {
  flib *l;
  ENTER("cuLibraryGetKernelCount");
  if (!(l = lib_of("cuLibraryGetKernelCount", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *n = (unsigned)l->syms.n_kernels;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_library_kernels(CUkernel *out, unsigned n, CUlibrary h) {
  flib *l;
  unsigned i;
  ENTER("cuLibraryEnumerateKernels");
  if (!(l = lib_of("cuLibraryEnumerateKernels", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  for (i = 0; i < n && i < l->syms.n_kernels; i++)
    out[i] = (CUkernel)(void *)kernel_make(l, l->syms.kernels[i]);
  RETURN(CUDA_SUCCESS);
}

/* The kernel a CUkernel or CUfunction handle names, NULL (flagged) when it is neither or
 * its library is unloaded; *func the function when it is one. */
static fkernel *kernel_of(const char *fn, const void *h, ffunc **func) {
  size_t i, j;
  *func = NULL;
  for (i = 0; i < n_libs; i++) {
    for (j = 0; j < libs[i]->n_kernels; j++)
      if ((const void *)libs[i]->kernels[j] == h) goto found;
    for (j = 0; j < libs[i]->n_funcs; j++)
      if ((const void *)libs[i]->funcs[j] == h) {
        *func = libs[i]->funcs[j];
        goto found;
      }
  }
  violation("%s: %p is not a kernel or function", fn, h);
  return NULL;
found:
  if (!libs[i]->loaded) {
    violation("%s: kernel %p's library is unloaded", fn, h);
    return NULL;
  }
  return *func ? (*func)->k : libs[i]->kernels[j];
}

static CUresult f_kernel_function(CUfunction *out, CUkernel h) {
  fctx *c;
  ffunc *f;
  fkernel *k;
  flib *l;
  size_t i;
  CUresult r;
  ENTER("cuKernelGetFunction");
  if ((r = need_ctx("cuKernelGetFunction", &c)) != CUDA_SUCCESS) RETURN(r);
  if ((r = unsafe_gate()) != CUDA_SUCCESS) RETURN(r);
  if (!(k = kernel_of("cuKernelGetFunction", h, &f)) || f) RETURN(CUDA_ERROR_INVALID_HANDLE);
  l = k->lib;
  for (i = 0; i < l->n_funcs; i++)
    if (l->funcs[i]->k == k && l->funcs[i]->ctx == c && l->funcs[i]->ctx_id == c->id) {
      *out = (CUfunction)(void *)l->funcs[i];
      RETURN(CUDA_SUCCESS);
    }
  if (!(f = calloc(1, sizeof *f))) abort();
  f->magic = MAGIC_FUNC;
  f->k = k;
  f->ctx = c;
  f->ctx_id = c->id;
  l->funcs = realloc(l->funcs, (l->n_funcs + 1) * sizeof *l->funcs);
  l->funcs[l->n_funcs++] = f;
  *out = (CUfunction)(void *)f;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_kernel_name(const char **name, CUkernel h) {
  ffunc *f;
  fkernel *k;
  ENTER("cuKernelGetName");
  if (!(k = kernel_of("cuKernelGetName", h, &f))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *name = k->name;
  RETURN(CUDA_SUCCESS);
}

static CUresult param_info(const char *fn, const void *h, size_t i, size_t *off, size_t *size) {
  ffunc *f;
  fkernel *k = kernel_of(fn, h, &f);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if (!k->params_known) return CUDA_ERROR_NOT_SUPPORTED; /* its code does not say */
  if (i >= k->nparams) {
    violation("%s: parameter %zu asked of kernel '%s', which has %zu", fn, i, k->name, k->nparams);
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (off) *off = k->off[i];
  if (size) *size = k->size[i];
  return CUDA_SUCCESS;
}

static CUresult f_kernel_param_info(CUkernel h, size_t i, size_t *off, size_t *size) {
  LOCKED("cuKernelGetParamInfo", param_info("cuKernelGetParamInfo", h, i, off, size));
}
static CUresult f_func_param_info(CUfunction h, size_t i, size_t *off, size_t *size) {
  LOCKED("cuFuncGetParamInfo", param_info("cuFuncGetParamInfo", h, i, off, size));
}

static CUresult attribute(const char *fn, const void *h, CUfunction_attribute a, int *v) {
  ffunc *f;
  fkernel *k = kernel_of(fn, h, &f);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = k->max_threads; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = k->dyn_smem; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

static CUresult set_attribute(const char *fn, const void *h, CUfunction_attribute a, int v) {
  ffunc *f;
  fkernel *k = kernel_of(fn, h, &f);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (v < 0 || v > 232448) return CUDA_ERROR_INVALID_VALUE;
    k->dyn_smem = v;
  }
  return CUDA_SUCCESS;
}

static CUresult f_kernel_attribute(int *v, CUfunction_attribute a, CUkernel h, CUdevice d) {
  (void)d;
  LOCKED("cuKernelGetAttribute", attribute("cuKernelGetAttribute", h, a, v));
}
static CUresult f_kernel_set_attribute(CUfunction_attribute a, int v, CUkernel h, CUdevice d) {
  (void)d;
  LOCKED("cuKernelSetAttribute", set_attribute("cuKernelSetAttribute", h, a, v));
}
static CUresult f_func_attribute(int *v, CUfunction_attribute a, CUfunction h) {
  LOCKED("cuFuncGetAttribute", attribute("cuFuncGetAttribute", h, a, v));
}
static CUresult f_func_set_attribute(CUfunction h, CUfunction_attribute a, int v) {
  LOCKED("cuFuncSetAttribute", set_attribute("cuFuncSetAttribute", h, a, v));
}

static CUresult f_func_name(const char **name, CUfunction h) {
  ffunc *f;
  fkernel *k;
  ENTER("cuFuncGetName");
  if (!(k = kernel_of("cuFuncGetName", h, &f))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *name = k->name;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_occupancy_block(int *grid, int *block, CUfunction f, CUoccupancyB2DSize fn,
                                  size_t smem, int limit) {
  (void)f, (void)fn, (void)smem, (void)limit;
  *grid = 264;
  *block = 1024;
  return CUDA_SUCCESS;
}

static CUresult f_occupancy_active(int *n, CUfunction f, int block, size_t smem) {
  (void)f, (void)block, (void)smem;
  *n = 2;
  return CUDA_SUCCESS;
}

static CUresult f_occupancy_cluster(int *n, CUfunction f, const CUlaunchConfig *cfg) {
  (void)f, (void)cfg;
  *n = 8;
  return CUDA_SUCCESS;
}

/* Where a kernel's pointer parameter p is checked: p, or the byte before it when p is the
 * end of a live allocation and inside no other live one (an empty array at the end of its
 * memory passes that address, which C allows and a kernel with nothing to read never
 * reads; freed memory that starts there is not what it points to). */
static CUdeviceptr launch_address(CUdeviceptr p) {
  falloc *other, *a;
  if (alloc_find(p, 1, &other)) return p;
  a = alloc_find(p - 1, 1, &other);
  return a && a->base + a->size == p ? p - 1 : p;
}

/* A launch: the handle is a kernel, or a function of the current context; every parameter
 * is read at its size, and each pointer-sized one holding a fake device address must point
 * into live memory of the current context (or at its end), which the queued kernel then
 * uses (whole allocations, read and written). */
/* Queues kernel k (handle h, its parameters packed at their offsets in `packed`) on s: each
 * pointer-sized parameter holding a fake device address must point into live memory of the
 * current context (or at its end), which the queued kernel then uses. */
static CUresult queue_kernel(const char *fn, fctx *c, fstream *s, const fkernel *k,
                             const unsigned char *packed) {
  op *o;
  size_t i, len = k->nparams ? k->off[k->nparams - 1] + k->size[k->nparams - 1] : 0;
  memset(last_params, 0, sizeof last_params);
  last_params_len = len;
  memcpy(last_params, packed, len < sizeof last_params ? len : sizeof last_params);
  o = op_new(s, OP_KERNEL);
  o->kt = calloc(k->nparams + 1, sizeof *o->kt);
  for (i = 0; i < k->nparams; i++) {
    CUdeviceptr p = 0;
    falloc *a;
    char what[256];
    if (k->size[i] != sizeof p) continue;
    memcpy(&p, packed + k->off[i], sizeof p);
    if (!in_arena(p)) continue;
    snprintf(what, sizeof what, "%s (kernel '%s', parameter %zu)", fn, k->name, i);
    if ((a = use(what, c, NULL, launch_address(p), 1, 1)) != NULL) {
      check_busy(what, s, a->base, a->base + a->size, 1);
      o->kt[o->nkt].a = a;
      o->kt[o->nkt].lo = a->base;
      o->kt[o->nkt].hi = a->base + a->size;
      o->kt[o->nkt].write = 1;
      a->refs++;
      o->nkt++;
    }
  }
  o->fault = fault_take() || strncmp(k->name, "checkdriver_fault", 17) == 0;
  return sticky();
}

/* The parameters at their offsets, in a buffer of their own (its length in *len). */
static unsigned char *pack_params(const fkernel *k, void **params, size_t *len) {
  unsigned char *b;
  size_t i;
  *len = k->nparams ? k->off[k->nparams - 1] + k->size[k->nparams - 1] : 0;
  if (!(b = calloc(1, *len + 1))) abort();
  for (i = 0; i < k->nparams; i++) memcpy(b + k->off[i], params[i], k->size[i]);
  return b;
}

/* A kernel's handle usable in context c: a kernel, or a function of c's life; NULL (flagged)
 * otherwise. */
static fkernel *launchable(const char *fn, const void *h, fctx *c) {
  ffunc *f;
  fkernel *k = kernel_of(fn, h, &f);
  if (k && f && (f->ctx != c || f->ctx_id != c->id || !c->alive)) {
    violation("%s: function %p of kernel '%s' belongs to %s", fn, h, k->name,
              f->ctx != c ? "another context" : "a dead life of this context");
    return NULL;
  }
  return k;
}

/* A launch: the handle is a kernel, or a function of the current context; every parameter
 * is read at its size. On a capturing stream it becomes a node of the capture (its
 * pointers checked now and at each launch of the graph); otherwise it is queued. */
static CUresult launch(const char *fn, const void *h, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, CUstream st, void **params,
                       void **extra) {
  fctx *c;
  fstream *s;
  fkernel *k;
  unsigned char *packed;
  size_t len, i;
  CUresult r;
  if ((r = need_ctx(fn, &c)) != CUDA_SUCCESS) return r;
  if (!(k = launchable(fn, h, c))) return CUDA_ERROR_INVALID_HANDLE;
  if (!(s = stream_of(fn, c, st))) return CUDA_ERROR_INVALID_HANDLE;
  if (s->cap && s->cap_invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) return r;
  if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if ((unsigned long long)bx * by * bz > (unsigned long long)k->max_threads)
    return CUDA_ERROR_INVALID_VALUE; /* the real driver's answer past __launch_bounds__ */
  if (extra) return CUDA_ERROR_NOT_SUPPORTED;
  if (!k->params_known) return CUDA_ERROR_NOT_SUPPORTED;
  if (k->nparams && !params) return CUDA_ERROR_INVALID_VALUE;
  packed = pack_params(k, params, &len);
  if (!s->cap) {
    r = queue_kernel(fn, c, s, k, packed);
    free(packed);
    return r;
  }
  for (i = 0; i < k->nparams; i++) { /* the memory it points into must be live now */
    CUdeviceptr p = 0;
    char what[256];
    if (k->size[i] != sizeof p) continue;
    memcpy(&p, packed + k->off[i], sizeof p);
    snprintf(what, sizeof what, "%s (kernel '%s', parameter %zu)", fn, k->name, i);
    if (in_arena(p)) use(what, c, NULL, launch_address(p), 1, 1);
  }
  {
    gnode *g = node_add(s, OP_KERNEL);
    unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    g->h = h;
    g->params = packed;
    g->params_len = len;
    memcpy(g->dims, dims, sizeof dims);
  }
  return sticky();
}

static CUresult f_launch(CUfunction h, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                         void **extra) {
  (void)smem;
  LOCKED("cuLaunchKernel", launch("cuLaunchKernel", h, gx, gy, gz, bx, by, bz, s, params, extra));
}

static CUresult f_launch_ex(const CUlaunchConfig *cfg, CUfunction h, void **params, void **extra) {
  LOCKED("cuLaunchKernelEx",
         launch("cuLaunchKernelEx", h, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX,
                cfg->blockDimY, cfg->blockDimZ, cfg->hStream, params, extra));
}

/* ---- graphs: captures ended into graphs, made executable, launched, updated ---- */

typedef struct fexec {
  int magic;
  fctx *ctx;
  unsigned long long ctx_id;
  gnode *nodes;       /* its own copies */
  const gnode **orig; /* the nodes of the graph it was made from, which name its nodes */
  size_t n;
} fexec;

static fgraph **graphs;
static size_t n_graphs, cap_graphs;
static fexec **execs;
static size_t n_execs, cap_execs;

static fgraph *graph_of(const char *fn, CUgraph h) {
  size_t i;
  for (i = 0; i < n_graphs; i++)
    if (graphs[i] == (fgraph *)(void *)h) return graphs[i];
  violation("%s: %p is not a live graph", fn, (void *)h);
  return NULL;
}

static fexec *exec_of(const char *fn, CUgraphExec h) {
  size_t i;
  for (i = 0; i < n_execs; i++)
    if (execs[i] == (fexec *)(void *)h) return execs[i];
  violation("%s: %p is not a live executable graph", fn, (void *)h);
  return NULL;
}

static void node_copy(gnode *to, const gnode *from) {
  *to = *from;
  if (from->params) {
    if (!(to->params = malloc(from->params_len + 1))) abort();
    memcpy(to->params, from->params, from->params_len);
  }
}

static void graph_drop(fgraph *g) {
  size_t i;
  for (i = 0; i < g->n; i++) {
    free(g->nodes[i]->params);
    free(g->nodes[i]);
  }
  free(g->nodes);
  free(g);
}

static CUresult f_begin_capture(CUstream h, CUstreamCaptureMode mode) {
  fctx *c;
  fstream *s;
  CUresult r;
  ENTER("cuStreamBeginCapture");
  if ((r = need_ctx("cuStreamBeginCapture", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(s = stream_of("cuStreamBeginCapture", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (s->legacy) RETURN(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (s->cap) RETURN(CUDA_ERROR_ILLEGAL_STATE);
  if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!(s->cap = calloc(1, sizeof *s->cap))) abort();
  s->cap->magic = MAGIC_GRAPH;
  s->cap->ctx = c;
  s->cap->ctx_id = c->id;
  s->cap_mode = (int)mode;
  s->cap_invalid = 0;
  s->cap_thread = pthread_self();
  s->cap_id = next_id++;
  s->cap_last = NULL;
  n_capturing++;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_end_capture(CUstream h, CUgraph *out) {
  fctx *c;
  fstream *s;
  fgraph *g;
  CUresult r;
  ENTER("cuStreamEndCapture");
  *out = NULL;
  if ((r = need_ctx("cuStreamEndCapture", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(s = stream_of("cuStreamEndCapture", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (!s->cap) RETURN(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  if (s->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
      !pthread_equal(s->cap_thread, pthread_self()))
    RETURN(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  g = s->cap;
  s->cap = NULL;
  s->cap_last = NULL;
  n_capturing--;
  if (s->cap_invalid) {
    graph_drop(g);
    RETURN(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  }
  GROW(graphs, cap_graphs, n_graphs + 1);
  graphs[n_graphs++] = g;
  *out = (CUgraph)(void *)g;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_is_capturing(CUstream h, CUstreamCaptureStatus *status) {
  fctx *c;
  fstream *s;
  CUresult r;
  int i;
  ENTER("cuStreamIsCapturing");
  n_capture_queries++;
  if ((r = need_ctx("cuStreamIsCapturing", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(s = stream_of("cuStreamIsCapturing", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (s->legacy) { /* asking does not invalidate the blocking streams' captures */
    for (i = 0; i < MAX_STREAMS; i++)
      if (streams[i].used && streams[i].cap && streams[i].ctx == c && !streams[i].nonblocking)
        RETURN(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    RETURN(CUDA_SUCCESS);
  }
  if (s->cap)
    *status =
        s->cap_invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_capture_info(CUstream h, CUstreamCaptureStatus *status, cuuint64_t *id,
                               CUgraph *graph, const CUgraphNode **deps,
                               const CUgraphEdgeData **edges, size_t *n) {
  fctx *c;
  fstream *s;
  CUresult r;
  ENTER("cuStreamGetCaptureInfo");
  n_capture_queries++;
  if ((r = need_ctx("cuStreamGetCaptureInfo", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(s = stream_of("cuStreamGetCaptureInfo", c, h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  *status = !s->cap          ? CU_STREAM_CAPTURE_STATUS_NONE
            : s->cap_invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                             : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (id) *id = s->cap ? s->cap_id : 0;
  if (graph) *graph = (CUgraph)(void *)s->cap;
  if (deps) *deps = s->cap && s->cap_last ? (const CUgraphNode *)&s->cap_last : NULL;
  if (edges) *edges = NULL;
  if (n) *n = s->cap && s->cap_last ? 1 : 0;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_exchange_mode(CUstreamCaptureMode *mode) {
  int was = thread_mode();
  if ((unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
  pthread_setspecific(mode_key, (void *)(uintptr_t)*mode);
  *mode = (CUstreamCaptureMode)was;
  return CUDA_SUCCESS;
}

static CUresult f_instantiate(CUgraphExec *out, CUgraph h, unsigned long long flags) {
  fctx *c;
  fgraph *g;
  fexec *e;
  CUresult r;
  size_t i;
  ENTER("cuGraphInstantiateWithFlags");
  if ((r = need_ctx("cuGraphInstantiateWithFlags", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(g = graph_of("cuGraphInstantiateWithFlags", h))) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (flags) RETURN(CUDA_ERROR_NOT_SUPPORTED);
  if (!(e = calloc(1, sizeof *e)) || !(e->nodes = calloc(g->n + 1, sizeof *e->nodes)) ||
      !(e->orig = calloc(g->n + 1, sizeof *e->orig)))
    abort();
  e->magic = MAGIC_EXEC;
  e->ctx = g->ctx;
  e->ctx_id = g->ctx_id;
  e->n = g->n;
  for (i = 0; i < g->n; i++) {
    node_copy(&e->nodes[i], g->nodes[i]);
    e->orig[i] = g->nodes[i];
  }
  GROW(execs, cap_execs, n_execs + 1);
  execs[n_execs++] = e;
  *out = (CUgraphExec)(void *)e;
  RETURN(CUDA_SUCCESS);
}

/* Queues one node of a graph's launch on s, its memory checked again now. */
static CUresult queue_node(const char *fn, fctx *c, fstream *s, const gnode *g) {
  falloc *a = NULL, *b = NULL;
  fkernel *k;
  op *o;
  if (g->kind == OP_KERNEL) {
    if (!(k = launchable(fn, g->h, c))) return CUDA_ERROR_INVALID_HANDLE;
    return queue_kernel(fn, c, s, k, g->params);
  }
  if ((g->kind == OP_HTOD || g->kind == OP_DTOH) && host_pinned(fn, g->host, g->n) <= 0) {
    violation("%s: a graph's copy uses host memory %p that is not page-locked (any more)", fn,
              g->host);
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((g->kind != OP_DTOH && !(a = use(fn, c, s, g->dst, g->n, 1))) ||
      ((g->kind == OP_DTOH || g->kind == OP_DTOD) && !(b = use(fn, c, s, g->src, g->n, 0))))
    return CUDA_ERROR_INVALID_VALUE;
  o = op_new(s, g->kind);
  if (g->kind == OP_DTOH) {
    o->nt = 1; /* the host side */
  } else {
    op_touch(o, a, g->dst, g->n, 1);
  }
  if (b) op_touch(o, b, g->src, g->n, 0);
  o->n = g->n;
  o->host = g->host;
  o->value = g->value;
  return CUDA_SUCCESS;
}

/* Finishes the work queued by the earlier launches of e (launches of one executable graph
 * run one after another, whatever their streams). */
static void finish_tagged(const fexec *e) {
  char *need = calloc(n_ops + 1, 1);
  size_t i;
  if (!need) abort();
  for (i = 0; i < n_ops; i++) need[i] = ops[i].tag == e;
  mark_waited(need);
  run_marked(need);
  free(need);
  pools_release();
}

static CUresult f_graph_launch(CUgraphExec h, CUstream st) {
  fctx *c;
  fstream *s;
  fexec *e;
  CUresult r;
  size_t i, from;
  ENTER("cuGraphLaunch");
  if ((r = need_ctx("cuGraphLaunch", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(e = exec_of("cuGraphLaunch", h))) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (e->ctx != c || e->ctx_id != c->id) {
    violation("cuGraphLaunch: executable graph %p belongs to %s", (void *)h,
              e->ctx != c ? "another context" : "a dead life of this context");
    RETURN(CUDA_ERROR_INVALID_CONTEXT);
  }
  if (!(s = stream_of("cuGraphLaunch", c, st))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (s->cap) { /* a child graph of the capture: its nodes, as they are now */
    if (s->cap_invalid) RETURN(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    for (i = 0; i < e->n; i++) node_copy(node_add(s, e->nodes[i].kind), &e->nodes[i]);
    RETURN(CUDA_SUCCESS);
  }
  if ((r = legacy_gate(c, s)) != CUDA_SUCCESS) RETURN(r);
  finish_tagged(e);
  for (i = 0; i < e->n; i++) {
    from = n_ops;
    if ((r = queue_node("cuGraphLaunch", c, s, &e->nodes[i])) != CUDA_SUCCESS) RETURN(r);
    for (; from < n_ops; from++) ops[from].tag = e;
  }
  RETURN(sticky());
}

static CUresult f_exec_update(CUgraphExec h, CUgraph hg, CUgraphExecUpdateResultInfo *info) {
  fexec *e;
  fgraph *g;
  size_t i;
  ENTER("cuGraphExecUpdate");
  memset(info, 0, sizeof *info);
  if (!(e = exec_of("cuGraphExecUpdate", h)) || !(g = graph_of("cuGraphExecUpdate", hg))) {
    info->result = CU_GRAPH_EXEC_UPDATE_ERROR;
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  info->result =
      g->n != e->n ? CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED : CU_GRAPH_EXEC_UPDATE_SUCCESS;
  for (i = 0; i < g->n && info->result == CU_GRAPH_EXEC_UPDATE_SUCCESS; i++) {
    int was = e->nodes[i].kind, now = g->nodes[i]->kind;
    if (was == now) continue;
    info->errorNode = (CUgraphNode)(void *)g->nodes[i];
    info->result = was == OP_KERNEL || now == OP_KERNEL || was == OP_SET || now == OP_SET
                       ? CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED
                       : CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED; /* a copy's direction */
  }
  if (info->result != CU_GRAPH_EXEC_UPDATE_SUCCESS) RETURN(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  for (i = 0; i < g->n; i++) {
    free(e->nodes[i].params);
    node_copy(&e->nodes[i], g->nodes[i]);
  }
  RETURN(CUDA_SUCCESS);
}

static CUresult f_graph_nodes(CUgraph h, CUgraphNode *nodes, size_t *n) {
  fgraph *g;
  size_t i;
  ENTER("cuGraphGetNodes");
  if (!(g = graph_of("cuGraphGetNodes", h)) || !n) RETURN(CUDA_ERROR_INVALID_VALUE);
  if (nodes) {
    for (i = 0; i < *n; i++) nodes[i] = i < g->n ? (CUgraphNode)(void *)g->nodes[i] : NULL;
    if (*n > g->n) *n = g->n;
  } else {
    *n = g->n;
  }
  RETURN(CUDA_SUCCESS);
}

static CUresult f_node_type(CUgraphNode node, CUgraphNodeType *type) {
  size_t i, k;
  ENTER("cuGraphNodeGetType");
  for (i = 0; i < n_graphs; i++)
    for (k = 0; k < graphs[i]->n; k++) {
      if (graphs[i]->nodes[k] != (gnode *)(void *)node) continue;
      switch (graphs[i]->nodes[k]->kind) {
        case OP_KERNEL: *type = CU_GRAPH_NODE_TYPE_KERNEL; break;
        case OP_SET: *type = CU_GRAPH_NODE_TYPE_MEMSET; break;
        default: *type = CU_GRAPH_NODE_TYPE_MEMCPY; break;
      }
      RETURN(CUDA_SUCCESS);
    }
  violation("cuGraphNodeGetType: %p is not a node of a live graph", (void *)node);
  RETURN(CUDA_ERROR_INVALID_VALUE);
}

static CUresult f_exec_set_kernel(CUgraphExec h, CUgraphNode node,
                                  const CUDA_KERNEL_NODE_PARAMS *p) {
  fctx *c;
  fexec *e;
  fkernel *k;
  gnode *g = NULL;
  const void *kh;
  size_t i, len;
  CUresult r;
  ENTER("cuGraphExecKernelNodeSetParams");
  if ((r = need_ctx("cuGraphExecKernelNodeSetParams", &c)) != CUDA_SUCCESS) RETURN(r);
  if (!(e = exec_of("cuGraphExecKernelNodeSetParams", h))) RETURN(CUDA_ERROR_INVALID_VALUE);
  for (i = 0; i < e->n && !g; i++)
    if (e->orig[i] == (const gnode *)(void *)node) g = &e->nodes[i];
  if (!g || g->kind != OP_KERNEL) {
    violation("cuGraphExecKernelNodeSetParams: %p is not a kernel node of the graph the "
              "executable graph was made from",
              (void *)node);
    RETURN(CUDA_ERROR_INVALID_VALUE);
  }
  kh = p->func ? (const void *)p->func : (const void *)p->kern;
  if (!(k = launchable("cuGraphExecKernelNodeSetParams", kh, c))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (p->extra) RETURN(CUDA_ERROR_NOT_SUPPORTED);
  if (k->nparams && !p->kernelParams) RETURN(CUDA_ERROR_INVALID_VALUE);
  free(g->params);
  g->params = pack_params(k, p->kernelParams, &len);
  g->params_len = len;
  g->h = kh;
  g->dims[0] = p->gridDimX, g->dims[1] = p->gridDimY, g->dims[2] = p->gridDimZ;
  g->dims[3] = p->blockDimX, g->dims[4] = p->blockDimY, g->dims[5] = p->blockDimZ;
  RETURN(CUDA_SUCCESS);
}

static CUresult f_graph_destroy(CUgraph h) {
  fgraph *g;
  size_t i;
  ENTER("cuGraphDestroy");
  if (!(g = graph_of("cuGraphDestroy", h))) RETURN(CUDA_ERROR_INVALID_VALUE);
  for (i = 0; i < n_graphs; i++)
    if (graphs[i] == g) graphs[i] = graphs[--n_graphs];
  graph_drop(g);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_exec_destroy(CUgraphExec h) {
  fexec *e;
  size_t i;
  ENTER("cuGraphExecDestroy");
  if (!(e = exec_of("cuGraphExecDestroy", h))) RETURN(CUDA_ERROR_INVALID_VALUE);
  for (i = 0; i < n_execs; i++)
    if (execs[i] == e) execs[i] = execs[--n_execs];
  for (i = 0; i < n_ops; i++) /* its launches still queued run as they are */
    if (ops[i].tag == e) ops[i].tag = NULL;
  for (i = 0; i < e->n; i++) free(e->nodes[i].params);
  free(e->nodes);
  free(e->orig);
  free(e);
  RETURN(CUDA_SUCCESS);
}

static CUresult f_event_query(CUevent h) {
  fevent *e;
  ENTER("cuEventQuery");
  if (!(e = event_of("cuEventQuery", h))) RETURN(CUDA_ERROR_INVALID_HANDLE);
  if (e->captured) RETURN(CUDA_ERROR_CAPTURED_EVENT);
  if (e->recorded) finish_stream(e->s, e->seq); /* work here finishes when it is asked for */
  RETURN(sticky());
}

/* What is not modelled. */
static CUresult not_supported(void) { return CUDA_ERROR_NOT_SUPPORTED; }

/* ---- the table ---- */

static const struct {
  const char *name;
  void *fn;
} table[] = {
#define E_(name, fn) \
  { #name, (void *)(fn) }
    E_(cuInit, f_init),
    E_(cuDriverGetVersion, f_version),
    E_(cuGetErrorName, f_error_name),
    E_(cuGetErrorString, f_error_name),
    E_(cuDeviceGet, f_device_get),
    E_(cuDeviceGetCount, f_device_count),
    E_(cuDeviceGetName, f_device_name),
    E_(cuDeviceGetAttribute, f_device_attribute),
    E_(cuDevicePrimaryCtxRetain, f_primary_retain),
    E_(cuDevicePrimaryCtxRelease, f_primary_release),
    E_(cuDevicePrimaryCtxGetState, f_primary_state),
    E_(cuDevicePrimaryCtxReset, f_primary_reset),
    E_(cuCtxCreate, f_ctx_create),
    E_(cuCtxDestroy, f_ctx_destroy),
    E_(cuCtxGetCurrent, f_ctx_get),
    E_(cuCtxSetCurrent, f_ctx_set),
    E_(cuCtxGetDevice, f_ctx_device),
    E_(cuCtxGetId, f_ctx_id),
    E_(cuCtxSynchronize, f_ctx_sync),
    E_(cuModuleLoadData, not_supported),
    E_(cuModuleUnload, not_supported),
    E_(cuModuleGetFunction, not_supported),
    E_(cuModuleGetGlobal, not_supported),
    E_(cuFuncGetAttribute, f_func_attribute),
    E_(cuFuncSetAttribute, f_func_set_attribute),
    E_(cuFuncGetParamInfo, f_func_param_info),
    E_(cuFuncGetName, f_func_name),
    E_(cuOccupancyMaxPotentialBlockSize, f_occupancy_block),
    E_(cuOccupancyMaxActiveBlocksPerMultiprocessor, f_occupancy_active),
    E_(cuOccupancyMaxPotentialClusterSize, f_occupancy_cluster),
    E_(cuLaunchKernel, f_launch),
    E_(cuLaunchKernelEx, f_launch_ex),
    E_(cuMemAlloc, f_mem_alloc),
    E_(cuMemFree, f_mem_free),
    E_(cuMemGetInfo, f_mem_info),
    E_(cuMemcpyHtoD, f_htod),
    E_(cuMemcpyDtoH, f_dtoh),
    E_(cuMemcpyHtoDAsync, f_htod_async),
    E_(cuMemcpyDtoHAsync, f_dtoh_async),
    E_(cuMemcpyDtoDAsync, f_dtod_async),
    E_(cuMemsetD8, f_memset),
    E_(cuMemsetD8Async, f_memset_async),
    E_(cuMemHostAlloc, f_host_alloc),
    E_(cuMemFreeHost, f_host_free),
    E_(cuMemHostRegister, f_host_register),
    E_(cuMemHostUnregister, f_host_unregister),
    E_(cuPointerGetAttribute, f_pointer_attribute),
    E_(cuPointerGetAttributes, f_pointer_attributes),
    E_(cuStreamCreate, f_stream_create),
    E_(cuStreamDestroy, f_stream_destroy),
    E_(cuStreamSynchronize, f_stream_sync),
    E_(cuStreamQuery, f_stream_query),
    E_(cuStreamGetCtx, f_stream_ctx),
    E_(cuEventCreate, f_event_create),
    E_(cuEventDestroy, f_event_destroy),
    E_(cuEventRecord, f_event_record),
    E_(cuEventSynchronize, f_event_sync),
    E_(cuEventElapsedTime, f_event_elapsed),
    E_(cuMemAllocAsync, f_alloc_async),
    E_(cuMemAllocFromPoolAsync, f_alloc_from_pool),
    E_(cuMemFreeAsync, f_free_async),
    E_(cuDeviceGetDefaultMemPool, f_default_pool),
    E_(cuMemPoolCreate, f_pool_create),
    E_(cuMemPoolDestroy, f_pool_destroy),
    E_(cuMemPoolTrimTo, f_pool_trim),
    E_(cuMemPoolSetAttribute, f_pool_set),
    E_(cuMemPoolGetAttribute, f_pool_get),
    E_(cuLibraryLoadData, f_library_load),
    E_(cuLibraryUnload, f_library_unload),
    E_(cuLibraryGetKernel, f_library_kernel),
    E_(cuLibraryGetKernelCount, f_library_kernel_count),
    E_(cuLibraryEnumerateKernels, f_library_kernels),
    E_(cuLibraryGetGlobal, not_supported),
    E_(cuKernelGetFunction, f_kernel_function),
    E_(cuKernelGetName, f_kernel_name),
    E_(cuKernelGetParamInfo, f_kernel_param_info),
    E_(cuKernelGetAttribute, f_kernel_attribute),
    E_(cuKernelSetAttribute, f_kernel_set_attribute),
    E_(cuStreamBeginCapture, f_begin_capture),
    E_(cuStreamEndCapture, f_end_capture),
    E_(cuStreamIsCapturing, f_is_capturing),
    E_(cuStreamGetCaptureInfo, f_capture_info),
    E_(cuThreadExchangeStreamCaptureMode, f_exchange_mode),
    E_(cuGraphInstantiateWithFlags, f_instantiate),
    E_(cuGraphLaunch, f_graph_launch),
    E_(cuGraphExecUpdate, f_exec_update),
    E_(cuGraphGetNodes, f_graph_nodes),
    E_(cuGraphNodeGetType, f_node_type),
    E_(cuGraphExecKernelNodeSetParams, f_exec_set_kernel),
    E_(cuGraphDestroy, f_graph_destroy),
    E_(cuGraphExecDestroy, f_exec_destroy),
    E_(cuEventQuery, f_event_query),
#undef E_
};

EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  size_t i;
  (void)version, (void)flags;
  *pfn = NULL;
  for (i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, symbol) == 0) *pfn = table[i].fn;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* For a program that calls the driver by its symbols, as one linked with libcuda would. */
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice d) { return f_primary_reset(d); }
EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  return f_primary_retain(c, d);
}
EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) { return f_ctx_set(c); }
EXPORT CUresult CUDAAPI cuGetErrorName(CUresult r, const char **s) { return f_error_name(r, s); }

/* ---- control and queries (checkdriver.h) ---- */

EXPORT unsigned long checkdriver_violations(void);
EXPORT size_t checkdriver_report(char *buf, size_t size);
EXPORT void checkdriver_clear(void);
EXPORT void checkdriver_set_abort(int on);
EXPORT void checkdriver_fault_next_launch(void);
EXPORT int checkdriver_peek(CUdeviceptr p, void *dst, size_t n);
EXPORT unsigned long checkdriver_pending(void);
EXPORT size_t checkdriver_last_params(void *dst, size_t size);
EXPORT unsigned long checkdriver_capture_queries(void);
EXPORT unsigned long checkdriver_libraries(void);
EXPORT unsigned long checkdriver_calls(const char *name);
EXPORT void checkdriver_fail_next(const char *name, CUresult r, unsigned long n);
EXPORT unsigned long checkdriver_primary_retains(void);
EXPORT long checkdriver_primary_maker(void);

/* cuDevicePrimaryCtxRetain calls so far, counted as they start (before any delay). */
EXPORT unsigned long checkdriver_primary_retains(void) {
  return __atomic_load_n(&primary_retains, __ATOMIC_RELAXED);
}

/* The kernel's ID of the thread whose cuDevicePrimaryCtxRetain first made a primary
 * context alive; 0 before. */
EXPORT long checkdriver_primary_maker(void) {
  return __atomic_load_n(&primary_maker, __ATOMIC_RELAXED);
}

/* The driver's lock is made anew in a child by the hooks of the library code linked into
 * it (common/forklock.c), which takes that code's own locks (the library loader's, for a
 * compressed fatbin) for the fork. */
__attribute__((constructor)) static void checkdriver_start(void) {
  cj_fork_hooks(NULL, NULL, lock_fork_child);
}

EXPORT unsigned long checkdriver_violations(void) {
  unsigned long n;
  pthread_mutex_lock(&lock);
  n = n_violations;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT size_t checkdriver_report(char *buf, size_t size) {
  size_t n;
  pthread_mutex_lock(&lock);
  n = report_len;
  if (size) {
    size_t have = report_len < sizeof report_text ? report_len : sizeof report_text - 1;
    if (have >= size) have = size - 1;
    memcpy(buf, report_text, have);
    buf[have] = '\0';
  }
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT void checkdriver_clear(void) {
  pthread_mutex_lock(&lock);
  n_violations = 0;
  report_len = 0;
  report_text[0] = '\0';
  pthread_mutex_unlock(&lock);
}

EXPORT void checkdriver_set_abort(int on) {
  pthread_mutex_lock(&lock);
  abort_on = on;
  pthread_mutex_unlock(&lock);
}

EXPORT void checkdriver_fault_next_launch(void) {
  pthread_once(&keys_once, keys_make);
  pthread_setspecific(fault_key, (void *)1);
}

EXPORT size_t checkdriver_last_params(void *dst, size_t size) {
  size_t n;
  pthread_mutex_lock(&lock);
  n = last_params_len;
  memcpy(dst, last_params, size < sizeof last_params ? size : sizeof last_params);
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT unsigned long checkdriver_calls(const char *name) {
  unsigned long n = 0;
  size_t i;
  pthread_mutex_lock(&lock);
  for (i = 0; i < sizeof counted / sizeof *counted && counted[i].name; i++)
    if (strcmp(counted[i].name, name) == 0) n = counted[i].n;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT void checkdriver_fail_next(const char *name, CUresult r, unsigned long n) {
  pthread_mutex_lock(&lock);
  snprintf(fail_name, sizeof fail_name, "%s", r == CUDA_SUCCESS || !n ? "" : name);
  fail_result = r;
  fail_count = n;
  pthread_mutex_unlock(&lock);
}

EXPORT unsigned long checkdriver_capture_queries(void) {
  unsigned long n;
  pthread_mutex_lock(&lock);
  n = n_capture_queries;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT unsigned long checkdriver_libraries(void) {
  unsigned long n = 0;
  size_t i;
  pthread_mutex_lock(&lock);
  for (i = 0; i < n_libs; i++) n += libs[i]->loaded != 0;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT int checkdriver_peek(CUdeviceptr p, void *dst, size_t n) {
  falloc *other, *a;
  size_t i;
  int k, r = 0;
  pthread_mutex_lock(&lock);
  a = alloc_find(p, n ? n : 1, &other);
  if (!a || !a->host) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  memcpy(dst, a->host + (p - a->base), n);
  for (i = 0; i < n_ops && !r; i++)
    for (k = 0; k < ops[i].nt + ops[i].nkt; k++) {
      const touch *t = k < ops[i].nt ? &ops[i].t[k] : &ops[i].kt[k - ops[i].nt];
      if (t->a == a && t->write && t->lo < p + n && p < t->hi) r = 1;
    }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT unsigned long checkdriver_pending(void) {
  unsigned long n;
  pthread_mutex_lock(&lock);
  n = (unsigned long)n_ops;
  pthread_mutex_unlock(&lock);
  return n;
}

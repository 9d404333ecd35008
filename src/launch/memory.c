/* memory.c - device memory, page-locked host memory and streams for users (so that they
 * never link libcuda), the stream-ordered pool In/Out buffers come from, and telling
 * page-locked from pageable host memory. */
#include <pthread.h>
#include <string.h>

#include "launch/capture.h"

#define CJ_POOL_DEVICES 64

enum { POOL_UNSET = 0, POOL_STREAM_ORDERED = 1, POOL_PLAIN = 2 };

/* Small blocks given back on the legacy default stream (stream NULL) are kept, up to
 * KEEP_COUNT per device of at most KEEP_BYTES each, and the next request for as many bytes
 * on that stream of the same context takes one without asking the driver: both uses are
 * ordered on that one stream, as the driver's pool would order them. Arrays made and
 * dropped in a loop (a new output per operation) and small In/Out buffers then cost no
 * allocation calls. cujit_mem_pool_trim() gives them back. */
#define KEEP_BYTES ((size_t)1 << 20)
#define KEEP_COUNT 16

/* Smaller requests on that stream, up to SMALL_BYTES, take one of at most SMALL_COUNT
 * blocks made with cuMemAlloc, each of the size first asked for and taken again by
 * requests of that size, in that stream's order as kept blocks are: the pool's first
 * allocation costs a process 7-10 ms (the driver maps the pool's first memory), cuMemAlloc's
 * 0.1 ms, so a short program's In/Out buffers and small arrays never wait for the pool.
 * Exact sizes keep compute-sanitizer's bounds exact. cujit_mem_pool_trim() gives back
 * those not in use. */
#define SMALL_BYTES ((size_t)64 << 10)
#define SMALL_COUNT 16

/* Blocks are of a context, known by its handle and its ID: a reset primary context keeps
 * its handle, but its memory died with it (never reused, never freed again). */
typedef struct kept_block {
  CUcontext ctx;
  unsigned long long id;
  CUdeviceptr ptr;
  size_t bytes;
} kept_block;

typedef struct small_block {
  CUcontext ctx;
  unsigned long long id;
  CUdeviceptr ptr;
  size_t bytes;
  int busy;
} small_block;

typedef struct cj_pool {
  int state;                      /* POOL_*, set once per life of the context (atomic) */
  CUmemoryPool pool;              /* POOL_STREAM_ORDERED: cujit's own pool on the device */
  cj_mem_ctx made_in;             /* the context the pool was made in: it dies with it */
  size_t in_use;                  /* bytes handed to launches and not given back (atomic) */
  kept_block kept[KEEP_COUNT];    /* guarded by keep_lock */
  int n_kept;                     /* written under keep_lock, read without it as a hint (atomic) */
  small_block small[SMALL_COUNT]; /* guarded by keep_lock */
  int n_small;                    /* as n_kept */
} cj_pool;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static CJ_LARGE cj_pool pools[CJ_POOL_DEVICES];

/* The pool's release threshold: the most memory it holds, in use and kept, once a
 * synchronisation has returned what is above it to the device (env CUJIT_POOL_KEEP).
 * By default there is none, and the pool keeps everything arrays and In/Out buffers give
 * back, as CuPy's and PyTorch's allocators do: the driver counts memory in use against
 * the threshold, so any finite default is reached by the programs that use the device
 * most, and every synchronisation of theirs would then unmap memory that the next
 * operation maps again. An allocation that finds the device full gives the kept memory
 * back and tries once more (pool_get), so keeping never makes cujit's own allocations
 * fail; cujit_mem_pool_trim() gives it back for other users of the device. */
static cuuint64_t pool_keep(void) {
  uint64_t v;
  return cj_env_u64("CUJIT_POOL_KEEP", &v) == CJ_ENV_SET ? v : UINT64_MAX;
}

/* A pool of our own rather than the device's default one, so that its release threshold
 * does not change how the caller's cuMemAllocAsync behaves. */
static int pool_create(CUdevice dev, CUmemoryPool *pool) {
  const cj_limits *lim;
  CUmemPoolProps props;
  cuuint64_t keep = pool_keep();
  double t0 = cj_now_s();
  CUresult r;
  if (cj_device_limits(dev, &lim) != CUJIT_OK || !lim->pools || !cj_cu.cuMemPoolCreate ||
      !cj_cu.cuMemAllocFromPoolAsync || !cj_cu.cuMemFreeAsync || !cj_cu.cuMemPoolSetAttribute)
    return 0;
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = (int)dev;
  r = cj_cu.cuMemPoolCreate(pool, &props);
  if (r != CUDA_SUCCESS) {
    cj_debug("no memory pool on device %d (%s); In/Out buffers use cuMemAlloc", (int)dev,
             cj_cu_name(r));
    return 0;
  }
  cj_cu.cuMemPoolSetAttribute(*pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  cj_debug("device %d: memory pool made in %.3f ms (it keeps %s)", (int)dev,
           (cj_now_s() - t0) * 1e3, keep == UINT64_MAX ? "all it is given back" : "up to its cap");
  return 1;
}

/* Whether pool p was made in a context that has died since (a primary context reset): its
 * memory and the pool went with it, and it is never used, trimmed or freed into again. */
static int pool_dead(const cj_pool *p) {
  return __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == POOL_STREAM_ORDERED &&
         cj_ctx_mem_dead(&p->made_in);
}

/* Forgets what pool p kept of its dead context (nothing of it is freed: it died) and marks
 * it to be made again in the current context. Pool lock held. */
static void pool_forget(cj_pool *p, CUdevice dev) {
  pthread_mutex_lock(&keep_lock);
  __atomic_store_n(&p->n_kept, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&keep_lock);
  __atomic_store_n(&p->in_use, 0, __ATOMIC_RELAXED);
  cj_debug("device %d: the context cujit's memory pool was made in has been reset; a new pool "
           "is made, and nothing of the old one is used or freed again",
           (int)dev);
  __atomic_store_n(&p->state, POOL_UNSET, __ATOMIC_RELEASE);
}

static cujit_status pool_of(CUdevice dev, cj_pool **out) {
  cj_pool *p;
  CUcontext ctx = NULL;
  CJ_CHECK(dev >= 0 && dev < CJ_POOL_DEVICES, CUJIT_ERROR_NO_DEVICE,
           "device %d is beyond the %d devices cujit supports", (int)dev, CJ_POOL_DEVICES);
  p = &pools[dev];
  if (!__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) || pool_dead(p)) {
    pthread_mutex_lock(&pool_lock);
    if (pool_dead(p)) pool_forget(p, dev);
    if (!p->state) {
      cj_cu.cuCtxGetCurrent(&ctx);
      p->made_in.ctx = ctx;
      p->made_in.id = cj_ctx_id(ctx);
      __atomic_store_n(&p->state, pool_create(dev, &p->pool) ? POOL_STREAM_ORDERED : POOL_PLAIN,
                       __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pool_lock);
  }
  *out = p;
  return CUJIT_OK;
}

/* Whether a block of `bytes` on `stream` may be kept (or taken from those kept); *ctx gets
 * the current context. Only a primary context this library retained keeps blocks: one the
 * program made may be destroyed, and release_kept() would then make a dead context
 * current. */
static int keepable(const cj_pool *p, size_t bytes, CUstream stream, CUcontext *ctx) {
  return p->state == POOL_STREAM_ORDERED && !stream && bytes <= KEEP_BYTES &&
         cj_cu.cuCtxGetCurrent(ctx) == CUDA_SUCCESS && *ctx && cj_ctx_retained(*ctx);
}

/* The ID of context ctx now (0 where the driver cannot tell). */
static unsigned long long id_of(CUcontext ctx) { return cj_ctx_id(ctx); }

/* A kept block of `bytes` of context ctx, or 0. */
static CUdeviceptr take_kept(cj_pool *p, CUcontext ctx, size_t bytes) {
  CUdeviceptr ptr = 0;
  unsigned long long id = id_of(ctx);
  int i;
  pthread_mutex_lock(&keep_lock);
  for (i = p->n_kept - 1; i >= 0; i--) {
    if (p->kept[i].ctx == ctx && p->kept[i].id != id) { /* of the context before a reset */
      p->kept[i] = p->kept[p->n_kept - 1];
      __atomic_store_n(&p->n_kept, p->n_kept - 1, __ATOMIC_RELAXED);
      continue;
    }
    if (p->kept[i].bytes != bytes || p->kept[i].ctx != ctx) continue;
    ptr = p->kept[i].ptr;
    p->kept[i] = p->kept[p->n_kept - 1];
    __atomic_store_n(&p->n_kept, p->n_kept - 1, __ATOMIC_RELAXED);
    break;
  }
  pthread_mutex_unlock(&keep_lock);
  return ptr;
}

/* Keeps a block; 0 when there is no room. */
static int keep(cj_pool *p, CUcontext ctx, CUdeviceptr ptr, size_t bytes) {
  unsigned long long id = id_of(ctx);
  int kept = 0;
  pthread_mutex_lock(&keep_lock);
  if (p->n_kept < KEEP_COUNT) {
    p->kept[p->n_kept] = (kept_block){ctx, id, ptr, bytes};
    __atomic_store_n(&p->n_kept, p->n_kept + 1, __ATOMIC_RELAXED);
    kept = 1;
  }
  pthread_mutex_unlock(&keep_lock);
  return kept;
}

/* Whether a request may take a small block: as keepable() says, for at most SMALL_BYTES,
 * whether or not the pool is made. */
static int small_ok(size_t bytes, CUstream stream, CUcontext *ctx) {
  return bytes <= SMALL_BYTES && !stream && cj_cu.cuCtxGetCurrent(ctx) == CUDA_SUCCESS && *ctx &&
         cj_ctx_retained(*ctx);
}

/* A small block of `bytes` of context ctx: a free one, or a new one while there are fewer
 * than SMALL_COUNT; 0 when none can be had. */
static CUdeviceptr take_small(cj_pool *p, CUcontext ctx, size_t bytes) {
  CUdeviceptr ptr = 0;
  unsigned long long id = id_of(ctx);
  int i = 0;
  pthread_mutex_lock(&keep_lock);
  while (i < p->n_small && !ptr) {
    small_block *b = &p->small[i];
    if (b->ctx == ctx && b->id != id) { /* of the context before a reset */
      *b = p->small[p->n_small - 1];
      __atomic_store_n(&p->n_small, p->n_small - 1, __ATOMIC_RELAXED);
      continue;
    }
    if (!b->busy && b->ctx == ctx && b->bytes == bytes) {
      b->busy = 1;
      ptr = b->ptr;
    }
    i++;
  }
  if (!ptr && p->n_small < SMALL_COUNT && cj_cu.cuMemAlloc(&ptr, bytes) == CUDA_SUCCESS) {
    p->small[p->n_small] = (small_block){ctx, id, ptr, bytes, 1};
    __atomic_store_n(&p->n_small, p->n_small + 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&keep_lock);
  return ptr;
}

/* Whether ptr is a small block in use; marks it free when `mark`. */
static int small_in_use(cj_pool *p, CUdeviceptr ptr, int mark) {
  int i, found = 0;
  pthread_mutex_lock(&keep_lock);
  for (i = 0; i < p->n_small && !found; i++)
    if (p->small[i].busy && p->small[i].ptr == ptr) {
      if (mark) p->small[i].busy = 0;
      found = 1;
    }
  pthread_mutex_unlock(&keep_lock);
  return found;
}

/* Marks ptr free when it is a small block in use; 0 when it is not one. Given back on
 * another stream than the default one (an array moved to a stream of its own), the block
 * is marked free once that stream has drained: the next request that takes it is ordered
 * on the default stream only, which a non-blocking stream does not wait for. */
static int give_small(cj_pool *p, CUdeviceptr ptr, CUstream stream) {
  if (!__atomic_load_n(&p->n_small, __ATOMIC_RELAXED)) return 0;
  if (!stream) return small_in_use(p, ptr, 1);
  if (!small_in_use(p, ptr, 0)) return 0;
  cj_cu.cuStreamSynchronize(stream); /* a fault there is reported by the caller's next wait */
  return small_in_use(p, ptr, 1);
}

/* The bytes of every small block, in use or not. */
static size_t small_bytes(cj_pool *p) {
  size_t bytes = 0;
  int i;
  pthread_mutex_lock(&keep_lock);
  for (i = 0; i < p->n_small; i++) bytes += p->small[i].bytes;
  pthread_mutex_unlock(&keep_lock);
  return bytes;
}

/* Frees the small blocks not in use, each once its context's default stream has drained
 * (a block given back is still in use by the work queued before). */
static void release_small(cj_pool *p) {
  CUcontext current = NULL;
  int i = 0;
  if (!__atomic_load_n(&p->n_small, __ATOMIC_RELAXED)) return;
  cj_cu.cuCtxGetCurrent(&current);
  pthread_mutex_lock(&keep_lock);
  while (i < p->n_small) {
    small_block *b = &p->small[i];
    int dead = b->id != id_of(b->ctx); /* its memory died with a reset */
    if (b->busy && !dead) {
      i++;
      continue;
    }
    if (!dead && (b->ctx == current || cj_cu.cuCtxSetCurrent(b->ctx) == CUDA_SUCCESS)) {
      cj_cu.cuStreamSynchronize(NULL);
      cj_cu.cuMemFree(b->ptr); /* (where its context cannot be made current, not freed) */
      if (b->ctx != current) cj_cu.cuCtxSetCurrent(current);
    }
    *b = p->small[p->n_small - 1];
    __atomic_store_n(&p->n_small, p->n_small - 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&keep_lock);
}

/* Gives every kept block back to the driver's pool, each on its context's default stream,
 * and waits for those frees. */
static void release_kept(cj_pool *p) {
  CUcontext current = NULL;
  int i;
  if (!__atomic_load_n(&p->n_kept, __ATOMIC_RELAXED)) return;
  cj_cu.cuCtxGetCurrent(&current);
  pthread_mutex_lock(&keep_lock);
  for (i = 0; i < p->n_kept; i++) {
    CUcontext ctx = p->kept[i].ctx;
    if (p->kept[i].id != id_of(ctx)) continue; /* its memory died with a reset */
    if (ctx != current && cj_cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS) continue; /* a fault */
    cj_cu.cuMemFreeAsync(p->kept[i].ptr, NULL);
    cj_cu.cuStreamSynchronize(NULL); /* the pool can release it once the free has run */
    if (ctx != current) cj_cu.cuCtxSetCurrent(current);
  }
  __atomic_store_n(&p->n_kept, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&keep_lock);
}

/* Gives what the pool keeps back to the device: its kept blocks, then the memory no
 * allocation holds (cuMemPoolTrimTo). */
static CUresult give_back(cj_pool *p) {
  release_kept(p); /* even where the pool cannot be trimmed, kept blocks go back to it */
  release_small(p);
  return cj_cu.cuMemPoolTrimTo ? cj_cu.cuMemPoolTrimTo(p->pool, 0) : CUDA_SUCCESS;
}

/* The pool of `dev` when it has been made and is a pool, else NULL (nothing is made). */
static cj_pool *pool_made(CUdevice dev) {
  if (dev < 0 || dev >= CJ_POOL_DEVICES) return NULL;
  return __atomic_load_n(&pools[dev].state, __ATOMIC_ACQUIRE) == POOL_STREAM_ORDERED &&
                 !pool_dead(&pools[dev])
             ? &pools[dev]
             : NULL;
}

static CUresult pool_get(cj_pool *p, size_t bytes, CUstream stream, CUdeviceptr *dptr) {
  if (p->state == POOL_STREAM_ORDERED)
    return cj_cu.cuMemAllocFromPoolAsync(dptr, bytes, p->pool, stream);
  return cj_cu.cuMemAlloc(dptr, bytes);
}

/* Memory for work on `stream` while cujit captures it: what the capture kept, else memory
 * made on the capture's own stream and waited for (an allocation on the captured stream
 * would itself become part of the graph, made again at every replay), in the relaxed
 * capture mode, which lets a thread allocate while captures run. 0 with *st set, or -1
 * when the stream is not being captured. */
static int capture_alloc(CUdevice dev, size_t bytes, CUstream stream, CUdeviceptr *dptr,
                         cj_mem_ctx *owner, cujit_status *st) {
  CUstream side = NULL;
  CUstreamCaptureMode mode;
  CUresult r;
  int k = cj_capture_take(stream, dev, bytes, dptr, owner, &side);
  *st = CUJIT_OK;
  if (k != 0) return k > 0 ? 0 : -1; /* taken again: still counted in use */
  cj_capture_relax(&mode);
  *st = cj_mem_pool_alloc(dev, bytes, side, dptr, owner);
  if (*st == CUJIT_OK && (r = cj_cu.cuStreamSynchronize(side)) != CUDA_SUCCESS) {
    cj_mem_pool_free(dev, *dptr, bytes, side, owner);
    *dptr = 0;
    *st = cj_cu_wait_failed(r, "cuStreamSynchronize (memory for a capture)");
  }
  cj_capture_restore(&mode);
  return 0;
}

cujit_status cj_mem_pool_alloc(CUdevice dev, size_t bytes, CUstream stream, CUdeviceptr *dptr,
                               cj_mem_ctx *owner) {
  cj_pool *p;
  CUcontext ctx;
  CUresult r;
  cujit_status st;
  CJ_CHECK(dev >= 0 && dev < CJ_POOL_DEVICES, CUJIT_ERROR_NO_DEVICE,
           "device %d is beyond the %d devices cujit supports", (int)dev, CJ_POOL_DEVICES);
  if (CJ_UNLIKELY(__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) && stream &&
      capture_alloc(dev, bytes, stream, dptr, owner, &st) == 0)
    return st;
  owner->ctx = NULL;
  if (cj_cu.cuCtxGetCurrent(&owner->ctx) != CUDA_SUCCESS) owner->ctx = NULL;
  owner->id = cj_ctx_id(owner->ctx);
  if (small_ok(bytes, stream, &ctx) && (*dptr = take_small(&pools[dev], ctx, bytes)) != 0) {
    __atomic_add_fetch(&pools[dev].in_use, bytes, __ATOMIC_RELAXED);
    return CUJIT_OK; /* the pool is not made for it */
  }
  CJ_TRY(pool_of(dev, &p));
  if (__atomic_load_n(&p->n_kept, __ATOMIC_RELAXED) && keepable(p, bytes, stream, &ctx) &&
      (*dptr = take_kept(p, ctx, bytes)) != 0) {
    __atomic_add_fetch(&p->in_use, bytes, __ATOMIC_RELAXED);
    return CUJIT_OK;
  }
  r = pool_get(p, bytes, stream, dptr);
  /* the device is full: what the pool keeps goes back, and the request is made once more */
  if (r == CUDA_ERROR_OUT_OF_MEMORY && p->state == POOL_STREAM_ORDERED) {
    cj_debug("device %d: out of memory for %zu bytes; the pool gives back what it keeps", (int)dev,
             bytes);
    give_back(p);
    r = pool_get(p, bytes, stream, dptr);
  }
  if (r != CUDA_SUCCESS) {
    *dptr = 0;
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return cj_fail_cu(CUJIT_ERROR_DEVICE_MEMORY, r,
                        "cannot get %zu bytes of device memory for "
                        "an In/Out buffer or an array: CUDA_ERROR_OUT_OF_MEMORY, even after "
                        "cujit's pool gave back what it kept; free device memory or use smaller "
                        "buffers",
                        bytes);
    return cj_cu_fail(r, "allocating device memory for an In/Out buffer or an array");
  }
  __atomic_add_fetch(&p->in_use, bytes, __ATOMIC_RELAXED);
  return CUJIT_OK;
}

/* Whether the current context is one of `dev`'s: a block given back while another device
 * is current (an array freed from a thread working on another device) is not kept, as
 * no request of this device would ever take it under that context. */
static int current_is(CUdevice dev) {
  CUdevice cur;
  return cj_cu.cuCtxGetDevice(&cur) == CUDA_SUCCESS && cur == dev;
}

/* Gives memory of a live context back, that context current. */
static void pool_give(cj_pool *p, CUdevice dev, CUdeviceptr dptr, size_t bytes, CUstream stream) {
  CUcontext ctx;
  if (give_small(p, dptr, stream)) {
    /* a small block, free for the next small request on the default stream */
  } else if (keepable(p, bytes, stream, &ctx) && current_is(dev) && keep(p, ctx, dptr, bytes)) {
    /* kept for the next request on this stream */
  } else if (p->state == POOL_STREAM_ORDERED) {
    cj_cu.cuMemFreeAsync(dptr, stream);
  } else {
    cj_cu.cuStreamSynchronize(stream); /* the kernel and copies may still use it */
    cj_cu.cuMemFree(dptr);
  }
}

void cj_mem_pool_free(CUdevice dev, CUdeviceptr dptr, size_t bytes, CUstream stream,
                      const cj_mem_ctx *owner) {
  cj_pool *p = &pools[dev];
  CUcontext current = NULL;
  int other;
  if (CJ_UNLIKELY(__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) && stream &&
      cj_capture_keep(stream, dev, dptr, bytes, owner))
    return; /* the capture's work uses it at every replay: its graph gives it back */
  if (!cj_ctx_mem_dead(owner)) {
    /* given back in its own context: an array destroyed while another device is current
     * frees on its own device's stream */
    cj_cu.cuCtxGetCurrent(&current);
    other = owner->ctx && current != owner->ctx;
    if (other && cj_cu.cuCtxSetCurrent(owner->ctx) != CUDA_SUCCESS) {
      /* after a device fault no context can be made current: freed in another context
       * it would be a wrong call, and the process's memory goes with its end */
      cj_debug("device %d: %zu bytes of device memory are not given back: their context "
               "cannot be made current",
               (int)dev, bytes);
    } else {
      pool_give(p, dev, dptr, bytes, stream);
      if (other) cj_cu.cuCtxSetCurrent(current);
    }
  } else {
    /* its context was reset: the memory died with it and may already be another
     * allocation's; a small block of it leaves the list (take_small drops it) */
    cj_debug("device %d: %zu bytes of device memory made before a reset of their context are "
             "forgotten, never freed",
             (int)dev, bytes);
  }
  __atomic_sub_fetch(&p->in_use, bytes, __ATOMIC_RELAXED);
}

cujit_status cj_mem_usage(CUdevice dev, size_t *in_use, size_t *kept) {
  cj_pool *p;
  cuuint64_t reserved = 0;
  CUresult r;
  CJ_TRY(pool_of(dev, &p));
  if (in_use) *in_use = __atomic_load_n(&p->in_use, __ATOMIC_RELAXED);
  if (!kept) return CUJIT_OK;
  *kept = small_bytes(p);
  if (p->state != POOL_STREAM_ORDERED) return CUJIT_OK;
  r = cj_cu.cuMemPoolGetAttribute(p->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuMemPoolGetAttribute (the pool's size)");
  *kept += (size_t)reserved;
  return CUJIT_OK;
}

cujit_status cj_mem_trim(CUdevice dev) {
  cj_pool *p;
  CUresult r;
  CJ_TRY(pool_of(dev, &p));
  release_small(p);
  if (p->state != POOL_STREAM_ORDERED) return CUJIT_OK;
  r = give_back(p);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemPoolTrimTo");
}

cujit_status cujit_mem_pool_get_usage(size_t *in_use, size_t *kept) {
  CUcontext ctx;
  CUdevice dev;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  return cj_mem_usage(dev, in_use, kept);
}

cujit_status cujit_mem_pool_trim(void) {
  CUcontext ctx;
  CUdevice dev;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  return cj_mem_trim(dev);
}

/* ---- host memory kinds ---- */

/* The memory type of `p` (0 when the driver does not know it) and whether it is managed.
 * cuPointerGetAttributes answers ordinary memory with zeros instead of an error, which
 * keeps compute-sanitizer quiet. */
static void memory_type(const void *p, unsigned *type, unsigned *managed) {
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void *data[2];
  CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)p;
  *type = *managed = 0;
  data[0] = type;
  data[1] = managed;
  if (cj_cu.cuPointerGetAttributes) {
    if (cj_cu.cuPointerGetAttributes(2, attrs, data, ptr) != CUDA_SUCCESS) *type = *managed = 0;
  } else if (cj_cu.cuPointerGetAttribute(type, attrs[0], ptr) == CUDA_SUCCESS) {
    cj_cu.cuPointerGetAttribute(managed, attrs[1], ptr);
  } else {
    *type = 0;
  }
}

/* The ranges cujit_host_alloc handed out and not yet freed: those are pinned without
 * asking the driver, which costs two calls per buffer (the start and the end), a
 * microsecond or more on every In/Out launch. */
typedef struct pinned_range {
  uintptr_t lo, hi;
} pinned_range;

static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static pinned_range *pinned;
static size_t npinned, pinned_cap;

static void pinned_add(const void *p, size_t bytes) {
  pthread_mutex_lock(&pinned_lock);
  /* a failed growth only means this range is asked of the driver, as others are */
  if (CJ_VEC_RESERVE(pinned, pinned_cap, npinned + 1) == 0) {
    pinned[npinned].lo = (uintptr_t)p;
    pinned[npinned].hi = (uintptr_t)p + bytes;
    __atomic_store_n(&npinned, npinned + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&pinned_lock);
}

static void pinned_remove(const void *p) {
  size_t i;
  pthread_mutex_lock(&pinned_lock);
  for (i = 0; i < npinned; i++)
    if (pinned[i].lo == (uintptr_t)p) {
      pinned[i] = pinned[npinned - 1];
      __atomic_store_n(&npinned, npinned - 1, __ATOMIC_RELEASE);
      break;
    }
  if (!npinned) { /* the last one gone: no memory is kept */
    cj_free(pinned);
    pinned = NULL;
    pinned_cap = 0;
  }
  pthread_mutex_unlock(&pinned_lock);
}

/* Whether [p, p + bytes) lies inside one range from cujit_host_alloc. */
static int pinned_known(const void *p, size_t bytes) {
  uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
  size_t i;
  int found = 0;
  if (!__atomic_load_n(&npinned, __ATOMIC_ACQUIRE) || hi < lo) return 0;
  pthread_mutex_lock(&pinned_lock);
  for (i = 0; i < npinned && !found; i++) found = lo >= pinned[i].lo && hi <= pinned[i].hi;
  pthread_mutex_unlock(&pinned_lock);
  return found;
}

cj_host_kind cj_host_kind_of(const void *p, size_t bytes) {
  unsigned type, managed, last, unused;
  if (pinned_known(p, bytes)) return CJ_HOST_PINNED;
  memory_type(p, &type, &managed);
  if (managed) return CJ_HOST_PINNED; /* reachable from host and device alike */
  if (type == CU_MEMORYTYPE_DEVICE) return CJ_HOST_DEVICE;
  if (type != CU_MEMORYTYPE_HOST) return CJ_HOST_PAGEABLE;
  /* page-locked at the start; the end must be too (a registration may cover only part) */
  if (bytes > 1) {
    memory_type((const char *)p + bytes - 1, &last, &unused);
    if (last != CU_MEMORYTYPE_HOST) return CJ_HOST_PAGEABLE;
  }
  return CJ_HOST_PINNED;
}

/* ---- public: memory ---- */

static cujit_status ensure(void) {
  CUcontext ctx;
  CUdevice dev;
  return cj_ctx_ensure(&ctx, &dev);
}

cujit_status cujit_mem_alloc(CUdeviceptr *dptr, size_t bytes) {
  CUcontext ctx;
  CUdevice dev;
  cj_pool *p;
  CUresult r;
  CJ_CHECK(dptr, CUJIT_ERROR_INVALID_VALUE, "cujit_mem_alloc: dptr is NULL");
  *dptr = 0;
  CJ_CHECK(bytes, CUJIT_ERROR_INVALID_VALUE, "cujit_mem_alloc: bytes is 0");
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  r = cj_cu.cuMemAlloc(dptr, bytes);
  /* the memory the pool keeps is given back before the device is called full */
  if (r == CUDA_ERROR_OUT_OF_MEMORY && (p = pool_made(dev)) != NULL) {
    give_back(p);
    r = cj_cu.cuMemAlloc(dptr, bytes);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_b = 0, total = 0;
    cj_cu.cuMemGetInfo(&free_b, &total);
    return cj_fail_cu(CUJIT_ERROR_DEVICE_MEMORY, r,
                      "cannot allocate %zu bytes of device memory: "
                      "CUDA_ERROR_OUT_OF_MEMORY (%zu of %zu bytes free)",
                      bytes, free_b, total);
  }
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemAlloc");
}

cujit_status cujit_mem_free(CUdeviceptr dptr) {
  CUresult r;
  if (!dptr) return CUJIT_OK;
  CJ_TRY(ensure());
  r = cj_cu.cuMemFree(dptr);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemFree");
}

/* Small pageable copies go through the device's small pinned area, as In/Out buffers do
 * (staging.c): NOT_SUPPORTED when they do not, and the driver copies. */
static cujit_status small_copy(int to_device, CUdeviceptr d, void *host, size_t bytes,
                               const char *what) {
  CUcontext ctx;
  CUdevice dev;
  if (bytes >= cj_staging_min() || cj_ctx_ensure(&ctx, &dev) != CUJIT_OK ||
      cj_host_kind_of(host, bytes) != CJ_HOST_PAGEABLE)
    return CUJIT_ERROR_NOT_SUPPORTED;
  return to_device ? cj_bounce_htod(ctx, dev, d, host, bytes, NULL, what)
                   : cj_bounce_dtoh(ctx, dev, host, d, bytes, NULL, what);
}

cujit_status cujit_mem_copy_htod(CUdeviceptr dst, const void *src, size_t bytes) {
  cujit_status st;
  if (!bytes) return CUJIT_OK;
  CJ_CHECK(dst && src, CUJIT_ERROR_INVALID_VALUE, "cujit_mem_copy_htod: %s is NULL",
           !dst ? "dst" : "src");
  CJ_TRY(ensure());
  st = small_copy(1, dst, (void *)(uintptr_t)src, bytes, "cuMemcpyHtoD");
  if (st != CUJIT_ERROR_NOT_SUPPORTED) return st;
  return cj_memcpy_htod_sync(dst, src, bytes, "cuMemcpyHtoD");
}

cujit_status cujit_mem_copy_dtoh(void *dst, CUdeviceptr src, size_t bytes) {
  cujit_status st;
  CUresult r;
  if (!bytes) return CUJIT_OK;
  CJ_CHECK(dst && src, CUJIT_ERROR_INVALID_VALUE, "cujit_mem_copy_dtoh: %s is NULL",
           !dst ? "dst" : "src");
  CJ_TRY(ensure());
  st = small_copy(0, src, dst, bytes, "cuMemcpyDtoH");
  if (st != CUJIT_ERROR_NOT_SUPPORTED) return st;
  r = cj_cu.cuMemcpyDtoH(dst, src, bytes);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, "cuMemcpyDtoH");
}

/* Two device ranges of `bytes` (not 0) that a copy may join: neither address is 0, neither
 * range runs past the end of the address space, and they do not overlap. */
static cujit_status dtod_check(CUdeviceptr dst, CUdeviceptr src, size_t bytes, const char *fn) {
  CJ_CHECK(dst && src, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", fn, !dst ? "dst" : "src");
  CJ_CHECK(bytes - 1 <= UINT64_MAX - dst && bytes - 1 <= UINT64_MAX - src,
           CUJIT_ERROR_INVALID_VALUE, "%s: %zu bytes from %s run past the end of the address space",
           fn, bytes, bytes - 1 > UINT64_MAX - dst ? "dst" : "src");
  CJ_CHECK(dst - src >= bytes && src - dst >= bytes, CUJIT_ERROR_INVALID_VALUE,
           "%s: the %zu bytes at dst and at src overlap (they are %llu bytes apart); copy "
           "through a buffer of its own",
           fn, bytes, (unsigned long long)(dst > src ? dst - src : src - dst));
  return CUJIT_OK;
}

cujit_status cujit_mem_copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  CUresult r;
  if (!bytes) return CUJIT_OK;
  CJ_TRY(dtod_check(dst, src, bytes, "cujit_mem_copy_dtod"));
  CJ_TRY(ensure());
  r = cj_cu.cuMemcpyDtoDAsync(dst, src, bytes, NULL);
  if (r == CUDA_SUCCESS) r = cj_cu.cuStreamSynchronize(NULL);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, "cuMemcpyDtoD");
}

cujit_status cujit_mem_copy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                       CUstream stream) {
  CUresult r;
  if (!bytes) return CUJIT_OK;
  CJ_TRY(dtod_check(dst, src, bytes, "cujit_mem_copy_dtod_async"));
  CJ_TRY(ensure());
  r = cj_cu.cuMemcpyDtoDAsync(dst, src, bytes, stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpyDtoDAsync");
}

cujit_status cujit_host_alloc(void **ptr, size_t bytes) {
  CUresult r;
  CJ_CHECK(ptr, CUJIT_ERROR_INVALID_VALUE, "cujit_host_alloc: ptr is NULL");
  *ptr = NULL;
  CJ_CHECK(bytes, CUJIT_ERROR_INVALID_VALUE, "cujit_host_alloc: bytes is 0");
  CJ_TRY(ensure());
  r = cj_cu.cuMemHostAlloc(ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_SUCCESS) {
    pinned_add(*ptr, bytes);
    return CUJIT_OK;
  }
  *ptr = NULL;
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return cj_fail_cu(CUJIT_ERROR_OUT_OF_MEMORY, r,
                      "cannot page-lock %zu bytes of host memory: "
                      "CUDA_ERROR_OUT_OF_MEMORY (see ulimit -l and the machine's free memory)",
                      bytes);
  return cj_cu_fail(r, "cuMemHostAlloc");
}

cujit_status cujit_host_free(void *ptr) {
  CUresult r;
  if (!ptr) return CUJIT_OK;
  CJ_TRY(ensure());
  pinned_remove(ptr);
  r = cj_cu.cuMemFreeHost(ptr);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemFreeHost");
}

/* ---- public: streams ---- */

cujit_status cujit_stream_create(CUstream *stream) {
  CUresult r;
  CJ_CHECK(stream, CUJIT_ERROR_INVALID_VALUE, "cujit_stream_create: stream is NULL");
  *stream = NULL;
  CJ_TRY(ensure());
  r = cj_cu.cuStreamCreate(stream, CU_STREAM_NON_BLOCKING);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuStreamCreate");
}

cujit_status cujit_stream_destroy(CUstream stream) {
  CUresult r;
  if (!stream) return CUJIT_OK;
  CJ_TRY(ensure());
  CJ_TRY(cj_capture_refuse(stream, "cujit_stream_destroy() destroys the stream"));
  r = cj_cu.cuStreamDestroy(stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuStreamDestroy");
}

cujit_status cujit_stream_synchronize(CUstream stream) {
  CUresult r;
  CJ_TRY(ensure());
  CJ_TRY(cj_capture_refuse(stream, "cujit_stream_synchronize() waits for the stream"));
  r = cj_cu.cuStreamSynchronize(stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, "cuStreamSynchronize");
}

cujit_status cujit_synchronize(void) {
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_CHECK(!cj_capture_in_ctx(ctx), CUJIT_ERROR_CAPTURE,
           "cujit_synchronize() waits for all work of the current context, but a stream of it "
           "is being captured into a graph (cujit_graph_begin()), whose work runs only when the "
           "graph is launched: wait for the streams you need with cujit_stream_synchronize(), "
           "or after cujit_graph_end(); nothing was done, and the capture goes on");
  r = cj_cu.cuCtxSynchronize();
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, "cuCtxSynchronize");
}

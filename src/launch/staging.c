/* staging.c - pageable host memory moved faster than one plain pageable copy: the transfer
 * is split between a few threads ("lanes"), each moving its share through two reusable
 * pinned chunks, so that memcpy on several cores and DMA overlap. Each device has lanes of
 * its own, so that transfers to different devices run side by side: they are created on
 * the device's first staged transfer, bound to the context that made it, and live until
 * the process exits (they make no CUDA call then: they wait on a condition variable).
 *
 * Small pageable transfers go through one small pinned area per device instead (at the
 * end of this file), from the device's CJ_BOUNCE_AFTER-th such transfer on: a launch
 * through it saves a few microseconds over the driver's pageable copies, but making it
 * (cuMemHostAlloc) costs a process about a millisecond, which a short program would pay
 * at its first launch for nothing. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"

#define CJ_STAGING_MAX_LANES 16

typedef struct stager stager;

typedef struct lane {
  stager *owner;
  int index;
  unsigned char *pin[2]; /* page-locked chunks */
  CUevent ev[2];         /* recorded after each chunk's copy */
  int used[2];
  CUresult err;     /* the lane's first failure in the current transfer */
  CUresult ctx_err; /* a helper's: its cuCtxSetCurrent failed (tried again at each transfer) */
} lane;

typedef struct job {
  int to_device;
  unsigned char *host;
  CUdeviceptr dev;
  size_t bytes;
  CUstream stream;
} job;

/* One device's lanes. */
struct stager {
  int state; /* 0 not set up, 1 ready, -1 unavailable (atomic) */
  CUcontext ctx;
  unsigned long long ctx_id; /* the life of ctx its chunks and events were made in (atomic) */
  size_t chunk;
  int nlanes;
  lane lanes[CJ_STAGING_MAX_LANES];
  pthread_mutex_t run_lock; /* one transfer at a time on this device */
  pthread_mutex_t lock;     /* guards gen, pending, job */
  pthread_cond_t go, done;
  unsigned long gen;
  int pending;
  job job;
};

/* Indexed by device ordinal; set up one at a time. */
static CJ_LARGE stager stagers[CJ_DEVICE_SLOTS];
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t min_once = PTHREAD_ONCE_INIT;
static size_t min_bytes;

/* A size from the environment (common/env.c's table: its default, and a warning for a bad
 * value). */
static size_t env_size(const char *name) {
  uint64_t v;
  cj_env_u64(name, &v);
  return (size_t)v;
}

static void min_init(void) { min_bytes = env_size("CUJIT_STAGING_MIN"); }

size_t cj_staging_min(void) {
  pthread_once(&min_once, min_init);
  return min_bytes;
}

/* Lanes: env CUJIT_STAGING_THREADS (0 turns staging off), else half the cores, at most 8,
 * and none below two (the driver's own pageable copy is then faster; docs/benchmarks.md has
 * the measurements). */
static int lane_count(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN), n;
  uint64_t v;
  if (cj_env_u64("CUJIT_STAGING_THREADS", &v) == CJ_ENV_SET)
    return v > CJ_STAGING_MAX_LANES ? CJ_STAGING_MAX_LANES : (int)v;
  n = cores / 2;
  return n < 2 ? 0 : n > 8 ? 8 : (int)n;
}

/* ---- one lane's share of a transfer ---- */

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

void cj_staging_share(size_t bytes, int nlanes, int i, size_t *begin, size_t *end) {
  size_t share = (bytes + (size_t)nlanes - 1) / (size_t)nlanes;
  share = (share + CJ_STAGING_ALIGN - 1) / CJ_STAGING_ALIGN * CJ_STAGING_ALIGN;
  *begin = min_size(share * (size_t)i, bytes);
  *end = min_size(*begin + share, bytes);
}

static CUresult lane_to_device(lane *l, const job *j, size_t begin, size_t end) {
  size_t off, k, chunk = l->owner->chunk;
  CUresult r = CUDA_SUCCESS;
  for (off = begin, k = 0; off < end && r == CUDA_SUCCESS; off += chunk, k++) {
    size_t n = min_size(chunk, end - off), b = k & 1;
    if (l->used[b] && (r = cj_cu.cuEventSynchronize(l->ev[b])) != CUDA_SUCCESS) break;
    memcpy(l->pin[b], j->host + off, n);
    if ((r = cj_cu.cuMemcpyHtoDAsync(j->dev + off, l->pin[b], n, j->stream)) == CUDA_SUCCESS)
      r = cj_cu.cuEventRecord(l->ev[b], j->stream);
    l->used[b] = 1;
  }
  return r;
}

static CUresult lane_fetch(lane *l, const job *j, size_t off, size_t end, size_t b) {
  CUresult r = cj_cu.cuMemcpyDtoHAsync(l->pin[b], j->dev + off,
                                       min_size(l->owner->chunk, end - off), j->stream);
  if (r == CUDA_SUCCESS) r = cj_cu.cuEventRecord(l->ev[b], j->stream);
  l->used[b] = 1;
  return r;
}

/* Chunk k+1 is in flight while chunk k is copied out of its pinned buffer. */
static CUresult lane_to_host(lane *l, const job *j, size_t begin, size_t end) {
  size_t off, k, b, chunk = l->owner->chunk;
  CUresult r = CUDA_SUCCESS;
  for (b = 0; b < 2 && r == CUDA_SUCCESS; b++)
    if (l->used[b]) r = cj_cu.cuEventSynchronize(l->ev[b]); /* an earlier upload may read it */
  if (r == CUDA_SUCCESS) r = lane_fetch(l, j, begin, end, 0);
  for (off = begin, k = 0; off < end && r == CUDA_SUCCESS; off += chunk, k++) {
    b = k & 1;
    if (off + chunk < end && (r = lane_fetch(l, j, off + chunk, end, b ^ 1)) != CUDA_SUCCESS) break;
    if ((r = cj_cu.cuEventSynchronize(l->ev[b])) != CUDA_SUCCESS) break;
    memcpy(j->host + off, l->pin[b], min_size(chunk, end - off));
  }
  return r;
}

static void lane_run(lane *l, const job *j) {
  size_t begin, end;
  cj_staging_share(j->bytes, l->owner->nlanes, l->index, &begin, &end);
  l->err = CUDA_SUCCESS;
  if (begin >= end) return;
  if (l->ctx_err != CUDA_SUCCESS) { /* no context current here: no copy can be made */
    l->err = l->ctx_err;
    return;
  }
  l->err = j->to_device ? lane_to_device(l, j, begin, end) : lane_to_host(l, j, begin, end);
}

static void *lane_main(void *arg) {
  lane *l = arg;
  stager *s = l->owner;
  unsigned long seen = 0;
  job j;
  l->ctx_err = cj_cu.cuCtxSetCurrent(s->ctx);
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (s->gen == seen) pthread_cond_wait(&s->go, &s->lock);
    seen = s->gen;
    j = s->job;
    pthread_mutex_unlock(&s->lock);
    if (l->ctx_err != CUDA_SUCCESS) l->ctx_err = cj_cu.cuCtxSetCurrent(s->ctx);
    lane_run(l, &j);
    pthread_mutex_lock(&s->lock);
    if (--s->pending == 0) pthread_cond_signal(&s->done);
  }
  return NULL;
}

/* ---- setup ---- */

static void lanes_free(stager *s, int n) {
  int i, b;
  for (i = 0; i < n; i++) {
    for (b = 0; b < 2; b++) {
      if (s->lanes[i].pin[b]) cj_cu.cuMemFreeHost(s->lanes[i].pin[b]);
      if (s->lanes[i].ev[b]) cj_cu.cuEventDestroy(s->lanes[i].ev[b]);
    }
  }
  memset(s->lanes, 0, sizeof s->lanes);
}

/* Makes the pinned chunks and events of s's n lanes in the context current on this
 * thread; 0 (none kept) when that fails. */
static int lanes_make(stager *s, int n) {
  int i, b;
  for (i = 0; i < n; i++) {
    s->lanes[i].owner = s;
    s->lanes[i].index = i;
    for (b = 0; b < 2; b++) {
      if (cj_cu.cuMemHostAlloc((void **)&s->lanes[i].pin[b], s->chunk, CU_MEMHOSTALLOC_PORTABLE) !=
              CUDA_SUCCESS ||
          cj_cu.cuEventCreate(&s->lanes[i].ev[b], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        lanes_free(s, n);
        return 0;
      }
    }
  }
  return 1;
}

/* Makes s's pinned chunks and events in ctx (current on this thread) and starts its
 * helper threads; lane 0 is the caller's. Returns 0 when staging is off or failed. */
static int setup(stager *s, CUcontext ctx, CUdevice dev) {
  pthread_attr_t attr;
  pthread_t t;
  int i, n = lane_count();
  if (n == 0) return 0;
  s->ctx = ctx;
  s->ctx_id = cj_ctx_id(ctx);
  s->nlanes = n;
  s->chunk = env_size("CUJIT_STAGING_CHUNK");
  if (s->chunk < 4096) s->chunk = 4096;
  if (!lanes_make(s, n)) return 0;
  pthread_mutex_init(&s->run_lock, NULL);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->go, NULL);
  pthread_cond_init(&s->done, NULL);
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (i = 1; i < n; i++) {
    if (pthread_create(&t, &attr, lane_main, &s->lanes[i]) != 0) {
      s->nlanes = i; /* fewer helpers than asked: the ones started serve */
      break;
    }
  }
  pthread_attr_destroy(&attr);
  cj_debug("staging pageable copies on device %d with %d lane%s of 2 x %zu-byte pinned chunks",
           (int)dev, s->nlanes, s->nlanes == 1 ? "" : "s", s->chunk);
  return 1;
}

/* After a reset of s's context (the same handle, a new life): its chunks and events died
 * with the old life, and are made again in the new one (the helper threads keep the
 * handle current); nothing of the old is freed or used. Returns 0 when that fails, and
 * staging is then off for the device. */
static int renew(stager *s, unsigned long long id) {
  int ok = 1;
  pthread_mutex_lock(&s->run_lock); /* no transfer runs meanwhile */
  if (__atomic_load_n(&s->ctx_id, __ATOMIC_ACQUIRE) != id) {
    memset(s->lanes, 0, sizeof s->lanes[0] * (size_t)s->nlanes);
    ok = lanes_make(s, s->nlanes);
    if (ok) {
      __atomic_store_n(&s->ctx_id, id, __ATOMIC_RELEASE);
      cj_debug("staging: the context's pinned chunks died with a reset; made again");
    } else {
      __atomic_store_n(&s->state, -1, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&s->run_lock);
  return ok;
}

/* The lanes of device `dev`, set up on its first use, when they work in ctx (in its
 * current life: made again after a reset); else NULL. */
static stager *stager_for(CUcontext ctx, CUdevice dev) {
  stager *s;
  unsigned long long id;
  int state;
  if (dev < 0 || dev >= CJ_DEVICE_SLOTS) return NULL;
  s = &stagers[dev];
  state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
  if (!state) {
    pthread_mutex_lock(&setup_lock);
    if (!(state = s->state)) {
      state = setup(s, ctx, dev) ? 1 : -1;
      __atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&setup_lock);
  }
  if (state != 1 || ctx != s->ctx) return NULL;
  id = cj_ctx_id(ctx);
  if (id && id != __atomic_load_n(&s->ctx_id, __ATOMIC_ACQUIRE) && !renew(s, id)) return NULL;
  return s;
}

/* A failed transfer, named: a helper that could not make the device's context current says
 * so, for the driver's error then says nothing of the copies. */
static cujit_status run_failed(const stager *s, const lane *l, const job *j) {
  const char *what = j->to_device ? "staging an In buffer" : "staging an Out buffer", *text = NULL;
  if (l->err != l->ctx_err) return cj_cu_fail(l->err, what);
  cj_cu.cuGetErrorString(l->err, &text);
  return cj_fail_cu(cj_cu_status(l->err), l->err,
                    "%s failed: staging thread %d of device %d could not make the device's "
                    "context current (cuCtxSetCurrent failed: %s (%s)), so its share of the "
                    "copy was not made; the next staged copy tries again",
                    what, l->index, (int)(s - stagers), cj_cu_name(l->err),
                    text ? text : "no description");
}

static cujit_status run(stager *s, const job *j) {
  CUresult r = CUDA_SUCCESS;
  cujit_status st;
  int i;
  pthread_mutex_lock(&s->run_lock);
  pthread_mutex_lock(&s->lock);
  s->job = *j;
  s->pending = s->nlanes - 1;
  s->gen++;
  pthread_cond_broadcast(&s->go);
  pthread_mutex_unlock(&s->lock);
  lane_run(&s->lanes[0], j);
  pthread_mutex_lock(&s->lock);
  while (s->pending > 0) pthread_cond_wait(&s->done, &s->lock);
  pthread_mutex_unlock(&s->lock);
  for (i = 0; i < s->nlanes && (r = s->lanes[i].err) == CUDA_SUCCESS; i++) {
  }
  st = r == CUDA_SUCCESS ? CUJIT_OK : run_failed(s, &s->lanes[i], j);
  pthread_mutex_unlock(&s->run_lock);
  return st;
}

cujit_status cj_stage_htod(CUcontext ctx, CUdevice dev, CUdeviceptr dst, const void *src,
                           size_t bytes, CUstream stream) {
  stager *s = stager_for(ctx, dev);
  job j;
  if (!s) return CUJIT_ERROR_NOT_SUPPORTED;
  j.to_device = 1;
  j.host = (unsigned char *)(uintptr_t)src;
  j.dev = dst;
  j.bytes = bytes;
  j.stream = stream;
  return run(s, &j);
}

cujit_status cj_stage_dtoh(CUcontext ctx, CUdevice dev, void *dst, CUdeviceptr src, size_t bytes,
                           CUstream stream) {
  stager *s = stager_for(ctx, dev);
  job j;
  if (!s) return CUJIT_ERROR_NOT_SUPPORTED;
  j.to_device = 0;
  j.host = dst;
  j.dev = src;
  j.bytes = bytes;
  j.stream = stream;
  return run(s, &j);
}

/* ---- small pageable transfers: one pinned area per device ----
 *
 * An area holds the small pageable buffers of one launch (or one copy) at a time: taken
 * with an atomic flag, never waited for (a transfer that finds it taken copies directly),
 * made on the CJ_BOUNCE_AFTER-th transfer that could use it (the earlier ones copy
 * directly) at CJ_BOUNCE_MIN bytes and grown, by powers of
 * two, to what a transfer needs, up to CJ_BOUNCE_MAX. Kept until the process exits. The
 * pinned memory belongs to the context it was made in and dies with it, so an area is
 * made and used only in a primary context this library holds (which the program cannot
 * destroy), and made again when that context was reset (its ID changed). */

#define CJ_BOUNCE_MIN ((size_t)64 << 10)

typedef struct bounce {
  int busy;                  /* taken (atomic) */
  unsigned asked;            /* transfers that could have used it, up to CJ_BOUNCE_AFTER */
  int broken;                /* the pinned memory could not be had: never asked again */
  unsigned long long ctx_id; /* of the context mem was made in */
  unsigned char *mem;
  size_t size;
} bounce;

static CJ_LARGE bounce bounces[CJ_DEVICE_SLOTS];
static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static int small_off;

/* CUJIT_STAGING_THREADS=0 lets the driver copy every pageable buffer, small ones too
 * (warned about by lane_count when it is not a count). */
static void small_init(void) {
  uint64_t v;
  small_off = cj_env_u64("CUJIT_STAGING_THREADS", &v) == CJ_ENV_SET && v == 0;
}

/* Grows b to at least `bytes` in the context of ID id (b is taken, so nothing is in flight
 * from it). */
static int bounce_grow(bounce *b, CUdevice dev, unsigned long long id, size_t bytes) {
  size_t size = CJ_BOUNCE_MIN;
  double t0 = cj_now_s();
  void *mem = NULL;
  while (size < bytes) size *= 2;
  if (cj_cu.cuMemHostAlloc(&mem, size, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
    cj_debug("device %d: no pinned area for small pageable copies; the driver copies them",
             (int)dev);
    b->broken = 1;
    return 0;
  }
  if (b->mem) cj_cu.cuMemFreeHost(b->mem);
  b->mem = mem;
  b->size = size;
  b->ctx_id = id;
  cj_debug("device %d: a %zu-byte pinned area for small pageable copies made in %.3f ms", (int)dev,
           size, (cj_now_s() - t0) * 1e3);
  return 1;
}

unsigned char *cj_bounce_take(CUcontext ctx, CUdevice dev, size_t bytes) {
  unsigned long long id = 0;
  bounce *b;
  pthread_once(&small_once, small_init);
  if (dev < 0 || dev >= CJ_DEVICE_SLOTS || bytes > CJ_BOUNCE_MAX || small_off ||
      !cj_ctx_retained(ctx))
    return NULL;
  b = &bounces[dev];
  if (__atomic_load_n(&b->asked, __ATOMIC_RELAXED) < CJ_BOUNCE_AFTER &&
      __atomic_add_fetch(&b->asked, 1, __ATOMIC_RELAXED) <= CJ_BOUNCE_AFTER)
    return NULL;
  if (__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE)) return NULL;
  if (cj_cu.cuCtxGetId && cj_cu.cuCtxGetId(ctx, &id) != CUDA_SUCCESS) id = 0;
  if (b->mem && id != b->ctx_id) { /* a reset ended its context, and its memory with it */
    b->mem = NULL;
    b->size = 0;
  }
  if (b->broken || (b->size < bytes && !bounce_grow(b, dev, id, bytes))) {
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
    return NULL;
  }
  return b->mem;
}

void cj_bounce_give(CUdevice dev) { __atomic_store_n(&bounces[dev].busy, 0, __ATOMIC_RELEASE); }

cujit_status cj_bounce_htod(CUcontext ctx, CUdevice dev, CUdeviceptr dst, const void *src,
                            size_t bytes, CUstream stream, const char *what) {
  unsigned char *area = cj_bounce_take(ctx, dev, bytes);
  CUresult r;
  if (!area) return CUJIT_ERROR_NOT_SUPPORTED;
  memcpy(area, src, bytes);
  r = cj_cu.cuMemcpyHtoDAsync(dst, area, bytes, stream);
  if (r == CUDA_SUCCESS) r = cj_cu.cuStreamSynchronize(stream); /* before the area is reused */
  cj_bounce_give(dev);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, what);
}

cujit_status cj_bounce_dtoh(CUcontext ctx, CUdevice dev, void *dst, CUdeviceptr src, size_t bytes,
                            CUstream stream, const char *what) {
  unsigned char *area = cj_bounce_take(ctx, dev, bytes);
  CUresult r;
  if (!area) return CUJIT_ERROR_NOT_SUPPORTED;
  r = cj_cu.cuMemcpyDtoHAsync(area, src, bytes, stream);
  if (r == CUDA_SUCCESS) r = cj_cu.cuStreamSynchronize(stream);
  if (r == CUDA_SUCCESS) memcpy(dst, area, bytes);
  cj_bounce_give(dev);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, what);
}

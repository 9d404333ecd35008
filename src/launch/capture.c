/* capture.c - the captures cujit runs: which streams are being captured through
 * cujit_graph_begin() (and the streams forked from them), and what each capture's work
 * needs kept alive for its graph: the modules whose kernels it launched, the arrays'
 * memory its launches use (found by the layer above: cj_capture_set_scan), the memory
 * given back while it ran; and each kernel launch's node, for cujit_graph_set_args().
 *
 * The hot paths test cj_captures_live alone: while no capture runs, a launch, an
 * allocation or a free asks nothing more, and never the driver. While one runs, they look
 * their stream up in this table, and ask the driver about a stream the table does not
 * hold (cuStreamGetCaptureInfo: a stream forked from a capture by an event belongs to it,
 * and is then held; a stream in no capture is asked about again at each call). A capture
 * begun through the driver directly is not in the table: cujit neither holds nor refuses
 * anything for it. */
#include <string.h>

#include "launch/capture.h"

int cj_captures_live;

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static cj_capture **caps;
static size_t n_caps, cap_caps;
static cj_gres_scan_fn scan_fn; /* set once by the layer above (atomic) */

cujit_status cj_capture_add(cj_capture *c) {
  int full;
  pthread_mutex_lock(&cap_lock);
  full = CJ_VEC_RESERVE(caps, cap_caps, n_caps + 1) != 0;
  if (!full) {
    caps[n_caps++] = c;
    __atomic_store_n(&cj_captures_live, (int)n_caps, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&cap_lock);
  return full ? cj_fail_oom("beginning a capture") : CUJIT_OK;
}

/* The capture of origin `stream` (lock held). */
static size_t find_origin(CUstream stream) {
  size_t i;
  for (i = 0; i < n_caps; i++)
    if (caps[i]->stream == stream) return i;
  return n_caps;
}

cj_capture *cj_capture_remove(CUstream stream) {
  cj_capture *c = NULL;
  size_t i;
  pthread_mutex_lock(&cap_lock);
  if ((i = find_origin(stream)) < n_caps) {
    c = caps[i];
    caps[i] = caps[--n_caps];
    __atomic_store_n(&cj_captures_live, (int)n_caps, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&cap_lock);
  return c;
}

int cj_capture_origin(CUstream stream, pthread_t *thread, int *mode) {
  size_t i;
  int found;
  pthread_mutex_lock(&cap_lock);
  if ((found = (i = find_origin(stream)) < n_caps)) {
    if (thread) *thread = caps[i]->thread;
    if (mode) *mode = caps[i]->mode;
  }
  pthread_mutex_unlock(&cap_lock);
  return found;
}

/* The capture `stream` belongs to, known already (lock held), or NULL. */
static cj_capture *find_known(CUstream stream) {
  size_t i;
  int k;
  for (i = 0; i < n_caps; i++) {
    if (caps[i]->stream == stream) return caps[i];
    for (k = 0; k < caps[i]->n_joined; k++)
      if (caps[i]->joined[k] == stream) return caps[i];
  }
  return NULL;
}

/* A stream the table does not know: the capture the driver says it is in, if it is one of
 * the table's, which then knows it (lock not held). */
static cj_capture *find_joined(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  cj_capture *c = NULL;
  size_t i;
  if (!cj_cu.cuStreamGetCaptureInfo ||
      cj_cu.cuStreamGetCaptureInfo(stream, &status, &id, NULL, NULL, NULL, NULL) != CUDA_SUCCESS ||
      status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !id)
    return NULL;
  pthread_mutex_lock(&cap_lock);
  for (i = 0; i < n_caps && !c; i++)
    if (caps[i]->id == id) c = caps[i];
  if (c && c->n_joined < (int)CJ_COUNT(c->joined)) c->joined[c->n_joined++] = stream;
  pthread_mutex_unlock(&cap_lock);
  return c;
}

/* The legacy default stream and the per-thread one are never captured by cujit. */
static int special(CUstream stream) {
  return !stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

static cj_capture *capture_of(CUstream stream) {
  cj_capture *c;
  if (!__atomic_load_n(&cj_captures_live, __ATOMIC_ACQUIRE) || special(stream)) return NULL;
  pthread_mutex_lock(&cap_lock);
  c = find_known(stream);
  pthread_mutex_unlock(&cap_lock);
  return c ? c : find_joined(stream);
}

cj_gres *cj_capture_res(CUstream stream) {
  cj_capture *c = capture_of(stream);
  return c ? &c->res : NULL;
}

int cj_capture_in_ctx(CUcontext ctx) {
  size_t i;
  int found = 0;
  if (!__atomic_load_n(&cj_captures_live, __ATOMIC_ACQUIRE)) return 0;
  pthread_mutex_lock(&cap_lock);
  for (i = 0; i < n_caps && !found; i++) found = caps[i]->res.ctx == ctx;
  pthread_mutex_unlock(&cap_lock);
  return found;
}

cujit_status cj_capture_refuse(CUstream stream, const char *what) {
  CJ_CHECK(!capture_of(stream), CUJIT_ERROR_CAPTURE,
           "%s, but stream %p is being captured into a graph (cujit_graph_begin()), whose "
           "work runs only when the graph is launched: do it before cujit_graph_begin() or "
           "after cujit_graph_end(); nothing was done, and the capture goes on",
           what, (void *)stream);
  return CUJIT_OK;
}

/* ---- what a capture holds ---- */

static size_t seen_slot(const cj_gres *r, const void *obj) {
  size_t i = ((uintptr_t)obj >> 4) * 0x9E3779B97F4A7C15ull & (r->cap_seen - 1);
  while (r->seen[i] && r->seen[i] != obj) i = (i + 1) & (r->cap_seen - 1);
  return i;
}

/* Makes room in the set for one more (lock held); -1 when out of memory. */
static int seen_grow(cj_gres *r) {
  size_t cap = r->cap_seen ? 2 * r->cap_seen : 64, old_cap = r->cap_seen, i;
  void **old = r->seen, **v;
  if (2 * (r->n_holds + 1) <= r->cap_seen) return 0;
  if (!(v = cj_calloc(cap, sizeof *v))) return -1;
  r->seen = v;
  r->cap_seen = cap;
  for (i = 0; i < old_cap; i++)
    if (old[i]) r->seen[seen_slot(r, old[i])] = old[i];
  cj_free(old);
  return 0;
}

int cj_gres_hold(cj_gres *r, void *obj, void (*release)(void *obj)) {
  int added = -1;
  pthread_mutex_lock(&cap_lock);
  if (r->cap_seen && r->seen[seen_slot(r, obj)]) {
    added = 0;
  } else if (seen_grow(r) == 0 && CJ_VEC_RESERVE(r->holds, r->cap_holds, r->n_holds + 1) == 0) {
    r->seen[seen_slot(r, obj)] = obj;
    r->holds[r->n_holds].obj = obj;
    r->holds[r->n_holds++].release = release;
    added = 1;
  } else {
    r->failed = 1;
  }
  pthread_mutex_unlock(&cap_lock);
  return added;
}

void cj_capture_set_scan(cj_gres_scan_fn fn) { __atomic_store_n(&scan_fn, fn, __ATOMIC_RELEASE); }

void cj_gres_scan(cj_gres *r, void *const *params, const size_t *sizes, size_t n) {
  cj_gres_scan_fn fn = __atomic_load_n(&scan_fn, __ATOMIC_ACQUIRE);
  if (fn && n) fn(r, params, sizes, n);
}

void cj_capture_fail(CUstream stream) {
  cj_gres *r = cj_capture_res(stream);
  if (!r) return;
  pthread_mutex_lock(&cap_lock);
  r->failed = 1;
  pthread_mutex_unlock(&cap_lock);
}

void cj_gres_free(cj_gres *r) {
  cj_free(r->holds);
  cj_free(r->seen);
  cj_free(r->mem);
  cj_free(r->launches);
  memset(r, 0, sizeof *r);
}

static void unhold_module(void *m) { cj_module_unhold(m); }

/* The node the launch just made on `stream`: the only node the stream's next work would
 * depend on. */
static CUgraphNode last_node(CUstream stream) {
  CUstreamCaptureStatus status;
  const CUgraphNode *deps = NULL;
  size_t n = 0;
  if (!cj_cu.cuStreamGetCaptureInfo ||
      cj_cu.cuStreamGetCaptureInfo(stream, &status, NULL, NULL, &deps, NULL, &n) != CUDA_SUCCESS ||
      n != 1 || !deps)
    return NULL;
  return deps[0];
}

cujit_status cj_capture_launched(const cujit_function *fn, CUfunction handle, int by_kernel,
                                 CUstream stream, void **params, cujit_dim3 grid, cujit_dim3 block,
                                 unsigned shared_bytes) {
  cj_gres *r = cj_capture_res(stream);
  cj_glaunch l;
  int ok, held;
  if (!r) return CUJIT_OK;
  if ((held = cj_gres_hold(r, fn->module, unhold_module)) == 1) cj_module_hold(fn->module);
  cj_gres_scan(r, params, fn->param_sizes, fn->nparams);
  l.fn = fn;
  l.node = last_node(stream);
  l.handle = handle;
  l.by_kernel = by_kernel;
  l.grid = grid;
  l.block = block;
  l.shared_bytes = shared_bytes;
  pthread_mutex_lock(&cap_lock);
  ok = held >= 0 && CJ_VEC_RESERVE(r->launches, r->cap_launches, r->n_launches + 1) == 0;
  if (ok)
    r->launches[r->n_launches++] = l;
  else
    r->failed = 1;
  pthread_mutex_unlock(&cap_lock);
  return ok ? CUJIT_OK : cj_fail_oom("recording a launch in a capture");
}

/* ---- memory given back and asked for during a capture ---- */

int cj_capture_keep(CUstream stream, CUdevice dev, CUdeviceptr ptr, size_t bytes,
                    const cj_mem_ctx *owner) {
  cj_capture *c = capture_of(stream);
  cj_gres *r;
  size_t i;
  if (!c) return 0;
  r = &c->res;
  pthread_mutex_lock(&cap_lock);
  for (i = 0; i < r->n_mem; i++) /* memory it took again, given back once more */
    if (r->mem[i].taken && r->mem[i].ptr == ptr && r->mem[i].dev == dev) break;
  if (i == r->n_mem && CJ_VEC_RESERVE(r->mem, r->cap_mem, r->n_mem + 1) != 0) {
    r->failed = 1; /* not kept: nothing frees it but the process's end */
    pthread_mutex_unlock(&cap_lock);
    return 1;
  }
  if (i == r->n_mem) r->n_mem++;
  r->mem[i].dev = dev;
  r->mem[i].ptr = ptr;
  r->mem[i].bytes = bytes;
  r->mem[i].owner = *owner;
  r->mem[i].stream = stream;
  r->mem[i].taken = 0;
  pthread_mutex_unlock(&cap_lock);
  return 1;
}

int cj_capture_take(CUstream stream, CUdevice dev, size_t bytes, CUdeviceptr *ptr,
                    cj_mem_ctx *owner, CUstream *side) {
  cj_capture *c = capture_of(stream);
  cj_gres *r;
  size_t i;
  if (!c) return -1;
  r = &c->res;
  pthread_mutex_lock(&cap_lock);
  for (i = 0; i < r->n_mem; i++) {
    cj_gmem *m = &r->mem[i];
    if (m->taken || m->stream != stream || m->dev != dev || m->bytes != bytes) continue;
    m->taken = 1;
    *ptr = m->ptr;
    *owner = m->owner;
    pthread_mutex_unlock(&cap_lock);
    return 1;
  }
  *side = r->side;
  pthread_mutex_unlock(&cap_lock);
  return 0;
}

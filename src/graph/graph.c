/* graph.c - CUDA graphs (cujit_graph_*): a capture begun on a stream (cuStreamBeginCapture)
 * and ended into an executable graph, launched again on any stream, updated in place from
 * a new capture (cuGraphExecUpdate) or launch by launch (cuGraphExecKernelNodeSetParams),
 * and destroyed once its work is done.
 *
 * A graph keeps what its capture gathered (capture.c): the modules whose kernels it
 * launches, the arrays' memory its work uses, the memory given back during the capture,
 * each on a reference of its own, so that destroying any of them while the graph lives
 * only takes the handle away; the graph gives them back when it is destroyed. It knows
 * when its work is done by an event recorded after each of its launches: its destroy (and
 * an update, for what the update replaced) waits for that event, and for the event
 * recorded on the captured stream before the capture began (work queued there earlier may
 * still use memory the capture kept), before giving anything back. A graph is a handle
 * (common/handle.c): a destroyed one is refused. */
#include <string.h>

#include "launch/capture.h"

/* What an update replaced: given back once the launches before it have finished. */
typedef struct retired {
  cj_gres res;
  CUgraph graph; /* when the update made a new executable graph: the old one */
  CUgraphExec exec;
} retired;

typedef struct cj_graph {
  CUgraph graph; /* what exec was made from: cujit_graph_set_args() names its nodes */
  CUgraphExec exec;
  CUcontext ctx;
  unsigned long long ctx_id; /* that life of the context (its memory dies with it) */
  CUevent done;              /* recorded after each launch */
  int launched;              /* launched at least once: done has been recorded */
  int refs;                  /* the handle, and the captures and graphs that launch it */
  pthread_mutex_t lock;      /* a launch with its record; updates; set_args */
  cj_gres res;
  retired *old;
  size_t n_old, cap_old;
} cj_graph;

static pthread_mutex_t graphs_lock = PTHREAD_MUTEX_INITIALIZER;
static cj_handles graphs = CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x47));

static cj_graph *graph_of(const cujit_graph *h) {
  cj_graph *g;
  pthread_mutex_lock(&graphs_lock);
  g = cj_handle_get(&graphs, (uintptr_t)h);
  pthread_mutex_unlock(&graphs_lock);
  return g;
}

static cujit_status not_live(const cujit_graph *h, const char *fn) {
  CJ_CHECK(h, CUJIT_ERROR_INVALID_VALUE, "%s: graph is NULL", fn);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: graph is not a live graph (destroyed already, or never made by "
                 "cujit_graph_end())",
                 fn);
}

static int special(CUstream stream) {
  return !stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

/* Every entry point a graph needs. */
static cujit_status driver_able(const char *fn) {
  CJ_CHECK(cj_cu.cuStreamBeginCapture && cj_cu.cuStreamEndCapture && cj_cu.cuStreamIsCapturing &&
               cj_cu.cuStreamGetCaptureInfo && cj_cu.cuThreadExchangeStreamCaptureMode &&
               cj_cu.cuGraphInstantiateWithFlags && cj_cu.cuGraphLaunch &&
               cj_cu.cuGraphExecUpdate && cj_cu.cuGraphExecKernelNodeSetParams &&
               cj_cu.cuGraphExecDestroy && cj_cu.cuGraphDestroy && cj_cu.cuEventQuery,
           CUJIT_ERROR_NOT_SUPPORTED,
           "%s: the CUDA driver lacks the graph API (cuStreamBeginCapture, cuGraphLaunch, "
           "cuGraphExecUpdate, ...); update the driver",
           fn);
  return CUJIT_OK;
}

/* ---- giving back what a capture gathered ---- */

/* Gives back everything r holds, once the work queued on its stream before the capture
 * began has finished (the launches of its graph are waited for by the caller), and frees
 * its side stream and event. In the relaxed capture mode: unloading code and freeing are
 * allowed while other streams are captured. */
static void res_release(cj_gres *r, int ctx_alive) {
  CUstreamCaptureMode mode;
  size_t i;
  cj_capture_relax(&mode);
  if (ctx_alive && r->begun) cj_cu.cuEventSynchronize(r->begun); /* a fault shows elsewhere */
  for (i = 0; i < r->n_holds; i++) r->holds[i].release(r->holds[i].obj);
  for (i = 0; i < r->n_mem; i++) /* memory taken again belongs to its new holder */
    if (!r->mem[i].taken)
      cj_mem_pool_free(r->mem[i].dev, r->mem[i].ptr, r->mem[i].bytes, ctx_alive ? r->side : NULL,
                       &r->mem[i].owner);
  if (ctx_alive && r->side) cj_cu.cuStreamDestroy(r->side);
  if (ctx_alive && r->begun) cj_cu.cuEventDestroy(r->begun);
  cj_capture_restore(&mode);
  cj_gres_free(r);
}

/* Whether the context the graph (or capture) was made in still has that life. */
static int alive(CUcontext ctx, unsigned long long id) { return !id || cj_ctx_id(ctx) == id; }

/* Makes ctx current for a release from any thread; *was gets what was. 1, or 0 (the
 * thread's error detail saying so, as a destroy returns nothing) when the driver refuses:
 * the graph's driver objects are then left to its context, which frees them when it ends. */
static int enter_ctx(CUcontext ctx, CUcontext *was) {
  const char *text = NULL;
  CUresult r;
  *was = NULL;
  cj_cu.cuCtxGetCurrent(was);
  if (*was == ctx || (r = cj_cu.cuCtxSetCurrent(ctx)) == CUDA_SUCCESS) return 1;
  cj_cu.cuGetErrorString(r, &text);
  cj_fail_cu(cj_cu_status(r), r,
             "cujit_graph_destroy: the graph's context could not be made current to free it "
             "(cuCtxSetCurrent failed: %s (%s)); its executable graph, event and stream are left "
             "to that context, which frees them when it ends, and what the graph held is given "
             "back without waiting for its launches",
             cj_cu_name(r), text ? text : "no description");
  return 0;
}

static void leave_ctx(CUcontext ctx, CUcontext was) {
  const char *text = NULL;
  CUresult r;
  if (was == ctx || (r = cj_cu.cuCtxSetCurrent(was)) == CUDA_SUCCESS) return;
  cj_cu.cuGetErrorString(r, &text);
  cj_fail_cu(cj_cu_status(r), r,
             "cujit_graph_destroy: the graph was freed in its own context, but the calling "
             "thread's context could not be made current again (cuCtxSetCurrent failed: %s "
             "(%s)), so the graph's context is current on this thread now; make the one you "
             "need current (cujit_device_set_current())",
             cj_cu_name(r), text ? text : "no description");
}

/* Gives back what updates replaced: when `wait`, after the launches so far; otherwise only
 * if they have finished already (the event has passed). `live`: the graph's context can be
 * used (it is current, in the life the graph was made in). Graph's lock held. */
static void drain(cj_graph *g, int wait, int live) {
  size_t i;
  if (!g->n_old) return;
  if (live && g->launched) {
    if (wait)
      cj_cu.cuEventSynchronize(g->done);
    else if (cj_cu.cuEventQuery(g->done) != CUDA_SUCCESS)
      return;
  }
  for (i = 0; i < g->n_old; i++) {
    res_release(&g->old[i].res, live);
    if (live && g->old[i].exec) cj_cu.cuGraphExecDestroy(g->old[i].exec);
    if (live && g->old[i].graph) cj_cu.cuGraphDestroy(g->old[i].graph);
  }
  g->n_old = 0;
}

static void graph_free(cj_graph *g) {
  CUcontext was = NULL;
  CUresult r;
  int live = alive(g->ctx, g->ctx_id) && enter_ctx(g->ctx, &was);
  /* its launches must be done before anything they use is given back */
  if (live && g->launched && (r = cj_cu.cuEventSynchronize(g->done)) != CUDA_SUCCESS)
    cj_debug("a graph's last launch could not be waited for (%s); what it held is given back "
             "all the same",
             cj_cu_name(r));
  pthread_mutex_lock(&g->lock);
  drain(g, 1, live);
  pthread_mutex_unlock(&g->lock);
  res_release(&g->res, live);
  if (live) {
    cj_cu.cuGraphExecDestroy(g->exec);
    cj_cu.cuGraphDestroy(g->graph);
    cj_cu.cuEventDestroy(g->done);
    leave_ctx(g->ctx, was);
  }
  cj_free(g->old);
  pthread_mutex_destroy(&g->lock);
  cj_free(g);
}

static void graph_unref(void *obj) {
  cj_graph *g = obj;
  if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0) graph_free(g);
}

/* ---- begin ---- */

/* The stream belongs to the current context (the legacy streams always do). */
static cujit_status stream_in(CUstream stream, CUcontext ctx, const char *fn) {
  CUcontext owner = NULL;
  CUresult r;
  if (!cj_cu.cuStreamGetCtx) return CUJIT_OK;
  if ((r = cj_cu.cuStreamGetCtx(stream, &owner)) != CUDA_SUCCESS)
    return cj_cu_fail(r, "cuStreamGetCtx (the stream to capture)");
  CJ_CHECK(owner == ctx, CUJIT_ERROR_INVALID_VALUE,
           "%s: the stream belongs to another context than the calling thread's current one; "
           "make the stream's device current first (cujit_device_set_current())",
           fn);
  return CUJIT_OK;
}

/* A stream that is not being captured yet, by cujit or through the driver. */
static cujit_status not_captured(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r;
  CJ_CHECK(!cj_capture_res(stream), CUJIT_ERROR_CAPTURE,
           "cujit_graph_begin: stream %p is being captured already (cujit_graph_begin() was "
           "called for it, or for the stream it was forked from); end that capture first",
           (void *)stream);
  if ((r = cj_cu.cuStreamIsCapturing(stream, &status)) != CUDA_SUCCESS)
    return cj_cu_fail(r, "cuStreamIsCapturing (the stream to capture)");
  CJ_CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE, CUJIT_ERROR_CAPTURE,
           "cujit_graph_begin: stream %p is being captured already, by a capture begun through "
           "the driver (cuStreamBeginCapture); end it there first",
           (void *)stream);
  return CUJIT_OK;
}

/* The capture's own stream and the event before it, made in the relaxed capture mode. */
static cujit_status res_start(cj_gres *r, CUstream stream) {
  CUstreamCaptureMode mode;
  CUresult rc;
  cj_capture_relax(&mode);
  rc = cj_cu.cuStreamCreate(&r->side, CU_STREAM_NON_BLOCKING);
  if (rc == CUDA_SUCCESS) rc = cj_cu.cuEventCreate(&r->begun, CU_EVENT_DISABLE_TIMING);
  if (rc == CUDA_SUCCESS) rc = cj_cu.cuEventRecord(r->begun, stream);
  cj_capture_restore(&mode);
  return rc == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(rc, "making a capture's stream and event");
}

cujit_status cujit_graph_begin(CUstream stream, cujit_capture_mode mode) {
  static const char fn[] = "cujit_graph_begin";
  cj_capture *c;
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  cujit_status st;
  CUstreamCaptureStatus status;
  CUgraph dropped = NULL;
  CJ_CHECK(mode == CUJIT_CAPTURE_GLOBAL || mode == CUJIT_CAPTURE_THREAD_LOCAL ||
               mode == CUJIT_CAPTURE_RELAXED,
           CUJIT_ERROR_INVALID_VALUE,
           "%s: mode is %d; use CUJIT_CAPTURE_GLOBAL, CUJIT_CAPTURE_THREAD_LOCAL or "
           "CUJIT_CAPTURE_RELAXED",
           fn, (int)mode);
  CJ_CHECK(!special(stream), CUJIT_ERROR_INVALID_VALUE,
           "%s: the legacy default stream (NULL) and the per-thread one cannot be captured; "
           "capture a stream of your own (cujit_stream_create())",
           fn);
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(driver_able(fn));
  CJ_TRY(stream_in(stream, ctx, fn));
  CJ_TRY(not_captured(stream));
  if (!(c = cj_calloc(1, sizeof *c))) return cj_fail_oom("beginning a capture");
  c->stream = stream;
  c->mode = (int)mode;
  c->thread = pthread_self();
  c->res.ctx = ctx;
  if ((st = res_start(&c->res, stream)) != CUJIT_OK) goto fail;
  if ((r = cj_cu.cuStreamBeginCapture(stream, (CUstreamCaptureMode)mode)) != CUDA_SUCCESS) {
    st = cj_cu_fail(r, "cuStreamBeginCapture");
    goto fail;
  }
  if (cj_cu.cuStreamGetCaptureInfo(stream, &status, &c->id, NULL, NULL, NULL, NULL) != CUDA_SUCCESS)
    c->id = 0; /* streams forked from it are then not known as its */
  if ((st = cj_capture_add(c)) == CUJIT_OK) return CUJIT_OK;
  cj_cu.cuStreamEndCapture(stream, &dropped);
  if (dropped) cj_cu.cuGraphDestroy(dropped);
fail:
  res_release(&c->res, 1);
  cj_free(c);
  return st;
}

/* ---- end ---- */

/* The capture whose origin is `stream`, ended: its graph in *out, or a failure (the
 * capture's resources given back then). Nothing changes when the capture cannot be ended
 * here (another thread's, in global or thread-local mode). */
static cujit_status capture_end(CUstream stream, const char *fn, cj_capture **cap, CUgraph *out) {
  pthread_t thread;
  cj_capture *c;
  CUresult r;
  int mode;
  *out = NULL;
  *cap = NULL;
  CJ_CHECK(!special(stream) && cj_capture_origin(stream, &thread, &mode), CUJIT_ERROR_INVALID_VALUE,
           "%s: stream %p is not being captured by cujit_graph_begin() (a stream forked from a "
           "capture is joined back to the stream the capture began on, which ends it)",
           fn, (void *)stream);
  CJ_CHECK(mode == CUJIT_CAPTURE_RELAXED || pthread_equal(thread, pthread_self()),
           CUJIT_ERROR_CAPTURE,
           "%s: the capture on stream %p was begun by another thread in %s mode, so it ends on "
           "that thread (only a relaxed capture ends on any); nothing changed",
           fn, (void *)stream, mode == CUJIT_CAPTURE_GLOBAL ? "global" : "thread-local");
  c = cj_capture_remove(stream);
  r = cj_cu.cuStreamEndCapture(stream, out);
  if (r == CUDA_SUCCESS && *out && !c->res.failed) {
    *cap = c;
    return CUJIT_OK;
  }
  if (*out) cj_cu.cuGraphDestroy(*out);
  *out = NULL;
  res_release(&c->res, 1);
  cj_free(c);
  if (r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED || (r == CUDA_SUCCESS && !*out))
    return cj_fail_cu(CUJIT_ERROR_CAPTURE, r,
                      "%s: the capture on stream %p was invalidated by a call made during it "
                      "that a capture cannot hold (that call's error said which); nothing was "
                      "made: capture again without it",
                      fn, (void *)stream);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuStreamEndCapture");
  return cj_fail(CUJIT_ERROR_CAPTURE,
                 "%s: a call made during the capture on stream %p failed after part of its work "
                 "was captured (its error was returned then), or memory ran out recording "
                 "what the work needs: the graph would be incomplete, so nothing was made; "
                 "capture again",
                 fn, (void *)stream);
}

/* A new graph running `exec`, made of `graph` by capture c (whose resources it takes). */
static cujit_status graph_new(cj_capture *c, CUgraph graph, CUgraphExec exec, cujit_graph **out) {
  cj_graph *g = cj_calloc(1, sizeof *g);
  uintptr_t h = 0;
  CUresult r = CUDA_SUCCESS;
  if (g) r = cj_cu.cuEventCreate(&g->done, CU_EVENT_DISABLE_TIMING);
  if (g && r == CUDA_SUCCESS) {
    pthread_mutex_lock(&graphs_lock);
    h = cj_handle_add(&graphs, g);
    pthread_mutex_unlock(&graphs_lock);
  }
  if (!h) {
    if (g && g->done) cj_cu.cuEventDestroy(g->done);
    cj_free(g);
    return r != CUDA_SUCCESS ? cj_cu_fail(r, "cuEventCreate (a graph's event)")
                             : cj_fail_oom("making a graph");
  }
  g->graph = graph;
  g->exec = exec;
  g->ctx = c->res.ctx;
  g->ctx_id = cj_ctx_id(g->ctx);
  g->refs = 1;
  g->res = c->res;
  pthread_mutex_init(&g->lock, NULL);
  *out = (cujit_graph *)h;
  return CUJIT_OK;
}

static cujit_status instantiate(CUgraph graph, CUgraphExec *exec) {
  CUresult r = cj_cu.cuGraphInstantiateWithFlags(exec, graph, 0);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuGraphInstantiateWithFlags");
}

cujit_status cujit_graph_end(CUstream stream, cujit_graph **out) {
  static const char fn[] = "cujit_graph_end";
  cj_capture *c;
  CUgraph graph;
  CUgraphExec exec = NULL;
  CUcontext ctx;
  CUdevice dev;
  cujit_status st;
  if (out) *out = NULL;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(capture_end(stream, fn, &c, &graph));
  if (!out) { /* discarded */
    cj_cu.cuGraphDestroy(graph);
    res_release(&c->res, 1);
    cj_free(c);
    return CUJIT_OK;
  }
  st = instantiate(graph, &exec);
  if (st == CUJIT_OK) st = graph_new(c, graph, exec, out);
  if (st != CUJIT_OK) {
    if (exec) cj_cu.cuGraphExecDestroy(exec);
    cj_cu.cuGraphDestroy(graph);
    res_release(&c->res, 1);
  }
  cj_free(c);
  return st;
}

/* ---- launch ---- */

/* A launch into a capture cujit runs: the capture's graph holds this one. */
static CJ_NOINLINE cujit_status launch_captured(cj_graph *g, cj_gres *r, CUstream stream) {
  CUresult rc;
  if (cj_gres_hold(r, g, graph_unref) == 1) __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
  rc = cj_cu.cuGraphLaunch(g->exec, stream);
  return rc == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(rc, "cuGraphLaunch (into a capture)");
}

cujit_status cujit_graph_launch(cujit_graph *h, CUstream stream) {
  cj_graph *g = graph_of(h);
  cj_gres *r;
  CUresult rc;
  CUcontext ctx;
  CUdevice dev;
  int tries = 0;
  if (CJ_UNLIKELY(!g)) return not_live(h, "cujit_graph_launch");
  if (CJ_UNLIKELY(__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) &&
      (r = cj_capture_res(stream)) != NULL)
    return launch_captured(g, r, stream);
  pthread_mutex_lock(&g->lock);
  do {
    rc = cj_cu.cuGraphLaunch(g->exec, stream);
    if (rc == CUDA_SUCCESS && (rc = cj_cu.cuEventRecord(g->done, stream)) == CUDA_SUCCESS)
      g->launched = 1;
    /* a thread with no current context yet: the primary one is made current, once */
  } while (rc == CUDA_ERROR_INVALID_CONTEXT && tries++ == 0 &&
           cj_ctx_ensure(&ctx, &dev) == CUJIT_OK);
  pthread_mutex_unlock(&g->lock);
  return rc == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(rc, "cuGraphLaunch");
}

/* ---- update ---- */

/* Keeps what an update replaced until the launches before it have finished. Lock held. */
static void retire(cj_graph *g, cj_gres *res, CUgraph graph, CUgraphExec exec) {
  if (CJ_VEC_RESERVE(g->old, g->cap_old, g->n_old + 1) != 0) {
    /* no room to keep it: wait for the launches now and give it back */
    if (g->launched && alive(g->ctx, g->ctx_id)) cj_cu.cuEventSynchronize(g->done);
    res_release(res, alive(g->ctx, g->ctx_id));
    if (exec) cj_cu.cuGraphExecDestroy(exec);
    if (graph) cj_cu.cuGraphDestroy(graph);
    return;
  }
  g->old[g->n_old].res = *res;
  g->old[g->n_old].graph = graph;
  g->old[g->n_old++].exec = exec;
}

static const char *update_reason(CUgraphExecUpdateResult why) {
  switch (why) {
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
      return "the new capture has other nodes or dependencies";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "a node is of another kind";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "a node launches another kernel in a way the driver cannot update";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
      return "a node's parameters changed in a way the driver cannot update";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "a node's attributes changed";
    default: return "the driver gave no reason it can name";
  }
}

enum { NODE_KINDS = 16 }; /* CUgraphNodeType's values, and one for any later kind */

/* How many nodes of each kind `graph` has, into count[]: 1, or 0 when the driver cannot say
 * (an older one). */
static int node_kinds(CUgraph graph, size_t count[NODE_KINDS]) {
  CUgraphNode stack[64], *nodes = stack;
  CUgraphNodeType t;
  size_t n = 0, i;
  int ok;
  memset(count, 0, NODE_KINDS * sizeof *count);
  if (!cj_cu.cuGraphGetNodes || !cj_cu.cuGraphNodeGetType ||
      cj_cu.cuGraphGetNodes(graph, NULL, &n) != CUDA_SUCCESS ||
      (n > 64 && !(nodes = cj_malloc(n * sizeof *nodes))))
    return 0;
  ok = cj_cu.cuGraphGetNodes(graph, nodes, &n) == CUDA_SUCCESS;
  for (i = 0; ok && i < n; i++)
    if ((ok = cj_cu.cuGraphNodeGetType(nodes[i], &t) == CUDA_SUCCESS) != 0)
      count[(unsigned)t < NODE_KINDS ? (unsigned)t : NODE_KINDS - 1]++;
  if (nodes != stack) cj_free(nodes);
  return ok;
}

/* Why the new capture (its launches `now`, its graph `graph`) cannot update g's executable
 * graph in place, or NULL when it may: another number of kernel launches, another kernel at
 * one of them, or other numbers of nodes of each kind (copies, memsets, ...) than the graph
 * it was made from. cuGraphExecUpdate is not asked then: it would refuse with an error that
 * a tool watching the driver's calls (compute-sanitizer) reports as the program's. */
static const char *differs(const cj_graph *g, const cj_gres *now, CUgraph graph) {
  size_t was_kinds[NODE_KINDS], now_kinds[NODE_KINDS], k;
  if (now->n_launches != g->res.n_launches)
    return "the new capture launches kernels another number of times";
  for (k = 0; k < now->n_launches; k++) {
    const cj_glaunch *a = &g->res.launches[k], *b = &now->launches[k];
    if (a->fn != b->fn || a->handle != b->handle || a->by_kernel != b->by_kernel)
      return "a launch of the new capture is of another kernel";
  }
  if (node_kinds(g->graph, was_kinds) && node_kinds(graph, now_kinds) &&
      memcmp(was_kinds, now_kinds, sizeof was_kinds) != 0)
    return "the new capture has other operations (copies, memsets, ...) than the graph's";
  return NULL;
}

/* The update itself, graph's lock held: in place, or a new executable graph. */
static cujit_status update_locked(cj_graph *g, cj_capture *c, CUgraph graph, int *in_place) {
  CUgraphExecUpdateResultInfo info;
  CUgraphExec exec = NULL;
  const char *why = differs(g, &c->res, graph);
  size_t k;
  CUresult r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  memset(&info, 0, sizeof info);
  if (!why) r = cj_cu.cuGraphExecUpdate(g->exec, graph, &info);
  if (r == CUDA_SUCCESS) {
    /* the nodes set_args names stay those of the graph the executable one was made from */
    for (k = 0; k < c->res.n_launches; k++) c->res.launches[k].node = g->res.launches[k].node;
    cj_cu.cuGraphDestroy(graph);
    retire(g, &g->res, NULL, NULL);
    g->res = c->res;
    *in_place = 1;
    return CUJIT_OK;
  }
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    return cj_cu_fail(r, "cuGraphExecUpdate");
  cj_debug("a graph is made again from its new capture: %s",
           why ? why : update_reason(info.result));
  CJ_TRY(instantiate(graph, &exec));
  retire(g, &g->res, g->graph, g->exec);
  g->graph = graph;
  g->exec = exec;
  g->res = c->res;
  *in_place = 0;
  return CUJIT_OK;
}

cujit_status cujit_graph_update(cujit_graph *h, CUstream stream, int *in_place) {
  static const char fn[] = "cujit_graph_update";
  cj_graph *g = graph_of(h);
  cj_capture *c;
  CUgraph graph;
  CUcontext ctx;
  CUdevice dev;
  cujit_status st;
  int placed = 0;
  if (in_place) *in_place = 0;
  if (!g) return not_live(h, fn);
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_CHECK(ctx == g->ctx, CUJIT_ERROR_INVALID_VALUE,
           "%s: the graph was made in another context than the calling thread's current one; "
           "make that context current first",
           fn);
  CJ_TRY(capture_end(stream, fn, &c, &graph));
  pthread_mutex_lock(&g->lock);
  st = c->res.ctx == g->ctx ? update_locked(g, c, graph, &placed)
                            : cj_fail(CUJIT_ERROR_INVALID_VALUE,
                                      "%s: the new capture ran in another context than the "
                                      "graph's; nothing changed",
                                      fn);
  if (st == CUJIT_OK) drain(g, 0, alive(g->ctx, g->ctx_id));
  pthread_mutex_unlock(&g->lock);
  if (st != CUJIT_OK) { /* the graph is as it was; the new capture is dropped */
    cj_cu.cuGraphDestroy(graph);
    res_release(&c->res, 1);
  }
  cj_free(c);
  if (in_place) *in_place = placed;
  return st;
}

/* ---- set_args ---- */

static void *value_of(const cujit_arg *a) {
  return (void *)(a->data ? a->data : (const void *)a->value.bytes);
}

/* The arguments checked as a launch checks them, values only, plain ones converted into
 * conv[]; *use gets the array to take. */
static cujit_status args_ready(const cujit_function *fn, const cujit_arg *args, size_t nargs,
                               cujit_arg *conv, const cujit_arg **use) {
  const cj_ptypes *types = cj_function_ptypes(fn);
  size_t i;
  *use = args;
  CJ_TRY(cj_launch_check_args(fn->name, fn->nparams, fn->param_sizes, types, args, nargs));
  for (i = 0; i < nargs; i++)
    CJ_CHECK(args[i].kind == CUJIT_ARG_VALUE, CUJIT_ERROR_INVALID_ARGS,
             "cujit_graph_set_args: argument %zu of kernel '%s' is an %s; a graph's launch "
             "takes values here (its In/Out buffers were fixed when it was captured): pass "
             "device memory with cujit_ptr()",
             i + 1, fn->name, cj_launch_kind_name(args[i].kind));
  if (!cj_launch_plain_args(types, args, nargs)) return CUJIT_OK;
  if (!types) CJ_TRY(cj_function_types((cujit_function *)fn, &types));
  CJ_TRY(cj_launch_convert_args(fn->name, types, args, nargs, conv));
  *use = conv;
  return CUJIT_OK;
}

/* The node's new parameters, graph's lock held. */
static cujit_status set_locked(cj_graph *g, size_t launch, const cujit_arg *args, size_t nargs) {
  enum { STACK_ARGS = 32 };
  cujit_arg stack_conv[STACK_ARGS], *conv = stack_conv;
  void *stack_params[STACK_ARGS], **params = stack_params;
  const cujit_arg *use;
  CUDA_KERNEL_NODE_PARAMS np;
  const cj_glaunch *l;
  cujit_status st;
  size_t i;
  CUresult r;
  CJ_CHECK(launch < g->res.n_launches, CUJIT_ERROR_INVALID_VALUE,
           "cujit_graph_set_args: the graph's capture made %zu kernel launch%s (0 to %zu); "
           "%zu is none of them",
           g->res.n_launches, g->res.n_launches == 1 ? "" : "es",
           g->res.n_launches ? g->res.n_launches - 1 : 0, launch);
  l = &g->res.launches[launch];
  CJ_CHECK(l->node, CUJIT_ERROR_NOT_SUPPORTED,
           "cujit_graph_set_args: the driver did not say which node launch %zu (kernel '%s') "
           "made; capture again with the new arguments and update the graph "
           "(cujit_graph_update())",
           launch, l->fn->name);
  if (nargs > STACK_ARGS) {
    conv = cj_malloc(nargs * (sizeof *conv + sizeof *params));
    if (!conv) return cj_fail_oom("setting a graph launch's arguments");
    params = (void **)(conv + nargs);
  }
  st = args_ready(l->fn, args, nargs, conv, &use);
  for (i = 0; st == CUJIT_OK && i < nargs; i++) params[i] = value_of(&use[i]);
  if (st == CUJIT_OK) {
    memset(&np, 0, sizeof np);
    if (l->by_kernel) {
      np.kern = (CUkernel)l->handle;
      np.ctx = g->ctx;
    } else {
      np.func = l->handle;
    }
    np.gridDimX = l->grid.x, np.gridDimY = l->grid.y, np.gridDimZ = l->grid.z;
    np.blockDimX = l->block.x, np.blockDimY = l->block.y, np.blockDimZ = l->block.z;
    np.sharedMemBytes = l->shared_bytes;
    np.kernelParams = params;
    if ((r = cj_cu.cuGraphExecKernelNodeSetParams(g->exec, l->node, &np)) != CUDA_SUCCESS)
      st = cj_cu_fail(r, "cuGraphExecKernelNodeSetParams");
  }
  /* the memory the new arguments point into is held as the capture's was */
  if (st == CUJIT_OK) cj_gres_scan(&g->res, params, l->fn->param_sizes, nargs);
  if (conv != stack_conv) cj_free(conv);
  return st;
}

cujit_status cujit_graph_set_args(cujit_graph *h, size_t launch, const cujit_arg *args,
                                  size_t nargs) {
  cj_graph *g = graph_of(h);
  cujit_status st;
  if (!g) return not_live(h, "cujit_graph_set_args");
  CJ_CHECK(args || !nargs, CUJIT_ERROR_INVALID_VALUE, "cujit_graph_set_args: args is NULL");
  pthread_mutex_lock(&g->lock);
  st = set_locked(g, launch, args, nargs);
  pthread_mutex_unlock(&g->lock);
  return st;
}

size_t cujit_graph_launch_count(const cujit_graph *h) {
  cj_graph *g = graph_of(h);
  size_t n;
  if (!g) return 0;
  pthread_mutex_lock(&g->lock);
  n = g->res.n_launches;
  pthread_mutex_unlock(&g->lock);
  return n;
}

/* ---- destroy ---- */

void cujit_graph_destroy(cujit_graph *h) {
  cj_graph *g;
  if (!h) return;
  pthread_mutex_lock(&graphs_lock);
  g = cj_handle_remove(&graphs, (uintptr_t)h);
  pthread_mutex_unlock(&graphs_lock);
  if (!g) {
    cj_fail(CUJIT_ERROR_INVALID_VALUE,
            "cujit_graph_destroy: not a live graph (destroyed already, or not made by "
            "cujit_graph_end()); nothing was freed");
    return;
  }
  graph_unref(g);
}

/* launch.c - cujit_launch: arguments and configuration checked against the kernel and the
 * device (the hot path's tests here and in launch.h, the full checks and their messages in
 * check.c), arguments passed through kernelParams (the driver places each at its offset),
 * and In/Out/InOut buffers staged in pooled device memory, ordered on the launch stream. */
#include <stdio.h>
#include <string.h>

#include "launch/capture.h"

enum { STACK_ARGS = 32 };

/* ---- launching ---- */

/* The launch of a kernelParams array off the hot path: plain, or through cuLaunchKernelEx
 * for a cooperative launch or clusters. */
static cujit_status launch_params(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                                  cujit_dim3 block, void **params, const cujit_launch_options *o) {
  if (CJ_OPTS_EX(o)) return cj_launch_ex(fn, slot, grid, block, params, o);
  return cj_launch_kernel(fn, slot, grid, block, params, o);
}

/* A launch with In/Out buffers into the capture of its stream: the buffers' copies become
 * the graph's (graphio.c), around the kernel's launch. */
static cujit_status launch_captured(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                                    cujit_dim3 block, const cujit_arg *args, size_t nargs,
                                    const cujit_launch_options *o) {
  cj_capture_io io;
  cujit_status st = cj_capture_io_in(&io, fn, slot, args, nargs, o);
  if (st == CUJIT_OK) st = launch_params(fn, slot, grid, block, io.params, o);
  return cj_capture_io_out(&io, fn, slot, args, o, st);
}

static void *value_of(const cujit_arg *a) {
  return (void *)(a->data ? a->data : (const void *)a->value.bytes);
}

/* A buffer's kind beyond cj_host_kind: pageable, moved through the device's small pinned
 * area (staging.c) at its offset there. */
#define KIND_BOUNCED 3
/* Where each buffer starts in the area. */
#define BOUNCE_ALIGN 256

/* Scratch space of a staged launch: on the stack for up to STACK_ARGS arguments. */
typedef struct staging {
  void **params;
  CUdeviceptr *dptr;
  uint32_t *off;       /* each bounced buffer's offset in the area */
  unsigned char *kind; /* cj_host_kind of each buffer, or KIND_BOUNCED */
  unsigned char *area; /* the device's small pinned area, when taken */
  cj_mem_ctx owner;    /* the context the buffers' device memory is made in */
  void *heap;
  void *stack_params[STACK_ARGS];
  CUdeviceptr stack_dptr[STACK_ARGS];
  uint32_t stack_off[STACK_ARGS];
  unsigned char stack_kind[STACK_ARGS];
} staging;

static cujit_status staging_init(staging *s, size_t nargs) {
  s->heap = NULL;
  s->owner.ctx = NULL;
  s->owner.id = 0;
  s->area = NULL;
  s->params = s->stack_params;
  s->dptr = s->stack_dptr;
  s->off = s->stack_off;
  s->kind = s->stack_kind;
  if (nargs > STACK_ARGS) {
    s->heap = cj_calloc(nargs, sizeof(void *) + sizeof(CUdeviceptr) + sizeof(uint32_t) + 1);
    if (!s->heap) return cj_fail_oom("launching a kernel");
    s->params = s->heap;
    s->dptr = (CUdeviceptr *)(s->params + nargs);
    s->off = (uint32_t *)(s->dptr + nargs);
    s->kind = (unsigned char *)(s->off + nargs);
  } else {
    memset(s->stack_dptr, 0, sizeof s->stack_dptr);
  }
  return CUJIT_OK;
}

/* Every buffer's memory kind, checked before any memory is taken. */
static cujit_status stage_kinds(const cujit_function *fn, const cujit_arg *args, size_t nargs,
                                staging *s) {
  size_t i;
  for (i = 0; i < nargs; i++) {
    const cujit_arg *a = &args[i];
    s->kind[i] = CJ_HOST_PAGEABLE;
    if (a->kind == CUJIT_ARG_VALUE || !a->bytes) continue;
    s->kind[i] = (unsigned char)cj_host_kind_of(a->host, a->bytes);
    CJ_CHECK(s->kind[i] != CJ_HOST_DEVICE, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is an %s in device "
             "memory; In/Out buffers are host memory, pass device memory with cujit_ptr()",
             i + 1, fn->name, cj_launch_kind_name(a->kind));
  }
  return CUJIT_OK;
}

/* Pageable buffers below the staging threads' minimum go through the device's small
 * pinned area, as many as fit, when it is free: the driver's own pageable path costs a
 * process milliseconds the first time, and waits for the stream at every copy out. */
static void stage_bounce(CUcontext ctx, CUdevice dev, const cujit_arg *args, size_t nargs,
                         staging *s) {
  size_t i, total = 0, min = cj_staging_min();
  for (i = 0; i < nargs; i++) {
    size_t room = (args[i].bytes + BOUNCE_ALIGN - 1) / BOUNCE_ALIGN * BOUNCE_ALIGN;
    if (s->kind[i] != CJ_HOST_PAGEABLE || args[i].kind == CUJIT_ARG_VALUE || !args[i].bytes ||
        args[i].bytes >= min || room > CJ_BOUNCE_MAX - total)
      continue;
    s->kind[i] = KIND_BOUNCED;
    s->off[i] = (uint32_t)total;
    total += room;
  }
  if (total && (s->area = cj_bounce_take(ctx, dev, total)) != NULL) return;
  for (i = 0; i < nargs; i++) /* no area: the driver copies them */
    if (s->kind[i] == KIND_BOUNCED) s->kind[i] = CJ_HOST_PAGEABLE;
}

/* Device memory for every In/Out buffer, and the kernel parameter array. */
static cujit_status stage_alloc(const cj_fslot *slot, const cujit_arg *args, size_t nargs,
                                CUstream stream, staging *s) {
  size_t i;
  cujit_status st;
  for (i = 0; i < nargs; i++) {
    const cujit_arg *a = &args[i];
    if (a->kind == CUJIT_ARG_VALUE) {
      s->params[i] = value_of(a);
      continue;
    }
    s->params[i] = &s->dptr[i];
    if (a->bytes &&
        (st = cj_mem_pool_alloc(slot->dev, a->bytes, stream, &s->dptr[i], &s->owner)) != CUJIT_OK)
      return st;
  }
  return CUJIT_OK;
}

static cujit_status copy_in(CUcontext ctx, CUdevice dev, const cujit_arg *a, CUdeviceptr d,
                            const staging *s, size_t i, CUstream stream) {
  const void *from = a->host;
  CUresult r;
  if (s->kind[i] == KIND_BOUNCED) {
    memcpy(s->area + s->off[i], a->host, a->bytes);
    from = s->area + s->off[i];
  } else if (s->kind[i] == CJ_HOST_PAGEABLE && a->bytes >= cj_staging_min()) {
    cujit_status st = cj_stage_htod(ctx, dev, d, a->host, a->bytes, stream);
    if (st != CUJIT_ERROR_NOT_SUPPORTED) return st;
  }
  r = cj_cu.cuMemcpyHtoDAsync(d, from, a->bytes, stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpyHtoDAsync (an In buffer)");
}

/* A bounced Out buffer lands in the area here, and in the caller's memory once the stream
 * has drained (bounce_back). */
static cujit_status copy_out(CUcontext ctx, CUdevice dev, const cujit_arg *a, CUdeviceptr d,
                             const staging *s, size_t i, CUstream stream) {
  void *to = a->host;
  CUresult r;
  if (s->kind[i] == KIND_BOUNCED) {
    to = s->area + s->off[i];
  } else if (s->kind[i] == CJ_HOST_PAGEABLE && a->bytes >= cj_staging_min()) {
    cujit_status st = cj_stage_dtoh(ctx, dev, a->host, d, a->bytes, stream);
    if (st != CUJIT_ERROR_NOT_SUPPORTED) return st;
  }
  r = cj_cu.cuMemcpyDtoHAsync(to, d, a->bytes, stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpyDtoHAsync (an Out buffer)");
}

static cujit_status copy_all(const cujit_function *fn, CUcontext ctx, CUdevice dev,
                             const cujit_arg *args, size_t nargs, const staging *s, int direction,
                             CUstream stream) {
  size_t i;
  CJ_TRACE("cujit: copy %s %s", direction == CUJIT_ARG_IN ? "in" : "out", fn->name);
  for (i = 0; i < nargs; i++) {
    if (!(args[i].kind & direction) || !args[i].bytes) continue;
    CJ_TRY(direction == CUJIT_ARG_IN ? copy_in(ctx, dev, &args[i], s->dptr[i], s, i, stream)
                                     : copy_out(ctx, dev, &args[i], s->dptr[i], s, i, stream));
  }
  return CUJIT_OK;
}

/* The bounced Out buffers' results, from the area to the caller's memory (in argument
 * order, as the copies out ran). */
static void bounce_back(const cujit_arg *args, size_t nargs, const staging *s) {
  size_t i;
  for (i = 0; i < nargs; i++)
    if (s->kind[i] == KIND_BOUNCED && (args[i].kind & CUJIT_ARG_OUT))
      memcpy(args[i].host, s->area + s->off[i], args[i].bytes);
}

/* ---- the first staged launches' steps, at debug level ----
 *
 * The first two staged launches of a process say how long each step took (the first pays
 * for what a process sets up once: the pool, the pinned area, the driver's first copies),
 * when the log is at debug level; the benchmark reads these lines. Later launches test
 * one counter. */

enum { STEP_KINDS, STEP_MEMORY, STEP_IN, STEP_KERNEL, STEP_OUT, STEP_BACK, STEP_WAIT, N_STEPS };
static const char *const step_names[N_STEPS] = {"memory kinds", "device memory", "copies in",
                                                "kernel",       "copies out",    "memory back",
                                                "wait"};
static int staged_count; /* staged launches that may have been timed (atomic) */

typedef struct steps {
  int launch; /* 1 or 2: the launch being timed; 0: none */
  double at[N_STEPS + 1];
} steps;

static void steps_begin(steps *t) {
  t->launch = 0;
  if (CJ_LIKELY(__atomic_load_n(&staged_count, __ATOMIC_RELAXED) >= 2)) return;
  t->launch = __atomic_add_fetch(&staged_count, 1, __ATOMIC_RELAXED);
  if (t->launch > 2 || !cj_log_enabled(CUJIT_LOG_DEBUG)) t->launch = 0;
  memset(t->at, 0, sizeof t->at);
  if (t->launch) t->at[0] = cj_now_s();
}

/* Marks the end of step k. */
static void step(steps *t, int k) {
  if (CJ_UNLIKELY(t->launch)) t->at[k + 1] = cj_now_s();
}

static void steps_report(const steps *t, const cujit_arg *args, size_t nargs, cujit_status st) {
  char line[512];
  size_t used, i, n = 0, bytes = 0;
  double from = t->at[0], to;
  int k;
  if (CJ_LIKELY(!t->launch)) return;
  for (i = 0; i < nargs; i++)
    if (args[i].kind != CUJIT_ARG_VALUE) n++, bytes += args[i].bytes;
  used = (size_t)snprintf(line, sizeof line,
                          "staged launch %d of the process (%zu buffer%s, %zu bytes%s):", t->launch,
                          n, n == 1 ? "" : "s", bytes, st == CUJIT_OK ? "" : ", failed");
  for (k = 0; k < N_STEPS && used < sizeof line; k++, from = to) {
    to = t->at[k + 1] ? t->at[k + 1] : from; /* a step a failure skipped took nothing */
    used += (size_t)snprintf(line + used, sizeof line - used, "%s %s %.3f ms", k ? "," : "",
                             step_names[k], (to - from) * 1e3);
  }
  cj_debug("%s", line);
}

/* Events around the kernel when its time is wanted. */
static cujit_status timing_begin(CUevent ev[2], CUstream stream) {
  CUresult r = cj_cu.cuEventCreate(&ev[0], CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS && (r = cj_cu.cuEventCreate(&ev[1], CU_EVENT_DEFAULT)) == CUDA_SUCCESS)
    r = cj_cu.cuEventRecord(ev[0], stream);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "creating the timing events");
}

static void timing_end(CUevent ev[2]) {
  if (ev[0]) cj_cu.cuEventDestroy(ev[0]);
  if (ev[1]) cj_cu.cuEventDestroy(ev[1]);
}

/* A launch with In/Out buffers or a timing: copies in, kernel, copies out, temporaries
 * back to the pool, all on the stream; then waits for the stream. */
static cujit_status launch_staged(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                                  cujit_dim3 block, const cujit_arg *args, size_t nargs,
                                  const cujit_launch_options *o) {
  CUstream stream = o->stream;
  CUevent ev[2] = {NULL, NULL};
  CUcontext ctx = NULL;
  staging s;
  steps t;
  size_t i;
  CUresult r;
  CUdevice dev;
  cujit_status st;
  if (CJ_UNLIKELY(__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) && cj_capture_res(stream))
    return launch_captured(fn, slot, grid, block, args, nargs, o); /* into a graph */
  st = staging_init(&s, nargs);
  CJ_TRACE("cujit: launch %s", fn->name);
  if (st != CUJIT_OK) return st;
  if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) {
    cj_free(s.heap);
    return st;
  }
  steps_begin(&t);
  if ((st = stage_kinds(fn, args, nargs, &s)) != CUJIT_OK) goto done;
  stage_bounce(ctx, slot->dev, args, nargs, &s);
  step(&t, STEP_KINDS);
  if ((st = stage_alloc(slot, args, nargs, stream, &s)) != CUJIT_OK) goto done;
  step(&t, STEP_MEMORY);
  if ((st = copy_all(fn, ctx, dev, args, nargs, &s, CUJIT_ARG_IN, stream)) != CUJIT_OK) goto done;
  step(&t, STEP_IN);
  if (o->elapsed_ms && (st = timing_begin(ev, stream)) != CUJIT_OK) goto done;
  if ((st = launch_params(fn, slot, grid, block, s.params, o)) != CUJIT_OK) goto done;
  if (ev[1] && (r = cj_cu.cuEventRecord(ev[1], stream)) != CUDA_SUCCESS) {
    st = cj_launch_failed(fn, r, "cuEventRecord");
    goto done;
  }
  step(&t, STEP_KERNEL);
  st = copy_all(fn, ctx, dev, args, nargs, &s, CUJIT_ARG_OUT, stream);
  if (st == CUJIT_ERROR_LAUNCH_FAILED)
    st = cj_launch_failed(fn, cujit_last_cu_result(), "copy out");
  step(&t, STEP_OUT);
done:
  for (i = 0; i < nargs; i++)
    if (args[i].kind != CUJIT_ARG_VALUE && s.dptr[i])
      cj_mem_pool_free(slot->dev, s.dptr[i], args[i].bytes, stream, &s.owner);
  step(&t, STEP_BACK);
  /* wait even after a failure: queued copies may still read the caller's buffers */
  r = cj_cu.cuStreamSynchronize(stream);
  if (r != CUDA_SUCCESS && (st == CUJIT_OK || cj_cu_status(r) == CUJIT_ERROR_LAUNCH_FAILED))
    st = cj_launch_failed(fn, r, "cuStreamSynchronize");
  if (s.area) {
    if (st == CUJIT_OK) bounce_back(args, nargs, &s);
    cj_bounce_give(slot->dev);
  }
  step(&t, STEP_WAIT);
  if (st == CUJIT_OK && ev[1] &&
      (r = cj_cu.cuEventElapsedTime(o->elapsed_ms, ev[0], ev[1])) != CUDA_SUCCESS)
    st = cj_cu_fail(r, "cuEventElapsedTime");
  steps_report(&t, args, nargs, st);
  timing_end(ev);
  cj_free(s.heap);
  return st;
}

cujit_status cj_launch_checked(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                               cujit_dim3 block, const cujit_launch_options *o) {
  cujit_status st = cj_config_check(fn->name, slot->lim, slot->max_threads, slot->static_smem, grid,
                                    block, o->shared_bytes);
  if (CJ_UNLIKELY(st != CUJIT_OK)) return st;
  if (CJ_UNLIKELY(o->shared_bytes >
                  (unsigned)__atomic_load_n(&slot->dyn_smem_max, __ATOMIC_ACQUIRE)) &&
      (st = cj_function_allow_smem(fn, slot, o->shared_bytes)) != CUJIT_OK)
    return st;
  return CUJIT_OK;
}

/* Every launch but the hot one: In/Out buffers, timings, cooperative launches and
 * clusters, all checked already. Out of line, so that the hot path's frame stays small. */
static CJ_NOINLINE cujit_status launch_general(const cujit_function *fn, const cj_fslot *slot,
                                               cujit_dim3 grid, cujit_dim3 block,
                                               const cujit_arg *args, size_t nargs,
                                               const cujit_launch_options *o) {
  void *stack_params[STACK_ARGS], **params = stack_params;
  size_t i;
  cujit_status st;
  if (o->elapsed_ms) return launch_staged(fn, slot, grid, block, args, nargs, o);
  if (CJ_UNLIKELY(nargs > STACK_ARGS) && !(params = cj_malloc(nargs * sizeof *params)))
    return cj_fail_oom("launching a kernel");
  for (i = 0; i < nargs; i++) {
    if (args[i].kind != CUJIT_ARG_VALUE) break;
    params[i] = value_of(&args[i]);
  }
  if (i < nargs)
    st = launch_staged(fn, slot, grid, block, args, nargs, o);
  else
    st = launch_params(fn, slot, grid, block, params, o);
  if (params != stack_params) cj_free(params);
  return st;
}

/* A cooperative launch or clusters: their rules checked on a copy of the options, which
 * the checks may simplify (a cluster the kernel declares itself is left to the kernel). */
static CJ_NOINLINE cujit_status launch_ex_general(const cujit_function *fn, cj_fslot *slot,
                                                  cujit_dim3 grid, cujit_dim3 block,
                                                  const cujit_arg *args, size_t nargs,
                                                  const cujit_launch_options *o) {
  cujit_launch_options ex = *o;
  CJ_TRY(cj_launch_ex_check(fn, slot, grid, block, &ex));
  return launch_general(fn, slot, grid, block, args, nargs, &ex);
}

/* Options of another layout than this library's (a zero-initialised struct once fields
 * have been added, a program built against another header): read into a copy with the
 * defaults past the caller's size, or refused, before anything else happens. */
static CJ_NOINLINE cujit_status launch_resized(const cujit_function *fn, cujit_dim3 grid,
                                               cujit_dim3 block, const cujit_arg *args,
                                               size_t nargs, const cujit_launch_options *o) {
  cujit_launch_options own;
  CJ_TRY(cj_sized_in("cujit_launch", "cujit_launch_options", o, CJ_LAUNCH_OPTIONS_V1, &own,
                     sizeof own));
  return cujit_launch(fn, grid, block, args, nargs, &own);
}

/* The types a plain value is converted to: an extern "C" kernel's, not known yet, are asked
 * of the compiler now (once per module, through the caches, as a typed call asks them). */
static cujit_status plain_types(const cujit_function *fn, const cujit_arg *args, size_t nargs,
                                const cj_ptypes **types) {
  const cj_scalar *s;
  size_t i = 0;
  char *why;
  cujit_status st;
  if ((*types = cj_function_ptypes(fn)) != NULL) return CUJIT_OK;
  st = cj_function_types((cujit_function *)fn, types); /* the kernel's types are its own */
  if (st == CUJIT_OK || st == CUJIT_ERROR_OUT_OF_MEMORY) return st;
  while (i + 1 < nargs && args[i].type < CUJIT_TYPE_PLAIN_) i++; /* the first plain value */
  s = cj_scalar_of(args[i].type);
  if (!(why = cj_strdup(cujit_last_error()))) return cj_fail_oom("launching a kernel");
  st = cj_fail(CUJIT_ERROR_INVALID_ARGS,
               "argument %zu of kernel '%s' is a plain value (%s), which is converted to its "
               "parameter's type, but the kernel's parameter types cannot be known: %s; or make "
               "each argument with the constructor of its parameter's type (cujit_i32(), "
               "cujit_f32(), ...); nothing was launched",
               i + 1, fn->name, s ? s->words : "of an unknown type", why);
  cj_free(why);
  return st;
}

/* A launch with plain values its parameters do not take as they are: each converted to its
 * parameter's type, then launched as if given so. Off the hot path. */
static CJ_NOINLINE cujit_status launch_plain(const cujit_function *fn, cujit_dim3 grid,
                                             cujit_dim3 block, const cujit_arg *args, size_t nargs,
                                             const cujit_launch_options *o) {
  cujit_arg stack[STACK_ARGS], *conv = stack;
  const cj_ptypes *types;
  cujit_status st;
  CJ_TRY(plain_types(fn, args, nargs, &types));
  if (nargs > STACK_ARGS && !(conv = cj_malloc(nargs * sizeof *conv)))
    return cj_fail_oom("converting a launch's arguments");
  st = cj_launch_convert_args(fn->name, types, args, nargs, conv);
  if (st == CUJIT_OK) st = cujit_launch(fn, grid, block, conv, nargs, o);
  if (conv != stack) cj_free(conv);
  return st;
}

/* What each parameter of a kernel whose types are unknown takes (sizes are checked). */
static const uint64_t accept_unknown[STACK_ARGS] =
    {CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN,
     CJ_ACCEPT_UNKNOWN, CJ_ACCEPT_UNKNOWN};

cujit_status cujit_launch(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                          const cujit_arg *args, size_t nargs, const cujit_launch_options *opts) {
  static const cujit_launch_options defaults;
  const cujit_launch_options *o = opts ? opts : &defaults;
  void *params[STACK_ARGS];
  const cj_ptypes *types;
  const uint64_t *accept;
  cj_fslot *slot;
  size_t i;
  cujit_status st;
  CJ_CHECK(fn, CUJIT_ERROR_INVALID_VALUE, "cujit_launch: fn is NULL");
  if (CJ_UNLIKELY(!CJ_OPTS_CURRENT(o))) return launch_resized(fn, grid, block, args, nargs, o);
  if (CJ_UNLIKELY((st = cj_function_slot(fn, &slot, 0)) != CUJIT_OK)) return st;
  types = cj_function_ptypes(fn);
  /* the hot path: values of the right sizes and types, checked while the parameter array
   * is built; the arguments are checked before the configuration, as on the other path */
  if (CJ_LIKELY(nargs == fn->nparams && nargs <= STACK_ARGS && args && !o->elapsed_ms &&
                !CJ_OPTS_EX(o))) {
    const size_t *sizes = fn->param_sizes; /* read once: the stores to params may alias */
    accept = types ? types->accept : accept_unknown;
    for (i = 0; i < nargs; i++) {
      const cujit_arg *a = &args[i];
      if (CJ_UNLIKELY(a->kind != CUJIT_ARG_VALUE || a->size != sizes[i] ||
                      (a->size > sizeof a->value && !a->data) || !cj_takes(accept[i], a->type)))
        break;
      params[i] = value_of(a);
    }
    if (CJ_LIKELY(i == nargs)) {
      if (CJ_UNLIKELY((st = cj_launch_ready(fn, slot, grid, block, o)) != CUJIT_OK)) return st;
      return cj_launch_kernel(fn, slot, grid, block, params, o);
    }
  }
  /* everything else: In/Out buffers, timings, cooperative launches, clusters, and mistakes,
   * which get their message */
  st = cj_launch_check_args(fn->name, fn->nparams, fn->param_sizes, types, args, nargs);
  if (CJ_UNLIKELY(st != CUJIT_OK)) return st;
  if (CJ_UNLIKELY(cj_launch_plain_args(types, args, nargs)))
    return launch_plain(fn, grid, block, args, nargs, o);
  if (CJ_UNLIKELY((st = cj_launch_checked(fn, slot, grid, block, o)) != CUJIT_OK)) return st;
  if (CJ_OPTS_EX(o)) return launch_ex_general(fn, slot, grid, block, args, nargs, o);
  return launch_general(fn, slot, grid, block, args, nargs, o);
}

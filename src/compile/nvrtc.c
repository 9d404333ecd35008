/* nvrtc.c - compiling with NVRTC (loaded on the first call that needs it). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "compile/compile.h"
#include "dl/nvrtc.h"

static pthread_once_t archs_once = PTHREAD_ONCE_INIT;
static int archs[128];
static size_t n_archs;
static nvrtcResult archs_result;
static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static int version_major, version_minor;
static nvrtcResult version_result;
static uint64_t programs_created;

static cujit_status load_status;
static int archs_refused, version_refused; /* forked while NVRTC was in use: not asked */

static int flight_enter(void);
static void flight_end(void);
static cujit_status refused(const char *what);

static void archs_init(void) {
  int n = 0;
  if ((load_status = cj_libnvrtc_load()) != CUJIT_OK) return;
  if ((archs_refused = flight_enter()) != 0) return;
  archs_result = cj_nv.nvrtcGetNumSupportedArchs(&n);
  if (archs_result == NVRTC_SUCCESS && n > 0 && (size_t)n <= CJ_COUNT(archs)) {
    archs_result = cj_nv.nvrtcGetSupportedArchs(archs);
    if (archs_result == NVRTC_SUCCESS) n_archs = (size_t)n;
  }
  flight_end();
}

cujit_status cj_nvrtc_archs(const int **out, size_t *count) {
  pthread_once(&archs_once, archs_init);
  if (load_status != CUJIT_OK) return cj_libnvrtc_load();
  if (archs_refused) return refused("ask NVRTC which targets it supports");
  if (archs_result != NVRTC_SUCCESS)
    return cj_fail_nvrtc(CUJIT_ERROR_NVRTC, archs_result, "nvrtcGetSupportedArchs failed: %s",
                         cj_nv.nvrtcGetErrorString(archs_result));
  *out = archs;
  *count = n_archs;
  return CUJIT_OK;
}

static cujit_status version_load_status;

static void version_init(void) {
  if ((version_load_status = cj_libnvrtc_load()) != CUJIT_OK) return;
  if ((version_refused = flight_enter()) != 0) return;
  version_result = cj_nv.nvrtcVersion(&version_major, &version_minor);
  flight_end();
}

cujit_status cj_nvrtc_version_cached(int *major, int *minor) {
  pthread_once(&version_once, version_init);
  if (version_load_status != CUJIT_OK) return cj_libnvrtc_load();
  if (version_refused) return refused("ask NVRTC its version");
  if (version_result != NVRTC_SUCCESS)
    return cj_fail_nvrtc(CUJIT_ERROR_NVRTC, version_result, "nvrtcVersion failed: %s",
                         cj_nv.nvrtcGetErrorString(version_result));
  *major = version_major;
  *minor = version_minor;
  return CUJIT_OK;
}

uint64_t cj_nvrtc_programs_created(void) {
  return __atomic_load_n(&programs_created, __ATOMIC_RELAXED);
}

cujit_status cujit_nvrtc_get_version(int *major, int *minor) {
  int a = 0, b = 0;
  CJ_TRY(cj_nvrtc_version_cached(&a, &b));
  if (major) *major = a;
  if (minor) *minor = b;
  return CUJIT_OK;
}

cujit_status cujit_nvrtc_get_archs(int *out, size_t capacity, size_t *count) {
  const int *a = NULL;
  size_t n = 0, i;
  CJ_CHECK(count && (!capacity || out), CUJIT_ERROR_INVALID_VALUE,
           "cujit_nvrtc_get_archs: count is NULL, or archs is NULL "
           "with a nonzero capacity");
  CJ_TRY(cj_nvrtc_archs(&a, &n));
  for (i = 0; i < n && i < capacity; i++) out[i] = a[i];
  *count = n;
  return CUJIT_OK;
}

static char *program_log(nvrtcProgram p) {
  size_t size = 0;
  char *log;
  if (cj_nv.nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size == 0) return cj_strdup("");
  log = cj_malloc(size + 1);
  if (!log) return NULL;
  if (cj_nv.nvrtcGetProgramLog(p, log) != NVRTC_SUCCESS) log[0] = '\0';
  log[size] = '\0';
  return log;
}

static void options_line(const cj_request *r, cj_buf *b) {
  size_t i;
  for (i = 0; i < r->argc; i++) cj_buf_printf(b, "%s%s", i ? " " : "", r->argv[i]);
  if (!r->argc) cj_buf_puts(b, "(none)");
}

/* For a header that could not be found: where NVRTC looked, in its order. */
static void search_hint(const cj_request *r, cj_buf *b) {
  size_t i, n_toolkit;
  const char *v;
  cj_buf_puts(b, "a header was not found; searched, in order: the in-memory headers");
  for (i = 0; i < r->n_nvrtc_headers; i++)
    cj_buf_printf(b, "%s'%s'", i ? ", " : " (", r->header_names[i]);
  cj_buf_puts(b, r->n_nvrtc_headers ? "), the includer's directory" : ", the includer's directory");
  for (i = 0; i < r->argc; i++) {
    v = r->argv[i];
    if (strncmp(v, "--include-path=", 15) == 0)
      cj_buf_printf(b, ", %s", v + 15);
    else if (strncmp(v, "-I", 2) == 0 && v[2])
      cj_buf_printf(b, ", %s", v + 2);
  }
  cj_toolkit_include_dirs(&n_toolkit);
  if (r->flags & CUJIT_OPT_NO_TOOLKIT_INCLUDES)
    cj_buf_puts(b, "\n(the CUDA toolkit's directories were not searched: "
                   "CUJIT_OPT_NO_TOOLKIT_INCLUDES)");
  else if (!n_toolkit)
    cj_buf_puts(b, "\n(no CUDA toolkit was found to search; set CUDA_PATH to its directory)");
  cj_buf_puts(b, "\n");
}

static cujit_status compile_failed(const cj_request *r, nvrtcResult res, const char *log) {
  cj_buf opts = {0}, hint = {0};
  cujit_status st;
  options_line(r, &opts);
  if (strstr(log, "open source file")) search_hint(r, &hint);
  if (res == NVRTC_ERROR_COMPILATION)
    st = cj_fail_nvrtc(CUJIT_ERROR_COMPILE, res,
                       "'%s' did not compile; fix the errors below (line numbers are the "
                       "source's own)\noptions: %s\n%s%s",
                       r->name, opts.data ? opts.data : "", hint.data ? hint.data : "", log);
  else if (res == NVRTC_ERROR_INVALID_OPTION)
    st = cj_fail_nvrtc(CUJIT_ERROR_INVALID_OPTION, res,
                       "NVRTC rejected an option while compiling '%s': %s"
                       "options: %s\n(see NVRTC's documentation for valid options)",
                       r->name, log[0] ? log : "(no log)\n", opts.data ? opts.data : "");
  else
    st = cj_fail_nvrtc(CUJIT_ERROR_NVRTC, res, "NVRTC failed on '%s': %s\noptions: %s\n%s", r->name,
                       cj_nv.nvrtcGetErrorString(res), opts.data ? opts.data : "", log);
  cj_buf_free(&opts);
  cj_buf_free(&hint);
  return st;
}

static int take_output(nvrtcProgram p, cj_image *im) {
  size_t size = 0;
  if (cj_nv.nvrtcGetPTXSize(p, &size) == NVRTC_SUCCESS && size > 1) {
    im->ptx = cj_malloc(size);
    if (!im->ptx || cj_nv.nvrtcGetPTX(p, im->ptx) != NVRTC_SUCCESS) return -1;
    im->ptx[size - 1] = '\0';
    im->ptx_size = strlen(im->ptx);
  } else {
    im->ptx = cj_strdup("");
    if (!im->ptx) return -1;
  }
  size = 0;
  if (cj_nv.nvrtcGetCUBINSize(p, &size) == NVRTC_SUCCESS && size > 0) {
    im->cubin = cj_malloc(size);
    if (!im->cubin || cj_nv.nvrtcGetCUBIN(p, (char *)im->cubin) != NVRTC_SUCCESS) return -1;
    im->cubin_size = size;
  } else if (cj_nv.nvrtcGetLTOIRSize && cj_nv.nvrtcGetLTOIRSize(p, &size) == NVRTC_SUCCESS &&
             size > 0) { /* -dlto: the LTO-IR takes the CUBIN's place */
    im->cubin = cj_malloc(size);
    if (!im->cubin || cj_nv.nvrtcGetLTOIR(p, (char *)im->cubin) != NVRTC_SUCCESS) return -1;
    im->cubin_size = size;
  }
  return 0;
}

static int take_names(nvrtcProgram p, const cj_request *r, cj_image *im) {
  size_t i;
  const char *lowered;
  if (!r->n_name_exprs) return 0;
  im->name_exprs = cj_calloc(r->n_name_exprs, sizeof(char *));
  im->lowered = cj_calloc(r->n_name_exprs, sizeof(char *));
  if (!im->name_exprs || !im->lowered) return -1;
  im->n_names = r->n_name_exprs;
  for (i = 0; i < r->n_name_exprs; i++) {
    if (cj_nv.nvrtcGetLoweredName(p, r->name_exprs[i], &lowered) != NVRTC_SUCCESS) lowered = "";
    im->name_exprs[i] = cj_strdup(r->name_exprs[i]);
    im->lowered[i] = cj_strdup(lowered);
    if (!im->name_exprs[i] || !im->lowered[i]) return -1;
  }
  return 0;
}

/* ---- stopping a compile: r->cancel and r->time_limit_s ---- */

enum { RUNNING = 0, STOP_HOOK = 1, STOP_LIMIT = 2 };

/* What NVRTC's flow callback looks at. NVRTC calls it between its phases, on the
 * compiling thread or (with -split-compile) on several of its own at once, so the first
 * to decide to stop records why, and every later call answers 1 without asking again. */
typedef struct flow {
  const cj_request *r;
  double start;   /* monotonic seconds when the compile began */
  double stopped; /* seconds into the compile when it was stopped */
  int why;        /* RUNNING, STOP_HOOK or STOP_LIMIT; atomic */
} flow;

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int flow_check(void *payload, void *reserved) {
  flow *f = payload;
  double t;
  int why = RUNNING;
  (void)reserved;
  if (__atomic_load_n(&f->why, __ATOMIC_ACQUIRE) != RUNNING) return 1;
  t = seconds() - f->start;
  if (f->r->cancel && f->r->cancel(f->r->cancel_user))
    why = STOP_HOOK;
  else if (f->r->time_limit_s > 0 && t > f->r->time_limit_s)
    why = STOP_LIMIT;
  if (why == RUNNING) return 0;
  f->stopped = t;
  __atomic_store_n(&f->why, why, __ATOMIC_RELEASE);
  return 1;
}

/* Hands NVRTC the callback when the request has a limit or a hook; the limit counts from
 * `start`, when the request's first compile began. An NVRTC without the callback compiles
 * to the end: a limit is advice, the output the same; told once. */
static void flow_start(nvrtcProgram p, const cj_request *r, double start, flow *f) {
  static int told;
  memset(f, 0, sizeof *f);
  f->r = r;
  if (!r->cancel && !(r->time_limit_s > 0)) return;
  if (!cj_nv.nvrtcSetFlowCallback) {
    if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
      cj_warn("this NVRTC cannot stop a compile (it has no nvrtcSetFlowCallback): "
              "compiles run to their end, without the time limit or cancel hook they "
              "were given; a newer NVRTC honours them");
    return;
  }
  f->start = start;
  if (cj_nv.nvrtcSetFlowCallback(p, flow_check, f) != NVRTC_SUCCESS)
    cj_debug("nvrtcSetFlowCallback failed: '%s' compiles without its limit or hook", r->name);
}

cujit_status cj_nvrtc_stopped(const cj_request *r, int by_hook, double after, int nvrtc) {
  if (by_hook)
    return cj_fail_nvrtc(CUJIT_ERROR_CANCELLED, nvrtc,
                         "compiling '%s' was cancelled: the "
                         "cancel hook asked to stop after %.3f s; nothing was cached, and a "
                         "later compile starts afresh",
                         r->name, after);
  return cj_fail_nvrtc(CUJIT_ERROR_CANCELLED, nvrtc,
                       "compiling '%s' was stopped: its time "
                       "limit of %g s passed after %.3f s; nothing was cached; give it more "
                       "time (time_limit_s, or 0 for no limit) to compile it",
                       r->name, r->time_limit_s, after);
}

/* What a compile did with a precompiled header. */
typedef struct pch_use {
  int allowed;     /* 0: a plain compile */
  uint64_t prefix; /* nonzero when one was asked for (cj_pch_begin) */
  char *failed;    /* NVRTC's log when the compile with one failed; NULL otherwise */
} pch_use;

/* nvrtcCompileProgram with r's options, plus a precompiled header's when the source's
 * header prefix has been compiled before in this process (pch.c). */
static nvrtcResult compile_program(nvrtcProgram p, const cj_request *r, pch_use *u) {
  static const char *const pch_args[] = {"--pch", "--pch-messages=false", "--pch-verbose=false"};
  char pch_dir[600];
  const char **argv;
  nvrtcResult res;
  size_t i;
  if (!u->allowed || !cj_pch_begin(r, pch_dir, sizeof pch_dir, &u->prefix) ||
      !(argv = cj_calloc(r->argc + 4, sizeof *argv)))
    return cj_nv.nvrtcCompileProgram(p, (int)r->argc, (const char *const *)r->argv);
  for (i = 0; i < r->argc; i++) argv[i] = r->argv[i];
  for (i = 0; i < 3; i++) argv[r->argc + i] = pch_args[i];
  argv[r->argc + 3] = pch_dir;
  res = cj_nv.nvrtcCompileProgram(p, (int)r->argc + 4, argv);
  /* a stopped compile says nothing about whether the header can be made */
  if (res != NVRTC_ERROR_CANCELLED) cj_pch_end(u->prefix, p);
  if (res != NVRTC_SUCCESS && res != NVRTC_ERROR_CANCELLED && !(u->failed = program_log(p)))
    u->failed = cj_strdup("");
  cj_free(argv);
  return res;
}

static cujit_status run(nvrtcProgram p, const cj_request *r, pch_use *u, double start,
                        cj_image *im) {
  nvrtcResult res;
  flow f;
  size_t i;
  for (i = 0; i < r->n_name_exprs; i++) {
    res = cj_nv.nvrtcAddNameExpression(p, r->name_exprs[i]);
    if (res != NVRTC_SUCCESS)
      return cj_fail_nvrtc(CUJIT_ERROR_INVALID_OPTION, res, "name expression '%s' rejected: %s",
                           r->name_exprs[i], cj_nv.nvrtcGetErrorString(res));
  }
  flow_start(p, r, start, &f);
  res = compile_program(p, r, u);
  /* once asked to stop, the compile is stopped, even where NVRTC finished regardless */
  if (__atomic_load_n(&f.why, __ATOMIC_ACQUIRE) != RUNNING)
    return cj_nvrtc_stopped(r, f.why == STOP_HOOK, f.stopped, res);
  im->log = program_log(p);
  if (!im->log) return cj_fail_oom("reading NVRTC's log");
  if (res != NVRTC_SUCCESS) return compile_failed(r, res, im->log);
  if (take_output(p, im) != 0 || take_names(p, r, im) != 0)
    return cj_fail_oom("copying NVRTC's output");
  if (r->arch[0])
    memcpy(im->arch, r->arch, sizeof im->arch);
  else
    cj_image_arch_from_ptx(im);
  return CUJIT_OK;
}

/* ---- forks while compiles run ----
 *
 * NVRTC holds a lock of its own while it compiles (and while it answers which targets it
 * supports, or its version): a child forked meanwhile would find it held by a thread the
 * child does not have, and the child's first compile would wait forever. So every call
 * into NVRTC is "in flight": a fork waits (in a hook of common/forklock.c) for those in flight
 * to end, and none starts until the fork is done. The wait is bounded (fork_wait_s): a
 * compile may need a lock the forking thread holds (a cancel hook or log callback taking
 * the caller's own lock), and then the fork goes on; a child forked while another thread
 * compiled refuses to compile rather than hang. A fork from inside a compile (a cancel
 * hook) waits only for the other threads' compiles. */

static pthread_mutex_t flight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flight_change = PTHREAD_COND_INITIALIZER;
static int in_flight, forking; /* compiles running; forks waiting or under way */
static int stuck;              /* forked while another thread compiled: NVRTC is unusable */
static double fork_wait_s = 5;
static _Thread_local int mine; /* compiles running on this thread */

static void fork_prepare(void) {
  struct timespec until;
  long long ns;
  clock_gettime(CLOCK_REALTIME, &until);
  pthread_mutex_lock(&flight_lock);
  ns = until.tv_nsec + (long long)(fork_wait_s * 1e9);
  until.tv_sec += (time_t)(ns / 1000000000);
  until.tv_nsec = (long)(ns % 1000000000);
  forking++;
  while (in_flight > mine &&
         pthread_cond_timedwait(&flight_change, &flight_lock, &until) != ETIMEDOUT) {
  }
  cj_pch_fork_prepare();
}

static void fork_parent(void) {
  cj_pch_fork_done();
  forking--;
  pthread_cond_broadcast(&flight_change);
  pthread_mutex_unlock(&flight_lock);
}

/* The child has only this thread: nothing else is in flight, or waiting. */
static void fork_child(void) {
  cj_pch_fork_done();
  stuck |= in_flight > mine;
  forking = 0;
  in_flight = mine;
  pthread_cond_init(&flight_change, NULL);
  pthread_mutex_unlock(&flight_lock);
}

__attribute__((constructor)) static void fork_hooks(void) {
  cj_fork_hooks(fork_prepare, fork_parent, fork_child);
}

/* Enters a call into NVRTC: 0, or 1 when this process may not call NVRTC (a child forked
 * while another thread was in it), and nothing was entered. */
static int flight_enter(void) {
  int no;
  pthread_mutex_lock(&flight_lock);
  while (forking && !mine) pthread_cond_wait(&flight_change, &flight_lock);
  no = stuck;
  in_flight += !no;
  mine += !no;
  pthread_mutex_unlock(&flight_lock);
  return no;
}

static cujit_status refused(const char *what) {
  return cj_fail(CUJIT_ERROR_NVRTC,
                 "cannot %s in this process: it was forked while another thread of its parent "
                 "was in NVRTC, and NVRTC's lock stays held by that thread, which a child does "
                 "not have. Fork before compiling or while no compile runs, or start the child "
                 "with exec (posix_spawn); cache hits still work",
                 what);
}

static cujit_status flight_begin(const cj_request *r) {
  char what[300];
  if (!flight_enter()) return CUJIT_OK;
  snprintf(what, sizeof what, "compile '%s'", r->name);
  return refused(what);
}

static void flight_end(void) {
  pthread_mutex_lock(&flight_lock);
  in_flight--;
  mine--;
  pthread_cond_broadcast(&flight_change);
  pthread_mutex_unlock(&flight_lock);
}

void cj_nvrtc_set_fork_wait(double seconds) {
  pthread_mutex_lock(&flight_lock);
  fork_wait_s = seconds;
  pthread_mutex_unlock(&flight_lock);
}

/* One compile: a program made, run and destroyed. */
static cujit_status compile_once(const cj_request *r, pch_use *u, double start, cj_image **out) {
  nvrtcProgram p = NULL;
  nvrtcResult res;
  cujit_status st;
  cj_image *im;
  if (!(im = cj_image_new())) return cj_fail_oom("starting a compile");
  res = cj_nv.nvrtcCreateProgram(&p, r->source, r->name, (int)r->n_nvrtc_headers,
                                 (const char *const *)r->header_sources,
                                 (const char *const *)r->header_names);
  if (res != NVRTC_SUCCESS) {
    cj_image_unref(im);
    return res == NVRTC_ERROR_OUT_OF_MEMORY
               ? cj_fail_oom("creating the NVRTC program")
               : cj_fail_nvrtc(CUJIT_ERROR_NVRTC, res, "nvrtcCreateProgram failed for '%s': %s",
                               r->name, cj_nv.nvrtcGetErrorString(res));
  }
  cj_debug("compiling '%s' (%zu bytes) for %s", r->name, r->source_len,
           r->arch[0] ? r->arch : "NVRTC's default target");
  st = run(p, r, u, start, im);
  cj_nv.nvrtcDestroyProgram(&p);
  if (st != CUJIT_OK) {
    cj_image_unref(im);
    return st;
  }
  *out = im;
  return CUJIT_OK;
}

cujit_status cj_nvrtc_compile(const cj_request *r, cj_image **out) {
  pch_use with = {1, 0, NULL}, plain = {0, 0, NULL};
  double start = seconds(); /* a compile done again without a header keeps its limit */
  cujit_status st;
  *out = NULL;
  CJ_TRY(cj_libnvrtc_load());
  CJ_TRY(flight_begin(r));
  CJ_TRACE("cujit: NVRTC %s", r->name);
  __atomic_add_fetch(&programs_created, 1, __ATOMIC_RELAXED);
  st = compile_once(r, &with, start, out);
  /* A precompiled header only saves time: a compile that failed with one is done again
   * without, and when that succeeds the header was to blame (a TMPDIR NVRTC cannot use, a
   * directory removed meanwhile). A source with errors reports the plain compile's. */
  if (with.failed) {
    st = compile_once(r, &plain, start, out);
    if (st == CUJIT_OK) cj_pch_fell_back(with.prefix, with.failed);
    cj_free(with.failed);
  }
  flight_end();
  if (st == CUJIT_OK && (*out)->log[0])
    cj_info("'%s' compiled with messages:\n%s", r->name, (*out)->log);
  return st;
}

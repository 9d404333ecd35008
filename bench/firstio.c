/* firstio.c - the first In/Out launch of a new process, and a whole seed-like process.
 *
 * cujit-bench-seed (bench/seed.c), a program such as the seeds are, written with cujit
 * alone, runs in new processes on a cache an earlier one filled: context, module, kernel,
 * then PyCUDA's multiply_them with an Out and two In buffers of 400 floats (3 x 1.6 KB),
 * twelve times. Goal: its first launch costs at most 1 ms more than its second. So that
 * one run says where a first launch's time goes, the same program also runs
 *   - with its buffers from cujit_host_alloc (no pageable copy at all);
 *   - with the memory pool made first (an array made and destroyed);
 *   - with CUJIT_STAGING_THREADS=0 (the driver copies its pageable buffers);
 *   - with cujit's log at debug level, whose lines time each step of the first two staged
 *     launches, the making of the pool and of the small pinned area;
 * bare driver programs time, each in a new process with its context and module made, the
 * first and the second call of what a first launch may set up (cuMemAlloc; cuMemPoolCreate
 * and cuMemAllocFromPoolAsync; pageable cuMemcpyHtoDAsync and cuMemcpyDtoHAsync of 1.6 KB;
 * cuMemHostAlloc of 64 KiB and pinned copies through it; cuPointerGetAttributes), and
 * PyCUDA's way by hand (cuMemAlloc, pageable cuMemcpyHtoD, launch, cuMemcpyDtoH,
 * cuMemFree); and, where PyCUDA is installed, PyCUDA runs the same seed
 * (bench/pycuda_seed.py): its first and second launch, its parts, and the whole process
 * against cujit's, spawn to exit. Medians over processes, the ways interleaved. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define SEED_N 400
#define REPS_MAX 16

static double since_ms(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e6; }

/* ---- the bare driver's children ---- */

/* PyCUDA's way by hand, twice: cuMemAlloc x3, cuMemcpyHtoD x2 (pageable), the launch,
 * cuMemcpyDtoH (which waits for it), cuMemFree x3; v[k] gets the parts and the whole of
 * round k. */
static int raw_rounds(CUfunction f, double v[2][6]) {
  float a[SEED_N], b[SEED_N], dest[SEED_N];
  int i, k, p;
  for (i = 0; i < SEED_N; i++) a[i] = (float)(i % 17) - 8.0f, b[i] = (float)(i % 5) + 0.5f;
  for (k = 0; k < 2; k++) {
    CUdeviceptr d[3];
    void *params[] = {&d[0], &d[1], &d[2]};
    uint64_t t[6];
    t[0] = bench_now_ns();
    for (p = 0; p < 3; p++) bench_cu_check(bench_cu.cuMemAlloc(&d[p], sizeof a), "cuMemAlloc");
    t[1] = bench_now_ns();
    bench_cu_check(bench_cu.cuMemcpyHtoD(d[1], a, sizeof a), "cuMemcpyHtoD");
    bench_cu_check(bench_cu.cuMemcpyHtoD(d[2], b, sizeof b), "cuMemcpyHtoD");
    t[2] = bench_now_ns();
    bench_cu_check(bench_cu.cuLaunchKernel(f, 1, 1, 1, SEED_N, 1, 1, 0, NULL, params, NULL),
                   "cuLaunchKernel");
    t[3] = bench_now_ns();
    bench_cu_check(bench_cu.cuMemcpyDtoH(dest, d[0], sizeof dest), "cuMemcpyDtoH");
    t[4] = bench_now_ns();
    for (p = 0; p < 3; p++) bench_cu.cuMemFree(d[p]);
    t[5] = bench_now_ns();
    for (p = 0; p < 5; p++) v[k][p] = (double)(t[p + 1] - t[p]) / 1e6;
    v[k][5] = (double)(t[5] - t[0]) / 1e6;
    for (i = 0; i < SEED_N; i++)
      if (dest[i] != a[i] * b[i]) return -1;
  }
  return 0;
}

/* What each probe times, first and second call; pool and hostalloc time a second pair. */
static const char *const probe_names[] = {"alloc", "pool", "htod", "dtoh", "hostalloc", "attr"};
#define N_PROBES (sizeof probe_names / sizeof *probe_names)

static int probe_pool(unsigned char *host, double v[4]) {
  CUmemPoolProps props;
  CUmemoryPool pool;
  CUdeviceptr d[2];
  uint64_t t = bench_now_ns();
  int k;
  (void)host;
  memset(&props, 0, sizeof props); /* as cujit makes its pool */
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  bench_cu_check(bench_cu.cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  v[2] = since_ms(t);
  v[3] = NAN;
  for (k = 0; k < 2; k++) {
    t = bench_now_ns();
    bench_cu_check(bench_cu.cuMemAllocFromPoolAsync(&d[k], SEED_N * 4, pool, NULL),
                   "cuMemAllocFromPoolAsync");
    bench_cu_check(bench_cu.cuStreamSynchronize(NULL), "cuStreamSynchronize");
    v[k] = since_ms(t);
  }
  for (k = 0; k < 2; k++) bench_cu.cuMemFreeAsync(d[k], NULL);
  bench_cu.cuStreamSynchronize(NULL);
  bench_cu.cuMemPoolDestroy(pool);
  return 0;
}

static int probe_copies(int to_device, unsigned char *host, double v[4]) {
  CUdeviceptr d;
  int k;
  bench_cu_check(bench_cu.cuMemAlloc(&d, SEED_N * 4), "cuMemAlloc");
  for (k = 0; k < 2; k++) {
    uint64_t t = bench_now_ns();
    bench_cu_check(to_device ? bench_cu.cuMemcpyHtoDAsync(d, host, SEED_N * 4, NULL)
                             : bench_cu.cuMemcpyDtoHAsync(host, d, SEED_N * 4, NULL),
                   "a pageable copy");
    bench_cu_check(bench_cu.cuStreamSynchronize(NULL), "cuStreamSynchronize");
    v[k] = since_ms(t);
  }
  bench_cu.cuMemFree(d);
  return 0;
}

static int probe_host_alloc(double v[4]) {
  void *p[2];
  CUdeviceptr d;
  int k;
  for (k = 0; k < 2; k++) {
    uint64_t t = bench_now_ns();
    bench_cu_check(bench_cu.cuMemHostAlloc(&p[k], 64u << 10, CU_MEMHOSTALLOC_PORTABLE),
                   "cuMemHostAlloc");
    v[k] = since_ms(t);
  }
  bench_cu_check(bench_cu.cuMemAlloc(&d, SEED_N * 4), "cuMemAlloc");
  for (k = 0; k < 2; k++) { /* through it: what cujit's small pinned area does */
    uint64_t t = bench_now_ns();
    bench_cu_check(bench_cu.cuMemcpyHtoDAsync(d, p[0], SEED_N * 4, NULL), "cuMemcpyHtoDAsync");
    bench_cu_check(bench_cu.cuMemcpyDtoHAsync((char *)p[0] + 4096, d, SEED_N * 4, NULL),
                   "cuMemcpyDtoHAsync");
    bench_cu_check(bench_cu.cuStreamSynchronize(NULL), "cuStreamSynchronize");
    v[2 + k] = since_ms(t);
  }
  bench_cu.cuMemFree(d);
  for (k = 0; k < 2; k++) bench_cu.cuMemFreeHost(p[k]);
  return 0;
}

static int probe_run(const char *name, double v[4]) {
  static unsigned char host[SEED_N * 4]; /* pageable */
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned type = 0, managed = 0;
  void *data[2] = {&type, &managed};
  CUdeviceptr d[2];
  int k;
  memset(host, 1, sizeof host);
  v[2] = v[3] = NAN;
  if (strcmp(name, "pool") == 0) return probe_pool(host, v);
  if (strcmp(name, "htod") == 0 || strcmp(name, "dtoh") == 0)
    return probe_copies(name[0] == 'h', host, v);
  if (strcmp(name, "hostalloc") == 0) return probe_host_alloc(v);
  for (k = 0; k < 2; k++) {
    uint64_t t = bench_now_ns();
    if (strcmp(name, "alloc") == 0)
      bench_cu_check(bench_cu.cuMemAlloc(&d[k], sizeof host), "cuMemAlloc");
    else if (strcmp(name, "attr") == 0)
      bench_cu_check(bench_cu.cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)(uintptr_t)host),
                     "cuPointerGetAttributes");
    else
      return -1;
    v[k] = since_ms(t);
  }
  if (strcmp(name, "alloc") == 0)
    for (k = 0; k < 2; k++) bench_cu.cuMemFree(d[k]);
  return 0;
}

/* Child: argv = {"raw", cubin} or {"probe", name, cubin}: the context and the module are
 * made first, untimed. Prints the figures of raw_rounds (12) or probe_run (4). */
int bench_firstio_child(int argc, char **argv) {
  CUmodule mod;
  CUfunction f;
  double v[2][6], p[4];
  size_t size;
  void *image;
  if (argc < 2 || bench_driver_load() != 0 || bench_context() != 0) return 3;
  if (!(image = bench_read_file(argv[argc - 1], &size))) return 3;
  bench_cu_check(bench_cu.cuModuleLoadData(&mod, image), "cuModuleLoadData");
  /* the seed's kernel is C++: multiply_them(float *, float *, float *) by its mangled name */
  bench_cu_check(bench_cu.cuModuleGetFunction(&f, mod, "_Z13multiply_themPfS_S_"),
                 "cuModuleGetFunction");
  free(image);
  if (strcmp(argv[0], "raw") == 0) {
    if (raw_rounds(f, v) != 0) return 4;
    printf("%.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", v[0][0], v[0][1],
           v[0][2], v[0][3], v[0][4], v[0][5], v[1][0], v[1][1], v[1][2], v[1][3], v[1][4],
           v[1][5]);
    return 0;
  }
  if (argc < 3 || probe_run(argv[1], p) != 0) return 2;
  printf("%.6f %.6f %.6f %.6f\n", p[0], p[1], p[2], p[3]);
  return 0;
}

/* ---- the parent ---- */

/* The seed program's figures, in its order. */
enum { P_CONTEXT, P_MODULE, P_FUNCTION, P_BEFORE, P_FIRST, P_SECOND, P_LATER, N_PARTS };

/* What its log at debug level said (steps mode), NAN where a line was missing. */
static const char *const step_names[] = {"memory kinds", "device memory", "copies in", "kernel",
                                         "copies out",   "memory back",   "wait"};
#define N_STEPS (sizeof step_names / sizeof *step_names)

typedef struct seed_run {
  double part[N_PARTS];
  double wall;
  double step[2][N_STEPS]; /* the first and second staged launch */
  double pool_ms, area_ms; /* making the pool, the small pinned area */
} seed_run;

/* The milliseconds after "made in " in the line of `out` that holds `needle`. */
static double made_in(const char *out, const char *needle) {
  const char *p = strstr(out, needle), *m;
  double v;
  if (!p || !(m = strstr(p, "made in ")) || sscanf(m + 8, "%lf", &v) != 1) return NAN;
  return v;
}

/* The steps of staged launch `n` (1 or 2): "name 0.123 ms" after each name. */
static void steps_of(const char *out, int n, double *step) {
  char head[64];
  const char *line, *end;
  size_t k;
  for (k = 0; k < N_STEPS; k++) step[k] = NAN;
  snprintf(head, sizeof head, "staged launch %d of the process", n);
  if (!(line = strstr(out, head))) return;
  end = strchr(line, '\n');
  for (k = 0; k < N_STEPS; k++) {
    const char *at = strstr(line, step_names[k]);
    if (at && (!end || at < end)) sscanf(at + strlen(step_names[k]), "%lf", &step[k]);
  }
}

static int run_seed(const char *mode, const char *cache, int driver_copies, seed_run *r) {
  char prog[4200], home[600], env_home[640], env_cache[640], out[8192];
  char *argv[] = {prog, (char *)mode, NULL};
  char *env[] = {env_home, env_cache, driver_copies ? "CUJIT_STAGING_THREADS=0" : NULL, NULL};
  uint64_t t0;
  double *p = r->part;
  if (bench_mkdir("home", home, sizeof home) != 0) return -1;
  bench_sibling("cujit-bench-seed", prog, sizeof prog);
  snprintf(env_home, sizeof env_home, "HOME=%s", home);
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  t0 = bench_now_ns();
  if (bench_run_program(argv, env, out, sizeof out) != 0) return -1;
  r->wall = since_ms(t0);
  if (sscanf(out, "%lf %lf %lf %lf %lf %lf %lf", &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6]) !=
      N_PARTS)
    return -1;
  steps_of(out, 1, r->step[0]);
  steps_of(out, 2, r->step[1]);
  r->pool_ms = made_in(out, "memory pool made");
  r->area_ms = made_in(out, "pinned area for small pageable copies");
  return 0;
}

/* PyCUDA's seed; 1 when it ran, 0 with `why` when it cannot here, -1 when it failed. */
enum { Y_IMPORTS, Y_CONTEXT, Y_MODULE, Y_FUNCTION, Y_FIRST, Y_SECOND, Y_LATER, N_PY };

static int run_pycuda(const char *script, const char *cache, double *v, double *wall, char *why,
                      size_t size) {
  char out[2048];
  char *argv[] = {"python3", (char *)script, (char *)cache, NULL};
  uint64_t t0 = bench_now_ns();
  int rc = bench_run_program(argv, NULL, out, sizeof out);
  *wall = since_ms(t0);
  if (rc == -1 || rc == 127) {
    snprintf(why, size, "python3 could not be run");
    return 0;
  }
  if (strncmp(out, "skip: ", 6) == 0) {
    snprintf(why, size, "%.*s", (int)strcspn(out + 6, "\n"), out + 6);
    return 0;
  }
  if (rc != 0 || sscanf(out, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                        &v[5], &v[6]) != N_PY) {
    snprintf(why, size, "bench/pycuda_seed.py failed (exit %d; see the log)", rc);
    return -1;
  }
  return 1;
}

static int run_bare(const char *kind, const char *name, const char *cubin, double *v, int n) {
  char out[512];
  char *argv[] = {"", "--child", "firstio", (char *)kind, (char *)name, (char *)cubin, NULL};
  int i, got = 0, off = 0, used;
  if (!name) argv[4] = (char *)cubin, argv[5] = NULL;
  if (bench_run_child(argv, NULL, out, sizeof out) != 0) return -1;
  for (i = 0; i < n && sscanf(out + off, "%lf%n", &v[i], &used) == 1; i++) off += used, got++;
  return got == n ? 0 : -1;
}

/* The seed's ways: the goal's, and those that take one thing away. */
enum { W_PAGEABLE, W_PINNED, W_POOL, W_DRIVER, W_STEPS, N_WAYS };
static const char *const way_modes[N_WAYS] = {"pageable", "pinned", "pool", "pageable", "steps"};

typedef struct results {
  seed_run seed[N_WAYS][REPS_MAX];
  double raw[REPS_MAX][12];
  double probe[N_PROBES][REPS_MAX][4];
  double py[REPS_MAX][N_PY], py_wall[REPS_MAX];
  int have_py;
  char py_why[256];
} results;

static double med(double *v, int n) {
  double tmp[REPS_MAX];
  int i, k = 0;
  for (i = 0; i < n; i++)
    if (!isnan(v[i])) tmp[k++] = v[i];
  return k ? bench_median(tmp, (size_t)k) : NAN;
}

/* The median of one figure of the seed runs of way w. */
static double seed_med(const results *r, int w, int reps, size_t offset) {
  double v[REPS_MAX];
  int i;
  for (i = 0; i < reps; i++) v[i] = *(const double *)((const char *)&r->seed[w][i] + offset);
  return med(v, reps);
}

#define SEED_PART(r, w, reps, k) \
  seed_med((r), (w), (reps), offsetof(seed_run, part) + (size_t)(k) * sizeof(double))

static int one_round(int round, const char *cache, const char *cubin, const char *script,
                     results *r) {
  int k, w, order;
  for (k = 0; k < N_WAYS; k++) { /* in a new order each round */
    w = (k + round) % N_WAYS;
    if (run_seed(way_modes[w], cache, w == W_DRIVER, &r->seed[w][round]) != 0) {
      fprintf(stderr, "cujit-bench: cujit-bench-seed %s failed\n", way_modes[w]);
      return -1;
    }
  }
  if (run_bare("raw", NULL, cubin, r->raw[round], 12) != 0) return -1;
  for (k = 0; k < (int)N_PROBES; k++) {
    order = (k + round) % (int)N_PROBES;
    if (run_bare("probe", probe_names[order], cubin, r->probe[order][round], 4) != 0) {
      fprintf(stderr, "cujit-bench: the %s probe failed\n", probe_names[order]);
      return -1;
    }
  }
  if (script && r->have_py) {
    int got =
        run_pycuda(script, cache, r->py[round], &r->py_wall[round], r->py_why, sizeof r->py_why);
    if (got != 1) r->have_py = 0;
  }
  return 0;
}

/* The median of figure k of the bare children's rows (raw: 12; a probe: 4). */
static double raw_med(const results *r, int reps, int k) {
  double v[REPS_MAX];
  int i;
  for (i = 0; i < reps; i++) v[i] = r->raw[i][k];
  return med(v, reps);
}

static double probe_med(const results *r, int reps, int probe, int k) {
  double v[REPS_MAX];
  int i;
  for (i = 0; i < reps; i++) v[i] = r->probe[probe][i][k];
  return med(v, reps);
}

static double py_med(const results *r, int reps, int k) {
  double v[REPS_MAX];
  int i;
  for (i = 0; i < reps; i++) v[i] = k < 0 ? r->py_wall[i] : r->py[i][k];
  return med(v, reps);
}

static void report_seed(const results *r, int reps) {
  static const char *const ways[N_WAYS] =
      {"", "  the same, buffers from cujit_host_alloc",
       "  the same, the pool made before (an array)",
       "  the same, CUJIT_STAGING_THREADS=0 (the driver copies)", "  the same, log at debug level"};
  double first = SEED_PART(r, W_PAGEABLE, reps, P_FIRST);
  double second = SEED_PART(r, W_PAGEABLE, reps, P_SECOND);
  char metric[96];
  size_t k;
  int w;
  bench_check("firstio", "first In/Out launch of a process: 3 x 1.6 KB pageable", 3 * SEED_N * 4,
              "ms", first, second, second + 1, first <= second + 1,
              "<= the second launch + 1 ms (warm cache; context made)");
  for (w = W_PINNED; w < N_WAYS; w++)
    bench_info("firstio", ways[w], 3 * SEED_N * 4, "ms", SEED_PART(r, w, reps, P_FIRST),
               SEED_PART(r, w, reps, P_SECOND), "first launch; baseline: the second");
  bench_info("firstio", "  before the first launch: cujit_host_alloc x3", 0, "ms",
             SEED_PART(r, W_PINNED, reps, P_BEFORE), NAN, "pinned way, untimed above");
  bench_info("firstio", "  before the first launch: an array made and destroyed", 0, "ms",
             SEED_PART(r, W_POOL, reps, P_BEFORE), NAN, "pool way (makes the pool), untimed above");
  for (k = 0; k < N_STEPS; k++) {
    double v1[REPS_MAX], v2[REPS_MAX];
    int i;
    for (i = 0; i < reps; i++) v1[i] = r->seed[W_STEPS][i].step[0][k];
    for (i = 0; i < reps; i++) v2[i] = r->seed[W_STEPS][i].step[1][k];
    snprintf(metric, sizeof metric, "  step of a staged launch: %s", step_names[k]);
    bench_info("firstio", metric, 0, "ms", med(v1, reps), med(v2, reps),
               "cujit's debug log: launch 1; baseline: launch 2");
  }
  bench_info("firstio", "  the pool made (cuMemPoolCreate)", 0, "ms",
             seed_med(r, W_STEPS, reps, offsetof(seed_run, pool_ms)), NAN,
             "cujit's debug log, within device memory above");
  bench_info("firstio", "  the small pinned area made (cuMemHostAlloc)", 0, "ms",
             seed_med(r, W_STEPS, reps, offsetof(seed_run, area_ms)), NAN,
             "cujit's debug log, within memory kinds above");
}

static void report_bare(const results *r, int reps) {
  static const char *const raw_parts[5] = {"cuMemAlloc x3", "cuMemcpyHtoD x2 (pageable)",
                                           "cuLaunchKernel", "cuMemcpyDtoH (pageable; waits)",
                                           "cuMemFree x3"};
  static const char *const probe_what[N_PROBES] =
      {"cuMemAlloc of 1.6 KB",
       "cuMemAllocFromPoolAsync of 1.6 KB on a new pool + sync",
       "pageable cuMemcpyHtoDAsync of 1.6 KB + sync",
       "pageable cuMemcpyDtoHAsync of 1.6 KB + sync",
       "cuMemHostAlloc of 64 KiB",
       "cuPointerGetAttributes of pageable memory"};
  char metric[96];
  int k;
  bench_info("firstio", "bare driver, PyCUDA's way by hand: first In/Out launch", 3 * SEED_N * 4,
             "ms", raw_med(r, reps, 5), raw_med(r, reps, 11), "new process; baseline: the second");
  for (k = 0; k < 5; k++) {
    snprintf(metric, sizeof metric, "  bare: %s", raw_parts[k]);
    bench_info("firstio", metric, 0, "ms", raw_med(r, reps, k), raw_med(r, reps, 6 + k),
               "first launch; baseline: the second");
  }
  for (k = 0; k < (int)N_PROBES; k++) {
    snprintf(metric, sizeof metric, "  bare, first call: %s", probe_what[k]);
    bench_info("firstio", metric, 0, "ms", probe_med(r, reps, k, 0), probe_med(r, reps, k, 1),
               "its own new process; baseline: the second call");
  }
  bench_info("firstio", "  bare, first call: cuMemPoolCreate", 0, "ms", probe_med(r, reps, 1, 2),
             NAN, "its own new process (the pool probe)");
  bench_info("firstio", "  bare: pinned HtoD + DtoH of 1.6 KB + sync, after cuMemHostAlloc", 0,
             "ms", probe_med(r, reps, 4, 2), probe_med(r, reps, 4, 3),
             "first; baseline: the second (the small pinned area's way)");
}

static void report_process(const results *r, int reps) {
  static const char *const parts[] = {"context", "module from the cache", "kernel lookup",
                                      "first In/Out launch", "second In/Out launch"};
  static const int ours[] = {P_CONTEXT, P_MODULE, P_FUNCTION, P_FIRST, P_SECOND};
  static const int theirs[] = {Y_CONTEXT, Y_MODULE, Y_FUNCTION, Y_FIRST, Y_SECOND};
  char metric[96];
  int k;
  if (!r->have_py) {
    bench_info("firstio", "seed-like process: spawn to exit", 0, "ms",
               seed_med(r, W_PAGEABLE, reps, offsetof(seed_run, wall)), NAN,
               "cujit-bench-seed; no PyCUDA beside it (below)");
    bench_skip("firstio", "seed-like process beside PyCUDA", r->py_why);
    return;
  }
  bench_info("firstio", "seed-like process: spawn to exit", 0, "ms",
             seed_med(r, W_PAGEABLE, reps, offsetof(seed_run, wall)), py_med(r, reps, -1),
             "cujit-bench-seed; baseline: PyCUDA (bench/pycuda_seed.py)");
  bench_info("firstio", "  PyCUDA's imports (Python, NumPy, PyCUDA)", 0, "ms", NAN,
             py_med(r, reps, Y_IMPORTS), "baseline: PyCUDA");
  for (k = 0; k < 5; k++) {
    snprintf(metric, sizeof metric, "  %s", parts[k]);
    bench_info("firstio", metric, 0, "ms", SEED_PART(r, W_PAGEABLE, reps, ours[k]),
               py_med(r, reps, theirs[k]), "baseline: PyCUDA");
  }
  bench_info("firstio", "  In/Out launches 3 to 12 (median)", 0, "ms",
             SEED_PART(r, W_PAGEABLE, reps, P_LATER), py_med(r, reps, Y_LATER), "baseline: PyCUDA");
}

void bench_firstio(void) {
  static results r;
  char cache[600], py_cache[600], cubin[700], script[4200];
  const char *py = NULL;
  seed_run warm;
  double v[N_PY], wall;
  int reps = bench_reps(7, 2), round;
  memset(&r, 0, sizeof r);
  snprintf(cubin, sizeof cubin, "%s/seed.cubin", bench_cfg.scratch);
  if (bench_mkdir("firstio-cache", cache, sizeof cache) != 0 ||
      bench_mkdir("pycuda-cache", py_cache, sizeof py_cache) != 0 ||
      bench_write_cubin(bench_src_seed, "seed.cu", cubin) != 0) {
    bench_skip("firstio", "first In/Out launch", "setup failed (see the log)");
    return;
  }
  /* the first run compiles and fills the cache; one more warms the files up */
  if (run_seed("pageable", cache, 0, &warm) != 0 || run_seed("pageable", cache, 0, &warm) != 0) {
    bench_skip("firstio", "first In/Out launch", "cujit-bench-seed failed (see the log)");
    return;
  }
  if (bench_source_file("pycuda_seed.py", script, sizeof script) != 0)
    snprintf(r.py_why, sizeof r.py_why, "bench/pycuda_seed.py is not in the sources");
  else if (run_pycuda(script, py_cache, v, &wall, r.py_why, sizeof r.py_why) == 1 &&
           run_pycuda(script, py_cache, v, &wall, r.py_why, sizeof r.py_why) == 1)
    py = script, r.have_py = 1; /* it compiled (nvcc) and filled its cache */
  for (round = 0; round < reps; round++)
    if (one_round(round, cache, cubin, py, &r) != 0) {
      bench_skip("firstio", "first In/Out launch", "a child process failed (see the log)");
      return;
    }
  report_seed(&r, reps);
  report_bare(&r, reps);
  report_process(&r, reps);
}

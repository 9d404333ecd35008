/* test_nvtx - the NVTX ranges cujit emits, recorded by the tests' own NVTX tool
 * (nvtxrec.c, named in NVTX_INJECTION64_PATH as a profiler names its own) while real work
 * runs: compiles with NVRTC and cache hits from the memory and disk tiers (and the remote
 * tier, --remote, on a Redis server), a compile that bypasses the cache, a link, module
 * loads and In/Out launches on the checking fake driver (tests/fakedriver), array
 * operations, the elementwise, reduction and scan generators, and a batch whose compiles
 * run on threads and in worker processes. Each test checks the names, the domain, which
 * range holds which (a compile inside a cache miss inside the request's compile, the copies
 * of a launch inside that launch) and that every range was closed on the thread that opened
 * it. Ranges are decided once per process, so the other modes are processes of their own:
 *   --off     CUJIT_NVTX=0 with the tool named: the tool is never even loaded;
 *   --none    no tool named: nothing breaks, and no NVTX work is done;
 *   --bad     a tool path that does not load: nothing breaks, no ranges;
 *   --remote  a remote tier's hit and stores (skipped, saying why, without redis-server). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "cujit_array.h"
#include "linktest.h"
#include "nvtxrec.h"
#include "store/store.h"   /* internal: cj_memcache_clear */
#include "worker/worker.h" /* internal: cj_pool_answered, cj_pool_reset */

static nvtxrec_api rec;
static const char *tool; /* NVTX_INJECTION64_PATH */

/* ---- what was recorded ---- */

enum { MAX_RANGES = 4096 };
static nvtxrec_range seen[MAX_RANGES];
static size_t n_seen;

/* Forgets what the tool recorded so far; fails the test when no range ever loaded it. */
static void clear(void) {
  if (!rec.clear && nvtxrec_open(tool, &rec) != 0)
    fail_msg("the NVTX tool %s was never loaded: cujit emitted no range", tool);
  rec.clear();
}

/* Takes the ranges recorded since the last clear. */
static void snapshot(void) {
  size_t i;
  n_seen = rec.count();
  assert_true(n_seen <= MAX_RANGES);
  for (i = 0; i < n_seen; i++) assert_int_equal(rec.get(i, &seen[i]), 0);
}

static void show(void) {
  size_t i;
  for (i = 0; i < n_seen; i++)
    print_message("  %*s%s%s\n", 2 * seen[i].depth, "", seen[i].name,
                  seen[i].closed ? "" : " (open)");
}

/* Every range since the last clear is in the domain "cujit" and closed, and the tool saw no
 * call it should not have. */
static void all_clean(void) {
  char text[4096];
  size_t i;
  unsigned long problems = rec.problems(text, sizeof text);
  if (problems) fail_msg("the tool saw %lu wrong or unexpected calls:\n%s", problems, text);
  for (i = 0; i < n_seen; i++) {
    if (strcmp(seen[i].domain, "cujit") != 0)
      fail_msg("range '%s' is in domain '%s', not cujit", seen[i].name, seen[i].domain);
    if (!seen[i].closed) fail_msg("range '%s' was never closed", seen[i].name);
  }
}

/* The index of the only range of depth 0 named `name`. */
static int top(const char *name) {
  int found = -1;
  size_t i;
  for (i = 0; i < n_seen; i++)
    if (seen[i].depth == 0 && strcmp(seen[i].name, name) == 0) {
      if (found >= 0) fail_msg("two outermost ranges are named '%s'", name);
      found = (int)i;
    }
  if (found < 0) {
    show();
    fail_msg("no outermost range is named '%s'", name);
  }
  return found;
}

static size_t count_tops(void) {
  size_t i, n = 0;
  for (i = 0; i < n_seen; i++) n += seen[i].depth == 0;
  return n;
}

/* The ranges directly inside range `parent`, in order, are exactly `names` (a NULL ends
 * them). Returns the index of the child named `want` (or -1 for NULL). */
static int children(int parent, const char *const *names, const char *want) {
  int at = -1;
  size_t i, k = 0;
  for (i = 0; i < n_seen; i++) {
    if (seen[i].parent != parent) continue;
    if (!names[k] || strcmp(seen[i].name, names[k]) != 0) {
      show();
      fail_msg("range %zu inside '%s' is '%s'; expected '%s'", k + 1, seen[parent].name,
               seen[i].name, names[k] ? names[k] : "(none)");
    }
    if (seen[i].depth != seen[parent].depth + 1 || seen[i].thread != seen[parent].thread)
      fail_msg("'%s' is inside '%s' but not one deeper on its thread", seen[i].name,
               seen[parent].name);
    if (want && strcmp(seen[i].name, want) == 0) at = (int)i;
    k++;
  }
  if (names[k]) {
    show();
    fail_msg("'%s' holds %zu ranges; '%s' is missing", seen[parent].name, k, names[k]);
  }
  return at;
}
#define CHILDREN(parent, want, ...) \
  children((parent), (const char *const[]){__VA_ARGS__, NULL}, (want))

/* Whether range i is inside range `outer` (at any depth). */
static int inside(size_t i, int outer) {
  int p = seen[i].parent;
  while (p >= 0 && p != outer) p = seen[p].parent;
  return p == outer && outer >= 0;
}

/* How many ranges inside `outer` (at any depth; -1: anywhere) have names starting with
 * `prefix`. */
static size_t count_in(int outer, const char *prefix) {
  size_t i, n = 0;
  for (i = 0; i < n_seen; i++)
    if (strncmp(seen[i].name, prefix, strlen(prefix)) == 0 && (outer < 0 || inside(i, outer))) n++;
  return n;
}

/* The cache's ranges are named by registered strings; the others are formatted. */
static void names_registered_as_fixed(void) {
  size_t i;
  for (i = 0; i < n_seen; i++) {
    int fixed = strncmp(seen[i].name, "cujit: cache ", 13) == 0;
    if (seen[i].registered != fixed)
      fail_msg("range '%s' is %s", seen[i].name,
               fixed ? "not a registered string" : "a registered string");
  }
}

/* ---- sources ---- */

static cujit_options opts_for(const char *arch) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = arch;
  return o;
}

/* A kernel no other test compiles (the disk cache lives as long as the process's run). */
static void unique_source(char *out, size_t size, const char *tag) {
  snprintf(out, size,
           "extern \"C\" __global__ void scale(float *x, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) x[i] *= 2.0f;\n"
           "}\n// %s %ld\n",
           tag, (long)getpid());
}

static cujit_module *compile_clean(const char *src, const char *name, const cujit_options *o) {
  cujit_module *m = NULL;
  clear();
  assert_ok(cujit_module_from_source(&m, src, name, o));
  snapshot();
  all_clean();
  return m;
}

/* ---- compiles and the cache's tiers ---- */

static void compiles_say_which_tier_answered(void **state) {
  char src[512];
  cujit_options o = opts_for("sm_90");
  cujit_module *m;
  int c, miss, hit;
  (void)state;
  unique_source(src, sizeof src, "tiers");
  /* a miss: asked of memory, keyed, asked of disk, compiled by NVRTC and stored */
  m = compile_clean(src, "tiers.cu", &o);
  assert_int_equal(count_tops(), 1);
  c = top("cujit: compile tiers.cu");
  miss = CHILDREN(c, "cujit: cache miss", "cujit: cache memory", "cujit: cache key",
                  "cujit: cache disk", "cujit: cache miss");
  CHILDREN(miss, NULL, "cujit: NVRTC tiers.cu", "cujit: cache store memory",
           "cujit: cache store disk");
  names_registered_as_fixed();
  cujit_module_destroy(m);
  /* the memory cache's hit: nothing else asked, nothing compiled */
  m = compile_clean(src, "tiers.cu", &o);
  c = top("cujit: compile tiers.cu");
  hit = CHILDREN(c, "cujit: cache hit memory", "cujit: cache memory", "cujit: cache hit memory");
  CHILDREN(hit, NULL, NULL);
  assert_int_equal(count_in(-1, "cujit: NVRTC"), 0);
  cujit_module_destroy(m);
  /* the disk's hit, put into the memory cache */
  cj_memcache_clear();
  m = compile_clean(src, "tiers.cu", &o);
  c = top("cujit: compile tiers.cu");
  hit = CHILDREN(c, "cujit: cache hit disk", "cujit: cache memory", "cujit: cache key",
                 "cujit: cache disk", "cujit: cache hit disk");
  CHILDREN(hit, NULL, "cujit: cache store memory");
  assert_int_equal(count_in(-1, "cujit: NVRTC"), 0);
  names_registered_as_fixed();
  cujit_module_destroy(m);
  /* fixed names are registered once each, whatever the number of their ranges */
  assert_true(rec.strings() > 0 && rec.strings() <= 12);
  assert_int_equal(rec.domains(), 1);
}

static void uncached_and_failed_compiles(void **state) {
  char src[512];
  cujit_options o = opts_for("sm_90");
  cujit_module *m;
  int c;
  (void)state;
  /* the cache asked to stay out: no tier, NVRTC straight away */
  unique_source(src, sizeof src, "nocache");
  o.flags = CUJIT_OPT_NO_CACHE;
  m = compile_clean(src, "nocache.cu", &o);
  c = top("cujit: compile nocache.cu");
  CHILDREN(c, NULL, "cujit: NVRTC nocache.cu");
  cujit_module_destroy(m);
  /* a source the cache cannot key completely (an #include through a macro it cannot
   * resolve, which the preprocessor then skips): keyed no further, made without the tiers */
  snprintf(src, sizeof src,
           "#if 0\n#include CJ_NOT_DEFINED\n#endif\n__global__ void bypassed(int *p) {}\n"
           "// %ld\n",
           (long)getpid());
  o.flags = 0;
  m = compile_clean(src, "bypassed.cu", &o);
  c = top("cujit: compile bypassed.cu");
  c = CHILDREN(c, "cujit: cache bypassed", "cujit: cache memory", "cujit: cache key",
               "cujit: cache bypassed");
  CHILDREN(c, NULL, "cujit: NVRTC bypassed.cu");
  cujit_module_destroy(m);
  /* a compile that fails: its ranges are closed all the same */
  m = NULL;
  clear();
  assert_int_equal(cujit_module_from_source(&m, "__global__ void broken( {}\n", "broken.cu", &o),
                   CUJIT_ERROR_COMPILE);
  snapshot();
  all_clean();
  assert_int_equal(count_in(top("cujit: compile broken.cu"), "cujit: NVRTC broken.cu"), 1);
}

static void links_show_their_parts_and_nvjitlink(void **state) {
  cujit_link_part parts[2] = {link_source(kLinkMain, "main.cu"), link_source(kLinkLib, "lib.cu")};
  cujit_options o = opts_for(LINK_ARCH);
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  cujit_module *m = NULL;
  int c, miss;
  (void)state;
  l.name = "nvtx_link";
  clear();
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  snapshot();
  all_clean();
  assert_int_equal(count_tops(), 1);
  c = top("cujit: link nvtx_link");
  miss =
      CHILDREN(c, "cujit: cache miss", "cujit: compile main.cu", "cujit: compile lib.cu",
               "cujit: cache memory", "cujit: cache key", "cujit: cache disk", "cujit: cache miss");
  CHILDREN(miss, NULL, "cujit: nvJitLink nvtx_link", "cujit: cache store memory",
           "cujit: cache store disk");
  /* each source compiled through the cache, inside the link */
  assert_int_equal(count_in(c, "cujit: NVRTC main.cu"), 1);
  assert_int_equal(count_in(c, "cujit: NVRTC lib.cu"), 1);
  cujit_module_destroy(m);
  /* linked again: the memory cache's hit, nvJitLink not run */
  clear();
  assert_ok(cujit_module_link(&m, parts, 2, &o, &l));
  snapshot();
  all_clean();
  c = top("cujit: link nvtx_link");
  assert_int_equal(count_in(c, "cujit: nvJitLink"), 0);
  assert_int_equal(count_in(c, "cujit: cache hit memory"), 3);
  cujit_module_destroy(m);
}

/* ---- loads and launches, on the checking fake driver ---- */

static void launches_name_their_kernel_and_copies(void **state) {
  char src[512];
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  float host[64] = {0};
  CUdeviceptr d = 0;
  int l;
  (void)state;
  unique_source(src, sizeof src, "launch");
  assert_ok(cujit_module_from_source(&m, src, "launch.cu", &o));
  clear();
  assert_ok(cujit_module_get_function(m, "scale", &f));
  snapshot();
  all_clean();
  top("cujit: module load launch.cu");
  /* an In/Out launch: the copies inside the launch, each named by the kernel */
  clear();
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(64), cujit_inout(host, sizeof host),
                         cujit_i32(64)));
  snapshot();
  all_clean();
  assert_int_equal(count_tops(), 1);
  l = top("cujit: launch scale");
  CHILDREN(l, NULL, "cujit: copy in scale", "cujit: copy out scale");
  /* a launch of plain values emits no range: the hot path is left as it is */
  assert_ok(cujit_mem_alloc(&d, sizeof host));
  clear();
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(64), cujit_ptr(d), cujit_i32(64)));
  assert_ok(cujit_synchronize());
  snapshot();
  assert_int_equal(n_seen, 0);
  assert_ok(cujit_mem_free(d));
  cujit_module_destroy(m);
}

/* ---- arrays and generators ---- */

static cujit_array *array_of(cujit_type t) {
  double v[256];
  float w[256];
  const void *data = t == CUJIT_TYPE_F32 ? (const void *)w : (const void *)v;
  int64_t n = 256;
  cujit_array *a = NULL;
  int i;
  for (i = 0; i < 256; i++) v[i] = w[i] = (float)i;
  assert_ok(cujit_array_from_host(&a, t, 1, &n, data));
  return a;
}

/* Runs `call` (a status) with a clean record and checks that it made one outermost range,
 * named `name`, with (compiled 1) or without (0) a compile inside it. */
#define OPERATION(name, compiled, call)                                 \
  do {                                                                  \
    int op_;                                                            \
    clear();                                                            \
    assert_ok(call);                                                    \
    snapshot();                                                         \
    all_clean();                                                        \
    assert_int_equal(count_tops(), 1);                                  \
    op_ = top(name);                                                    \
    assert_int_equal(count_in(op_, "cujit: compile ") > 0, (compiled)); \
    assert_int_equal(count_in(op_, "cujit: NVRTC ") > 0, (compiled));   \
  } while (0)

static void array_operations_are_named_by_operation_and_type(void **state) {
  cujit_array *x = array_of(CUJIT_TYPE_F32), *y = array_of(CUJIT_TYPE_F64), *r = NULL, *idx = NULL;
  (void)state;
  /* the first call compiles its kernel inside the operation's range; the next does not */
  OPERATION("cujit: add f32", 1, cujit_array_binary(CUJIT_BINOP_ADD, x, x, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: add f32", 0, cujit_array_binary(CUJIT_BINOP_ADD, x, x, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: multiply f32 f64", 1, cujit_array_binary(CUJIT_BINOP_MUL, x, y, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: subtract f32", 1, cujit_array_binary_scalar(CUJIT_BINOP_SUB, x, 1.0, 0, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: sqrt f64", 1, cujit_array_unary(CUJIT_UNOP_SQRT, y, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: map f32", 1,
            cujit_array_map(&r, "a * a + 1", 1, (const char *const[]){"a"},
                            (const cujit_array *const[]){x}));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: where f32 f64", 1, cujit_array_where(x, cujit_arr(x), cujit_arr(y), &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: sum f32", 1, cujit_array_reduce(CUJIT_REDOP_SUM, x, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: argmax f64 i64", 1, cujit_array_reduce(CUJIT_REDOP_ARGMAX, y, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: dot f32", 1, cujit_array_dot(x, x, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: cumsum f32", 1, cujit_array_cumsum(x, 0, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: astype f32 f64", 1, cujit_array_astype(x, CUJIT_TYPE_F64, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: copy f64", 0, cujit_array_copy(y, &r)); /* contiguous: the driver copies */
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_arange(&idx, CUJIT_TYPE_I64, 0, 10, 1));
  OPERATION("cujit: take f64", 1, cujit_array_take(y, idx, CUJIT_INDEX_CLIP, &r));
  cujit_array_destroy(r), r = NULL;
  cujit_array_destroy(idx);
  OPERATION("cujit: concatenate f32", 0,
            cujit_array_concatenate(2, (const cujit_array *const[]){x, x}, &r));
  cujit_array_destroy(r), r = NULL;
  OPERATION("cujit: random f32", 1,
            cujit_array_random(&r, CUJIT_TYPE_F32, 1, (const int64_t[]){64}, CUJIT_RANDOM_UNIFORM,
                               7));
  cujit_array_destroy(r), r = NULL;
  /* an operation that is no cujit_binop is refused, its range named without reading past
   * the table of names */
  clear();
  assert_int_equal(cujit_array_binary((cujit_binop)1000, x, x, &r), CUJIT_ERROR_INVALID_VALUE);
  snapshot();
  all_clean();
  top("cujit: op f32");
  cujit_array_destroy(x);
  cujit_array_destroy(y);
}

static void generator_calls_are_named_by_their_kernel(void **state) {
  cujit_generator_options g = CUJIT_GENERATOR_OPTIONS_INIT;
  cujit_array *x = array_of(CUJIT_TYPE_F32), *r = NULL;
  cujit_elementwise *e = NULL;
  cujit_reduction *red = NULL;
  cujit_scan *s = NULL;
  (void)state;
  g.name = "nvtx_twice";
  assert_ok(cujit_elementwise_create(&e, "float *x", "x[i] = 2 * x[i]", &g));
  OPERATION("cujit: elementwise nvtx_twice", 1, CUJIT_ELEMENTWISE(e, cujit_arr(x)));
  OPERATION("cujit: elementwise nvtx_twice", 0, CUJIT_ELEMENTWISE(e, cujit_arr(x)));
  g.name = "nvtx_norm";
  assert_ok(cujit_reduction_create(&red, CUJIT_TYPE_F32, "0", "a + b", "x[i] * x[i]",
                                   "const float *x", &g));
  OPERATION("cujit: reduction nvtx_norm", 1, CUJIT_REDUCTION(red, &r, cujit_arr(x)));
  cujit_array_destroy(r), r = NULL;
  g.name = "nvtx_prefix";
  assert_ok(cujit_scan_create(&s, CUJIT_TYPE_F32, "a + b", "0", 0, &g));
  OPERATION("cujit: scan nvtx_prefix", 1, cujit_scan_call(s, x, &r));
  cujit_array_destroy(r);
  cujit_scan_destroy(s);
  cujit_reduction_destroy(red);
  cujit_elementwise_destroy(e);
  cujit_array_destroy(x);
}

/* ---- compiles on threads and in worker processes ---- */

/* About a tenth of a second of NVRTC's time: compiles started together overlap, so that
 * some go to a worker. */
static char *busy_source(int tag) {
  char *s = malloc(2048);
  snprintf(s, 2048,
           "template <int N> __global__ void busy%d(float *x) {\n"
           "#pragma unroll\n"
           "  for (int k = 0; k < N * 64; k++) x[k %% 7] = x[(k * 3) %% 5] * 1.5f + k;\n"
           "}\n"
           "template __global__ void busy%d<8>(float *);\n"
           "template __global__ void busy%d<9>(float *);\n// %ld\n",
           tag, tag, tag, (long)getpid());
  return s;
}

static void worker_compiles_show_on_their_threads(void **state) {
  enum { N = 4 };
  char *src[N], names[N][16], want[64];
  const char *name_of[N];
  cujit_module *mods[N];
  cujit_options o = opts_for("sm_90");
  unsigned long me = (unsigned long)syscall(SYS_gettid);
  uint64_t answered;
  size_t i, workers;
  int k;
  (void)state;
  cj_pool_reset();
  cujit_compile_set_jobs(2);
  answered = cj_pool_answered();
  for (k = 0; k < N; k++) {
    src[k] = busy_source(k);
    snprintf(names[k], sizeof names[k], "busy%d.cu", k);
    name_of[k] = names[k];
  }
  clear();
  assert_ok(cujit_batch_compile(mods, NULL, (const char *const *)src, name_of, N, &o));
  snapshot();
  all_clean();
  workers = count_in(-1, "cujit: worker compile ");
  print_message("workers answered %zu of %d compiles\n", workers, N);
  assert_int_equal(workers, cj_pool_answered() - answered);
  for (k = 0; k < N; k++) {
    int c;
    snprintf(want, sizeof want, "cujit: compile %s", names[k]);
    c = top(want); /* on a runner thread: nothing of the caller's holds it */
    assert_true(seen[c].thread != me);
    /* NVRTC ran here, or a worker compiled it: one of the two, inside the cache's miss */
    snprintf(want, sizeof want, "cujit: NVRTC %s", names[k]);
    i = count_in(c, want);
    snprintf(want, sizeof want, "cujit: worker compile %s", names[k]);
    assert_int_equal(i + count_in(c, want), 1);
    assert_int_equal(count_in(c, "cujit: cache miss"), 1);
  }
  for (k = 0; k < N; k++) {
    cujit_module_destroy(mods[k]);
    free(src[k]);
  }
  cj_pool_reset();
  cujit_compile_set_jobs(0);
}

/* ---- the remote tier (--remote) ---- */

static pid_t redis_pid = -1;
static char redis_url[128];

static int find_program(const char *name, char *out, size_t size) {
  const char *path = getenv("PATH");
  char dirs[8192], *dir, *save = NULL;
  snprintf(dirs, sizeof dirs, "%s:/usr/bin:/usr/sbin:/usr/local/bin", path ? path : "");
  for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(out, size, "%s/%s", dir, name);
    if (access(out, X_OK) == 0) return 1;
  }
  return 0;
}

static int port_answers(int port) {
  struct sockaddr_in a;
  int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

/* Starts redis-server on a port of 127.0.0.1 that nothing answers on: 0, or -1. */
static int start_redis(const char *bin) {
  struct timespec nap = {0, 20000000L};
  char port_text[16], *dir = test_tempdir("nvtx-redis");
  int port, tries;
  srand((unsigned)getpid());
  for (port = 0, tries = 0; tries < 50 && !port; tries++) {
    port = 20000 + rand() % 20000;
    if (port_answers(port)) port = 0;
  }
  if (!port || !dir) return -1;
  snprintf(port_text, sizeof port_text, "%d", port);
  if ((redis_pid = fork()) == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
    if (!freopen("/dev/null", "w", stdout) || chdir(dir) != 0) _exit(126);
    execl(bin, "redis-server", "--bind", "127.0.0.1", "--port", port_text, "--save", "",
          "--appendonly", "no", "--dir", dir, (char *)NULL);
    _exit(127);
  }
  free(dir);
  for (tries = 0; tries < 500 && redis_pid > 0; tries++, nanosleep(&nap, NULL))
    if (port_answers(port)) {
      snprintf(redis_url, sizeof redis_url, "redis://127.0.0.1:%d/0", port);
      return 0;
    }
  return -1;
}

static void stop_redis(void) {
  if (redis_pid > 0) {
    kill(redis_pid, SIGKILL);
    waitpid(redis_pid, NULL, 0);
  }
  redis_pid = -1;
}

static void remote_hits_and_stores_show(void **state) {
  char src[512];
  cujit_options o = opts_for("sm_90");
  cujit_module *m;
  int c, at;
  (void)state;
  assert_ok(cujit_cache_set_remote(redis_url));
  unique_source(src, sizeof src, "remote");
  /* a miss everywhere: stored in every tier, the remote one too */
  m = compile_clean(src, "remote.cu", &o);
  c = top("cujit: compile remote.cu");
  at = CHILDREN(c, "cujit: cache miss", "cujit: cache memory", "cujit: cache key",
                "cujit: cache disk", "cujit: cache remote", "cujit: cache miss");
  CHILDREN(at, NULL, "cujit: NVRTC remote.cu", "cujit: cache store memory",
           "cujit: cache store disk", "cujit: cache store remote");
  cujit_module_destroy(m);
  /* this machine's tiers emptied: the remote tier answers, and its entry is put into the
   * nearer ones */
  assert_ok(cujit_cache_clear());
  m = compile_clean(src, "remote.cu", &o);
  c = top("cujit: compile remote.cu");
  at = CHILDREN(c, "cujit: cache hit remote", "cujit: cache memory", "cujit: cache key",
                "cujit: cache disk", "cujit: cache remote", "cujit: cache hit remote");
  CHILDREN(at, NULL, "cujit: cache store memory", "cujit: cache store disk");
  assert_int_equal(count_in(-1, "cujit: NVRTC"), 0);
  names_registered_as_fixed();
  cujit_module_destroy(m);
  assert_ok(cujit_cache_set_remote(""));
}

/* ---- with no ranges: the same work, nothing recorded ---- */

static char log_text[1 << 15];
static void keep_log(cujit_log_level level, const char *line, void *user) {
  size_t n = strlen(log_text);
  (void)level, (void)user;
  snprintf(log_text + n, sizeof log_text - n, "%s\n", line);
}

/* A compile, a load, an In/Out launch and an array operation, all of which succeed. */
static void some_work(void) {
  char src[512];
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_array *x = array_of(CUJIT_TYPE_F32), *r = NULL;
  float host[64] = {0};
  unique_source(src, sizeof src, "quiet");
  assert_ok(cujit_module_from_source(&m, src, "quiet.cu", &o));
  assert_ok(cujit_module_get_function(m, "scale", &f));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(64), cujit_inout(host, sizeof host),
                         cujit_i32(64)));
  assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, x, x, &r));
  cujit_array_destroy(r);
  cujit_array_destroy(x);
  cujit_module_destroy(m);
}

static void nothing_is_emitted_when_off(void **state) {
  (void)state;
  log_text[0] = '\0';
  cujit_log_set_callback(keep_log, NULL);
  cujit_log_set_level(CUJIT_LOG_DEBUG);
  some_work();
  cujit_log_set_level(CUJIT_LOG_OFF);
  cujit_log_set_callback(NULL, NULL);
  /* the tool named in NVTX_INJECTION64_PATH (when it is) was never loaded: NVTX never ran */
  if (tool) assert_int_equal(nvtxrec_open(tool, &rec), -1);
  if (!strstr(log_text, "NVTX ranges off: "))
    fail_msg("the log does not say that ranges are off:\n%s", log_text);
  print_message("%s", strstr(log_text, "NVTX ranges off: "));
}

static void nothing_breaks_with_a_tool_that_does_not_load(void **state) {
  nothing_is_emitted_when_off(state);
  assert_non_null(strstr(log_text, "NVTX ranges off: no NVTX tool is attached"));
}

/* ---- the groups ---- */

static int on_fake_driver(void **state) {
  int n = 0;
  (void)state;
  return cujit_device_get_count(&n) == CUJIT_OK && n >= 1 ? 0 : -1;
}

static int with_tool(void **state) {
  (void)state;
  if (on_fake_driver(state) != 0) return -1;
  tool = getenv("NVTX_INJECTION64_PATH");
  if (!tool) return -1;
  /* the tool is loaded by the first range (of the first test) */
  return 0;
}

/* Loads the tool: the first range of the process makes NVTX load it. */
static void tool_is_loaded_by_the_first_range(void **state) {
  char src[512];
  cujit_options o = opts_for("sm_90");
  cujit_module *m = NULL;
  (void)state;
  unique_source(src, sizeof src, "first");
  assert_int_equal(nvtxrec_open(tool, &rec), -1); /* nothing of NVTX ran yet */
  assert_ok(cujit_module_from_source(&m, src, "first.cu", &o));
  assert_int_equal(nvtxrec_open(tool, &rec), 0);
  snapshot();
  all_clean();
  top("cujit: compile first.cu");
  assert_int_equal(rec.domains(), 1);
  cujit_module_destroy(m);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  const struct CMUnitTest traced[] = {
      cmocka_unit_test(tool_is_loaded_by_the_first_range),
      cmocka_unit_test(compiles_say_which_tier_answered),
      cmocka_unit_test(uncached_and_failed_compiles),
      cmocka_unit_test(links_show_their_parts_and_nvjitlink),
      cmocka_unit_test(launches_name_their_kernel_and_copies),
      cmocka_unit_test(array_operations_are_named_by_operation_and_type),
      cmocka_unit_test(generator_calls_are_named_by_their_kernel),
      cmocka_unit_test(worker_compiles_show_on_their_threads),
  };
  const struct CMUnitTest remote[] = {
      cmocka_unit_test(tool_is_loaded_by_the_first_range),
      cmocka_unit_test(remote_hits_and_stores_show),
  };
  const struct CMUnitTest off[] = {cmocka_unit_test(nothing_is_emitted_when_off)};
  const struct CMUnitTest bad[] = {cmocka_unit_test(nothing_breaks_with_a_tool_that_does_not_load)};
  char bin[4096];
  int failed;
  if (strcmp(mode, "--off") == 0 || strcmp(mode, "--none") == 0) {
    tool = getenv("NVTX_INJECTION64_PATH");
    return cmocka_run_group_tests_name(mode + 2, off, on_fake_driver, NULL);
  }
  if (strcmp(mode, "--bad") == 0) {
    tool = NULL; /* a path that does not load: nothing to open */
    return cmocka_run_group_tests_name("bad", bad, on_fake_driver, NULL);
  }
  if (strcmp(mode, "--remote") == 0) {
    if (!find_program("redis-server", bin, sizeof bin)) {
      printf("SKIP: no redis-server on PATH (apt-get install redis-server) for the remote tier\n");
      return TEST_SKIP_CODE;
    }
    if (start_redis(bin) != 0) {
      stop_redis();
      printf("SKIP: redis-server did not start on 127.0.0.1\n");
      return TEST_SKIP_CODE;
    }
    failed = cmocka_run_group_tests_name("remote", remote, with_tool, NULL);
    stop_redis();
    return failed;
  }
  return cmocka_run_group_tests_name("nvtx", traced, with_tool, NULL);
}

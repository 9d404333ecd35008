/* test_early_context - the device's context started beside a process's first compile, on
 * the checking fake driver (CUJIT_LIBCUDA, two devices), which can be made to take longer
 * to make a primary context (CHECKDRIVER_CONTEXT_DELAY_MS) or to fail making one
 * (CHECKDRIVER_RETAIN_FAIL), and says how many were asked for and which thread made one.
 * Each case runs in a process of its own (this program, run again with the case's name):
 * the early context is started at most once per process. Every compile's source is new
 * (a number of the case's own in it), so that it misses the cache, except where a hit is
 * the point. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "testutil.h"

#define DELAY_MS "300"

/* ---- in the child ---- */

static const char *libcuda(void) { return getenv("CUJIT_LIBCUDA"); }

/* The fake driver's counters (the library cujit loaded; NULL-safe before it is). */
static unsigned long retains(void) {
  void *h = libcuda() ? dlopen(libcuda(), RTLD_NOW | RTLD_NOLOAD) : NULL;
  unsigned long (*fn)(void) =
      h ? (unsigned long (*)(void))dlsym(h, "checkdriver_primary_retains") : NULL;
  unsigned long n = fn ? fn() : 0;
  if (h) dlclose(h);
  return n;
}

static long maker(void) {
  void *h = libcuda() ? dlopen(libcuda(), RTLD_NOW | RTLD_NOLOAD) : NULL;
  long (*fn)(void) = h ? (long (*)(void))dlsym(h, "checkdriver_primary_maker") : NULL;
  long t = fn ? fn() : 0;
  if (h) dlclose(h);
  return t;
}

static long my_tid(void) { return (long)syscall(SYS_gettid); }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, ms % 1000 * 1000000L};
  nanosleep(&t, NULL);
}

#define CHECK(cond, ...)                                \
  do {                                                  \
    if (!(cond)) {                                      \
      printf("%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                              \
      printf("\n");                                     \
      return 1;                                         \
    }                                                   \
  } while (0)

#define CHECK_OK(st) CHECK((st) == CUJIT_OK, "%s: %s", cujit_status_name(st), cujit_last_error())

/* A kernel source no earlier process compiled (unless `fixed`). */
static const char *source(int fixed) {
  static char text[256];
  snprintf(text, sizeof text, "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = %ld; }\n",
           fixed ? 7L : (long)getpid() * 1000 + (long)(now_s() * 1e3) % 1000);
  return text;
}

static cujit_status compile(cujit_module **m, int fixed, unsigned flags) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.flags = flags;
  return cujit_module_from_source(m, source(fixed), "early.cu", &o);
}

/* Polls (without a cujit call) until the fake driver has been asked for a primary context,
 * for at most 20 s. */
static int wait_for_retain(void) {
  double give_up = now_s() + 20;
  while (retains() == 0 && now_s() < give_up) nap_ms(2);
  return retains() > 0;
}

/* The module's kernel launched once and waited for: a context is current then. */
static cujit_status launch(cujit_module *m) {
  cujit_function *f = NULL;
  cujit_status st = cujit_module_get_function(m, "k", &f);
  CUdeviceptr d = 0;
  if (st != CUJIT_OK) return st;
  if ((st = cujit_mem_alloc(&d, 32 * 4)) != CUJIT_OK) return st;
  st = CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_ptr(d));
  if (st == CUJIT_OK) st = cujit_synchronize();
  cujit_mem_free(d);
  return st;
}

typedef struct raised {
  int count;
  cujit_status status;
  char call[64];
} raised;

static void on_error(cujit_status st, const char *call, const char *detail, void *user) {
  raised *r = user;
  (void)detail;
  r->count++;
  r->status = st;
  snprintf(r->call, sizeof r->call, "%s", call);
}

/* A miss starts the context on another thread while this one compiles; the first call
 * that needs it waits for it and uses it: one context, asked for once, made by that
 * thread. */
static int case_overlap(void) {
  cujit_module *m = NULL;
  CUcontext cur = NULL;
  CUresult (*get_current)(CUcontext *);
  CUresult (*get_state)(CUdevice, unsigned *, int *);
  unsigned flags;
  int active = 0;
  double t0 = now_s(), t1, t2;
  CHECK_OK(compile(&m, 0, 0));
  t1 = now_s();
  CHECK(wait_for_retain(), "no primary context was asked for after the compile");
  CHECK_OK(launch(m));
  t2 = now_s();
  CHECK(retains() == 1, "%lu primary contexts asked for, not 1", retains());
  CHECK(maker() != 0 && maker() != my_tid(), "the context was made on the compiling thread");
  CHECK_OK(cujit_driver_get_symbol("cuCtxGetCurrent", (void **)&get_current));
  CHECK_OK(cujit_driver_get_symbol("cuDevicePrimaryCtxGetState", (void **)&get_state));
  CHECK(get_current(&cur) == CUDA_SUCCESS && cur, "no context current after the launch");
  CHECK(get_state(0, &flags, &active) == CUDA_SUCCESS && active, "device 0's is not active");
  printf("compile %.0f ms, then launch done %.0f ms later (a context takes " DELAY_MS " ms)\n",
         (t1 - t0) * 1e3, (t2 - t1) * 1e3);
  cujit_module_destroy(m);
  return 0;
}

/* No early context: after a cache hit, with the flag, with CUJIT_EARLY_CONTEXT=0, or for
 * a batch: the context is made by the first call that needs it, on its own thread. */
static int case_not_started(unsigned flags, int fixed) {
  cujit_module *m = NULL;
  if (flags == 1u) { /* a batch of one source */
    const char *src[1];
    src[0] = source(fixed);
    CHECK_OK(cujit_batch_compile(&m, NULL, src, NULL, 1, NULL));
  } else {
    CHECK_OK(compile(&m, fixed, flags));
  }
  CHECK(retains() == 0, "a primary context was asked for by the compile");
  CHECK_OK(launch(m));
  CHECK(retains() == 1, "%lu primary contexts asked for, not 1", retains());
  CHECK(maker() == my_tid(), "the context was not made by the call that needed it");
  cujit_module_destroy(m);
  return 0;
}

/* A thread with a context of its own current: none is made, its own is used. */
typedef CUresult (*ctx_create_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);

static int case_own_context(void) {
  ctx_create_fn create;
  CUresult (*get_current)(CUcontext *);
  cujit_module *m = NULL;
  CUcontext mine = NULL, cur = NULL;
  CHECK_OK(cujit_driver_get_symbol("cuCtxCreate", (void **)&create));
  CHECK_OK(cujit_driver_get_symbol("cuCtxGetCurrent", (void **)&get_current));
  CHECK(create(&mine, NULL, 0, 1) == CUDA_SUCCESS, "cuCtxCreate failed");
  CHECK_OK(compile(&m, 0, 0));
  CHECK_OK(launch(m));
  CHECK(retains() == 0, "%lu primary contexts asked for, not 0", retains());
  CHECK(get_current(&cur) == CUDA_SUCCESS && cur == mine, "the program's context is not current");
  cujit_module_destroy(m);
  return 0;
}

/* The early context is made, then the program makes a context of its own current before
 * its first launch: the early one is released (device 0's primary context is no longer
 * active), and the program's is used. */
static int case_unused(void) {
  ctx_create_fn create;
  CUresult (*get_state)(CUdevice, unsigned *, int *);
  cujit_module *m = NULL;
  CUcontext mine = NULL;
  unsigned flags;
  int active = 0;
  double give_up = now_s() + 20;
  CHECK_OK(compile(&m, 0, 0));
  CHECK(wait_for_retain(), "no primary context was asked for after the compile");
  CHECK_OK(cujit_driver_get_symbol("cuDevicePrimaryCtxGetState", (void **)&get_state));
  while (now_s() < give_up && get_state(0, &flags, &active) == CUDA_SUCCESS && !active) nap_ms(2);
  CHECK(active, "device 0's primary context was never made");
  CHECK_OK(cujit_driver_get_symbol("cuCtxCreate", (void **)&create));
  CHECK(create(&mine, NULL, 0, 1) == CUDA_SUCCESS, "cuCtxCreate failed");
  CHECK_OK(launch(m));
  CHECK(get_state(0, &flags, &active) == CUDA_SUCCESS && !active,
        "the unused early context is still active");
  cujit_module_destroy(m);
  return 0;
}

/* Failures come from the call that needs the context, with the status and message it
 * gives without an early start, through the error handler once; the compile succeeds and
 * raises nothing. */
static int case_failure(cujit_status want, const char *needle, unsigned long want_retains) {
  raised r = {0, CUJIT_OK, ""};
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_status st;
  cujit_error_set_handler(on_error, &r);
  CHECK_OK(compile(&m, 0, 0));
  CHECK(r.count == 0, "the compile raised %s", cujit_status_name(r.status));
  nap_ms(50); /* the early thread, when one runs, has time to fail */
  st = cujit_module_get_function(m, "k", &f);
  CHECK(st == want, "%s, not %s: %s", cujit_status_name(st), cujit_status_name(want),
        cujit_last_error());
  CHECK(strstr(cujit_last_error(), needle), "the detail lacks '%s': %s", needle,
        cujit_last_error());
  CHECK(r.count == 1 && r.status == want && strcmp(r.call, "cujit_module_get_function") == 0,
        "the handler saw %d calls, the last %s from %s", r.count, cujit_status_name(r.status),
        r.call);
  CHECK(retains() == want_retains, "%lu primary contexts asked for, not %lu", retains(),
        want_retains);
  printf("%s\n", cujit_last_error());
  cujit_module_destroy(m);
  return 0;
}

/* fork() while the context is being made: the fork waits for it (the child's copy of the
 * fake driver already records the context made: the thread ended before the fork, rather
 * than the fork giving up on it); the child compiles (without calling the driver: that
 * would be a use after cuInit the fake flags) and ends well; the parent launches. */
static int case_fork(void) {
  cujit_module *m = NULL;
  pid_t pid;
  int status = 0;
  CHECK_OK(compile(&m, 0, 0));
  CHECK(wait_for_retain(), "no primary context was asked for after the compile");
  pid = fork();
  CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    cujit_module *c = NULL;
    alarm(60);
    if (maker() == 0) _exit(4);
    _exit(compile(&c, 0, CUJIT_OPT_NO_EARLY_CONTEXT) == CUJIT_OK ? 0 : 3);
  }
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child ended with status %d%s", status,
        WIFEXITED(status) && WEXITSTATUS(status) == 4
            ? " (the fork went on before the context was made)"
            : "");
  CHECK_OK(launch(m));
  CHECK(retains() == 1, "%lu primary contexts asked for, not 1", retains());
  cujit_module_destroy(m);
  return 0;
}

/* Run by exit() after cujit's own exit function (registered before the compile, so it runs
 * after): the context started beside the compile is made by then, not left half made while
 * exit() goes on to the driver's destructors. */
static void exit_finds_the_context_made(void) {
  CUresult (*get_state)(CUdevice, unsigned *, int *) = NULL;
  unsigned flags;
  int active = 0;
  if (cujit_driver_get_symbol("cuDevicePrimaryCtxGetState", (void **)&get_state) != CUJIT_OK ||
      get_state(0, &flags, &active) != CUDA_SUCCESS || !active) {
    printf("exit() went on while the context was being made\n");
    fflush(stdout);
    _exit(4);
  }
}

/* A program that compiles and returns from main at once. */
static int case_exit(void) {
  cujit_module *m = NULL;
  atexit(exit_finds_the_context_made);
  CHECK_OK(compile(&m, 0, 0));
  CHECK(wait_for_retain(), "no primary context was asked for after the compile");
  cujit_module_destroy(m);
  return 0; /* exit(), with the context still being made for DELAY_MS */
}

static int run_case(const char *name) {
  if (strcmp(name, "overlap") == 0) return case_overlap();
  if (strcmp(name, "fill") == 0) { /* for "hit": the fixed source into the disk cache */
    cujit_module *m = NULL;
    CHECK_OK(compile(&m, 1, CUJIT_OPT_NO_EARLY_CONTEXT));
    cujit_module_destroy(m);
    return 0;
  }
  if (strcmp(name, "hit") == 0) return case_not_started(0, 1);
  if (strcmp(name, "flag") == 0) return case_not_started(CUJIT_OPT_NO_EARLY_CONTEXT, 0);
  if (strcmp(name, "env-off") == 0) return case_not_started(0, 0);
  if (strcmp(name, "batch") == 0) return case_not_started(1u, 0);
  if (strcmp(name, "own-context") == 0) return case_own_context();
  if (strcmp(name, "unused") == 0) return case_unused();
  if (strcmp(name, "no-driver") == 0)
    return case_failure(CUJIT_ERROR_NO_DRIVER, "no CUDA driver found", 0);
  if (strcmp(name, "no-device") == 0)
    return case_failure(CUJIT_ERROR_NO_DEVICE, "CUJIT_DEVICE=5 but there are 2 CUDA devices", 0);
  if (strcmp(name, "retain-fails") == 0)
    return case_failure(CUJIT_ERROR_DEVICE_MEMORY,
                        "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY", 2);
  if (strcmp(name, "fork") == 0) return case_fork();
  if (strcmp(name, "exit") == 0) return case_exit();
  printf("no case '%s'\n", name);
  return 2;
}

/* ---- in the test ---- */

/* Runs this program on case `name` with `env` added; fails the test with its output
 * unless it exits 0. */
static void run(const char *name, const char *env) {
  char self[1024], cmd[2400], out[16384];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  int rc;
  assert_true(n > 0);
  self[n] = '\0';
  snprintf(cmd, sizeof cmd, "env %s '%s' --case %s 2>&1", env, self, name);
  rc = test_capture(cmd, out, sizeof out);
  if (rc != 0) fail_msg("case %s (%s) exited %d:\n%s", name, env, rc, out);
  printf("%s: %s", name, out[0] ? out : "ok\n");
}

static void context_made_beside_the_compile(void **state) {
  (void)state;
  run("overlap", "CHECKDRIVER_CONTEXT_DELAY_MS=" DELAY_MS);
}

static void context_not_started_where_not_wanted(void **state) {
  (void)state;
  run("fill", "");
  run("hit", "");
  run("flag", "");
  run("env-off", "CUJIT_EARLY_CONTEXT=0");
  run("batch", "");
}

static void programs_own_context_is_left_alone(void **state) {
  (void)state;
  run("own-context", "");
  run("unused", "");
}

static void failures_come_from_the_call_that_needs_the_context(void **state) {
  (void)state;
  run("no-driver", "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1");
  run("no-device", "CUJIT_DEVICE=5");
  run("retain-fails", "CHECKDRIVER_RETAIN_FAIL=2"); /* CUDA_ERROR_OUT_OF_MEMORY */
}

static void fork_and_exit_wait_for_the_context(void **state) {
  (void)state;
  run("fork", "CHECKDRIVER_CONTEXT_DELAY_MS=" DELAY_MS);
  run("exit", "CHECKDRIVER_CONTEXT_DELAY_MS=" DELAY_MS);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(context_made_beside_the_compile),
      cmocka_unit_test(context_not_started_where_not_wanted),
      cmocka_unit_test(programs_own_context_is_left_alone),
      cmocka_unit_test(failures_come_from_the_call_that_needs_the_context),
      cmocka_unit_test(fork_and_exit_wait_for_the_context),
  };
  if (argc == 3 && strcmp(argv[1], "--case") == 0) return run_case(argv[2]);
  if (!getenv("CUJIT_LIBCUDA")) {
    printf("SKIP: CUJIT_LIBCUDA does not name the checking fake driver\n");
    return TEST_SKIP_CODE;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}

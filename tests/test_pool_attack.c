/* test_pool_attack - the worker pool against a hostile or broken worker program: only a
 * program that this user or root owns, in a directory no one else may write, is ever run
 * (found beside a library loaded by a relative path after the program changed
 * directory, named by a relative or others-writable CUJIT_WORKER); and a worker that takes
 * a request and then hangs or is stopped holds up its compile no longer than a compile in
 * this process would take (its time limit, its cancel), or not at all.
 *
 * This test binary is also the hung worker: started as `--serve` (the worker's
 * arguments) with CUJIT_TEST_WORKER set, it reads a request and then never answers. */
#include <signal.h>

#include "cachetest.h"

#define WATCHDOG_S 15 /* far beyond every wait here: only a wait without end reaches it */

/* ---- the hung worker ---- */

static int hung_worker(const char *mode) {
  unsigned char head[20];
  size_t got = 0;
  while (got < sizeof head) {
    ssize_t k = read(0, head + got, sizeof head - got);
    if (k <= 0) return 1;
    got += (size_t)k;
  }
  if (strcmp(mode, "stop") == 0) raise(SIGSTOP);
  for (;;) pause();
}

/* ---- holding this process's compile slot ---- */

static int holding, released;

/* The cancel hook of the job that holds the slot: at NVRTC's first check it waits until
 * released, so that every compile started meanwhile must go to a worker. */
static int hold_here(void *user) {
  (void)user;
  __atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) cj_nap(0.005);
  return 0;
}

static double now(void) { return cj_now_s(); }

static cujit_options ptx_opts(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "compute_80";
  return o;
}

/* A small kernel of its own for each tag. */
static void small_source(const char *tag, char *out, size_t size) {
  snprintf(out, size, "__global__ void k_%s(int *x) { x[threadIdx.x] = 7; }\n", tag);
}

/* Starts the job that holds the slot here (a source not compiled before: a cache hit asks
 * no hook), and waits until it does. */
static cujit_compile_job *hold_slot(void) {
  static int holders;
  char src[128], tag[32];
  cujit_compile_job *j = NULL;
  cujit_options o = ptx_opts();
  double t0 = now();
  __atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&released, 0, __ATOMIC_RELAXED);
  snprintf(tag, sizeof tag, "holder%d", holders++);
  small_source(tag, src, sizeof src);
  o.cancel = hold_here;
  assert_ok(cujit_compile_job_start(&j, src, "holder.cu", &o));
  while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE) && now() - t0 < WATCHDOG_S) cj_nap(0.002);
  assert_true(__atomic_load_n(&holding, __ATOMIC_ACQUIRE));
  return j;
}

static void release_slot(cujit_compile_job *j) {
  cujit_module *m = NULL;
  __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
  assert_ok(cujit_compile_job_wait(j, &m));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "k_holder"));
  cujit_module_destroy(m);
  cujit_compile_job_destroy(j);
}

/* 1 once the log holds `needle`, waiting for it up to WATCHDOG_S. */
static int logged_soon(const char *needle) {
  double t0 = now();
  for (;;) {
    int found;
    pthread_mutex_lock(&log_mu);
    found = strstr(log_text, needle) != NULL;
    pthread_mutex_unlock(&log_mu);
    if (found || now() - t0 > WATCHDOG_S) return found;
    cj_nap(0.005);
  }
}

/* ---- a watchdog for waits that would have no end ---- */

static int watch_done, watch_fired;

/* Past WATCHDOG_S, kills every worker and releases the slot, so that a wait without end
 * fails its test instead of hanging the group. */
static void *watchdog(void *arg) {
  double t0 = now();
  (void)arg;
  while (!__atomic_load_n(&watch_done, __ATOMIC_ACQUIRE)) {
    if (now() - t0 > WATCHDOG_S) {
      int pids[16], n = cj_pool_workers(pids, NULL, 16), i;
      for (i = 0; i < n && i < 16; i++) kill(pids[i], SIGKILL);
      __atomic_store_n(&watch_fired, 1, __ATOMIC_RELEASE);
      __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
      return NULL;
    }
    cj_nap(0.02);
  }
  return NULL;
}

static pthread_t watch_start(void) {
  pthread_t t;
  watch_done = watch_fired = 0;
  assert_int_equal(pthread_create(&t, NULL, watchdog, NULL), 0);
  return t;
}

static void watch_stop(pthread_t t) {
  __atomic_store_n(&watch_done, 1, __ATOMIC_RELEASE);
  pthread_join(t, NULL);
  if (watch_fired)
    fail_msg("a wait had no end: the watchdog killed the workers after %d s", WATCHDOG_S);
}

/* Waits up to WATCHDOG_S for a worker to be busy; its pid. */
static int busy_worker(void) {
  double t0 = now();
  while (now() - t0 < WATCHDOG_S) {
    int pids[8], busy[8], n = cj_pool_workers(pids, busy, 8), i;
    for (i = 0; i < n && i < 8; i++)
      if (busy[i]) return pids[i];
    cj_nap(0.002);
  }
  return -1;
}

/* ---- fixture: two compiles at once, the worker program found afresh ---- */

static char self[4096], start_dir[4096];

static int pool_setup(void **state) {
  unsetenv("CUJIT_WORKER");
  unsetenv("CUJIT_TEST_WORKER");
  cj_pool_reset();
  cujit_compile_set_jobs(2);
  return cache_setup(state);
}

static int pool_teardown(void **state) {
  if (chdir(start_dir) != 0) return -1; /* a test that failed midway may have left it */
  unsetenv("CUJIT_WORKER");
  unsetenv("CUJIT_TEST_WORKER");
  cj_pool_reset();
  cujit_compile_set_jobs(0);
  return cache_teardown(state);
}

#define POOL_TEST(fn) cmocka_unit_test_setup_teardown(fn, pool_setup, pool_teardown)

/* ---- which program runs ---- */

/* A worker program at dir[/sub]/cujit-worker that records that it ran (in dir/ran) and
 * exits. The caller frees the path. */
static char *planted_worker(const char *dir, const char *sub) {
  char *path = malloc(4200), at[4200], script[4400];
  snprintf(at, sizeof at, "%s%s%s", dir, sub[0] ? "/" : "", sub);
  if (sub[0]) assert_int_equal(mkdir(at, 0755), 0);
  snprintf(script, sizeof script, "#!/bin/sh\necho ran >> '%s/ran'\nexit 1\n", dir);
  assert_int_equal(test_write_file(at, "cujit-worker", script), 0);
  snprintf(path, 4200, "%s/cujit-worker", at);
  assert_int_equal(chmod(path, 0755), 0);
  return path;
}

static int ran(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ran", dir);
  return access(path, F_OK) == 0;
}

/* With the slot here held, compiles a new source that must therefore look for a worker,
 * waits until the log says `why`, and checks that the source still compiled (here). */
static void compile_needing_a_worker(const char *why) {
  static int compiles;
  char src[128], tag[32];
  cujit_compile_job *holder = hold_slot(), *j = NULL;
  cujit_module *m = NULL;
  cujit_options o = ptx_opts();
  snprintf(tag, sizeof tag, "needs_worker%d", compiles++);
  small_source(tag, src, sizeof src);
  assert_ok(cujit_compile_job_start(&j, src, "b.cu", &o));
  if (!logged_soon(why)) {
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    fail_msg("log lacks \"%s\":\n%s", why, log_text);
  }
  release_slot(holder);
  assert_ok(cujit_compile_job_wait(j, &m));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), tag));
  cujit_module_destroy(m);
  cujit_compile_job_destroy(j);
}

/* A library loaded by a relative path, by a program that then moves into a directory
 * holding a cujit-worker at that relative place: the one beside the library runs (the
 * helper checks that a worker started and the batch compiled), the planted one never. */
static void a_relatively_loaded_library_runs_no_planted_worker(void **state) {
  char *dir = test_tempdir("planted"), cmd[8400], out[8192];
  char libdir[4096], *slash;
  int rc;
  (void)state;
  assert_non_null(dir);
  snprintf(libdir, sizeof libdir, "%s", CUJIT_LIB_PATH);
  assert_non_null(slash = strrchr(libdir, '/'));
  *slash = '\0';
  assert_non_null(slash = strrchr(libdir, '/'));
  free(planted_worker(dir, slash + 1)); /* dir/lib/cujit-worker, as build/lib/ is */
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 2>&1", CUJIT_RELATIVE_LOADER, CUJIT_LIB_PATH, dir);
  rc = test_capture(cmd, out, sizeof out);
  if (rc != 0) fail_msg("the helper failed (%d):\n%s", rc, out);
  assert_false(ran(dir));
  test_rmtree(dir);
  free(dir);
}

/* CUJIT_WORKER naming a program that others may write, or in a directory its group may
 * write: not run, with a warning saying what was refused. */
static void a_worker_others_may_write_is_not_run(void **state) {
  char *dir = test_tempdir("writable"), *path, sub[4200];
  (void)state;
  log_capture(CUJIT_LOG_WARN);
  path = planted_worker(dir, "");
  assert_int_equal(chmod(path, 0757), 0);
  setenv("CUJIT_WORKER", path, 1);
  cj_pool_reset();
  compile_needing_a_worker("others may write to it");
  assert_logged("(CUJIT_WORKER) is not run");
  assert_false(ran(dir));
  free(path);
  path = planted_worker(dir, "shared");
  snprintf(sub, sizeof sub, "%s/shared", dir);
  assert_int_equal(chmod(sub, 0775), 0);
  setenv("CUJIT_WORKER", path, 1);
  cj_pool_reset();
  log_capture(CUJIT_LOG_WARN);
  compile_needing_a_worker("its group may write to it");
  assert_logged("its directory");
  assert_false(ran(dir));
  free(path);
  test_rmtree(dir);
  free(dir);
}

/* Another user's program (only root can make one here: skipped otherwise). */
static void another_users_worker_is_not_run(void **state) {
  char *dir, *path;
  (void)state;
  if (geteuid() != 0) skip(); /* chown to another user needs root */
  dir = test_tempdir("foreign");
  path = planted_worker(dir, "");
  assert_int_equal(chown(path, 65534, 65534), 0);
  log_capture(CUJIT_LOG_WARN);
  setenv("CUJIT_WORKER", path, 1);
  cj_pool_reset();
  compile_needing_a_worker("it belongs to another user");
  assert_false(ran(dir));
  free(path);
  test_rmtree(dir);
  free(dir);
}

/* A relative CUJIT_WORKER, with that file in the working directory: refused by name. */
static void a_relative_worker_path_is_refused(void **state) {
  char *dir = test_tempdir("relworker"), cwd[4096];
  (void)state;
  free(planted_worker(dir, ""));
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(dir), 0);
  log_capture(CUJIT_LOG_WARN);
  setenv("CUJIT_WORKER", "cujit-worker", 1);
  cj_pool_reset();
  compile_needing_a_worker("CUJIT_WORKER is 'cujit-worker', which is not an absolute path");
  assert_int_equal(chdir(cwd), 0);
  assert_false(ran(dir));
  test_rmtree(dir);
  free(dir);
}

/* ---- workers that take a request and never answer ---- */

/* A compile sent to a worker that hangs (or stops) once it has the request: this test
 * binary as the worker, the slot here held, and the watchdog running. */
typedef struct scene {
  cujit_compile_job *holder, *job;
  pthread_t watch;
} scene;

static void start_on_hung_worker(scene *sc, const char *mode, const char *tag,
                                 const cujit_options *o) {
  char src[128];
  setenv("CUJIT_WORKER", self, 1);
  setenv("CUJIT_TEST_WORKER", mode, 1);
  cj_pool_reset();
  log_capture(CUJIT_LOG_INFO);
  sc->holder = hold_slot();
  sc->watch = watch_start();
  small_source(tag, src, sizeof src);
  assert_ok(cujit_compile_job_start(&sc->job, src, "b.cu", o));
}

/* Waits for the job, which must fail with `want` (its detail holding `needle`). */
static void fails_with(scene *sc, cujit_status want, const char *needle) {
  cujit_module *m = NULL;
  assert_status_detail(cujit_compile_job_wait(sc->job, &m), want, needle);
  assert_null(m);
  watch_stop(sc->watch);
  assert_logged("did not stop compiling 'b.cu'");
  cujit_compile_job_destroy(sc->job);
  release_slot(sc->holder);
}

/* A time limit ends the wait for a hung worker as it ends a compile here: the compile is
 * CUJIT_ERROR_CANCELLED, saying the limit passed, and the worker is killed. */
static void a_hung_worker_meets_the_time_limit(void **state) {
  cujit_options o = ptx_opts();
  scene sc;
  (void)state;
  o.time_limit_s = 1;
  start_on_hung_worker(&sc, "hang", "limited", &o);
  fails_with(&sc, CUJIT_ERROR_CANCELLED,
             "compiling 'b.cu' was stopped: its time limit of 1 s passed");
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 0); /* killed */
  assert_int_equal(find_entries(cache, NULL, 0), 1);   /* the holder's alone */
}

/* cujit_compile_job_cancel() ends the wait for a hung worker. */
static void a_cancelled_job_on_a_hung_worker_ends(void **state) {
  cujit_options o = ptx_opts();
  scene sc;
  (void)state;
  start_on_hung_worker(&sc, "hang", "cancelled", &o);
  assert_true(busy_worker() > 0);
  cujit_compile_job_cancel(sc.job);
  fails_with(&sc, CUJIT_ERROR_CANCELLED,
             "compiling 'b.cu' was cancelled by cujit_compile_job_cancel()");
}

/* A worker stopped (SIGSTOP) after taking a request, with no limit and no cancel: it is
 * seen to be stopped and killed, and the compile is done here. */
static void a_stopped_worker_is_not_waited_for(void **state) {
  cujit_options o = ptx_opts();
  cujit_module *m = NULL;
  scene sc;
  int found;
  (void)state;
  start_on_hung_worker(&sc, "stop", "stopped", &o);
  /* compiled here once the slot is free: free it once the worker was given up */
  found = logged_soon("stopped or answered something else while compiling 'b.cu'");
  release_slot(sc.holder);
  assert_ok(cujit_compile_job_wait(sc.job, &m));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), "k_stopped"));
  watch_stop(sc.watch);
  assert_true(found);
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 0);
  cujit_module_destroy(m);
  cujit_compile_job_destroy(sc.job);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      POOL_TEST(a_relatively_loaded_library_runs_no_planted_worker),
      POOL_TEST(a_worker_others_may_write_is_not_run),
      POOL_TEST(another_users_worker_is_not_run),
      POOL_TEST(a_relative_worker_path_is_refused),
      POOL_TEST(a_hung_worker_meets_the_time_limit),
      POOL_TEST(a_cancelled_job_on_a_hung_worker_ends),
      POOL_TEST(a_stopped_worker_is_not_waited_for),
  };
  const char *mode = getenv("CUJIT_TEST_WORKER");
  ssize_t n;
  if (argc == 2 && strcmp(argv[1], "--serve") == 0 && mode) return hung_worker(mode);
  if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0 ||
      !getcwd(start_dir, sizeof start_dir))
    return 1;
  self[n] = '\0';
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_batch - many kernels at once: cujit_batch_compile and the asynchronous compile
 * (start, poll, wait, cancel), the worker processes behind them (a dead, missing or lying
 * worker fails nothing), repeats compiled once, herds across processes compiled once per
 * key, and the request's bytes (compile/wire.c) read back as they were written. Every
 * module is checked on the CPU: its PTX holds its own kernel.
 *
 * The workers are build/bin/cujit-worker, found beside this test binary. */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <signal.h>
#include <time.h>

#include "cachetest.h"

/* PTX for compute_80, with every field of this version's options (time limit, cancel). */
static cujit_options ptx_opts(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "compute_80";
  return o;
}

/* A kernel of its own per i: `add<i>` adding i. */
static char *kernel_source(int i) {
  char *s = malloc(256);
  snprintf(s, 256, "__global__ void add%d(float *x) { x[threadIdx.x] += %d.0f; }\n", i, i);
  return s;
}

/* The mangled name of add<i>(float *) as PTX spells it. */
static void kernel_symbol(int i, char *out, size_t size) {
  snprintf(out, size, "_Z%zuadd%dPf", strlen("add") + (i < 10 ? 1 : 2), i);
}

static void assert_module_has(const cujit_module *m, int i) {
  char sym[64];
  assert_non_null(m);
  kernel_symbol(i, sym, sizeof sym);
  if (!strstr(cujit_module_ptx(m, NULL), sym))
    fail_msg("module %d lacks %s:\n%s", i, sym, cujit_module_ptx(m, NULL));
}

/* Slow to optimise (a loop of math calls unrolled `n` times), cheap to parse. `tag` makes
 * each one a different kernel. */
static char *unrolled_source(int tag, int n) {
  char *s = malloc(1024);
  snprintf(s, 1024,
           "template <int N> __global__ void heavy%d(float *x) {\n"
           "  float a = x[threadIdx.x], b = x[threadIdx.x + 1];\n"
           "#pragma unroll\n"
           "  for (int i = 0; i < N; i++) {\n"
           "    a = sinf(a * b + i) + cosf(b - a * i);\n"
           "    b = expf(a * 0.001f) * b + (float)i;\n"
           "  }\n"
           "  x[threadIdx.x] = a + b;\n"
           "}\n"
           "template __global__ void heavy%d<%d>(float *);\n"
           "template __global__ void heavy%d<%d>(float *);\n",
           tag, tag, n, tag, n + 1);
  return s;
}

/* About a second, with many of NVRTC's checks, so that it can be stopped or its worker
 * killed midway. */
static char *heavy_source(int tag) { return unrolled_source(tag, 60); }

/* A tenth of a second or so: long enough that compiles started together overlap (the slot
 * here is still busy when the next one starts, so it goes to a worker), short enough not
 * to cost the suite seconds where being stopped midway is not the point. */
static char *busy_source(int tag) { return unrolled_source(tag, 8); }

static uint64_t compiles_so_far(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  assert_ok(cujit_cache_get_stats(&s));
  return s.compiles;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Each test starts with two compiles at once (one here, one in a worker) and the worker
 * program found afresh. */
static int batch_setup(void **state) {
  unsetenv("CUJIT_WORKER");
  cj_pool_reset();
  cujit_compile_set_jobs(2);
  return cache_setup(state);
}

static int batch_teardown(void **state) {
  cj_pool_reset();
  cujit_compile_set_jobs(0);
  return cache_teardown(state);
}

#define BATCH_TEST(fn) cmocka_unit_test_setup_teardown(fn, batch_setup, batch_teardown)

/* ---- batches ---- */

#define N 6

static void a_batch_compiles_every_source(void **state) {
  char *src[N];
  const char *names[N];
  char name_store[N][32];
  cujit_module *mods[N];
  cujit_status st[N];
  cujit_options o = ptx_opts();
  uint64_t before = compiles_so_far(), answered = cj_pool_answered();
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    src[i] = kernel_source(i);
    snprintf(name_store[i], sizeof name_store[i], "k%d.cu", i);
    names[i] = name_store[i];
  }
  assert_ok(cujit_batch_compile(mods, st, (const char *const *)src, names, N, &o));
  for (i = 0; i < N; i++) {
    assert_int_equal(st[i], CUJIT_OK);
    assert_module_has(mods[i], i);
    assert_string_equal(cujit_module_name(mods[i]), names[i]);
    assert_string_equal(cujit_module_arch(mods[i]), "compute_80");
  }
  assert_int_equal(compiles_so_far() - before, N);
  print_message("workers answered %llu of %d compiles\n",
                (unsigned long long)(cj_pool_answered() - answered), N);
  assert_true(cj_pool_workers(NULL, NULL, 0) <= 1); /* two at once: one here, one worker */
  /* all cached: the same batch again compiles nothing, and each is the module that
   * cujit_module_from_source() finds */
  for (i = 0; i < N; i++) cujit_module_destroy(mods[i]);
  before = compiles_so_far();
  assert_ok(cujit_batch_compile(mods, NULL, (const char *const *)src, names, N, &o));
  assert_int_equal(compiles_so_far() - before, 0);
  assert_int_equal(find_entries(cache, NULL, 0), N);
  for (i = 0; i < N; i++) {
    cujit_module *m = NULL;
    assert_ok(cujit_module_from_source(&m, src[i], names[i], &o));
    assert_string_equal(cujit_module_ptx(m, NULL), cujit_module_ptx(mods[i], NULL));
    cujit_module_destroy(m);
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
  assert_int_equal(compiles_so_far() - before, 0);
}

static void workers_compile_beside_this_process(void **state) {
  char *src[4];
  cujit_module *mods[4];
  cujit_options o = ptx_opts();
  uint64_t answered = cj_pool_answered(), programs = cj_nvrtc_programs_created();
  int i;
  (void)state;
  for (i = 0; i < 4; i++) src[i] = busy_source(i);
  assert_ok(cujit_batch_compile(mods, NULL, (const char *const *)src, NULL, 4, &o));
  for (i = 0; i < 4; i++) {
    char sym[32];
    snprintf(sym, sizeof sym, "heavy%d", i);
    assert_non_null(strstr(cujit_module_ptx(mods[i], NULL), sym));
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
  /* the compiles overlap: the worker took some, this process the rest */
  assert_true(cj_pool_answered() - answered >= 1);
  assert_int_equal(cj_pool_answered() - answered + cj_nvrtc_programs_created() - programs, 4);
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 1);
}

/* Workers compile with this process's NVRTC even when the environment changed after this
 * process found it (the cache key names that one), and hold none of its descriptors. */
static void workers_use_this_process_nvrtc_and_no_descriptors(void **state) {
  char *src[4], fdpath[64], link[256];
  cujit_module *mods[4];
  cujit_status st[4];
  cujit_options o = ptx_opts();
  uint64_t answered = cj_pool_answered();
  int pipefd[2], pids[8], n, i, k;
  (void)state;
  assert_int_equal(pipe(pipefd), 0); /* not close-on-exec */
  setenv("CUJIT_NVRTC", "/nonexistent/libnvrtc.so", 1);
  for (i = 0; i < 4; i++) src[i] = busy_source(40 + i);
  assert_ok(cujit_batch_compile(mods, st, (const char *const *)src, NULL, 4, &o));
  unsetenv("CUJIT_NVRTC");
  assert_true(cj_pool_answered() - answered >= 1); /* a worker compiled some */
  n = cj_pool_workers(pids, NULL, 8);
  assert_true(n >= 1);
  for (k = 0; k < n; k++)
    for (i = 3; i < 64; i++) {
      ssize_t len;
      snprintf(fdpath, sizeof fdpath, "/proc/%d/fd/%d", pids[k], i);
      if ((len = readlink(fdpath, link, sizeof link - 1)) < 0) continue;
      link[len] = '\0';
      if (strncmp(link, "pipe:", 5) == 0) fail_msg("worker %d holds %s as fd %d", pids[k], link, i);
    }
  for (i = 0; i < 4; i++) {
    assert_int_equal(st[i], CUJIT_OK);
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
  close(pipefd[0]);
  close(pipefd[1]);
}

/* A worker says nothing about the environment: the library that started it read the same
 * and said what was wrong with it (CUJIT_ERRORS's warning is given whatever the log's
 * level). */
static void workers_do_not_warn_about_the_environment(void **state) {
  char *src[4], path[4200], said[4096] = "";
  cujit_module *mods[4];
  cujit_options o = ptx_opts();
  uint64_t answered = cj_pool_answered();
  int saved = dup(2), fd, i;
  ssize_t n;
  (void)state;
  snprintf(path, sizeof path, "%s/cujit-stderr-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  fd = mkstemp(path);
  assert_true(saved >= 0 && fd >= 0);
  unlink(path);
  setenv("CUJIT_ERRORS", "bogus", 1);
  fflush(stderr);
  dup2(fd, 2);
  for (i = 0; i < 4; i++) src[i] = busy_source(60 + i);
  assert_ok(cujit_batch_compile(mods, NULL, (const char *const *)src, NULL, 4, &o));
  cj_pool_reset(); /* the workers have ended, with all they wrote */
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("CUJIT_ERRORS");
  n = pread(fd, said, sizeof said - 1, 0);
  close(fd);
  assert_true(n >= 0);
  assert_true(cj_pool_answered() - answered >= 1); /* a worker compiled some */
  if (strstr(said, "CUJIT_ERRORS")) fail_msg("a worker warned: %s", said);
  for (i = 0; i < 4; i++) {
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
}

static void a_compile_error_fails_only_its_source(void **state) {
  const char *src[3] = {KERNEL, "__global__ void broken(float *x) { x[0] = undefined_name; }\n",
                        "__global__ void fine(int *y) { y[0] = 1; }\n"};
  const char *names[3] = {"good.cu", "bad.cu", NULL};
  cujit_module *mods[3];
  cujit_status st[3];
  cujit_options o = ptx_opts();
  (void)state;
  assert_status_detail(cujit_batch_compile(mods, st, src, names, 3, &o), CUJIT_ERROR_COMPILE,
                       "1 of 3 sources did not compile");
  assert_non_null(strstr(cujit_last_error(), "source 1 ('bad.cu'): CUJIT_ERROR_COMPILE"));
  assert_non_null(strstr(cujit_last_error(), "undefined_name")); /* NVRTC's log */
  assert_int_equal(st[0], CUJIT_OK);
  assert_int_equal(st[1], CUJIT_ERROR_COMPILE);
  assert_int_equal(st[2], CUJIT_OK);
  assert_non_null(strstr(cujit_module_ptx(mods[0], NULL), "scale"));
  assert_null(mods[1]);
  assert_string_equal(cujit_module_name(mods[2]), "source.cu");
  assert_non_null(strstr(cujit_module_ptx(mods[2], NULL), "fine"));
  cujit_module_destroy(mods[0]);
  cujit_module_destroy(mods[2]);
}

static void repeats_are_compiled_once(void **state) {
  char *a = kernel_source(1), *b = kernel_source(2);
  const char *src[5] = {a, b, a, a, b};
  const char *names[5] = {"a.cu", "b.cu", "a.cu", "a.cu", "other.cu"};
  cujit_module *mods[5];
  cujit_options o = ptx_opts();
  uint64_t before = compiles_so_far();
  int i;
  (void)state;
  assert_ok(cujit_batch_compile(mods, NULL, src, names, 5, &o));
  assert_int_equal(compiles_so_far() - before, 3); /* b as other.cu is another program */
  assert_module_has(mods[2], 1);
  assert_module_has(mods[3], 1);
  assert_module_has(mods[4], 2);
  assert_string_equal(cujit_module_name(mods[4]), "other.cu");
  for (i = 0; i < 5; i++) cujit_module_destroy(mods[i]);
  /* with the caches off as well */
  o.flags = CUJIT_OPT_NO_CACHE;
  before = compiles_so_far();
  assert_ok(cujit_batch_compile(mods, NULL, src, names, 4, &o));
  assert_int_equal(compiles_so_far() - before, 2);
  assert_module_has(mods[3], 1);
  /* a repeat's module is a module of its own: exporting it works as for the first */
  {
    void *blob = NULL;
    size_t size = 0;
    o.flags = 0;
    for (i = 0; i < 4; i++) cujit_module_destroy(mods[i]);
    assert_ok(cujit_batch_compile(mods, NULL, src, names, 3, &o));
    assert_ok(cujit_module_export(mods[2], &blob, &size));
    assert_true(size > 0);
    cujit_free(blob);
    for (i = 0; i < 3; i++) cujit_module_destroy(mods[i]);
  }
  free(a);
  free(b);
}

static void one_source_compiles_here(void **state) {
  char *s = kernel_source(7);
  cujit_module *m = NULL;
  cujit_compile_job *job = NULL;
  cujit_options o = ptx_opts();
  uint64_t answered = cj_pool_answered(), programs = cj_nvrtc_programs_created();
  (void)state;
  assert_ok(cujit_batch_compile(&m, NULL, (const char *const *)&s, NULL, 1, &o));
  assert_module_has(m, 7);
  cujit_module_destroy(m);
  o.flags = CUJIT_OPT_NO_CACHE; /* a job alone: compiled here too */
  assert_ok(cujit_compile_job_start(&job, s, NULL, &o));
  assert_ok(cujit_compile_job_wait(job, &m));
  assert_module_has(m, 7);
  cujit_module_destroy(m);
  cujit_compile_job_destroy(job);
  assert_int_equal(cj_nvrtc_programs_created() - programs, 2);
  assert_int_equal(cj_pool_answered() - answered, 0);
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 0); /* none was started */
  free(s);
}

/* ---- asynchronous compiles ---- */

static void a_job_is_started_polled_and_waited_for(void **state) {
  char *s = kernel_source(3);
  cujit_compile_job *job = NULL, *bad = NULL;
  cujit_module *m = NULL;
  cujit_options o = ptx_opts();
  double t0 = now();
  (void)state;
  assert_ok(cujit_compile_job_start(&job, s, "three.cu", &o));
  free(s); /* the job keeps its own copy */
  while (!cujit_compile_job_poll(job)) {
    assert_true(now() - t0 < 120);
    cj_nap(0.005);
  }
  assert_string_equal(cujit_compile_job_error(job), "");
  assert_ok(cujit_compile_job_wait(job, &m));
  assert_module_has(m, 3);
  assert_string_equal(cujit_module_name(m), "three.cu");
  cujit_module_destroy(m);
  assert_status_detail(cujit_compile_job_wait(job, &m), CUJIT_ERROR_INVALID_VALUE,
                       "handed over by an earlier wait");
  assert_null(m);
  cujit_compile_job_destroy(job);
  /* a failing job: its wait gives the compile's status and detail, and so does the job */
  assert_ok(cujit_compile_job_start(&bad, "__global__ void k() { nope(); }\n", "nope.cu", &o));
  assert_status_detail(cujit_compile_job_wait(bad, &m), CUJIT_ERROR_COMPILE, "nope.cu");
  assert_non_null(strstr(cujit_last_error(), "nope"));
  assert_string_equal(cujit_compile_job_error(bad), cujit_last_error());
  assert_null(m);
  assert_int_equal(cujit_compile_job_poll(bad), 1);
  cujit_compile_job_destroy(bad);
}

static void a_job_that_is_never_waited_for_is_freed(void **state) {
  char *s = kernel_source(4);
  cujit_compile_job *job = NULL;
  cujit_options o = ptx_opts();
  (void)state;
  assert_ok(cujit_compile_job_start(&job, s, NULL, &o));
  cujit_compile_job_destroy(job); /* cancelled or finished: either way freed */
  cujit_compile_job_destroy(NULL);
  free(s);
}

static void a_job_is_cancelled(void **state) {
  char *a = heavy_source(10), *b = heavy_source(11);
  cujit_compile_job *ja = NULL, *jb = NULL;
  cujit_module *m = NULL;
  cujit_options o = ptx_opts();
  (void)state;
  cujit_compile_set_jobs(1); /* one at a time: b waits behind a */
  assert_ok(cujit_compile_job_start(&ja, a, "a.cu", &o));
  assert_ok(cujit_compile_job_start(&jb, b, "b.cu", &o));
  cujit_compile_job_cancel(jb);
  cj_nap(0.1);
  cujit_compile_job_cancel(ja);
  assert_status_detail(cujit_compile_job_wait(ja, &m), CUJIT_ERROR_CANCELLED,
                       "compiling 'a.cu' was cancelled by cujit_compile_job_cancel()");
  assert_null(m);
  assert_status_detail(cujit_compile_job_wait(jb, &m), CUJIT_ERROR_CANCELLED,
                       "cancelled by cujit_compile_job_cancel() before it started");
  cujit_compile_job_destroy(ja);
  cujit_compile_job_destroy(jb);
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  free(a);
  free(b);
}

static int stop_now(void *user) {
  (void)user;
  return 1;
}

static void a_cancel_hook_stops_a_job_in_a_worker(void **state) {
  char *a = heavy_source(20), *b = heavy_source(21);
  const char *src[2];
  cujit_module *mods[2];
  cujit_status st[2];
  cujit_options o = ptx_opts();
  (void)state;
  src[0] = a;
  src[1] = b;
  o.cancel = stop_now;
  assert_int_equal(cujit_batch_compile(mods, st, src, NULL, 2, &o), CUJIT_ERROR_CANCELLED);
  assert_int_equal(st[0], CUJIT_ERROR_CANCELLED);
  assert_int_equal(st[1], CUJIT_ERROR_CANCELLED);
  assert_null(mods[0]);
  assert_null(mods[1]);
  assert_non_null(strstr(cujit_last_error(), "2 of 2 sources did not compile"));
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  free(a);
  free(b);
}

/* ---- workers that fail ---- */

/* Waits up to a minute for a worker to be busy; its pid. */
static int busy_worker(void) {
  double t0 = now();
  while (now() - t0 < 60) {
    int pids[8], busy[8], n = cj_pool_workers(pids, busy, 8), i;
    for (i = 0; i < n && i < 8; i++)
      if (busy[i]) return pids[i];
    cj_nap(0.002);
  }
  return -1;
}

static void a_killed_worker_fails_nothing(void **state) {
  char *a = heavy_source(30), *b = heavy_source(31);
  cujit_compile_job *ja = NULL, *jb = NULL;
  cujit_module *ma = NULL, *mb = NULL;
  cujit_options o = ptx_opts();
  int pid;
  (void)state;
  log_capture(CUJIT_LOG_INFO);
  assert_ok(cujit_compile_job_start(&ja, a, "a.cu", &o));
  assert_ok(cujit_compile_job_start(&jb, b, "b.cu", &o));
  pid = busy_worker();
  assert_true(pid > 0);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_ok(cujit_compile_job_wait(ja, &ma));
  assert_ok(cujit_compile_job_wait(jb, &mb));
  assert_non_null(strstr(cujit_module_ptx(ma, NULL), "heavy30"));
  assert_non_null(strstr(cujit_module_ptx(mb, NULL), "heavy31"));
  assert_logged("stopped or answered something else while compiling");
  assert_logged("compiling it here");
  assert_int_equal(find_entries(cache, NULL, 0), 2);
  cujit_module_destroy(ma);
  cujit_module_destroy(mb);
  cujit_compile_job_destroy(ja);
  cujit_compile_job_destroy(jb);
  free(a);
  free(b);
}

static void run_batch_of_busy(int first) {
  char *src[3];
  cujit_module *mods[3];
  cujit_options o = ptx_opts();
  int i;
  for (i = 0; i < 3; i++) src[i] = busy_source(first + i);
  assert_ok(cujit_batch_compile(mods, NULL, (const char *const *)src, NULL, 3, &o));
  for (i = 0; i < 3; i++) {
    char sym[32];
    snprintf(sym, sizeof sym, "heavy%d", first + i);
    assert_non_null(strstr(cujit_module_ptx(mods[i], NULL), sym));
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
}

static void a_missing_worker_program_falls_back(void **state) {
  uint64_t answered = cj_pool_answered();
  (void)state;
  log_capture(CUJIT_LOG_INFO);
  setenv("CUJIT_WORKER", "/nonexistent/cujit-worker", 1);
  cj_pool_reset();
  run_batch_of_busy(40);
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 0);
  assert_int_equal(cj_pool_answered() - answered, 0);
  assert_logged("no compile worker program at '/nonexistent/cujit-worker' (CUJIT_WORKER)");
  unsetenv("CUJIT_WORKER");
}

/* A worker program that answers garbage (a shell script), or dies at once: every compile
 * is done here, and the log says `logged`. */
static void worker_that_lies(const char *script, const char *why, const char *logged) {
  char *dir = test_tempdir("liar"), path[4200];
  FILE *f;
  uint64_t answered = cj_pool_answered();
  snprintf(path, sizeof path, "%s/liar", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(script, f);
  fclose(f);
  assert_int_equal(chmod(path, 0700), 0);
  log_capture(CUJIT_LOG_INFO);
  setenv("CUJIT_WORKER", path, 1);
  cj_pool_reset();
  run_batch_of_busy(why[0] == 'g' ? 50 : 60);
  assert_int_equal(cj_pool_answered() - answered, 0);
  assert_logged(logged);
  unsetenv("CUJIT_WORKER");
  cj_pool_reset();
  test_rmtree(dir);
  free(dir);
}

/* This library's worker as far as the greeting goes (it reads the library's and answers
 * with this version's), and then garbage to a request. */
static void a_worker_answering_garbage_fails_nothing(void **state) {
  char script[1024];
  (void)state;
  snprintf(script, sizeof script,
           "#!/bin/sh\nhead -c 20 >/dev/null\nhead -c %zu >/dev/null\n"
           "printf 'cjwh\\001\\000\\000\\000\\000\\000\\000\\000\\%03zo\\000\\000\\000\\000"
           "\\000\\000\\000%s' >&0\n"
           "head -c 20 >/dev/null\nprintf 'cjwr0123456789abcdefghijklmnopqrstuvwxyz' >&0\n"
           "cat >/dev/null\n",
           strlen(CUJIT_PROJECT_VERSION), strlen(CUJIT_PROJECT_VERSION), CUJIT_PROJECT_VERSION);
  worker_that_lies(script, "garbage", "stopped or answered something else while compiling");
}

/* A program that exits at once is no worker: refused at the greeting, and not started
 * again. */
static void a_worker_dying_at_once_fails_nothing(void **state) {
  (void)state;
  worker_that_lies("#!/bin/sh\nexit 3\n", "dies",
                   "is not used: it exited without answering the greeting");
}

/* ---- herds across processes ---- */

/* In a child: waits for the gate, compiles the busy batch starting at `first`; exit
 * status 100 + the compiles it ran. */
static int child_batch(const char *arg) {
  char *src[3];
  cujit_module *mods[3];
  cujit_options o = ptx_opts();
  uint64_t before;
  int i, first = atoi(arg);
  cujit_compile_set_jobs(2);
  for (i = 0; i < 3; i++) src[i] = busy_source(first + i);
  child_wait_gate();
  before = compiles_so_far();
  if (cujit_batch_compile(mods, NULL, (const char *const *)src, NULL, 3, &o) != CUJIT_OK) {
    fprintf(stderr, "child: %s\n", cujit_last_error());
    for (i = 0; i < 3; i++) free(src[i]);
    return 1;
  }
  for (i = 0; i < 3; i++) {
    cujit_module_destroy(mods[i]);
    free(src[i]);
  }
  return 100 + (int)(compiles_so_far() - before);
}

static void a_herd_across_processes_compiles_each_key_once(void **state) {
  enum { PROCS = 3 };
  int gate[2], i, total = 0;
  pid_t pids[PROCS];
  (void)state;
  assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
  for (i = 0; i < PROCS; i++) assert_true((pids[i] = spawn_child("batch", "70", gate[0])) > 0);
  close(gate[0]);
  close(gate[1]);
  for (i = 0; i < PROCS; i++) {
    int st = wait_child(pids[i]);
    assert_true(st >= 100 && st <= 103);
    total += st - 100;
  }
  assert_int_equal(total, 3); /* three keys, each compiled by one process */
  assert_int_equal(find_entries(cache, NULL, 0), 3);
}

/* ---- the request's bytes ---- */

static void a_request_reads_back_as_written(void **state) {
  static const char *const inc[] = {"/inc/a", "rel/b", NULL};
  static const char *const defs[] = {"N=3", "FAST", NULL};
  static const char *const opts[] = {"-std=c++17", NULL};
  static const char *const names[] = {"f<int>", NULL};
  static const cujit_header hdrs[] = {{"h.h", "#define H 1\n"}, {NULL, NULL}};
  cujit_options o = CUJIT_OPTIONS_INIT;
  cj_request r, back;
  cj_buf b = {0};
  size_t cut;
  (void)state;
  o.arch = "compute_80";
  o.include_dirs = inc;
  o.defines = defs;
  o.nvrtc_options = opts;
  o.name_expressions = names;
  o.headers = hdrs;
  o.flags = CUJIT_OPT_NO_TOOLKIT_INCLUDES;
  o.time_limit_s = 2.5;
  assert_ok(cj_request_init(&r, KERNEL, "w.cu", &o, "/first"));
  assert_int_equal(cj_request_encode(&r, &b), 0);
  assert_int_equal(cj_request_decode(b.data, b.len, &back), 0);
  assert_string_equal(back.source, KERNEL);
  assert_int_equal(back.source_len, strlen(KERNEL));
  assert_string_equal(back.name, "w.cu");
  assert_string_equal(back.arch, r.arch);
  assert_int_equal(back.arch_pending, r.arch_pending);
  assert_string_equal(back.first_include_dir, "/first");
  assert_int_equal(back.n_include_dirs, 2);
  assert_string_equal(back.include_dirs[1], "rel/b");
  assert_null(back.include_dirs[2]);
  assert_int_equal(back.n_defines, 2);
  assert_string_equal(back.defines[0], "N=3");
  assert_string_equal(back.user_options[0], "-std=c++17");
  assert_string_equal(back.name_exprs[0], "f<int>");
  assert_int_equal(back.n_headers, 1);
  assert_string_equal(back.headers[0].source, "#define H 1\n");
  assert_null(back.headers[1].name);
  assert_int_equal(back.toolkit, 0);
  assert_int_equal(back.flags, CUJIT_OPT_NO_TOOLKIT_INCLUDES);
  assert_true(back.time_limit_s == 2.5);
  /* the same keys: what the worker compiles is what the caller asked for */
  {
    cj_key k1, k2;
    assert_ok(cj_key_request(&r, &k1));
    assert_ok(cj_key_request(&back, &k2));
    assert_memory_equal(k1.b, k2.b, sizeof k1.b);
  }
  cj_request_decoded_free(&back);
  /* every shorter prefix, and a byte more, is refused, never read past */
  for (cut = 0; cut < b.len; cut++) {
    char *copy = malloc(cut + 1);
    memcpy(copy, b.data, cut);
    assert_int_equal(cj_request_decode(copy, cut, &back), 1);
    free(copy);
  }
  cj_buf_append(&b, "x", 1);
  assert_int_equal(cj_request_decode(b.data, b.len, &back), 1);
  cj_buf_free(&b);
  cj_request_free(&r);
}

/* ---- errors ---- */

static void bad_arguments_are_refused(void **state) {
  cujit_compile_job *job = (cujit_compile_job *)1;
  cujit_module *m = (cujit_module *)1, *mods[2];
  const char *src[2] = {KERNEL, NULL};
  cujit_status st[2];
  cujit_options bad = ptx_opts();
  (void)state;
  assert_status_detail(cujit_compile_job_start(NULL, KERNEL, NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_compile_job_start: job is NULL");
  assert_status_detail(cujit_compile_job_start(&job, "", "e.cu", NULL), CUJIT_ERROR_INVALID_SOURCE,
                       "the source of 'e.cu' is empty");
  assert_null(job);
  bad.time_limit_s = -1;
  assert_int_equal(cujit_compile_job_start(&job, KERNEL, NULL, &bad), CUJIT_ERROR_INVALID_OPTION);
  assert_null(job);
  assert_status_detail(cujit_compile_job_wait(NULL, &m), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_compile_job_wait: job is NULL");
  assert_int_equal(cujit_compile_job_poll(NULL), 1);
  assert_string_equal(cujit_compile_job_error(NULL), "");
  cujit_compile_job_cancel(NULL);
  assert_status_detail(cujit_batch_compile(NULL, NULL, src, NULL, 2, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_batch_compile: mods is NULL");
  assert_status_detail(cujit_batch_compile(NULL, NULL, NULL, NULL, 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "mods is NULL"); /* as documented */
  assert_ok(cujit_batch_compile(mods, NULL, src, NULL, 0, NULL));  /* nothing to do */
  /* a NULL source among others fails only itself */
  bad = ptx_opts();
  assert_status_detail(cujit_batch_compile(mods, st, src, NULL, 2, &bad),
                       CUJIT_ERROR_INVALID_SOURCE,
                       "source 1 ('source.cu'): "
                       "CUJIT_ERROR_INVALID_SOURCE: the source of 'source.cu' is NULL");
  assert_int_equal(st[0], CUJIT_OK);
  assert_non_null(mods[0]);
  assert_null(mods[1]);
  cujit_module_destroy(mods[0]);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      BATCH_TEST(a_request_reads_back_as_written),
      BATCH_TEST(bad_arguments_are_refused),
      BATCH_TEST(a_batch_compiles_every_source),
      BATCH_TEST(workers_compile_beside_this_process),
      BATCH_TEST(workers_use_this_process_nvrtc_and_no_descriptors),
      BATCH_TEST(workers_do_not_warn_about_the_environment),
      BATCH_TEST(a_compile_error_fails_only_its_source),
      BATCH_TEST(repeats_are_compiled_once),
      BATCH_TEST(one_source_compiles_here),
      BATCH_TEST(a_job_is_started_polled_and_waited_for),
      BATCH_TEST(a_job_that_is_never_waited_for_is_freed),
      BATCH_TEST(a_job_is_cancelled),
      BATCH_TEST(a_cancel_hook_stops_a_job_in_a_worker),
      BATCH_TEST(a_killed_worker_fails_nothing),
      BATCH_TEST(a_missing_worker_program_falls_back),
      BATCH_TEST(a_worker_answering_garbage_fails_nothing),
      BATCH_TEST(a_worker_dying_at_once_fails_nothing),
      BATCH_TEST(a_herd_across_processes_compiles_each_key_once),
  };
  if (argc == 4 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "batch") == 0)
    return child_batch(argv[3]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

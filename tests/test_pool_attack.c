/* test_pool_attack - the worker pool against a hostile, broken or foreign worker program:
 * only a program that this user or root owns, in a directory no one else may write, is
 * ever run (found beside a library loaded by a relative path after the program changed
 * directory, named by a relative or others-writable CUJIT_WORKER); the library's own
 * version's worker is found before any other; a worker of another version is refused at
 * its greeting, once, and sent no request; and a worker that takes a request and then
 * hangs or is stopped holds up its compile no longer than a compile in this process would
 * take (its time limit, its cancel), or not at all.
 *
 * This test binary is also the hung and the foreign worker: started as `--serve` (the
 * worker's arguments) with CUJIT_TEST_WORKER set, it plays the part that names. */
#include <fcntl.h>
#include <signal.h>

#include "cachetest.h"

#define WATCHDOG_S 15 /* far beyond every wait here: only a wait without end reaches it */

/* ---- the workers this binary plays ---- */

static int read_exact(int fd, void *p, size_t n) {
  unsigned char *b = p;
  while (n) {
    ssize_t k = read(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static int write_exact(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  int i;
  for (i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Skips the rest of a message whose 20-byte head is read: its length is at byte 12. */
static int skip_rest(const unsigned char head[20]) {
  unsigned char b[4096];
  uint64_t n = le64(head + 12);
  while (n) {
    size_t k = n < sizeof b ? (size_t)n : sizeof b;
    if (read_exact(0, b, k) != 0) return -1;
    n -= k;
  }
  return 0;
}

/* Sends a greeting as the protocol spells it (worker.h): "cjwh", the protocol number, the
 * version's length and the version; written out here, not taken from the library. */
static int greet_as(uint64_t protocol, const char *version) {
  unsigned char b[20 + 64];
  size_t n = strlen(version);
  memcpy(b, "cjwh", 4);
  put_le(b + 4, protocol, 8);
  put_le(b + 12, n, 8);
  memcpy(b + 20, version, n);
  return write_exact(0, b, 20 + n);
}

/* Notes a start or a request in the file CUJIT_TEST_NOTES names, when it is set. */
static void note(const char *what) {
  const char *path = getenv("CUJIT_TEST_NOTES");
  int fd;
  if (!path || (fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600)) < 0) return;
  if (write_exact(fd, what, strlen(what)) != 0 || write_exact(fd, "\n", 1) != 0) return;
  close(fd);
}

/* "hang" and "stop": this library's worker (it answers the greeting as this version) that
 * reads a request (noting it) and then never answers, or stops itself (SIGSTOP). "late":
 * one that answers the greeting only once it has a byte after it (the cancel byte), then
 * hangs. */
static int hung_worker(const char *mode) {
  unsigned char head[20];
  if (read_exact(0, head, sizeof head) != 0 || skip_rest(head) != 0) return 1;
  if (strcmp(mode, "late") == 0 && read_exact(0, head, 1) != 0) return 1;
  if (greet_as(1, CUJIT_PROJECT_VERSION) != 0 || read_exact(0, head, sizeof head) != 0) return 1;
  note("request");
  if (strcmp(mode, "stop") == 0) raise(SIGSTOP);
  for (;;) pause();
}

/* "other": the worker of another version (0.0.1), which answers the greeting with its own
 * and exits; "old": a worker made before the greeting (cujit 0.1's and 0.2's), which reads
 * 20 bytes as a request's head and exits unless they are one. A request that reaches
 * either (sent by a library that does not greet) gets a reply that the library cannot use,
 * as a worker of another version answers it, and each is noted, as is each start. */
static int foreign_worker(const char *mode) {
  unsigned char head[20], reply[32 + 5 + 8];
  note("start");
  for (;;) {
    if (read_exact(0, head, 1) != 0) return 0;
    if (head[0] == 0x18) continue; /* a cancel byte between requests */
    if (read_exact(0, head + 1, sizeof head - 1) != 0) return 1;
    if (memcmp(head, "cjwh", 4) == 0 && strcmp(mode, "other") == 0) {
      if (skip_rest(head) == 0) greet_as(1, "0.0.1");
      return 1;
    }
    if (memcmp(head, "cjwq", 4) != 0 || skip_rest(head) != 0) return 1;
    note("request");
    memset(reply, 0, sizeof reply);
    memcpy(reply, "cjwr", 4);
    memcpy(reply + 4, head + 4, 8); /* its number */
    put_le(reply + 24, 5, 8);       /* a result, CUJIT_OK, from an NVRTC named "other" */
    memcpy(reply + 32, "other", 5);
    if (write_exact(0, reply, sizeof reply) != 0) return 1;
  }
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
  unsetenv("CUJIT_TEST_NOTES");
  cj_pool_reset();
  cujit_compile_set_jobs(2);
  return cache_setup(state);
}

static int pool_teardown(void **state) {
  if (chdir(start_dir) != 0) return -1; /* a test that failed midway may have left it */
  unsetenv("CUJIT_WORKER");
  unsetenv("CUJIT_TEST_WORKER");
  unsetenv("CUJIT_TEST_NOTES");
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

/* ---- the library's own version's worker, and no other ---- */

/* Copies the file `from` to `to` with mode 0755. */
static void copy_file(const char *from, const char *to) {
  char cmd[9000], out[4096];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 755 '%s' 2>&1", from, to, to);
  if (test_capture(cmd, out, sizeof out) != 0) fail_msg("%s: %s", cmd, out);
}

/* A library installed as a prefix holds it (DIR/lib, the worker where this version
 * installs it, seen from there) with another cujit-worker beside it: the library runs its
 * own version's worker, the one beside it never. */
static void the_library_runs_its_own_versions_worker_first(void **state) {
  char *dir, lib[4200], at[4200], own[4300], cmd[9000], out[8192], worker[4200], *slash;
  int rc;
  (void)state;
  if (CUJIT_WORKER_FROM_LIB[0] == '/') skip(); /* an absolute libexec: nothing to move */
  assert_non_null(dir = test_tempdir("prefix"));
  free(planted_worker(dir, "lib")); /* beside the library: must not run */
  snprintf(lib, sizeof lib, "%s/lib", dir);
  snprintf(at, sizeof at, "%s/%s", lib, CUJIT_WORKER_FROM_LIB); /* ../libexec/cujit-N/ */
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' 2>&1", at);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  assert_non_null(realpath(at, own));
  snprintf(worker, sizeof worker, "%s", self);
  assert_non_null(slash = strrchr(worker, '/'));
  snprintf(slash + 1, sizeof worker - (size_t)(slash + 1 - worker), "cujit-worker");
  strncat(own, "/cujit-worker", sizeof own - strlen(own) - 1);
  copy_file(worker, own);
  snprintf(cmd, sizeof cmd, "%s/%s", lib, strrchr(CUJIT_LIB_PATH, '/') + 1);
  copy_file(CUJIT_LIB_PATH, cmd);
  snprintf(cmd, sizeof cmd, "'%s' '%s/%s' '%s' 2>&1", CUJIT_RELATIVE_LOADER, lib,
           strrchr(CUJIT_LIB_PATH, '/') + 1, dir);
  rc = test_capture(cmd, out, sizeof out);
  if (rc != 0) fail_msg("the helper failed (%d):\n%s", rc, out);
  assert_false(ran(dir));
  snprintf(cmd, sizeof cmd, "('%s')", own);
  if (!strstr(out, cmd)) fail_msg("the worker run was not %s:\n%s", own, out);
  if (!strstr(out, "is the worker of cujit " CUJIT_PROJECT_VERSION))
    fail_msg("the worker did not greet as %s:\n%s", CUJIT_PROJECT_VERSION, out);
  test_rmtree(dir);
  free(dir);
}

/* How many lines of the foreign worker's notes are `what`. */
static int noted(const char *notes, const char *what) {
  char line[64];
  int n = 0;
  FILE *f = fopen(notes, "r");
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, what, strlen(what)) == 0 && line[strlen(what)] == '\n') n++;
  fclose(f);
  return n;
}

/* 1 once the log holds `a` or `b`, waiting for it up to WATCHDOG_S. */
static int logged_either(const char *a, const char *b) {
  double t0 = now();
  for (;;) {
    int found;
    pthread_mutex_lock(&log_mu);
    found = strstr(log_text, a) || strstr(log_text, b);
    pthread_mutex_unlock(&log_mu);
    if (found || now() - t0 > WATCHDOG_S) return found;
    cj_nap(0.005);
  }
}

#define REJECTED "stopped or answered something else"

/* CUJIT_WORKER naming another version's worker (this binary playing `mode`): a compile
 * that needs a worker starts it and refuses it at its greeting (the log says `why`),
 * sending it no request, and is compiled here; a batch after it starts no worker again.
 * Before the greeting, each compile sent to such a worker had its reply rejected, and the
 * next started another. */
static void refused_once(const char *mode, const char *why) {
  char *dir = test_tempdir("foreign"), notes[4200], src[4][128], tag[32];
  const char *sources[4];
  cujit_compile_job *holder, *j = NULL;
  cujit_module *m = NULL, *mods[4];
  cujit_options o = ptx_opts();
  uint64_t answered = cj_pool_answered();
  int i, found;
  assert_non_null(dir);
  snprintf(notes, sizeof notes, "%s/notes", dir);
  setenv("CUJIT_WORKER", self, 1);
  setenv("CUJIT_TEST_WORKER", mode, 1);
  setenv("CUJIT_TEST_NOTES", notes, 1);
  cj_pool_reset();
  log_capture(CUJIT_LOG_INFO);
  holder = hold_slot();
  snprintf(tag, sizeof tag, "%s_first", mode);
  small_source(tag, src[0], sizeof src[0]);
  assert_ok(cujit_compile_job_start(&j, src[0], "b.cu", &o));
  found = logged_either(why, REJECTED);
  release_slot(holder);
  assert_ok(cujit_compile_job_wait(j, &m));
  assert_non_null(strstr(cujit_module_ptx(m, NULL), tag));
  cujit_module_destroy(m);
  cujit_compile_job_destroy(j);
  assert_true(found);
  assert_logged(why);
  assert_int_equal(noted(notes, "request"), 0);
  assert_int_equal(noted(notes, "start"), 1);
  for (i = 0; i < 4; i++) {
    snprintf(tag, sizeof tag, "%s_batch%d", mode, i);
    small_source(tag, src[i], sizeof src[i]);
    sources[i] = src[i];
  }
  assert_ok(cujit_batch_compile(mods, NULL, sources, NULL, 4, &o));
  for (i = 0; i < 4; i++) cujit_module_destroy(mods[i]);
  assert_int_equal(noted(notes, "start"), 1);
  assert_int_equal(noted(notes, "request"), 0);
  assert_not_logged(REJECTED);
  assert_int_equal(cj_pool_answered() - answered, 0);
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 0);
  test_rmtree(dir);
  free(dir);
}

static void another_versions_worker_is_refused_once(void **state) {
  (void)state;
  refused_once("other",
               "it is the worker of cujit 0.0.1 (greeting 1), not of " CUJIT_PROJECT_VERSION);
}

static void a_worker_from_before_the_greeting_is_refused_once(void **state) {
  (void)state;
  refused_once("old", "it exited without answering the greeting");
}

/* ---- workers that take a request and never answer ---- */

/* A compile sent to a worker that hangs (or stops) once it has the request: this test
 * binary as the worker, the slot here held, and the watchdog running; the worker notes
 * the request in `notes`. */
typedef struct scene {
  cujit_compile_job *holder, *job;
  pthread_t watch;
  char notes[4200];
} scene;

static void start_on_hung_worker(scene *sc, const char *mode, const char *tag,
                                 const cujit_options *o) {
  const char *tmp = getenv("TMPDIR");
  char src[128];
  snprintf(sc->notes, sizeof sc->notes, "%s/hung-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
           tag);
  unlink(sc->notes);
  setenv("CUJIT_TEST_NOTES", sc->notes, 1);
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
  unlink(sc->notes);
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

/* cujit_compile_job_cancel() ends the wait for a hung worker, once the worker has the
 * request (a worker merely busy may still be greeting: a cancel then sends nothing, and
 * nothing is there to stop). */
static void a_cancelled_job_on_a_hung_worker_ends(void **state) {
  cujit_options o = ptx_opts();
  scene sc;
  double t0 = now();
  (void)state;
  start_on_hung_worker(&sc, "hang", "cancelled", &o);
  while (noted(sc.notes, "request") == 0 && now() - t0 < WATCHDOG_S) cj_nap(0.002);
  assert_int_equal(noted(sc.notes, "request"), 1);
  cujit_compile_job_cancel(sc.job);
  fails_with(&sc, CUJIT_ERROR_CANCELLED,
             "compiling 'b.cu' was cancelled by cujit_compile_job_cancel()");
}

/* A job cancelled while its worker is being greeted ends at once, cancelled, and sends no
 * request: the worker, which answered, is kept, not killed as one that did not stop. */
static void a_job_cancelled_while_its_worker_greets_ends_at_once(void **state) {
  cujit_options o = ptx_opts();
  cujit_module *m = NULL;
  scene sc;
  (void)state;
  start_on_hung_worker(&sc, "late", "greeted", &o);
  assert_true(busy_worker() > 0);
  cujit_compile_job_cancel(sc.job);
  assert_status_detail(cujit_compile_job_wait(sc.job, &m), CUJIT_ERROR_CANCELLED,
                       "cancelled by cujit_compile_job_cancel()");
  assert_null(m);
  watch_stop(sc.watch);
  assert_not_logged("did not stop compiling");
  assert_int_equal(cj_pool_workers(NULL, NULL, 0), 1); /* greeted, idle, kept */
  cujit_compile_job_destroy(sc.job);
  release_slot(sc.holder);
  unlink(sc.notes);
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
  unlink(sc.notes);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      POOL_TEST(a_relatively_loaded_library_runs_no_planted_worker),
      POOL_TEST(a_worker_others_may_write_is_not_run),
      POOL_TEST(another_users_worker_is_not_run),
      POOL_TEST(a_relative_worker_path_is_refused),
      POOL_TEST(the_library_runs_its_own_versions_worker_first),
      POOL_TEST(another_versions_worker_is_refused_once),
      POOL_TEST(a_worker_from_before_the_greeting_is_refused_once),
      POOL_TEST(a_hung_worker_meets_the_time_limit),
      POOL_TEST(a_cancelled_job_on_a_hung_worker_ends),
      POOL_TEST(a_job_cancelled_while_its_worker_greets_ends_at_once),
      POOL_TEST(a_stopped_worker_is_not_waited_for),
  };
  const char *mode = getenv("CUJIT_TEST_WORKER");
  ssize_t n;
  if (argc == 2 && strcmp(argv[1], "--serve") == 0 && mode)
    return strcmp(mode, "other") == 0 || strcmp(mode, "old") == 0 ? foreign_worker(mode)
                                                                  : hung_worker(mode);
  if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0 ||
      !getcwd(start_dir, sizeof start_dir))
    return 1;
  self[n] = '\0';
  return cmocka_run_group_tests(tests, NULL, NULL);
}

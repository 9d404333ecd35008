/* test_pch.c - precompiled headers: a header prefix compiled twice in a process gets one,
 * later compiles use it, and the output is what a plain compile gives. The directory that
 * holds them is the process's own (a forked child neither uses nor removes it) and out of
 * other users' reach, and a valid source never fails because of it. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "cache/cache.h"

#define PREFIX "// shared prefix\n#include <cuda_fp16.h>\n\n"

static const char *const kSources[] = {
    PREFIX "__global__ void a(__half *x) { x[0] = __float2half(1.0f); }\n",
    PREFIX "__global__ void b(__half *x) { x[0] = __hadd(x[0], x[1]); }\n",
    PREFIX "__global__ void c(__half *x, float f) { x[threadIdx.x] = __float2half(f); }\n",
};

/* Compiles without the cache (with `dirs` as include directories); the PTX, owned by the
 * caller. */
static char *ptx_with(const char *src, const char **dirs) {
  cujit_options o = {0};
  cujit_module *m = NULL;
  char *ptx;
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE;
  o.include_dirs = dirs;
  assert_ok(cujit_module_from_source(&m, src, "pch.cu", &o));
  assert_string_equal(cujit_module_log(m), ""); /* NVRTC's messages about it stay out */
  ptx = strdup(cujit_module_ptx(m, NULL));
  cujit_module_destroy(m);
  return ptx;
}

static char *ptx_of(const char *src) { return ptx_with(src, NULL); }

static char *ptx_of_plain(const char *src) {
  const char *dirs[] = {"/nonexistent-include-dir", NULL};
  return ptx_with(src, dirs);
}

/* The PTX of `src` compiled plainly in a new process. The child inherits what this
 * process learned of prefixes (and CUJIT_PCH is read once), so it compiles with an include
 * directory of its own, which precompiled headers are never used with and which changes
 * nothing in the PTX. */
static char *plain_ptx(const char *src) {
  int fd[2], status = 0;
  size_t len = 0, cap = 1 << 16;
  char *out = malloc(cap);
  ssize_t n;
  pid_t pid;
  assert_int_equal(pipe(fd), 0);
  pid = fork();
  if (pid == 0) {
    char *p;
    close(fd[0]);
    p = ptx_of_plain(src);
    _exit(write(fd[1], p, strlen(p)) == (ssize_t)strlen(p) ? 0 : 1);
  }
  close(fd[1]);
  while ((n = read(fd[0], out + len, cap - len - 1)) > 0) {
    len += (size_t)n;
    if (len + 1 == cap) out = realloc(out, cap *= 2);
  }
  close(fd[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  out[len] = '\0';
  return out;
}

static void a_repeated_prefix_gets_one_header(void **state) {
  char *ptx[3], *plain;
  size_t i;
  (void)state;
  for (i = 0; i < 3; i++) {
    ptx[i] = ptx_of(kSources[i]);
    /* made at the second compile of the prefix, not at the first */
    assert_int_equal(cj_pch_created(), i == 0 ? 0 : 1);
  }
  plain = plain_ptx(kSources[2]); /* the third compile used the header */
  assert_string_equal(ptx[2], plain);
  free(plain);
  for (i = 0; i < 3; i++) free(ptx[i]);
}

static void sources_without_includes_never_get_one(void **state) {
  int before = cj_pch_created();
  char *p;
  int i;
  (void)state;
  for (i = 0; i < 3; i++) {
    p = ptx_of("__global__ void plain(int *x) { x[0] = 1; }\n");
    free(p);
  }
  assert_int_equal(cj_pch_created(), before);
}

/* A project header may be edited between compiles, which NVRTC's precompiled header would
 * not notice: quoted includes and the caller's include directories get none. */
static void project_headers_never_get_one(void **state) {
  static const char quoted[] =
      "#include \"defs.h\"\n__global__ void q%d(int *x) { x[0] = V + %d; }\n";
  static const char angled[] =
      "#include <cuda_fp16.h>\n__global__ void r%d(int *x) { x[0] = %d; }\n";
  const cujit_header headers[] = {{"defs.h", "#define V 3\n"}, {NULL, NULL}};
  const char *dirs[] = {"/nonexistent-include-dir", NULL};
  cujit_options o = {0};
  cujit_module *m;
  char src[256];
  int before = cj_pch_created(), i;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  o.headers = headers;
  for (i = 0; i < 3; i++) {
    snprintf(src, sizeof src, quoted, i, i);
    m = NULL;
    assert_ok(cujit_module_from_source(&m, src, "q.cu", &o));
    cujit_module_destroy(m);
  }
  o.headers = NULL;
  o.include_dirs = dirs;
  for (i = 0; i < 3; i++) {
    snprintf(src, sizeof src, angled, i, i);
    m = NULL;
    assert_ok(cujit_module_from_source(&m, src, "r.cu", &o));
    cujit_module_destroy(m);
  }
  assert_int_equal(cj_pch_created(), before);
}

/* The caller's own PCH options are theirs: cujit adds none. */
static void the_callers_pch_options_are_left_alone(void **state) {
  cj_request r;
  char args[600];
  uint64_t prefix;
  cujit_options o = {0};
  const char *opts[] = {"-pch", NULL};
  (void)state;
  o.nvrtc_options = opts;
  assert_ok(cj_request_init(&r, kSources[0], "pch.cu", &o, NULL));
  assert_int_equal(cj_pch_begin(&r, args, sizeof args, &prefix), 0);
  cj_request_free(&r);
}

/* ---- whose directory: one process's, one user's ---- */

/* A small kernel behind the prefix `tag` names (one prefix per test), numbered so that
 * no two compiles are the same source; the compile's status. */
static cujit_status compile_tagged(const char *tag) {
  static int n;
  cujit_options o = {0};
  cujit_module *m = NULL;
  cujit_status st;
  char src[256];
  snprintf(src, sizeof src,
           "// %s\n#include <cuda_fp16.h>\n"
           "__global__ void k%d(__half *x) { x[0] = __float2half(%d.0f); }\n",
           tag, n, n);
  n++;
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE;
  st = cujit_module_from_source(&m, src, "pch.cu", &o);
  if (st != CUJIT_OK) fprintf(stderr, "compile failed: %s\n", cujit_last_error());
  cujit_module_destroy(m);
  return st;
}

static int is_dir(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries in `path` other than . and .. (-1 when it cannot be read). */
static int entries(const char *path) {
  DIR *d = opendir(path);
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* A child process's checks: the failed one is reported by its line, as the exit code. */
#define CHILD_CHECK(cond)                                                       \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "child: check failed at line %d: %s\n", __LINE__, #cond); \
      _exit(__LINE__ % 250 + 1);                                                \
    }                                                                           \
  } while (0)

/* Runs fn in a child (whose environment and state it may change; a compile that hangs
 * is ended by an alarm) that then calls exit(), as a program would (or, forked while
 * other threads ran, _exit(): their memory, reachable from no thread of the child, would
 * read as leaks); asserts it passed. */
static void in_child_ending(void (*fn)(void), int by_exit) {
  int status = 0;
  pid_t pid;
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(60);
    fn();
    if (by_exit) exit(0);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) fail_msg("the child was ended by signal %d", WTERMSIG(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void in_child(void (*fn)(void)) { in_child_ending(fn, 1); }

static char warnings[8192];

static void keep_warning(cujit_log_level level, const char *message, void *user) {
  size_t n = strlen(warnings);
  (void)user;
  if (level <= CUJIT_LOG_WARN) snprintf(warnings + n, sizeof warnings - n, "%s\n", message);
}

static void capture_warnings(void) {
  warnings[0] = '\0';
  cujit_log_set_callback(keep_warning, NULL);
  cujit_log_set_level(CUJIT_LOG_WARN);
}

static int report_fd = -1; /* where a child writes its directory's path */

/* In a child: sends the child's directory to its parent (in_child_dir). */
static void report_dir(const char *mine) {
  CHILD_CHECK(write(report_fd, mine, strlen(mine) + 1) == (ssize_t)strlen(mine) + 1);
}

/* in_child(fn), and the directory fn reported in `out`. */
static void in_child_dir(void (*fn)(void), char *out, size_t size) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  report_fd = fd[1];
  in_child(fn);
  close(fd[1]);
  memset(out, 0, size);
  assert_true(read(fd[0], out, size - 1) > 0);
  close(fd[0]);
}

static void child_exits(void) {}

static void child_compiles(void) {
  char mine[600];
  CHILD_CHECK(compile_tagged("fork") == CUJIT_OK);
  cj_pch_dir(mine, sizeof mine);
  CHILD_CHECK(mine[0] && is_dir(mine));
  report_dir(mine);
}

/* A forked child that exits (running atexit) used to remove its parent's directory, and
 * the parent's next compile then failed. The child makes a directory of its own when it
 * needs one, and removes only that one. */
static void a_forked_child_leaves_the_parents_directory(void **state) {
  char mine[600], childs[600];
  (void)state;
  assert_ok(compile_tagged("fork"));
  assert_ok(compile_tagged("fork")); /* the header is made */
  cj_pch_dir(mine, sizeof mine);
  assert_true(mine[0] && is_dir(mine));
  in_child(child_exits);
  assert_true(is_dir(mine));
  in_child_dir(child_compiles, childs, sizeof childs);
  assert_string_not_equal(childs, mine);
  assert_false(is_dir(childs)); /* the child removed its own at exit */
  assert_true(is_dir(mine));
  /* NVRTC itself removes at exit the headers it knows of, in a child its copy of the
   * parent's list: the parent's next compile may make the header again, and succeeds */
  assert_ok(compile_tagged("fork"));
  assert_true(is_dir(mine));
}

/* A directory removed under the process (a cleaner of /tmp) is made again. */
static void a_directory_removed_under_the_process_is_made_again(void **state) {
  char first[600], again[600];
  int before;
  (void)state;
  assert_ok(compile_tagged("removed"));
  assert_ok(compile_tagged("removed"));
  cj_pch_dir(first, sizeof first);
  assert_true(first[0] && is_dir(first));
  test_rmtree(first);
  assert_false(is_dir(first));
  before = cj_pch_created();
  assert_ok(compile_tagged("removed"));
  cj_pch_dir(again, sizeof again);
  assert_true(again[0] && is_dir(again));
  assert_int_equal(cj_pch_created(), before + 1); /* the header, made again there */
  assert_int_equal(entries(again), 1);
}

static void *compile_many(void *arg) {
  int i, *failed = arg;
  for (i = 0; i < 6; i++) *failed += compile_tagged("threads") != CUJIT_OK;
  return NULL;
}

static void child_compiles_once(void) { CHILD_CHECK(compile_tagged("threads") == CUJIT_OK); }

/* Forks while another thread compiles: each child (which exits) compiles in a directory
 * of its own, and the parent's compiles all succeed. */
static void a_thread_compiles_while_another_forks(void **state) {
  pthread_t t;
  int failed = 0, i;
  (void)state;
  assert_ok(compile_tagged("threads"));
  assert_int_equal(pthread_create(&t, NULL, compile_many, &failed), 0);
  for (i = 0; i < 3; i++) in_child_ending(child_compiles_once, 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(failed, 0);
  assert_ok(compile_tagged("threads"));
}

static int inside, forked; /* atomics: a compile is held in its cancel hook; the fork is done */

static int hold_in_compile(void *user) {
  (void)user;
  __atomic_store_n(&inside, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&forked, __ATOMIC_SEQ_CST)) usleep(1000);
  return 0;
}

static void *compile_held(void *arg) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE;
  o.cancel = hold_in_compile;
  cujit_status st =
      cujit_module_from_source(&m, "__global__ void held(int *x) { x[0] = 1; }\n", "held.cu", &o);
  __atomic_store_n((cujit_status *)arg, st, __ATOMIC_SEQ_CST);
  cujit_module_destroy(m);
  return NULL;
}

static void child_forked_during_a_compile(void) {
  CHILD_CHECK(compile_tagged("stuck") == CUJIT_ERROR_NVRTC);
  CHILD_CHECK(strstr(cujit_last_error(), "forked while another thread") != NULL);
}

/* A fork waits for compiles in flight, but not forever (the compile may need a lock the
 * forking thread holds): past the wait, the child refuses to compile (NVRTC's lock is held
 * there by a thread it does not have) instead of hanging, and the parent is unharmed. */
static void a_child_forked_during_a_compile_refuses_to_compile(void **state) {
  cujit_status held = CUJIT_ERROR_INVALID_VALUE;
  pthread_t t;
  (void)state;
  cj_nvrtc_set_fork_wait(0.2);
  __atomic_store_n(&forked, 0, __ATOMIC_SEQ_CST);
  assert_int_equal(pthread_create(&t, NULL, compile_held, &held), 0);
  while (!__atomic_load_n(&inside, __ATOMIC_SEQ_CST)) {
    /* not done without calling the hook */
    assert_int_equal(__atomic_load_n(&held, __ATOMIC_SEQ_CST), CUJIT_ERROR_INVALID_VALUE);
    usleep(1000);
  }
  in_child_ending(child_forked_during_a_compile, 0);
  __atomic_store_n(&forked, 1, __ATOMIC_SEQ_CST);
  assert_int_equal(pthread_join(t, NULL), 0);
  cj_nvrtc_set_fork_wait(5);
  assert_ok(held);
  assert_ok(compile_tagged("stuck"));
}

static char *place_a, *place_b; /* directories a child uses as XDG_RUNTIME_DIR and TMPDIR */

/* The "attacker": each directory of ours in `place` is moved aside and replaced by one
 * holding a FIFO where NVRTC writes its header (which would hang NVRTC). */
static void replace_with_fifos(const char *place) {
  char from[4096], to[4096], fifo[4200];
  struct dirent *e;
  DIR *d = opendir(place);
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "cujit-pch-", 10) != 0) continue;
    snprintf(from, sizeof from, "%s/%s", place, e->d_name);
    snprintf(to, sizeof to, "%s/aside-%s", place, e->d_name);
    if (rename(from, to) != 0 || mkdir(from, 0777) != 0) continue;
    snprintf(fifo, sizeof fifo, "%s/pch_0.pch", from);
    if (mkfifo(fifo, 0666) != 0) fprintf(stderr, "mkfifo: %s\n", strerror(errno));
  }
  closedir(d);
}

static void child_in_a_shared_tmpdir(void) {
  unsetenv("XDG_RUNTIME_DIR");
  setenv("TMPDIR", place_b, 1);
  capture_warnings();
  CHILD_CHECK(compile_tagged("shared") == CUJIT_OK);
  replace_with_fifos(place_b);
  CHILD_CHECK(compile_tagged("shared") == CUJIT_OK);
  CHILD_CHECK(compile_tagged("shared") == CUJIT_OK);
  CHILD_CHECK(entries(place_b) == 0); /* nothing of ours was made there */
  CHILD_CHECK(strstr(warnings, "TMPDIR") && strstr(warnings, "not sticky"));
}

/* A TMPDIR that another user could write to (not sticky) holds nothing of ours: there
 * they could replace our directory by theirs (with a FIFO inside, NVRTC hung). Compiles
 * are plain, with a warning that names TMPDIR. */
static void a_tmpdir_others_may_write_to_is_not_used(void **state) {
  (void)state;
  assert_non_null(place_b = test_tempdir("pch-shared"));
  assert_int_equal(chmod(place_b, 0777), 0);
  in_child(child_in_a_shared_tmpdir);
  test_rmtree(place_b);
  free(place_b);
}

static char planted[4200]; /* a directory made beforehand where ours might be guessed */

static void child_in_a_runtime_dir(void) {
  char mine[600], prefix[4200];
  struct stat st;
  setenv("XDG_RUNTIME_DIR", place_a, 1);
  setenv("TMPDIR", place_b, 1);
  CHILD_CHECK(compile_tagged("runtime") == CUJIT_OK);
  CHILD_CHECK(compile_tagged("runtime") == CUJIT_OK);
  CHILD_CHECK(compile_tagged("runtime") == CUJIT_OK);
  cj_pch_dir(mine, sizeof mine);
  snprintf(prefix, sizeof prefix, "%s/cujit-pch-", place_a);
  CHILD_CHECK(strncmp(mine, prefix, strlen(prefix)) == 0 && strcmp(mine, planted) != 0);
  CHILD_CHECK(lstat(mine, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid());
  CHILD_CHECK((st.st_mode & 0777) == 0700);
  CHILD_CHECK(entries(mine) == 1); /* the header */
  CHILD_CHECK(entries(planted) == 1);
  CHILD_CHECK(entries(place_b) == 0); /* NVRTC's scratch files are gone */
  report_dir(mine);
}

static void child_in_a_runtime_dir_again(void) {
  char mine[600];
  setenv("XDG_RUNTIME_DIR", place_a, 1);
  setenv("TMPDIR", place_b, 1);
  CHILD_CHECK(compile_tagged("killed") == CUJIT_OK);
  cj_pch_dir(mine, sizeof mine);
  CHILD_CHECK(mine[0] && is_dir(mine));
  report_dir(mine);
}

static void child_with_a_runtime_dir_others_may_write_to(void) {
  char mine[600];
  setenv("XDG_RUNTIME_DIR", place_a, 1);
  setenv("TMPDIR", place_b, 1);
  CHILD_CHECK(compile_tagged("runtime-shared") == CUJIT_OK);
  cj_pch_dir(mine, sizeof mine);
  CHILD_CHECK(strncmp(mine, place_b, strlen(place_b)) == 0 && mine[strlen(place_b)] == '/');
}

/* The directory is made fresh (mkdtemp) in XDG_RUNTIME_DIR when that is the user's, 0700,
 * and removed at exit; what was made there beforehand is left alone. A runtime directory
 * others may write to is passed over for TMPDIR. */
static void the_directory_is_made_fresh_in_the_users_runtime_dir(void **state) {
  char mine[600], fifo[4300];
  (void)state;
  assert_non_null(place_a = test_tempdir("pch-runtime"));
  assert_non_null(place_b = test_tempdir("pch-tmp"));
  snprintf(planted, sizeof planted, "%s/cujit-pch-000000", place_a);
  assert_int_equal(mkdir(planted, 0777), 0);
  snprintf(fifo, sizeof fifo, "%s/pch_0.pch", planted);
  assert_int_equal(mkfifo(fifo, 0666), 0);
  in_child_dir(child_in_a_runtime_dir, mine, sizeof mine);
  assert_false(is_dir(mine)); /* removed at the child's exit */
  assert_true(is_dir(planted));
  assert_int_equal(chmod(place_a, 0777), 0);
  in_child(child_with_a_runtime_dir_others_may_write_to);
  test_rmtree(place_a);
  test_rmtree(place_b);
  free(place_a);
  free(place_b);
}

/* A process that is killed runs no exit handler (cujit kills a compile worker that
 * outlives its time limit): its directory stays until the next process of this user
 * makes one in the same place. A directory whose maker still runs is left alone. */
static void a_killed_process_directory_is_removed_by_the_next(void **state) {
  char left[600] = "", live[4300], other[4300], mine[600];
  int fd[2], status = 0;
  pid_t pid;
  (void)state;
  assert_non_null(place_a = test_tempdir("pch-killed"));
  assert_non_null(place_b = test_tempdir("pch-killed-tmp"));
  snprintf(live, sizeof live, "%s/cujit-pch-%ld-Abc123", place_a, (long)getpid());
  assert_int_equal(mkdir(live, 0700), 0);
  snprintf(other, sizeof other, "%s/cujit-pch-12x-Abc123", place_a); /* not a maker's name */
  assert_int_equal(mkdir(other, 0700), 0);
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(60);
    setenv("XDG_RUNTIME_DIR", place_a, 1);
    setenv("TMPDIR", place_b, 1);
    CHILD_CHECK(compile_tagged("killed") == CUJIT_OK);
    CHILD_CHECK(compile_tagged("killed") == CUJIT_OK);
    cj_pch_dir(mine, sizeof mine);
    CHILD_CHECK(write(fd[1], mine, strlen(mine) + 1) > 0);
    raise(SIGKILL);
  }
  close(fd[1]);
  assert_true(read(fd[0], left, sizeof left - 1) > 0);
  close(fd[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_true(is_dir(left));
  in_child_dir(child_in_a_runtime_dir_again, mine, sizeof mine);
  assert_false(is_dir(left));
  assert_true(is_dir(live));
  assert_true(is_dir(other));
  test_rmtree(place_a);
  test_rmtree(place_b);
  free(place_a);
  free(place_b);
}

static void child_with_an_overlong_tmpdir(void) {
  char tmp[4001];
  int before = cj_pch_created(), i;
  tmp[0] = '/';
  memset(tmp + 1, 'x', sizeof tmp - 2);
  tmp[sizeof tmp - 1] = '\0';
  setenv("TMPDIR", tmp, 1);
  unsetenv("XDG_RUNTIME_DIR");
  capture_warnings();
  for (i = 0; i < 3; i++) CHILD_CHECK(compile_tagged("overlong") == CUJIT_OK);
  CHILD_CHECK(cj_pch_created() == before);
  CHILD_CHECK(strstr(warnings, "TMPDIR") != NULL);
}

/* A TMPDIR of 4000 bytes made the compile with a precompiled header fail where the plain
 * one succeeds: compiles are plain, with a warning that names TMPDIR. */
static void an_overlong_tmpdir_compiles_plainly_with_a_warning(void **state) {
  (void)state;
  in_child(child_with_an_overlong_tmpdir);
}

static void child_with_a_long_tmpdir(void) {
  char long_dir[4200];
  int before = cj_pch_created(), i;
  /* a usable directory, but more than NVRTC's scratch files' names can hold */
  snprintf(long_dir, sizeof long_dir, "%s/%0200d/%0150d", place_b, 0, 0);
  CHILD_CHECK(strlen(long_dir) < 480);
  snprintf(long_dir, sizeof long_dir, "%s/%0200d", place_b, 0);
  CHILD_CHECK(mkdir(long_dir, 0700) == 0);
  snprintf(long_dir, sizeof long_dir, "%s/%0200d/%0150d", place_b, 0, 0);
  CHILD_CHECK(mkdir(long_dir, 0700) == 0);
  setenv("TMPDIR", long_dir, 1);
  unsetenv("XDG_RUNTIME_DIR");
  capture_warnings();
  for (i = 0; i < 4; i++) CHILD_CHECK(compile_tagged("long") == CUJIT_OK);
  /* with an NVRTC that takes such a path, the header is made; else the warning says why */
  CHILD_CHECK(cj_pch_created() > before ||
              (strstr(warnings, "TMPDIR") && strstr(warnings, "without one succeeded")));
}

/* A TMPDIR that opens but that NVRTC cannot keep its scratch files in: the compile that
 * fails with a precompiled header is done again without, and succeeds. */
static void a_tmpdir_nvrtc_cannot_use_falls_back_to_plain(void **state) {
  (void)state;
  assert_non_null(place_b = test_tempdir("pch-long"));
  in_child(child_with_a_long_tmpdir);
  test_rmtree(place_b);
  free(place_b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_repeated_prefix_gets_one_header),
      cmocka_unit_test(sources_without_includes_never_get_one),
      cmocka_unit_test(project_headers_never_get_one),
      cmocka_unit_test(the_callers_pch_options_are_left_alone),
      cmocka_unit_test(a_forked_child_leaves_the_parents_directory),
      cmocka_unit_test(a_directory_removed_under_the_process_is_made_again),
      cmocka_unit_test(a_thread_compiles_while_another_forks),
      cmocka_unit_test(a_child_forked_during_a_compile_refuses_to_compile),
      cmocka_unit_test(a_tmpdir_others_may_write_to_is_not_used),
      cmocka_unit_test(the_directory_is_made_fresh_in_the_users_runtime_dir),
      cmocka_unit_test(a_killed_process_directory_is_removed_by_the_next),
      cmocka_unit_test(an_overlong_tmpdir_compiles_plainly_with_a_warning),
      cmocka_unit_test(a_tmpdir_nvrtc_cannot_use_falls_back_to_plain),
  };
  unsetenv("CUJIT_PCH");
  return cmocka_run_group_tests(tests, NULL, NULL);
}

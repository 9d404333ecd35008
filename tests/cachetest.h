/* cachetest.h - helpers shared by the cache test groups (test_cache*.c): a fresh cache
 * directory per test, a log callback that keeps warnings, NVRTC program counting, and
 * running this test binary again as a child process. */
#ifndef CUJIT_CACHETEST_H
#define CUJIT_CACHETEST_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "cache/cache.h"   /* internal: cj_nvrtc_programs_created, cj_memcache_clear, ... */
#include "worker/worker.h" /* internal: cj_pool_workers, cj_pool_reset, ... */

#define KERNEL "__global__ void scale(float *x, float f) { x[threadIdx.x] *= f; }\n"
static const char kKernel[] = KERNEL;

/* ---- log capture ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[1 << 16];

static void keep_log(cujit_log_level level, const char *message, void *user) {
  size_t n;
  (void)user;
  pthread_mutex_lock(&log_mu);
  n = strlen(log_text);
  snprintf(log_text + n, sizeof log_text - n, "[%d] %s\n", (int)level, message);
  pthread_mutex_unlock(&log_mu);
}

/* Starts keeping log lines at `level` and below, forgetting earlier ones. */
static inline void log_capture(cujit_log_level level) {
  pthread_mutex_lock(&log_mu);
  log_text[0] = '\0';
  pthread_mutex_unlock(&log_mu);
  cujit_log_set_callback(keep_log, NULL);
  cujit_log_set_level(level);
}

#define assert_logged(needle)                                                               \
  do {                                                                                      \
    if (!strstr(log_text, (needle))) fail_msg("log lacks \"%s\":\n%s", (needle), log_text); \
  } while (0)

#define assert_not_logged(needle)                                                        \
  do {                                                                                   \
    if (strstr(log_text, (needle))) fail_msg("log has \"%s\":\n%s", (needle), log_text); \
  } while (0)

/* ---- a fresh cache ---- */

/* A new empty cache directory (named by CUJIT_CACHE_DIR) and an empty memory cache.
 * The caller frees the string (test_rmtree first). */
static inline char *fresh_cache(const char *tag) {
  char *dir = test_tempdir(tag), *cache;
  if (!dir) return NULL;
  cache = malloc(strlen(dir) + 8);
  sprintf(cache, "%s/cache", dir);
  free(dir);
  setenv("CUJIT_CACHE_DIR", cache, 1);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_CACHE_MAX_SIZE");
  cujit_cache_set_dir(NULL);
  cj_memcache_clear();
  return cache;
}

/* Removes the cache and the temporary directory holding it. */
static inline void drop_cache(char *cache) {
  char *parent = strdup(cache);
  *strrchr(parent, '/') = '\0';
  test_rmtree(parent);
  free(parent);
  free(cache);
}

/* Compiles and destroys; returns how many NVRTC programs that created. */
static inline uint64_t compile_count(const char *src, const char *name, const cujit_options *o) {
  uint64_t before = cj_nvrtc_programs_created();
  cujit_module *m = NULL;
  assert_ok(cujit_module_from_source(&m, src, name, o));
  cujit_module_destroy(m);
  return cj_nvrtc_programs_created() - before;
}

static inline cujit_options ptx_options(void) {
  cujit_options o = {0};
  o.arch = "compute_80";
  return o;
}

/* Files in the cache's shard directories whose names contain `part`: returns how many,
 * and puts the paths of the first `max` in `paths` (may be NULL). */
static inline int shard_files(const char *cache, const char *part, char (*paths)[4200], int max) {
  char shard[4200];
  struct dirent *a, *b;
  DIR *top = opendir(cache), *sub;
  int n = 0;
  if (!top) return 0;
  while ((a = readdir(top)) != NULL) {
    if (strlen(a->d_name) != 2 || a->d_name[0] == '.') continue;
    snprintf(shard, sizeof shard, "%s/%s", cache, a->d_name);
    if (!(sub = opendir(shard))) continue;
    while ((b = readdir(sub)) != NULL) {
      if (!strstr(b->d_name, part)) continue;
      if (paths && n < max) snprintf(paths[n], 4200, "%s/%s", shard, b->d_name);
      n++;
    }
    closedir(sub);
  }
  closedir(top);
  return n;
}

/* The paths of the entries under a cache directory; returns their number. */
static inline int find_entries(const char *cache, char (*paths)[4200], int max) {
  return shard_files(cache, ".cujit", paths, max);
}

static inline int count_files(const char *cache, const char *part) {
  return shard_files(cache, part, NULL, 0);
}

/* ---- a test group's fixture: `cache` is a fresh cache, warnings are kept ---- */

static char *cache;

static inline int cache_setup(void **state) {
  (void)state;
  cache = fresh_cache("cache");
  log_capture(CUJIT_LOG_WARN);
  return cache ? 0 : -1;
}

static inline int cache_teardown(void **state) {
  (void)state;
  cujit_log_set_callback(NULL, NULL);
  cujit_log_set_level(CUJIT_LOG_OFF);
  drop_cache(cache);
  return 0;
}

#define CACHE_TEST(fn) cmocka_unit_test_setup_teardown(fn, cache_setup, cache_teardown)

/* ---- child processes: this binary again, with "--child MODE ARG" ---- */

/* Starts this test binary as `--child mode arg`; its stdin reads from `gate` (the child
 * waits for EOF there before starting, so that many children start at once). */
static inline pid_t spawn_child(const char *mode, const char *arg, int gate) {
  pid_t pid = fork();
  if (pid == 0) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) _exit(120);
    self[n] = '\0';
    if (gate >= 0 && dup2(gate, 0) < 0) _exit(121);
    execl(self, self, "--child", mode, arg, (char *)NULL);
    _exit(122);
  }
  return pid;
}

/* Waits for a child; returns its exit status (-1 when it did not exit normally). */
static inline int wait_child(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) continue;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* In a child: waits until the gate (stdin) closes. */
static inline void child_wait_gate(void) {
  char c;
  while (read(0, &c, 1) > 0) continue;
}

/* In a child: waits for the gate, compiles `src` (for PTX) as `name`; exit status 100 +
 * NVRTC programs made + 10 when a warning was logged, 1 or 2 on failure. */
static inline int child_compile_source(const char *src, const char *name) {
  cujit_options o = ptx_options();
  cujit_module *m = NULL;
  uint64_t before;
  log_capture(CUJIT_LOG_WARN);
  child_wait_gate();
  before = cj_nvrtc_programs_created();
  if (cujit_module_from_source(&m, src, name, &o) != CUJIT_OK) {
    fprintf(stderr, "child: %s\n", cujit_last_error());
    return 1;
  }
  if (!strstr(cujit_module_ptx(m, NULL), "scale")) return 2;
  cujit_module_destroy(m);
  if (log_text[0]) printf("child log:\n%s", log_text);
  return 100 + (int)(cj_nvrtc_programs_created() - before) + (log_text[0] ? 10 : 0);
}

#endif

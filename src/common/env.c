/* env.c - every environment variable the library reads, in one table, and the only
 * getenv (cj_env_value); the typed values of tuning variables are envvalue.c's.
 * docs/manual/environment.md's table is this one: a test renders the rows from here and
 * compares (test_common; scripts/sync-env-docs writes them). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"

#define TOOLKIT_MEANING                                                                     \
  "where to look for NVRTC, and for the CUDA toolkit's headers when the NVRTC in use does " \
  "not sit in a toolkit (read once; keyed by the cache)"

static const cj_env_var table[] = {
    {.name = "CUJIT_LOG",
     .kind = CJ_ENV_LEVEL,
     .dflt = "`off`",
     .meaning = "`off`, `error`, `warn`, `info` or `debug`: log to stderr (or to the callback); "
                "an unknown value leaves the log off; `cujit info` names it, and so does the "
                "log's first message once a level turns the log on"},
    {.name = "CUJIT_ERRORS",
     .kind = CJ_ENV_TEXT,
     .dflt = "`return`",
     .meaning = "`exit`: a program that sets no error handler ends at its first failing cujit "
                "call, which prints its name, status and detail to stderr and exits with "
                "status 1, or 77 when no GPU can be used (`cujit_error_exit()`); `return`: "
                "every call returns its status "
                "(`cujit_error_set_handler()` comes first; checked at the library's first call "
                "that sets anything up, where another value is warned about once on stderr, or "
                "to the log callback, whatever `CUJIT_LOG` says, and `return` used; read again "
                "at the first failure)"},
    {.name = "CUJIT_NVTX",
     .kind = CJ_ENV_FLAG,
     .dflt = "on",
     .warn_bad = 1,
     .meaning = "`0` (or `off`, `no`, `false`) stops cujit from emitting NVTX ranges even "
                "when a profiler is attached; on, they are emitted only when one is (read once, "
                "at the first range; the manual's page on profiling names them)"},
    {.name = "NVTX_INJECTION64_PATH",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "the NVTX tool library, which a profiler such as Nsight Systems sets for the "
                "program it starts; unset, cujit emits no ranges and starts nothing of NVTX "
                "(read once, at the first range)"},
    {.name = "CUJIT_ARCH",
     .kind = CJ_ENV_TEXT,
     .dflt = "the device's",
     .meaning = "architecture to compile for when `cujit_options.arch` is NULL (read once, at "
                "the first compile that needs it); a value that is not one makes those "
                "compiles fail with `CUJIT_ERROR_INVALID_OPTION`"},
    {.name = "CUJIT_DEVICE",
     .kind = CJ_ENV_COUNT,
     .dflt = "0",
     .max = INT32_MAX,
     .meaning = "device ordinal (digits only) used when the calling thread has no current "
                "context (read once). Any other value makes device calls, and compiles that "
                "target the device, fail with `CUJIT_ERROR_INVALID_VALUE`"},
    {.name = "CUJIT_EARLY_CONTEXT",
     .kind = CJ_ENV_FLAG,
     .dflt = "on",
     .warn_bad = 1,
     .meaning = "`0` (or `off`, `no`, `false`): `cujit_module_from_source()` and "
                "`_from_file()` do not start the device's context beside a compile "
                "(`CUJIT_OPT_NO_EARLY_CONTEXT` for every call); on, a process with no "
                "context that compiles starts the driver and the context of the device it "
                "would use on a thread of its own, and its first launch waits for it (read "
                "at each compile)"},
    {.name = "CUJIT_LIBCUDA",
     .kind = CJ_ENV_PATH,
     .dflt = "`libcuda.so.1`",
     .meaning = "absolute path of the CUDA driver library to load (read once; a relative "
                "one is not loaded, and device calls fail saying so)"},
    {.name = "CUJIT_NVRTC",
     .kind = CJ_ENV_PATH,
     .dflt = "the first `libnvrtc.so.13`, `.12` or `libnvrtc.so` found",
     .meaning = "absolute path of the NVRTC library to load, on the first compile that "
                "needs one (read once; a relative one is refused with a warning, and compiles "
                "then fail saying so); by default it is looked for in `LD_LIBRARY_PATH`, the "
                "toolkit cujit was built with, `CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`, "
                "then by the system's search"},
    {.name = "CUJIT_NVJITLINK",
     .kind = CJ_ENV_PATH,
     .dflt = "the first `libnvJitLink.so.13`, `.12` or `libnvJitLink.so` found",
     .meaning = "absolute path of the nvJitLink library to load, on the first link that "
                "needs one (read once; a relative one is refused with a warning, and links "
                "then fail saying so); by default it is looked for beside the NVRTC in use, "
                "then where NVRTC is looked for"},
    {.name = "LD_LIBRARY_PATH",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "directories where NVRTC is looked for first (read once)"},
    {.name = "CUJIT_PCH",
     .kind = CJ_ENV_FLAG,
     .dflt = "on",
     .warn_bad = 1,
     .meaning = "`0` (or `off`, `no`, `false`) stops cujit from asking NVRTC for precompiled "
                "headers (by default a `<...>` header prefix compiled a second time in a "
                "process gets one; read once)"},
    {.name = "CUJIT_COMPILE_JOBS",
     .kind = CJ_ENV_COUNT,
     .dflt = "the number of CPUs",
     .min = 1,
     .max = 256,
     .warn_bad = 1,
     .form = "a number of compiles from 1 to 256",
     .meaning = "how many compiles of a batch or of asynchronous compiles run at once, one "
                "in the process and the rest in worker processes (`1`: no workers; "
                "`cujit_compile_set_jobs()` comes first)"},
    {.name = "CUJIT_WORKER",
     .kind = CJ_ENV_PATH,
     .dflt = "`cujit-worker` where libcujit's version installs it (`libexec/cujit-N/`, N "
             "the soname's version: `cujit-0.2` for `libcujit.so.0.2`; found from the "
             "library's directory, then by its installed path), else beside libcujit or in "
             "its `../bin`",
     .meaning = "absolute path of the compile worker program (read when a worker is first "
                "needed); it and its directory must belong to you or root and be writable by "
                "no one else, and it must be the worker of the library's own version (it "
                "answers a greeting saying so). When it is refused (a warning says why; "
                "another version's worker is said at info level) or cannot be started, those "
                "compiles run in the process, one at a time"},
    {.name = "TMPDIR",
     .kind = CJ_ENV_PATH,
     .dflt = "`/tmp`",
     .meaning = "where NVRTC keeps scratch files while it precompiles a header, and where the "
                "process's private directory of precompiled headers is made (removed at exit; "
                "a killed process's, by the next process that makes one there) unless "
                "`XDG_RUNTIME_DIR` holds it. It must be an absolute path to a directory of the "
                "user's or root's that neither group nor others may write to, or a sticky one "
                "of theirs (as `/tmp` is); otherwise, or when NVRTC cannot use it (a path "
                "longer than about 100 bytes), compiles are made without precompiled headers, "
                "with a warning"},
    {.name = "XDG_RUNTIME_DIR",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "where the process's private directory of precompiled headers is made, when "
                "it is an absolute path to a directory of the user's or root's that neither "
                "group nor others may write to (else `TMPDIR`)"},
    {.name = "CUJIT_CACHE",
     .kind = CJ_ENV_FLAG,
     .dflt = "on",
     .warn_bad = 1,
     .meaning = "`0` (or `off`, `no`, `false`) turns the disk cache off; `1`, `on`, `yes`, "
                "`true` leave it on"},
    {.name = "CUJIT_CACHE_DIR",
     .kind = CJ_ENV_PATH,
     .dflt = "`$XDG_CACHE_HOME/cujit`, else `$HOME/.cache/cujit`",
     .meaning = "the disk cache directory (`cujit_cache_set_dir()` comes first)"},
    {.name = "XDG_CACHE_HOME",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "the disk cache is its `cujit` directory when `CUJIT_CACHE_DIR` is unset "
                "(used only when it is an absolute path)"},
    {.name = "HOME",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "the disk cache is `$HOME/.cache/cujit` when neither of the two above is "
                "set; with none of the three, there is no disk cache"},
    {.name = "CUJIT_CACHE_MAX_SIZE",
     .kind = CJ_ENV_SIZE,
     .dflt = "1G",
     .min = 1,
     .warn_bad = 1,
     .form = CJ_ENV_SIZE_FORM,
     .range = "more than 0 (to turn the disk cache off, set CUJIT_CACHE=0)",
     .meaning = "the disk cache's size limit (bytes, or with a K, M or G suffix)"},
    {.name = "CUJIT_CACHE_LOCK_TIMEOUT",
     .kind = CJ_ENV_SECONDS,
     .dflt = "60",
     .max_seconds = 1e7,
     .warn_bad = 1,
     .meaning = "seconds to wait for another process compiling the same entry"},
    {.name = "CUJIT_CACHE_REMOTE",
     .kind = CJ_ENV_TEXT,
     .dflt = "none",
     .meaning = "a Redis server that machines share as a second cache tier, "
                "`redis://[[user]:password@]host[:port][/db][?connect_timeout=MS&timeout=MS]` "
                "(see [A cache shared by a cluster](#a-cache-shared-by-a-cluster-redis); "
                "`cujit_cache_set_remote()` comes first)"},
    {.name = "CUJIT_HIREDIS",
     .kind = CJ_ENV_PATH,
     .dflt = "`libhiredis.so.1.3.0`, `.1.1.0`, `.1.0.0`, `.0.14`, then `libhiredis.so`",
     .meaning = "absolute path of the hiredis library the remote tier loads (read once; a "
                "relative one is not loaded, and setting a remote tier fails saying so)"},
    {.name = "CUJIT_LIBZSTD",
     .kind = CJ_ENV_PATH,
     .dflt = "`libzstd.so.1`",
     .meaning = "absolute path of the zstd library loaded to read a compressed fatbin entry's "
                "kernels' parameters (read once; a relative one is not loaded, and the driver "
                "is then asked for them)"},
    {.name = "CUJIT_MEMORY_CACHE_MAX_SIZE",
     .kind = CJ_ENV_SIZE,
     .dflt = "256M",
     .warn_bad = 1,
     .form = CJ_ENV_SIZE_FORM,
     .meaning = "the memory cache's size limit (`0` turns it off; read once)"},
    {.name = "CUJIT_POOL_KEEP",
     .kind = CJ_ENV_SIZE,
     .dflt = "unlimited",
     .warn_bad = 1,
     .form = "a size (e.g. 256M)",
     .meaning = "the most device memory the pool of In/Out buffers and arrays holds, in use "
                "and kept, after a synchronisation; by default it keeps all they give back, "
                "until `cujit_mem_pool_trim()` or an allocation that finds the device full"},
    {.name = "CUJIT_STAGING_MIN",
     .kind = CJ_ENV_SIZE,
     .dflt = "1M",
     .max = SIZE_MAX,
     .warn_bad = 1,
     .form = "a size (e.g. 4M)",
     .meaning = "smallest pageable In/Out buffer moved through pinned chunks by the staging "
                "threads; smaller ones are copied by the driver, or, after a device's first 32 "
                "such transfers, through a small pinned area (read once)"},
    {.name = "CUJIT_STAGING_THREADS",
     .kind = CJ_ENV_COUNT,
     .dflt = "half the cores, at most 8; none with fewer than 4 cores",
     .warn_bad = 1,
     .form = "a number of threads (0 turns staging off)",
     .meaning = "threads that move pageable buffers (`0`: let the driver copy every pageable "
                "buffer, small ones too; larger than 16 is capped; read once)"},
    {.name = "CUJIT_STAGING_CHUNK",
     .kind = CJ_ENV_SIZE,
     .dflt = "1M",
     .max = SIZE_MAX,
     .warn_bad = 1,
     .form = "a size (e.g. 4M)",
     .meaning = "size of each staging thread's two pinned chunks (read once)"},
    {.name = "CUDA_PATH", .kind = CJ_ENV_PATH, .dflt = "unset", .meaning = TOOLKIT_MEANING},
    {.name = "CUDA_HOME",
     .kind = CJ_ENV_PATH,
     .dflt = "unset",
     .meaning = "as `CUDA_PATH`, looked at after it"},
};

const cj_env_var *cj_env_table(size_t *n) {
  *n = CJ_COUNT(table);
  return table;
}

const cj_env_var *cj_env_find(const char *name) {
  size_t i;
  for (i = 0; name && i < CJ_COUNT(table); i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

/* ---- the library's start ----
 *
 * The first time the library reads its environment is its first call that sets anything
 * up (a compile, the driver, the cache, the log): what must be checked of the environment
 * even in a program that goes on to read nothing else is checked then, once, by the
 * function an upper file registers (error.c: CUJIT_ERRORS), which reads the environment
 * itself meanwhile. */

static void (*at_start)(void);
static int started; /* the first read has begun (atomic) */

void cj_env_at_start(void (*fn)(void)) { at_start = fn; }

CJ_NOINLINE void cj_env_start(void) {
  if (!__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL) && at_start) at_start();
}

/* The only getenv of the library. */
const char *cj_env_value(const cj_env_var *v) {
  const char *s;
  if (CJ_UNLIKELY(!__atomic_load_n(&started, __ATOMIC_ACQUIRE))) cj_env_start();
  s = v ? getenv(v->name) : NULL;
  return s && *s ? s : NULL;
}

const char *cj_env(const char *name) { return cj_env_value(cj_env_find(name)); }

/* ---- bad values, remembered per variable (envvalue.c warns about them) ---- */

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_warnings, warn_lock)
static CJ_LARGE char warned[CJ_COUNT(table)]
                           [72]; /* per variable, the last bad value warned about */

static int warnings_off; /* a worker's: the library that started it has warned (atomic) */

void cj_env_warnings_off(void) { __atomic_store_n(&warnings_off, 1, __ATOMIC_RELAXED); }

int cj_env_warnings_are_off(void) { return __atomic_load_n(&warnings_off, __ATOMIC_RELAXED); }

int cj_env_bad_is_new(const cj_env_var *v, const char *value) {
  char *last = warned[v - table];
  int fresh;
  if (cj_env_warnings_are_off()) return 0;
  pthread_mutex_lock(&warn_lock);
  fresh = strncmp(last, value, sizeof warned[0] - 1) != 0;
  if (fresh) snprintf(last, sizeof warned[0], "%s", value);
  pthread_mutex_unlock(&warn_lock);
  return fresh;
}

int cj_env_level(const char *name, int *level) {
  static const struct {
    const char *word;
    cujit_log_level level;
  } words[] = {{"off", CUJIT_LOG_OFF},      {"error", CUJIT_LOG_ERROR}, {"warn", CUJIT_LOG_WARN},
               {"warning", CUJIT_LOG_WARN}, {"info", CUJIT_LOG_INFO},   {"debug", CUJIT_LOG_DEBUG}};
  const cj_env_var *v = cj_env_find(name);
  const char *s = cj_env_value(v);
  size_t i;
  *level = CUJIT_LOG_OFF;
  if (!s || v->kind != CJ_ENV_LEVEL) return CJ_ENV_UNSET;
  for (i = 0; i < CJ_COUNT(words); i++) {
    if (strcasecmp(s, words[i].word) == 0) {
      *level = (int)words[i].level;
      return CJ_ENV_SET;
    }
  }
  return CJ_ENV_BAD; /* never warned here: the log reports it once it can (log.c) */
}

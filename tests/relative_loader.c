/* relative_loader - for test_pool_attack: a program that loads libcujit by a relative path
 * (from the directory above the library's), then changes into another directory and
 * compiles a batch there, which starts a worker.
 *
 *   relative_loader LIBRARY DIR
 *
 * LIBRARY is the library's absolute path, DIR where to go after loading it. Exit status 0
 * when the batch compiled and a worker was started; otherwise it says what failed. It is
 * not linked with libcujit: the library is loaded only as the loader is told to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cujit.h"

#define N 4

static int worker_started;

static void note(cujit_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  if (strstr(message, "started compile worker")) worker_started = 1;
  if (strstr(message, "worker")) fprintf(stderr, "log: %s\n", message);
}

int main(int argc, char **argv) {
  char top[4096], rel[4200], text[N][128], *lib_dir, *slash;
  const char *sources[N];
  cujit_module *mods[N];
  cujit_options o = CUJIT_OPTIONS_INIT;
  void (*set_log)(cujit_log_fn, void *);
  void (*set_level)(cujit_log_level);
  void (*set_jobs)(unsigned);
  void (*destroy)(cujit_module *);
  cujit_status (*batch)(cujit_module **, cujit_status *, const char *const *, const char *const *,
                        size_t, const cujit_options *);
  cujit_status st;
  void *lib;
  int i;
  if (argc != 3) return fprintf(stderr, "usage: relative_loader LIBRARY DIR\n"), 2;
  /* LIBRARY = TOP/LIBDIR/FILE: load "LIBDIR/FILE" from TOP */
  snprintf(top, sizeof top, "%s", argv[1]);
  if (!(slash = strrchr(top, '/'))) return 2;
  *slash = '\0';
  if (!(lib_dir = strrchr(top, '/'))) return 2;
  *lib_dir++ = '\0';
  snprintf(rel, sizeof rel, "%s/%s", lib_dir, strrchr(argv[1], '/') + 1);
  if (chdir(top) != 0) return perror("chdir"), 3;
  if (!(lib = dlopen(rel, RTLD_NOW | RTLD_LOCAL))) return fprintf(stderr, "%s\n", dlerror()), 3;
  if (chdir(argv[2]) != 0) return perror("chdir"), 3;
  *(void **)&set_log = dlsym(lib, "cujit_log_set_callback");
  *(void **)&set_level = dlsym(lib, "cujit_log_set_level");
  *(void **)&set_jobs = dlsym(lib, "cujit_compile_set_jobs");
  *(void **)&destroy = dlsym(lib, "cujit_module_destroy");
  *(void **)&batch = dlsym(lib, "cujit_batch_compile");
  if (!set_log || !set_level || !set_jobs || !destroy || !batch) return 4;
  set_log(note, NULL);
  set_level(CUJIT_LOG_DEBUG);
  set_jobs(2);
  for (i = 0; i < N; i++) {
    snprintf(text[i], sizeof text[i], "__global__ void k%d_%d(int *x) { x[0] = %d; }\n", i,
             (int)getpid(), i);
    sources[i] = text[i];
  }
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE; /* every source compiled */
  st = batch(mods, NULL, sources, NULL, N, &o);
  if (st != CUJIT_OK) return fprintf(stderr, "the batch failed: status %d\n", (int)st), 5;
  for (i = 0; i < N; i++) destroy(mods[i]);
  if (!worker_started) return fprintf(stderr, "no worker was started\n"), 6;
  return 0;
}

/* A program built against an installed cujit, with nothing from cujit's source or build
 * trees: it checks the version and that both headers are installed (cujit_array.h, the
 * array layer, includes cujit.h), then compiles four kernels at once to PTX with the
 * installed NVRTC search. With --worker, one of them must have gone to a compile worker
 * (cujit-worker found where the library is installed), whose path and version it prints
 * ("worker: PATH (cujit VERSION)", as the debug log names them). tests/check_consumer.sh
 * builds it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cujit.h>
#include <cujit_array.h>

/* The first worker's path and version, from the debug log (the log callback may run on
 * any cujit thread, one at a time). */
static char worker_path[4096], worker_version[64];
static volatile int worker_started;

static void on_log(cujit_log_level level, const char *message, void *user) {
  const char *at;
  (void)level;
  (void)user;
  if (!worker_started &&
      sscanf(message, "started compile worker %*d ('%4095[^']')", worker_path) == 1)
    worker_started = 1;
  if (!worker_version[0] && (at = strstr(message, "is the worker of cujit ")) != NULL)
    sscanf(at, "is the worker of cujit %63s", worker_version);
}

/* With --worker, the compiles' cancel hook, which never cancels: a compile here that asks
 * it before a worker has started waits for one, up to five seconds, so that the batch has
 * two compiles at once however its threads are scheduled. */
static int wait_for_a_worker(void *user) {
  struct timespec ms = {0, 1000000};
  int i;
  (void)user;
  for (i = 0; i < 5000 && !worker_started; i++) nanosleep(&ms, NULL);
  return 0;
}

int main(int argc, char **argv) {
  static const char *const sources[] = {
      "__global__ void k0(int *x) { x[0] = 10; }\n",
      "__global__ void k1(int *x) { x[0] = 11; }\n",
      "__global__ void k2(int *x) { x[0] = 12; }\n",
      "__global__ void k3(int *x) { x[0] = 13; }\n",
  };
  enum { N = sizeof sources / sizeof *sources };
  cujit_module *mods[N] = {0};
  cujit_options opts = CUJIT_OPTIONS_INIT;
  int want_worker = argc > 1 && strcmp(argv[1], "--worker") == 0, failed = 0;
  unsigned v = cujit_version();
  size_t i, size = 0;
  printf("cujit %u.%u.%u\n", v / 10000, v / 100 % 100, v % 100);
  if (v != CUJIT_VERSION_NUMBER) return fprintf(stderr, "the header is another version\n"), 1;
  if (cujit_type_size(CUJIT_TYPE_F64) != 8)
    return fprintf(stderr, "cujit_array.h's cujit_type_size() is wrong\n"), 1;
  opts.arch = "compute_80"; /* PTX, with no GPU needed */
  opts.flags = CUJIT_OPT_NO_CACHE;
  if (want_worker) opts.cancel = wait_for_a_worker;
  cujit_log_set_callback(on_log, NULL);
  cujit_log_set_level(CUJIT_LOG_DEBUG);
  cujit_compile_set_jobs(2);
  if (cujit_batch_compile(mods, NULL, sources, NULL, N, &opts) != CUJIT_OK)
    return fprintf(stderr, "compiling failed: %s\n", cujit_last_error()), 1;
  for (i = 0; i < N; i++) {
    const char *ptx = cujit_module_ptx(mods[i], &size);
    if (!ptx || !strstr(ptx, ".entry")) failed = 1;
    cujit_module_destroy(mods[i]);
  }
  if (failed) return fprintf(stderr, "a module has no PTX with its kernel\n"), 1;
  if (want_worker && !worker_started)
    return fprintf(stderr, "no compile worker was started (is cujit-worker installed?)\n"), 1;
  printf("compiled %d kernels%s\n", N, worker_started ? ", some in a compile worker" : "");
  if (worker_started) printf("worker: %s (cujit %s)\n", worker_path, worker_version);
  return 0;
}

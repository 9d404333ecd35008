/* startchild.c - cujit-bench-start: one new process's way to its first result, cujit's and
 * the bare driver's, for the start group (bench/start.c). It links cujit and nothing of
 * CUDA else, as a program that uses cujit does (cujit-bench itself links NVRTC, which
 * would change what cujit finds and maps at its start): NVRTC is found by cujit, or
 * opened by the bare side at run time, as each would be.
 *
 *   cujit-bench-start warm-cujit
 *   cujit-bench-start warm-parts
 *   cujit-bench-start warm-bare CUBIN WAY        WAY: module | library | library-log
 *   cujit-bench-start cold-cujit
 *   cujit-bench-start cold-bare ARCH
 *
 * warm-*: the driver and the context first (not timed in the path), then the path on a
 * cache that holds the kernel: cujit_module_from_source, _get_function, CUJIT_LAUNCH and
 * cuCtxSynchronize; or the CUBIN file read, loaded (cuModuleLoadData + cuModuleGetFunction;
 * or cuLibraryLoadData + cuLibraryGetKernel + cuKernelGetFunction as cujit loads, without
 * or with cujit's JIT log options), launched and waited for. Prints "ctx_ms start_ms
 * compiles builtins part0 part1 part2 faults limits_ms": limits_ms, for the bare side, is
 * what reading the 13 device attributes of cujit's launch checks costs after that.
 * warm-parts: cujit's path cut into steps, each timed alone (warm_cujit_parts says which);
 * prints "ctx_ms" and the five steps' ms, then the page faults.
 * cold-*: from main() on an empty cache: cujit's from_source (an NVRTC compile, the
 * context started beside it), get_function (which waits for the context), launch and
 * wait; or, in order, the driver (cuInit), the primary context, NVRTC opened and compiling
 * the same source (-arch=ARCH -no-cache, as cujit gives it), and cuModuleLoadData,
 * cuModuleGetFunction, the launch and the wait. Prints "total_ms part0 part1 part2 part3
 * compiles" (cujit: from_source, get_function, launch, 0; bare: cuInit, context, compile,
 * load and launch). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double ms(uint64_t a, uint64_t b) { return (double)(b - a) / 1e6; }

/* Page faults of this process so far (each first touch of a page). */
static long faults_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt + ru.ru_majflt;
}

static int mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) return 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

/* The file whole, as bench_read_file() reads it (open, fstat, read). */
static void *read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  char *buf = NULL;
  ssize_t n;
  size_t got = 0;
  if (fd < 0) return NULL;
  if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL)
    while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
      got += (size_t)n;
  close(fd);
  if (buf && got == (size_t)st.st_size) {
    *size = got;
    return buf;
  }
  free(buf);
  return NULL;
}

/* ---- warm: a cache that holds the kernel ---- */

static void warm_cujit(double *part, long *faults, int *compiles) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  long f0 = faults_now();
  uint64_t t0 = now_ns(), t1, t2, t3;
  bench_check_ok(cujit_module_from_source(&m, bench_src_small, "warm.cu", NULL), "from_source");
  t1 = now_ns();
  bench_check_ok(cujit_module_get_function(m, "saxpy", &f), "get_function");
  t2 = now_ns();
  bench_check_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_f32(2.0f), cujit_ptr(0),
                              cujit_ptr(0), cujit_i32(0)),
                 "cujit_launch");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  t3 = now_ns();
  *faults = faults_now() - f0;
  part[0] = ms(t0, t1), part[1] = ms(t1, t2), part[2] = ms(t2, t3);
  cujit_cache_get_stats(&s);
  *compiles = (int)s.compiles;
  cujit_module_destroy(m);
}

/* The same path cut where the API allows, each step timed alone, into `part` (ms), after
 * the driver's start (which loads cujit's table of entry points: the benchmark's driver
 * calls come from it, so it is in ctx_ms on both sides): NVRTC located
 * (cujit_nvrtc_path, without loading it), from_source (the environment, NVRTC's identity,
 * the key, the disk cache's lookup, the entry read and checked, the module made), the same
 * from_source again (the key and the memory cache's hit: what a call costs once the
 * process's first-time work is done), get_function (the library loaded, the kernel found,
 * the parameter layout and the device's limits read), and the launch with its wait. */
static void warm_cujit_parts(double *part, long *faults) {
  cujit_module *m = NULL, *again = NULL;
  cujit_function *f = NULL;
  int n = 0;
  long f0 = faults_now();
  uint64_t t[7];
  bench_check_ok(cujit_device_get_count(&n), "cujit_device_get_count"); /* loaded: ctx_ms */
  t[1] = now_ns();
  (void)cujit_nvrtc_path();
  t[2] = now_ns();
  bench_check_ok(cujit_module_from_source(&m, bench_src_small, "warm.cu", NULL), "from_source");
  t[3] = now_ns();
  bench_check_ok(cujit_module_from_source(&again, bench_src_small, "warm.cu", NULL), "from_source");
  t[4] = now_ns();
  bench_check_ok(cujit_module_get_function(m, "saxpy", &f), "get_function");
  t[5] = now_ns();
  bench_check_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_f32(2.0f), cujit_ptr(0),
                              cujit_ptr(0), cujit_i32(0)),
                 "cujit_launch");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  t[6] = now_ns();
  *faults = faults_now() - f0;
  for (n = 1; n < 6; n++) part[n - 1] = ms(t[n], t[n + 1]);
  cujit_module_destroy(again);
  cujit_module_destroy(m);
}

/* The 13 attributes cujit's launch checks read (driver/limits.c), in a process that has
 * not read them. */
static double limits_ms(void) {
  static const CUdevice_attribute attrs[] = {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                             CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                             CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                             CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                                             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT};
  uint64_t t0 = now_ns();
  size_t i;
  int v;
  for (i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    bench_cu_check(bench_cu.cuDeviceGetAttribute(&v, attrs[i], 0), "cuDeviceGetAttribute");
  return ms(t0, now_ns());
}

/* Loads the CUBIN `image` and finds saxpy the way `way` says. */
static void load(const char *way, const void *image, CUfunction *fn) {
  enum { LOG = 16384 };
  static char log[LOG];
  CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[] = {log, (void *)(uintptr_t)(LOG - 1)};
  int with_log = strcmp(way, "library-log") == 0;
  CUmodule mod;
  CUlibrary lib;
  CUkernel k;
  if (strcmp(way, "module") == 0) {
    bench_cu_check(bench_cu.cuModuleLoadData(&mod, image), "cuModuleLoadData");
    bench_cu_check(bench_cu.cuModuleGetFunction(fn, mod, "saxpy"), "cuModuleGetFunction");
    return;
  }
  bench_cu_check(bench_cu.cuLibraryLoadData(&lib, image, with_log ? opt : NULL,
                                            with_log ? val : NULL, with_log ? 2 : 0, NULL, NULL, 0),
                 "cuLibraryLoadData");
  bench_cu_check(bench_cu.cuLibraryGetKernel(&k, lib, "saxpy"), "cuLibraryGetKernel");
  bench_cu_check(bench_cu.cuKernelGetFunction(fn, k), "cuKernelGetFunction");
}

static int warm_bare(const char *cubin, const char *way, double *part, long *faults,
                     double *lim_ms) {
  CUfunction fn;
  float a = 2.0f;
  CUdeviceptr x = 0, y = 0;
  int n = 0;
  void *params[] = {&a, &x, &y, &n};
  size_t size;
  long f0 = faults_now();
  uint64_t t0 = now_ns(), t1, t2, t3;
  void *image = read_file(cubin, &size);
  if (!image) return 1;
  t1 = now_ns();
  load(way, image, &fn);
  t2 = now_ns();
  bench_cu_check(bench_cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                 "cuLaunchKernel");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  t3 = now_ns();
  *faults = faults_now() - f0;
  part[0] = ms(t0, t1), part[1] = ms(t1, t2), part[2] = ms(t2, t3);
  *lim_ms = limits_ms();
  free(image);
  return 0;
}

static int warm(int argc, char **argv) {
  double part[3] = {0, 0, 0}, lim = 0;
  int compiles = 0, rc = 0;
  long faults = 0;
  uint64_t t0 = now_ns();
  double ctx;
  if (bench_driver_load() != 0 || bench_context() != 0) return 3;
  ctx = ms(t0, now_ns());
  if (strcmp(argv[1], "warm-parts") == 0) {
    double p[5];
    warm_cujit_parts(p, &faults);
    printf("%.6f %.6f %.6f %.6f %.6f %.6f %ld\n", ctx, p[0], p[1], p[2], p[3], p[4], faults);
    return 0;
  }
  if (strcmp(argv[1], "warm-cujit") == 0)
    warm_cujit(part, &faults, &compiles);
  else
    rc = argc > 3 ? warm_bare(argv[2], argv[3], part, &faults, &lim) : 2;
  printf("%.6f %.6f %d %d %.6f %.6f %.6f %ld %.6f\n", ctx, part[0] + part[1] + part[2], compiles,
         mapped("libnvrtc-builtins"), part[0], part[1], part[2], faults, lim);
  return rc;
}

/* ---- cold: a new process, an empty cache ---- */

static int cold_cujit(void) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  uint64_t t0 = now_ns(), t1, t2, t3;
  bench_check_ok(cujit_module_from_source(&m, bench_src_small, "cold.cu", NULL), "from_source");
  t1 = now_ns();
  bench_check_ok(cujit_module_get_function(m, "saxpy", &f), "get_function");
  t2 = now_ns();
  bench_check_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_f32(2.0f), cujit_ptr(0),
                              cujit_ptr(0), cujit_i32(0)),
                 "cujit_launch");
  bench_check_ok(cujit_synchronize(), "cujit_synchronize");
  t3 = now_ns();
  cujit_cache_get_stats(&s);
  printf("%.6f %.6f %.6f %.6f 0 %d\n", ms(t0, t3), ms(t0, t1), ms(t1, t2), ms(t2, t3),
         (int)s.compiles);
  cujit_module_destroy(m);
  return 0;
}

/* NVRTC's functions the bare side calls, from the library cujit would load. */
typedef struct bare_nvrtc {
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
  nvrtcResult (*cubin)(nvrtcProgram, char *);
  nvrtcResult (*destroy)(nvrtcProgram *);
} bare_nvrtc;

static int open_nvrtc(bare_nvrtc *nv) {
  void *h = dlopen(cujit_nvrtc_path(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return fprintf(stderr, "cujit-bench-start: %s\n", dlerror()), -1;
  *(void **)&nv->create = dlsym(h, "nvrtcCreateProgram");
  *(void **)&nv->compile = dlsym(h, "nvrtcCompileProgram");
  *(void **)&nv->cubin_size = dlsym(h, "nvrtcGetCUBINSize");
  *(void **)&nv->cubin = dlsym(h, "nvrtcGetCUBIN");
  *(void **)&nv->destroy = dlsym(h, "nvrtcDestroyProgram");
  return nv->create && nv->compile && nv->cubin_size && nv->cubin && nv->destroy ? 0 : -1;
}

static char *bare_compile(const char *arch, size_t *size) {
  char opt_arch[48];
  const char *opts[] = {opt_arch, "-no-cache"};
  bare_nvrtc nv;
  nvrtcProgram p;
  char *cubin = NULL;
  snprintf(opt_arch, sizeof opt_arch, "-arch=%s", arch);
  if (open_nvrtc(&nv) != 0 || nv.create(&p, bench_src_small, "cold.cu", 0, NULL, NULL) != 0)
    return NULL;
  if (nv.compile(p, 2, opts) == NVRTC_SUCCESS && nv.cubin_size(p, size) == NVRTC_SUCCESS &&
      (cubin = malloc(*size)) != NULL && nv.cubin(p, cubin) != NVRTC_SUCCESS) {
    free(cubin);
    cubin = NULL;
  }
  nv.destroy(&p);
  return cubin;
}

static int cold_bare(const char *arch) {
  CUmodule mod;
  CUfunction fn;
  float a = 2.0f;
  CUdeviceptr x = 0, y = 0;
  int n = 0;
  void *params[] = {&a, &x, &y, &n};
  size_t size = 0;
  char *cubin;
  uint64_t t0 = now_ns(), t1, t2, t3, t4;
  if (bench_driver_load() != 0) return 3;
  t1 = now_ns();
  if (bench_context() != 0) return 3;
  t2 = now_ns();
  if (!(cubin = bare_compile(arch, &size))) return fprintf(stderr, "bare compile failed\n"), 3;
  t3 = now_ns();
  bench_cu_check(bench_cu.cuModuleLoadData(&mod, cubin), "cuModuleLoadData");
  bench_cu_check(bench_cu.cuModuleGetFunction(&fn, mod, "saxpy"), "cuModuleGetFunction");
  bench_cu_check(bench_cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                 "cuLaunchKernel");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  t4 = now_ns();
  printf("%.6f %.6f %.6f %.6f %.6f 1\n", ms(t0, t4), ms(t0, t1), ms(t1, t2), ms(t2, t3),
         ms(t3, t4));
  free(cubin);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strncmp(mode, "warm-", 5) == 0) return warm(argc, argv);
  if (strcmp(mode, "cold-cujit") == 0) return cold_cujit();
  if (strcmp(mode, "cold-bare") == 0 && argc > 2) return cold_bare(argv[2]);
  fprintf(stderr, "usage: cujit-bench-start warm-cujit | warm-parts | warm-bare CUBIN WAY | "
                  "cold-cujit | "
                  "cold-bare ARCH\n");
  return 2;
}

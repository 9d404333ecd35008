/* bench.h - what the benchmark programs share: timing, statistics, results, child
 * processes, scratch directories and the raw driver entry points the baselines call.
 *
 * The benchmark is one program, cujit-bench, with one source file per measured concept.
 * Every goal is a ratio to a bare baseline (the CUDA driver or NVRTC called directly)
 * measured in the same run, cujit and baseline interleaved, medians over repetitions. */
#ifndef CUJIT_BENCH_H
#define CUJIT_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cujit.h"

/* ---- configuration (bench/main.c) ---- */

typedef struct bench_config {
  int quick;                /* env QUICK=1: a smoke run with few repetitions */
  int have_gpu;             /* a device is usable */
  char arch[32];            /* target of every compile, e.g. "sm_90" */
  char cc_arch[32];         /* the device's own arch ("" without a device) */
  char scratch[512];        /* private directory for caches, homes and files; removed at exit */
  char self[4096];          /* this program, for child processes */
  const char *cuda_include; /* the toolkit's include directory (for cuda_fp16.h) */
} bench_config;

extern bench_config bench_cfg;

/* Repetitions: `full` normally, `quick` under QUICK=1. */
int bench_reps(int full, int quick);

/* ---- time and statistics (bench/util.c) ---- */

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);
/* Median of v[0..n) (sorts v in place). n must be > 0. */
double bench_median(double *v, size_t n);
/* Smallest and largest of v[0..n). */
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);

/* ---- results (bench/report.c) ---- */

typedef enum bench_result { BENCH_PASS, BENCH_FAIL, BENCH_INFO, BENCH_SKIP } bench_result;

typedef struct bench_row {
  char group[16];  /* compile, memcache, start, herd, launch, inout, memory */
  char metric[80]; /* what was measured, for the table */
  double param;    /* size in bytes, process count or argument count; 0 if none */
  char unit[8];    /* of cujit and baseline: ms, us, ns, MiB, KiB, count */
  double cujit;    /* NAN when not measured */
  double baseline; /* NAN when there is none */
  double allowed;  /* the largest cujit figure the goal allows; NAN if none */
  char goal[96];   /* the goal in words */
  bench_result result;
} bench_row;

/* Records a row and prints a progress line to stderr. */
void bench_add(const bench_row *row);
/* A goal on the ratio cujit/baseline: passes when ratio <= limit. */
void bench_ratio(const char *group, const char *metric, double param, const char *unit,
                 double cujit, double baseline, double limit, const char *goal);
/* A figure with no goal (context creation, sizes without a goal, ...). */
void bench_info(const char *group, const char *metric, double param, const char *unit, double cujit,
                double baseline, const char *note);
/* A goal checked by the caller (absolute limits, counts); `allowed` is the largest cujit
 * figure it allows where there is one (for the plot), else NAN. */
void bench_check(const char *group, const char *metric, double param, const char *unit,
                 double cujit, double baseline, double allowed, int ok, const char *goal);
/* A metric that could not run, and why. */
void bench_skip(const char *group, const char *metric, const char *why);
/* Writes every row so far as CSV, the header's lines first as '#' comments. 0 on success. */
int bench_write_csv(const char *path, const char *header);
/* Prints the header and the table to stdout. Returns the number of missed goals. */
int bench_finish(const char *header);

/* ---- processes and files (bench/proc.c) ---- */

/* A child process of this program: argv[0] is replaced by bench_cfg.self. `env` is a
 * NULL-terminated list of "NAME=VALUE" overriding the inherited environment (may be NULL).
 * stdin_fd / stdout_fd, when >= 0, become the child's fd 0 / 1. Returns the pid or -1. */
pid_t bench_spawn(char *const argv[], char *const env[], int stdin_fd, int stdout_fd);
/* Waits for pid; returns its exit status (0..255) or -1 if it did not exit normally. */
int bench_wait(pid_t pid);
/* Runs a child to completion and reads what it printed (at most size-1 bytes, NUL-ended).
 * Returns its exit status, or -1. */
int bench_run_child(char *const argv[], char *const env[], char *out, size_t size);
/* The same for another program: argv[0] is its path, or a name looked for in PATH
 * ("python3"). Returns its exit status, or -1 when it could not be started. */
int bench_run_program(char *const argv[], char *const env[], char *out, size_t size);
/* A program built beside this one (cujit-bench-seed), its path written into `out`. */
void bench_sibling(const char *name, char *out, size_t size);
/* A file of the benchmark's sources (bench/NAME, the Python sides of the comparisons),
 * its path written into `out`; -1 when it is not there. */
int bench_source_file(const char *name, char *out, size_t size);
/* A fresh directory under bench_cfg.scratch named tag-N; written into `out`. */
int bench_mkdir(const char *tag, char *out, size_t size);
/* Writes a file whole. Returns 0 on success. */
int bench_write_file(const char *path, const void *data, size_t size);
/* Reads a file whole into a malloc'ed buffer. Returns NULL on failure. */
void *bench_read_file(const char *path, size_t *size);
/* Removes a directory tree (used for the scratch directory). */
void bench_rmtree(const char *path);
/* Resident set size of this process in bytes (/proc/self/statm). */
size_t bench_rss_bytes(void);
/* 1 when a mapped file of this process has `needle` in its path (/proc/self/maps). */
int bench_mapped(const char *needle);

/* ---- raw driver entry points for the baselines (bench/driver.c) ---- */

/* Every driver function a baseline calls, resolved through cujit_driver_get_symbol() (the
 * same cuGetProcAddress table version cujit uses); libcuda is not linked. */
/* clang-format off */
#define BENCH_CU_LIST(X)                                                                           \
  X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize)                \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemAlloc)     \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)           \
  X(cuStreamSynchronize) X(cuMemGetInfo) X(cuLibraryLoadData) X(cuLibraryUnload)                   \
  X(cuLibraryGetKernel) X(cuMemcpyDtoDAsync) X(cuMemHostAlloc) X(cuMemFreeHost)                  \
  X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemAllocFromPoolAsync) X(cuMemFreeAsync)              \
  X(cuPointerGetAttributes) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamBeginCapture)          \
  X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy)      \
  X(cuGraphDestroy) X(cuKernelGetFunction) X(cuDeviceGetAttribute)
/* clang-format on */

typedef struct bench_driver {
#define BENCH_CU_FIELD_(fn) __typeof__(fn) *fn;
  BENCH_CU_LIST(BENCH_CU_FIELD_)
#undef BENCH_CU_FIELD_
} bench_driver;

extern bench_driver bench_cu;

/* Loads the driver through cujit (cuInit included) and resolves bench_cu. 0 on success;
 * otherwise prints why to stderr. */
int bench_driver_load(void);
/* Retains device 0's primary context and makes it current. 0 on success. */
int bench_context(void);
/* Prints a failed driver call and exits (the benchmark cannot go on meaningfully). */
void bench_cu_check(CUresult r, const char *what);
/* Prints a failed cujit call and exits. */
void bench_check_ok(cujit_status st, const char *what);

/* Bare NVRTC, as a program without cujit compiles: create the program, add the name
 * expression (may be NULL), compile with `argv`, read the log, the PTX, the CUBIN and the
 * lowered name. Returns the CUBIN (malloc'ed; *size its size), or NULL after printing the
 * log to stderr. */
void *bench_nvrtc_cubin(const char *source, const char *name, const char *const *argv, int argc,
                        const char *name_expr, size_t *size);
/* Writes the CUBIN of `source` for the device's architecture (bare NVRTC, -no-cache) to
 * `path`, for a baseline that loads it from a file. 0 on success. */
int bench_write_cubin(const char *source, const char *name, const char *path);

/* What cujit gives NVRTC, recorded so that a baseline compiles exactly that (bench/nvrtc.c
 * defines NVRTC's entry points that take a program and forwards them). After
 * bench_nvrtc_record_start(), the next program created is recorded: its source, name,
 * name expression and compile options. */
void bench_nvrtc_record_start(void);
/* Writes the record to `path`. 0 on success; -1 when nothing was compiled since the start
 * (or a program with headers or several name expressions, which the file cannot hold). */
int bench_nvrtc_record_write(const char *path);
/* Compiles a written record with bare NVRTC (bench_nvrtc_cubin) and returns the
 * milliseconds that took, reading the file excluded; NAN when it fails. */
double bench_nvrtc_replay(const char *path);

/* ---- shared kernels (bench/kernels.c) ---- */

extern const char bench_src_small[]; /* extern "C" saxpy(float, const float *, float *, int) */
extern const char bench_src_fp16[];  /* template scale<T, N>(T *, T, int), cuda_fp16.h */
#define BENCH_FP16_EXPR "scale<__half, 4>"
extern const char bench_src_seed[]; /* multiply_them(float *dest, float *a, float *b) */

/* ---- the benchmarks, one per file; each adds its rows ---- */

void bench_compile(void);  /* compile.c: cold compile vs bare NVRTC, first compile */
void bench_memcache(void); /* memcache.c: memory-cache hit */
void bench_start(void);    /* start.c: warm start from the disk cache in a fresh process */
void bench_herd(void);     /* herd.c: N processes on an empty vs a warm cache */
void bench_launch(void);   /* launch.c: launch overhead */
void bench_inout(void);    /* inout.c: In/Out round trips */
void bench_memory(void);   /* memory.c: 10^6 In/Out launches do not grow memory */
void bench_pch(void);      /* pch.c: CUB kernels in one process, with and without PCH */
int bench_pch_child(int argc, char **argv);
void bench_batch(void); /* batch.c: distinct kernels compiled at once vs one by one */
int bench_batch_child(int argc, char **argv);
void bench_cli(void);      /* cli.c: `cujit compile` on a cache hit in a new process */
void bench_arrays(void);   /* arrays.c: array operations against the bandwidth floor */
void bench_multigpu(void); /* multigpu.c: devices side by side, a module on a second device */
void bench_firstio(void);  /* firstio.c: a new process's first In/Out launch; a seed-like one */
void bench_graph(void);    /* graph.c: graph replays vs the driver's, one by one, CuPy's */

/* Child-process entry points (argv after "--child <mode>"); return the exit status. */
int bench_compile_child(int argc, char **argv);
int bench_herd_child(int argc, char **argv);
int bench_arrays_child(int argc, char **argv);
int bench_firstio_child(int argc, char **argv);

#endif

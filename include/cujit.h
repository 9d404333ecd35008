/**
 * @file cujit.h
 * @brief cujit: compile CUDA C at run time, cache it, find kernels by name, launch them.
 *
 * This header is the manual: every function is documented where it is declared, in
 * sections in the order a program meets them. Everything here is stable but sections 13,
 * 14 and 19 and the Redis tier; the array layer, in cujit_array.h, is experimental too (see
 * "Stability" below).
 *
 * Contents
 *   - Conventions: errors, ownership, structs that grow, names, stability
 *   - 1. Version and errors
 *   - 2. Compiling: a string or a file into a module
 *   - 3. Kernels and launching: cujit_arg, In/Out buffers, cujit_launch()
 *   - 4. Memory and streams
 *   - 5. The cache
 *   - 6. Typed calls and kernels as C function pointers
 *   - 7. Many kernels at once: batches and jobs
 *   - 8. Compiling once for many processes: export, import, bundles
 *   - 9. Linking several parts into one module
 *   - 10. Prebuilt code: PTX, CUBIN, fatbins, bundles
 *   - 11. Devices, NVRTC and the driver
 *   - 12. Logging
 *   - 13. Textures and surfaces
 *   - 14. Questioning the cache: explain and verify
 *   - cujit_array.h (experimental): 15. Device arrays, 16. Array operations,
 *     17. Reductions, scans and random arrays, 18. Kernel generators
 *   - 19. Graphs: capture work once, launch it many times
 *
 * A first program: compile a string, find its kernel, launch it with an input and an
 * output buffer (copied to the device before the kernel and back after it), check the
 * status. Build it as the code after it says.
 * @code
 * #include <stdio.h>
 * #include <cujit.h>
 *
 * static const char source[] =
 *     "__global__ void add(float *out, const float *a, const float *b, int n) {\n"
 *     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
 *     "  if (i < n) out[i] = a[i] + b[i];\n"
 *     "}\n";
 *
 * int main(void) {
 *   float a[1000], b[1000], out[1000];
 *   cujit_module *mod = NULL;
 *   cujit_function *add = NULL;
 *   cujit_status st;
 *   for (int i = 0; i < 1000; i++) a[i] = (float)i, b[i] = 2.0f * (float)i;
 *   st = cujit_module_from_source(&mod, source, "add.cu", NULL); // or from the cache
 *   if (st == CUJIT_OK) st = cujit_module_get_function(mod, "add", &add);
 *   if (st == CUJIT_OK) // each argument checked against add's parameters
 *     st = CUJIT_LAUNCH(add, CUJIT_DIM3(4), CUJIT_DIM3(256), cujit_out(out, sizeof out),
 *                       cujit_in(a, sizeof a), cujit_in(b, sizeof b), 1000);
 *   if (st == CUJIT_OK)
 *     printf("out[999] = %g\n", out[999]);
 *   else
 *     fprintf(stderr, "%s: %s\n", cujit_status_name(st), cujit_last_error());
 *   cujit_module_destroy(mod);
 *   return st == CUJIT_OK ? 0 : 1;
 * }
 * @endcode
 * Where cujit came from the packages (in /usr), it builds with
 * `cc first.c $(pkg-config --cflags --libs cujit)`. Installed under a prefix of your own
 * (`cmake --install build --prefix $HOME/.local`, say), pkg-config must be told where
 * cujit.pc is, and the program where libcujit.so is: a run path, as below, or
 * LD_LIBRARY_PATH=$HOME/.local/lib when it runs; without either it does not start (the
 * loader cannot find libcujit.so).
 * @code{.sh}
 * export PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig
 * cc first.c $(pkg-config --cflags --libs cujit) -Wl,-rpath,$(pkg-config --variable=libdir cujit)
 * @endcode
 */
#ifndef CUJIT_H
#define CUJIT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcpy in the inline argument constructors */
#include <cuda.h>   /* types only (CUdeviceptr, CUstream, CUresult); libcuda is not linked */

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the functions the library exports (default visibility when cujit is built with
 *  hidden visibility, as it is). */
#if defined(_WIN32)
#  define CUJIT_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define CUJIT_API __attribute__((visibility("default")))
#else
#  define CUJIT_API
#endif

/* =======================================================================================
 * Conventions
 * ===================================================================================== */

/** @defgroup conventions Conventions
 * What every function of cujit follows. The manual (docs/manual/conventions.md) gives the
 * naming scheme, examples and the details; here are the rules a call's comment relies on.
 *
 * Errors. Functions return cujit_status; CUJIT_OK (0) is success. On failure the
 * calling thread's detail (cujit_last_error()) says what went wrong and what to do.
 * cujit_error_set_handler() makes every failing call also call a handler (the error mode).
 *
 * Ownership. Handles are opaque; every `*_destroy()` accepts NULL. "Owned by X" in a
 * comment says who frees a returned pointer and how long it lives: "owned by the caller,
 * free with cujit_free()" hands it over; "owned by the module" lives until
 * cujit_module_destroy(); "static storage" lives as long as the process. Strings and
 * arrays passed in are copied unless a comment says they must outlive something.
 *
 * Names. Public names begin with cujit_ or CUJIT_; a name that ends in `_` is the
 * header's own, used by its macros and inline functions, and never called.
 *
 * Silence. Nothing is printed unless asked (cujit_log_set_callback() or env CUJIT_LOG).
 * No driver is needed to start: libcuda.so.1 is loaded on first device use, so a program
 * starts and compiles kernels on a machine without one.
 *
 * fork(). A fork made while other threads use cujit waits (at most 5 s, then 5 s more)
 * for their NVRTC calls and cujit's locks, so that the child can compile, use the cache
 * and end in the error mode; a child forked during a compile fails its compiles with
 * CUJIT_ERROR_NVRTC (cache hits still work). A child uses neither its parent's CUDA
 * context nor its compile jobs (docs/manual/compiling.md, "Compiling and fork()").
 *
 * Stability. What cujit.h declares is stable within a minor version: from one
 * 0.N.x release to the next, names, signatures and meanings stay as they are and only
 * additions come; a change comes with a new minor version and is listed in the CHANGELOG.
 * Experimental, so that any 0.x release may change them: the sections whose banner says
 * so (13, 14 and 19), functions whose comment begins with "Experimental" (the Redis tier),
 * and the array layer (cujit_array.h). docs/manual/stability.md says why.
 *
 * ### Structs that grow
 *
 * Every struct that a program fills for cujit, or cujit fills for a program, begins with
 * `size_t size`. Start it from its `*_INIT` macro (size set, every other field at its
 * default) or zero it (size 0 is the struct's first version), then set fields by name:
 *
 *     cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
 *     o.stream = s;
 *
 * A program built against an older header keeps working with a newer libcujit; one built
 * against a newer header works with an older libcujit while the fields it does not know
 * are zero, else the call fails with CUJIT_ERROR_NOT_SUPPORTED naming the struct. Any
 * other size (an uninitialised struct, a positional initialiser) is refused with
 * CUJIT_ERROR_INVALID_VALUE. cujit_arg (built by its constructors only), cujit_header and
 * cujit_dim3 have no size field.
 */

/* =======================================================================================
 * 1. Version and errors                                                           stable
 * ===================================================================================== */

/** @defgroup errors 1. Version and errors
 *  The library's version, the status every function returns, the detail of the calling
 *  thread's last failure, and cujit_free() for what cujit allocates for the caller.
 *  @{ */

#define CUJIT_VERSION_MAJOR 0 /**< the major version of this header */
#define CUJIT_VERSION_MINOR 3 /**< the minor version of this header */
#define CUJIT_VERSION_PATCH 0 /**< the patch version of this header */
/** This header's version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (compare with
 *  cujit_version()). */
#define CUJIT_VERSION_NUMBER \
  (CUJIT_VERSION_MAJOR * 10000 + CUJIT_VERSION_MINOR * 100 + CUJIT_VERSION_PATCH)
#define CUJIT_VERSION_STRING "0.3.0" /**< this header's version as "MAJOR.MINOR.PATCH" */

/** @return CUJIT_VERSION_NUMBER of the library actually linked (compare with the header's). */
CUJIT_API unsigned cujit_version(void);
/** @return the library's version as "MAJOR.MINOR.PATCH". Static storage. */
CUJIT_API const char *cujit_version_string(void);

/** The status codes, one `X(name, number, message)` per code: one table yields the enum,
 *  the names and the messages. Numbers never change. Expand it with a macro of your own
 *  to list every status. */
#define CUJIT_STATUS_MAP(X)                                                            \
  X(OK, 0, "success")                                                                  \
  X(ERROR_INVALID_VALUE, 1, "an argument is invalid")                                  \
  X(ERROR_OUT_OF_MEMORY, 2, "out of host memory")                                      \
  X(ERROR_INVALID_SOURCE, 3, "the source is NULL or empty")                            \
  X(ERROR_FILE, 4, "a file could not be read or written")                              \
  X(ERROR_INVALID_OPTION, 5, "a compile option is invalid")                            \
  X(ERROR_COMPILE, 6, "the source did not compile")                                    \
  X(ERROR_NVRTC, 7, "NVRTC failed")                                                    \
  X(ERROR_NO_DRIVER, 8, "no CUDA driver was found")                                    \
  X(ERROR_NO_DEVICE, 9, "no CUDA device is available")                                 \
  X(ERROR_DRIVER, 10, "a CUDA driver call failed")                                     \
  X(ERROR_LOAD, 11, "the module could not be loaded on the device")                    \
  X(ERROR_NOT_FOUND, 12, "no such kernel or variable")                                 \
  X(ERROR_AMBIGUOUS, 13, "the name matches several kernels")                           \
  X(ERROR_INVALID_ARGS, 14, "the arguments do not match the kernel's parameters")      \
  X(ERROR_LAUNCH_CONFIG, 15, "the launch configuration exceeds the device's limits")   \
  X(ERROR_LAUNCH_FAILED, 16, "the kernel failed while running")                        \
  X(ERROR_DEVICE_MEMORY, 17, "out of device memory")                                   \
  X(ERROR_SIGNATURE, 18, "the kernel signature could not be parsed or does not match") \
  X(ERROR_NOT_SUPPORTED, 19, "not supported by this driver or NVRTC")                  \
  X(ERROR_CACHE, 20, "a cache operation failed")                                       \
  X(ERROR_NO_NVRTC, 21, "NVRTC was not found")                                         \
  X(ERROR_CANCELLED, 22, "the compile was cancelled or ran out of time")               \
  X(ERROR_LINK, 23, "the device link failed")                                          \
  X(ERROR_NO_NVJITLINK, 24, "nvJitLink was not found")                                 \
  X(ERROR_CAPTURE, 25, "not possible while a stream is being captured into a graph")

/** What every function that can fail returns: CUJIT_OK (0), or the reason it failed
 *  (cujit_last_error() says more). */
typedef enum cujit_status {
#define CUJIT_STATUS_ENUM_(name, num, msg) CUJIT_##name = num,
  CUJIT_STATUS_MAP(CUJIT_STATUS_ENUM_)
#undef CUJIT_STATUS_ENUM_
} cujit_status;

/** @param status  any value.
 *  @return the status's name, e.g. "CUJIT_ERROR_COMPILE"; "CUJIT_UNKNOWN_STATUS" for an
 *  unknown value. Static storage. */
CUJIT_API const char *cujit_status_name(cujit_status status);
/** @param status  any value.
 *  @return a one-line description of the status. Static storage. */
CUJIT_API const char *cujit_status_string(cujit_status status);

/** @return the detail of the calling thread's most recent failed cujit call: what went
 *  wrong and what to do (for a compile error, the module name, the options used and the
 *  full NVRTC log). "" when the thread has seen no failure. Owned by cujit; valid until
 *  this thread's next cujit call. */
CUJIT_API const char *cujit_last_error(void);
/** @return the status of the calling thread's most recent failed call (CUJIT_OK if none). */
CUJIT_API cujit_status cujit_last_status(void);
/** @return the CUresult behind the thread's most recent failure, or CUDA_SUCCESS when
 *  the driver was not involved. */
CUJIT_API CUresult cujit_last_cu_result(void);
/** @return the nvrtcResult (as int) behind the thread's most recent failure, or 0. */
CUJIT_API int cujit_last_nvrtc_result(void);
/** Frees memory cujit allocated for the caller (a blob of cujit_module_export(), a bundle,
 *  a description).
 *  @param p  what cujit gave; NULL is fine. */
CUJIT_API void cujit_free(void *p);

/** What a failing cujit call hands to the error handler (cujit_error_set_handler()), on
 *  the thread that made the call, just before the call returns.
 *  @param status  the status the call returns (never CUJIT_OK).
 *  @param call    the public call's name as the program wrote it, e.g.
 *                 "cujit_module_from_source" ("cujit_launch" for CUJIT_LAUNCH(),
 *                 "cujit_call" for cujit_call()); for a call through a pointer made by
 *                 cujit_function_bind(), the kernel's name and " (bound)". Static storage
 *                 or valid during the call.
 *  @param detail  cujit_last_error(): what went wrong and what to do. Valid during the
 *                 call.
 *  @param user    what cujit_error_set_handler() was given. */
typedef void (*cujit_error_fn)(cujit_status status, const char *call, const char *detail,
                               void *user);

/** Sets the error mode: from now on every cujit call that fails calls `fn` once, with the
 *  call's name, its status and its detail, before it returns its status (MPI's error
 *  handlers are the model). Pass cujit_error_exit() to end the program at the first
 *  failure, with the failure on stderr, so that a program need not check each call:
 *
 *      cujit_error_set_handler(cujit_error_exit, NULL);
 *
 *  A handler that returns lets the call return its status as usual. It is called only for
 *  a call the program made, never for what cujit does inside (a cache miss that compiles,
 *  a probe of a kernel's types), and costs nothing on a call that succeeds. Without a
 *  handler (the default) nothing is called and nothing is printed: every call returns
 *  its status. The handler may call cujit (it sees that call's own failures too); it must
 *  be safe on every thread that calls cujit. It covers every function that returns a
 *  cujit_status but cujit_last_status() (docs/manual/errors.md, "The error mode").
 *  Env CUJIT_ERRORS=exit makes cujit_error_exit() the handler of a program that sets none
 *  (read at the first failure; `return`, the default, sets none), for quick scripts; any
 *  other value is warned about once, at the first call that sets anything up.
 *  Thread-safe: the pair (fn, user) is replaced at once for every thread.
 *  @param fn    the handler; NULL for none (every call returns its status, and
 *               CUJIT_ERRORS no longer chooses one).
 *  @param user  passed to fn. */
CUJIT_API void cujit_error_set_handler(cujit_error_fn fn, void *user);

/** The exit status cujit_error_exit() ends a process with when the failure is that no GPU
 *  can be used here (CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE): 77, the status that
 *  CTest's SKIP_RETURN_CODE and Automake's test harness take for "skipped", so that a test
 *  or a script tells "no GPU here" from a failure by the status alone. Every other failure
 *  ends it with status 1. */
#define CUJIT_EXIT_NO_GPU 77

/** The ready handler of the error mode: prints `cujit: <call>: <STATUS_NAME>: <detail>`
 *  and a newline to stderr (a control character or a byte that is not UTF-8 in it written
 *  as `\x1b`, `\xff`), then ends the process at once, whatever its other threads are doing
 *  (compiling in NVRTC, linking, copying, waiting on Redis), with status 1, or
 *  CUJIT_EXIT_NO_GPU (77) when `status` is CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE
 *  (no GPU here: a test reports a skip):
 *  - stdio's streams are flushed, as exit() flushes them (stdout and stderr without their
 *    locks when another thread has held one for a second, as exit() does);
 *  - what cujit keeps for the process is put away: its directory of precompiled headers is
 *    removed, the keys' locks it holds in the remote tier are given back, the disk cache's
 *    hits it counted are written;
 *  - the functions registered with at_quick_exit() run, and the process ends with
 *    quick_exit() and that status: atexit() functions and static destructors (the
 *    program's, NVRTC's, the driver's) do not run, since they would tear down what the
 *    other threads still use;
 *  - if the flush and cujit's part have not finished within 5 s (a stream held by a thread
 *    blocked on a full pipe), the process ends without the rest, with the same status (the
 *    exit_group system call itself, which no sanitizer's _exit() wraps).
 *  A failure on another thread meanwhile waits for that end and prints nothing; a forked
 *  child ends alone. The compile workers the process started exit when they see it gone
 *  (at NVRTC's next check); the disk cache's key locks end with the process, and the next
 *  process takes a lock file left behind at once.
 *  @param status  the failure's status.
 *  @param call    the failing call's name.
 *  @param detail  its detail.
 *  @param user    unused. */
CUJIT_API void cujit_error_exit(cujit_status status, const char *call, const char *detail,
                                void *user);

/* What the error mode's macros (at the end of this header) call when a call failed: runs
 * the handler, if there is one, and returns `status`. */
CUJIT_API cujit_status cujit_error_raise_(cujit_status status, const char *call);
static inline cujit_status cujit_checked_(cujit_status status, const char *call) {
  return status == CUJIT_OK ? status : cujit_error_raise_(status, call);
}

/** @} */

/* =======================================================================================
 * 2. Compiling                                                                    stable
 * ===================================================================================== */

/** @defgroup compiling 2. Compiling
 *  CUDA C, from a string or a file, into a module: cujit_module_from_source() and
 *  cujit_module_from_file() compile with NVRTC (or take the module from the cache: see
 *  @ref cache "The cache"), with the options of cujit_options; what the compile made is
 *  read back with the results below. Compiling needs no GPU.
 *  @{ */

/** An in-memory header that `#include "name"` resolves to. Both strings are copied. */
typedef struct cujit_header {
  const char *name;   /**< include name, such as "params.h" */
  const char *source; /**< its text */
} cujit_header;

/** Compile-option flags (cujit_options.flags). */
enum {
  CUJIT_OPT_NO_CACHE = 1u << 0,            /**< neither read nor write the disk and memory caches */
  CUJIT_OPT_NVRTC_CACHE = 1u << 1,         /**< leave NVRTC's own cache on (it is off by default:
                                               cujit caches compiled modules itself) */
  CUJIT_OPT_NO_TOOLKIT_INCLUDES = 1u << 2, /**< do not search the CUDA toolkit's include
                                       directories (by default they are searched after the
                                       caller's, with built-in stdint.h, stddef.h, limits.h
                                       and float.h), so that `<cuda_fp16.h>`,
                                       `<curand_kernel.h>`, `<cub/...>` and `<cuda/std/...>`
                                       need no options */
  CUJIT_OPT_NO_EARLY_CONTEXT = 1u << 3     /**< cujit_module_from_source() and _from_file():
                                           on a cache miss, do not start the device's context
                                           beside the compile (for a program that compiles
                                           and never launches; see cujit_module_from_source()).
                                           Changes nothing the compile makes. */
};

/** Options for a compile. Start from CUJIT_OPTIONS_INIT (or zero it) for the defaults,
 *  or pass NULL for all defaults. Lists are NULL-terminated arrays of strings; every
 *  string is copied, so the caller's storage need only live during the call. */
typedef struct cujit_options {
  size_t size; /**< sizeof, set by CUJIT_OPTIONS_INIT; or 0 */
  /** Target: "sm_90" (CUBIN + PTX), "compute_90" (PTX only), or NULL for the current
   *  device's sm_XX clamped to what this NVRTC supports; with no device and no arch,
   *  NVRTC's default virtual architecture (PTX only). Env CUJIT_ARCH overrides NULL.
   *  Suffixed targets: 'a' (architecture-specific, "sm_90a") from 90 on, 'f' (family,
   *  "sm_100f") from 100 on; others are CUJIT_ERROR_INVALID_OPTION. */
  const char *arch;
  const char *const *include_dirs;     /**< -I directories, searched in order */
  const char *const *defines;          /**< "NAME" or "NAME=VALUE" */
  const char *const *nvrtc_options;    /**< passed to NVRTC as they are ("-use_fast_math") */
  const cujit_header *headers;         /**< in-memory headers, ended by {NULL, NULL} */
  const char *const *name_expressions; /**< C++ names to lower, such as `"scale<float>"` */
  unsigned flags;                      /**< CUJIT_OPT_* */
  /** Seconds an NVRTC compile may take; 0 for no limit. Past it the compile is stopped
   *  and the call returns CUJIT_ERROR_CANCELLED, saying after how long. NVRTC looks only
   *  between its phases, and it parses the whole source (with every header) in one, so a
   *  compile ends at the first check after the limit, not at the limit: a CUB kernel
   *  whose time goes into parsing its headers may run to its end. A compile in a worker
   *  process (see cujit_batch_compile()) ends half a second after the limit at the
   *  latest: a worker that has not stopped by itself by then is killed. A compile done
   *  again without a precompiled header keeps the limit counted from its first try. A hit
   *  found at once is never limited; a wait for another process's or machine's compile of
   *  the same source is (past the limit it returns CUJIT_ERROR_CANCELLED too). Not part of
   *  the cache key (it cannot change the output). Negative or NaN is
   *  CUJIT_ERROR_INVALID_OPTION. An NVRTC that cannot stop a compile (one without
   *  nvrtcSetFlowCallback) compiles to the end in this process, as if neither this nor
   *  `cancel` were set, with one warning per process (a limit is advice, and the output is
   *  the same); a compile in a worker is still ended by killing the worker. */
  double time_limit_s;
  /** Called at NVRTC's checks during a compile (between its phases, as time_limit_s is),
   *  on the thread that called cujit, or with NVRTC's -split-compile option also on its
   *  own threads, perhaps several at once; NULL for none. Return nonzero to stop the
   *  compile: the call then returns CUJIT_ERROR_CANCELLED and the hook is not asked again
   *  for that compile. It must return quickly and must not call cujit. Never called on a
   *  hit found at once; polled while the call waits for another process's or machine's
   *  compile of the same source. Not part of the cache key. */
  int (*cancel)(void *user);
  void *cancel_user; /**< passed to `cancel` */
} cujit_options;
/** cujit_options with its size set and every other field at its default. */
#define CUJIT_OPTIONS_INIT \
  { sizeof(cujit_options), NULL, NULL, NULL, NULL, NULL, NULL, 0, 0.0, NULL, NULL }

/** A compiled module. A `cujit_module *` is a handle, not an address: cujit never gives
 *  the same handle twice in a process, so every function taking one refuses a destroyed
 *  module (or anything cujit did not make) with CUJIT_ERROR_INVALID_VALUE naming the
 *  function, or returns what it returns for NULL, even after a new module has taken its
 *  place; never dereference one. At most 2^24 modules are live at once. */
typedef struct cujit_module cujit_module;

/** Compiles CUDA C source (or takes it from the cache). Needs no GPU: loading onto a
 *  device happens on first use of a kernel or variable.
 *
 *  On a cache miss in a process with no context for the device it would use, this (and
 *  cujit_module_from_file()) makes that device's primary context on a thread of cujit's
 *  own while it compiles; the first call that needs the context waits for it and reports
 *  its failure, as without. A thread with a context of its own current gets none made.
 *  CUJIT_OPT_NO_EARLY_CONTEXT or env CUJIT_EARLY_CONTEXT=0 turns it off (the manual's
 *  "Many GPUs and many processes" says more).
 *  @param out     receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param source  NUL-terminated CUDA C; copied.
 *  @param name    shown in logs and compile errors like a file name ("kernels.cu");
 *                 NULL means "source.cu". Copied.
 *  @param opts    NULL for defaults.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_SOURCE for NULL or empty source;
 *          CUJIT_ERROR_INVALID_OPTION naming a bad option; CUJIT_ERROR_COMPILE with NVRTC's
 *          log (line numbers match `source`) in cujit_last_error(); CUJIT_ERROR_OUT_OF_MEMORY;
 *          CUJIT_ERROR_CANCELLED when opts->cancel asked to stop or opts->time_limit_s
 *          passed (saying which; nothing is cached, and a later compile starts afresh);
 *          CUJIT_ERROR_INVALID_VALUE or CUJIT_ERROR_NOT_SUPPORTED for opts->size (see
 *          "Structs that grow"). */
CUJIT_API cujit_status cujit_module_from_source(cujit_module **out, const char *source,
                                                const char *name, const cujit_options *opts);

/** Reads a .cu file and compiles it as cujit_module_from_source() does, with the file's
 *  path as the name and its directory first on the include path, so `#include "x.h"`
 *  beside it works.
 *  @param out   receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param path  the file; copied.
 *  @param opts  NULL for defaults.
 *  @return as cujit_module_from_source(), plus CUJIT_ERROR_FILE when it cannot be read or
 *  is not a regular file (a FIFO, directory or device is refused, never waited on), and
 *  CUJIT_ERROR_INVALID_SOURCE when it holds a NUL byte (the offset is in the detail). */
CUJIT_API cujit_status cujit_module_from_file(cujit_module **out, const char *path,
                                              const cujit_options *opts);

/** Frees the module, its loaded device images and every cujit_function and bound
 *  function pointer obtained from it. NULL is fine. A module destroyed already (or
 *  anything cujit did not make) frees nothing: the call only sets the thread's error
 *  detail (cujit_last_error()) and logs it at debug level. Its cujit_function pointers
 *  are freed with it and using one afterwards is undefined, as using freed memory is:
 *  they are what cujit_launch() and cujit_call() take, and a launch does not pay for a
 *  lookup; the module handle is the checked one. Must not race with launches of its
 *  kernels or with another thread's call on the module (a module must not be destroyed
 *  while another thread uses it). Never call it from atexit handlers or static destructors at
 * process exit.
 *  @param mod  the module; NULL is fine. */
CUJIT_API void cujit_module_destroy(cujit_module *mod);

/** @name What a module holds
 *  The results below return what they return for NULL (NULL, 0) for a destroyed module.
 *  @{ */

/** @param mod   the module.
 *  @param size  if non-NULL, receives the PTX's length without the NUL.
 *  @return the PTX (NUL-terminated); "" (size 0) for a module made from a CUBIN or
 *  fatbin. Owned by the module. */
CUJIT_API const char *cujit_module_ptx(const cujit_module *mod, size_t *size);
/** @param mod   the module.
 *  @param size  if non-NULL, receives the CUBIN's size (0 when there is none).
 *  @return the CUBIN when a real architecture (sm_XX) was targeted or the module was made
 *  from a CUBIN, else NULL. Owned by the module. */
CUJIT_API const void *cujit_module_cubin(const cujit_module *mod, size_t *size);
/** @param mod  the module.
 *  @return NVRTC's log of the successful compile (warnings), "" when there were none.
 *  Owned by the module. */
CUJIT_API const char *cujit_module_log(const cujit_module *mod);
/** @param mod  the module.
 *  @return the architecture compiled for ("sm_90", "compute_75", ...), or what a prebuilt
 *  image was built for (see cujit_module_from_image()). Owned by the module. */
CUJIT_API const char *cujit_module_arch(const cujit_module *mod);
/** @param mod  the module.
 *  @return the module's name as given (or the file path). Owned by the module. */
CUJIT_API const char *cujit_module_name(const cujit_module *mod);
/** Looks up the lowered (mangled) name of a name expression given in the options.
 *  @param mod              the module.
 *  @param name_expression  as given in cujit_options.name_expressions.
 *  @param lowered          receives the name, owned by the module.
 *  @return CUJIT_OK, or CUJIT_ERROR_NOT_FOUND when the expression was not in the options;
 *          CUJIT_ERROR_INVALID_VALUE for a NULL argument or a destroyed module. */
CUJIT_API cujit_status cujit_module_get_lowered_name(const cujit_module *mod,
                                                     const char *name_expression,
                                                     const char **lowered);
/** @param mod  the module.
 *  @return the number of name expressions; with cujit_module_name_expression() lists them. */
CUJIT_API size_t cujit_module_name_expression_count(const cujit_module *mod);
/** @param mod      the module.
 *  @param i        an index below cujit_module_name_expression_count().
 *  @param lowered  if non-NULL, receives the expression's lowered name, owned by the
 *                  module.
 *  @return the i-th name expression; NULL if i is out of range. Owned by the module. */
CUJIT_API const char *cujit_module_name_expression(const cujit_module *mod, size_t i,
                                                   const char **lowered);

/** @} */

/** @} */

/* =======================================================================================
 * 3. Kernels and launching                                                        stable
 * ===================================================================================== */

/** @defgroup launching 3. Kernels and launching
 *  A kernel found by name (cujit_module_get_function()), its variables and attributes,
 *  and its launch: cujit_launch() and CUJIT_LAUNCH() take the arguments as cujit_arg
 *  values made by the constructors (cujit_i32(), cujit_f32(), cujit_ptr(), ...), and
 *  CUJIT_LAUNCH() takes numbers too, each checked against the kernel's parameter (a number
 *  converted to its type) before anything runs. An In/Out buffer
 *  (cujit_in(), cujit_out(), cujit_inout()) is host memory that cujit copies to the
 *  device before the kernel and back after it. These need a device.
 *  @{ */

/** A kernel of a module (cujit_module_get_function()). Unlike a module handle it is the
 *  kernel's address and is not checked: using one after its module was destroyed is
 *  undefined (see cujit_module_destroy()). */
typedef struct cujit_function cujit_function;

/** Finds a kernel. Loads the module onto the current device first if needed (the caller's
 *  current context, else the primary context of env CUJIT_DEVICE, default 0; a
 *  CUJIT_DEVICE that is not digits only makes every call that may choose a device, and
 *  every compile that targets the device, fail with CUJIT_ERROR_INVALID_VALUE).
 *  @param mod  the module.
 *  @param name a plain kernel name ("multiply_them", found also without extern "C" when
 *         unambiguous), a name expression from the options (`"scale<float>"`), or a
 *         lowered name.
 *  @param fn receives the function, owned by the module (lives until cujit_module_destroy).
 *         It is not a checked handle: using it after cujit_module_destroy() is undefined,
 *         so that launching through it costs no lookup (see cujit_module_destroy()).
 *  @return CUJIT_OK; CUJIT_ERROR_NOT_FOUND listing the module's kernels;
 *          CUJIT_ERROR_AMBIGUOUS listing the candidates (both found without a GPU, from the
 *          compiled code); CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE when there is no
 *          GPU to load the module on; CUJIT_ERROR_LOAD with the JIT log;
 *          CUJIT_ERROR_INVALID_VALUE for a NULL argument or a destroyed module. */
CUJIT_API cujit_status cujit_module_get_function(cujit_module *mod, const char *name,
                                                 cujit_function **fn);

/** Address and size of a __device__ or __constant__ variable on the current device
 *  (loading the module there first, as cujit_module_get_function() does).
 *  @param mod    the module.
 *  @param name   a plain name or a name expression.
 *  @param dptr   receives its device address (0 on failure).
 *  @param bytes  if non-NULL, receives its size.
 *  @return CUJIT_OK; CUJIT_ERROR_NOT_FOUND when the module has no such variable;
 *          CUJIT_ERROR_INVALID_VALUE for a NULL or empty name, a NULL dptr or a destroyed
 *          module; the load errors of cujit_module_get_function() (CUJIT_ERROR_NO_DRIVER,
 *          CUJIT_ERROR_NO_DEVICE, CUJIT_ERROR_LOAD). */
CUJIT_API cujit_status cujit_module_get_global(cujit_module *mod, const char *name,
                                               CUdeviceptr *dptr, size_t *bytes);
/** Copies `bytes` from host memory into the global `name`; returns when the copy is done.
 *  @param mod    the module.
 *  @param name   as for cujit_module_get_global().
 *  @param src    the host bytes.
 *  @param bytes  their number: at most the variable's size.
 *  @return as cujit_module_get_global(), plus CUJIT_ERROR_INVALID_VALUE when bytes exceeds
 *          the variable's size or src is NULL; CUJIT_ERROR_DRIVER when the copy fails. */
CUJIT_API cujit_status cujit_module_write_global(cujit_module *mod, const char *name,
                                                 const void *src, size_t bytes);
/** Copies `bytes` of the global `name` into host memory.
 *  @param mod    the module.
 *  @param name   as for cujit_module_get_global().
 *  @param dst    receives the bytes.
 *  @param bytes  their number: at most the variable's size.
 *  @return as cujit_module_write_global(). */
CUJIT_API cujit_status cujit_module_read_global(cujit_module *mod, const char *name, void *dst,
                                                size_t bytes);

/** A kernel's attributes, written by cujit_function_get_attrs(). Start from
 *  CUJIT_FUNCTION_ATTRS_INIT (or zero it): cujit writes the fields up to `size`. */
typedef struct cujit_function_attrs {
  size_t size;               /**< sizeof, set by CUJIT_FUNCTION_ATTRS_INIT; or 0 */
  int num_regs;              /**< registers per thread */
  int static_shared_bytes;   /**< static shared memory per block */
  int max_threads_per_block; /**< the most threads a block of this kernel may have */
  int local_bytes;           /**< local memory per thread */
  int const_bytes;           /**< constant memory used */
  int ptx_version;           /**< the PTX's virtual architecture (90 for compute_90) */
  int binary_version;        /**< the binary's architecture (90 for sm_90) */
  int num_params;            /**< number of kernel parameters */
} cujit_function_attrs;
/** cujit_function_attrs with its size set and every other field 0. */
#define CUJIT_FUNCTION_ATTRS_INIT \
  { sizeof(cujit_function_attrs), 0, 0, 0, 0, 0, 0, 0, 0 }

/** Attributes of a kernel on the device it was loaded for.
 *  @param fn     the kernel.
 *  @param attrs  receives them (start from CUJIT_FUNCTION_ATTRS_INIT).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL argument or an attrs->size that
 *          is not that of a version (checked first: use CUJIT_FUNCTION_ATTRS_INIT);
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE; CUJIT_ERROR_DRIVER. On failure
 *          the fields up to attrs->size read 0. */
CUJIT_API cujit_status cujit_function_get_attrs(const cujit_function *fn,
                                                cujit_function_attrs *attrs);
/** Block size that maximises occupancy (the occupancy API) for `dynamic_shared_bytes` of
 *  dynamic shared memory, and the smallest grid that fills the device at that size.
 *  @param fn                    the kernel.
 *  @param dynamic_shared_bytes  dynamic shared memory per block.
 *  @param block_size            receives the block size.
 *  @param min_grid_size         if non-NULL, receives the grid size.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL fn or block_size; the load errors
 *          of cujit_module_get_function() (CUJIT_ERROR_NO_DRIVER, CUJIT_ERROR_NO_DEVICE,
 *          CUJIT_ERROR_LOAD); CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_function_suggest_block(const cujit_function *fn,
                                                    size_t dynamic_shared_bytes, int *block_size,
                                                    int *min_grid_size);
/** @param fn  the kernel.
 *  @return the kernel's plain name ("multiply_them"); NULL for NULL. Owned by the module. */
CUJIT_API const char *cujit_function_name(const cujit_function *fn);
/** Size and offset of parameter i in the kernel's parameter buffer: the driver's, or for a
 *  kernel compiled from source whose parameters are all plain scalars and pointers, its
 *  PTX's, which places them as the driver does; for prebuilt and linked code, what its
 *  CUBIN describes for the driver, which is what the driver reports.
 *  @param fn      the kernel.
 *  @param i       the parameter, counted from 0.
 *  @param offset  if non-NULL, receives its offset in bytes.
 *  @param size    if non-NULL, receives its size in bytes.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL fn or an i out of range (saying
 *          how many parameters the kernel has). */
CUJIT_API cujit_status cujit_function_get_param_info(const cujit_function *fn, size_t i,
                                                     size_t *offset, size_t *size);

/** A grid or block size: three dimensions (CUJIT_DIM3() makes one). */
typedef struct cujit_dim3 {
  unsigned x; /**< the first dimension */
  unsigned y; /**< the second (1 when unused) */
  unsigned z; /**< the third (1 when unused) */
} cujit_dim3;

#ifdef __cplusplus
#  define CUJIT_DIM3_PICK_(x, y, z, ...) (cujit_dim3{(unsigned)(x), (unsigned)(y), (unsigned)(z)})
#else
#  define CUJIT_DIM3_PICK_(x, y, z, ...) ((cujit_dim3){(unsigned)(x), (unsigned)(y), (unsigned)(z)})
#endif
/** CUJIT_DIM3(x), CUJIT_DIM3(x, y), CUJIT_DIM3(x, y, z): a cujit_dim3 value whose missing
 *  sizes are 1. */
#define CUJIT_DIM3(...) CUJIT_DIM3_PICK_(__VA_ARGS__, 1, 1, 0)

/** Argument kinds (cujit_arg.kind). */
typedef enum cujit_arg_kind {
  CUJIT_ARG_VALUE = 0, /**< bytes passed by value (scalars, vectors, structs, device pointers) */
  CUJIT_ARG_IN = 1,    /**< host buffer copied to the device before the kernel */
  CUJIT_ARG_OUT = 2,   /**< device buffer copied to the host after the kernel */
  CUJIT_ARG_INOUT = 3, /**< both */
  CUJIT_ARG_ARRAY = 4  /**< an array handle (cujit_arr()), for the generators' calls only:
                            cujit_launch() refuses it (pass cujit_array_arg() there) */
} cujit_arg_kind;

/** Scalar type tags (cujit_arg.type): what cujit_launch() checks against a parameter's
 *  type (see there), and names in messages. */
typedef enum cujit_type {
  CUJIT_TYPE_BYTES = 0, /**< a struct or vector by value, or anything not listed */
  CUJIT_TYPE_I8,        /**< int8_t */
  CUJIT_TYPE_U8,        /**< uint8_t */
  CUJIT_TYPE_I16,       /**< int16_t */
  CUJIT_TYPE_U16,       /**< uint16_t */
  CUJIT_TYPE_I32,       /**< int32_t */
  CUJIT_TYPE_U32,       /**< uint32_t */
  CUJIT_TYPE_I64,       /**< int64_t */
  CUJIT_TYPE_U64,       /**< uint64_t */
  CUJIT_TYPE_F16,       /**< __half (2 bytes) */
  CUJIT_TYPE_F32,       /**< float */
  CUJIT_TYPE_F64,       /**< double */
  CUJIT_TYPE_PTR,       /**< a device pointer (also what In/Out/InOut pass) */
  CUJIT_TYPE_BF16,      /**< bfloat16 (2 bytes) */
  CUJIT_TYPE_BOOL,      /**< bool (1 byte; arrays only) */
  CUJIT_TYPE_C64,       /**< complex float: two floats (arrays only) */
  CUJIT_TYPE_C128       /**< complex double: two doubles (arrays only) */
} cujit_type;
/* A plain value's tag is its type's plus this (see CUJIT_LAUNCH()): the header's own
 * macros make such arguments, which a parameter converts rather than takes as they are. */
#define CUJIT_TYPE_PLAIN_ 32

/** One kernel argument. Build it with the constructors below; treat fields as read-only.
 *  Values up to 16 bytes are held inside; larger structs are referenced through `data`,
 *  which must stay valid until the launch returns. It has no size field and ends with a
 *  reserved word instead (see "Structs that grow"). */
typedef struct cujit_arg {
  int kind;         /**< cujit_arg_kind */
  int type;         /**< cujit_type (plus CUJIT_TYPE_PLAIN_ for a number CUJIT_LAUNCH() made) */
  size_t size;      /**< bytes the kernel receives (8 for pointers and In/Out) */
  const void *data; /**< large by-value data; NULL when held in `value` */
  /** A value of up to 16 bytes, held inside. */
  union {
    unsigned char bytes[16]; /**< the value's bytes, the rest 0 */
    int64_t i64;             /**< a signed integer */
    uint64_t u64;            /**< an unsigned integer */
    double f64;              /**< a double */
    float f32;               /**< a float */
    CUdeviceptr ptr;         /**< a device pointer */
    uint64_t words[2];       /**< the 16 bytes as two words (the constructors set them) */
  } value;
  void *host;        /**< In/Out/InOut: the host buffer */
  size_t bytes;      /**< In/Out/InOut: its size in bytes */
  uint64_t reserved; /**< 0 (set by the constructors); for later versions */
} cujit_arg;

/* memset and memcpy of a constant size: compilers turn them into a few moves. For
 * values of any layout (cujit_value) and for hosts of unknown byte order. */
static inline cujit_arg cujit_arg_scalar_(int type, size_t size, const void *p) {
  cujit_arg a;
  a.kind = CUJIT_ARG_VALUE;
  a.type = type;
  a.size = size;
  a.data = NULL;
  memset(a.value.bytes, 0, sizeof a.value.bytes);
  if (size) memcpy(a.value.bytes, p, size); /* p may be NULL when size is 0 */
  a.host = NULL;
  a.bytes = 0;
  a.reserved = 0;
  return a;
}
/* A number of `size` bytes whose value is `w` (zero-extended): built whole, as one
 * initialiser, so that an array of arguments is written straight into place. On a
 * little-endian host the low bytes of the word are the number's bytes; elsewhere, or
 * where the byte order is unknown, the number is copied by its bytes. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#  if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#    define CUJIT_WORD_LE_ 1
#  endif
#elif defined(_WIN32) || defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#  define CUJIT_WORD_LE_ 1
#endif
#ifdef CUJIT_WORD_LE_
#  ifdef __cplusplus
static inline cujit_arg cujit_arg_word_(int type, size_t size, uint64_t w) {
  cujit_arg a = {CUJIT_ARG_VALUE, type, size, NULL, {{0}}, NULL, 0, 0};
  a.value.words[0] = w;
  return a;
}
#  else
static inline cujit_arg cujit_arg_word_(int type, size_t size, uint64_t w) {
  return (cujit_arg){CUJIT_ARG_VALUE, type, size, NULL, {.words = {w, 0}}, NULL, 0, 0};
}
#  endif
#  define CUJIT_ARG_NUMBER_(type, v, w) cujit_arg_word_((type), sizeof(v), (w))
#else
#  define CUJIT_ARG_NUMBER_(type, v, w) cujit_arg_scalar_((type), sizeof(v), &(v))
#endif
/* The bits of a float or double as a word. */
static inline uint64_t cujit_f32_bits_(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}
static inline uint64_t cujit_f64_bits_(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}
/** @param v  the value.
 *  @return an argument for a parameter of type signed char, int8_t. */
static inline cujit_arg cujit_i8(int8_t v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_I8, v, (uint8_t)v);
}
/** @param v  the value.
 *  @return an argument for a parameter of type unsigned char, uint8_t. */
static inline cujit_arg cujit_u8(uint8_t v) { return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U8, v, v); }
/** @param v  the value.
 *  @return an argument for a parameter of type short, int16_t. */
static inline cujit_arg cujit_i16(int16_t v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_I16, v, (uint16_t)v);
}
/** @param v  the value.
 *  @return an argument for a parameter of type unsigned short, uint16_t. */
static inline cujit_arg cujit_u16(uint16_t v) { return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U16, v, v); }
/** @param v  the value.
 *  @return an argument for a parameter of type int, int32_t. */
static inline cujit_arg cujit_i32(int32_t v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_I32, v, (uint32_t)v);
}
/** @param v  the value.
 *  @return an argument for a parameter of type unsigned int, uint32_t. */
static inline cujit_arg cujit_u32(uint32_t v) { return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U32, v, v); }
/** @param v  the value.
 *  @return an argument for a parameter of type long long (and long where it has 64
 *  bits), int64_t. */
static inline cujit_arg cujit_i64(int64_t v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_I64, v, (uint64_t)v);
}
/** @param v  the value.
 *  @return an argument for a parameter of type unsigned long long, size_t, uint64_t (for
 *  texture and surface objects, cujit_texture() and cujit_surface() say what it is). */
static inline cujit_arg cujit_u64(uint64_t v) { return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U64, v, v); }
/** @param v  the value.
 *  @return an argument for a parameter of type float. */
static inline cujit_arg cujit_f32(float v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_F32, v, cujit_f32_bits_(v));
}
/** @param v  the value.
 *  @return an argument for a parameter of type double. */
static inline cujit_arg cujit_f64(double v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_F64, v, cujit_f64_bits_(v));
}
#ifdef __cplusplus
#  define CUJIT_BOOL_ bool
#else
#  define CUJIT_BOOL_ _Bool
#endif
/** A bool (one byte, 0 or 1).
 *  @param v  the value.
 *  @return an argument for a bool parameter. */
static inline cujit_arg cujit_bool(CUJIT_BOOL_ v) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_BOOL, v, (uint64_t)(v ? 1 : 0));
}
/** A complex float (`cuda::std::complex<float>`): its real and imaginary parts.
 *  @param re  the real part.
 *  @param im  the imaginary part.
 *  @return the argument. */
static inline cujit_arg cujit_c64(float re, float im) {
  float v[2];
  v[0] = re;
  v[1] = im;
  return cujit_arg_scalar_(CUJIT_TYPE_C64, sizeof v, v);
}
/** A complex double (`cuda::std::complex<double>`).
 *  @param re  the real part.
 *  @param im  the imaginary part.
 *  @return the argument. */
static inline cujit_arg cujit_c128(double re, double im) {
  double v[2];
  v[0] = re;
  v[1] = im;
  return cujit_arg_scalar_(CUJIT_TYPE_C128, sizeof v, v);
}
/** A device pointer.
 *  @param p  the address (from cujit_mem_alloc(), cujit_module_get_global(), ...).
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_ptr(CUdeviceptr p) { return CUJIT_ARG_NUMBER_(CUJIT_TYPE_PTR, p, p); }
/** A device pointer plus a byte offset (the kernel sees p + offset).
 *  @param p       the address.
 *  @param offset  bytes added to it.
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_ptr_offset(CUdeviceptr p, size_t offset) {
  CUdeviceptr q = p + offset;
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_PTR, q, q);
}
/** Any value by its bytes: a struct or vector type (float4, int4, double2, a user struct).
 *  Up to 16 bytes are copied now; a larger value is referenced and must outlive the launch.
 *  The driver places it at the offset the kernel expects.
 *  @param p     the value's address.
 *  @param size  its size in bytes.
 *  @return an argument of type CUJIT_TYPE_BYTES. */
static inline cujit_arg cujit_value(const void *p, size_t size) {
  cujit_arg a;
  if (size <= sizeof a.value.bytes) return cujit_arg_scalar_(CUJIT_TYPE_BYTES, size, p);
  a = cujit_arg_scalar_(CUJIT_TYPE_BYTES, 0, p);
  a.size = size;
  a.data = p;
  return a;
}
/** By-value argument from an lvalue: CUJIT_VALUE(my_struct) is
 *  cujit_value(&my_struct, sizeof my_struct). */
#define CUJIT_VALUE(lvalue) cujit_value(&(lvalue), sizeof(lvalue))

static inline cujit_arg cujit_buffer_(int kind, void *host, size_t bytes) {
  cujit_arg a = cujit_arg_scalar_(CUJIT_TYPE_PTR, 0, &host);
  a.kind = kind;
  a.size = sizeof(CUdeviceptr);
  a.host = host;
  a.bytes = bytes;
  return a;
}
/** An In buffer: host data copied to device memory before the kernel; the kernel gets a
 *  device pointer. For cujit_launch() and CUJIT_LAUNCH(); cujit_call() and bound
 *  functions take CUJIT_IN_PTR() instead.
 *  @param host   the data; read during the launch.
 *  @param bytes  its size.
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_in(const void *host, size_t bytes) {
  return cujit_buffer_(CUJIT_ARG_IN, (void *)host, bytes);
}
/** An Out buffer: device memory (uninitialised) copied back to `host` after the kernel.
 *  For cujit_launch() and CUJIT_LAUNCH(); cujit_call() and bound functions take
 *  CUJIT_OUT_PTR() instead.
 *  @param host   receives the kernel's output when the launch returns.
 *  @param bytes  its size.
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_out(void *host, size_t bytes) {
  return cujit_buffer_(CUJIT_ARG_OUT, host, bytes);
}
/** An InOut buffer: copied to the device before the kernel and back to `host` after it.
 *  For cujit_launch() and CUJIT_LAUNCH(); cujit_call() and bound functions take
 *  CUJIT_INOUT_PTR() instead.
 *  @param host   the data, replaced by the kernel's when the launch returns.
 *  @param bytes  its size.
 *  @return an argument for a pointer parameter. */
static inline cujit_arg cujit_inout(void *host, size_t bytes) {
  return cujit_buffer_(CUJIT_ARG_INOUT, host, bytes);
}

/* A cujit_arg passed where a device pointer is expected: its address tagged in the top
 * 16 bits, which no host or device address uses. Pointer parameters of cujit_call() and
 * of bound functions take these. */
#define CUJIT_ARG_REF_TAG_ 0xC0DEull
#define CUJIT_ARG_REF_MASK_ 0xFFFFFFFFFFFFull
/* Plain values, as CUJIT_LAUNCH(), cujit_call() and the generators' macros take them:
 * each C number made an argument of its own type whose tag has CUJIT_TYPE_PLAIN_ added,
 * which its parameter converts (docs/manual/launching.md, "What a parameter takes"). */
static inline cujit_arg cujit_arg_self_(cujit_arg a) { return a; }
#define CUJIT_PLAIN_NUMBER_(t, v, w) CUJIT_ARG_NUMBER_(CUJIT_TYPE_##t + CUJIT_TYPE_PLAIN_, v, w)
static inline cujit_arg cujit_plain_bool_(CUJIT_BOOL_ v) {
  return CUJIT_PLAIN_NUMBER_(BOOL, v, (uint64_t)(v ? 1 : 0));
}
static inline cujit_arg cujit_plain_i8_(int8_t v) { return CUJIT_PLAIN_NUMBER_(I8, v, (uint8_t)v); }
static inline cujit_arg cujit_plain_u8_(uint8_t v) { return CUJIT_PLAIN_NUMBER_(U8, v, v); }
static inline cujit_arg cujit_plain_i16_(int16_t v) {
  return CUJIT_PLAIN_NUMBER_(I16, v, (uint16_t)v);
}
static inline cujit_arg cujit_plain_u16_(uint16_t v) { return CUJIT_PLAIN_NUMBER_(U16, v, v); }
static inline cujit_arg cujit_plain_i32_(int32_t v) {
  return CUJIT_PLAIN_NUMBER_(I32, v, (uint32_t)v);
}
static inline cujit_arg cujit_plain_u32_(uint32_t v) { return CUJIT_PLAIN_NUMBER_(U32, v, v); }
static inline cujit_arg cujit_plain_i64_(int64_t v) {
  return CUJIT_PLAIN_NUMBER_(I64, v, (uint64_t)v);
}
/* A 64-bit unsigned number whose top bits are cujit_arg_ref()'s tag (CUJIT_IN_PTR() and its
 * kin) is marked so: cujit_call() takes it for the argument it stands for, a launch refuses
 * it, and as a number it is what it is. */
static inline cujit_arg cujit_plain_u64_(uint64_t v) {
  return (v >> 48) == CUJIT_ARG_REF_TAG_ ? CUJIT_PLAIN_NUMBER_(PTR, v, v)
                                         : CUJIT_PLAIN_NUMBER_(U64, v, v);
}
static inline cujit_arg cujit_plain_f32_(float v) {
  return CUJIT_PLAIN_NUMBER_(F32, v, cujit_f32_bits_(v));
}
static inline cujit_arg cujit_plain_f64_(double v) {
  return CUJIT_PLAIN_NUMBER_(F64, v, cujit_f64_bits_(v));
}
/* char, long and unsigned long have the size and signedness of the host's ABI. */
static inline cujit_arg cujit_plain_char_(char v) {
  return (char)-1 < 0 ? cujit_plain_i8_((int8_t)v) : cujit_plain_u8_((uint8_t)v);
}
static inline cujit_arg cujit_plain_long_(long v) {
  return sizeof v == 8 ? cujit_plain_i64_((int64_t)v) : cujit_plain_i32_((int32_t)v);
}
static inline cujit_arg cujit_plain_ulong_(unsigned long v) {
  return sizeof v == 8 ? cujit_plain_u64_((uint64_t)v) : cujit_plain_u32_((uint32_t)v);
}
/* A value by its address (cujit_call()'s &v for a struct, vector or blob parameter). */
static inline cujit_arg cujit_plain_addr_(const void *p) {
  cujit_arg a = cujit_arg_scalar_(CUJIT_TYPE_BYTES + CUJIT_TYPE_PLAIN_, 0, NULL);
  a.data = p;
  return a;
}
#ifndef __cplusplus
#  ifndef __STDC_NO_COMPLEX__
static inline cujit_arg cujit_plain_c64_(float _Complex z) {
  float v[2];
  memcpy(v, &z, sizeof v); /* C lays a complex number out as its two parts */
  return cujit_arg_scalar_(CUJIT_TYPE_C64 + CUJIT_TYPE_PLAIN_, sizeof v, v);
}
static inline cujit_arg cujit_plain_c128_(double _Complex z) {
  double v[2];
  memcpy(v, &z, sizeof v);
  return cujit_arg_scalar_(CUJIT_TYPE_C128 + CUJIT_TYPE_PLAIN_, sizeof v, v);
}
#    define CUJIT_PLAIN_COMPLEX_ \
      , float _Complex : cujit_plain_c64_, double _Complex : cujit_plain_c128_
#  else
#    define CUJIT_PLAIN_COMPLEX_
#  endif
/* The numbers a plain value may be, each with the function that makes its argument: the
 * associations of the _Generic selections below and in cujit_array.h. */
/* clang-format off */
#  define CUJIT_PLAIN_CASES_                                                                 \
    _Bool: cujit_plain_bool_, char: cujit_plain_char_, signed char: cujit_plain_i8_,         \
    unsigned char: cujit_plain_u8_, short: cujit_plain_i16_, unsigned short: cujit_plain_u16_, \
    int: cujit_plain_i32_, unsigned: cujit_plain_u32_, long: cujit_plain_long_,              \
    unsigned long: cujit_plain_ulong_, long long: cujit_plain_i64_,                          \
    unsigned long long: cujit_plain_u64_, float: cujit_plain_f32_,                           \
    double: cujit_plain_f64_ CUJIT_PLAIN_COMPLEX_
/* clang-format on */
/* One argument of CUJIT_LAUNCH(): a cujit_arg as it is, a number as a plain value. A
 * selector of any other type (a pointer, an array, a struct, a long double) matches no
 * association and does not compile: CUJIT_LAUNCH() takes cujit_arg values and numbers. */
#  define CUJIT_ARG_(x) _Generic((x), cujit_arg : cujit_arg_self_, CUJIT_PLAIN_CASES_)(x)
#else
#  define CUJIT_ARG_(x) cujit_arg_of_(x)
#endif

/** Launch flags (cujit_launch_options.flags). */
enum {
  /** A cooperative launch: every block of the grid is resident at once, so that the kernel
   *  may synchronise the whole grid (cooperative_groups::this_grid().sync()). cujit checks
   *  first that the device supports it and that the grid fits: at most as many blocks as
   *  the occupancy calculator allows per multiprocessor (for this block size and dynamic
   *  shared memory) times the number of multiprocessors. */
  CUJIT_LAUNCH_OPT_COOPERATIVE = 1u << 0,
  /** Allows clusters of more than 8 blocks (up to 16 on sm_90), which are not portable to
   *  later devices. */
  CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER = 1u << 1
};

/** Optional launch settings. Start from CUJIT_LAUNCH_OPTIONS_INIT (or zero it) for the
 *  defaults, or pass NULL for all defaults. */
typedef struct cujit_launch_options {
  size_t size;           /**< sizeof, set by CUJIT_LAUNCH_OPTIONS_INIT; or 0 */
  unsigned shared_bytes; /**< dynamic shared memory per block */
  CUstream stream;       /**< NULL: the legacy default stream of the current context */
  float *elapsed_ms;     /**< when non-NULL, receives the kernel's time measured with events */
  unsigned flags;        /**< CUJIT_LAUNCH_* */
  /** Thread-block clusters (compute capability 9.0 and newer): the blocks of each cluster
   *  run together and may share their shared memory (cooperative_groups::this_cluster()).
   *  {0, 0, 0}: no cluster (a kernel declaring __cluster_dims__ still gets its own). Each
   *  grid dimension must be a multiple of the cluster's, and a cluster holds at most 8
   *  blocks (16 with CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER where the device allows it). */
  cujit_dim3 cluster;
} cujit_launch_options;
/** cujit_launch_options with its size set and every other field at its default. */
#define CUJIT_LAUNCH_OPTIONS_INIT                               \
  {                                                             \
    sizeof(cujit_launch_options), 0, NULL, NULL, 0, { 0, 0, 0 } \
  }

/** Launches `fn` on the current context's device (loading the module there on first use).
 *  Before anything happens the argument count, each argument's size and, where the
 *  kernel's parameter types are known, each argument's type are checked against the
 *  kernel's parameters (sizes as the driver reports them), and grid, block and shared
 *  memory against the device's and the kernel's limits; a mismatch launches and
 *  allocates nothing. Dynamic shared memory above 48 KiB is allowed for the kernel
 *  automatically, up to the device's opt-in limit.
 *  Types: each argument must be one its parameter takes, by the rule the manual states
 *  (docs/manual/launching.md, "What a parameter takes"): an argument made by a constructor
 *  is taken strictly (an `unsigned int` takes cujit_u32(), not cujit_i32()), a number given
 *  to CUJIT_LAUNCH() is converted to its parameter's type as C converts an argument to a
 *  prototyped parameter and refused where its value would change. The types are the
 *  compiler's: a C++ kernel's are read from its mangled name when it is looked up (no
 *  compile). An extern "C" kernel's name spells none: they are asked of the compiler (once
 *  per module, through the caches) by its first typed call (cujit_call(),
 *  cujit_function_bind(), cujit_function_signature()) or first launch with a number that
 *  needs them, or given by an explicit signature (cujit_function_set_signature()). Until
 *  then a constructor's argument is checked by its size only; a number is refused where
 *  the types cannot be known (prebuilt code without a signature).
 *  Asynchronous launch: with only by-value arguments (device pointers included) and no
 *  elapsed_ms, the call returns once the kernel is queued on the stream; a fault inside
 *  it is reported by a later call that waits (cujit_synchronize()).
 *  In/Out/InOut: each buffer gets temporary device memory from a pool that keeps memory
 *  between launches (see cujit_mem_pool_get_usage()); inputs are copied before the kernel,
 *  outputs after it, everything ordered on the launch stream (opts->stream, or the
 *  legacy default stream), and the call returns only after that stream has drained: the
 *  kernel has finished, every Out/InOut buffer holds its result and the host buffers may
 *  be reused. With an explicit stream, work queued on it earlier runs first and other
 *  streams are not waited for. How the bytes travel (page-locked buffers by DMA, pageable
 *  ones through pinned staging memory or by the driver, small buffers in device blocks of
 *  their own) is tuning that may change in any release; the pinned memory, threads and
 *  blocks cujit makes for it are kept per device until the process exits. The manual
 *  (docs/manual/launching.md, "In, Out, InOut") gives today's sizes and the variables
 *  that set them (CUJIT_STAGING_MIN, CUJIT_STAGING_THREADS).
 *  With elapsed_ms, the call also waits, and *elapsed_ms gets the kernel's own time
 *  (copies excluded), measured with events.
 *  Cooperative launches and clusters (flags, cluster) are checked before anything happens;
 *  both work with In/Out buffers and elapsed_ms.
 *  Refused with CUJIT_ERROR_LAUNCH_CONFIG, naming the rule: a cooperative launch on a
 *  device without support for it, or with more blocks than can be resident at once;
 *  a cluster on a device older than 9.0, a grid dimension that is not a multiple of the
 *  cluster's, a cluster of more blocks than allowed (8, or 16 where non-portable sizes
 *  are allowed), or one that differs from the kernel's __cluster_dims__.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_ARGS naming the parameter (counted from 1), the
 *          expected and the given size or type, and a refused number's value ("argument 2
 *          of kernel 'k' is a float (f32), but parameter 2 is 'unsigned int'"; "argument 2
 *          of kernel 'k' is an int (i32) -1, but parameter 2 is 'unsigned int': out of the
 *          parameter type's range ...");
 *          CUJIT_ERROR_LAUNCH_CONFIG naming the limit; CUJIT_ERROR_INVALID_VALUE
 *          for unknown flags or an opts->size that is not that of a version (use
 *          CUJIT_LAUNCH_OPTIONS_INIT; checked before anything else but fn);
 *          CUJIT_ERROR_NOT_SUPPORTED for options of a later header that set fields this
 *          libcujit does not know; CUJIT_ERROR_LAUNCH_FAILED
 *          naming the kernel (the context is then unusable: every temporary buffer has
 *          been given back, and later GPU calls of the process fail, even after a reset
 *          of the device; end the process, a new one can use the GPU);
 *          CUJIT_ERROR_DEVICE_MEMORY; CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE.
 *  @param fn     the kernel (cujit_module_get_function()).
 *  @param grid   blocks in the grid.
 *  @param block  threads in a block.
 *  @param args   `nargs` arguments, one per kernel parameter, made by the constructors
 *                above; read during the call (In/Out buffers until it returns).
 *  @param nargs  their number.
 *  @param opts   NULL for the defaults; read during the call. */
CUJIT_API cujit_status cujit_launch(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                                    const cujit_arg *args, size_t nargs,
                                    const cujit_launch_options *opts);

/** CUJIT_LAUNCH(fn, grid, block, arg...): cujit_launch() with the arguments inline, as in
 *  `CUJIT_LAUNCH(k, CUJIT_DIM3(4), CUJIT_DIM3(256), cujit_inout(x, n * 4), n, 2.5f)`. Each
 *  argument is a cujit_arg, taken as it is, or a number: bool, char, signed or unsigned
 *  char, short, int, long and long long (signed or unsigned; a CUdeviceptr is one, which
 *  a pointer parameter takes), float or double, and in C float _Complex and double
 *  _Complex, made an argument of its own type that its parameter converts (see
 *  cujit_launch()). Anything else (a pointer such as &x, a host array, a struct, a long
 *  double) does not compile. At most 67 arguments (more through cujit_launch()). In C++
 *  the arguments form a `std::initializer_list`. */
#define CUJIT_LAUNCH(fn, grid, block, ...) \
  CUJIT_LAUNCH_ARGS_((fn), (grid), (block), NULL, __VA_ARGS__)
/** CUJIT_LAUNCH_EX(fn, grid, block, opts, arg...): the same with options (a
 *  `const cujit_launch_options *`). */
#define CUJIT_LAUNCH_EX(fn, grid, block, opts, ...) \
  CUJIT_LAUNCH_ARGS_((fn), (grid), (block), (opts), __VA_ARGS__)
#ifdef __cplusplus
#  define CUJIT_LAUNCH_ARGS_(fn, grid, block, opts, ...) \
    cujit_launch_list_(fn, grid, block, {CUJIT_MAP_(CUJIT_ARG_, __VA_ARGS__)}, opts)
#else
#  define CUJIT_LAUNCH_ARGS_(fn, grid, block, opts, ...)                                    \
    cujit_launch(fn, grid, block, (const cujit_arg[]){CUJIT_MAP_(CUJIT_ARG_, __VA_ARGS__)}, \
                 (size_t)CUJIT_NARGS_(__VA_ARGS__), opts)
#endif

/** @} */

/* =======================================================================================
 * 4. Memory and streams                                                           stable
 * ===================================================================================== */

/** @defgroup memory 4. Memory and streams
 *  Device memory, page-locked host memory, streams, the pool that In/Out buffers use, and
 *  timers of the work on a stream.
 *  The driver is loaded for you: there is no need to link libcuda. Each of these works
 *  on the current device and fails with CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE
 *  where there is none, and with CUJIT_ERROR_DRIVER naming the driver call that failed.
 *  @{ */

/** Device memory on the current device. When the device is full, the memory cujit's pool
 *  keeps (cujit_mem_pool_get_usage()) is given back and the allocation tried once more.
 *  @param dptr   receives its address; owned by the caller: cujit_mem_free().
 *  @param bytes  its size; not 0.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL dptr or 0 bytes;
 *          CUJIT_ERROR_DEVICE_MEMORY; CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_mem_alloc(CUdeviceptr *dptr, size_t bytes);
/** Frees device memory from cujit_mem_alloc().
 *  @param dptr  the address; 0 is fine.
 *  @return CUJIT_OK, or the driver's failure (CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE
 *          where there is none; CUJIT_ERROR_DRIVER). */
CUJIT_API cujit_status cujit_mem_free(CUdeviceptr dptr);
/** Copies host memory to device memory; complete when it returns.
 *  @param dst    the device address.
 *  @param src    the host bytes.
 *  @param bytes  their number (0 copies nothing).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL address;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_mem_copy_htod(CUdeviceptr dst, const void *src, size_t bytes);
/** Copies device memory to host memory; complete when it returns.
 *  @param dst    receives the bytes.
 *  @param src    the device address.
 *  @param bytes  their number (0 copies nothing).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL address;
 *          CUJIT_ERROR_LAUNCH_FAILED when a kernel before it faulted;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_mem_copy_dtoh(void *dst, CUdeviceptr src, size_t bytes);
/** Copies device memory to device memory (of the current device, or of another one the
 *  driver can reach from it); complete when it returns.
 *  @param dst    the destination address.
 *  @param src    the source address.
 *  @param bytes  their number (0 copies nothing).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL address, a range that runs
 *          past the end of the address space, or ranges that overlap;
 *          CUJIT_ERROR_LAUNCH_FAILED when a kernel before it faulted;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_mem_copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
/** cujit_mem_copy_dtod() ordered on `stream`: returns once the copy is queued, after the
 *  work queued on the stream before it and before the work queued after it.
 *  @param dst     the destination address.
 *  @param src     the source address.
 *  @param bytes   their number (0 copies nothing).
 *  @param stream  the stream; NULL: the legacy default stream.
 *  @return as cujit_mem_copy_dtod(); a fault in a kernel before it may be reported by a
 *          later call that waits (cujit_stream_synchronize()) instead. */
CUJIT_API cujit_status cujit_mem_copy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                                 CUstream stream);
/** Page-locked host memory: copies from and to it run asynchronously at full speed.
 *  @param ptr    receives the memory; owned by the caller: cujit_host_free().
 *  @param bytes  its size; not 0.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL ptr or 0 bytes;
 *          CUJIT_ERROR_OUT_OF_MEMORY; CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_host_alloc(void **ptr, size_t bytes);
/** Frees memory from cujit_host_alloc().
 *  @param ptr  the memory; NULL is fine.
 *  @return CUJIT_OK, or the driver's failure (CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE
 *          where there is none; CUJIT_ERROR_DRIVER). */
CUJIT_API cujit_status cujit_host_free(void *ptr);
/** A non-blocking stream on the current context.
 *  @param stream  receives it; owned by the caller: cujit_stream_destroy().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL stream;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_stream_create(CUstream *stream);
/** Destroys a stream from cujit_stream_create().
 *  @param stream  the stream; NULL is fine.
 *  @return CUJIT_OK, or the driver's failure (CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE
 *          where there is none; CUJIT_ERROR_DRIVER). */
CUJIT_API cujit_status cujit_stream_destroy(CUstream stream);
/** Waits for the work queued on `stream`.
 *  @param stream  the stream; NULL: the legacy default stream.
 *  @return CUJIT_OK; CUJIT_ERROR_LAUNCH_FAILED when a kernel on it faulted;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_stream_synchronize(CUstream stream);
/** Waits for all work on the current context. A fault in a kernel launched earlier is
 *  reported here as CUJIT_ERROR_LAUNCH_FAILED.
 *  @return CUJIT_OK, or the failure of the work waited for; CUJIT_ERROR_NO_DRIVER /
 *          CUJIT_ERROR_NO_DEVICE. */
CUJIT_API cujit_status cujit_synchronize(void);
/** Device memory of In/Out/InOut staging and of arrays on the current device. What they
 *  give back stays in cujit's pool for the next launch or array, so that neither maps new
 *  device memory each time: by default all of it, until cujit_mem_pool_trim(); with env
 *  CUJIT_POOL_KEEP, memory beyond that many bytes held by the pool (in use and kept) goes
 *  back to the device at the next synchronisation. An allocation of cujit's that finds
 *  the device full (In/Out buffers, arrays, cujit_mem_alloc()) has the pool give back what
 *  it keeps and tries once more; other users of the device (another library's
 *  allocations, another process) are not seen: call cujit_mem_pool_trim() before them.
 *  @param in_use  if non-NULL, receives the bytes handed to launches now and not yet
 *                 given back (0 when no staged launch is running, also after a kernel
 *                 fault).
 *  @param kept    if non-NULL, receives the bytes the pool holds for reuse.
 *  @return CUJIT_OK, or the errors of a device that cannot be used (CUJIT_ERROR_NO_DRIVER,
 *          CUJIT_ERROR_NO_DEVICE, CUJIT_ERROR_DRIVER). */
CUJIT_API cujit_status cujit_mem_pool_get_usage(size_t *in_use, size_t *kept);
/** Gives the memory the pool of the current device keeps back to the device (later
 *  launches and arrays take it again as needed).
 *  @return CUJIT_OK, or the errors of a device that cannot be used (CUJIT_ERROR_NO_DRIVER,
 *          CUJIT_ERROR_NO_DEVICE, CUJIT_ERROR_DRIVER). */
CUJIT_API cujit_status cujit_mem_pool_trim(void);

/** A timer of GPU work on a stream, made by cujit_timer_start(). */
typedef struct cujit_timer cujit_timer;
/** Starts timing the work queued on `stream` from now on: launches, In/Out copies, copies,
 *  array operations (on cujit_array_stream() of their first array), generated-kernel
 *  calls; cujit_timer_stop() gives the time until then, measured with CUDA events on the
 *  GPU. What it measures is the stream's time between the two points: the work queued
 *  between them, and any time the stream waited for the host meanwhile (a kernel's first
 *  launch compiling, say), as a clock around the calls would measure it.
 *  A `cujit_timer *` is a handle, as a module's is: a destroyed one is refused.
 *  @param timer   *timer NULL: receives a new timer, owned by the caller
 *                 (cujit_timer_destroy()); otherwise *timer is a timer of the current
 *                 context that starts again (stopped or not), now on `stream`.
 *  @param stream  a stream of the current context; NULL: the legacy default stream.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL timer, a *timer that is no live
 *          timer, a stream of another context than the current one, or a timer made on
 *          another context (each says which); CUJIT_ERROR_NO_DRIVER /
 *          CUJIT_ERROR_NO_DEVICE; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_timer_start(cujit_timer **timer, CUstream stream);
/** Stops the timer: waits for the work queued on its stream up to now, then gives the
 *  milliseconds since cujit_timer_start() (CUDA events' resolution: about half a
 *  microsecond). The timer may be started again.
 *  @param timer  a started timer.
 *  @param ms     receives the time in milliseconds (a double, C's own floating type, so
 *                that it prints and computes without conversions).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL ms, a timer that is no live
 *          timer, one stopped already (start it again first), or one made on another
 *          context than the current one; CUJIT_ERROR_LAUNCH_FAILED when a kernel on the
 *          stream faulted; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_timer_stop(cujit_timer *timer, double *ms);
/** Frees the timer. A handle destroyed already (or not a timer) frees nothing.
 *  @param timer  the timer; NULL is fine. */
CUJIT_API void cujit_timer_destroy(cujit_timer *timer);

/** @} */

/* =======================================================================================
 * 5. The cache                                                                    stable
 * ===================================================================================== */

/** @defgroup cache 5. The cache
 *  Every compile goes through a memory cache (this process's), a disk cache (shared by
 *  the processes of a user) and, when one is set, a remote tier shared by a cluster;
 *  NVRTC runs only when none holds the module.
 *
 *  What invalidates an entry: any change to the source, the program name, the target
 *  architecture, include directories, defines, NVRTC options (only -no-cache is left out),
 *  in-memory headers, name expressions, NVRTC's version, the cache format, or the contents
 *  of any header the source includes from disk (found by following its `#include` lines
 *  through in-memory headers, the includer's directory and the include path). Toolkit and
 *  system headers (found nowhere there) are covered by NVRTC's version. An `#include` whose
 *  operand is a macro not defined as `"file"` or `<file>`, or an NVRTC option that reads
 *  or writes files (-pch, -use-pch, -create-pch, -pch-dir, -time, -fdevice-time-trace),
 *  makes the compile bypass the cache (logged at info level).
 *  Within a process, a memory cache keeps up to 1024 compiled images within env
 *  CUJIT_MEMORY_CACHE_MAX_SIZE bytes (default 256M; 0 turns it off); a hit there still
 *  notices a header changed on disk. To ask why a compile missed, see
 *  @ref explain "Questioning the cache".
 *  @{ */

/** Cache counters, written by cujit_cache_get_stats() and cujit_cache_get_disk_stats().
 *  Start from CUJIT_CACHE_STATS_INIT (or zero it): cujit writes the fields up to `size`. */
typedef struct cujit_cache_stats {
  size_t size;          /**< sizeof, set by CUJIT_CACHE_STATS_INIT; or 0 */
  uint64_t hits;        /**< modules served from memory or disk */
  uint64_t memory_hits; /**< of those, from the in-process memory cache */
  uint64_t misses;      /**< lookups that found nothing usable */
  uint64_t compiles;    /**< NVRTC compiles run */
  uint64_t evictions;   /**< disk entries removed to keep the size limit */
  uint64_t entries;     /**< disk entries now (counted by the call) */
  uint64_t bytes;       /**< their total size */
  /* The remote tier (cujit_cache_set_remote), asked after a disk miss: */
  uint64_t remote_hits;    /**< entries the remote tier had (counted in `hits` too; now on
                                disk as well) */
  uint64_t remote_misses;  /**< lookups that found no usable entry in the remote tier */
  uint64_t remote_invalid; /**< of those, values that failed the entry checks (replaced) */
  uint64_t remote_errors;  /**< operations on the remote tier that failed or timed out
                                (each skips it for 30 s) */
  uint64_t remote_time_us; /**< microseconds spent in the remote tier, waits for other
                                machines included */
} cujit_cache_stats;
/** cujit_cache_stats with its size set and every counter 0. */
#define CUJIT_CACHE_STATS_INIT \
  { sizeof(cujit_cache_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/** Sets the cache directory for this process (copied; created 0700 when missing).
 *  NULL returns to the default: env CUJIT_CACHE_DIR, else $XDG_CACHE_HOME/cujit, else
 *  $HOME/.cache/cujit. Env CUJIT_CACHE=0 (or off, no, false) turns the disk cache off
 *  whatever the directory; the memory cache stays on.
 *  @param dir  the directory (copied), or NULL for the default.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for an empty path; CUJIT_ERROR_CACHE when
 *          the directory cannot be created, belongs to another user (root's is accepted)
 *          or is writable by group or others: the setting still applies, and compiles go
 *          on without the disk cache (with a warning) until it is fixed. */
CUJIT_API cujit_status cujit_cache_set_dir(const char *dir);
/** @return the disk cache directory in use (checked, and created if missing), or NULL when
 *  the disk cache is off or unusable; cujit_last_error() then says why. Owned by cujit;
 *  valid until the calling thread's next call of cujit_cache_dir(). */
CUJIT_API const char *cujit_cache_dir(void);
/** Experimental (docs/manual/stability.md). Sets this process's remote cache tier: a
 *  Redis server that the machines of a cluster share, asked after a disk miss and before
 *  NVRTC. A hit there is written to the disk cache too; a compile after a miss stores its
 *  entry in both. One process per key compiles across all machines (the others wait for
 *  its entry, at most CUJIT_CACHE_LOCK_TIMEOUT). What comes back is checked as a disk
 *  entry is (size, key, checksum); a bad value, or an answer that would take hiredis more
 *  than 64 MiB, is a miss, counted in remote_invalid, and replaced. A server that does not
 *  connect within connect_timeout (default 50 ms, once its host name is resolved) or does
 *  not finish a command within timeout (default 50 ms; a command that moves a large entry
 *  gets 16 ms more per MiB) is skipped for 30 s, with a warning, and compiles go on
 *  locally. The remote tier is used only together with a usable disk cache. No message
 *  shows the password.
 *  @param url  `redis://[[user]:password@]host[:port][/db][?connect_timeout=MS&timeout=MS]`
 *              (copied; port 6379 and database 0 by default; the user information ends
 *              at the last `@`, so a password may hold `/`, `?`, `#` or `@` as they are,
 *              and `%XX` escapes are decoded); NULL returns to the default,
 *              env CUJIT_CACHE_REMOTE (read at the first compile otherwise); "" sets none.
 *              Nothing connects here: the first lookup does. hiredis is loaded here, at run
 *              time (libhiredis.so.1.3.0, .1.1.0, .1.0.0, .0.14 or libhiredis.so, or env
 *              CUJIT_HIREDIS, which must be an absolute path).
 *              Thread-safe: compiles under way finish with the tier they started with.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE when the URL does not parse (the detail
 *          says what is wrong and the form expected); CUJIT_ERROR_CACHE when hiredis cannot
 *          be loaded. After an error there is no remote tier until one is set again. */
CUJIT_API cujit_status cujit_cache_set_remote(const char *url);
/** Experimental (docs/manual/stability.md). The remote tier in use, as set or read from
 *  CUJIT_CACHE_REMOTE, with its password
 *  replaced by "***"; "" when there is none.
 *  @param url   receives it: at most `size` bytes, NUL-terminated.
 *  @param size  the bytes url has room for.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL url or a 0 size, or when
 *          CUJIT_CACHE_REMOTE does not parse (the detail says why). */
CUJIT_API cujit_status cujit_cache_get_remote(char *url, size_t size);
/** Fills `stats` with this process's counters, and the disk entries and bytes now (this
 *  walks the cache directory; 0 and 0 when the disk cache is off).
 *  @param stats  receives them (start from CUJIT_CACHE_STATS_INIT).
 *  @return CUJIT_OK, or CUJIT_ERROR_INVALID_VALUE when stats is NULL or its size is not
 *          that of a version (an uninitialised struct: use CUJIT_CACHE_STATS_INIT). */
CUJIT_API cujit_status cujit_cache_get_stats(cujit_cache_stats *stats);
/** Fills `stats` with the counters kept in the cache directory by every process that used
 *  it (disk hits, misses, compiles, evictions; memory_hits is 0: memory hits are not
 *  recorded on disk), and the entries and bytes now.
 *  @param stats  receives them (start from CUJIT_CACHE_STATS_INIT).
 *  @return CUJIT_OK; CUJIT_ERROR_CACHE when the disk cache is off or unusable (why in
 *          cujit_last_error()); CUJIT_ERROR_INVALID_VALUE as for cujit_cache_get_stats().
 *          The counters read 0 after a failure (a bad size leaves the struct as it was). */
CUJIT_API cujit_status cujit_cache_get_disk_stats(cujit_cache_stats *stats);
/** @return the disk cache's size limit in bytes: env CUJIT_CACHE_MAX_SIZE (bytes, or with
 *  a K, M, G or T suffix), default 1 GiB. Writes that push the cache past it remove least
 *  recently used entries (to 90% of it); a hit counts as a use. */
CUJIT_API uint64_t cujit_cache_max_size(void);
/** Removes every disk entry and empties the memory cache (counters are kept).
 *  @return CUJIT_OK (also when the disk cache is off: the memory cache is still emptied);
 *          CUJIT_ERROR_CACHE when the directory cannot be read. */
CUJIT_API cujit_status cujit_cache_clear(void);
/** Removes least recently used disk entries until the cache holds at most max_bytes
 *  (0 means cujit_cache_max_size()), and temporary files of writers that died.
 *  @param max_bytes  the size to prune to; 0 for the limit.
 *  @return CUJIT_OK (also when the disk cache is off); CUJIT_ERROR_CACHE when the
 *          directory cannot be read. */
CUJIT_API cujit_status cujit_cache_prune(uint64_t max_bytes);

/** One disk entry, as cujit_cache_list() reports it. Strings are valid during the call.
 *  Made by cujit: a callback built against a later header reads a field only when it lies
 *  below `size` (offsetof(cujit_cache_entry, field) < entry->size). */
typedef struct cujit_cache_entry {
  size_t size;      /**< the bytes of this struct that cujit filled */
  const char *key;  /**< 32 hex digits: the entry's key */
  const char *name; /**< the program name it was compiled from ("?" when unreadable) */
  const char *arch; /**< its target ("?" when unreadable) */
  uint64_t bytes;   /**< file size */
  int64_t last_use; /**< seconds since the epoch */
} cujit_cache_entry;
/** Receives one entry; returns 0 to go on, nonzero to stop. */
typedef int (*cujit_cache_entry_fn)(const cujit_cache_entry *entry, void *user);
/** Calls fn for every disk entry, least recently used first.
 *  @param fn    called for each entry, on the calling thread.
 *  @param user  passed to fn.
 *  @return CUJIT_OK; CUJIT_ERROR_CACHE when the disk cache is off, unusable or cannot be
 *          read; CUJIT_ERROR_INVALID_VALUE when fn is NULL. */
CUJIT_API cujit_status cujit_cache_list(cujit_cache_entry_fn fn, void *user);

/** @} */

/* =======================================================================================
 * 6. Typed calls and kernels as C function pointers                               stable
 * ===================================================================================== */

/** @defgroup calls 6. Typed calls and kernels as C function pointers
 *  A signature lists the types of a kernel's parameters. cujit asks the compiler, never
 *  parses the source itself: what NVRTC compiled, with the module's own defines, headers
 *  and options, is what the signature says.
 *   - A C++ kernel's mangled name spells its parameter types exactly; cujit reads them from
 *     it (when the kernel is looked up; no compile). Templates (found through name
 *     expressions, `"scale<float>"`), namespaces, typedefs, types from any header (the
 *     toolkit's __half and __nv_bfloat16 included) and types chosen by `#if` or -D all
 *     come out as the compiler saw them.
 *   - An extern "C" kernel's name spells nothing (and its PTX does not tell a pointer from
 *     a 64-bit integer). At its first typed call (cujit_call(), cujit_function_bind(),
 *     cujit_function_signature()) cujit compiles the module's source again with its own
 *     options, through the caches (so once per source and options, also across runs),
 *     with `template <typename T> __global__ void __cujit_probe() {}` appended and the
 *     name expression `__cujit_probe<decltype(&kernel)>`, whose lowered name spells the
 *     kernel's type; one compile answers for all the module's extern "C" kernels. A
 *     module from prebuilt PTX, CUBIN or fatbin keeps no source: its extern "C" kernels
 *     need an explicit signature (CUJIT_ERROR_SIGNATURE says so); its C++ kernels do not.
 *
 *  The types are then fitted to the kernel's parameter layout: integers (bool is u8, char
 *  i8, long and size_t 64-bit), floating point (f16 for __half, bf16 for __nv_bfloat16),
 *  pointers (any pointer parameter is ptr) and CUDA's vector types (float4 is f32x4,
 *  __half2 f16x2, dim3 u32x3) as themselves; an enum as an integer of its size (where the
 *  module has PTX, which passes an enum as an integer and a struct as bytes); a struct,
 *  union or class, which the compiler names but does not lay out, as opaque bytes of the
 *  size and alignment the layout gives it (b16:8). E.g.
 *
 *      __global__ void saxpy(float a, const float *x, float *__restrict__ y, unsigned n)
 *
 *  has the signature "f32 ptr ptr u32". A symbol cujit cannot read (rare: expressions in
 *  template arguments beyond arithmetic on constants) leaves the types unknown: typed
 *  calls then fail with CUJIT_ERROR_SIGNATURE asking for an explicit signature.
 *
 *  Type strings (explicit signatures, and what cujit_function_signature() returns): types
 *  separated by spaces (or commas), "" or "void" for none.
 *
 *      i8 u8 i16 u16 i32 u32 i64 u64   integers          f16 bf16 f32 f64   floating point
 *      ptr                             a device pointer (any pointer parameter)
 *      f32x4, i32x2, u8x3, f64x2, ...  a CUDA vector type: <scalar>x<1..4> (f32x4 is
 *                                      float4), with CUDA's size and alignment (float4:
 *                                      16 and 16)
 *      {f32 i32 f64[2]}                a struct with these members at C's layout; a
 *                                      member array is type[N]; structs nest
 *      b12, b12:4                      12 opaque bytes, aligned to 1 (or to 4)
 *      T:A                             any type with its alignment raised to A (f64x4:32
 *                                      is double4_32a; {f32 f32 f32}:16 is an
 *                                      __align__(16) struct)
 *
 *  e.g. "f32 ptr ptr u32", "f32x4 {i8 f64} b24:8".
 *  The signature is checked once against the kernel's parameter layout from the driver:
 *  counts, offsets and sizes must agree, else CUJIT_ERROR_SIGNATURE naming the parameter.
 *  @{ */

/** Gives `fn` an explicit signature (a type string, copied) instead of the compiler's. It
 *  may describe a parameter otherwise than the compiler (a struct by its members, so that
 *  a bound function takes it by value: "{f32 i32 f64}"; anything as opaque bytes), but
 *  where the compiler's types are known, a scalar must be the compiler's scalar. It
 *  replaces any earlier one for later calls; bound function pointers made before keep the
 *  signature they were made with. Launches of an extern "C" kernel whose types have not
 *  been asked of the compiler check their arguments against it.
 *  @param fn     the kernel.
 *  @param types  a type string (see above); copied.
 *  @return CUJIT_OK; CUJIT_ERROR_SIGNATURE for a bad type string (saying where), one that
 *          does not match the kernel's parameter layout, or a scalar the compiler's types
 *          contradict; CUJIT_ERROR_INVALID_VALUE. */
CUJIT_API cujit_status cujit_function_set_signature(cujit_function *fn, const char *types);
/** @param fn  the kernel.
 *  @return the function's signature as a type string: the explicit one, else the
 *  compiler's (asked and checked on first use), or NULL when it has none: then
 *  cujit_last_error() says why and what to do. Owned by the module; valid until
 *  cujit_module_destroy(). */
CUJIT_API const char *cujit_function_signature(cujit_function *fn);

/** cujit_call(fn, grid, block, args...) launches `fn` with C values for its arguments,
 *  typed by its signature as a bound function's are:
 *
 *      a number (bool, char ... long long, float, double)   for a scalar parameter: taken,
 *                           or converted to its type, by the rule of launches (the manual's
 *                           "What a parameter takes")
 *      a CUdeviceptr, or CUJIT_IN_PTR(host, bytes), CUJIT_OUT_PTR(...),
 *      CUJIT_INOUT_PTR(...)   for a pointer parameter (write (CUdeviceptr)0, not 0)
 *      a pointer to the value, &v   for a vector, struct or bN parameter
 *
 *  A cujit_arg (cujit_in(), cujit_i32(), ...), which only cujit_launch() takes, a struct
 *  by value or a long double does not compile as an argument (an In buffer here is
 *  CUJIT_IN_PTR()). The macro counts its arguments (at most 64), so a wrong number is
 *  CUJIT_ERROR_INVALID_ARGS and nothing is launched (in C a compound literal with commas,
 *  `(float4){1, 2, 3, 4}`, must be wrapped in parentheses to be one argument; unwrapped, it
 *  does not compile).
 *  Returns what cujit_launch() returns; CUJIT_ERROR_INVALID_ARGS for a wrong count, or a
 *  value its parameter does not take, naming the parameter, the value's type and the value,
 *  and nothing is launched; CUJIT_ERROR_SIGNATURE when the signature cannot be read (see
 *  cujit_function_signature()). */
#define cujit_call(fn, ...)                                                                  \
  (CUJIT_CALL_CHECK_(__VA_ARGS__),                                                           \
   CUJIT_CHECKED_AS_(cujit_call, cujit_call_typed_((fn), CUJIT_CALL_FIRST_(__VA_ARGS__),     \
                                                   CUJIT_CALL_SECOND_(__VA_ARGS__, 0), NULL, \
                                                   CUJIT_CALL_ARGS_(2, __VA_ARGS__))))
/** cujit_call_ex(fn, grid, block, opts, args...): cujit_call() with launch options (a
 *  `const cujit_launch_options *`, read during the call). */
#define cujit_call_ex(fn, ...)                                                              \
  (CUJIT_CALL_CHECK_(__VA_ARGS__),                                                          \
   CUJIT_CHECKED_AS_(cujit_call_ex, cujit_call_typed_((fn), CUJIT_CALL_FIRST_(__VA_ARGS__), \
                                                      CUJIT_CALL_SECOND_(__VA_ARGS__, 0),   \
                                                      CUJIT_CALL_THIRD_(__VA_ARGS__, 0),    \
                                                      CUJIT_CALL_ARGS_(3, __VA_ARGS__))))
/* What cujit_call() and cujit_call_ex() expand to: the kernel's arguments as their macros
 * make them (plain values; a pointer as a value by its address), `nargs` of them. */
CUJIT_API cujit_status cujit_call_typed_(cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                                         const cujit_launch_options *opts, const cujit_arg *args,
                                         size_t nargs);
/** cujit_call() as C varargs, which earlier versions of cujit_call() expanded to: kept for
 *  programs built against them, and for wrappers and more than 64 arguments. Its types
 *  cannot be checked: each argument must be what C passes for its parameter's type after
 *  the default promotions, which cujit undoes (anything else is undefined, as with printf):
 *
 *      i8 u8 i16 u16        an int (char and short promote to it); the value must fit in
 *                           the width, as a signed or an unsigned number
 *      i32 u32              an int or unsigned
 *      i64 u64              a 64-bit integer: write 5LL or (size_t)n, never a plain int
 *      f32 f64              a double (a float promotes to it; f32 narrows it back)
 *      f16 bf16             a double, rounded to the 16-bit format (nearest, ties to even)
 *      ptr                  a CUdeviceptr, CUJIT_IN_PTR(...) and its kin
 *      vectors, structs, bN a pointer to the value: &v
 *
 *  @param fn     the kernel.
 *  @param nargs  the number of varargs that follow `block` (the kernel's arguments).
 *  @param grid   blocks in the grid.
 *  @param block  threads in a block.
 *  @return as cujit_call(). */
CUJIT_API cujit_status cujit_call_n(cujit_function *fn, int nargs, cujit_dim3 grid,
                                    cujit_dim3 block, ...);
/** cujit_call_ex() as C varargs, as cujit_call_n() is cujit_call()'s.
 *  @param fn     the kernel.
 *  @param nargs  the number of varargs that follow `opts` (the kernel's arguments).
 *  @param grid   blocks in the grid.
 *  @param block  threads in a block.
 *  @param opts   NULL for the defaults; read during the call.
 *  @return as cujit_call(). */
CUJIT_API cujit_status cujit_call_ex_n(cujit_function *fn, int nargs, cujit_dim3 grid,
                                       cujit_dim3 block, const cujit_launch_options *opts, ...);

/* Counts macro arguments (1 to 67). */
#define CUJIT_NARGS_(...)                                                                        \
  CUJIT_NARGS_PICK_(__VA_ARGS__, 67, 66, 65, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, \
                    51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33,  \
                    32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,  \
                    13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CUJIT_NARGS_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, \
                          a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30,  \
                          a31, a32, a33, a34, a35, a36, a37, a38, a39, a40, a41, a42, a43, a44,  \
                          a45, a46, a47, a48, a49, a50, a51, a52, a53, a54, a55, a56, a57, a58,  \
                          a59, a60, a61, a62, a63, a64, a65, a66, a67, n, ...)                   \
  n

/* CUJIT_MAP_(m, a, b, ...) is m(a), m(b), ...: each of 1 to 67 arguments given to m. */
#define CUJIT_MAP_(m, ...) CUJIT_MAP_CAT_(CUJIT_MAP, CUJIT_NARGS_(__VA_ARGS__))(m, __VA_ARGS__)
#define CUJIT_MAP_CAT_(a, n) CUJIT_MAP_CAT2_(a, n)
#define CUJIT_MAP_CAT2_(a, n) a##n##_
#define CUJIT_MAP1_(m, a) m(a)
#define CUJIT_MAP2_(m, a, ...) m(a), CUJIT_MAP1_(m, __VA_ARGS__)
#define CUJIT_MAP3_(m, a, ...) m(a), CUJIT_MAP2_(m, __VA_ARGS__)
#define CUJIT_MAP4_(m, a, ...) m(a), CUJIT_MAP3_(m, __VA_ARGS__)
#define CUJIT_MAP5_(m, a, ...) m(a), CUJIT_MAP4_(m, __VA_ARGS__)
#define CUJIT_MAP6_(m, a, ...) m(a), CUJIT_MAP5_(m, __VA_ARGS__)
#define CUJIT_MAP7_(m, a, ...) m(a), CUJIT_MAP6_(m, __VA_ARGS__)
#define CUJIT_MAP8_(m, a, ...) m(a), CUJIT_MAP7_(m, __VA_ARGS__)
#define CUJIT_MAP9_(m, a, ...) m(a), CUJIT_MAP8_(m, __VA_ARGS__)
#define CUJIT_MAP10_(m, a, ...) m(a), CUJIT_MAP9_(m, __VA_ARGS__)
#define CUJIT_MAP11_(m, a, ...) m(a), CUJIT_MAP10_(m, __VA_ARGS__)
#define CUJIT_MAP12_(m, a, ...) m(a), CUJIT_MAP11_(m, __VA_ARGS__)
#define CUJIT_MAP13_(m, a, ...) m(a), CUJIT_MAP12_(m, __VA_ARGS__)
#define CUJIT_MAP14_(m, a, ...) m(a), CUJIT_MAP13_(m, __VA_ARGS__)
#define CUJIT_MAP15_(m, a, ...) m(a), CUJIT_MAP14_(m, __VA_ARGS__)
#define CUJIT_MAP16_(m, a, ...) m(a), CUJIT_MAP15_(m, __VA_ARGS__)
#define CUJIT_MAP17_(m, a, ...) m(a), CUJIT_MAP16_(m, __VA_ARGS__)
#define CUJIT_MAP18_(m, a, ...) m(a), CUJIT_MAP17_(m, __VA_ARGS__)
#define CUJIT_MAP19_(m, a, ...) m(a), CUJIT_MAP18_(m, __VA_ARGS__)
#define CUJIT_MAP20_(m, a, ...) m(a), CUJIT_MAP19_(m, __VA_ARGS__)
#define CUJIT_MAP21_(m, a, ...) m(a), CUJIT_MAP20_(m, __VA_ARGS__)
#define CUJIT_MAP22_(m, a, ...) m(a), CUJIT_MAP21_(m, __VA_ARGS__)
#define CUJIT_MAP23_(m, a, ...) m(a), CUJIT_MAP22_(m, __VA_ARGS__)
#define CUJIT_MAP24_(m, a, ...) m(a), CUJIT_MAP23_(m, __VA_ARGS__)
#define CUJIT_MAP25_(m, a, ...) m(a), CUJIT_MAP24_(m, __VA_ARGS__)
#define CUJIT_MAP26_(m, a, ...) m(a), CUJIT_MAP25_(m, __VA_ARGS__)
#define CUJIT_MAP27_(m, a, ...) m(a), CUJIT_MAP26_(m, __VA_ARGS__)
#define CUJIT_MAP28_(m, a, ...) m(a), CUJIT_MAP27_(m, __VA_ARGS__)
#define CUJIT_MAP29_(m, a, ...) m(a), CUJIT_MAP28_(m, __VA_ARGS__)
#define CUJIT_MAP30_(m, a, ...) m(a), CUJIT_MAP29_(m, __VA_ARGS__)
#define CUJIT_MAP31_(m, a, ...) m(a), CUJIT_MAP30_(m, __VA_ARGS__)
#define CUJIT_MAP32_(m, a, ...) m(a), CUJIT_MAP31_(m, __VA_ARGS__)
#define CUJIT_MAP33_(m, a, ...) m(a), CUJIT_MAP32_(m, __VA_ARGS__)
#define CUJIT_MAP34_(m, a, ...) m(a), CUJIT_MAP33_(m, __VA_ARGS__)
#define CUJIT_MAP35_(m, a, ...) m(a), CUJIT_MAP34_(m, __VA_ARGS__)
#define CUJIT_MAP36_(m, a, ...) m(a), CUJIT_MAP35_(m, __VA_ARGS__)
#define CUJIT_MAP37_(m, a, ...) m(a), CUJIT_MAP36_(m, __VA_ARGS__)
#define CUJIT_MAP38_(m, a, ...) m(a), CUJIT_MAP37_(m, __VA_ARGS__)
#define CUJIT_MAP39_(m, a, ...) m(a), CUJIT_MAP38_(m, __VA_ARGS__)
#define CUJIT_MAP40_(m, a, ...) m(a), CUJIT_MAP39_(m, __VA_ARGS__)
#define CUJIT_MAP41_(m, a, ...) m(a), CUJIT_MAP40_(m, __VA_ARGS__)
#define CUJIT_MAP42_(m, a, ...) m(a), CUJIT_MAP41_(m, __VA_ARGS__)
#define CUJIT_MAP43_(m, a, ...) m(a), CUJIT_MAP42_(m, __VA_ARGS__)
#define CUJIT_MAP44_(m, a, ...) m(a), CUJIT_MAP43_(m, __VA_ARGS__)
#define CUJIT_MAP45_(m, a, ...) m(a), CUJIT_MAP44_(m, __VA_ARGS__)
#define CUJIT_MAP46_(m, a, ...) m(a), CUJIT_MAP45_(m, __VA_ARGS__)
#define CUJIT_MAP47_(m, a, ...) m(a), CUJIT_MAP46_(m, __VA_ARGS__)
#define CUJIT_MAP48_(m, a, ...) m(a), CUJIT_MAP47_(m, __VA_ARGS__)
#define CUJIT_MAP49_(m, a, ...) m(a), CUJIT_MAP48_(m, __VA_ARGS__)
#define CUJIT_MAP50_(m, a, ...) m(a), CUJIT_MAP49_(m, __VA_ARGS__)
#define CUJIT_MAP51_(m, a, ...) m(a), CUJIT_MAP50_(m, __VA_ARGS__)
#define CUJIT_MAP52_(m, a, ...) m(a), CUJIT_MAP51_(m, __VA_ARGS__)
#define CUJIT_MAP53_(m, a, ...) m(a), CUJIT_MAP52_(m, __VA_ARGS__)
#define CUJIT_MAP54_(m, a, ...) m(a), CUJIT_MAP53_(m, __VA_ARGS__)
#define CUJIT_MAP55_(m, a, ...) m(a), CUJIT_MAP54_(m, __VA_ARGS__)
#define CUJIT_MAP56_(m, a, ...) m(a), CUJIT_MAP55_(m, __VA_ARGS__)
#define CUJIT_MAP57_(m, a, ...) m(a), CUJIT_MAP56_(m, __VA_ARGS__)
#define CUJIT_MAP58_(m, a, ...) m(a), CUJIT_MAP57_(m, __VA_ARGS__)
#define CUJIT_MAP59_(m, a, ...) m(a), CUJIT_MAP58_(m, __VA_ARGS__)
#define CUJIT_MAP60_(m, a, ...) m(a), CUJIT_MAP59_(m, __VA_ARGS__)
#define CUJIT_MAP61_(m, a, ...) m(a), CUJIT_MAP60_(m, __VA_ARGS__)
#define CUJIT_MAP62_(m, a, ...) m(a), CUJIT_MAP61_(m, __VA_ARGS__)
#define CUJIT_MAP63_(m, a, ...) m(a), CUJIT_MAP62_(m, __VA_ARGS__)
#define CUJIT_MAP64_(m, a, ...) m(a), CUJIT_MAP63_(m, __VA_ARGS__)
#define CUJIT_MAP65_(m, a, ...) m(a), CUJIT_MAP64_(m, __VA_ARGS__)
#define CUJIT_MAP66_(m, a, ...) m(a), CUJIT_MAP65_(m, __VA_ARGS__)
#define CUJIT_MAP67_(m, a, ...) m(a), CUJIT_MAP66_(m, __VA_ARGS__)

/* cujit_call()'s list split: grid, block (and opts), then the kernel's arguments as an
 * array of cujit_arg made by CUJIT_CALL_ARG_ and their number (a null array and 0 for
 * none). A trailing 0 given to the pickers keeps their `...` from being empty. */
#define CUJIT_CALL_FIRST_(a, ...) a
#define CUJIT_CALL_SECOND_(a, b, ...) b
#define CUJIT_CALL_THIRD_(a, b, c, ...) c
#define CUJIT_CALL_DROP2_(a, b, ...) __VA_ARGS__
#define CUJIT_CALL_DROP3_(a, b, c, ...) __VA_ARGS__
/* 1 when the list holds more than 2 (3) items, else 0. */
#define CUJIT_CALL_MORE2_(...)                                                                     \
  CUJIT_NARGS_PICK_(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, \
                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  \
                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0)
#define CUJIT_CALL_MORE3_(...)                                                                     \
  CUJIT_NARGS_PICK_(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, \
                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  \
                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
#define CUJIT_CALL_ARGS_(skip, ...)                                      \
  CUJIT_MAP_CAT_(CUJIT_CALL_ARGS, CUJIT_CALL_MORE##skip##_(__VA_ARGS__)) \
  (CUJIT_CALL_DROP##skip##_, __VA_ARGS__)
#define CUJIT_CALL_ARGS0_(drop, ...) (const cujit_arg *)0, (size_t)0
#define CUJIT_CALL_ARGS1_(drop, ...)                                \
  CUJIT_CALL_LIST_(CUJIT_MAP_(CUJIT_CALL_ARG_, drop(__VA_ARGS__))), \
      (size_t)CUJIT_NARGS_(drop(__VA_ARGS__))
#ifdef __cplusplus
#  define CUJIT_CALL_LIST_(...) std::initializer_list<cujit_arg>{__VA_ARGS__}.begin()
#  define CUJIT_CALL_ARG_(x) cujit_call_arg_(x)
#else
#  define CUJIT_CALL_LIST_(...) \
    (const cujit_arg[]) { __VA_ARGS__ }
/* A number as a plain value; anything else (a pointer) as a value by its address, which
 * a struct, vector or blob parameter takes (a cujit_arg fails CUJIT_CALL_CHECK_ below). */
#  define CUJIT_CALL_ARG_(x) _Generic((x), CUJIT_PLAIN_CASES_, default : cujit_plain_addr_)(x)
#endif

/* A cujit_arg passed to cujit_call() does not compile: cujit_call() takes what a bound
 * function takes (C values, CUJIT_IN_PTR() for a buffer), cujit_launch() cujit_arg values.
 * In C each argument is looked at by _Generic (an array of negative size is the error), in
 * C++ by a template (cujit_call_check_, at the end). */
#ifndef __cplusplus
#  define CUJIT_CALL_NO_ARG_(x) \
    sizeof(char[_Generic((x), cujit_arg : -1, /* cujit_call() takes no cujit_arg */ default : 1)])
#  define CUJIT_CALL_CHECK_(...) \
    (void)sizeof((size_t[]){CUJIT_MAP_(CUJIT_CALL_NO_ARG_, __VA_ARGS__)})
#else
#  define CUJIT_CALL_CHECK_(...) (void)sizeof(cujit_call_check_(__VA_ARGS__))
#endif

/* (cujit_arg_ref()'s tag, CUJIT_ARG_REF_TAG_, is defined with the plain values.) */
/** A CUdeviceptr standing for argument `a` (an In/Out/InOut buffer or a cujit_ptr), for a
 *  pointer parameter of cujit_call() or of a bound function.
 *  @param a  the argument; must outlive the call.
 *  @return the tagged address (not a device address: only cujit reads it). */
static inline CUdeviceptr cujit_arg_ref(const cujit_arg *a) {
  uint64_t p = (uint64_t)(uintptr_t)a;
  return (CUdeviceptr)((CUJIT_ARG_REF_TAG_ << 48) | ((p >> 48) ? CUJIT_ARG_REF_MASK_ : p));
}
/* In/Out/InOut buffers for pointer parameters of cujit_call() and bound functions, e.g.
 * cujit_call(f, grid, block, CUJIT_OUT_PTR(dest, n * 4), CUJIT_IN_PTR(a, n * 4), n). Each is one
 * argument (a tagged CUdeviceptr) naming a cujit_arg that lives until the end of the
 * enclosing block in C, and until the end of the full expression (the call) in C++. */
#ifdef __cplusplus
#  define CUJIT_ARG_TEMP_(arg) cujit_arg_ref(std::initializer_list<cujit_arg>{arg}.begin())
#else
#  define CUJIT_ARG_TEMP_(arg) cujit_arg_ref((const cujit_arg[]){arg})
#endif
/** An In buffer for a pointer parameter of cujit_call() or of a bound function, as in
 *  `cujit_call(f, grid, block, CUJIT_OUT_PTR(dest, n * 4), CUJIT_IN_PTR(a, n * 4), n)`: one
 *  argument (a tagged CUdeviceptr) naming the cujit_arg that cujit_in(host, bytes)
 *  makes, which lives until the end of the enclosing block in C, and until the end of
 *  the full expression (the call) in C++. */
#define CUJIT_IN_PTR(host, bytes) CUJIT_ARG_TEMP_(cujit_in((host), (bytes)))
/** An Out buffer for a pointer parameter of cujit_call() or of a bound function: as
 *  CUJIT_IN_PTR(), for cujit_out(host, bytes). */
#define CUJIT_OUT_PTR(host, bytes) CUJIT_ARG_TEMP_(cujit_out((host), (bytes)))
/** An InOut buffer for a pointer parameter of cujit_call() or of a bound function: as
 *  CUJIT_IN_PTR(), for cujit_inout(host, bytes). */
#define CUJIT_INOUT_PTR(host, bytes) CUJIT_ARG_TEMP_(cujit_inout((host), (bytes)))

/** Makes `fn` callable as a C function: *fnptr receives a pointer to a function of type
 *
 *      cujit_status (*)(cujit_dim3 grid, cujit_dim3 block, <kernel's parameters>)
 *
 *  Cast it to a typedef of that type, e.g. for saxpy:
 *
 *      typedef cujit_status (*saxpy_fn)(cujit_dim3, cujit_dim3, float, CUdeviceptr,
 *                                       CUdeviceptr, unsigned);
 *
 *  so that the compiler checks and converts each argument. Parameter types: integers and
 *  f32/f64 as themselves (int8_t ... uint64_t, float, double); f16 and bf16 as float
 *  (rounded to nearest, ties to even); ptr as CUdeviceptr, which may also be CUJIT_IN_PTR(...),
 *  CUJIT_OUT_PTR(...), CUJIT_INOUT_PTR(...) or cujit_arg_ref(); vectors by value, as a C struct of
 *  the same members and alignment (CUDA's vector_types.h declares float4 and the others
 *  for C); opaque bN parameters, and structs holding one (unions), by address
 *  (const void *) -- which is how the compiler's signature passes a struct it names (a
 *  struct of yours): give an explicit signature with its members ("{f32 i32 f64}") to
 *  pass it by value instead. A struct with a member aligned beyond its size cannot be
 *  bound (CUJIT_ERROR_SIGNATURE).
 *  `opts`, if non-NULL, is read at every call, so changing the struct it points to changes
 *  the stream and shared memory of later calls; it must outlive the pointer. Its size is
 *  checked at each call too, as cujit_launch() checks it.
 *  Any number may be alive at once. On x86-64 Linux, when every parameter is an integer, a
 *  floating-point value, a pointer or a bN value, the pointer is one of 1,024 entry points
 *  in the library, each handed out once per process, where each argument's place is
 *  worked out when the kernel is bound. Otherwise (a vector or struct by value, another
 *  system, or past the 1,024th) it is a libffi closure, which finds each argument at
 *  every call (docs/manual/typed-calls.md gives what each costs).
 *  The function pointer is owned by the module: it launches until cujit_function_unbind()
 *  or cujit_module_destroy(). After either, calling it launches nothing and returns
 *  CUJIT_ERROR_INVALID_VALUE, for the life of the process: its entry point, or its libffi
 *  closure (64 bytes on x86-64 Linux), is kept, aimed at a function that refuses the call,
 *  and never handed out again, while everything else of the binding is freed. So each
 *  pointer ever unbound keeps its entry point or those bytes until the process exits: bind
 *  a kernel once and keep the pointer, rather than binding and unbinding around calls. It
 *  may be called from any thread, as cujit_launch() may, but not while another thread
 *  unbinds it or destroys its module.
 *  @param fn     the kernel.
 *  @param opts   NULL for the defaults, or launch options read at every call.
 *  @param fnptr  receives the function pointer; owned by the module.
 *  @return CUJIT_OK; CUJIT_ERROR_SIGNATURE when the signature cannot be read or bound;
 *          CUJIT_ERROR_INVALID_VALUE; CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_function_bind(cujit_function *fn, const cujit_launch_options *opts,
                                           void **fnptr);
/** Frees a function pointer made by cujit_function_bind() for `fn`; calling it afterwards
 *  returns CUJIT_ERROR_INVALID_VALUE and launches nothing (see cujit_function_bind()). A
 *  pointer that is not one of fn's (or NULL, or one already unbound) is ignored.
 *  @param fn     the kernel it was made for.
 *  @param fnptr  the function pointer. */
CUJIT_API void cujit_function_unbind(cujit_function *fn, void *fnptr);

/** @} */

/* =======================================================================================
 * 7. Many kernels at once: batches and jobs                                       stable
 * ===================================================================================== */

/** @defgroup batches 7. Many kernels at once: batches and jobs
 *  Compiling many kernels at once. NVRTC compiles one program at a time inside a process,
 *  so threads calling cujit_module_from_source() side by side take as long as one after
 *  the other. The calls below run compiles side by side in worker processes instead: the
 *  `cujit-worker` program installed with the library (env CUJIT_WORKER names another by
 *  its absolute path), run only when it and its directory belong to the user or root and
 *  no one else may write them (else the compiles run here and a warning says why),
 *  started on first need and kept for later compiles (each keeps its NVRTC loaded and its
 *  precompiled headers), at most cujit_compile_set_jobs() - 1 of them beside the one
 *  compile that runs in this process. Every source first goes through the memory and disk
 *  caches here; only misses are compiled, and the disk cache's lock still makes one
 *  process per key compile it, workers and other processes alike. A compile runs in this
 *  process when no other one does (one kernel alone never goes through a worker), and a
 *  worker that cannot be started, dies, is stopped or answers wrongly fails nothing: that
 *  compile is done here (logged at info level); one that does not answer within its time
 *  limit or cancel (see cujit_options.time_limit_s) is killed. The modules are exactly
 *  those cujit_module_from_source() makes of the same source, name and options. Workers
 *  end when this process exits or some seconds after the last compile. Options are those
 *  of cujit_module_from_source(); opts->cancel is called on a cujit thread, as are log
 *  callbacks for what happens in this process during these compiles; a worker's own
 *  messages never reach the log callback (a worker writes them to stderr when its
 *  environment's CUJIT_LOG asks for them). Jobs belong to the process that started them: a child
 *  made by fork() must not wait on, cancel or destroy its parent's jobs (it has none of
 *  the threads that run them).
 *  @{ */

/** A compile started with cujit_compile_job_start() that goes on while the caller works. */
typedef struct cujit_compile_job cujit_compile_job;

/** Compiles many sources at once, as cujit_module_from_source() compiles each; returns
 *  when all are done. A source repeated (same text and name) is compiled once.
 *  @param mods      receives n modules, mods[i] for sources[i] (NULL where it failed);
 *                   each owned by the caller, free with cujit_module_destroy().
 *  @param statuses  NULL, or receives n statuses, statuses[i] for sources[i].
 *  @param sources   n NUL-terminated sources; copied.
 *  @param names     NULL (every name "source.cu"), or n names (a NULL one is "source.cu").
 *  @param n         the number of sources.
 *  @param opts      for every source; NULL for defaults.
 *  @return CUJIT_OK when every source compiled; otherwise the status of the first that
 *          failed, and cujit_last_error() says how many failed and gives each one's index,
 *          name, status and detail (its NVRTC log for a compile error). A failure costs
 *          only its own source. CUJIT_ERROR_INVALID_VALUE when mods or sources is NULL. */
CUJIT_API cujit_status cujit_batch_compile(cujit_module **mods, cujit_status *statuses,
                                           const char *const *sources, const char *const *names,
                                           size_t n, const cujit_options *opts);

/** Starts compiling a source and returns at once; the compile goes on in cujit's threads
 *  (and, beside another compile, in a worker process). The target is chosen now, from
 *  the current device as cujit_module_from_source() chooses it.
 *  @param job     receives the job; owned by the caller, free with
 *                 cujit_compile_job_destroy() (after cujit_compile_job_wait() or instead).
 *  @param source  as for cujit_module_from_source(), and so are `name` and `opts`; all
 *                 copied, so they need live only during this call.
 *  @param name    as for cujit_module_from_source().
 *  @param opts    as for cujit_module_from_source().
 *  @return CUJIT_OK once started; the option and source errors of
 *          cujit_module_from_source() (then *job is NULL); CUJIT_ERROR_OUT_OF_MEMORY.
 *          The compile's own result comes from cujit_compile_job_wait(). */
CUJIT_API cujit_status cujit_compile_job_start(cujit_compile_job **job, const char *source,
                                               const char *name, const cujit_options *opts);
/** @param job  the job.
 *  @return 1 when the job has finished (cujit_compile_job_wait() returns at once), 0 while it
 *  is queued or compiling. 1 for NULL. Never blocks. */
CUJIT_API int cujit_compile_job_poll(const cujit_compile_job *job);
/** Waits for the job to finish.
 *  @param job  the job.
 *  @param out  receives the module on success (NULL otherwise); owned by the caller, free
 *              with cujit_module_destroy(). The module is handed over once: a second wait
 *              on a successful job is CUJIT_ERROR_INVALID_VALUE.
 *  @return what cujit_module_from_source() would have returned, with the same detail in
 *          this thread's cujit_last_error() (cujit_compile_job_error() keeps it too);
 *          CUJIT_ERROR_CANCELLED after cujit_compile_job_cancel() stopped it;
 *          CUJIT_ERROR_INVALID_VALUE for NULL arguments. */
CUJIT_API cujit_status cujit_compile_job_wait(cujit_compile_job *job, cujit_module **out);
/** Asks the job to stop: a queued one never compiles, a running one stops at NVRTC's next
 *  check (see cujit_options.time_limit_s; in a worker process, half a second later at
 *  the latest), and cujit_compile_job_wait() then returns CUJIT_ERROR_CANCELLED. A job that
 *  finished first keeps its result. Returns at once.
 *  @param job  the job; NULL is fine. */
CUJIT_API void cujit_compile_job_cancel(cujit_compile_job *job);
/** @param job  the job.
 *  @return the detail of a finished job's failure, "" while it runs or when it compiled.
 *  Owned by the job; valid until cujit_compile_job_destroy(). */
CUJIT_API const char *cujit_compile_job_error(const cujit_compile_job *job);
/** Frees the job, and its module if no wait took it. A job still running is cancelled and
 *  waited for first.
 *  @param job  the job; NULL is fine. */
CUJIT_API void cujit_compile_job_destroy(cujit_compile_job *job);
/** Sets how many compiles of batches and jobs run at once in this process and its worker
 *  processes together (1: none in workers). 0 returns to the default: env
 *  CUJIT_COMPILE_JOBS, else the number of CPUs this process may run on.
 *  @param n  compiles at once, at most 256; 0 for the default. */
CUJIT_API void cujit_compile_set_jobs(unsigned n);

/** @} */

/* =======================================================================================
 * 8. Compiling once for many processes: export, import, bundles                   stable
 * ===================================================================================== */

/** @defgroup export 8. Compiling once for many processes: export, import, bundles
 *  Compiling once for many processes (the ranks of an MPI job, say): one process compiles
 *  and exports the module as a blob, sends it (MPI_Bcast of its bytes as MPI_BYTE), and
 *  the others import it, giving what they would have given cujit_module_from_source().
 *  The blob holds the compiled code (PTX, CUBIN, lowered names, log) in the disk cache's
 *  entry format, a checksum, the cache key it was compiled under and a fingerprint of what
 *  it was compiled from. An import computes the key this process would compile under (its
 *  NVRTC, target, options, source and the headers it includes from disk, as the cache
 *  does) and takes the blob only when the keys are equal, so an imported module is exactly
 *  what compiling here would have made, and its kernels are found by name as a compiled
 *  module's are. Processes on one node that share a disk cache need none of this: the
 *  first to miss compiles while the others wait for its entry.
 *
 *  A bundle does the same ahead of time, for several GPUs: made once (by
 *  cujit_bundle_from_source() or `cujit compile --arch sm_80,sm_90`), it is loaded as
 *  prebuilt code (cujit_module_from_image()) or warms a cache (cujit_bundle_warm()).
 *  @{ */

/** Exports a module compiled from source (cujit_module_from_source(), _from_file(), or an
 *  import) as a blob for cujit_module_import(). Needs no GPU and no NVRTC. The headers the
 *  source includes from disk are read again: export before changing them.
 *  @param mod   the module.
 *  @param blob  receives the bytes; owned by the caller, free with cujit_free().
 *  @param size  receives their number.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for NULL arguments, a module made from
 *          prebuilt code (cujit_module_from_image(): there is no cache key to check it
 *          by; send the code itself), a source whose compile the cache cannot key (an
 *          `#include` through an undefined macro, NVRTC options that read or write files),
 *          or a header changed since the module was compiled; CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_module_export(const cujit_module *mod, void **blob, size_t *size);

/** Makes a module from a blob of cujit_module_export(), for the same source, name and
 *  options that would be given to cujit_module_from_source() here. No NVRTC program is
 *  created (cujit_cache_get_stats() counts no compile), and no GPU is needed. The module
 *  is stored in the memory cache and, unless a valid entry is there already, in the disk
 *  cache, as a compile's result is (neither with CUJIT_OPT_NO_CACHE): a later
 *  cujit_module_from_source() of the same request, here or in a process sharing the cache
 *  directory, finds it. A process with no NVRTC at all takes the blob's as the one its
 *  keys name. The blob may be freed once the call returns. Its checks catch mistakes, not
 *  forgery: import only blobs from processes you trust (your job's rank 0).
 *  @param out     receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param blob    the bytes cujit_module_export() gave, unchanged.
 *  @param size    their number.
 *  @param source  as for cujit_module_from_source(), and so are `name` and `opts`.
 *  @param name    as for cujit_module_from_source().
 *  @param opts    as for cujit_module_from_source().
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE when out is NULL, the blob is NULL or empty,
 *          not a blob, truncated, padded, corrupted (checksum) or of another format version,
 *          saying which, or when it does not hold what this process would compile, saying
 *          which part differs: NVRTC, target architecture, program name, include directories,
 *          defines, NVRTC options, in-memory headers, name expressions, toolkit include
 *          search, source, a header included from disk (naming it) or the toolkit's
 *          location (CUDA_PATH, CUDA_HOME); CUJIT_ERROR_INVALID_SOURCE and
 *          CUJIT_ERROR_INVALID_OPTION as cujit_module_from_source(); CUJIT_ERROR_NO_NVRTC
 *          only when neither this machine nor the blob names an NVRTC;
 *          CUJIT_ERROR_OUT_OF_MEMORY. On any failure, compiling with
 *          cujit_module_from_source() is the fallback. */
CUJIT_API cujit_status cujit_module_import(cujit_module **out, const void *blob, size_t size,
                                           const char *source, const char *name,
                                           const cujit_options *opts);

/** cujit_module_import() for a module the exporter made with cujit_module_from_file(path,
 *  opts): reads the file here, as that call does.
 *  @param out   receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param blob  the bytes cujit_module_export() gave, unchanged.
 *  @param size  their number.
 *  @param path  the file, as the exporter named it.
 *  @param opts  as the exporter gave them.
 *  @return as cujit_module_import(), plus cujit_module_from_file()'s file errors. */
CUJIT_API cujit_status cujit_module_import_file(cujit_module **out, const void *blob, size_t size,
                                                const char *path, const cujit_options *opts);

/** Compiles `source` ahead of time for several GPUs into one bundle (cujit's own
 *  container, described in docs/bundle.md): for each target in `archs`, its CUBIN
 *  ("sm_90"; none for "compute_90"), PTX for the newest target without an "a" or "f"
 *  suffix and for each compute_XX one, and what warms a cache (cujit_bundle_warm()): per target the
 * blob cujit_module_export() makes, and the source, name and options once. Load a bundle with
 *  cujit_module_from_image(); `cujit info FILE` lists it. Each target is compiled as
 *  cujit_module_from_source() with opts->arch set to it would, through the cache.
 *  @param out    receives the bytes; owned by the caller, free with cujit_free().
 *  @param size   receives their number.
 *  @param source NUL-terminated CUDA C; copied.
 *  @param name   as for cujit_module_from_source(): part of every target's cache key.
 *  @param opts   NULL for defaults; its arch is ignored (each of `archs` is used).
 *  @param archs  "sm_XX" or "compute_XX" targets (suffixes as for cujit_options.arch),
 *                each once; at most 64.
 *  @param narchs their number.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for NULL out, size or archs, or narchs 0;
 *          CUJIT_ERROR_INVALID_OPTION for a target given twice or not of those forms (or
 *          that this NVRTC cannot compile for); the compile's failure for any target, as
 *          cujit_module_from_source() returns it (CUJIT_ERROR_COMPILE with NVRTC's log);
 *          CUJIT_ERROR_INVALID_VALUE, as cujit_module_export() refuses it, for a source
 *          whose inputs cannot all be named in a key (its includes are not all found
 *          where the cache looks); CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_bundle_from_source(void **out, size_t *size, const char *source,
                                                const char *name, const cujit_options *opts,
                                                const char *const *archs, size_t narchs);

/** cujit_bundle_from_source() for a .cu file, compiled as cujit_module_from_file() does
 *  (the path as its name, its directory first on the include path): a later
 *  cujit_module_from_file() of the same path and options, or `cujit compile`, from the same
 *  directory is a cache hit on a machine the bundle warmed.
 *  @param out    receives the bytes; owned by the caller, free with cujit_free().
 *  @param size   receives their number.
 *  @param path   the .cu file.
 *  @param opts   as for cujit_bundle_from_source().
 *  @param archs  as for cujit_bundle_from_source().
 *  @param narchs their number.
 *  @return as cujit_bundle_from_source(), plus CUJIT_ERROR_FILE when the file cannot be
 *  read. */
CUJIT_API cujit_status cujit_bundle_from_file(void **out, size_t *size, const char *path,
                                              const cujit_options *opts, const char *const *archs,
                                              size_t narchs);

/** Warms this machine's cache from a bundle made from source: each target's cache entry is
 *  stored in the memory and disk caches exactly as cujit_module_import() stores a blob,
 *  after its key is computed again here from the bundle's source, name and options with
 *  this machine's NVRTC and headers (a source that includes headers from disk needs them
 *  at the same paths). An entry whose key differs is not stored, and the first refusal is
 *  returned saying which part differs (NVRTC, a header, an option, ...); the other targets
 *  are still stored. Needs no GPU. The entries are stored even when the bundle was made
 *  with CUJIT_OPT_NO_CACHE; nothing is stored to disk when the disk cache is off
 *  (CUJIT_CACHE=0).
 *  @param data    the bundle's bytes (cujit_bundle_from_source()); read during the call.
 *  @param size    their number.
 *  @param stored  receives how many targets were stored (may be NULL).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for NULL or empty data, a damaged bundle
 *          (saying how: the same check of the bytes as cujit_module_from_image() and
 *          cujit_image_describe() make, CUBIN and PTX entries included), one not made
 *          from source (no source, options or entries; each entry is checked as
 *          cujit_module_import() checks a blob), or a refused entry (saying which
 *          part differs); CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_bundle_warm(const void *data, size_t size, size_t *stored);

/** @} */

/* =======================================================================================
 * 9. Linking several parts into one module                                        stable
 * ===================================================================================== */

/** @defgroup linking 9. Linking several parts into one module
 *  A program of several sources, each compiled with relocatable device code, and prebuilt
 *  device code, linked by nvJitLink (the toolkit's device linker, loaded at run time like
 *  NVRTC: env CUJIT_NVJITLINK (an absolute path; a relative one is refused), else beside the NVRTC
 * in use, else where NVRTC is looked for) into one CUBIN for one GPU architecture. A kernel in one
 * part may call a
 *  __device__ function defined in another and use an `extern __device__` variable defined
 *  in another; with CUJIT_LINK_OPT_LTO the sources are compiled to LTO-IR and optimised
 *  together at link time (calls across sources can be inlined). Kernels that launch
 *  kernels (dynamic parallelism) need the device runtime: add a CUJIT_LINK_CUDADEVRT part.
 *  @{ */

/** What a part of a link holds (cujit_link_part.kind). */
typedef enum cujit_link_kind {
  CUJIT_LINK_SOURCE = 1,   /**< CUDA C: text in `data` (NUL-terminated), or a .cu file at
                                `path`; compiled with the link's cujit_options plus
                                -rdc=true (and -dlto with CUJIT_LINK_OPT_LTO), through the cache */
  CUJIT_LINK_PTX = 2,      /**< PTX text (nvcc -ptx -rdc=true, or NVRTC with -rdc=true) */
  CUJIT_LINK_CUBIN = 3,    /**< a CUBIN, relocatable (nvcc -cubin -rdc=true) or not */
  CUJIT_LINK_FATBIN = 4,   /**< a fatbin (nvcc -fatbin -rdc=true) */
  CUJIT_LINK_LTOIR = 5,    /**< NVVM LTO-IR (nvcc -dlto -dc, or NVRTC with -dlto) */
  CUJIT_LINK_LIBRARY = 6,  /**< a static library (.a) whose objects hold device code */
  CUJIT_LINK_OBJECT = 7,   /**< a host object (.o) holding device code (nvcc -dc) */
  CUJIT_LINK_CUDADEVRT = 8 /**< the toolkit's device runtime library, libcudadevrt.a, found
                                by cujit (beside nvJitLink, or where NVRTC is looked for);
                                `data` and `path` stay NULL, or `path` names another copy */
} cujit_link_kind;

/** One part of a link. Start from CUJIT_LINK_PART_INIT (see "Structs that grow"). Give
 *  either `data` (with `data_size`, which may be 0 for source text) or `path`. */
typedef struct cujit_link_part {
  size_t size;      /**< sizeof, set by CUJIT_LINK_PART_INIT; or 0 */
  int kind;         /**< a cujit_link_kind */
  const char *name; /**< shown in messages and logs; NULL: the path, else "part<i>"
                         (i counted from 0) */
  const void *data; /**< the bytes (or source text); copied as needed during the call */
  size_t data_size; /**< their number; for source text 0 means strlen(data) */
  const char *path; /**< a file to read instead of data */
} cujit_link_part;
/** cujit_link_part with its size set and every other field empty. */
#define CUJIT_LINK_PART_INIT \
  { sizeof(cujit_link_part), 0, NULL, NULL, 0, NULL }

/** Link flags (cujit_link_options.flags). */
enum {
  CUJIT_LINK_OPT_LTO = 1u << 0 /**< link-time optimisation: sources are compiled to LTO-IR
                                (-dlto) and nvJitLink optimises the program as a whole
                                (-lto); LTO-IR parts are linked the same way */
};

/** Options for a link. Start from CUJIT_LINK_OPTIONS_INIT, or pass NULL for defaults. */
typedef struct cujit_link_options {
  size_t size;                /**< sizeof, set by CUJIT_LINK_OPTIONS_INIT; or 0 */
  unsigned flags;             /**< CUJIT_LINK_* */
  const char *const *options; /**< nvJitLink options as they are ("-O3",
                                   "-maxrregcount=64"), NULL-terminated; the target
                                   (-arch) and -lto are cujit's to set */
  const char *name;           /**< the module's name; NULL means "linked" */
} cujit_link_options;
/** cujit_link_options with its size set and every other field at its default. */
#define CUJIT_LINK_OPTIONS_INIT \
  { sizeof(cujit_link_options), 0, NULL, NULL }

/** Compiles the source parts and links every part into one module, as `nvcc -rdc=true`
 *  and `nvlink` would (or takes it from the cache). The target is that of the sources'
 *  compiles (cujit_options.arch, env CUJIT_ARCH, else the current device), which must be
 *  a real sm_XX: a link makes a CUBIN. With no source parts it is opts->arch, CUJIT_ARCH
 *  or the device's. Prebuilt CUBINs and fatbins must hold code for that target, or PTX
 *  or LTO-IR that nvJitLink compiles for it.
 *  The cache: each source is compiled through the compile cache under its own key (its
 *  text, its headers, the options with -rdc=true/-dlto, NVRTC); the linked CUBIN is kept
 *  in the memory and disk caches under a key made of every part's bytes (a source's
 *  compiled output), their kinds and order, the target, the link flags and options, and
 *  the nvJitLink in use. A second process linking the same parts reads the entry and
 *  loads neither NVRTC nor nvJitLink. CUJIT_OPT_NO_CACHE in opts->flags bypasses both.
 *  The module is an ordinary one: cujit_module_get_function() and
 *  cujit_module_get_global() find kernels and variables of any part by name (read from
 *  the linked CUBIN, without a device), and launches and typed calls work as for compiled
 *  modules (an extern "C" kernel's parameter types need cujit_function_set_signature(),
 *  as for prebuilt code; parameter layouts come from the driver, CUDA 12.4 or newer).
 *  cujit_module_cubin() gives the linked CUBIN; cujit_module_ptx() ""; cujit_module_log()
 *  nvJitLink's messages; cujit_module_arch() the target. The CUBIN is loaded as it is on
 *  devices of its architecture (no PTX fallback); cujit_module_export() refuses a linked
 *  module.
 *  @param out    receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param parts  `count` parts (at least one), in link order, each made with
 *                CUJIT_LINK_PART_INIT: the array is stepped through by the first part's
 *                size, and a part of another size is refused.
 *  @param count  their number.
 *  @param opts   compile options for every source part (NULL for defaults).
 *  @param link   link options (NULL for defaults).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for NULL out or parts, count 0, an unknown
 *          kind, a part with neither data nor path, or a bad struct size (or parts of
 *          unequal sizes);
 *          CUJIT_ERROR_FILE naming a part's file that cannot be read, or libcudadevrt.a
 *          not found (saying where it looked); CUJIT_ERROR_INVALID_SOURCE for a PTX, CUBIN
 *          or fatbin part whose bytes are not of its kind (a cujit bundle is never a
 *          part); a source's compile failure as cujit_module_from_source();
 *          CUJIT_ERROR_INVALID_OPTION for a target or link
 *          option refused (no target at all, or a compute_XX one, included);
 *          CUJIT_ERROR_LINK with nvJitLink's error log (an undefined or duplicate symbol,
 *          a part it cannot read, a part built for another architecture);
 *          CUJIT_ERROR_NO_NVJITLINK saying where it looked; CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_module_link(cujit_module **out, const cujit_link_part *parts,
                                         size_t count, const cujit_options *opts,
                                         const cujit_link_options *link);

/** @return the absolute path of the nvJitLink library a link loads (or would load), ""
 *  when it is found only by the system's search or not at all. Static storage. */
CUJIT_API const char *cujit_nvjitlink_path(void);

/** @} */

/* =======================================================================================
 * 10. Prebuilt code: PTX, CUBIN, fatbins, bundles                                 stable
 * ===================================================================================== */

/** @defgroup prebuilt 10. Prebuilt code: PTX, CUBIN, fatbins, bundles
 *  Modules from code compiled elsewhere (nvcc, NVRTC, a cujit bundle), loaded without
 *  NVRTC or the cache, and a description of such bytes for people.
 *  @{ */

/** Makes a module from code built elsewhere (nvcc -ptx, -cubin or -fatbin, NVRTC, a cujit
 *  bundle, or files shipped beside the program), as CuPy's RawModule(path=...) and
 *  PyCUDA's module_from_buffer() do. The kind is told from the bytes themselves: an ELF
 *  file is a CUBIN, a fatbin and a cujit bundle (cujit_bundle_from_source(), `cujit
 *  compile --arch sm_80,sm_90`) are known by their headers, and text with .version and
 *  .target directives is PTX (trailing NULs are ignored). Neither NVRTC nor the cache is
 *  involved, and no GPU is needed until the first kernel or variable lookup.
 *  A fatbin or bundle holds code for several GPUs. When it is loaded on a device, cujit
 *  chooses the entry: the CUBIN built for exactly that device, else the newest CUBIN of
 *  the same major version and an older minor one (sm_80 code on an sm_86 device; an
 *  "a" CUBIN only on its own device), else the newest PTX no newer than the device,
 *  compiled by the driver's JIT. It logs its choice at CUJIT_LOG_INFO and
 *  cujit_module_loaded_as() tells it. A module loads at most one CUBIN and one PTX entry:
 *  on a second device that neither runs, the lookup fails with CUJIT_ERROR_LOAD (make a
 *  second module of the same bytes for it).
 *  The module then behaves as a compiled one: cujit_module_get_function() finds kernels by
 *  plain name ("multiply_them", also without extern "C"; "ns::kernel") or symbol, with the
 *  same NOT_FOUND and AMBIGUOUS errors; variables are found by name; launches are checked
 *  against the parameter layout the driver reports. The kernels of a CUBIN or fatbin are
 *  listed by the driver, so for them a kernel lookup loads the module first (a driver for
 *  CUDA 12.4 or newer is needed, else CUJIT_ERROR_NOT_SUPPORTED), and without a driver
 *  fails with CUJIT_ERROR_NO_DRIVER whatever the name; their variables are listed from the
 *  CUBIN's symbols (a fatbin whose entries are all compressed: only symbols are found,
 *  e.g. "_ZN2ns3valE" for ns::val). A C++ kernel's parameter types are read from its
 *  mangled name, as for compiled modules; an extern "C" kernel's name spells none, and
 *  there is no source to ask the compiler about it: give it a signature with
 *  cujit_function_set_signature() before cujit_call() or binding.
 *  cujit_module_ptx() gives the PTX for PTX input, "" otherwise; cujit_module_cubin() the
 *  CUBIN for CUBIN input, NULL otherwise; cujit_module_arch() what the bytes were built
 *  for ("compute_90" for PTX, "sm_90" for a CUBIN, the entries of a fatbin or bundle, e.g.
 *  "sm_80 compute_80 sm_90", as far as 31 characters hold them); cujit_module_log() "".
 *  @param out   receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param data  the bytes; copied, so they need live only during the call.
 *  @param size  their number.
 *  @param name  shown in messages (copied); NULL means "image.ptx", "image.cubin",
 *               "image.fatbin" or "image.bundle" after the kind found.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_SOURCE for NULL or empty data, a truncated or
 *          damaged ELF or fatbin header, a damaged bundle (truncated, a bad magic, version
 *          or checksum, entries outside it or overlapping, counts it cannot hold), an ELF
 *          file that is not a CUBIN (another machine, 32-bit, big-endian), or bytes of none
 *          of the four kinds, saying which;
 *          CUJIT_ERROR_INVALID_VALUE when out is NULL; CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_module_from_image(cujit_module **out, const void *data, size_t size,
                                               const char *name);

/** Reads a PTX, CUBIN, fatbin or bundle file and makes a module of it as
 *  cujit_module_from_image() does, named by the path (a .cu file goes to
 *  cujit_module_from_file()). The file is opened without blocking and must be a regular
 *  file of at most 1 GiB.
 *  @param out   receives the module; owned by the caller, free with cujit_module_destroy().
 *  @param path  the file.
 *  @return as cujit_module_from_image(), plus CUJIT_ERROR_FILE naming the file when it
 *          cannot be opened or read, or is a FIFO, a device, a directory or too large;
 *          CUJIT_ERROR_INVALID_SOURCE when it is empty. */
CUJIT_API cujit_status cujit_module_from_image_file(cujit_module **out, const char *path);

/** What a module loaded on device `device` (an ordinal below 64): "CUBIN sm_90" when a
 *  CUBIN was loaded there, "PTX compute_100 (JIT)" when PTX was compiled for it by the
 *  driver's JIT. For a fatbin or bundle this is the entry cujit chose (see
 *  cujit_module_from_image()); for a compiled module, its CUBIN or its PTX.
 *  @param mod     the module.
 *  @param device  the device's ordinal.
 *  @return a string owned by the module, or NULL when nothing is loaded there yet (the
 *          first kernel or variable lookup on the device loads it) or mod is NULL. */
CUJIT_API const char *cujit_module_loaded_as(cujit_module *mod, int device);

/** Describes PTX, a CUBIN, a fatbin or a bundle in lines of text for people (`cujit info
 *  FILE`): its kind and size, and each entry of a fatbin or bundle with its target and
 *  size (a bundle's cache entries with their keys and NVRTC, its source and options).
 *  Strings taken from the bytes (names, options, the NVRTC build) are shown escaped, so
 *  that a terminal acts on none of them: control characters, bytes that are not UTF-8 and
 *  the backslash as `\x1b`, `\x0a`, `\\`.
 *  @param data  the bytes.
 *  @param size  their number.
 *  @param name  names the bytes in messages (a file's path); NULL means "image".
 *  @param text  receives NUL-terminated text; owned by the caller, free with cujit_free().
 *  @return CUJIT_OK, or as cujit_module_from_image() for bytes it cannot read. */
CUJIT_API cujit_status cujit_image_describe(const void *data, size_t size, const char *name,
                                            char **text);

/** @} */

/* =======================================================================================
 * 11. Devices, NVRTC and the driver                                               stable
 * ===================================================================================== */

/** @defgroup devices 11. Devices, NVRTC and the driver
 *  NVRTC is loaded at run time, on the first compile that needs it (a program whose
 *  kernels all come from the cache never maps it): env CUJIT_NVRTC (the library file's
 *  absolute path; a relative one is refused, naming the variable) when set, else the NVRTC
 *  the program already has (linked or loaded), else libnvrtc.so.13, then .so.12, then
 *  libnvrtc.so, each looked for in LD_LIBRARY_PATH's directories, the toolkit cujit was
 *  built with, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda (each lib64, then lib), else the
 *  system's library search. When none loads, compiling fails with CUJIT_ERROR_NO_NVRTC
 *  saying where it looked; cache hits and prebuilt PTX, CUBIN and fatbins keep working.
 *  Cache keys name NVRTC by its library's build (read from the file, not loaded), and the
 *  library a compile then loads must be that file: one replaced in between is refused
 *  (CUJIT_ERROR_NO_NVRTC). On a machine without NVRTC, keys name the NVRTC that last wrote
 *  to the cache directory, so that a cache filled elsewhere can be used.
 *  @{ */

/** NVRTC's version (loads NVRTC).
 *  @param major  if non-NULL, receives the major version.
 *  @param minor  if non-NULL, receives the minor version.
 *  @return CUJIT_OK, CUJIT_ERROR_NO_NVRTC, or CUJIT_ERROR_NVRTC. */
CUJIT_API cujit_status cujit_nvrtc_get_version(int *major, int *minor);
/** @return the absolute path of the NVRTC library cujit loads or would load, found
 *  without loading it; "" when only the system's library search can find it (or none is
 *  installed, or CUJIT_NVRTC was refused). Static storage. */
CUJIT_API const char *cujit_nvrtc_path(void);
/** Architectures this NVRTC compiles for, as numbers (75, 80, 90, ...) (loads NVRTC).
 *  @param archs     caller's array of `capacity` ints (may be NULL when capacity is 0).
 *  @param capacity  the ints archs has room for.
 *  @param count     receives the total number (may exceed capacity).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL count, or a NULL archs with a
 *          nonzero capacity; CUJIT_ERROR_NO_NVRTC; CUJIT_ERROR_NVRTC. */
CUJIT_API cujit_status cujit_nvrtc_get_archs(int *archs, size_t capacity, size_t *count);
/** Loads the driver (once) and reports its CUDA version (13000 for CUDA 13.0).
 *  @param version  receives it.
 *  @return CUJIT_OK, CUJIT_ERROR_NO_DRIVER (libcuda.so.1 not found, or env CUJIT_LIBCUDA
 *  is not an absolute path or names a file that cannot be loaded), CUJIT_ERROR_NO_DEVICE,
 * CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_driver_get_version(int *version);
/** Number of CUDA devices.
 *  @param count  receives it.
 *  @return as cujit_driver_get_version(). */
CUJIT_API cujit_status cujit_device_get_count(int *count);
/** Name and compute capability of a device.
 *  @param device     its ordinal.
 *  @param name       if non-NULL, receives its name: at most `name_size` bytes,
 *                    NUL-terminated.
 *  @param name_size  the bytes name has room for.
 *  @param cc_major   if non-NULL, receives the major compute capability.
 *  @param cc_minor   if non-NULL, receives the minor compute capability.
 *  @return CUJIT_OK; CUJIT_ERROR_NO_DEVICE for an ordinal with no device (naming how many
 *          there are); CUJIT_ERROR_NO_DRIVER; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_device_get_info(int device, char *name, size_t name_size,
                                             int *cc_major, int *cc_minor);

/** @name Several devices in one process
 *  Every call that needs a device works on the device of the calling thread's current
 *  CUDA context; a thread without one gets the primary context of env CUJIT_DEVICE
 *  (default 0). cujit_device_set_current() chooses the device per thread without driver calls of
 *  the caller's own; a program may also make its own
 *  contexts current (cuCtxSetCurrent through cujit_driver_get_symbol()).
 *
 *  One module serves every device: it is compiled once, for the compute capability all
 *  devices share (on a machine with devices of different kinds, for the device current
 *  when it is compiled), and its image is loaded on a device the first time a kernel or
 *  variable of it is used there: the CUBIN where it fits the device, else the PTX through
 *  the driver's JIT (which needs the PTX's target to be no newer than the device: on a
 *  mixed machine, give cujit_options.arch the oldest device's compute_XX). Each
 *  cujit_function keeps its handle and limits per device, so the same cujit_function is
 *  launched on any device from any thread. Device memory, streams, arrays and textures
 *  belong to the device that was current when they were made: use them with that device
 *  current (free an array or device memory with its device current too).
 *
 *  Devices do not wait for each other: each has its own pool of In/Out memory and its own
 *  pinned chunks and threads for pageable copies, so a thread doing In/Out on device 1
 *  proceeds while device 0 is busy, and copies to both run at once. A kernel fault (an
 *  illegal address) ends GPU work for the whole process, as CUDA documents: later calls
 *  on any device then return CUJIT_ERROR_LAUNCH_FAILED saying so (a driver that keeps the
 *  other devices going leaves their memory and pools sound). Resetting the device's
 *  primary context (cuDevicePrimaryCtxReset, as cudaDeviceReset does) does not bring it
 *  back: the reset returns success, but every later call that needs the device still
 *  fails with a status and a message, which says, whatever the driver's error, that the
 *  context is no longer usable and to end the process; arrays made before the fault can
 *  still be destroyed. Save what you can and end the process (a new process can use the GPU), or
 *  run kernels that may fault in a process of their own.
 *  @{ */

/** Makes device `ordinal`'s primary context current on the calling thread: later calls of
 *  this thread (launches, memory, arrays, module loads) use that device. The primary
 *  context is retained once per process and kept until it exits, as the one cujit takes
 *  for CUJIT_DEVICE. Other threads are not affected.
 *  @param ordinal  the device.
 *  @return CUJIT_OK; CUJIT_ERROR_NO_DEVICE naming the ordinal and the number of devices
 *          when there is no such device (a negative ordinal included, checked before the
 *          driver is loaded); CUJIT_ERROR_NO_DRIVER; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_device_set_current(int ordinal);
/** The device the calling thread works on: its current context's device, else the one
 *  env CUJIT_DEVICE names (0 when unset), which is also the answer without a driver.
 *  @param ordinal  receives the device's ordinal.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE when `ordinal` is NULL or CUJIT_DEVICE is
 *          not a number (*ordinal is -1 then); CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_device_get_current(int *ordinal);
/** Entry point of any CUDA driver function by its base name ("cuMemsetD8"), for
 *  programs that want driver calls without linking libcuda. The version is the one of the
 *  cuda.h cujit was built with.
 *  @param name  the base name ("cuMemAlloc", not "cuMemAlloc_v2").
 *  @param fn    receives the function pointer (NULL on failure).
 *  @return CUJIT_OK; CUJIT_ERROR_NOT_FOUND when the driver has no such entry point;
 *          CUJIT_ERROR_INVALID_VALUE for a NULL argument; CUJIT_ERROR_NO_DRIVER. */
CUJIT_API cujit_status cujit_driver_get_symbol(const char *name, void **fn);

/** @} */

/** @} */

/* =======================================================================================
 * 12. Logging (silent by default)                                                 stable
 * ===================================================================================== */

/** @defgroup logging 12. Logging
 *  cujit prints nothing by default. A log callback receives its lines, or env CUJIT_LOG
 *  sends them to stderr.
 *  @{ */

/** How much the log says: a level passes the lines of its own and the levels above it. */
typedef enum cujit_log_level {
  CUJIT_LOG_OFF = 0,   /**< nothing (the default) */
  CUJIT_LOG_ERROR = 1, /**< failures */
  CUJIT_LOG_WARN = 2,  /**< and what may go wrong or be slow (a cache that cannot be used) */
  CUJIT_LOG_INFO = 3,  /**< and what cujit decided (a compile bypassing the cache, a worker) */
  CUJIT_LOG_DEBUG = 4  /**< and everything else */
} cujit_log_level;

/** Receives one log line (no trailing newline). `message` is valid only during the call,
 *  and holds names and NVRTC's log as they are (the default output to stderr escapes
 *  them: see cujit_log_set_callback()). May be called from any thread that calls cujit;
 *  must not call cujit itself. */
typedef void (*cujit_log_fn)(cujit_log_level level, const char *message, void *user);

/** Routes log lines at or below the current level to `fn`. Thread-safe.
 *  @param fn    the callback; NULL restores the default: write each line to stderr as
 *               `cujit: <level>: <line>`, which only happens when CUJIT_LOG is set. There
 *               control characters and bytes that are not UTF-8 (in a file's name, or a
 *               source line NVRTC quotes) are written as `\x1b`, `\xff`: a name from
 *               another user's directory never acts on the terminal. A newline and a tab
 *               pass.
 *  @param user  passed to fn. */
CUJIT_API void cujit_log_set_callback(cujit_log_fn fn, void *user);
/** Sets the level. The initial level comes from env CUJIT_LOG=off|error|warn|info|debug
 *  (off when unset). A CUJIT_LOG that is none of these ("verbose", "debug" and a newline)
 *  leaves the level off, and the log's first message, once a level turns it on, names the
 *  value that was ignored (a warning, or an error where only errors pass).
 *  Thread-safe.
 *  @param level  the new level. */
CUJIT_API void cujit_log_set_level(cujit_log_level level);
/** @return the current log level. */
CUJIT_API cujit_log_level cujit_log_current_level(void);
/** @return the value of CUJIT_LOG that was not a log level and was therefore ignored (its
 *  first 64 bytes, escaped as cujit_image_describe() escapes: `"debug\x0a"`), or NULL when
 *  CUJIT_LOG is unset or a level (`cujit info` shows it). Owned by cujit; valid for the
 *  life of the process. */
CUJIT_API const char *cujit_log_env_ignored(void);

/** @} */

/* =======================================================================================
 * 13. Textures and surfaces (need a device)                                 experimental
 * ===================================================================================== */

/** @defgroup textures 13. Textures and surfaces
 *  A texture object reads memory through the texture units: cached, with coordinates out
 *  of range clamped, wrapped, mirrored or given a border value, optional linear filtering
 *  and normalized coordinates. A surface object reads and writes a CUDA array from
 *  kernels (surf2Dwrite, surf2Dread, ...). Both are 64-bit handles, passed to kernels by
 *  value: a cudaTextureObject_t parameter takes cujit_texture(tex), a cudaSurfaceObject_t
 *  one cujit_surface(surf) (cujit_u64() works too). They belong to the context current
 *  when they were made, like device memory. These need a device.
 *
 *  The descriptors grow as "Structs that grow" says: start from CUJIT_TEXTURE_DESC_INIT or
 *  CUJIT_CUARRAY_DESC_INIT, or zero them for the defaults.
 *  @{ */

/** A texture object (CUtexObject). 0 is none. */
typedef unsigned long long cujit_texobj;
/** A surface object (CUsurfObject). 0 is none. */
typedef unsigned long long cujit_surfobj;

/** A texture object as a kernel argument (for a cudaTextureObject_t parameter).
 *  @param t  the texture object.
 *  @return the argument. */
static inline cujit_arg cujit_texture(cujit_texobj t) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U64, t, t);
}
/** A surface object as a kernel argument (for a cudaSurfaceObject_t parameter).
 *  @param s  the surface object.
 *  @return the argument. */
static inline cujit_arg cujit_surface(cujit_surfobj s) {
  return CUJIT_ARG_NUMBER_(CUJIT_TYPE_U64, s, s);
}

/** Element formats: one channel's type. A texel is 1, 2 or 4 channels of it (float,
 *  float2, float4; uchar4; ...). */
typedef enum cujit_format {
  CUJIT_FORMAT_F32 = 0, /**< float (the default) */
  CUJIT_FORMAT_F16 = 1, /**< __half; read as float */
  CUJIT_FORMAT_U8 = 2,  /**< unsigned char */
  CUJIT_FORMAT_I8 = 3,  /**< signed char */
  CUJIT_FORMAT_U16 = 4, /**< unsigned short */
  CUJIT_FORMAT_I16 = 5, /**< short */
  CUJIT_FORMAT_U32 = 6, /**< unsigned int */
  CUJIT_FORMAT_I32 = 7  /**< int */
} cujit_format;

/** What a read outside [0, width) (or [0, 1) with normalized coordinates) returns. */
typedef enum cujit_address_mode {
  CUJIT_ADDRESS_CLAMP = 0,  /**< the nearest edge element (the default) */
  CUJIT_ADDRESS_WRAP = 1,   /**< repeats the texture (normalized coordinates only) */
  CUJIT_ADDRESS_MIRROR = 2, /**< repeats it mirrored (normalized coordinates only) */
  CUJIT_ADDRESS_BORDER = 3  /**< border_color */
} cujit_address_mode;

/** How a texture read between elements is sampled. */
typedef enum cujit_filter_mode {
  CUJIT_FILTER_POINT = 0, /**< the nearest element (the default) */
  CUJIT_FILTER_LINEAR = 1 /**< linear interpolation of the nearest 2, 4 or 8 (reads float) */
} cujit_filter_mode;

/** What a texture read of integer elements returns. */
typedef enum cujit_read_mode {
  CUJIT_READ_ELEMENT = 0,         /**< the element's own type (the default) */
  CUJIT_READ_NORMALIZED_FLOAT = 1 /**< 8- and 16-bit integers as floats in [0, 1] ([-1, 1]
                                       when signed) */
} cujit_read_mode;

/** How a texture is sampled. NULL or zero-initialised: clamp, point, element type,
 *  coordinates in elements. */
typedef struct cujit_texture_desc {
  size_t size;           /**< sizeof, set by CUJIT_TEXTURE_DESC_INIT; or 0 */
  int address_mode[3];   /**< per dimension x, y, z: cujit_address_mode */
  int filter;            /**< cujit_filter_mode */
  int read_mode;         /**< cujit_read_mode */
  int normalized_coords; /**< nonzero: coordinates in [0, 1) instead of [0, width) */
  float border_color[4]; /**< per channel, for CUJIT_ADDRESS_BORDER */
} cujit_texture_desc;
/** cujit_texture_desc with its size set and every other field at its default. */
#define CUJIT_TEXTURE_DESC_INIT                                                \
  {                                                                            \
    sizeof(cujit_texture_desc), {0, 0, 0}, 0, 0, 0, { 0.0f, 0.0f, 0.0f, 0.0f } \
  }

/** A texture over linear device memory, read in kernels with `tex1Dfetch<T>(tex, i)` by
 *  element index (no filtering and no normalized coordinates: use a pitched or array
 *  texture for those).
 *  @param tex      receives the object; owned by the caller: cujit_texture_destroy(). It
 *                  reads `dptr`, which must outlive it.
 *  @param dptr     device memory, aligned as the device requires for textures (memory from
 *                  cujit_mem_alloc() is).
 *  @param bytes    its size: a whole number of elements, at most the device's limit for
 *                  1-D linear textures of this format.
 *  @param format   the element's channel type.
 *  @param channels the element's channels: 1, 2 or 4.
 *  @param desc     NULL for defaults.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE naming the argument or limit (checked before
 *          the driver is asked where possible); CUJIT_ERROR_NO_DRIVER / _NO_DEVICE;
 *          CUJIT_ERROR_NOT_SUPPORTED when the driver lacks texture objects. */
CUJIT_API cujit_status cujit_texture_from_linear(cujit_texobj *tex, CUdeviceptr dptr, size_t bytes,
                                                 cujit_format format, unsigned channels,
                                                 const cujit_texture_desc *desc);

/** A 2-D texture over pitched device memory: `height` rows of `width` elements, each row
 *  starting `pitch` bytes after the previous one. Read with `tex2D<T>(tex, x, y)`.
 *  @param tex      receives the object; owned by the caller: cujit_texture_destroy(). It
 *                  reads `dptr`, which must outlive it.
 *  @param dptr     device memory, aligned as for cujit_texture_from_linear().
 *  @param width    elements per row.
 *  @param height   rows.
 *  @param pitch    bytes from one row to the next: at least a row's bytes and a multiple
 *                  of the device's texture pitch alignment (32 on current GPUs).
 *  @param format   the element's channel type.
 *  @param channels the element's channels: 1, 2 or 4.
 *  @param desc     NULL for defaults.
 *  @return as cujit_texture_from_linear(); width, height and pitch are checked against the
 *          device's limits for 2-D linear textures. */
CUJIT_API cujit_status cujit_texture_from_pitched(cujit_texobj *tex, CUdeviceptr dptr, size_t width,
                                                  size_t height, size_t pitch, cujit_format format,
                                                  unsigned channels,
                                                  const cujit_texture_desc *desc);

/** Array flags (cujit_cuarray_desc.flags). */
enum {
  CUJIT_CUARRAY_SURFACE = 1u << 0 /**< may be written through surface objects */
};

/** The shape and element of a CUDA array. 1-D: height and depth 0; 2-D: depth 0. */
typedef struct cujit_cuarray_desc {
  size_t size;       /**< sizeof, set by CUJIT_CUARRAY_DESC_INIT; or 0 */
  size_t width;      /**< elements per row; at least 1 */
  size_t height;     /**< rows; 0 for a 1-D array */
  size_t depth;      /**< slices; 0 for a 1-D or 2-D array */
  int format;        /**< cujit_format */
  unsigned channels; /**< 1, 2 or 4; 0 means 1 */
  unsigned flags;    /**< CUJIT_CUARRAY_* */
} cujit_cuarray_desc;
/** cujit_cuarray_desc with its size set and every other field 0. */
#define CUJIT_CUARRAY_DESC_INIT \
  { sizeof(cujit_cuarray_desc), 0, 0, 0, 0, 0, 0 }

/** A CUDA array: device memory laid out for 1-D, 2-D and 3-D texture reads. */
typedef struct cujit_cuarray cujit_cuarray;

/** Makes a CUDA array on the current device and fills it from `host`, if non-NULL: dense
 *  rows of width elements, height rows (1 when 0) per slice, depth slices (1 when 0).
 *  @param out   receives the array; owned by the caller: cujit_cuarray_destroy(), after
 *               every texture and surface object made from it.
 *  @param desc  its shape and element (start from CUJIT_CUARRAY_DESC_INIT).
 *  @param host  NULL, or the data to fill it with.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL or bad descriptor or a size
 *          beyond the device's texture (and, with CUJIT_CUARRAY_SURFACE, surface) limits;
 *          CUJIT_ERROR_DEVICE_MEMORY; CUJIT_ERROR_NO_DRIVER / _NO_DEVICE. */
CUJIT_API cujit_status cujit_cuarray_create(cujit_cuarray **out, const cujit_cuarray_desc *desc,
                                            const void *host);
/** Copies dense host data (as cujit_cuarray_create() reads it) into the array. Waits until
 *  the copy is done.
 *  @param arr   the array.
 *  @param host  cujit_cuarray_bytes() bytes.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL argument; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_cuarray_write(cujit_cuarray *arr, const void *host);
/** Copies the array into dense host memory. Ordered after earlier work on the legacy
 *  default stream and the streams that synchronise with it; after a launch on a
 *  cujit_stream_create() stream, synchronise that stream first.
 *  @param arr   the array.
 *  @param host  receives cujit_cuarray_bytes() bytes.
 *  @return as cujit_cuarray_write(). */
CUJIT_API cujit_status cujit_cuarray_read(const cujit_cuarray *arr, void *host);
/** @param arr  the array.
 *  @return the array's bytes as dense host data (width x height x depth x element); 0
 *  for NULL. */
CUJIT_API size_t cujit_cuarray_bytes(const cujit_cuarray *arr);
/** @param arr  the array.
 *  @return the driver's handle, for driver calls of your own; NULL for NULL. Owned by the
 *  array. */
CUJIT_API CUarray cujit_cuarray_handle(const cujit_cuarray *arr);
/** Frees the array. Texture and surface objects made from it must be destroyed first.
 *  @param arr  the array; NULL is fine.
 *  @return CUJIT_OK, or the driver's failure. */
CUJIT_API cujit_status cujit_cuarray_destroy(cujit_cuarray *arr);

/** A texture over an array, read with `tex1D<T>`, `tex2D<T>` or `tex3D<T>` by the array's
 *  dimensions; every sampling mode works (wrap and mirror need normalized coordinates).
 *  @param tex   receives the object; owned by the caller: cujit_texture_destroy(), before
 *               cujit_cuarray_destroy(arr).
 *  @param arr   the array.
 *  @param desc  NULL for defaults.
 *  @return as cujit_texture_from_linear(). */
CUJIT_API cujit_status cujit_texture_from_array(cujit_texobj *tex, const cujit_cuarray *arr,
                                                const cujit_texture_desc *desc);
/** A surface object over an array made with CUJIT_CUARRAY_SURFACE, for surf1Dread,
 *  surf2Dwrite, ... (x in bytes).
 *  @param surf receives the object; owned by the caller: cujit_surface_destroy(), before
 *              cujit_cuarray_destroy(arr).
 *  @param arr  the array.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a NULL argument or an array made
 *          without CUJIT_CUARRAY_SURFACE; CUJIT_ERROR_NO_DRIVER / _NO_DEVICE. */
CUJIT_API cujit_status cujit_surface_from_array(cujit_surfobj *surf, const cujit_cuarray *arr);
/** Destroys a texture object.
 *  @param tex  the object; 0 is fine.
 *  @return CUJIT_OK, or the driver's failure. */
CUJIT_API cujit_status cujit_texture_destroy(cujit_texobj tex);
/** Destroys a surface object.
 *  @param surf  the object; 0 is fine.
 *  @return CUJIT_OK, or the driver's failure. */
CUJIT_API cujit_status cujit_surface_destroy(cujit_surfobj surf);

/** @} */

/* =======================================================================================
 * 14. Questioning the cache: why a compile missed, whether entries are reproducible
 *                                                                           experimental
 * ===================================================================================== */

/** @defgroup explain 14. Questioning the cache: explain and verify
 *  Why a compile missed (cujit_cache_explain()), and whether entries are reproducible
 *  (cujit_cache_verify()). Every disk entry keeps a manifest of what went into its key,
 *  part by part: NVRTC's build, the target, the program name, the source text, the
 *  include directories, defines, NVRTC options, in-memory headers (with their text), name
 *  expressions, the toolkit setting, and each header included from disk (path, size,
 *  hash). A compile never reads it: a hit costs what it did. It costs about the source's
 *  size (plus in-memory headers and a few hundred bytes) per entry.
 *  @{ */

/** The part of a cache key that differs between a request and an entry. */
typedef enum cujit_cache_part {
  CUJIT_CACHE_PART_NVRTC = 0,            /**< NVRTC's version or build */
  CUJIT_CACHE_PART_ARCH = 1,             /**< the target architecture */
  CUJIT_CACHE_PART_NAME = 2,             /**< the program name (a file's path) */
  CUJIT_CACHE_PART_SOURCE = 3,           /**< the source text */
  CUJIT_CACHE_PART_HEADER = 4,           /**< a header included from disk (`what` names it) */
  CUJIT_CACHE_PART_INCLUDE_DIRS = 5,     /**< the include path */
  CUJIT_CACHE_PART_DEFINES = 6,          /**< the defines */
  CUJIT_CACHE_PART_OPTIONS = 7,          /**< the NVRTC options */
  CUJIT_CACHE_PART_MEMORY_HEADERS = 8,   /**< the in-memory headers */
  CUJIT_CACHE_PART_NAME_EXPRESSIONS = 9, /**< the name expressions */
  CUJIT_CACHE_PART_TOOLKIT = 10          /**< whether (and where) the toolkit's headers are
                                              searched: CUJIT_OPT_NO_TOOLKIT_INCLUDES, env
                                              CUDA_PATH and CUDA_HOME */
} cujit_cache_part;

/** One difference between a request and the cache entry nearest to it. Made by cujit;
 *  strings are valid during the callback. A callback built against a later header reads
 *  a field only when it lies below `size`. */
typedef struct cujit_cache_difference {
  size_t size;           /**< the bytes of this struct that cujit filled */
  cujit_cache_part part; /**< which part of the key differs */
  const char *what;      /**< the item: a header's path, an option, a define, ... ("" for
                              the part as a whole) */
  const char *detail;    /**< a sentence saying how it differs, entry first, now second */
} cujit_cache_difference;
/** Receives one difference; returns 0 to go on, nonzero to stop. */
typedef int (*cujit_cache_difference_fn)(const cujit_cache_difference *d, void *user);

/** Which tier would give a request its module. The memory cache is this process's own. */
typedef enum cujit_cache_tier {
  CUJIT_CACHE_TIER_UNCACHED = 0, /**< the request bypasses the cache (see `reason`) */
  CUJIT_CACHE_TIER_MEMORY = 1,   /**< this process's memory cache */
  CUJIT_CACHE_TIER_DISK = 2,     /**< the disk cache */
  CUJIT_CACHE_TIER_REMOTE = 3,   /**< the remote tier (cujit_cache_set_remote) */
  CUJIT_CACHE_TIER_COMPILE = 4   /**< nothing holds it: NVRTC would compile it */
} cujit_cache_tier;

/** What cujit_cache_explain() found. Start from CUJIT_CACHE_EXPLANATION_INIT (or zero it):
 *  cujit writes the fields up to `size`. */
typedef struct cujit_cache_explanation {
  size_t size;            /**< sizeof, set by CUJIT_CACHE_EXPLANATION_INIT; or 0 */
  int hit;                /**< 1 when a cache tier holds the module (memory, disk, remote) */
  cujit_cache_tier tier;  /**< the tier that would serve it */
  char key[33];           /**< the request's disk key (32 hex digits; "" when uncached) */
  char reason[512];       /**< for UNCACHED, why; for COMPILE, why the tiers miss; else "" */
  int has_nearest;        /**< 1 when a miss found an entry to compare with */
  char nearest_key[33];   /**< the nearest entry's key */
  char nearest_name[256]; /**< its program name */
  char nearest_arch[32];  /**< its target */
  unsigned differences;   /**< how many differences were found (each given to the callback) */
  uint64_t entries;       /**< disk entries compared (entries written without a manifest, by
                               an older cujit, are not counted) */
} cujit_cache_explanation;
/** cujit_cache_explanation with its size set and every other field empty. */
#define CUJIT_CACHE_EXPLANATION_INIT \
  { sizeof(cujit_cache_explanation), 0, CUJIT_CACHE_TIER_UNCACHED, "", "", 0, "", "", "", 0, 0 }

/** Says whether compiling `source` with `name` and `opts` (as cujit_module_from_source()
 *  would) is a cache hit now and which tier would serve it, without compiling anything
 *  or creating an NVRTC program. On a miss, the disk entry nearest to the request (fewest
 *  differing parts; the most recently used among equals) is compared with it part by part,
 *  and fn (may be NULL) receives each difference. The remote tier, when one is set, is
 *  asked whether it holds the key (one lookup; nothing is written). A valid entry is read
 *  as a hit is, so its last use is recorded.
 *  @param source  as for cujit_module_from_source().
 *  @param name    as for cujit_module_from_source().
 *  @param opts    as for cujit_module_from_source().
 *  @param out     receives the answer (see CUJIT_CACHE_EXPLANATION_INIT).
 *  @param fn      NULL, or called with each difference, on the calling thread.
 *  @param user    passed to fn.
 *  @return CUJIT_OK (a miss too); CUJIT_ERROR_INVALID_SOURCE, CUJIT_ERROR_INVALID_OPTION as
 *          cujit_module_from_source(); CUJIT_ERROR_NO_NVRTC when no NVRTC is known to name
 *          in the key; CUJIT_ERROR_INVALID_VALUE for a NULL out or a bad out->size;
 *          CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_cache_explain(const char *source, const char *name,
                                           const cujit_options *opts, cujit_cache_explanation *out,
                                           cujit_cache_difference_fn fn, void *user);
/** cujit_cache_explain() for a file, compiled as cujit_module_from_file() compiles it.
 *  @param path  the .cu file.
 *  @param opts  as for cujit_module_from_file().
 *  @param out   receives the answer (see CUJIT_CACHE_EXPLANATION_INIT).
 *  @param fn    NULL, or called with each difference, on the calling thread.
 *  @param user  passed to fn.
 *  @return as cujit_cache_explain(), plus CUJIT_ERROR_FILE when it cannot be read. */
CUJIT_API cujit_status cujit_cache_explain_file(const char *path, const cujit_options *opts,
                                                cujit_cache_explanation *out,
                                                cujit_cache_difference_fn fn, void *user);

/** What became of one entry in cujit_cache_verify(). */
typedef enum cujit_cache_verdict {
  CUJIT_CACHE_VERDICT_MATCH = 0,    /**< compiled again, byte for byte the same */
  CUJIT_CACHE_VERDICT_MISMATCH = 1, /**< compiled again from the same inputs, other bytes */
  CUJIT_CACHE_VERDICT_SKIPPED = 2   /**< not compiled again: its inputs cannot be had any more (a
                                 header changed, another NVRTC), it records none, it is not
                                 a valid entry, or the compile failed (`detail` says) */
} cujit_cache_verdict;

/** One verified entry. Made by cujit; strings are valid during the callback. */
typedef struct cujit_cache_verified {
  size_t size;                 /**< the bytes of this struct that cujit filled */
  const char *key;             /**< the entry's key (32 hex digits) */
  const char *name;            /**< its program name ("?" when unreadable) */
  const char *arch;            /**< its target ("?" when unreadable) */
  cujit_cache_verdict verdict; /**< what became of it */
  const char *detail;          /**< what differs, or why it was skipped ("" for a match) */
} cujit_cache_verified;
/** Receives one entry's verdict; returns 0 to go on, nonzero to stop. */
typedef int (*cujit_cache_verify_fn)(const cujit_cache_verified *v, void *user);

/** Counts from cujit_cache_verify(). Start from CUJIT_CACHE_VERIFY_SUMMARY_INIT. */
typedef struct cujit_cache_verify_summary {
  size_t size;         /**< sizeof, set by CUJIT_CACHE_VERIFY_SUMMARY_INIT; or 0 */
  uint64_t entries;    /**< entries in the disk cache */
  uint64_t matched;    /**< compiled again to the same bytes */
  uint64_t mismatched; /**< compiled again to other bytes */
  uint64_t skipped;    /**< not compiled again (each with its reason) */
} cujit_cache_verify_summary;
/** cujit_cache_verify_summary with its size set and every count 0. */
#define CUJIT_CACHE_VERIFY_SUMMARY_INIT \
  { sizeof(cujit_cache_verify_summary), 0, 0, 0, 0 }

/** Compiles disk entries again from the inputs their manifests record, with NVRTC's own
 *  cache off, and compares PTX, CUBIN and lowered names byte for byte. An entry is
 *  compiled again only when the key of its recorded inputs, computed now (this NVRTC, the
 *  headers on disk now, from the working directory), is its key: otherwise it is SKIPPED,
 *  saying which part changed, never a mismatch. Compiles run one after another on the
 *  calling thread; nothing in the cache is changed or counted.
 *  cujit compiles with NVRTC's -frandom-seed (NVRTC 13 and later, unless the caller's
 *  options set one), so names NVRTC would make up at random are the same every time.
 *  @param sample  how many entries to verify, chosen at random; 0 for all.
 *  @param fn      receives each entry's verdict (may be NULL).
 *  @param user    passed to fn.
 *  @param summary receives the counts (may be NULL).
 *  @return CUJIT_OK, mismatches or not (the summary counts them); CUJIT_ERROR_CACHE when the
 *          disk cache is off, unusable or cannot be read; CUJIT_ERROR_INVALID_VALUE for a
 *          bad summary->size; CUJIT_ERROR_OUT_OF_MEMORY. */
CUJIT_API cujit_status cujit_cache_verify(size_t sample, cujit_cache_verify_fn fn, void *user,
                                          cujit_cache_verify_summary *summary);

/** @} */

/* =======================================================================================
 * 19. Graphs: capture work once, launch it many times                       experimental
 * ===================================================================================== */

/** @defgroup graphs 19. Graphs: capture work once, launch it many times
 *  CUDA graphs through stream capture, as CuPy's Stream.begin_capture() / end_capture() /
 *  Graph.launch() and cuda.core's GraphBuilder make them. The work queued on a stream
 *  between cujit_graph_begin() and cujit_graph_end() does not run: it becomes a graph,
 *  which cujit_graph_launch() then runs on any stream, as often as wanted, at a fraction of
 *  what launching its kernels one by one costs (the driver launches the whole graph at
 *  once). Whatever queues work on the stream is captured: cujit_launch() and
 *  CUJIT_LAUNCH(), cujit_call(), bound function pointers, array operations and the
 *  generators' calls (on arrays whose stream is the captured one:
 *  cujit_array_set_stream()), copies and memsets on the stream.
 *
 *      CUstream s;  cujit_graph *g;
 *      cujit_stream_create(&s);
 *      cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL);
 *      for (int i = 0; i < 100; i++)
 *        CUJIT_LAUNCH_EX(step, grid, block, &opts_on_s, x, y, n);  // captured, not run
 *      cujit_graph_end(s, &g);
 *      for (int t = 0; t < 1000; t++) cujit_graph_launch(g, s);   // runs the 100 steps
 *      cujit_stream_synchronize(s);
 *      cujit_graph_destroy(g);
 *
 *  What a capture cannot hold is refused when it is asked for, with CUJIT_ERROR_CAPTURE
 *  and its reason, nothing captured and the capture going on: waiting for the captured
 *  stream (cujit_stream_synchronize(), cujit_synchronize(), a timed launch, a timer on it,
 *  reading an array of it into host memory: cujit_array_read() and the calls that return a
 *  host value, checked indices), In/Out buffers in pageable host memory (a graph copies
 *  only page-locked memory; cujit_host_alloc() gives some), destroying the stream. A call
 *  the driver itself refuses during a capture (another library's, or one cujit cannot see
 *  coming) fails with CUJIT_ERROR_CAPTURE saying so; the driver may then have invalidated
 *  the capture, and cujit_graph_end() fails too.
 *  What a capture can hold works as it does outside one, with these differences:
 *  - a kernel's first launch may compile and load its module during the capture: NVRTC
 *    needs no stream, and cujit loads code in the relaxed capture mode, which the driver
 *    allows while captures run (loading adds nothing to the graph);
 *  - device memory cujit makes during the capture (an operation's new array, an In/Out
 *    buffer's device side, temporaries) is not part of the graph: it is made outside it
 *    (on a stream of the capture's own) and the graph holds it, so that every launch finds
 *    it at the same address; what is given back during the capture is kept by the graph
 *    (and taken again by later requests of the same size in the same capture) until the
 *    graph is destroyed. cujit_mem_pool_get_usage() counts it in use meanwhile;
 *  - an In/Out buffer's copies are the graph's: each launch copies the host buffer as it
 *    is then, and its Out buffers hold the results once the launch's stream has been
 *    waited for; the host buffers must live as long as the graph.
 *  What the graph's work uses is held by the graph, so that destroying it while the graph
 *  lives is deferred, never a fault: cujit_module_destroy() of a module whose kernels it
 *  launches takes the handle away at once (later calls refuse it) and unloads the code
 *  when the last graph using it is destroyed; cujit_array_destroy() of an array whose memory
 *  its launches or copies use (found by the kernels' pointer arguments, whoever made
 *  them, and the array operations' copies) gives the memory back then, as a view's memory
 *  is held by the other views; a graph launched by another capture is held by that
 *  capture's graph. Memory cujit did not make (cujit_mem_alloc(), another library's) and
 *  host buffers are the program's to keep alive.
 *  The driver's rules of stream capture apply: the legacy default stream cannot be
 *  captured (make a stream with cujit_stream_create()); a blocking stream being captured
 *  makes the legacy default stream unusable meanwhile; a stream forked from the captured
 *  one (an event recorded on it, waited for by another stream) is captured too, and
 *  must be joined back before the end. A capture begun through the driver directly
 *  (cuStreamBeginCapture) is not cujit's: its launches are captured as the driver does,
 *  but cujit neither holds what they use nor refuses what would break the capture.
 *  Checking whether a launch's stream is being captured costs a launch nothing while no
 *  capture runs (one test of a counter); while one runs, launches look their stream up in
 *  cujit's table of captures.
 *  @{ */

/** A graph made by cujit_graph_end(): a handle, as a module's is (a destroyed one is
 *  refused). */
typedef struct cujit_graph cujit_graph;

/** What the driver refuses meanwhile, in the calls it deems unsafe during a capture
 *  (memory allocation, synchronisations of the device): CUDA's stream capture modes. */
typedef enum cujit_capture_mode {
  /** Refused on this thread during its capture and on every thread during another
   *  thread's global capture (CUDA's default). */
  CUJIT_CAPTURE_GLOBAL = 0,
  /** Refused on this thread during its capture only. */
  CUJIT_CAPTURE_THREAD_LOCAL = 1,
  /** Not refused: the program answers for them. The capture may end on any thread. */
  CUJIT_CAPTURE_RELAXED = 2
} cujit_capture_mode;

/** Begins capturing the work queued on `stream` into a graph: from now until
 *  cujit_graph_end(), that work does not run. Before the capture begins an event is
 *  recorded on the stream, so that what the graph holds is given back after the work
 *  queued earlier.
 *  @param stream  a stream of the current context (cujit_stream_create()); not NULL, not
 *                 CU_STREAM_LEGACY or CU_STREAM_PER_THREAD.
 *  @param mode    CUJIT_CAPTURE_GLOBAL (the usual), _THREAD_LOCAL or _RELAXED.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for an unknown mode, a legacy or per-thread
 *          default stream, or a stream of another context; CUJIT_ERROR_CAPTURE when the
 *          stream is being captured already (by cujit, or through the driver);
 *          CUJIT_ERROR_NOT_SUPPORTED when the driver lacks the graph API;
 *          CUJIT_ERROR_NO_DRIVER / CUJIT_ERROR_NO_DEVICE; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_graph_begin(CUstream stream, cujit_capture_mode mode);
/** Ends the capture on `stream` and makes its work a graph ready to launch (instantiated:
 *  the costly step, done once). The stream runs work again from now on.
 *  @param stream  the stream given to cujit_graph_begin(); a capture begun in global or
 *                 thread-local mode ends on the thread that began it.
 *  @param graph   receives the graph, owned by the caller: cujit_graph_destroy(). NULL
 *                 ends the capture and discards its work.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE when cujit_graph_begin() was not called for
 *          the stream; CUJIT_ERROR_CAPTURE (nothing made, the capture ended) when the driver
 *          invalidated the capture (a call made during it that a capture cannot hold), or a
 *          call made during it failed after part of its work was captured, or when called
 *          from another thread than a global or thread-local capture's (nothing changed
 *          then); CUJIT_ERROR_OUT_OF_MEMORY; CUJIT_ERROR_DRIVER (cuStreamEndCapture or
 *          cuGraphInstantiate failed, named). */
CUJIT_API cujit_status cujit_graph_end(CUstream stream, cujit_graph **graph);
/** Launches the graph's work on `stream`, after the work queued there before and before
 *  the work queued after, and returns once it is queued. Launches of one graph run one
 *  after another, whichever streams they are on. Launched on a stream being captured, the
 *  graph becomes part of that capture (and its graph holds this one).
 *  @param graph   the graph.
 *  @param stream  any stream of the graph's context; NULL: the legacy default stream.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a graph that is not live;
 *          CUJIT_ERROR_LAUNCH_FAILED when an earlier kernel faulted; CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_graph_launch(cujit_graph *graph, CUstream stream);
/** Ends the capture on `stream` (as cujit_graph_end() does) and makes `graph` run the new
 *  capture's work from its next launch: the same work with other scalar arguments, other
 *  arrays of the same shape, other In/Out buffers, is updated in place in the executable
 *  graph (cuGraphExecUpdate), which costs far less than making it again. Where the driver
 *  cannot update it so (other kernels, other operations or another order), the graph is
 *  made again from the new capture. Launches queued before keep running the old work;
 *  what only the old work held is given back once they have finished.
 *  @param graph     the graph to update.
 *  @param stream    the stream of a capture begun with cujit_graph_begin().
 *  @param in_place  if non-NULL, receives 1 when the graph was updated in place, 0 when it
 *                   was made again (the debug log says why).
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a graph that is not live, a stream not
 *          being captured by cujit_graph_begin(), or a capture or current context other
 *          than the graph's (the capture is then dropped, the graph unchanged); the
 *          failures of cujit_graph_end() (the graph unchanged). */
CUJIT_API cujit_status cujit_graph_update(cujit_graph *graph, CUstream stream, int *in_place);
/** Gives one kernel launch of the graph other arguments, from its next launch on
 *  (cuGraphExecKernelNodeSetParams): the fastest update, for scalars that change between
 *  launches (a time step, a counter). The arguments are checked against the kernel's
 *  parameters as cujit_launch() checks them, numbers given to CUJIT_GRAPH_SET_ARGS()
 *  converted; they are values only (device pointers included): the launch's grid, block
 *  and In/Out buffers stay as captured. Memory of cujit's arrays that a new pointer points
 *  into is held by the graph from now on.
 *  @param graph   the graph.
 *  @param launch  which kernel launch of its capture, counted from 0 in the order cujit
 *                 made them (every kernel launch on the captured stream: cujit_launch(),
 *                 cujit_call(), bound functions; an array operation or a generator's call
 *                 may make several); cujit_graph_launch_count() says how many there are.
 *  @param args    `nargs` arguments, one per kernel parameter; read during the call.
 *  @param nargs   their number.
 *  @return CUJIT_OK; CUJIT_ERROR_INVALID_VALUE for a graph that is not live, a NULL args
 *          with nargs > 0, or a launch beyond the last; CUJIT_ERROR_INVALID_ARGS as for
 *          cujit_launch(), and for an In/Out buffer; CUJIT_ERROR_NOT_SUPPORTED when the
 *          driver did not say which node the launch made (update from a new capture
 *          instead); CUJIT_ERROR_DRIVER. */
CUJIT_API cujit_status cujit_graph_set_args(cujit_graph *graph, size_t launch,
                                            const cujit_arg *args, size_t nargs);
/** CUJIT_GRAPH_SET_ARGS(graph, launch, arg...): cujit_graph_set_args() with the arguments
 *  inline, cujit_arg values and numbers as CUJIT_LAUNCH() takes them. */
#define CUJIT_GRAPH_SET_ARGS(graph, launch, ...) \
  CUJIT_GRAPH_SET_ARGS_((graph), (launch), __VA_ARGS__)
#ifdef __cplusplus
#  define CUJIT_GRAPH_SET_ARGS_(graph, launch, ...) \
    cujit_graph_set_args_list_(graph, launch, {CUJIT_MAP_(CUJIT_ARG_, __VA_ARGS__)})
#else
#  define CUJIT_GRAPH_SET_ARGS_(graph, launch, ...)                                               \
    cujit_graph_set_args(graph, launch, (const cujit_arg[]){CUJIT_MAP_(CUJIT_ARG_, __VA_ARGS__)}, \
                         (size_t)CUJIT_NARGS_(__VA_ARGS__))
#endif
/** @param graph  the graph.
 *  @return the number of kernel launches its capture made (see cujit_graph_set_args());
 *  0 for NULL or a graph that is not live. */
CUJIT_API size_t cujit_graph_launch_count(const cujit_graph *graph);
/** Destroys the graph: waits for its launches to finish (an event recorded after each),
 *  and for the work queued on the captured stream before its capture began, then gives
 *  back what it held (and frees what was destroyed meanwhile: modules, arrays' memory,
 *  the memory made during the capture). Memory an array let go of is given back ordered on
 *  the stream that array had, which must still exist then. A graph that another graph
 *  launches (captured into it) lives on, hidden, until that one is destroyed. A handle
 *  destroyed already (or not a graph) frees nothing: the call only sets the thread's
 *  error detail. Where the driver refuses to make the graph's context current (after a
 *  fault, say), its driver objects are left to that context, what it held is given back,
 *  and the thread's error detail says so.
 *  @param graph  the graph; NULL is fine. */
CUJIT_API void cujit_graph_destroy(cujit_graph *graph);

/** @} */

/* The error mode (see cujit_error_set_handler()): each function above that returns a
 * cujit_status is also a macro of its own name, which hands the status to cujit_checked_()
 * with the call's name. The library's own sources are built without them
 * (CUJIT_BUILDING_LIBRARY), so that what cujit calls inside never reaches the handler. A
 * function added to this header gets its line here: a test checks that every one has it
 * (docs/manual/stability.md says why they are kept so). */
/** @cond */
#ifdef CUJIT_BUILDING_LIBRARY
#  define CUJIT_CHECKED_AS_(name, call) (call)
#else
/* (clang-format would put spaces between # and the parameter it makes a string of) */
/* clang-format off */
#  define CUJIT_CHECKED_AS_(name, call) cujit_checked_((call), #name)
#  define CUJIT_CHECKED_(fn, ...) cujit_checked_((fn)(__VA_ARGS__), #fn)
/* clang-format on */
#  define cujit_module_from_source(...) CUJIT_CHECKED_(cujit_module_from_source, __VA_ARGS__)
#  define cujit_module_from_file(...) CUJIT_CHECKED_(cujit_module_from_file, __VA_ARGS__)
#  define cujit_module_get_lowered_name(...) \
    CUJIT_CHECKED_(cujit_module_get_lowered_name, __VA_ARGS__)
#  define cujit_module_get_function(...) CUJIT_CHECKED_(cujit_module_get_function, __VA_ARGS__)
#  define cujit_module_get_global(...) CUJIT_CHECKED_(cujit_module_get_global, __VA_ARGS__)
#  define cujit_module_write_global(...) CUJIT_CHECKED_(cujit_module_write_global, __VA_ARGS__)
#  define cujit_module_read_global(...) CUJIT_CHECKED_(cujit_module_read_global, __VA_ARGS__)
#  define cujit_function_get_attrs(...) CUJIT_CHECKED_(cujit_function_get_attrs, __VA_ARGS__)
#  define cujit_function_suggest_block(...) \
    CUJIT_CHECKED_(cujit_function_suggest_block, __VA_ARGS__)
#  define cujit_function_get_param_info(...) \
    CUJIT_CHECKED_(cujit_function_get_param_info, __VA_ARGS__)
#  define cujit_launch(...) CUJIT_CHECKED_(cujit_launch, __VA_ARGS__)
#  define cujit_mem_alloc(...) CUJIT_CHECKED_(cujit_mem_alloc, __VA_ARGS__)
#  define cujit_mem_free(...) CUJIT_CHECKED_(cujit_mem_free, __VA_ARGS__)
#  define cujit_mem_copy_htod(...) CUJIT_CHECKED_(cujit_mem_copy_htod, __VA_ARGS__)
#  define cujit_mem_copy_dtod(...) CUJIT_CHECKED_(cujit_mem_copy_dtod, __VA_ARGS__)
#  define cujit_mem_copy_dtod_async(...) CUJIT_CHECKED_(cujit_mem_copy_dtod_async, __VA_ARGS__)
#  define cujit_mem_copy_dtoh(...) CUJIT_CHECKED_(cujit_mem_copy_dtoh, __VA_ARGS__)
#  define cujit_host_alloc(...) CUJIT_CHECKED_(cujit_host_alloc, __VA_ARGS__)
#  define cujit_host_free(...) CUJIT_CHECKED_(cujit_host_free, __VA_ARGS__)
#  define cujit_stream_create(...) CUJIT_CHECKED_(cujit_stream_create, __VA_ARGS__)
#  define cujit_stream_destroy(...) CUJIT_CHECKED_(cujit_stream_destroy, __VA_ARGS__)
#  define cujit_stream_synchronize(...) CUJIT_CHECKED_(cujit_stream_synchronize, __VA_ARGS__)
#  define cujit_synchronize(...) CUJIT_CHECKED_(cujit_synchronize, __VA_ARGS__)
#  define cujit_mem_pool_get_usage(...) CUJIT_CHECKED_(cujit_mem_pool_get_usage, __VA_ARGS__)
#  define cujit_mem_pool_trim(...) CUJIT_CHECKED_(cujit_mem_pool_trim, __VA_ARGS__)
#  define cujit_timer_start(...) CUJIT_CHECKED_(cujit_timer_start, __VA_ARGS__)
#  define cujit_timer_stop(...) CUJIT_CHECKED_(cujit_timer_stop, __VA_ARGS__)
#  define cujit_cache_set_dir(...) CUJIT_CHECKED_(cujit_cache_set_dir, __VA_ARGS__)
#  define cujit_cache_set_remote(...) CUJIT_CHECKED_(cujit_cache_set_remote, __VA_ARGS__)
#  define cujit_cache_get_remote(...) CUJIT_CHECKED_(cujit_cache_get_remote, __VA_ARGS__)
#  define cujit_cache_get_stats(...) CUJIT_CHECKED_(cujit_cache_get_stats, __VA_ARGS__)
#  define cujit_cache_get_disk_stats(...) CUJIT_CHECKED_(cujit_cache_get_disk_stats, __VA_ARGS__)
#  define cujit_cache_clear(...) CUJIT_CHECKED_(cujit_cache_clear, __VA_ARGS__)
#  define cujit_cache_prune(...) CUJIT_CHECKED_(cujit_cache_prune, __VA_ARGS__)
#  define cujit_cache_list(...) CUJIT_CHECKED_(cujit_cache_list, __VA_ARGS__)
#  define cujit_function_set_signature(...) \
    CUJIT_CHECKED_(cujit_function_set_signature, __VA_ARGS__)
#  define cujit_call_n(...) CUJIT_CHECKED_(cujit_call_n, __VA_ARGS__)
#  define cujit_call_ex_n(...) CUJIT_CHECKED_(cujit_call_ex_n, __VA_ARGS__)
#  define cujit_function_bind(...) CUJIT_CHECKED_(cujit_function_bind, __VA_ARGS__)
#  define cujit_batch_compile(...) CUJIT_CHECKED_(cujit_batch_compile, __VA_ARGS__)
#  define cujit_compile_job_start(...) CUJIT_CHECKED_(cujit_compile_job_start, __VA_ARGS__)
#  define cujit_compile_job_wait(...) CUJIT_CHECKED_(cujit_compile_job_wait, __VA_ARGS__)
#  define cujit_module_export(...) CUJIT_CHECKED_(cujit_module_export, __VA_ARGS__)
#  define cujit_module_import(...) CUJIT_CHECKED_(cujit_module_import, __VA_ARGS__)
#  define cujit_module_import_file(...) CUJIT_CHECKED_(cujit_module_import_file, __VA_ARGS__)
#  define cujit_bundle_from_source(...) CUJIT_CHECKED_(cujit_bundle_from_source, __VA_ARGS__)
#  define cujit_bundle_from_file(...) CUJIT_CHECKED_(cujit_bundle_from_file, __VA_ARGS__)
#  define cujit_bundle_warm(...) CUJIT_CHECKED_(cujit_bundle_warm, __VA_ARGS__)
#  define cujit_module_link(...) CUJIT_CHECKED_(cujit_module_link, __VA_ARGS__)
#  define cujit_module_from_image(...) CUJIT_CHECKED_(cujit_module_from_image, __VA_ARGS__)
#  define cujit_module_from_image_file(...) \
    CUJIT_CHECKED_(cujit_module_from_image_file, __VA_ARGS__)
#  define cujit_image_describe(...) CUJIT_CHECKED_(cujit_image_describe, __VA_ARGS__)
#  define cujit_nvrtc_get_version(...) CUJIT_CHECKED_(cujit_nvrtc_get_version, __VA_ARGS__)
#  define cujit_nvrtc_get_archs(...) CUJIT_CHECKED_(cujit_nvrtc_get_archs, __VA_ARGS__)
#  define cujit_driver_get_version(...) CUJIT_CHECKED_(cujit_driver_get_version, __VA_ARGS__)
#  define cujit_device_get_count(...) CUJIT_CHECKED_(cujit_device_get_count, __VA_ARGS__)
#  define cujit_device_get_info(...) CUJIT_CHECKED_(cujit_device_get_info, __VA_ARGS__)
#  define cujit_device_set_current(...) CUJIT_CHECKED_(cujit_device_set_current, __VA_ARGS__)
#  define cujit_device_get_current(...) CUJIT_CHECKED_(cujit_device_get_current, __VA_ARGS__)
#  define cujit_driver_get_symbol(...) CUJIT_CHECKED_(cujit_driver_get_symbol, __VA_ARGS__)
#  define cujit_texture_from_linear(...) CUJIT_CHECKED_(cujit_texture_from_linear, __VA_ARGS__)
#  define cujit_texture_from_pitched(...) CUJIT_CHECKED_(cujit_texture_from_pitched, __VA_ARGS__)
#  define cujit_cuarray_create(...) CUJIT_CHECKED_(cujit_cuarray_create, __VA_ARGS__)
#  define cujit_cuarray_write(...) CUJIT_CHECKED_(cujit_cuarray_write, __VA_ARGS__)
#  define cujit_cuarray_read(...) CUJIT_CHECKED_(cujit_cuarray_read, __VA_ARGS__)
#  define cujit_cuarray_destroy(...) CUJIT_CHECKED_(cujit_cuarray_destroy, __VA_ARGS__)
#  define cujit_texture_from_array(...) CUJIT_CHECKED_(cujit_texture_from_array, __VA_ARGS__)
#  define cujit_surface_from_array(...) CUJIT_CHECKED_(cujit_surface_from_array, __VA_ARGS__)
#  define cujit_texture_destroy(...) CUJIT_CHECKED_(cujit_texture_destroy, __VA_ARGS__)
#  define cujit_surface_destroy(...) CUJIT_CHECKED_(cujit_surface_destroy, __VA_ARGS__)
#  define cujit_cache_explain(...) CUJIT_CHECKED_(cujit_cache_explain, __VA_ARGS__)
#  define cujit_cache_explain_file(...) CUJIT_CHECKED_(cujit_cache_explain_file, __VA_ARGS__)
#  define cujit_cache_verify(...) CUJIT_CHECKED_(cujit_cache_verify, __VA_ARGS__)
#  define cujit_graph_begin(...) CUJIT_CHECKED_(cujit_graph_begin, __VA_ARGS__)
#  define cujit_graph_end(...) CUJIT_CHECKED_(cujit_graph_end, __VA_ARGS__)
#  define cujit_graph_launch(...) CUJIT_CHECKED_(cujit_graph_launch, __VA_ARGS__)
#  define cujit_graph_update(...) CUJIT_CHECKED_(cujit_graph_update, __VA_ARGS__)
#  define cujit_graph_set_args(...) CUJIT_CHECKED_(cujit_graph_set_args, __VA_ARGS__)
#endif
/** @endcond */

#ifdef __cplusplus
} /* extern "C" */

#  include <initializer_list>

/* cujit_call()'s arguments, none of which may be a cujit_arg (CUJIT_CALL_CHECK_). */
template <typename T>
struct cujit_call_arg_ok_ {
  enum { value = 1 };
};
template <>
struct cujit_call_arg_ok_<cujit_arg> {
  enum { value = 0 };
};
template <typename... T>
struct cujit_call_args_ {};
template <typename T, typename... R>
struct cujit_call_args_<T, R...> : cujit_call_args_<R...> {
  static_assert(cujit_call_arg_ok_<T>::value,
                "cujit_call() takes C values and CUJIT_IN_PTR(...), CUJIT_OUT_PTR(...), "
                "CUJIT_INOUT_PTR(...); a cujit_arg such as cujit_in(...) or cujit_i32(...) is "
                "cujit_launch()'s");
};
template <typename... T>
cujit_call_args_<T...> cujit_call_check_(const T &...);

/* In C++ each argument of CUJIT_LAUNCH() finds its maker by overloading: a cujit_arg as it
 * is, a number as a plain value. A pointer (&x, a host array) matches the template below,
 * which does not compile; a struct, a long double or another type matches none. */
static inline cujit_arg cujit_arg_of_(cujit_arg a) { return a; }
static inline cujit_arg cujit_arg_of_(bool v) { return cujit_plain_bool_(v); }
static inline cujit_arg cujit_arg_of_(char v) { return cujit_plain_char_(v); }
static inline cujit_arg cujit_arg_of_(signed char v) { return cujit_plain_i8_(v); }
static inline cujit_arg cujit_arg_of_(unsigned char v) { return cujit_plain_u8_(v); }
static inline cujit_arg cujit_arg_of_(short v) { return cujit_plain_i16_(v); }
static inline cujit_arg cujit_arg_of_(unsigned short v) { return cujit_plain_u16_(v); }
static inline cujit_arg cujit_arg_of_(int v) { return cujit_plain_i32_(v); }
static inline cujit_arg cujit_arg_of_(unsigned v) { return cujit_plain_u32_(v); }
static inline cujit_arg cujit_arg_of_(long v) { return cujit_plain_long_(v); }
static inline cujit_arg cujit_arg_of_(unsigned long v) { return cujit_plain_ulong_(v); }
static inline cujit_arg cujit_arg_of_(long long v) { return cujit_plain_i64_(v); }
static inline cujit_arg cujit_arg_of_(unsigned long long v) { return cujit_plain_u64_(v); }
static inline cujit_arg cujit_arg_of_(float v) { return cujit_plain_f32_(v); }
static inline cujit_arg cujit_arg_of_(double v) { return cujit_plain_f64_(v); }
template <typename T>
struct cujit_never_ {
  enum { value = 0 };
};
template <typename T>
cujit_arg cujit_arg_of_(T *) {
  static_assert(cujit_never_<T>::value,
                "CUJIT_LAUNCH() takes cujit_arg values and numbers, not a pointer: a device "
                "pointer is a CUdeviceptr or cujit_ptr(), host memory cujit_in(), cujit_out() "
                "or cujit_inout()");
  return cujit_arg();
}

/* cujit_call()'s arguments in C++: a number as a plain value, a pointer as a value by its
 * address. */
template <typename T>
static inline cujit_arg cujit_call_arg_(const T &v) {
  return cujit_arg_of_(v);
}
template <typename T>
static inline cujit_arg cujit_call_arg_(T *p) {
  return cujit_plain_addr_(p);
}

/* What CUJIT_GRAPH_SET_ARGS expands to in C++. */
static inline cujit_status cujit_graph_set_args_list_(cujit_graph *graph, size_t launch,
                                                      std::initializer_list<cujit_arg> args) {
  return cujit_graph_set_args(graph, launch, args.begin(), args.size());
}

/* What CUJIT_LAUNCH and CUJIT_LAUNCH_EX expand to in C++. */
static inline cujit_status cujit_launch_list_(const cujit_function *fn, cujit_dim3 grid,
                                              cujit_dim3 block,
                                              std::initializer_list<cujit_arg> args,
                                              const cujit_launch_options *opts) {
  return cujit_launch(fn, grid, block, args.begin(), args.size(), opts);
}
#endif
#endif /* CUJIT_H */

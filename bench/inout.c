/* inout.c - In/Out round trip: copy a host buffer in, run a trivial kernel, copy it out,
 * at 4 KiB, 1 MiB, 64 MiB and 512 MiB, from pinned and from pageable host memory.
 *   cujit:        CUJIT_LAUNCH(f, ..., cujit_inout(host, n), cujit_u64(n))
 *   hand-written: pinned host memory, device memory allocated once, cuMemcpyHtoDAsync +
 *                 cuLaunchKernel + cuMemcpyDtoHAsync + cuStreamSynchronize
 *   naive:        cuMemAlloc + cuMemcpyHtoD from pageable memory + cuLaunchKernel +
 *                 cuMemcpyDtoH + cuMemFree
 * Both sides use the same host buffers and the legacy default stream. Goals: pinned
 * <= 1.05x hand-written at 4 KiB and <= 1.1x above; pageable at >= 64 MiB at least 2x
 * faster than naive. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char inout_src[] =
    "extern \"C\" __global__ void touch(unsigned char *buf, unsigned long long n) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) { buf[0] += 1; buf[n - 1] += 1; }\n"
    "}\n";

enum { CJ_PINNED, HAND_PINNED, CJ_PAGEABLE, NAIVE, N_WAYS };

typedef struct inout_ctx {
  cujit_function *f;
  CUfunction raw;
  unsigned char *pinned, *pageable;
  CUdeviceptr dev; /* the hand-written path's preallocated buffer */
} inout_ctx;

static int way_cujit(const inout_ctx *c, unsigned char *host, size_t n) {
  return CUJIT_LAUNCH(c->f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_inout(host, n),
                      cujit_u64((uint64_t)n)) == CUJIT_OK
             ? 0
             : -1;
}

static int way_hand(const inout_ctx *c, size_t n) {
  unsigned long long nn = n;
  CUdeviceptr d = c->dev;
  void *params[] = {&d, &nn};
  if (bench_cu.cuMemcpyHtoDAsync(d, c->pinned, n, NULL) != CUDA_SUCCESS ||
      bench_cu.cuLaunchKernel(c->raw, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS ||
      bench_cu.cuMemcpyDtoHAsync(c->pinned, d, n, NULL) != CUDA_SUCCESS)
    return -1;
  return bench_cu.cuStreamSynchronize(NULL) == CUDA_SUCCESS ? 0 : -1;
}

static int way_naive(const inout_ctx *c, size_t n) {
  unsigned long long nn = n;
  CUdeviceptr d;
  void *params[] = {&d, &nn};
  int rc = 0;
  if (bench_cu.cuMemAlloc(&d, n) != CUDA_SUCCESS) return -1;
  if (bench_cu.cuMemcpyHtoD(d, c->pageable, n) != CUDA_SUCCESS ||
      bench_cu.cuLaunchKernel(c->raw, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS ||
      bench_cu.cuMemcpyDtoH(c->pageable, d, n) != CUDA_SUCCESS)
    rc = -1;
  bench_cu.cuMemFree(d);
  return rc;
}

/* Milliseconds of one round trip; NAN on failure. */
static double time_way(const inout_ctx *c, int way, size_t n) {
  uint64_t t0 = bench_now_ns();
  int rc;
  switch (way) {
    case CJ_PINNED: rc = way_cujit(c, c->pinned, n); break;
    case HAND_PINNED: rc = way_hand(c, n); break;
    case CJ_PAGEABLE: rc = way_cujit(c, c->pageable, n); break;
    default: rc = way_naive(c, n); break;
  }
  if (rc != 0) {
    fprintf(stderr, "cujit-bench: round trip %d of %zu bytes failed: %s\n", way, n,
            cujit_last_error());
    return NAN;
  }
  return (double)(bench_now_ns() - t0) / 1e6;
}

/* The data really travels: the kernel adds 1 to the first and last bytes. */
static int round_trip_works(const inout_ctx *c, unsigned char *host, size_t n) {
  host[0] = 41, host[n - 1] = 9;
  if (way_cujit(c, host, n) != 0) return 0;
  return host[0] == 42 && host[n - 1] == 10;
}

/* Times the two ways of one comparison, a then b and b then a in turn, so that each runs
 * after the other as often, and after nothing else: a way that runs after another kind of
 * transfer (the naive one frees device memory; the pageable ones copy through other host
 * memory) pays for it in its first copies, and a fixed order gave that cost to one side of
 * the pinned comparison alone. 0, or -1 when a round trip failed. */
static int time_pair(const inout_ctx *c, int a, int b, size_t n, int reps, double *ta, double *tb) {
  int r;
  for (r = 0; r < reps; r++) {
    if (r % 2 == 0) {
      ta[r] = time_way(c, a, n);
      tb[r] = time_way(c, b, n);
    } else {
      tb[r] = time_way(c, b, n);
      ta[r] = time_way(c, a, n);
    }
    if (isnan(ta[r]) || isnan(tb[r])) return -1;
  }
  return 0;
}

static void one_size(const inout_ctx *c, size_t n, int reps) {
  double t[N_WAYS][256], med[N_WAYS];
  int w;
  char metric[96], label[32];
  snprintf(label, sizeof label, "%zu %s", n >= (1u << 20) ? n >> 20 : n >> 10,
           n >= (1u << 20) ? "MiB" : "KiB");
  for (w = 0; w < N_WAYS; w++) time_way(c, w, n); /* warm-up (and cujit's pool) */
  if (!round_trip_works(c, c->pinned, n) || !round_trip_works(c, c->pageable, n)) {
    bench_skip("inout", "In/Out round trip", "cujit's round trip returned wrong data");
    return;
  }
  if (time_pair(c, CJ_PINNED, HAND_PINNED, n, reps, t[CJ_PINNED], t[HAND_PINNED]) != 0 ||
      time_pair(c, CJ_PAGEABLE, NAIVE, n, reps, t[CJ_PAGEABLE], t[NAIVE]) != 0) {
    bench_skip("inout", "In/Out round trip", "a round trip failed (see the log)");
    return;
  }
  for (w = 0; w < N_WAYS; w++) med[w] = bench_median(t[w], (size_t)reps);
  snprintf(metric, sizeof metric, "In/Out %s pinned", label);
  /* the smallest transfer is where cujit's own work shows most: a tighter goal there */
  if (n <= 4096)
    bench_ratio("inout", metric, (double)n, "ms", med[CJ_PINNED], med[HAND_PINNED], 1.05,
                "<= 1.05x hand-written pinned async");
  else
    bench_ratio("inout", metric, (double)n, "ms", med[CJ_PINNED], med[HAND_PINNED], 1.1,
                "<= 1.1x hand-written pinned async");
  snprintf(metric, sizeof metric, "In/Out %s pageable", label);
  if (n >= (64u << 20))
    bench_ratio("inout", metric, (double)n, "ms", med[CJ_PAGEABLE], med[NAIVE], 0.5,
                ">= 2x faster than naive alloc+copy+free");
  else
    bench_info("inout", metric, (double)n, "ms", med[CJ_PAGEABLE], med[NAIVE],
               "baseline: naive alloc+copy+free");
}

static int setup(inout_ctx *c, cujit_module **m, CUmodule *raw, size_t max) {
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  size_t size;
  void *cubin;
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(inout_src, "inout.cu", argv, 2, NULL, &size);
  if (!cubin || bench_cu.cuModuleLoadData(raw, cubin) != CUDA_SUCCESS) return -1;
  free(cubin);
  if (bench_cu.cuModuleGetFunction(&c->raw, *raw, "touch") != CUDA_SUCCESS ||
      bench_cu.cuMemAlloc(&c->dev, max) != CUDA_SUCCESS)
    return -1;
  if (cujit_module_from_source(m, inout_src, "inout.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(*m, "touch", &c->f) != CUJIT_OK ||
      cujit_host_alloc((void **)&c->pinned, max) != CUJIT_OK)
    return -1;
  c->pageable = malloc(max);
  if (!c->pageable) return -1;
  memset(c->pageable, 1, max); /* fault the pages in, as a real buffer would be */
  memset(c->pinned, 1, max);
  return 0;
}

void bench_inout(void) {
  static const size_t sizes[] = {4u << 10, 1u << 20, 64u << 20, 512u << 20};
  const int full[] = {201, 101, 21, 7}, quick[] = {21, 11, 3, 3};
  inout_ctx c;
  cujit_module *m = NULL;
  CUmodule raw = NULL;
  size_t i;
  memset(&c, 0, sizeof c);
  if (bench_driver_load() != 0 || bench_context() != 0 || setup(&c, &m, &raw, sizes[3]) != 0) {
    bench_skip("inout", "In/Out round trip",
               cujit_last_error()[0] ? cujit_last_error() : "setup failed (see the log)");
  } else {
    for (i = 0; i < 4; i++) one_size(&c, sizes[i], bench_reps(full[i], quick[i]));
  }
  cujit_module_destroy(m);
  cujit_host_free(c.pinned);
  free(c.pageable);
  if (c.dev) bench_cu.cuMemFree(c.dev);
  if (raw) bench_cu.cuModuleUnload(raw);
}

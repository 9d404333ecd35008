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
#include "cujit_array.h"

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

/* The hand-written way on device memory d; *issued, when not NULL, gets the time at which
 * everything was queued (before the wait). */
static int hand_on(const inout_ctx *c, CUdeviceptr d, size_t n, uint64_t *issued) {
  unsigned long long nn = n;
  void *params[] = {&d, &nn};
  if (bench_cu.cuMemcpyHtoDAsync(d, c->pinned, n, NULL) != CUDA_SUCCESS ||
      bench_cu.cuLaunchKernel(c->raw, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS ||
      bench_cu.cuMemcpyDtoHAsync(c->pinned, d, n, NULL) != CUDA_SUCCESS)
    return -1;
  if (issued) *issued = bench_now_ns();
  return bench_cu.cuStreamSynchronize(NULL) == CUDA_SUCCESS ? 0 : -1;
}

static int way_hand(const inout_ctx *c, size_t n) { return hand_on(c, c->dev, n, NULL); }

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

/* ---- what the 4 KiB pinned round trip's two modes depend on ----
 *
 * Between processes the 4 KiB pinned round trip takes about 16 us or about 21.5 us, both
 * ways alike or one of them only. These rows, in one run, say whether that follows the
 * device buffer (the hand-written way on cujit's own device block against its own buffer,
 * and on 8 buffers of 4 KiB of its own) and whether it is spent issuing or waiting. */

static double hand_ms(const inout_ctx *c, CUdeviceptr d, size_t n, double *issue_us,
                      double *wait_us) {
  uint64_t t0 = bench_now_ns(), t1 = 0, t2;
  if (hand_on(c, d, n, &t1) != 0) return NAN;
  t2 = bench_now_ns();
  if (issue_us) *issue_us = (double)(t1 - t0) / 1e3, *wait_us = (double)(t2 - t1) / 1e3;
  return (double)(t2 - t0) / 1e6;
}

static void four_kib_modes(const inout_ctx *c, size_t n, int reps) {
  enum { BUFS = 8, ROUNDS = 64 };
  int64_t bytes = (int64_t)n;
  cujit_array *block = NULL;
  CUdeviceptr bufs[BUFS] = {0};
  double on_block[256], on_own[256], issue[256], wait[256], per[BUFS][ROUNDS], med[BUFS];
  int r, b;
  /* an array of the size takes the block cujit's 4 KiB launches were using, kept for the
   * next request of its size */
  if (cujit_array_empty(&block, CUJIT_TYPE_U8, 1, &bytes) != CUJIT_OK) {
    bench_skip("inout", "4 KiB pinned: the two modes", cujit_last_error());
    return;
  }
  for (r = 0; r < reps; r++) {
    CUdeviceptr d = cujit_array_data(block);
    if (r % 2) on_own[r] = hand_ms(c, c->dev, n, &issue[r], &wait[r]);
    on_block[r] = hand_ms(c, d, n, NULL, NULL);
    if (r % 2 == 0) on_own[r] = hand_ms(c, c->dev, n, &issue[r], &wait[r]);
  }
  cujit_array_destroy(block); /* kept again for cujit's launches */
  for (b = 0; b < BUFS; b++)
    if (bench_cu.cuMemAlloc(&bufs[b], n) != CUDA_SUCCESS) bufs[b] = 0;
  for (r = 0; r < ROUNDS; r++)
    for (b = 0; b < BUFS; b++) per[b][r] = bufs[b] ? hand_ms(c, bufs[b], n, NULL, NULL) : NAN;
  for (b = 0; b < BUFS; b++) {
    med[b] = bufs[b] ? bench_median(per[b], ROUNDS) : NAN;
    if (bufs[b]) bench_cu.cuMemFree(bufs[b]);
  }
  bench_info("inout", "  4 KiB: hand-written on cujit's device block", (double)n, "ms",
             bench_median(on_block, (size_t)reps), bench_median(on_own, (size_t)reps),
             "baseline: on its own buffer; same run");
  bench_info("inout", "  4 KiB: hand-written; slowest of 8 new buffers", (double)n, "ms",
             bench_max(med, BUFS), bench_min(med, BUFS),
             "medians of 64 each; baseline: the fastest buffer");
  bench_info("inout", "  4 KiB: hand-written; issuing (baseline: waiting)", (double)n, "us",
             bench_median(issue, (size_t)reps), bench_median(wait, (size_t)reps),
             "copy in + launch + copy out queued; then cuStreamSynchronize");
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
                "<= 1.05x hand-written pinned async (guard; runs read 1.047-1.47x)");
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
  if (n <= 4096) four_kib_modes(c, n, reps);
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

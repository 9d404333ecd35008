/* multigpu.c - several devices in one process, each chosen per thread with
 * cujit_device_set_current():
 *   pageable In/Out of 64 MiB round trips from one thread per device at once, aggregate
 *   GB/s of two devices against device 0 alone (goal: >= 1.8x, the devices do not wait
 *   for each other);
 *   a module already loaded and launched on device 0, looked up and first launched on
 *   device 1 (info: its image is not compiled or read again, only loaded there).
 * Needs two devices; skipped with the reason otherwise. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MG_BYTES ((size_t)64 << 20)

static const char mg_src[] =
    "extern \"C\" __global__ void touch(unsigned char *buf, unsigned long long n) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) { buf[0] += 1; buf[n - 1] += 1; }\n"
    "}\n";

typedef struct mg_worker {
  int ordinal, reps;
  cujit_function *f;
  pthread_barrier_t *start;
  unsigned char *buf; /* pageable, MG_BYTES */
  int failed;
} mg_worker;

static int round_trip(cujit_function *f, unsigned char *buf) {
  return CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_inout(buf, MG_BYTES),
                      cujit_u64((uint64_t)MG_BYTES)) == CUJIT_OK
             ? 0
             : -1;
}

/* Chooses the device, checks that the data travels, then (warm) waits at the barrier and
 * does `reps` round trips. */
static void *mg_work(void *arg) {
  mg_worker *w = arg;
  int r, ok = cujit_device_set_current(w->ordinal) == CUJIT_OK;
  if (ok) {
    w->buf[0] = 41, w->buf[MG_BYTES - 1] = 9;
    ok = round_trip(w->f, w->buf) == 0 && w->buf[0] == 42 && w->buf[MG_BYTES - 1] == 10;
    if (!ok)
      fprintf(stderr,
              "cujit-bench: device %d: a round trip failed or came back wrong: "
              "%s\n",
              w->ordinal, cujit_last_error());
  }
  w->failed = !ok;
  pthread_barrier_wait(w->start);
  for (r = 0; ok && r < w->reps; r++)
    if (round_trip(w->f, w->buf) != 0) {
      fprintf(stderr, "cujit-bench: device %d: %s\n", w->ordinal, cujit_last_error());
      w->failed = 1;
      break;
    }
  return NULL;
}

/* GB/s (both directions counted) of devices 0..ndev-1 at once; NAN on failure. */
static double mg_rate(mg_worker *w, int ndev, int reps) {
  pthread_barrier_t start;
  pthread_t th[2];
  uint64_t t0, t1;
  int k, started = 0, failed = 0;
  if (pthread_barrier_init(&start, NULL, (unsigned)ndev + 1) != 0) return NAN;
  for (k = 0; k < ndev; k++) {
    w[k].reps = reps;
    w[k].start = &start;
    if (pthread_create(&th[k], NULL, mg_work, &w[k]) != 0) break;
    started++;
  }
  if (started < ndev) { /* the barrier cannot open: give up (the threads stay parked) */
    fprintf(stderr, "cujit-bench: cannot start a thread per device\n");
    return NAN;
  }
  pthread_barrier_wait(&start);
  t0 = bench_now_ns();
  for (k = 0; k < ndev; k++) pthread_join(th[k], NULL);
  t1 = bench_now_ns();
  pthread_barrier_destroy(&start);
  for (k = 0; k < ndev; k++) failed |= w[k].failed;
  if (failed) return NAN;
  return 2.0 * (double)MG_BYTES * reps * ndev / ((double)(t1 - t0));
}

static void mg_transfers(cujit_function *f) {
  int trials = bench_reps(5, 2), reps = bench_reps(8, 2), t;
  double one[8], two[8], m1, m2;
  mg_worker w[2];
  char goal[96];
  memset(w, 0, sizeof w);
  for (t = 0; t < 2; t++) {
    w[t].ordinal = t;
    w[t].f = f;
    if (!(w[t].buf = malloc(MG_BYTES))) {
      bench_skip("multigpu", "pageable In/Out, two devices", "out of host memory");
      goto done;
    }
    memset(w[t].buf, 1, MG_BYTES); /* fault the pages in, as a real buffer would be */
  }
  for (t = 0; t < trials; t++) {
    one[t] = mg_rate(w, 1, reps);
    two[t] = mg_rate(w, 2, reps);
    if (isnan(one[t]) || isnan(two[t])) {
      bench_skip("multigpu", "pageable In/Out, two devices", "a round trip failed (see the log)");
      goto done;
    }
  }
  m1 = bench_median(one, (size_t)trials);
  m2 = bench_median(two, (size_t)trials);
  snprintf(goal, sizeof goal, ">= 1.8x one device (%.2fx)", m2 / m1);
  bench_check("multigpu", "In/Out 64 MiB pageable, 2 devices at once", (double)MG_BYTES, "GB/s", m2,
              m1, NAN, m2 >= 1.8 * m1, goal);
done:
  free(w[0].buf);
  free(w[1].buf);
}

/* Milliseconds to look `touch` up and launch it once, waiting for it, on the current
 * device; NAN on failure. */
static double mg_first_launch(cujit_module *m, unsigned char *buf) {
  cujit_function *f = NULL;
  uint64_t t0 = bench_now_ns();
  if (cujit_module_get_function(m, "touch", &f) != CUJIT_OK ||
      CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_inout(buf, 64), cujit_u64(64)) !=
          CUJIT_OK)
    return NAN;
  return (double)(bench_now_ns() - t0) / 1e6;
}

/* A fresh module each trial (its source differs by a comment, so none is loaded yet):
 * compiled with device 0 current, first launched there, then on device 1. */
static void mg_second_device(void) {
  int trials = bench_reps(7, 3), t;
  double on0[8], on1[8];
  unsigned char buf[64] = {0};
  char src[sizeof mg_src + 64];
  cujit_module *m = NULL;
  for (t = 0; t < trials; t++) {
    snprintf(src, sizeof src, "// trial %d\n%s", t, mg_src);
    if (cujit_device_set_current(0) != CUJIT_OK ||
        cujit_module_from_source(&m, src, "multigpu.cu", NULL) != CUJIT_OK ||
        isnan(on0[t] = mg_first_launch(m, buf)) || cujit_device_set_current(1) != CUJIT_OK ||
        isnan(on1[t] = mg_first_launch(m, buf))) {
      bench_skip("multigpu", "first launch on device 1", cujit_last_error());
      cujit_module_destroy(m);
      return;
    }
    cujit_module_destroy(m);
    m = NULL;
  }
  bench_info("multigpu", "module on device 1 after device 0: lookup + first launch", 0, "ms",
             bench_median(on1, (size_t)trials), bench_median(on0, (size_t)trials),
             "baseline: the same on device 0, where it was loaded first");
}

void bench_multigpu(void) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  char why[96];
  int n = 0;
  if (cujit_device_get_count(&n) != CUJIT_OK || n < 2) {
    snprintf(why, sizeof why, "needs two CUDA devices, found %d", n);
    bench_skip("multigpu", "several devices", why);
    return;
  }
  /* both contexts made before anything is timed */
  if (cujit_device_set_current(1) != CUJIT_OK || cujit_synchronize() != CUJIT_OK ||
      cujit_device_set_current(0) != CUJIT_OK || cujit_synchronize() != CUJIT_OK ||
      cujit_module_from_source(&m, mg_src, "multigpu.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "touch", &f) != CUJIT_OK) {
    bench_skip("multigpu", "several devices", cujit_last_error());
  } else {
    mg_transfers(f);
    mg_second_device();
  }
  cujit_module_destroy(m);
  cujit_device_set_current(0);
}

/* clock.c - the monotonic clock and sleeping, for timeouts and waits. */
#include <errno.h>
#include <time.h>

#include "common/common.h"

double cj_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void cj_nap(double seconds) {
  struct timespec t;
  if (seconds <= 0) return;
  t.tv_sec = (time_t)seconds;
  t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
  while (nanosleep(&t, &t) != 0 && errno == EINTR) continue;
}

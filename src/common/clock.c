/* clock.c - the monotonic clock and sleeping, for timeouts and waits; random bits, for
 * unique names (a clock and a counter where the system has no random source). */
#include <errno.h>
#include <sys/random.h>
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

uint64_t cj_random64(void) {
  static uint64_t counter;
  uint64_t r = 0;
  struct timespec t;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^
         (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 40);
}

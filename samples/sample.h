/* sample.h - what the samples' checks share: comparing a result with its host reference.
 * Nothing here is needed to use cujit; scripts/sample-lines does not count the checks. */
#ifndef CUJIT_SAMPLE_H
#define CUJIT_SAMPLE_H

#include <math.h>
#include <stdio.h>

/* numpy.allclose for floats: |got - want| <= atol + rtol * |want| everywhere; otherwise
 * prints the first element that differs and returns 0. */
static inline int sample_allclose(const float *got, const float *want, size_t n, double rtol,
                                  double atol) {
  size_t i;
  for (i = 0; i < n; i++) {
    double g = got[i], w = want[i], d = g > w ? g - w : w - g;
    if (!(d <= atol + rtol * (w < 0 ? -w : w))) {
      printf("Failed: element %zu is %.9g, expected %.9g\n", i, g, w);
      return 0;
    }
  }
  return 1;
}

#endif

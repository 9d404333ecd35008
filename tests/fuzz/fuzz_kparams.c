/* fuzz_kparams - a kernel's parameters read from a CUBIN's own description of them, on
 * arbitrary bytes, for the kernel names the seeds hold and one taken from the input's last
 * bytes. It must never crash or read out of bounds; what it reads must have every
 * parameter once, with a size, and no more parameters than the bytes could describe. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/code.h"

static void read_one(const uint8_t *data, size_t size, const char *kernel) {
  size_t n = 7, i;
  cj_kparam *p = (cj_kparam *)1;
  int r = cj_cubin_kparams(data, size, kernel, &n, &p);
  if (r == 0 && (n != 0 || p)) abort();
  if (r != 1) return;
  if (n > size / 16 || (n == 0) != (p == NULL)) abort();
  for (i = 0; i < n; i++)
    if (p[i].size == 0) abort();
  free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"none", "mixed", "huge", ""};
  char tail[17];
  size_t i, k;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) read_one(data, size, names[i]);
  k = size < 16 ? size : 16;
  memcpy(tail, data + size - k, k);
  tail[k] = '\0';
  read_one(data, size, tail);
  return 0;
}

/* fuzz_size - byte sizes from the environment (CUJIT_CACHE_MAX_SIZE and the like). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  uint64_t v = 0;
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  if (cj_parse_size(s, &v) == 0 && strchr(s, '-')) abort(); /* negative sizes must not parse */
  free(s);
  return 0;
}

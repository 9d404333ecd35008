/* fuzz_prebuilt - telling PTX, CUBIN and fatbin bytes apart and reading their headers and
 * the variables they name, on arbitrary bytes: as they are, and (for a fatbin) with the
 * size of its entries made to match, so that the entry walker sees them. It must never
 * crash or read out of bounds; what it accepts must have a kind and a terminated arch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/prebuilt.h"

static void inspect(const uint8_t *data, size_t size) {
  cj_prebuilt_kind kind;
  cj_symtab t;
  char arch[32];
  int known;
  memset(arch, 'x', sizeof arch);
  if (cj_prebuilt_inspect(data, size, "fuzz", &kind, arch, sizeof arch) != CUJIT_OK) return;
  if (kind == CJ_PREBUILT_NONE || !memchr(arch, '\0', sizeof arch)) abort();
  if (cj_prebuilt_globals_of(data, size, kind, &t, &known) == CUJIT_OK) cj_symtab_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy;
  size_t i;
  inspect(data, size);
  if (size < 16 || !(copy = malloc(size))) return 0;
  memcpy(copy, data, size);
  copy[0] = 0x50, copy[1] = 0xed, copy[2] = 0x55, copy[3] = 0xba; /* a fatbin */
  copy[6] = 16, copy[7] = 0;                                      /* its header's size */
  for (i = 0; i < 8; i++) copy[8 + i] = (uint8_t)((uint64_t)(size - 16) >> (8 * i));
  inspect(copy, size);
  free(copy);
  return 0;
}

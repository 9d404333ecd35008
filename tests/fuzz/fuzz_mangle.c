/* fuzz_mangle - the decoder of Itanium-mangled kernel names, on the input's exact bytes
 * (no NUL after them, so that a read past the end is caught), as a kernel's symbol and
 * as the probe's instance. Every parameter read must have a spelling. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/mangle.h"

static void check(const cj_mparams *p) {
  size_t i;
  for (i = 0; i < p->n; i++)
    if (!p->v[i].spelling || p->v[i].cls > CJ_MC_NAMED ||
        (p->v[i].cls == CJ_MC_VECTOR && (p->v[i].lanes < 1 || p->v[i].lanes > 4)))
      abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *sym = malloc(size ? size : 1);
  cj_mparams p;
  if (!sym) return 0;
  memcpy(sym, data, size);
  if (cj_mangle_params(sym, size, &p) == CUJIT_OK) {
    check(&p);
    cj_mparams_free(&p);
  }
  if (cj_mangle_probe_params(sym, size, "__cujit_probe", &p) == CUJIT_OK) {
    check(&p);
    cj_mparams_free(&p);
  }
  free(sym);
  return 0;
}

/* fuzz_signature - the type-string parser of explicit signatures, on the whole input, and
 * the type-string form of what it parsed read back to the same signature. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call/signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  cj_signature *s = NULL, *again = NULL;
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  if (cj_sig_from_types(buf, &s) == CUJIT_OK) {
    if (cj_sig_from_types(s->text, &again) != CUJIT_OK || strcmp(again->text, s->text) != 0)
      abort();
    cj_sig_free(again);
    cj_sig_free(s);
  }
  free(buf);
  return 0;
}

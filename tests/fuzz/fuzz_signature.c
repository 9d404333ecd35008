/* fuzz_signature - the kernel declaration reader and the type-string parser. The first
 * input line is the kernel's name, the rest the source; the whole input is also tried as
 * an explicit type string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call/signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1), *nl;
  cj_signature *s = NULL;
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  if (cj_sig_from_types(buf, &s) == CUJIT_OK) cj_sig_free(s);
  s = NULL;
  nl = strchr(buf, '\n');
  if (nl) {
    *nl = '\0';
    if (cj_sig_from_source(nl + 1, "fuzz.cu", buf, NULL, &s) == CUJIT_OK) cj_sig_free(s);
  }
  free(buf);
  return 0;
}

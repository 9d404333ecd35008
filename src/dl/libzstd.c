/* libzstd.c - libzstd's table for the loader (see zstd.h and loader.h): the entry points a
 * compressed fatbin entry needs, with the prototypes zstd 1.x declares. */
#include <string.h>

#include "dl/loader.h"
#include "dl/zstd.h"

typedef struct zstd_api {
  size_t (*decompress)(void *dst, size_t capacity, const void *src, size_t size);
  unsigned long long (*content_size)(const void *src, size_t size);
  size_t (*frame_size)(const void *src, size_t size);
  unsigned (*is_error)(size_t code);
} zstd_api;

static zstd_api zs;

static const char *const sonames[] = {"libzstd.so.1"};

static const cj_dsym syms[] = {
    {"ZSTD_decompress", offsetof(zstd_api, decompress), 0},
    {"ZSTD_getFrameContentSize", offsetof(zstd_api, content_size), 0},
    {"ZSTD_findFrameCompressedSize", offsetof(zstd_api, frame_size), 0},
    {"ZSTD_isError", offsetof(zstd_api, is_error), 0},
};

CJ_DLIB_STATE(state);

/* Loaded by the system's search (or CUJIT_LIBZSTD), never keyed: what it gives back is
 * read as any outside bytes are. */
static const cj_dlib libzstd = {
    .name = "libzstd",
    .file = "libzstd.so.1",
    .install = "libzstd (Debian and Ubuntu: apt-get install libzstd1)",
    .oldest = "libzstd 1.3",
    .without = "only a compressed fatbin entry needs it, and without it the driver is asked for "
               "the parameters of that entry's kernels",
    .status = CUJIT_ERROR_NOT_SUPPORTED,
    .env = "CUJIT_LIBZSTD",
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
    .table = &zs,
    .state = &state,
};

int cj_zstd_is_frame(const void *data, size_t size) {
  static const unsigned char magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
  return size >= 4 && memcmp(data, magic, 4) == 0;
}

cujit_status cj_zstd_decompress(const void *data, size_t size, size_t max, unsigned char **out,
                                size_t *out_size) {
  unsigned long long n;
  size_t got;
  *out = NULL;
  *out_size = 0;
  if (cj_dlib_open(&libzstd) != CUJIT_OK) return CUJIT_ERROR_NOT_SUPPORTED;
  if (!cj_zstd_is_frame(data, size)) return CUJIT_ERROR_INVALID_SOURCE;
  /* a fatbin pads an entry's frame to 8 bytes: the frame alone is decompressed */
  got = zs.frame_size(data, size);
  if (zs.is_error(got) || got > size) return CUJIT_ERROR_INVALID_SOURCE;
  size = got;
  n = zs.content_size(data, size);
  /* ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values */
  if (n >= (unsigned long long)-2 || n > max) return CUJIT_ERROR_INVALID_SOURCE;
  if (!(*out = cj_malloc(n ? (size_t)n : 1))) return CUJIT_ERROR_OUT_OF_MEMORY;
  got = zs.decompress(*out, (size_t)n, data, size);
  if (zs.is_error(got) || got != n) {
    cj_free(*out);
    *out = NULL;
    return CUJIT_ERROR_INVALID_SOURCE;
  }
  *out_size = got;
  return CUJIT_OK;
}

const char *cj_zstd_error(void) { return cj_dlib_why(&libzstd); }

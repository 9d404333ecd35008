/* zstd.h - libzstd, loaded at run time to read a compressed fatbin entry (nvcc compresses
 * entries with zstd when asked: -Xfatbin=-compress-all, --compress-mode=size): libcujit does
 * not depend on it, and a program that loads no such entry never maps it. */
#ifndef CUJIT_DRIVER_ZSTD_H
#define CUJIT_DRIVER_ZSTD_H

#include "common/common.h"

/* Whether bytes start as a zstd frame does (its magic number, 28 b5 2f fd). */
int cj_zstd_is_frame(const void *data, size_t size);

/* Decompresses the zstd frame at the start of [data, data + size) (what follows it, a
 * fatbin's padding, is not read), which says how many bytes it holds:
 * at most `max` bytes, into *out (cj_malloc'd, the caller's to free). Loads libzstd
 * (env CUJIT_LIBZSTD when set, an absolute path; else libzstd.so.1 by the system's search)
 * on its first use. CUJIT_OK; CUJIT_ERROR_NOT_SUPPORTED when libzstd cannot be loaded
 * (cj_zstd_error() says why); CUJIT_ERROR_INVALID_SOURCE for bytes it refuses, a frame
 * that does not say its size or says more than `max`; CUJIT_ERROR_OUT_OF_MEMORY. The
 * thread's error detail is left alone: a caller that can do without goes on. */
cujit_status cj_zstd_decompress(const void *data, size_t size, size_t max, unsigned char **out,
                                size_t *out_size);
/* Why libzstd could not be loaded; "" when it was (or has not been tried). Static. */
const char *cj_zstd_error(void);

#endif

/* texture.h - texture and surface objects: the checks made before the driver is asked
 * (pure, so that tests reach them without a device) and the device's limits they use. */
#ifndef CUJIT_TEXTURE_H
#define CUJIT_TEXTURE_H

#include "dl/driver.h"

struct cujit_cuarray {
  CUarray handle;
  cujit_cuarray_desc d; /* size set, channels never 0 */
  size_t elem;          /* bytes per element */
};

/* What the device allows (texture.c reads it at each creation). */
typedef struct cj_tex_limits {
  size_t align;             /* base address alignment of linear and pitched textures */
  size_t pitch_align;       /* pitch alignment of pitched textures */
  size_t linear_max;        /* elements of a 1-D linear texture of the format asked for */
  size_t pitched_max[3];    /* 2-D pitched textures: width, height, pitch in bytes */
  size_t array_max[3][3];   /* texture arrays of 1, 2 and 3 dimensions: width, height, depth */
  size_t surface_max[3][3]; /* the same for arrays used as surfaces */
} cj_tex_limits;

/* Bytes of one channel of `format`, 0 when it is not a cujit_format. */
size_t cj_tex_format_bytes(int format);
/* The format and channel count are known (channels 1, 2 or 4). `fn` names the caller. */
cujit_status cj_texel_check(const char *fn, int format, unsigned channels);
/* The sampling descriptor's values and their combination with the format and the memory
 * (`linear`: 1-D linear memory, read by index). */
cujit_status cj_tex_desc_check(const char *fn, const cujit_texture_desc *d, int format, int linear);
/* A shape that a device could hold: width at least 1, depth only with a height, a byte
 * size that fits in size_t, known flags. */
cujit_status cj_tex_array_desc_check(const cujit_cuarray_desc *d);

/* Linear memory of `bytes` (elements of `elem` bytes) at `dptr` against the limits. */
cujit_status cj_tex_linear_check(const cj_tex_limits *l, CUdeviceptr dptr, size_t bytes,
                                 size_t elem);
/* Pitched memory against the limits. */
cujit_status cj_tex_pitched_check(const cj_tex_limits *l, CUdeviceptr dptr, size_t width,
                                  size_t height, size_t pitch, size_t elem);
/* An array's shape against the texture (and, for CUJIT_CUARRAY_SURFACE, surface) limits. */
cujit_status cj_tex_array_limits_check(const cj_tex_limits *l, const cujit_cuarray_desc *d);

#endif

/* texture.c - texture objects over linear, pitched and array memory, CUDA arrays filled
 * from host data, and surface objects. Every argument is checked before the driver is
 * asked, and the sizes against the device's limits, so that a refusal says which rule. */
#include <stdio.h>
#include <string.h>

#include "launch/texture.h"

/* The descriptors' first versions: what a size of 0 stands for. */
#define TEX_DESC_V1 CJ_SIZE_V1(cujit_texture_desc, border_color)
#define ARRAY_DESC_V1 CJ_SIZE_V1(cujit_cuarray_desc, flags)

static const unsigned known_array_flags = CUJIT_CUARRAY_SURFACE;

typedef struct format_info {
  size_t bytes;
  CUarray_format cu;
  int integer; /* read as an integer unless normalized */
} format_info;

static const format_info formats[] = {
    [CUJIT_FORMAT_F32] = {4, CU_AD_FORMAT_FLOAT, 0},
    [CUJIT_FORMAT_F16] = {2, CU_AD_FORMAT_HALF, 0},
    [CUJIT_FORMAT_U8] = {1, CU_AD_FORMAT_UNSIGNED_INT8, 1},
    [CUJIT_FORMAT_I8] = {1, CU_AD_FORMAT_SIGNED_INT8, 1},
    [CUJIT_FORMAT_U16] = {2, CU_AD_FORMAT_UNSIGNED_INT16, 1},
    [CUJIT_FORMAT_I16] = {2, CU_AD_FORMAT_SIGNED_INT16, 1},
    [CUJIT_FORMAT_U32] = {4, CU_AD_FORMAT_UNSIGNED_INT32, 1},
    [CUJIT_FORMAT_I32] = {4, CU_AD_FORMAT_SIGNED_INT32, 1},
};

static const char *const address_names[] = {"clamp", "wrap", "mirror", "border"};

/* ---- checks (pure) ---- */

size_t cj_tex_format_bytes(int format) {
  return format >= 0 && (size_t)format < CJ_COUNT(formats) ? formats[format].bytes : 0;
}

cujit_status cj_texel_check(const char *fn, int format, unsigned channels) {
  CJ_CHECK(cj_tex_format_bytes(format), CUJIT_ERROR_INVALID_VALUE,
           "%s: format %d is not a "
           "cujit_format; use one of CUJIT_FORMAT_F32, _F16, _U8, _I8, _U16, _I16, _U32, _I32",
           fn, format);
  CJ_CHECK(channels == 1 || channels == 2 || channels == 4, CUJIT_ERROR_INVALID_VALUE,
           "%s: %u channels; textures and arrays have 1, 2 or 4 (pad 3-channel data such as "
           "float3 to 4)",
           fn, channels);
  return CUJIT_OK;
}

static cujit_status enum_check(const char *fn, const char *field, int v, int max,
                               const char *values) {
  CJ_CHECK(v >= 0 && v <= max, CUJIT_ERROR_INVALID_VALUE,
           "%s: cujit_texture_desc.%s is %d; use one of %s", fn, field, v, values);
  return CUJIT_OK;
}

static cujit_status desc_values_check(const char *fn, const cujit_texture_desc *d) {
  static const char *const fields[] = {"address_mode[0]", "address_mode[1]", "address_mode[2]"};
  int i;
  for (i = 0; i < 3; i++)
    CJ_TRY(enum_check(fn, fields[i], d->address_mode[i], CUJIT_ADDRESS_BORDER,
                      "CUJIT_ADDRESS_CLAMP, _WRAP, _MIRROR, _BORDER"));
  CJ_TRY(enum_check(fn, "filter", d->filter, CUJIT_FILTER_LINEAR,
                    "CUJIT_FILTER_POINT, CUJIT_FILTER_LINEAR"));
  return enum_check(fn, "read_mode", d->read_mode, CUJIT_READ_NORMALIZED_FLOAT,
                    "CUJIT_READ_ELEMENT, CUJIT_READ_NORMALIZED_FLOAT");
}

cujit_status cj_tex_desc_check(const char *fn, const cujit_texture_desc *d, int format,
                               int linear) {
  const format_info *f = &formats[format];
  int i;
  CJ_TRY(desc_values_check(fn, d));
  CJ_CHECK(d->read_mode != CUJIT_READ_NORMALIZED_FLOAT || (f->integer && f->bytes <= 2),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: CUJIT_READ_NORMALIZED_FLOAT is for 8- and 16-bit "
           "integer formats only; read this format with CUJIT_READ_ELEMENT",
           fn);
  CJ_CHECK(!(d->filter == CUJIT_FILTER_LINEAR && f->integer && d->read_mode == CUJIT_READ_ELEMENT),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: linear filtering returns floats, and integer elements "
           "are read as integers; use CUJIT_READ_NORMALIZED_FLOAT (8- and 16-bit formats) or "
           "CUJIT_FILTER_POINT",
           fn);
  CJ_CHECK(!linear || (d->filter != CUJIT_FILTER_LINEAR && !d->normalized_coords),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: a texture over linear memory is read by element "
           "index (tex1Dfetch), without %s; use a pitched or array texture for that",
           fn, d->normalized_coords ? "normalized coordinates" : "filtering");
  for (i = 0; !linear && i < 3; i++)
    CJ_CHECK(d->normalized_coords || (d->address_mode[i] != CUJIT_ADDRESS_WRAP &&
                                      d->address_mode[i] != CUJIT_ADDRESS_MIRROR),
             CUJIT_ERROR_INVALID_VALUE,
             "%s: address_mode[%d] is %s, which needs normalized "
             "coordinates; set cujit_texture_desc.normalized_coords, or use clamp or border",
             fn, i, address_names[d->address_mode[i]]);
  return CUJIT_OK;
}

/* a * b, or 0 when it overflows (a and b nonzero). */
static size_t mul_or_zero(size_t a, size_t b) { return b && a > (size_t)-1 / b ? 0 : a * b; }

static size_t one_if_zero(size_t n) { return n ? n : 1; }

/* Dense bytes of an array's data; 0 when that overflows. */
static size_t array_bytes(const cujit_cuarray_desc *d) {
  size_t row = mul_or_zero(d->width, cj_tex_format_bytes(d->format) * d->channels);
  return mul_or_zero(mul_or_zero(row, one_if_zero(d->height)), one_if_zero(d->depth));
}

cujit_status cj_tex_array_desc_check(const cujit_cuarray_desc *d) {
  const char *fn = "cujit_cuarray_create";
  CJ_TRY(cj_texel_check(fn, d->format, d->channels));
  CJ_CHECK(d->width, CUJIT_ERROR_INVALID_VALUE,
           "%s: width is 0; an array has at least one "
           "element per row",
           fn);
  CJ_CHECK(!d->depth || d->height, CUJIT_ERROR_INVALID_VALUE,
           "%s: depth is %zu but height is 0; "
           "a 3-D array needs a height (1 for single rows)",
           fn, d->depth);
  CJ_CHECK(!(d->flags & ~known_array_flags), CUJIT_ERROR_INVALID_VALUE,
           "%s: flags has unknown "
           "bits 0x%x; use the CUJIT_CUARRAY_* flags",
           fn, d->flags & ~known_array_flags);
  CJ_CHECK(array_bytes(d), CUJIT_ERROR_INVALID_VALUE,
           "%s: an array of %zu x %zu x %zu elements "
           "is too large to address",
           fn, d->width, d->height, d->depth);
  return CUJIT_OK;
}

static cujit_status align_check(const char *fn, const char *what, unsigned long long v,
                                size_t align, const char *hint) {
  CJ_CHECK(!align || v % align == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s 0x%llx (%llu) is not a "
           "multiple of the device's texture alignment of %zu bytes; %s",
           fn, what, v, v, align, hint);
  return CUJIT_OK;
}

static cujit_status limit_check(const char *fn, const char *what, size_t v, size_t max,
                                const char *hint) {
  CJ_CHECK(!max || v <= max, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s %zu exceeds the device's limit of %zu; %s", fn, what, v, max, hint);
  return CUJIT_OK;
}

cujit_status cj_tex_linear_check(const cj_tex_limits *l, CUdeviceptr dptr, size_t bytes,
                                 size_t elem) {
  const char *fn = "cujit_texture_from_linear";
  CJ_CHECK(dptr && bytes, CUJIT_ERROR_INVALID_VALUE, "%s: %s is 0", fn, !dptr ? "dptr" : "bytes");
  CJ_CHECK(bytes % elem == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: bytes (%zu) is not a whole number "
           "of %zu-byte elements",
           fn, bytes, elem);
  if (!l) return CUJIT_OK;
  CJ_TRY(align_check(fn, "dptr", dptr, l->align,
                     "use memory from cujit_mem_alloc(), at an "
                     "offset that is a multiple of it"));
  return limit_check(fn, "the element count", bytes / elem, l->linear_max,
                     "that is the most a 1-D linear texture of this format holds: use a 2-D "
                     "pitched texture, or several textures");
}

cujit_status cj_tex_pitched_check(const cj_tex_limits *l, CUdeviceptr dptr, size_t width,
                                  size_t height, size_t pitch, size_t elem) {
  const char *fn = "cujit_texture_from_pitched";
  size_t row = mul_or_zero(width, elem);
  CJ_CHECK(dptr && width && height && pitch, CUJIT_ERROR_INVALID_VALUE, "%s: %s is 0", fn,
           !dptr     ? "dptr"
           : !width  ? "width"
           : !height ? "height"
                     : "pitch");
  CJ_CHECK(row && pitch >= row, CUJIT_ERROR_INVALID_VALUE,
           "%s: pitch (%zu bytes) is smaller than "
           "a row of %zu elements of %zu bytes; the pitch is the distance between rows in bytes",
           fn, pitch, width, elem);
  if (!l) return CUJIT_OK;
  CJ_CHECK(!l->pitch_align || pitch % l->pitch_align == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: pitch %zu is not a multiple of the device's texture pitch alignment of %zu "
           "bytes; allocate rows of %zu bytes",
           fn, pitch, l->pitch_align, (pitch / l->pitch_align + 1) * l->pitch_align);
  CJ_TRY(align_check(fn, "dptr", dptr, l->align,
                     "use memory from cujit_mem_alloc(), at an "
                     "offset that is a multiple of it"));
  CJ_TRY(limit_check(fn, "width", width, l->pitched_max[0], "split the image"));
  CJ_TRY(limit_check(fn, "height", height, l->pitched_max[1], "split the image"));
  return limit_check(fn, "pitch", pitch, l->pitched_max[2], "use narrower rows");
}

static int array_dims(const cujit_cuarray_desc *d) { return d->depth ? 3 : d->height ? 2 : 1; }

static cujit_status shape_check(const cujit_cuarray_desc *d, const size_t max[3],
                                const char *kind) {
  const size_t v[3] = {d->width, d->height, d->depth};
  int dims = array_dims(d), i;
  for (i = 0; i < dims; i++)
    CJ_CHECK(!max[i] || v[i] <= max[i], CUJIT_ERROR_INVALID_VALUE,
             "cujit_cuarray_create: %s %zu "
             "exceeds the device's limit of %zu for %d-D %s; split the data into several arrays",
             i == 0   ? "width"
             : i == 1 ? "height"
                      : "depth",
             v[i], max[i], dims, kind);
  return CUJIT_OK;
}

cujit_status cj_tex_array_limits_check(const cj_tex_limits *l, const cujit_cuarray_desc *d) {
  int dims = array_dims(d);
  CJ_TRY(shape_check(d, l->array_max[dims - 1], "textures"));
  if (!(d->flags & CUJIT_CUARRAY_SURFACE)) return CUJIT_OK;
  return shape_check(d, l->surface_max[dims - 1], "surfaces");
}

/* ---- the device ---- */

static cujit_status need_textures(void) {
  CJ_CHECK(cj_cu.cuTexObjectCreate && cj_cu.cuTexObjectDestroy && cj_cu.cuSurfObjectCreate &&
               cj_cu.cuSurfObjectDestroy && cj_cu.cuArray3DCreate && cj_cu.cuArrayDestroy &&
               cj_cu.cuMemcpy3D,
           CUJIT_ERROR_NOT_SUPPORTED,
           "the CUDA driver lacks texture and surface objects "
           "(cuTexObjectCreate, cuArray3DCreate, ...); update the driver");
  return CUJIT_OK;
}

/* The current device, with the texture entry points checked. */
static cujit_status tex_device(CUdevice *dev) {
  CUcontext ctx;
  CJ_TRY(cj_ctx_ensure(&ctx, dev));
  return need_textures();
}

static cujit_status attrs_read(CUdevice dev, const CUdevice_attribute *attrs, size_t *out,
                               size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    int v = 0;
    CUresult r = cj_cu.cuDeviceGetAttribute(&v, attrs[i], dev);
    if (r != CUDA_SUCCESS)
      return cj_cu_fail(r, "cuDeviceGetAttribute (reading the device's texture limits)");
    out[i] = v > 0 ? (size_t)v : 0;
  }
  return CUJIT_OK;
}

static cujit_status linear_max(CUdevice dev, int format, unsigned channels, size_t *max) {
  static const CUdevice_attribute old = CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH;
  CUresult r;
  if (!cj_cu.cuDeviceGetTexture1DLinearMaxWidth) return attrs_read(dev, &old, max, 1);
  r = cj_cu.cuDeviceGetTexture1DLinearMaxWidth(max, formats[format].cu, channels, dev);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuDeviceGetTexture1DLinearMaxWidth");
}

static cujit_status read_limits(CUdevice dev, int format, unsigned channels, cj_tex_limits *l) {
  static const CUdevice_attribute base[] = {CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT,
                                            CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT,
                                            CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH,
                                            CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT,
                                            CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH};
  static const CUdevice_attribute arrays[2][6] =
      {{CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH},
       {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH,
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH}};
  size_t v[5], a[2][6];
  int k;
  memset(l, 0, sizeof *l);
  CJ_TRY(attrs_read(dev, base, v, 5));
  CJ_TRY(attrs_read(dev, arrays[0], a[0], 6));
  CJ_TRY(attrs_read(dev, arrays[1], a[1], 6));
  CJ_TRY(linear_max(dev, format, channels, &l->linear_max));
  l->align = v[0];
  l->pitch_align = v[1];
  memcpy(l->pitched_max, v + 2, sizeof l->pitched_max);
  for (k = 0; k < 2; k++) {
    size_t(*m)[3] = k ? l->surface_max : l->array_max;
    m[0][0] = a[k][0];
    m[1][0] = a[k][1];
    m[1][1] = a[k][2];
    m[2][0] = a[k][3];
    m[2][1] = a[k][4];
    m[2][2] = a[k][5];
  }
  return CUJIT_OK;
}

/* ---- texture objects ---- */

static void tex_desc_to_cu(const cujit_texture_desc *d, int format, CUDA_TEXTURE_DESC *t) {
  static const CUaddress_mode modes[] = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_WRAP,
                                         CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
  int i;
  memset(t, 0, sizeof *t);
  for (i = 0; i < 3; i++) t->addressMode[i] = modes[d->address_mode[i]];
  t->filterMode =
      d->filter == CUJIT_FILTER_LINEAR ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
  /* the driver reads integers as normalized floats unless told otherwise */
  if (formats[format].integer && d->read_mode == CUJIT_READ_ELEMENT)
    t->flags |= CU_TRSF_READ_AS_INTEGER;
  if (d->normalized_coords) t->flags |= CU_TRSF_NORMALIZED_COORDINATES;
  memcpy(t->borderColor, d->border_color, sizeof t->borderColor);
}

static cujit_status tex_create(const char *fn, cujit_texobj *tex, const CUDA_RESOURCE_DESC *res,
                               const cujit_texture_desc *d, int format) {
  CUDA_TEXTURE_DESC t;
  CUtexObject obj = 0;
  CUresult r;
  tex_desc_to_cu(d, format, &t);
  r = cj_cu.cuTexObjectCreate(&obj, res, &t, NULL);
  if (r == CUDA_SUCCESS) {
    *tex = obj;
    return CUJIT_OK;
  }
  if (r == CUDA_ERROR_INVALID_VALUE)
    return cj_fail_cu(CUJIT_ERROR_INVALID_VALUE, r,
                      "%s: the driver refused the texture "
                      "(cuTexObjectCreate: CUDA_ERROR_INVALID_VALUE) for a combination of "
                      "memory, format and sampling that cujit does not check; try point "
                      "filtering and clamp addressing to narrow it down",
                      fn);
  return cj_cu_fail(r, "cuTexObjectCreate");
}

/* The first steps of every texture creation: the output cleared, the descriptor read. */
static cujit_status tex_begin(const char *fn, cujit_texobj *tex, const cujit_texture_desc *user,
                              cujit_texture_desc *d) {
  CJ_CHECK(tex, CUJIT_ERROR_INVALID_VALUE, "%s: tex is NULL", fn);
  *tex = 0;
  return cj_sized_in(fn, "cujit_texture_desc", user, TEX_DESC_V1, d, sizeof *d);
}

cujit_status cujit_texture_from_linear(cujit_texobj *tex, CUdeviceptr dptr, size_t bytes,
                                       cujit_format format, unsigned channels,
                                       const cujit_texture_desc *desc) {
  const char *fn = "cujit_texture_from_linear";
  CUDA_RESOURCE_DESC res;
  cujit_texture_desc d;
  cj_tex_limits l;
  CUdevice dev;
  CJ_TRY(tex_begin(fn, tex, desc, &d));
  CJ_TRY(cj_texel_check(fn, format, channels));
  CJ_TRY(cj_tex_desc_check(fn, &d, format, 1));
  CJ_TRY(cj_tex_linear_check(NULL, dptr, bytes, formats[format].bytes * channels));
  CJ_TRY(tex_device(&dev));
  CJ_TRY(read_limits(dev, format, channels, &l));
  CJ_TRY(cj_tex_linear_check(&l, dptr, bytes, formats[format].bytes * channels));
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = dptr;
  res.res.linear.format = formats[format].cu;
  res.res.linear.numChannels = channels;
  res.res.linear.sizeInBytes = bytes;
  return tex_create(fn, tex, &res, &d, format);
}

cujit_status cujit_texture_from_pitched(cujit_texobj *tex, CUdeviceptr dptr, size_t width,
                                        size_t height, size_t pitch, cujit_format format,
                                        unsigned channels, const cujit_texture_desc *desc) {
  const char *fn = "cujit_texture_from_pitched";
  CUDA_RESOURCE_DESC res;
  cujit_texture_desc d;
  cj_tex_limits l;
  CUdevice dev;
  size_t elem;
  CJ_TRY(tex_begin(fn, tex, desc, &d));
  CJ_TRY(cj_texel_check(fn, format, channels));
  CJ_TRY(cj_tex_desc_check(fn, &d, format, 0));
  elem = formats[format].bytes * channels;
  CJ_TRY(cj_tex_pitched_check(NULL, dptr, width, height, pitch, elem));
  CJ_TRY(tex_device(&dev));
  CJ_TRY(read_limits(dev, format, channels, &l));
  CJ_TRY(cj_tex_pitched_check(&l, dptr, width, height, pitch, elem));
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_PITCH2D;
  res.res.pitch2D.devPtr = dptr;
  res.res.pitch2D.format = formats[format].cu;
  res.res.pitch2D.numChannels = channels;
  res.res.pitch2D.width = width;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch;
  return tex_create(fn, tex, &res, &d, format);
}

static void array_resource(const cujit_cuarray *arr, CUDA_RESOURCE_DESC *res) {
  memset(res, 0, sizeof *res);
  res->resType = CU_RESOURCE_TYPE_ARRAY;
  res->res.array.hArray = arr->handle;
}

cujit_status cujit_texture_from_array(cujit_texobj *tex, const cujit_cuarray *arr,
                                      const cujit_texture_desc *desc) {
  const char *fn = "cujit_texture_from_array";
  CUDA_RESOURCE_DESC res;
  cujit_texture_desc d;
  CUdevice dev;
  CJ_TRY(tex_begin(fn, tex, desc, &d));
  CJ_CHECK(arr, CUJIT_ERROR_INVALID_VALUE, "%s: arr is NULL", fn);
  CJ_TRY(cj_tex_desc_check(fn, &d, arr->d.format, 0));
  CJ_TRY(tex_device(&dev));
  array_resource(arr, &res);
  return tex_create(fn, tex, &res, &d, arr->d.format);
}

cujit_status cujit_texture_destroy(cujit_texobj tex) {
  CUresult r;
  if (!tex) return CUJIT_OK;
  CJ_TRY(cj_driver_load());
  CJ_TRY(need_textures());
  r = cj_cu.cuTexObjectDestroy(tex);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuTexObjectDestroy");
}

/* ---- surface objects ---- */

cujit_status cujit_surface_from_array(cujit_surfobj *surf, const cujit_cuarray *arr) {
  const char *fn = "cujit_surface_from_array";
  CUDA_RESOURCE_DESC res;
  CUsurfObject obj = 0;
  CUdevice dev;
  CUresult r;
  CJ_CHECK(surf && arr, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", fn, !surf ? "surf" : "arr");
  *surf = 0;
  CJ_CHECK(arr->d.flags & CUJIT_CUARRAY_SURFACE, CUJIT_ERROR_INVALID_VALUE,
           "%s: the array was "
           "made without CUJIT_CUARRAY_SURFACE; set it in cujit_cuarray_desc.flags to write the "
           "array through surfaces",
           fn);
  CJ_TRY(tex_device(&dev));
  array_resource(arr, &res);
  r = cj_cu.cuSurfObjectCreate(&obj, &res);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuSurfObjectCreate");
  *surf = obj;
  return CUJIT_OK;
}

cujit_status cujit_surface_destroy(cujit_surfobj surf) {
  CUresult r;
  if (!surf) return CUJIT_OK;
  CJ_TRY(cj_driver_load());
  CJ_TRY(need_textures());
  r = cj_cu.cuSurfObjectDestroy(surf);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuSurfObjectDestroy");
}

/* ---- arrays ---- */

/* A copy of the whole array from or to dense host memory. */
static CUresult array_copy(const cujit_cuarray *arr, const void *src, void *dst) {
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.WidthInBytes = arr->d.width * arr->elem;
  c.Height = one_if_zero(arr->d.height);
  c.Depth = one_if_zero(arr->d.depth);
  if (src) {
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = c.WidthInBytes;
    c.srcHeight = c.Height;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = arr->handle;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    c.srcArray = arr->handle;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = dst;
    c.dstPitch = c.WidthInBytes;
    c.dstHeight = c.Height;
  }
  return cj_cu.cuMemcpy3D(&c);
}

static cujit_status array_alloc(cujit_cuarray *a) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  CUresult r;
  memset(&d, 0, sizeof d);
  d.Width = a->d.width;
  d.Height = a->d.height;
  d.Depth = a->d.depth;
  d.Format = formats[a->d.format].cu;
  d.NumChannels = a->d.channels;
  if (a->d.flags & CUJIT_CUARRAY_SURFACE) d.Flags |= CUDA_ARRAY3D_SURFACE_LDST;
  r = cj_cu.cuArray3DCreate(&a->handle, &d);
  if (r == CUDA_SUCCESS) return CUJIT_OK;
  a->handle = NULL;
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return cj_fail_cu(CUJIT_ERROR_DEVICE_MEMORY, r,
                      "cujit_cuarray_create: no device memory for "
                      "an array of %zu bytes (CUDA_ERROR_OUT_OF_MEMORY); free device memory or "
                      "use a smaller array",
                      array_bytes(&a->d));
  return cj_cu_fail(r, "cuArray3DCreate");
}

/* The caller's descriptor, read and checked, and the device's limits. */
static cujit_status array_desc_load(const cujit_cuarray_desc *user, cujit_cuarray_desc *d) {
  cj_tex_limits l;
  CUdevice dev;
  CJ_CHECK(user, CUJIT_ERROR_INVALID_VALUE,
           "cujit_cuarray_create: desc is NULL; give at least "
           "the width");
  CJ_TRY(
      cj_sized_in("cujit_cuarray_create", "cujit_cuarray_desc", user, ARRAY_DESC_V1, d, sizeof *d));
  if (!d->channels) d->channels = 1;
  CJ_TRY(cj_tex_array_desc_check(d));
  CJ_TRY(tex_device(&dev));
  CJ_TRY(read_limits(dev, d->format, d->channels, &l));
  return cj_tex_array_limits_check(&l, d);
}

cujit_status cujit_cuarray_create(cujit_cuarray **out, const cujit_cuarray_desc *desc,
                                  const void *host) {
  cujit_cuarray *a;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_cuarray_create: out is NULL");
  *out = NULL;
  if (!(a = cj_calloc(1, sizeof *a))) return cj_fail_oom("creating an array");
  if ((st = array_desc_load(desc, &a->d)) != CUJIT_OK || (st = array_alloc(a)) != CUJIT_OK) {
    cj_free(a);
    return st;
  }
  a->elem = formats[a->d.format].bytes * a->d.channels;
  if (host && (st = cujit_cuarray_write(a, host)) != CUJIT_OK) {
    cujit_cuarray_destroy(a);
    return st;
  }
  *out = a;
  return CUJIT_OK;
}

cujit_status cujit_cuarray_write(cujit_cuarray *arr, const void *host) {
  CUdevice dev;
  CUresult r;
  CJ_CHECK(arr && host, CUJIT_ERROR_INVALID_VALUE, "cujit_cuarray_write: %s is NULL",
           !arr ? "arr" : "host");
  CJ_TRY(tex_device(&dev));
  r = array_copy(arr, host, NULL);
  /* from pageable memory the copy may return before it reaches the array */
  if (r == CUDA_SUCCESS) r = cj_cu.cuStreamSynchronize(NULL);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpy3D (host to array)");
}

cujit_status cujit_cuarray_read(const cujit_cuarray *arr, void *host) {
  CUdevice dev;
  CUresult r;
  CJ_CHECK(arr && host, CUJIT_ERROR_INVALID_VALUE, "cujit_cuarray_read: %s is NULL",
           !arr ? "arr" : "host");
  CJ_TRY(tex_device(&dev));
  r = array_copy(arr, NULL, host);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpy3D (array to host)");
}

size_t cujit_cuarray_bytes(const cujit_cuarray *arr) { return arr ? array_bytes(&arr->d) : 0; }

CUarray cujit_cuarray_handle(const cujit_cuarray *arr) { return arr ? arr->handle : NULL; }

cujit_status cujit_cuarray_destroy(cujit_cuarray *arr) {
  CUresult r = CUDA_SUCCESS;
  if (!arr) return CUJIT_OK;
  if (arr->handle) r = cj_cu.cuArrayDestroy(arr->handle);
  cj_free(arr);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuArrayDestroy");
}

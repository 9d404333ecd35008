/* test_gpu_texture - texture objects over linear memory (tex1Dfetch), over pitched memory
 * with linear filtering and clamping (checked against the same filter computed here), over
 * arrays with normalized coordinates and wrapping, and with normalized reads of 8-bit
 * data; a surface written by one kernel and read back, by the host and by a texture in a
 * second kernel; and what the device's limits refuse. */
#include <math.h>

#include "gputest.h"

static const char kSrc[] =
    "__global__ void fetch(cudaTextureObject_t t, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = 2.0f * tex1Dfetch<float>(t, i);\n"
    "}\n"
    "__global__ void sample2d(cudaTextureObject_t t, const float2 *at, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);\n"
    "}\n"
    "__global__ void sample1d4(cudaTextureObject_t t, float4 *out, int n) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) out[i] = tex1D<float4>(t, i + 0.5f);\n"
    "}\n"
    "__global__ void paint(cudaSurfaceObject_t s, int w, int h) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < w && y < h) surf2Dwrite(x + 100.0f * y, s, x * (int)sizeof(float), y);\n"
    "}\n"
    "__global__ void scale_surface(cudaSurfaceObject_t s, int w, int h) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < w && y < h) {\n"
    "    float v = surf2Dread<float>(s, x * (int)sizeof(float), y);\n"
    "    surf2Dwrite(3.0f * v, s, x * (int)sizeof(float), y);\n"
    "  }\n"
    "}\n";

/* ---- 1-D linear memory ---- */

static void linear_fetch(void **state) {
  enum { N = 1000 };
  float in[N], out[N];
  CUdeviceptr d = 0;
  cujit_texobj t = 0;
  cujit_function *f = gpu_function(mod, "fetch");
  int i;
  (void)state;
  for (i = 0; i < N; i++) in[i] = (float)i * 0.25f - 30.0f;
  assert_ok(cujit_mem_alloc(&d, sizeof in));
  assert_ok(cujit_mem_copy_htod(d, in, sizeof in));
  assert_ok(cujit_texture_from_linear(&t, d, sizeof in, CUJIT_FORMAT_F32, 1, NULL));
  assert_true(t != 0);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), cujit_texture(t),
                         cujit_out(out, sizeof out), cujit_i32(N)));
  for (i = 0; i < N; i++) assert_true(out[i] == 2.0f * in[i]);
  /* the compiler says the handle is an unsigned long long: cujit_call takes it as one */
  memset(out, 0, sizeof out);
  assert_ok(cujit_call(f, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), (unsigned long long)t,
                       CUJIT_OUT_PTR(out, sizeof out), N));
  for (i = 0; i < N; i++) assert_true(out[i] == 2.0f * in[i]);
  assert_ok(cujit_texture_destroy(t));
  assert_ok(cujit_mem_free(d));
}

/* ---- 2-D pitched memory, linear filtering, clamp ---- */

enum { W = 16, H = 8, PITCH = 512 }; /* a pitch every device's alignment divides */

static float image(int x, int y) { return sinf(0.7f * (float)x) + 2.0f * cosf(0.9f * (float)y); }

static float clamped(int x, int y) {
  x = x < 0 ? 0 : x >= W ? W - 1 : x;
  y = y < 0 ? 0 : y >= H ? H - 1 : y;
  return image(x, y);
}

/* What the texture unit computes for unnormalized coordinates (x, y). */
static float bilinear(float x, float y) {
  float xb = x - 0.5f, yb = y - 0.5f;
  int i = (int)floorf(xb), j = (int)floorf(yb);
  float a = xb - (float)i, b = yb - (float)j;
  return (1 - a) * (1 - b) * clamped(i, j) + a * (1 - b) * clamped(i + 1, j) +
         (1 - a) * b * clamped(i, j + 1) + a * b * clamped(i + 1, j + 1);
}

static void pitched_linear_filter_clamp(void **state) {
  enum { N = 12 };
  static const float at[N][2] = {{0.5f, 0.5f},  {3.25f, 2.75f}, {7.9f, 4.1f},  {15.5f, 7.5f},
                                 {-3.2f, 1.0f}, {20.7f, 6.3f},  {4.4f, -1.0f}, {9.6f, 9.5f},
                                 {1.0f, 1.0f},  {12.3f, 0.2f},  {0.0f, 8.0f},  {8.5f, 3.999f}};
  unsigned char host[PITCH * H];
  float out[N];
  cujit_texture_desc desc = CUJIT_TEXTURE_DESC_INIT;
  CUdeviceptr d = 0;
  cujit_texobj t = 0;
  cujit_function *f = gpu_function(mod, "sample2d");
  int x, y, i;
  (void)state;
  memset(host, 0xff, sizeof host); /* padding the texture must never read */
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++) {
      float v = image(x, y);
      memcpy(host + (size_t)y * PITCH + (size_t)x * sizeof v, &v, sizeof v);
    }
  assert_ok(cujit_mem_alloc(&d, sizeof host));
  assert_ok(cujit_mem_copy_htod(d, host, sizeof host));
  desc.filter = CUJIT_FILTER_LINEAR; /* clamp is the default address mode */
  assert_ok(cujit_texture_from_pitched(&t, d, W, H, PITCH, CUJIT_FORMAT_F32, 1, &desc));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_texture(t),
                         cujit_in(at, sizeof at), cujit_out(out, sizeof out), cujit_i32(N)));
  for (i = 0; i < N; i++) {
    float want = bilinear(at[i][0], at[i][1]);
    /* the hardware's weights have 8 fractional bits: neighbours differ by at most ~3.5 */
    if (fabsf(out[i] - want) > 0.02f)
      fail_msg("sample %d at (%g, %g): %g, wanted %g", i, at[i][0], at[i][1], out[i], want);
  }
  assert_ok(cujit_texture_destroy(t));
  assert_ok(cujit_mem_free(d));
}

static void pitched_memory_against_the_device(void **state) {
  CUdeviceptr d = 0;
  cujit_texobj t = 5;
  (void)state;
  assert_ok(cujit_mem_alloc(&d, PITCH * H));
  assert_status_detail(cujit_texture_from_pitched(&t, d, W, H, W * 4 + 4, CUJIT_FORMAT_F32, 1,
                                                  NULL),
                       CUJIT_ERROR_INVALID_VALUE,
                       "is not a multiple of the device's texture "
                       "pitch alignment");
  assert_int_equal(t, 0);
  assert_status_detail(cujit_texture_from_pitched(&t, d, W, H, W * 2, CUJIT_FORMAT_F32, 1, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "is smaller than a row of 16 elements");
  assert_status_detail(cujit_texture_from_pitched(&t, d + 4, W, H, PITCH, CUJIT_FORMAT_F32, 1,
                                                  NULL),
                       CUJIT_ERROR_INVALID_VALUE, "texture alignment");
  /* 2^31 elements of 16 bytes: beyond any device's 1-D linear limit, refused unread */
  assert_status_detail(cujit_texture_from_linear(&t, d, (size_t)1 << 35, CUJIT_FORMAT_F32, 4, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "exceeds the device's limit");
  assert_ok(cujit_mem_free(d));
}

/* ---- arrays ---- */

static void array_normalized_wrap(void **state) {
  enum { AW = 8, AH = 4, N = AW * AH * 5 };
  static const int wraps[5] = {-2, -1, 0, 1, 3};
  float data[AH][AW], at[N][2], out[N], want[N];
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  cujit_texture_desc desc = CUJIT_TEXTURE_DESC_INIT;
  cujit_cuarray *arr = NULL;
  cujit_texobj t = 0;
  cujit_function *f = gpu_function(mod, "sample2d");
  int x, y, k, i = 0;
  (void)state;
  for (y = 0; y < AH; y++)
    for (x = 0; x < AW; x++) data[y][x] = (float)(10 * y + x);
  /* the centre of each element, shifted by whole periods: wrapping finds the same one */
  for (k = 0; k < 5; k++)
    for (y = 0; y < AH; y++)
      for (x = 0; x < AW; x++, i++) {
        at[i][0] = ((float)x + 0.5f) / AW + (float)wraps[k];
        at[i][1] = ((float)y + 0.5f) / AH - (float)wraps[4 - k];
        want[i] = data[y][x];
      }
  ad.width = AW;
  ad.height = AH;
  assert_ok(cujit_cuarray_create(&arr, &ad, data));
  assert_int_equal(cujit_cuarray_bytes(arr), sizeof data);
  assert_non_null(cujit_cuarray_handle(arr));
  desc.address_mode[0] = desc.address_mode[1] = CUJIT_ADDRESS_WRAP;
  desc.normalized_coords = 1;
  assert_ok(cujit_texture_from_array(&t, arr, &desc));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_texture(t), cujit_in(at, sizeof at),
                         cujit_out(out, sizeof out), cujit_i32(N)));
  for (i = 0; i < N; i++)
    if (out[i] != want[i])
      fail_msg("sample %d at (%g, %g): %g, wanted %g", i, at[i][0], at[i][1], out[i], want[i]);
  /* wrapping needs normalized coordinates */
  desc.normalized_coords = 0;
  assert_status_detail(cujit_texture_from_array(&t, arr, &desc), CUJIT_ERROR_INVALID_VALUE,
                       "address_mode[0] is wrap, which needs normalized coordinates");
  assert_int_equal(t, 0);
  assert_ok(cujit_cuarray_destroy(arr));
}

static void array_of_uchar4_normalized(void **state) {
  enum { N = 64 };
  unsigned char data[N][4];
  float out[N][4];
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  cujit_texture_desc desc = CUJIT_TEXTURE_DESC_INIT;
  cujit_cuarray *arr = NULL;
  cujit_texobj t = 0;
  cujit_function *f = gpu_function(mod, "sample1d4");
  int i, c;
  (void)state;
  for (i = 0; i < N; i++)
    for (c = 0; c < 4; c++) data[i][c] = (unsigned char)(i * 4 + c);
  ad.width = N;
  ad.format = CUJIT_FORMAT_U8;
  ad.channels = 4;
  assert_ok(cujit_cuarray_create(&arr, &ad, data));
  desc.read_mode = CUJIT_READ_NORMALIZED_FLOAT;
  assert_ok(cujit_texture_from_array(&t, arr, &desc));
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_texture(t),
                         cujit_out(out, sizeof out), cujit_i32(N)));
  for (i = 0; i < N; i++)
    for (c = 0; c < 4; c++) assert_true(fabsf(out[i][c] - data[i][c] / 255.0f) < 1e-6f);
  assert_ok(cujit_texture_destroy(t));
  assert_ok(cujit_cuarray_destroy(arr));
}

static void arrays_against_the_device(void **state) {
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  cujit_cuarray *arr = (cujit_cuarray *)1;
  cujit_surfobj s = 9;
  (void)state;
  ad.width = (size_t)1 << 24; /* wider than any device's 2-D texture */
  ad.height = 2;
  assert_status_detail(cujit_cuarray_create(&arr, &ad, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "width 16777216 exceeds the device's limit of");
  assert_null(arr);
  ad.width = 4;
  assert_ok(cujit_cuarray_create(&arr, &ad, NULL));
  assert_status_detail(cujit_surface_from_array(&s, arr), CUJIT_ERROR_INVALID_VALUE,
                       "the array was made without CUJIT_CUARRAY_SURFACE");
  assert_int_equal(s, 0);
  assert_ok(cujit_cuarray_destroy(arr));
}

/* ---- surfaces ---- */

static void surface_written_then_read_back(void **state) {
  enum { SW = 40, SH = 24, N = 12 };
  float host[SH][SW], out[N];
  float at[N][2];
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  cujit_cuarray *arr = NULL;
  cujit_surfobj s = 0;
  cujit_texobj t = 0;
  int x, y, i;
  (void)state;
  ad.width = SW;
  ad.height = SH;
  ad.flags = CUJIT_CUARRAY_SURFACE;
  assert_ok(cujit_cuarray_create(&arr, &ad, NULL));
  assert_ok(cujit_surface_from_array(&s, arr));
  assert_ok(CUJIT_LAUNCH(gpu_function(mod, "paint"), CUJIT_DIM3(3, 2), CUJIT_DIM3(16, 16),
                         cujit_surface(s), cujit_i32(SW), cujit_i32(SH)));
  assert_ok(CUJIT_LAUNCH(gpu_function(mod, "scale_surface"), CUJIT_DIM3(3, 2), CUJIT_DIM3(16, 16),
                         cujit_surface(s), cujit_i32(SW), cujit_i32(SH)));
  assert_ok(cujit_synchronize());
  assert_ok(cujit_cuarray_read(arr, host));
  for (y = 0; y < SH; y++)
    for (x = 0; x < SW; x++) assert_true(host[y][x] == 3.0f * ((float)x + 100.0f * y));
  /* the same array read through a texture by another kernel */
  assert_ok(cujit_texture_from_array(&t, arr, NULL));
  for (i = 0; i < N; i++) {
    at[i][0] = (float)(i * 3 % SW) + 0.5f;
    at[i][1] = (float)(i * 2 % SH) + 0.5f;
  }
  assert_ok(CUJIT_LAUNCH(gpu_function(mod, "sample2d"), CUJIT_DIM3(1), CUJIT_DIM3(N),
                         cujit_texture(t), cujit_in(at, sizeof at), cujit_out(out, sizeof out),
                         cujit_i32(N)));
  for (i = 0; i < N; i++)
    assert_true(out[i] == 3.0f * ((float)(i * 3 % SW) + 100.0f * (float)(i * 2 % SH)));
  /* host data written into the array replaces what the kernels wrote */
  memset(host, 0, sizeof host);
  assert_ok(cujit_cuarray_write(arr, host));
  assert_ok(cujit_cuarray_read(arr, host));
  assert_true(host[SH - 1][SW - 1] == 0.0f);
  assert_ok(cujit_texture_destroy(t));
  assert_ok(cujit_surface_destroy(s));
  assert_ok(cujit_cuarray_destroy(arr));
}

GPU_GROUP_MAIN(kSrc, "texture.cu", NULL, cmocka_unit_test(linear_fetch),
               cmocka_unit_test(pitched_linear_filter_clamp),
               cmocka_unit_test(pitched_memory_against_the_device),
               cmocka_unit_test(array_normalized_wrap),
               cmocka_unit_test(array_of_uchar4_normalized),
               cmocka_unit_test(arrays_against_the_device),
               cmocka_unit_test(surface_written_then_read_back))

/* test_texture - texture and surface objects without a device: descriptors that grow, the
 * checks of formats, sampling modes, pitches and sizes against limits given here, and
 * every call failing with CUJIT_ERROR_NO_DRIVER (bad arguments with
 * CUJIT_ERROR_INVALID_VALUE first) when there is no driver. The driver path is forced to a
 * missing file, so this runs the same on machines with and without a GPU. */
#include "typestest.h"
#include "launch/launch.h"
#include "call/signature.h"
#include "launch/texture.h"

/* An H100-like device. */
static const cj_tex_limits kLim = {512,
                                   32,
                                   1u << 27,
                                   {131072, 65000, 2097120},
                                   {{131072, 0, 0}, {131072, 65536, 0}, {16384, 16384, 16384}},
                                   {{32768, 0, 0}, {131072, 65536, 0}, {16384, 16384, 16384}}};

/* The descriptors' size fields (the rule itself is tested in test_abi): the _INIT macros
 * set them, and a bad one is refused before anything else, naming the macro. */
static void descriptors_grow_without_breaking(void **state) {
  cujit_texture_desc d = CUJIT_TEXTURE_DESC_INIT;
  cujit_cuarray_desc a = CUJIT_CUARRAY_DESC_INIT;
  cujit_cuarray *arr = (cujit_cuarray *)1;
  cujit_texobj tex = 1;
  (void)state;
  assert_int_equal(d.size, sizeof d);
  assert_int_equal(d.address_mode[0] | d.address_mode[1] | d.address_mode[2], 0);
  assert_int_equal(d.filter | d.read_mode | d.normalized_coords, 0);
  assert_true(d.border_color[0] == 0.0f && d.border_color[3] == 0.0f);
  assert_int_equal(a.size, sizeof a);
  assert_int_equal(a.width | a.height | a.depth | a.channels | a.flags | (size_t)a.format, 0);
  d.size = 4;
  assert_status_detail(cujit_texture_from_linear(&tex, 0x10000, 64, CUJIT_FORMAT_F32, 1, &d),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_from_linear: "
                       "cujit_texture_desc.size is 4, smaller than its first version");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_TEXTURE_DESC_INIT"));
  assert_int_equal(tex, 0);
  a.width = 16;
  a.size = (size_t)1 << 40;
  assert_status_detail(cujit_cuarray_create(&arr, &a, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_cuarray_create: cujit_cuarray_desc.size is 1099511627776, more "
                       "than any version of it");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_CUARRAY_DESC_INIT"));
  assert_null(arr);
}

static void formats_and_channels(void **state) {
  (void)state;
  assert_int_equal(cj_tex_format_bytes(CUJIT_FORMAT_F32), 4);
  assert_int_equal(cj_tex_format_bytes(CUJIT_FORMAT_F16), 2);
  assert_int_equal(cj_tex_format_bytes(CUJIT_FORMAT_U8), 1);
  assert_int_equal(cj_tex_format_bytes(CUJIT_FORMAT_I32), 4);
  assert_int_equal(cj_tex_format_bytes(99), 0);
  assert_int_equal(cj_tex_format_bytes(-1), 0);
  assert_ok(cj_texel_check("f", CUJIT_FORMAT_U8, 4));
  assert_status_detail(cj_texel_check("f", 42, 1), CUJIT_ERROR_INVALID_VALUE,
                       "f: format 42 is not a cujit_format");
  assert_status_detail(cj_texel_check("f", CUJIT_FORMAT_F32, 3), CUJIT_ERROR_INVALID_VALUE,
                       "f: 3 channels; textures and arrays have 1, 2 or 4 (pad 3-channel data");
  assert_status_detail(cj_texel_check("f", CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "0 channels");
}

static void sampling_modes_are_checked(void **state) {
  cujit_texture_desc d = CUJIT_TEXTURE_DESC_INIT;
  (void)state;
  assert_ok(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 1));
  d.address_mode[1] = 7;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "f: cujit_texture_desc.address_mode[1] is 7; use one of "
                       "CUJIT_ADDRESS_CLAMP");
  d.address_mode[1] = CUJIT_ADDRESS_WRAP;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "address_mode[1] is wrap, which needs normalized coordinates");
  d.normalized_coords = 1;
  assert_ok(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0));
  d.filter = 2;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_desc.filter is 2");
  d.filter = CUJIT_FILTER_LINEAR;
  assert_ok(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F16, 0));
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_U8, 0), CUJIT_ERROR_INVALID_VALUE,
                       "linear filtering returns floats");
  d.read_mode = CUJIT_READ_NORMALIZED_FLOAT;
  assert_ok(cj_tex_desc_check("f", &d, CUJIT_FORMAT_U8, 0));
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_I32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "CUJIT_READ_NORMALIZED_FLOAT is for 8- and 16-bit integer formats only");
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "CUJIT_READ_NORMALIZED_FLOAT is for 8- and 16-bit");
  d.read_mode = 5;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 0), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_desc.read_mode is 5");
  /* linear memory is read by index */
  d.read_mode = CUJIT_READ_ELEMENT;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 1), CUJIT_ERROR_INVALID_VALUE,
                       "a texture over linear memory is read by element index (tex1Dfetch), "
                       "without normalized coordinates");
  d.normalized_coords = 0;
  assert_status_detail(cj_tex_desc_check("f", &d, CUJIT_FORMAT_F32, 1), CUJIT_ERROR_INVALID_VALUE,
                       "without filtering");
}

static void linear_memory_is_checked(void **state) {
  const CUdeviceptr p = 0x7f0000000000ull;
  (void)state;
  assert_ok(cj_tex_linear_check(&kLim, p, 4096, 4));
  assert_ok(cj_tex_linear_check(NULL, p + 4, 4096, 4)); /* alignment needs the device */
  assert_status_detail(cj_tex_linear_check(NULL, 0, 4096, 4), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_from_linear: dptr is 0");
  assert_status_detail(cj_tex_linear_check(NULL, p, 0, 4), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_from_linear: bytes is 0");
  assert_status_detail(cj_tex_linear_check(NULL, p, 10, 8), CUJIT_ERROR_INVALID_VALUE,
                       "bytes (10) is not a whole number of 8-byte elements");
  assert_status_detail(cj_tex_linear_check(&kLim, p + 256, 4096, 4), CUJIT_ERROR_INVALID_VALUE,
                       "is not a multiple of the device's texture alignment of 512 bytes");
  assert_status_detail(cj_tex_linear_check(&kLim, p, ((size_t)1 << 27) * 4 + 4, 4),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the element count 134217729 exceeds the device's limit of 134217728");
}

static void pitched_memory_is_checked(void **state) {
  const CUdeviceptr p = 0x7f0000000000ull;
  (void)state;
  assert_ok(cj_tex_pitched_check(&kLim, p, 100, 50, 512, 4));
  assert_ok(cj_tex_pitched_check(&kLim, p, 8, 8, 32, 4));
  assert_status_detail(cj_tex_pitched_check(NULL, p, 0, 50, 512, 4), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_from_pitched: width is 0");
  assert_status_detail(cj_tex_pitched_check(NULL, p, 100, 0, 512, 4), CUJIT_ERROR_INVALID_VALUE,
                       "height is 0");
  assert_status_detail(cj_tex_pitched_check(NULL, 0, 100, 5, 512, 4), CUJIT_ERROR_INVALID_VALUE,
                       "dptr is 0");
  assert_status_detail(cj_tex_pitched_check(NULL, p, 100, 50, 396, 4), CUJIT_ERROR_INVALID_VALUE,
                       "pitch (396 bytes) is smaller than a row of 100 elements of 4 bytes");
  assert_status_detail(cj_tex_pitched_check(&kLim, p, 100, 50, 400, 4), CUJIT_ERROR_INVALID_VALUE,
                       "pitch 400 is not a multiple of the device's texture pitch alignment of 32 "
                       "bytes; allocate rows of 416 bytes");
  assert_status_detail(cj_tex_pitched_check(&kLim, p + 64, 100, 50, 416, 4),
                       CUJIT_ERROR_INVALID_VALUE, "texture alignment of 512 bytes");
  assert_status_detail(cj_tex_pitched_check(&kLim, p, 100, 70000, 416, 4),
                       CUJIT_ERROR_INVALID_VALUE,
                       "height 70000 exceeds the device's limit of 65000");
  assert_status_detail(cj_tex_pitched_check(&kLim, p, 140000, 2, 140000 * 4, 4),
                       CUJIT_ERROR_INVALID_VALUE,
                       "width 140000 exceeds the device's limit of 131072");
}

static void array_shapes_are_checked(void **state) {
  cujit_cuarray_desc d = CUJIT_CUARRAY_DESC_INIT;
  (void)state;
  d.channels = 1;
  assert_status_detail(cj_tex_array_desc_check(&d), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_cuarray_create: width is 0");
  d.width = 64;
  assert_ok(cj_tex_array_desc_check(&d));
  d.depth = 4;
  assert_status_detail(cj_tex_array_desc_check(&d), CUJIT_ERROR_INVALID_VALUE,
                       "depth is 4 but height is 0; a 3-D array needs a height");
  d.height = 8;
  assert_ok(cj_tex_array_desc_check(&d));
  assert_ok(cj_tex_array_limits_check(&kLim, &d));
  d.flags = 0x10;
  assert_status_detail(cj_tex_array_desc_check(&d), CUJIT_ERROR_INVALID_VALUE,
                       "flags has unknown bits 0x10");
  d.flags = 0;
  d.channels = 3;
  assert_status_detail(cj_tex_array_desc_check(&d), CUJIT_ERROR_INVALID_VALUE, "3 channels");
  d.channels = 4;
  d.width = d.height = d.depth = (size_t)1 << 30;
  assert_status_detail(cj_tex_array_desc_check(&d), CUJIT_ERROR_INVALID_VALUE,
                       "too large to address");
  d.width = 20000;
  d.height = d.depth = 8;
  assert_status_detail(cj_tex_array_limits_check(&kLim, &d), CUJIT_ERROR_INVALID_VALUE,
                       "width 20000 exceeds the device's limit of 16384 for 3-D textures");
  d.height = d.depth = 0;
  d.width = 100000; /* fits a 1-D texture, not a 1-D surface */
  assert_ok(cj_tex_array_limits_check(&kLim, &d));
  d.flags = CUJIT_CUARRAY_SURFACE;
  assert_status_detail(cj_tex_array_limits_check(&kLim, &d), CUJIT_ERROR_INVALID_VALUE,
                       "width 100000 exceeds the device's limit of 32768 for 1-D surfaces");
  d.width = 10;
  d.height = 70000;
  assert_status_detail(cj_tex_array_limits_check(&kLim, &d), CUJIT_ERROR_INVALID_VALUE,
                       "height 70000 exceeds the device's limit of 65536 for 2-D textures");
}

static void bad_arguments_before_the_driver(void **state) {
  cujit_texobj t = 1;
  cujit_surfobj s = 1;
  cujit_cuarray *a = (cujit_cuarray *)1;
  cujit_texture_desc bad = CUJIT_TEXTURE_DESC_INIT;
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  (void)state;
  assert_status_detail(cujit_texture_from_linear(NULL, 0x1000, 64, CUJIT_FORMAT_F32, 1, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_texture_from_linear: tex is NULL");
  assert_status_detail(cujit_texture_from_linear(&t, 0, 64, CUJIT_FORMAT_F32, 1, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "dptr is 0");
  assert_int_equal(t, 0);
  assert_status_detail(cujit_texture_from_linear(&t, 0x1000, 64, (cujit_format)9, 1, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "format 9 is not a cujit_format");
  bad.filter = CUJIT_FILTER_LINEAR;
  assert_status_detail(cujit_texture_from_linear(&t, 0x1000, 64, CUJIT_FORMAT_F32, 1, &bad),
                       CUJIT_ERROR_INVALID_VALUE, "without filtering");
  assert_status_detail(cujit_texture_from_pitched(&t, 0x1000, 16, 16, 32, CUJIT_FORMAT_F32, 1,
                                                  NULL),
                       CUJIT_ERROR_INVALID_VALUE, "pitch (32 bytes) is smaller than a row");
  assert_status_detail(cujit_texture_from_array(&t, NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_texture_from_array: arr is NULL");
  assert_status_detail(cujit_cuarray_create(&a, NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "desc is NULL");
  assert_null(a);
  assert_status_detail(cujit_cuarray_create(NULL, &ad, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "out is NULL");
  assert_status_detail(cujit_cuarray_create(&a, &ad, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "width is 0");
  assert_status_detail(cujit_surface_from_array(&s, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "arr is NULL");
  assert_status_detail(cujit_cuarray_read(NULL, &t), CUJIT_ERROR_INVALID_VALUE, "arr is NULL");
  assert_status_detail(cujit_cuarray_write(NULL, &t), CUJIT_ERROR_INVALID_VALUE, "arr is NULL");
  /* nothing to do is not an error, and needs no driver */
  assert_ok(cujit_texture_destroy(0));
  assert_ok(cujit_surface_destroy(0));
  assert_ok(cujit_cuarray_destroy(NULL));
  assert_int_equal(cujit_cuarray_bytes(NULL), 0);
  assert_null(cujit_cuarray_handle(NULL));
}

static void valid_calls_need_the_driver(void **state) {
  cujit_texobj t = 1;
  cujit_surfobj s = 1;
  cujit_cuarray *a = (cujit_cuarray *)1;
  cujit_cuarray_desc ad = CUJIT_CUARRAY_DESC_INIT;
  cujit_cuarray fake; /* what cujit_cuarray_create would have made */
  float host[64] = {0};
  (void)state;
  assert_status_detail(cujit_texture_from_linear(&t, 0x1000, 64, CUJIT_FORMAT_F32, 1, NULL),
                       CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  assert_int_equal(t, 0);
  assert_status_detail(cujit_texture_from_pitched(&t, 0x1000, 16, 16, 64, CUJIT_FORMAT_F32, 1,
                                                  NULL),
                       CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  ad.width = 64;
  assert_status_detail(cujit_cuarray_create(&a, &ad, host), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_null(a);
  memset(&fake, 0, sizeof fake);
  fake.d = ad;
  fake.d.channels = 1;
  fake.elem = 4;
  assert_int_equal(cujit_cuarray_bytes(&fake), 256);
  assert_status_detail(cujit_texture_from_array(&t, &fake, NULL), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_surface_from_array(&s, &fake), CUJIT_ERROR_INVALID_VALUE,
                       "the array was made without CUJIT_CUARRAY_SURFACE");
  assert_int_equal(s, 0);
  fake.d.flags = CUJIT_CUARRAY_SURFACE;
  assert_status_detail(cujit_surface_from_array(&s, &fake), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_int_equal(cujit_cuarray_write(&fake, host), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_cuarray_read(&fake, host), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_texture_destroy(5), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_surface_destroy(5), CUJIT_ERROR_NO_DRIVER);
}

static void handles_pass_as_64_bit_values(void **state) {
  cujit_arg t = cujit_texture(0x1234567890ull), s = cujit_surface(7);
  static const size_t sizes[] = {8, 8}; /* (cudaTextureObject_t, cudaSurfaceObject_t) */
  cujit_arg args[2];
  (void)state;
  assert_int_equal(t.size, 8);
  assert_int_equal(t.kind, CUJIT_ARG_VALUE);
  assert_int_equal(t.value.u64, 0x1234567890ull);
  assert_int_equal(s.value.u64, 7);
  args[0] = t;
  args[1] = s;
  assert_ok(cj_launch_check_args("k", 2, sizes, NULL, args, 2));
  args[1] = cujit_u32(7); /* a 32-bit value where a handle goes */
  assert_status_detail(cj_launch_check_args("k", 2, sizes, NULL, args, 2), CUJIT_ERROR_INVALID_ARGS,
                       "parameter 2 expects 8 bytes, but 4 bytes were given");
}

/* The compiler says the handles are unsigned long long: cujit_call and bound pointers take
 * them as u64, and launches take cujit_texture() and cujit_surface() for them, but not a
 * device pointer. */
static void handle_types_read_as_u64(void **state) {
  static const char src[] =
      "__global__ void k(cudaTextureObject_t t, cudaSurfaceObject_t s, float *out, int n) {}\n";
  cujit_module *m = types_compile(src, "t.cu", NULL, NULL, NULL, 0);
  cujit_arg args[4];
  types_kernel k;
  cj_signature *s = NULL;
  (void)state;
  assert_ok(types_read(m, "k", 0, &k));
  types_expect_spelled(&k, "unsigned long long; unsigned long long; float *; int");
  assert_ok(cj_sig_from_ptypes(k.types, k.n, k.offsets, k.sizes, &s));
  assert_string_equal(s->text, "u64 u64 ptr i32");
  cj_sig_free(s);
  args[0] = cujit_texture(5);
  args[1] = cujit_surface(6);
  args[2] = cujit_ptr(0x1000);
  args[3] = cujit_i32(4);
  assert_ok(cj_launch_check_args("k", 4, k.sizes, k.types, args, 4));
  args[0] = cujit_ptr(0x1000);
  assert_status_detail(cj_launch_check_args("k", 4, k.sizes, k.types, args, 4),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'k' is a device pointer (ptr), but parameter 1 is "
                       "'unsigned long long'; use cujit_u64()");
  types_free(&k);
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(descriptors_grow_without_breaking),
      cmocka_unit_test(formats_and_channels),
      cmocka_unit_test(sampling_modes_are_checked),
      cmocka_unit_test(linear_memory_is_checked),
      cmocka_unit_test(pitched_memory_is_checked),
      cmocka_unit_test(array_shapes_are_checked),
      cmocka_unit_test(bad_arguments_before_the_driver),
      cmocka_unit_test(valid_calls_need_the_driver),
      cmocka_unit_test(handles_pass_as_64_bit_values),
      cmocka_unit_test(handle_types_read_as_u64),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

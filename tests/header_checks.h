/* header_checks.h - every macro and inline constructor of cujit.h and cujit_array.h, used
 * and checked, in the part of C11 and C++17 that both compile with -Wall -Wextra
 * -Wpedantic -Werror: test_c11.c and test_cxx.cpp include it, so each form is built as its
 * language expands it (compound literals in C, initializer lists in C++). The includer
 * defines hc_check(ok, what) and calls hc_run(). Values are checked field by field;
 * launches run where a GPU is present (and are checked), and elsewhere must fail with
 * CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE. */
#ifndef CUJIT_HEADER_CHECKS_H
#define CUJIT_HEADER_CHECKS_H

#include <math.h>
#ifndef __cplusplus
#  include <stdbool.h>
#endif
#include <stdint.h>
#include <string.h>

#include "cujit.h"
#include "cujit_array.h"

static void hc_check(int ok, const char *what);

/* ---- versions and statuses ---- */

static void hc_version(void) {
  hc_check(CUJIT_VERSION_NUMBER ==
               CUJIT_VERSION_MAJOR * 10000 + CUJIT_VERSION_MINOR * 100 + CUJIT_VERSION_PATCH,
           "CUJIT_VERSION_NUMBER");
  hc_check(cujit_version() == CUJIT_VERSION_NUMBER, "cujit_version() is the header's");
  hc_check(strcmp(cujit_version_string(), CUJIT_VERSION_STRING) == 0, "CUJIT_VERSION_STRING");
}

static void hc_status_map(void) {
  int n = 0;
#define HC_STATUS_(name, num, msg)                                             \
  hc_check((int)CUJIT_##name == (num) &&                                       \
               strcmp(cujit_status_name(CUJIT_##name), "CUJIT_" #name) == 0 && \
               strcmp(cujit_status_string(CUJIT_##name), (msg)) == 0,          \
           "CUJIT_STATUS_MAP: " #name);                                        \
  n++;
  CUJIT_STATUS_MAP(HC_STATUS_)
#undef HC_STATUS_
  hc_check(n == CUJIT_ERROR_CAPTURE + 1, "CUJIT_STATUS_MAP lists every status");
}

/* ---- sizes and arguments ---- */

static void hc_dim3(void) {
  cujit_dim3 a = CUJIT_DIM3(7), b = CUJIT_DIM3(7, 8), c = CUJIT_DIM3(7, 8, 9);
  hc_check(a.x == 7 && a.y == 1 && a.z == 1, "CUJIT_DIM3(x)");
  hc_check(b.x == 7 && b.y == 8 && b.z == 1, "CUJIT_DIM3(x, y)");
  hc_check(c.x == 7 && c.y == 8 && c.z == 9, "CUJIT_DIM3(x, y, z)");
}

/* A by-value argument holding `size` bytes of *v inside, the rest of its fields empty. */
static int hc_is_value(cujit_arg a, int type, size_t size, const void *v) {
  unsigned char want[sizeof a.value.bytes];
  memset(want, 0, sizeof want);
  if (size) memcpy(want, v, size);
  return a.kind == CUJIT_ARG_VALUE && a.type == type && a.size == size && a.data == NULL &&
         memcmp(a.value.bytes, want, sizeof want) == 0 && a.host == NULL && a.bytes == 0 &&
         a.reserved == 0;
}

typedef struct hc_float4 { /* float4's bytes */
  float x, y, z, w;
} hc_float4;

typedef struct hc_big { /* larger than an argument holds */
  double d[3];
} hc_big;

static void hc_scalars(void) {
  int8_t i8 = -3;
  uint8_t u8 = 250;
  int16_t i16 = -300;
  uint16_t u16 = 60000;
  int32_t i32 = -70000;
  uint32_t u32 = 4000000000u;
  int64_t i64 = -5000000000LL;
  uint64_t u64 = 10000000000ULL;
  float f32 = 1.5f;
  double f64 = -2.25;
  CUdeviceptr p = 0x10000, q = 0x10000 + 24;
  cujit_texobj t = 77;
  cujit_surfobj s = 78;
  hc_float4 v = {1.0f, 2.0f, 3.0f, 4.0f};
  hc_big big = {{1.0, 2.0, 3.0}};
  cujit_arg a;
  hc_check(hc_is_value(cujit_i8(i8), CUJIT_TYPE_I8, 1, &i8), "cujit_i8");
  hc_check(hc_is_value(cujit_u8(u8), CUJIT_TYPE_U8, 1, &u8), "cujit_u8");
  hc_check(hc_is_value(cujit_i16(i16), CUJIT_TYPE_I16, 2, &i16), "cujit_i16");
  hc_check(hc_is_value(cujit_u16(u16), CUJIT_TYPE_U16, 2, &u16), "cujit_u16");
  hc_check(hc_is_value(cujit_i32(i32), CUJIT_TYPE_I32, 4, &i32), "cujit_i32");
  hc_check(hc_is_value(cujit_u32(u32), CUJIT_TYPE_U32, 4, &u32), "cujit_u32");
  hc_check(hc_is_value(cujit_i64(i64), CUJIT_TYPE_I64, 8, &i64), "cujit_i64");
  hc_check(hc_is_value(cujit_u64(u64), CUJIT_TYPE_U64, 8, &u64), "cujit_u64");
  hc_check(hc_is_value(cujit_f32(f32), CUJIT_TYPE_F32, 4, &f32), "cujit_f32");
  hc_check(hc_is_value(cujit_f64(f64), CUJIT_TYPE_F64, 8, &f64), "cujit_f64");
  hc_check(hc_is_value(cujit_ptr(p), CUJIT_TYPE_PTR, 8, &p), "cujit_ptr");
  hc_check(hc_is_value(cujit_ptr_offset(p, 24), CUJIT_TYPE_PTR, 8, &q), "cujit_ptr_offset");
  hc_check(hc_is_value(cujit_texture(t), CUJIT_TYPE_U64, 8, &t), "cujit_texture");
  hc_check(hc_is_value(cujit_surface(s), CUJIT_TYPE_U64, 8, &s), "cujit_surface");
  hc_check(hc_is_value(cujit_value(&v, sizeof v), CUJIT_TYPE_BYTES, 16, &v),
           "cujit_value of 16 bytes is held inside");
  hc_check(hc_is_value(CUJIT_VALUE(v), CUJIT_TYPE_BYTES, 16, &v), "CUJIT_VALUE");
  hc_check(hc_is_value(cujit_value(NULL, 0), CUJIT_TYPE_BYTES, 0, NULL), "cujit_value of 0 bytes");
  a = CUJIT_VALUE(big);
  hc_check(a.kind == CUJIT_ARG_VALUE && a.type == CUJIT_TYPE_BYTES && a.size == sizeof big &&
               a.data == (const void *)&big && a.host == NULL && a.reserved == 0,
           "CUJIT_VALUE of a large struct refers to it");
}

/* Numbers as CUJIT_LAUNCH(), cujit_call() and the generators' macros take them: each a
 * plain value of its own type, the header's own CUJIT_TYPE_PLAIN_ added to its tag. */
static void hc_plain_values(void) {
  const int plain = CUJIT_TYPE_PLAIN_;
  bool b = true;
  signed char sc = -3;
  unsigned char uc = 250;
  short s = -300;
  unsigned short us = 60000;
  int i = -70000;
  unsigned u = 4000000000u;
  long l = -5;
  unsigned long ul = 5;
  long long ll = -5000000000LL;
  unsigned long long ull = 10000000000ULL;
  float f = 1.5f;
  double d = -2.25;
  int64_t l64 = -5;
  uint64_t ul64 = 5;
  int32_t l32 = -5;
  uint32_t ul32 = 5;
  uint8_t one = 1;
  cujit_arg a;
  hc_check(hc_is_value(CUJIT_ARG_(b), CUJIT_TYPE_BOOL + plain, 1, &one), "a bool");
  hc_check(hc_is_value(CUJIT_ARG_(sc), CUJIT_TYPE_I8 + plain, 1, &sc), "a signed char");
  hc_check(hc_is_value(CUJIT_ARG_(uc), CUJIT_TYPE_U8 + plain, 1, &uc), "an unsigned char");
  hc_check(hc_is_value(CUJIT_ARG_((char)'x'),
                       ((char)-1 < 0 ? CUJIT_TYPE_I8 : CUJIT_TYPE_U8) + plain, 1, "x"),
           "a char, of the host's signedness");
  hc_check(hc_is_value(CUJIT_ARG_(s), CUJIT_TYPE_I16 + plain, 2, &s), "a short");
  hc_check(hc_is_value(CUJIT_ARG_(us), CUJIT_TYPE_U16 + plain, 2, &us), "an unsigned short");
  hc_check(hc_is_value(CUJIT_ARG_(i), CUJIT_TYPE_I32 + plain, 4, &i), "an int");
  hc_check(hc_is_value(CUJIT_ARG_(u), CUJIT_TYPE_U32 + plain, 4, &u), "an unsigned");
  hc_check(sizeof l == 8 ? hc_is_value(CUJIT_ARG_(l), CUJIT_TYPE_I64 + plain, 8, &l64)
                         : hc_is_value(CUJIT_ARG_(l), CUJIT_TYPE_I32 + plain, 4, &l32),
           "a long, of the host's width");
  hc_check(sizeof ul == 8 ? hc_is_value(CUJIT_ARG_(ul), CUJIT_TYPE_U64 + plain, 8, &ul64)
                          : hc_is_value(CUJIT_ARG_(ul), CUJIT_TYPE_U32 + plain, 4, &ul32),
           "an unsigned long, of the host's width");
  hc_check(hc_is_value(CUJIT_ARG_(ll), CUJIT_TYPE_I64 + plain, 8, &ll), "a long long");
  hc_check(hc_is_value(CUJIT_ARG_(ull), CUJIT_TYPE_U64 + plain, 8, &ull), "an unsigned long long");
  hc_check(hc_is_value(CUJIT_ARG_(f), CUJIT_TYPE_F32 + plain, 4, &f), "a float");
  hc_check(hc_is_value(CUJIT_ARG_(d), CUJIT_TYPE_F64 + plain, 8, &d), "a double");
  a = CUJIT_ARG_(cujit_u16(7));
  hc_check(a.type == CUJIT_TYPE_U16 && a.size == 2 && a.value.bytes[0] == 7,
           "a cujit_arg passes as it is");
}

/* An In/Out/InOut argument for `bytes` of `host`. */
static int hc_is_buffer(const cujit_arg *a, int kind, const void *host, size_t bytes) {
  return a->kind == kind && a->type == CUJIT_TYPE_PTR && a->size == sizeof(CUdeviceptr) &&
         a->data == NULL && a->host == host && a->bytes == bytes && a->reserved == 0;
}

/* A tagged reference (cujit_arg_ref) to such an argument, read while it lives: in C++ the
 * argument of CUJIT_IN_PTR lives until the end of the full expression, which this call is in. */
static int hc_is_ref(CUdeviceptr r, int kind, const void *host, size_t bytes) {
  const cujit_arg *a = (const cujit_arg *)(uintptr_t)(r & CUJIT_ARG_REF_MASK_);
  return (r >> 48) == CUJIT_ARG_REF_TAG_ && hc_is_buffer(a, kind, host, bytes);
}

static void hc_buffers(void) {
  float h[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  cujit_arg a = cujit_in(h, sizeof h), b = cujit_out(h, 8), c = cujit_inout(h, 12);
  CUdeviceptr r = cujit_arg_ref(&b);
  hc_check(hc_is_buffer(&a, CUJIT_ARG_IN, h, sizeof h), "cujit_in");
  hc_check(hc_is_buffer(&b, CUJIT_ARG_OUT, h, 8), "cujit_out");
  hc_check(hc_is_buffer(&c, CUJIT_ARG_INOUT, h, 12), "cujit_inout");
  hc_check((r >> 48) == CUJIT_ARG_REF_TAG_ && (r & CUJIT_ARG_REF_MASK_) == (uintptr_t)&b,
           "cujit_arg_ref");
  hc_check(hc_is_ref(CUJIT_IN_PTR(h, sizeof h), CUJIT_ARG_IN, h, sizeof h), "CUJIT_IN_PTR");
  hc_check(hc_is_ref(CUJIT_OUT_PTR(h, 4), CUJIT_ARG_OUT, h, 4), "CUJIT_OUT_PTR");
  hc_check(hc_is_ref(CUJIT_INOUT_PTR(h, 8), CUJIT_ARG_INOUT, h, 8), "CUJIT_INOUT_PTR");
}

/* ---- structs that grow: every _INIT macro ---- */

static void hc_inits(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_launch_options l = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_generator_options g = CUJIT_GENERATOR_OPTIONS_INIT;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_function_attrs f = CUJIT_FUNCTION_ATTRS_INIT;
  cujit_texture_desc t = CUJIT_TEXTURE_DESC_INIT;
  cujit_cuarray_desc c = CUJIT_CUARRAY_DESC_INIT;
  hc_check(o.size == sizeof o && !o.arch && !o.include_dirs && !o.defines && !o.nvrtc_options &&
               !o.headers && !o.name_expressions && !o.flags && o.time_limit_s == 0.0 &&
               !o.cancel && !o.cancel_user,
           "CUJIT_OPTIONS_INIT");
  hc_check(l.size == sizeof l && !l.shared_bytes && !l.stream && !l.elapsed_ms && !l.flags &&
               !l.cluster.x && !l.cluster.y && !l.cluster.z,
           "CUJIT_LAUNCH_OPTIONS_INIT");
  hc_check(g.size == sizeof g && !g.name && !g.preamble && !g.loop_prep && !g.after_loop,
           "CUJIT_GENERATOR_OPTIONS_INIT");
  hc_check(s.size == sizeof s && !s.hits && !s.memory_hits && !s.misses && !s.compiles &&
               !s.evictions && !s.entries && !s.bytes,
           "CUJIT_CACHE_STATS_INIT");
  hc_check(f.size == sizeof f && !f.num_regs && !f.static_shared_bytes &&
               !f.max_threads_per_block && !f.local_bytes && !f.const_bytes && !f.ptx_version &&
               !f.binary_version && !f.num_params,
           "CUJIT_FUNCTION_ATTRS_INIT");
  hc_check(t.size == sizeof t && !t.address_mode[0] && !t.address_mode[1] && !t.address_mode[2] &&
               !t.filter && !t.read_mode && !t.normalized_coords && t.border_color[0] == 0.0f &&
               t.border_color[3] == 0.0f,
           "CUJIT_TEXTURE_DESC_INIT");
  hc_check(c.size == sizeof c && !c.width && !c.height && !c.depth && !c.format && !c.channels &&
               !c.flags,
           "CUJIT_CUARRAY_DESC_INIT");
  /* the library takes what they make */
  hc_check(cujit_cache_get_stats(&s) == CUJIT_OK, "cujit_cache_get_stats with its _INIT");
}

/* ---- limits ---- */

static void hc_limits(void) {
  int64_t shape[CUJIT_ARRAY_MAX_DIMS + 1] = {2, 2, 2, 2, 2};
  CUdeviceptr base = 0x10000;
  cujit_array *a = NULL, *b = NULL, *m = NULL;
  hc_check(cujit_array_wrap(&a, CUJIT_TYPE_F32, CUJIT_ARRAY_MAX_DIMS, shape, base) == CUJIT_OK &&
               cujit_array_ndim(a) == CUJIT_ARRAY_MAX_DIMS,
           "an array of CUJIT_ARRAY_MAX_DIMS dimensions");
  hc_check(cujit_array_wrap(&b, CUJIT_TYPE_F32, CUJIT_ARRAY_MAX_DIMS + 1, shape, base) ==
               CUJIT_ERROR_INVALID_VALUE,
           "one dimension more is refused");
  hc_check(hc_is_value(cujit_array_arg(a), CUJIT_TYPE_PTR, 8, &base), "cujit_array_arg");
  hc_check(cujit_array_map(&m, "x", CUJIT_MAP_MAX_ARRAYS + 1, NULL, NULL) ==
                   CUJIT_ERROR_INVALID_VALUE &&
               strstr(cujit_last_error(), "more than") != NULL,
           "CUJIT_MAP_MAX_ARRAYS");
  cujit_array_destroy(a);
}

/* ---- DLPack: cujit_array.h names the structs only; with DLPack's own dlpack.h included
 * too (after cujit_array.h in test_c11.c, before it in test_cxx.cpp) the prototypes take
 * its types as they are ---- */

#ifdef DLPACK_MAJOR_VERSION
static void hc_dlpack(int gpu) {
  DLManagedTensorVersioned *t = NULL;
  DLManagedTensor *legacy = NULL;
  cujit_array *a = NULL;
  int64_t n = 4;
  cujit_status st;
  hc_check(cujit_array_from_dlpack(&a, t, CUJIT_DLPACK_READ_ONLY) == CUJIT_ERROR_INVALID_VALUE &&
               !a,
           "cujit_array_from_dlpack refuses a NULL tensor");
  hc_check(cujit_array_from_dlpack_legacy(&a, legacy, 0) == CUJIT_ERROR_INVALID_VALUE && !a,
           "cujit_array_from_dlpack_legacy refuses a NULL tensor");
  hc_check(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, &n, 0x10000) == CUJIT_OK, "a wrapped array");
  /* a made-up address: no driver to ask, or one that does not know it */
  st = cujit_array_to_dlpack(a, CUJIT_DLPACK_READ_ONLY, &t);
  hc_check(st == (gpu ? CUJIT_ERROR_INVALID_VALUE : CUJIT_ERROR_NO_DRIVER) && !t,
           "cujit_array_to_dlpack of a made-up address");
  cujit_array_destroy(a);
}
#endif

/* ---- launches: every form, on a GPU with its results checked ---- */

static const char hc_source[] =
    "struct pair { float a; int b; };\n"
    "__global__ void mix(float *out, const float *in, signed char i8, unsigned char u8,\n"
    "                    short i16, unsigned short u16, int i32, unsigned u32,\n"
    "                    long long i64, unsigned long long u64, float f32, double f64,\n"
    "                    float4 v, pair p) {\n"
    "  int t = threadIdx.x + blockIdx.x * blockDim.x;\n"
    "  out[t] = in[t] + i8 + u8 + i16 + u16 + i32 + u32 + (float)i64 + (float)u64 + f32\n"
    "           + (float)f64 + v.x + v.w + p.a + p.b;\n"
    "}\n"
    "__global__ void add(float *x, float *y, int n) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) x[i] += y[i];\n"
    "}\n";

typedef struct hc_pair {
  float a;
  int b;
} hc_pair;

/* What a launch returns: success on a GPU; without one the kernel is NULL, which every
 * form refuses first (the macros still expand and run as they do on a GPU). */
static int hc_launched(cujit_status st, int gpu) {
  return gpu ? st == CUJIT_OK : st == CUJIT_ERROR_INVALID_VALUE;
}

static void hc_every_constructor_launched(cujit_function *mix, int gpu) {
  float in[8], out[8];
  hc_float4 v = {1.0f, 0.0f, 0.0f, 2.0f};
  hc_pair p = {0.5f, 3};
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  int i, right = 1;
  for (i = 0; i < 8; i++) in[i] = (float)i, out[i] = -1.0f;
  hc_check(hc_launched(CUJIT_LAUNCH_EX(mix, CUJIT_DIM3(2, 1, 1), CUJIT_DIM3(4), &o,
                                       cujit_out(out, sizeof out), cujit_in(in, sizeof in),
                                       cujit_i8(-1), cujit_u8(2), cujit_i16(-3), cujit_u16(4),
                                       cujit_i32(-5), cujit_u32(6), cujit_i64(-7), cujit_u64(8),
                                       cujit_f32(0.25f), cujit_f64(0.5), CUJIT_VALUE(v),
                                       cujit_value(&p, sizeof p)),
                       gpu),
           "CUJIT_LAUNCH_EX with every constructor");
  if (gpu) {
    for (i = 0; i < 8; i++)
      right = right && fabsf(out[i] - ((float)i + 4.0f + 0.75f + 3.0f + 3.5f)) < 1e-5f;
    hc_check(right, "the kernel saw every argument");
  }
  /* the same values as numbers, each converted to its parameter's type */
  for (i = 0; i < 8; i++) out[i] = -1.0f;
  hc_check(hc_launched(CUJIT_LAUNCH_EX(mix, CUJIT_DIM3(2, 1, 1), CUJIT_DIM3(4), &o,
                                       cujit_out(out, sizeof out), cujit_in(in, sizeof in), -1, 2,
                                       -3, 4, -5.0, 6u, -7, 8, 0.25, 0.5f, CUJIT_VALUE(v),
                                       cujit_value(&p, sizeof p)),
                       gpu),
           "CUJIT_LAUNCH_EX with numbers");
  if (!gpu) return;
  for (i = 0, right = 1; i < 8; i++)
    right = right && fabsf(out[i] - ((float)i + 4.0f + 0.75f + 3.0f + 3.5f)) < 1e-5f;
  hc_check(right, "the kernel saw every number as its parameter's type");
}

static void hc_every_launch_form(cujit_function *add, int gpu) {
  float x[16], y[16], z[16];
  CUdeviceptr dx = 0;
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_arg out = cujit_out(z, sizeof z);
  int i;
  for (i = 0; i < 16; i++) x[i] = y[i] = (float)i, z[i] = 0.0f;
  hc_check(hc_launched(CUJIT_LAUNCH(add, CUJIT_DIM3(1), CUJIT_DIM3(16, 1), cujit_inout(x, sizeof x),
                                    cujit_in(y, sizeof y), cujit_i32(16)),
                       gpu),
           "CUJIT_LAUNCH");
  hc_check(hc_launched(cujit_call(add, CUJIT_DIM3(1), CUJIT_DIM3(16), CUJIT_INOUT_PTR(x, sizeof x),
                                  CUJIT_IN_PTR(y, sizeof y), 16),
                       gpu),
           "cujit_call with CUJIT_INOUT_PTR and CUJIT_IN_PTR");
  hc_check(hc_launched(cujit_call_ex(add, CUJIT_DIM3(1), CUJIT_DIM3(16), &o,
                                     CUJIT_INOUT_PTR(x, sizeof x), CUJIT_IN_PTR(y, sizeof y), 16),
                       gpu),
           "cujit_call_ex");
  hc_check(hc_launched(cujit_call(add, CUJIT_DIM3(1), CUJIT_DIM3(16), cujit_arg_ref(&out),
                                  CUJIT_IN_PTR(y, sizeof y), 0),
                       gpu),
           "cujit_call with cujit_arg_ref");
  hc_check(hc_launched(CUJIT_LAUNCH(add, CUJIT_DIM3(1), CUJIT_DIM3(16), cujit_inout(x, sizeof x),
                                    cujit_in(y, sizeof y), 16),
                       gpu),
           "CUJIT_LAUNCH with a number");
  hc_check(hc_launched(cujit_call(add, CUJIT_DIM3(1), CUJIT_DIM3(16), CUJIT_INOUT_PTR(x, sizeof x),
                                  CUJIT_IN_PTR(y, sizeof y), 16.0),
                       gpu),
           "cujit_call with a double for an int");
  if (!gpu) return;
  hc_check(x[5] == 5.0f * 6.0f, "five additions of y to x");
  hc_check(cujit_mem_alloc(&dx, sizeof y) == CUJIT_OK &&
               cujit_mem_copy_htod(dx, y, sizeof y) == CUJIT_OK,
           "device memory");
  hc_check(CUJIT_LAUNCH(add, CUJIT_DIM3(1), CUJIT_DIM3(8), cujit_ptr(dx),
                        cujit_ptr_offset(dx, 8 * sizeof(float)), cujit_i32(8)) == CUJIT_OK,
           "cujit_ptr and cujit_ptr_offset");
  hc_check(cujit_mem_copy_dtoh(z, dx, sizeof z) == CUJIT_OK && z[1] == 1.0f + 9.0f,
           "device result");
  cujit_mem_free(dx);
}

/* The generators' call macros, with arrays and scalars inline. Without a GPU, device
 * pointers of no device are wrapped: the calls fail once they need the device. */
static int hc_device_refused(cujit_status st, int gpu) {
  return gpu ? st == CUJIT_OK : (st == CUJIT_ERROR_NO_DRIVER || st == CUJIT_ERROR_NO_DEVICE);
}

static void hc_generator_macros(int gpu) {
  cujit_generator_options go = CUJIT_GENERATOR_OPTIONS_INIT;
  cujit_elementwise *k = NULL;
  cujit_reduction *r = NULL;
  cujit_array *x = NULL, *y = NULL, *out = NULL;
  int64_t n = 4;
  float hx[4] = {1, 2, 3, 4}, hy[4] = {0, 0, 0, 0}, scale = 2.0f, result = 0.0f, got = 0.0f;
  go.name = "axpy";
  hc_check(cujit_elementwise_create(&k, "float a, const float *x, float *y", "y[i] += a*x[i]",
                                    &go) == CUJIT_OK,
           "cujit_elementwise_create");
  hc_check(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "s*x[i]*y[i]",
                                  "float s, const float *x, const float *y", NULL) == CUJIT_OK,
           "cujit_reduction_create");
  if (gpu)
    hc_check(cujit_array_from_host(&x, CUJIT_TYPE_F32, 1, &n, hx) == CUJIT_OK &&
                 cujit_array_from_host(&y, CUJIT_TYPE_F32, 1, &n, hy) == CUJIT_OK,
             "arrays");
  else
    hc_check(cujit_array_wrap(&x, CUJIT_TYPE_F32, 1, &n, 0x10000) == CUJIT_OK &&
                 cujit_array_wrap(&y, CUJIT_TYPE_F32, 1, &n, 0x20000) == CUJIT_OK,
             "wrapped arrays");
  hc_check(hc_device_refused(CUJIT_ELEMENTWISE(k, scale, x, y), gpu), "CUJIT_ELEMENTWISE");
  hc_check(hc_device_refused(CUJIT_REDUCTION(r, &out, 2.0, x, y), gpu), "CUJIT_REDUCTION");
  hc_check(hc_device_refused(CUJIT_REDUCTION_HOST(r, &result, 2, x, y), gpu),
           "CUJIT_REDUCTION_HOST");
  /* every kind of C value the macros take, and the constructors, compile and convert (an
   * empty range: refused only for want of a device) */
  hc_check(hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (char)2, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (signed char)2, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (unsigned char)2, x, y),
                                 gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (short)2, cujit_arr(x), y),
                                 gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (unsigned short)2, x, y),
                                 gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, 2u, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, 2L, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, 2UL, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, 2LL, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, 2ULL, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, (bool)1, x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, cujit_bool(1), x, y), gpu) &&
               hc_device_refused(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, cujit_f32(2), x,
                                                         (const cujit_array *)y),
                                 gpu),
           "the generators' macros take each C type");
  hc_check(CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, cujit_c64(1, 1), x, y) ==
                   CUJIT_ERROR_INVALID_VALUE &&
               CUJIT_ELEMENTWISE_RANGE(k, 0, 0, 1, cujit_c128(1, 0), x, y) ==
                   CUJIT_ERROR_INVALID_VALUE,
           "cujit_c64 and cujit_c128 are complex");
  if (gpu) { /* y = 2x, so the sum of 2 * x * y is 4 * (1 + 4 + 9 + 16) */
    hc_check(cujit_array_read(y, hy, sizeof hy) == CUJIT_OK && hy[3] == 8.0f, "elementwise result");
    hc_check(cujit_array_read(out, &got, sizeof got) == CUJIT_OK && got == 120.0f, "0-d result");
    hc_check(result == 120.0f, "host result");
  }
  cujit_elementwise_destroy(k);
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(out);
}

/* Everything above. */
/* ---- the error mode: every status-returning call is also a macro of its name ---- */

static int hc_raised;
static char hc_raised_call[64];

static void hc_on_error(cujit_status status, const char *call, const char *detail, void *user) {
  (void)status, (void)detail;
  ++*(int *)user;
  strncpy(hc_raised_call, call, sizeof hc_raised_call - 1);
}

static void hc_error_mode(int gpu) {
  cujit_module *m = NULL;
  cujit_dim3 one = CUJIT_DIM3(1);
  cujit_status (*launch)(const cujit_function *, cujit_dim3, cujit_dim3, const cujit_arg *, size_t,
                         const cujit_launch_options *) = &cujit_launch;
  cujit_status (*sync)(void) = cujit_synchronize;
  cujit_error_set_handler(hc_on_error, &hc_raised);
  hc_check(cujit_module_from_source(&m, NULL, "none.cu", NULL) == CUJIT_ERROR_INVALID_SOURCE &&
               hc_raised == 1 && strcmp(hc_raised_call, "cujit_module_from_source") == 0,
           "the error mode: a failing call calls the handler with its name");
  hc_check(CUJIT_LAUNCH(NULL, one, one, cujit_i32(1)) == CUJIT_ERROR_INVALID_VALUE &&
               hc_raised == 2 && strcmp(hc_raised_call, "cujit_launch") == 0,
           "the error mode: CUJIT_LAUNCH is cujit_launch");
  hc_check(cujit_call(NULL, one, one, 1) == CUJIT_ERROR_INVALID_VALUE && hc_raised == 3 &&
               strcmp(hc_raised_call, "cujit_call") == 0,
           "the error mode: cujit_call");
  /* a pointer to the function, and the name in parentheses, are the function itself */
  hc_check(launch(NULL, one, one, NULL, 0, NULL) == CUJIT_ERROR_INVALID_VALUE &&
               (cujit_module_from_source)(&m, "", "none.cu", NULL) == CUJIT_ERROR_INVALID_SOURCE &&
               hc_raised == 3,
           "the error mode: pointers and parenthesised names skip the handler");
  hc_check((cujit_synchronize() == CUJIT_OK) == gpu && sync() == cujit_synchronize(),
           "the error mode: a call without arguments");
  cujit_error_set_handler(NULL, NULL);
  hc_check(m == NULL, "no module");
}

static void hc_run(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  cujit_function *mix = NULL, *add = NULL;
  int devices = 0, gpu;
  gpu = cujit_device_get_count(&devices) == CUJIT_OK && devices > 0;
  hc_version();
  hc_status_map();
  hc_dim3();
  hc_scalars();
  hc_plain_values();
  hc_buffers();
  hc_inits();
  hc_limits();
  o.arch = gpu ? NULL : "compute_75";
  hc_check(cujit_module_from_source(&m, hc_source, "header.cu", &o) == CUJIT_OK, "compile");
  if (gpu)
    hc_check(cujit_module_get_function(m, "mix", &mix) == CUJIT_OK &&
                 cujit_module_get_function(m, "add", &add) == CUJIT_OK,
             "kernels");
  hc_every_constructor_launched(mix, gpu);
  hc_every_launch_form(add, gpu);
  hc_generator_macros(gpu);
  hc_error_mode(gpu);
#ifdef DLPACK_MAJOR_VERSION
  hc_dlpack(gpu);
#endif
  cujit_module_destroy(m);
}

#endif

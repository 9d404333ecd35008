/* scalar.c - the one table of scalar types, by cujit_type tag: their short names, C
 * spellings, sizes, kinds (and the questions every layer asks of them: integer, floating,
 * 16-bit, complex) and the constructors that make arguments of them; and rounding to the
 * 16-bit floats. Each layer keeps its own further facts (libffi types, promotion)
 * keyed by the same tag. */
#include <math.h>
#include <string.h>

#include "common/common.h"

#define CJ_ALSO(...) \
  { __VA_ARGS__, NULL }

static const cj_scalar scalars[] = {
    [CUJIT_TYPE_BYTES] = {"bytes",
                          NULL,
                          NULL,
                          "a value given by its bytes",
                          "CUJIT_VALUE()",
                          CJ_SCALAR_SIZE_BYTES,
                          CJ_SCALAR_ALIGN_BYTES,
                          CJ_SK_BYTES,
                          {NULL}},
    [CUJIT_TYPE_BOOL] = {"b8",
                         "bool",
                         NULL,
                         "a bool",
                         "cujit_u8()",
                         CJ_SCALAR_SIZE_BOOL,
                         CJ_SCALAR_ALIGN_BOOL,
                         CJ_SK_BOOL,
                         {NULL}},
    [CUJIT_TYPE_I8] = {"i8", "signed char", NULL, "a signed char (i8)", "cujit_i8()",
                       CJ_SCALAR_SIZE_I8, CJ_SCALAR_ALIGN_I8, CJ_SK_SIGNED,
                       CJ_ALSO("char", "int8_t")},
    [CUJIT_TYPE_U8] = {"u8", "unsigned char", NULL, "an unsigned char (u8)", "cujit_u8()",
                       CJ_SCALAR_SIZE_U8, CJ_SCALAR_ALIGN_U8, CJ_SK_UNSIGNED, CJ_ALSO("uint8_t")},
    [CUJIT_TYPE_I16] = {"i16", "short", NULL, "a short (i16)", "cujit_i16()", CJ_SCALAR_SIZE_I16,
                        CJ_SCALAR_ALIGN_I16, CJ_SK_SIGNED, CJ_ALSO("short int", "int16_t")},
    [CUJIT_TYPE_U16] = {"u16", "unsigned short", NULL, "an unsigned short (u16)", "cujit_u16()",
                        CJ_SCALAR_SIZE_U16, CJ_SCALAR_ALIGN_U16, CJ_SK_UNSIGNED,
                        CJ_ALSO("unsigned short int", "uint16_t")},
    [CUJIT_TYPE_I32] = {"i32", "int", NULL, "an int (i32)", "cujit_i32()", CJ_SCALAR_SIZE_I32,
                        CJ_SCALAR_ALIGN_I32, CJ_SK_SIGNED,
                        CJ_ALSO("signed", "signed int", "int32_t")},
    [CUJIT_TYPE_U32] = {"u32", "unsigned int", NULL, "an unsigned int (u32)", "cujit_u32()",
                        CJ_SCALAR_SIZE_U32, CJ_SCALAR_ALIGN_U32, CJ_SK_UNSIGNED,
                        CJ_ALSO("unsigned", "uint32_t")},
    [CUJIT_TYPE_I64] = {"i64", "long long", NULL, "a long long (i64)", "cujit_i64()",
                        CJ_SCALAR_SIZE_I64, CJ_SCALAR_ALIGN_I64, CJ_SK_SIGNED,
                        CJ_ALSO("long", "long int", "long long int", "int64_t", "ptrdiff_t")},
    [CUJIT_TYPE_U64] = {"u64", "unsigned long long", NULL, "an unsigned long long (u64)",
                        "cujit_u64()", CJ_SCALAR_SIZE_U64, CJ_SCALAR_ALIGN_U64, CJ_SK_UNSIGNED,
                        CJ_ALSO("unsigned long", "unsigned long int", "unsigned long long int",
                                "uint64_t", "size_t")},
    [CUJIT_TYPE_F16] = {"f16", "__half", "cuda_fp16.h", "a __half (f16)",
                        "cujit_value() of the __half's bits", CJ_SCALAR_SIZE_F16,
                        CJ_SCALAR_ALIGN_F16, CJ_SK_FLOAT, CJ_ALSO("half")},
    [CUJIT_TYPE_BF16] = {"bf16",
                         "__nv_bfloat16",
                         "cuda_bf16.h",
                         "a __nv_bfloat16 (bf16)",
                         "cujit_value() of the __nv_bfloat16's bits",
                         CJ_SCALAR_SIZE_BF16,
                         CJ_SCALAR_ALIGN_BF16,
                         CJ_SK_FLOAT,
                         {NULL}},
    [CUJIT_TYPE_F32] = {"f32",
                        "float",
                        NULL,
                        "a float (f32)",
                        "cujit_f32()",
                        CJ_SCALAR_SIZE_F32,
                        CJ_SCALAR_ALIGN_F32,
                        CJ_SK_FLOAT,
                        {NULL}},
    [CUJIT_TYPE_F64] = {"f64",
                        "double",
                        NULL,
                        "a double (f64)",
                        "cujit_f64()",
                        CJ_SCALAR_SIZE_F64,
                        CJ_SCALAR_ALIGN_F64,
                        CJ_SK_FLOAT,
                        {NULL}},
    [CUJIT_TYPE_C64] = {"c64", "cuda::std::complex<float>", "cuda/std/complex",
                        "a complex float (c64)", "CUJIT_VALUE()", CJ_SCALAR_SIZE_C64,
                        CJ_SCALAR_ALIGN_C64, CJ_SK_COMPLEX, CJ_ALSO("complex<float>")},
    [CUJIT_TYPE_C128] = {"c128", "cuda::std::complex<double>", "cuda/std/complex",
                         "a complex double (c128)", "CUJIT_VALUE()", CJ_SCALAR_SIZE_C128,
                         CJ_SCALAR_ALIGN_C128, CJ_SK_COMPLEX, CJ_ALSO("complex<double>")},
    [CUJIT_TYPE_PTR] = {"ptr",
                        NULL,
                        NULL,
                        "a device pointer (ptr)",
                        "cujit_ptr() or an In/Out buffer",
                        CJ_SCALAR_SIZE_PTR,
                        CJ_SCALAR_ALIGN_PTR,
                        CJ_SK_POINTER,
                        {NULL}},
};

const cj_scalar *cj_scalar_of(int type) {
  if (type >= CUJIT_TYPE_PLAIN_ && type < 2 * CUJIT_TYPE_PLAIN_) type -= CUJIT_TYPE_PLAIN_;
  if (type < 0 || (size_t)type >= CJ_COUNT(scalars)) return NULL;
  return &scalars[type];
}

static int kind_of(int type) {
  const cj_scalar *s = cj_scalar_of(type);
  return s ? s->kind : -1;
}

int cj_scalar_is_int(int type) {
  int k = kind_of(type);
  return k == CJ_SK_BOOL || k == CJ_SK_SIGNED || k == CJ_SK_UNSIGNED;
}
int cj_scalar_is_float(int type) { return kind_of(type) == CJ_SK_FLOAT; }
int cj_scalar_is_half(int type) {
  return cj_scalar_is_float(type) && cj_scalar_of(type)->size == 2;
}
int cj_scalar_is_complex(int type) { return kind_of(type) == CJ_SK_COMPLEX; }

int cj_scalar_by_spelling(const char *text) {
  size_t t, i;
  for (t = 0; t < CJ_COUNT(scalars); t++) {
    const cj_scalar *s = &scalars[t];
    if (s->c_name && strcmp(s->c_name, text) == 0) return (int)t;
    for (i = 0; i < CJ_COUNT(s->also) && s->also[i]; i++)
      if (strcmp(s->also[i], text) == 0) return (int)t;
  }
  return -1;
}

/* ---- the 16-bit floats ---- */

/* Rounds a finite non-negative value to a binary format with `mbits` stored mantissa bits
 * and smallest normal exponent `emin`, to nearest with ties to even, in one rounding.
 * Subnormals share the smallest normals' quantum, so one formula covers both. */
static uint16_t round_binary(double a, int mbits, int emin, uint32_t inf) {
  int e;
  uint32_t bits;
  if (a == 0) return 0;
  (void)frexp(a, &e);
  e -= 1; /* a = 1.f * 2^e */
  if (e < emin) e = emin;
  if (e > 1024) e = 1024;
  bits = ((uint32_t)(e - emin) << mbits) + (uint32_t)rint(ldexp(a, mbits - e));
  return (uint16_t)(bits >= inf ? inf : bits);
}

static uint16_t to_small_float(double d, int mbits, int emin, uint32_t inf) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  if (isnan(d)) return (uint16_t)(sign | inf | (1u << (mbits - 1)));
  if (isinf(d)) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | round_binary(fabs(d), mbits, emin, inf));
}

uint16_t cj_f16_bits(double d) { return to_small_float(d, 10, -14, 0x7c00); }
uint16_t cj_bf16_bits(double d) { return to_small_float(d, 7, -126, 0x7f80); }

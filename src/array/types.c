/* types.c - the element types arrays hold, as CUDA C spells them. */
#include "array/array.h"

static const cj_elem elems[] = {
    [CUJIT_TYPE_BOOL] = {1, "bool", NULL, "b8"},
    [CUJIT_TYPE_I8] = {1, "signed char", NULL, "i8"},
    [CUJIT_TYPE_U8] = {1, "unsigned char", NULL, "u8"},
    [CUJIT_TYPE_I16] = {2, "short", NULL, "i16"},
    [CUJIT_TYPE_U16] = {2, "unsigned short", NULL, "u16"},
    [CUJIT_TYPE_I32] = {4, "int", NULL, "i32"},
    [CUJIT_TYPE_U32] = {4, "unsigned", NULL, "u32"},
    [CUJIT_TYPE_I64] = {8, "long long", NULL, "i64"},
    [CUJIT_TYPE_U64] = {8, "unsigned long long", NULL, "u64"},
    [CUJIT_TYPE_F16] = {2, "__half", "cuda_fp16.h", "f16"},
    [CUJIT_TYPE_BF16] = {2, "__nv_bfloat16", "cuda_bf16.h", "bf16"},
    [CUJIT_TYPE_F32] = {4, "float", NULL, "f32"},
    [CUJIT_TYPE_F64] = {8, "double", NULL, "f64"},
    [CUJIT_TYPE_C64] = {8, "cuda::std::complex<float>", "cuda/std/complex", "c64"},
    [CUJIT_TYPE_C128] = {16, "cuda::std::complex<double>", "cuda/std/complex", "c128"},
};

const cj_elem *cj_elem_of(int type) {
  if (type < 0 || (size_t)type >= CJ_COUNT(elems) || !elems[type].size) return NULL;
  return &elems[type];
}

size_t cujit_type_size(cujit_type type) {
  static const size_t arg_sizes[] = {[CUJIT_TYPE_PTR] = sizeof(CUdeviceptr)};
  const cj_elem *e = cj_elem_of(type);
  if (e) return e->size;
  return (size_t)type < CJ_COUNT(arg_sizes) ? arg_sizes[type] : 0;
}

static int is_complex(int t) { return t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128; }
static int is_half(int t) { return t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16; }

void cj_array_convert(cj_buf *b, int from, int to, const char *x) {
  if (from == to) {
    cj_buf_printf(b, "(%s)", x);
  } else if (is_complex(to)) {
    if (is_complex(from)) {
      cj_buf_printf(b, "%s((%s).real(), (%s).imag())", cj_elem_of(to)->c_name, x, x);
    } else {
      cj_buf_printf(b, "%s(", cj_elem_of(to)->c_name);
      cj_array_convert(b, from, to == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, x);
      cj_buf_puts(b, ")");
    }
  } else if (is_complex(from) && to == CUJIT_TYPE_BOOL) { /* as C: either part nonzero */
    cj_buf_printf(b, "((%s).real() != 0 || (%s).imag() != 0)", x, x);
  } else if (is_complex(from)) {
    cj_buf real_part = {0};
    cj_buf_printf(&real_part, "(%s).real()", x);
    cj_array_convert(b, from == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, to,
                     real_part.data ? real_part.data : "0");
    cj_buf_free(&real_part);
  } else if (is_half(from)) {
    cj_buf_printf(b, "static_cast<%s>((float)(%s))", cj_elem_of(to)->c_name, x);
  } else if (is_half(to) && (cj_elem_of(from)->size > 2 && from != CUJIT_TYPE_F32)) {
    /* from double or a wide integer: one rounding, not two through float */
    cj_buf_printf(b, "%s((double)(%s))", to == CUJIT_TYPE_F16 ? "__double2half" : "__double2bfloat16",
                  x);
  } else if (is_half(to)) {
    cj_buf_printf(b, "%s((float)(%s))", cj_elem_of(to)->c_name, x);
  } else {
    cj_buf_printf(b, "static_cast<%s>(%s)", cj_elem_of(to)->c_name, x);
  }
}

/* types.c - the element types arrays hold (common/scalar.c's table, less bytes and
 * pointers), and converting between them in CUDA C. */
#include "array/array.h"

const cj_elem *cj_elem_of(int type) {
  const cj_scalar *s = cj_scalar_of(type);
  return s && s->kind != CJ_SK_BYTES && s->kind != CJ_SK_POINTER ? s : NULL;
}

size_t cujit_type_size(cujit_type type) {
  const cj_scalar *s = cj_scalar_of(type);
  return s ? s->size : 0;
}

void cj_array_convert(cj_buf *b, int from, int to, const char *x) {
  if (from == to) {
    cj_buf_printf(b, "(%s)", x);
  } else if (cj_scalar_is_complex(to)) {
    if (cj_scalar_is_complex(from)) {
      cj_buf_printf(b, "%s((%s).real(), (%s).imag())", cj_elem_of(to)->c_name, x, x);
    } else {
      cj_buf_printf(b, "%s(", cj_elem_of(to)->c_name);
      cj_array_convert(b, from, to == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, x);
      cj_buf_puts(b, ")");
    }
  } else if (cj_scalar_is_complex(from) && to == CUJIT_TYPE_BOOL) { /* as C: either part nonzero */
    cj_buf_printf(b, "((%s).real() != 0 || (%s).imag() != 0)", x, x);
  } else if (cj_scalar_is_complex(from)) {
    cj_buf real_part = {0};
    cj_buf_printf(&real_part, "(%s).real()", x);
    cj_array_convert(b, from == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32, to,
                     real_part.data ? real_part.data : "0");
    cj_buf_free(&real_part);
  } else if (cj_scalar_is_half(from)) {
    cj_buf_printf(b, "static_cast<%s>((float)(%s))", cj_elem_of(to)->c_name, x);
  } else if (cj_scalar_is_half(to) && (cj_elem_of(from)->size > 2 && from != CUJIT_TYPE_F32)) {
    /* from double or a wide integer: one rounding, not two through float */
    cj_buf_printf(b, "%s((double)(%s))",
                  to == CUJIT_TYPE_F16 ? "__double2half" : "__double2bfloat16", x);
  } else if (cj_scalar_is_half(to)) {
    cj_buf_printf(b, "%s((float)(%s))", cj_elem_of(to)->c_name, x);
  } else {
    cj_buf_printf(b, "static_cast<%s>(%s)", cj_elem_of(to)->c_name, x);
  }
}

/* mangle.h - a kernel's parameter types read from its Itanium-mangled symbol, which spells
 * them exactly as the compiler saw them: builtin types, pointers, qualifiers, nested and
 * template names, substitutions, function types. The decoder reads any bytes safely and
 * never past the length it is given. Needs no device. */
#ifndef CUJIT_MANGLE_H
#define CUJIT_MANGLE_H

#include <stdint.h>

#include "common/common.h"

/* What a parameter's type is, as far as calls and launches care. The scalar classes come
 * in one block, from CJ_MC_BOOL to CJ_MC_F64. */
typedef enum cj_mclass {
  CJ_MC_OTHER = 0, /* references, member pointers, __int128, long double, vendor types... */
  CJ_MC_BOOL,
  CJ_MC_I8, /* char, signed char */
  CJ_MC_U8,
  CJ_MC_I16,
  CJ_MC_U16,
  CJ_MC_I32,
  CJ_MC_U32,
  CJ_MC_I64, /* long (64-bit on the targets cujit supports), long long */
  CJ_MC_U64,
  CJ_MC_F16,  /* __half, _Float16 */
  CJ_MC_BF16, /* __nv_bfloat16 */
  CJ_MC_F32,
  CJ_MC_F64,
  CJ_MC_PTR,    /* a pointer to anything (functions too), std::nullptr_t */
  CJ_MC_VECTOR, /* a CUDA vector type: `lanes` lanes of class `elem` (float4, __half2) */
  CJ_MC_NAMED   /* any other class, struct, union or enum: known by its name only */
} cj_mclass;

/* One parameter. */
typedef struct cj_mparam {
  uint8_t cls;    /* cj_mclass */
  uint8_t elem;   /* CJ_MC_VECTOR: a lane's class */
  uint8_t lanes;  /* CJ_MC_VECTOR: 1 to 4 */
  uint8_t align;  /* CJ_MC_VECTOR: the alignment its name states (double4_32a: 32), else 0 */
  char *spelling; /* the C type: "const float *", "ns::P", "Vec<float>", "void (*)(int)" */
} cj_mparam;

typedef struct cj_mparams {
  size_t n;
  cj_mparam *v;
} cj_mparams;

/* 1 when `sym` is an Itanium-mangled name ("_Z..."); extern "C" kernels' are not. */
int cj_mangled(const char *sym);

/* The parameter types of the function whose symbol is sym[0..len), e.g.
 * "_Z13multiply_themPfS_S_" -> float *, float *, float *. A template instance's template
 * parameters are replaced by its arguments ("_Z5scaleIfEvPT_S0_" -> float *, float).
 * Returns CUJIT_OK with *out owned by the caller (cj_mparams_free); CUJIT_ERROR_SIGNATURE
 * saying at which offset and what could not be read; CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_mangle_params(const char *sym, size_t len, cj_mparams *out);

/* For a probe, a function template `probe` instantiated with a pointer to a function type
 * (`probe<decltype(&kernel)>`): the parameter types of that function type, read from the
 * instance's symbol sym[0..len). Returns as cj_mangle_params(). */
cujit_status cj_mangle_probe_params(const char *sym, size_t len, const char *probe,
                                    cj_mparams *out);

void cj_mparams_free(cj_mparams *p);

#endif

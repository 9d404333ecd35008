/* test_types - kernels' parameter types as the compiler gives them, without a GPU: read
 * from C++ kernels' mangled symbols and, for extern "C" kernels, from the probe compiled
 * through the caches. Preprocessor branches, -D defines, namespaces, templates, headers in
 * memory and in the toolkit, vector types, half and bfloat16 all come out as NVRTC saw
 * them; and for every kernel here the types agree with the PTX's parameter widths. */
#include <time.h>
#include <unistd.h>

#include "typestest.h"
#include "kernelsrc.h"
#include "call/signature.h"

#ifdef CUJIT_FAULT_INJECTION
void cujit_test_fail_alloc_after(long n);
long cujit_test_alloc_countdown(void);
#endif

/* Reads kernel `name` and compares its spellings and its signature's type string. */
static void expect_types(cujit_module *m, const char *name, const char *spelled, const char *sig) {
  types_kernel k;
  cj_signature *s = NULL;
  cujit_status st = types_read(m, name, 1, &k);
  if (st != CUJIT_OK) fail_msg("%s: %s", name, cujit_last_error());
  types_expect_spelled(&k, spelled);
  assert_ok(cj_sig_from_ptypes(k.types, k.n, k.offsets, k.sizes, &s));
  if (strcmp(s->text, sig) != 0)
    fail_msg("%s: signature \"%s\", wanted \"%s\"", name, s->text, sig);
  cj_sig_free(s);
  types_free(&k);
}

/* ---- what a second C parser misread ---- */

static const char kIfdef[] = "#ifdef USE_INT\n"
                             "typedef int real;\n"
                             "#else\n"
                             "typedef float real;\n"
                             "#endif\n"
                             "__global__ void k(real *a, real s, unsigned n) {}\n"
                             "extern \"C\" __global__ void ck(real s, unsigned n) {}\n";

static void preprocessor_branches_and_defines(void **state) {
  const char *use_int[] = {"USE_INT", NULL};
  const char *t_double[] = {"REAL=double", NULL};
  static const char elif[] =
      "#if 1\ntypedef double real;\n#elif 1\ntypedef int real;\n#else\ntypedef char real;\n"
      "#endif\n#if 0\n__global__ void k(int x, int n) {}\n#else\n"
      "__global__ void k(real x, unsigned n) {}\n#endif\n";
  cujit_module *m = types_compile(kIfdef, "ifdef.cu", NULL, NULL, NULL, 0);
  (void)state;
  expect_types(m, "k", "float *; float; unsigned int", "ptr f32 u32");
  expect_types(m, "ck", "float; unsigned int", "f32 u32");
  cujit_module_destroy(m);
  /* the define takes the other branch, for the probe of the extern "C" kernel too */
  m = types_compile(kIfdef, "ifdef.cu", use_int, NULL, NULL, 0);
  expect_types(m, "k", "int *; int; unsigned int", "ptr i32 u32");
  expect_types(m, "ck", "int; unsigned int", "i32 u32");
  cujit_module_destroy(m);
  m = types_compile(elif, "elif.cu", NULL, NULL, NULL, 0);
  expect_types(m, "k", "double; unsigned int", "f64 u32");
  cujit_module_destroy(m);
  m = types_compile("__global__ void k(REAL x, const REAL *y) {}\n", "define.cu", t_double, NULL,
                    NULL, 0);
  expect_types(m, "k", "double; const double *", "f64 ptr");
  cujit_module_destroy(m);
}

static void same_names_in_two_namespaces(void **state) {
  static const char src[] =
      "namespace a { struct S { char c; }; }\n"
      "namespace b { struct S { double d[2]; }; __global__ void k(S s, a::S t) {} }\n"
      "__global__ void k2(a::S t, b::S s, const a::S *p) {}\n";
  cujit_module *m = types_compile(src, "ns.cu", NULL, NULL, NULL, 0);
  (void)state;
  expect_types(m, "b::k", "b::S; a::S", "b16:8 b1");
  expect_types(m, "k2", "a::S; b::S; const a::S *", "b1 b16:8 ptr");
  cujit_module_destroy(m);
}

/* ---- what it refused ---- */

static void templates(void **state) {
  static const char src[] =
      "template <typename T> struct Vec { T x, y; };\n"
      "template <typename T> __global__ void scale(T *x, T s) {}\n"
      "template <typename A, typename B> __global__ void pair(A a, B *b, const A *c) {}\n"
      "template <typename T> __global__ void vk(Vec<T> v, T *out, Vec<T> *w) {}\n"
      "template <int N> __global__ void fixed(float (*a)[N], int n) {}\n"
      "template <typename... Ts> __global__ void many(int n, Ts... xs) {}\n"
      "namespace ns { template <typename T> __global__ void nested(T t, T *p) {} }\n";
  const char *exprs[] =
      {"scale<float>", "scale<unsigned char>",        "pair<int, double>",     "vk<float>",
       "fixed<4>",     "many<float, double *, char>", "ns::nested<long long>", NULL};
  cujit_module *m = types_compile(src, "templates.cu", NULL, exprs, NULL, 0);
  (void)state;
  expect_types(m, "scale<float>", "float *; float", "ptr f32");
  expect_types(m, "scale<unsigned char>", "unsigned char *; unsigned char", "ptr u8");
  expect_types(m, "pair<int, double>", "int; double *; const int *", "i32 ptr ptr");
  expect_types(m, "vk<float>", "Vec<float>; float *; Vec<float> *", "b8:4 ptr ptr");
  expect_types(m, "fixed<4>", "float (*)[4]; int", "ptr i32");
  expect_types(m, "many<float, double *, char>", "int; float; double *; char", "i32 f32 ptr i8");
  expect_types(m, "ns::nested<long long>", "long long; long long *", "i64 ptr");
  cujit_module_destroy(m);
}

static void types_from_headers(void **state) {
  static const cujit_header headers[] =
      {{"mytypes.h", "typedef unsigned short idx_t;\nstruct Cfg { float s; int n; };\n"},
       {NULL, NULL}};
  static const char src[] =
      "#include \"mytypes.h\"\n"
      "#include <cuda_fp16.h>\n"
      "#include <cuda_bf16.h>\n"
      "__global__ void k(idx_t i, Cfg c, const Cfg *pc) {}\n"
      "__global__ void h(__half a, half2 b, __nv_bfloat16 c, nv_bfloat162 d, const __half *p,\n"
      "                  half e) {}\n";
  cujit_module *m = types_compile(src, "headers.cu", NULL, NULL, headers, 0);
  (void)state;
  expect_types(m, "k", "unsigned short; Cfg; const Cfg *", "u16 b8:4 ptr");
  expect_types(m, "h", "__half; __half2; __nv_bfloat16; __nv_bfloat162; const __half *; __half",
               "f16 f16x2 bf16 bf16x2 ptr f16");
  cujit_module_destroy(m);
}

static void vector_and_scalar_types(void **state) {
  static const char src[] =
      "enum Mode { MA, MB };\nenum class Small : unsigned char { X };\n"
      "__global__ void v(float4 a, uchar2 b, int3 c, double2 d, longlong4_16a e, char1 f,\n"
      "                  dim3 g, ushort4 h, double4_32a i) {}\n"
      "__global__ void s(char a, signed char b, unsigned char c, short d, unsigned short e,\n"
      "  int f, unsigned g, long h, unsigned long i, long long j, unsigned long long k,\n"
      "  bool l, size_t m, wchar_t n, char16_t o, char32_t p, float q, double r) {}\n"
      "__global__ void e(Mode m, Small s, void (*f)(int), const volatile int *__restrict__ p,\n"
      "                  float **pp) {}\n";
  cujit_module *m = types_compile(src, "vectors.cu", NULL, NULL, NULL, 0);
  (void)state;
  expect_types(m, "v",
               "float4; uchar2; int3; double2; longlong4_16a; char1; dim3; ushort4; "
               "double4_32a",
               "f32x4 u8x2 i32x3 f64x2 i64x4 i8x1 u32x3 u16x4 f64x4:32");
  expect_types(m, "s",
               "char; signed char; unsigned char; short; unsigned short; int; "
               "unsigned int; long; unsigned long; long long; unsigned long long; bool; "
               "unsigned long; wchar_t; char16_t; char32_t; float; double",
               "i8 i8 u8 i16 u16 i32 u32 i64 u64 i64 u64 u8 u64 i32 u16 u32 f32 f64");
  /* an enum is passed as a plain integer: read as one of its size */
  expect_types(m, "e", "Mode; Small; void (*)(int); const volatile int *; float **",
               "i32 i8 ptr ptr ptr");
  cujit_module_destroy(m);
}

/* ---- extern "C" kernels: the probe ---- */

static const char kExternC[] =
    "struct P { float a; int b; double c; };\n"
    "extern \"C\" __global__ void ck(float *a, unsigned n, P p, float4 v, const char *s) {}\n"
    "extern \"C\" __global__ void ck2(long long x) {}\n"
    "extern \"C\" __global__ void ck0() {}\n"
    "__global__ void cpp(int x) {}\n";

static void extern_c_kernels_are_probed(void **state) {
  char src[1024];
  cujit_module *m, *again;
  types_kernel k;
  uint64_t before;
  (void)state;
  /* a source of its own, so that the disk cache of an earlier run does not answer */
  snprintf(src, sizeof src, "// run %ld.%ld\n%s", (long)time(NULL), (long)getpid(), kExternC);
  m = types_compile(src, "externc.cu", NULL, NULL, NULL, 1);
  /* not without a compile */
  assert_status_detail(types_read(m, "ck", 0, &k), CUJIT_ERROR_NOT_FOUND, "extern \"C\"");
  assert_null(k.types);
  types_free(&k);
  before = cj_nvrtc_programs_created();
  expect_types(m, "ck", "float *; unsigned int; P; float4; const char *",
               "ptr u32 b16:8 f32x4 ptr");
  assert_int_equal(cj_nvrtc_programs_created(), before + 1);
  /* one compile answered for every extern "C" kernel of the module */
  expect_types(m, "ck2", "long long", "i64");
  expect_types(m, "ck0", "", "");
  assert_int_equal(cj_nvrtc_programs_created(), before + 1);
  /* the probe went through the caches: another module of the same source asks no NVRTC */
  again = types_compile(src, "externc.cu", NULL, NULL, NULL, 1);
  expect_types(again, "ck2", "long long", "i64");
  assert_int_equal(cj_nvrtc_programs_created(), before + 1);
  cujit_module_destroy(again);
  cujit_module_destroy(m);
}

static void probes_that_cannot_compile(void **state) {
  static const char src[] = "namespace q { extern \"C\" __global__ void nk(int *x) {} }\n"
                            "extern \"C\" __global__ void ok(double d) {}\n";
  cujit_module *m = types_compile(src, "probe.cu", NULL, NULL, NULL, 0);
  types_kernel k;
  uint64_t before;
  (void)state;
  /* the kernel whose name does not resolve at file scope spoils the joint probe only */
  expect_types(m, "ok", "double", "f64");
  assert_status_detail(types_read(m, "nk", 1, &k), CUJIT_ERROR_SIGNATURE,
                       "\"__cujit_probe<decltype(&nk)>\" did not compile");
  types_free(&k);
  /* the failure is kept: asking again compiles nothing */
  before = cj_nvrtc_programs_created();
  assert_status_detail(types_read(m, "nk", 1, &k), CUJIT_ERROR_SIGNATURE, "did not compile");
  types_free(&k);
  assert_int_equal(cj_nvrtc_programs_created(), before);
  cujit_module_destroy(m);
}

/* Prebuilt PTX keeps no source: its C++ kernels' types come from their symbols, its
 * extern "C" kernels need an explicit signature, and the message says how. */
static void prebuilt_code(void **state) {
  cujit_module *src = types_compile(kExternC, "externc.cu", NULL, NULL, NULL, 0), *m = NULL;
  size_t size = 0;
  const char *ptx = cujit_module_ptx(src, &size);
  cujit_function fn;
  const cj_ptypes *t = NULL;
  (void)state;
  assert_ok(cujit_module_from_image(&m, ptx, size, "externc.ptx"));
  expect_types(m, "cpp", "int", "i32");
  memset(&fn, 0, sizeof fn);
  fn.module = cj_module_find(m);
  fn.name = fn.lowered = (char *)"ck2";
  fn.nparams = 1;
  assert_status_detail(cj_function_types(&fn, &t), CUJIT_ERROR_SIGNATURE,
                       "kernel 'ck2' of module 'externc.ptx' is extern \"C\"");
  assert_non_null(strstr(cujit_last_error(), "prebuilt code"));
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature()"));
  assert_null(t);
  cujit_module_destroy(m);
  cujit_module_destroy(src);
}

/* A symbol the decoder cannot read (here a conditional expression in a template argument)
 * leaves the types unknown: the lookup still works, launches check sizes, and typed calls
 * say what to do. */
static void symbols_that_cannot_be_read(void **state) {
  static const char src[] =
      "template <int N> struct Arr { float v[N]; };\n"
      "template <int N> __global__ void k(Arr<(N > 2 ? 1 : 2)> a, int n) {}\n";
  const char *exprs[] = {"k<3>", NULL};
  cujit_module *m = types_compile(src, "unread.cu", NULL, exprs, NULL, 0);
  cujit_function fn;
  const cj_ptypes *t = NULL;
  types_kernel k;
  (void)state;
  assert_status_detail(types_read(m, "k<3>", 1, &k), CUJIT_ERROR_SIGNATURE,
                       "cannot read the parameter types from the symbol");
  assert_non_null(strstr(cujit_last_error(), "an expression cujit does not read at offset"));
  memset(&fn, 0, sizeof fn);
  fn.module = cj_module_find(m);
  fn.name = (char *)"k";
  fn.lowered = (char *)k.sym;
  fn.nparams = k.n;
  cj_function_decode(&fn);
  assert_null(cj_function_ptypes(&fn)); /* unknown: launches check sizes only */
  assert_status_detail(cj_function_types(&fn, &t), CUJIT_ERROR_SIGNATURE,
                       "kernel 'k' of module 'unread.cu': cannot read the parameter types");
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature()"));
  types_free(&k);
  cujit_module_destroy(m);
}

/* ---- the types agree with the PTX's parameters ---- */

static const char kWide[] =
    "#include <stdint.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
    "struct P { float a; int b; double c; };\n"
    "typedef struct { char c; float4 v; } Q;\n"
    "struct __align__(16) A { float x, y, z; };\n"
    "struct B { char c; alignas(8) int i; };\n"
    "struct Out { short s[3]; double d[2]; float4 v; char tail; };\n"
    "union U { float f; int i; double d; };\n"
    "enum Mode { MA, MB };\nenum class Small : unsigned char { X };\n"
    "enum class Wide : long long { Y };\n"
    "struct E {};\n"
    "struct H { __half h; char c; __nv_bfloat16 b; };\n"
    "template <typename T, int N> struct Arr { T v[N]; };\n"
    "__global__ void ints(char a, signed char b, unsigned char c, short d, unsigned short e,\n"
    "  int f, unsigned g, long h, unsigned long i, long long j, unsigned long long k, bool l,\n"
    "  size_t m, char n, int8_t o, uint16_t p, int64_t q) {}\n"
    "__global__ void floats(char c0, float a, char c1, double b, char c2, __half c, half d,\n"
    "  __nv_bfloat16 e, char c3, __half2 f, __nv_bfloat162 g, char c4) {}\n"
    "__global__ void vectors(char1 a, uchar2 b, char3 c, char4 d, short2 e, ushort4 f,\n"
    "  int1 g, char pad0, uint2 h, int3 i, char pad1, int4 j, long2 k, ulong3 l, char pad2,\n"
    "  longlong2 m, ulonglong4_32a n, float2 o, float3 p, char pad3, float4 q, double1 r,\n"
    "  double2 s, double3 t, double4_16a u, double4_32a v, longlong4_16a w, dim3 x, char y) {}\n"
    "__global__ void structs(char x, P p, Q q, A a, B b, Out o, U u, Mode m, Small s,\n"
    "  Wide w, E e, H h, char tail, Arr<double, 3> arr, Arr<char, 5> small) {}\n"
    "__global__ void pointers(char a, const float *__restrict__ b, char c, void (*d)(int),\n"
    "  char e, float f[8], P *g, const Q *const h, float (*i)[4]) {}\n"
    "extern \"C\" __global__ void cmixed(char a, double b, P p, float4 v, Mode m, int *q,\n"
    "  unsigned long long u, __half h) {}\n";

/* The signature's offsets and sizes are the PTX's. */
static void expect_layout(const cj_signature *s, const types_kernel *k, const char *name) {
  size_t i;
  assert_int_equal(s->n, k->n);
  for (i = 0; i < k->n; i++)
    if (s->params[i].offset != k->offsets[i] || s->params[i].size != k->sizes[i])
      fail_msg("%s parameter %zu: the signature puts %u bytes at %u, the PTX %zu at %zu", name,
               i + 1, s->params[i].size, s->params[i].offset, k->sizes[i], k->offsets[i]);
}

/* Every parameter the call layer describes by its own type (scalars, pointers, vectors,
 * enums as integers) has the PTX's size and alignment; the rest are the PTX's bytes; and the
 * signature made from them has the PTX's offsets. */
static void check_against_ptx(cujit_module *m, const char *name) {
  types_kernel k;
  cj_signature *s = NULL;
  size_t i;
  assert_ok(types_read(m, name, 1, &k));
  for (i = 0; i < k.n; i++) {
    int oom;
    const cj_ptype *p = &k.types->p[i];
    cj_type *t = cj_type_of_param(p, k.ptx[i].size, &oom);
    assert_false(oom);
    if (!t) { /* known by name: a struct, union or class, passed as bytes */
      if (!k.ptx[i].array)
        fail_msg("%s parameter %zu ('%s'): passed as a PTX scalar but not read as one", name, i + 1,
                 p->m.spelling);
      continue;
    }
    if (t->size != k.ptx[i].size || t->align != k.ptx[i].align)
      fail_msg("%s parameter %zu ('%s'): %u bytes aligned to %u, the PTX says %zu aligned to %zu",
               name, i + 1, p->m.spelling, t->size, t->align, k.ptx[i].size, k.ptx[i].align);
    if (p->m.cls == CJ_MC_PTR && (k.ptx[i].array || k.ptx[i].size != 8))
      fail_msg("%s parameter %zu ('%s'): a pointer the PTX does not pass as one", name, i + 1,
               p->m.spelling);
    cj_type_free(t);
  }
  assert_ok(cj_sig_from_ptypes(k.types, k.n, k.offsets, k.sizes, &s));
  expect_layout(s, &k, name);
  cj_sig_free(s);
  /* as for a CUBIN, whose parameters the PTX does not describe: the layout alone */
  for (i = 0; i < k.n; i++) {
    k.types->p[i].align = 0;
    k.types->p[i].integer = 0;
  }
  assert_ok(cj_sig_from_ptypes(k.types, k.n, k.offsets, k.sizes, &s));
  expect_layout(s, &k, name);
  cj_sig_free(s);
  types_free(&k);
}

/* Every kernel of the module, C++ and extern "C". */
static void check_module_against_ptx(cujit_module *m) {
  cj_symtab t;
  size_t i;
  assert_ok(cj_symtab_build(cujit_module_ptx(m, NULL), &t));
  assert_true(t.n_kernels > 0);
  for (i = 0; i < t.n_kernels; i++) check_against_ptx(m, t.kernels[i]);
  cj_symtab_free(&t);
}

/* Every kernel of this group's sources and of the sources the other groups share. */
static void types_agree_with_the_ptx(void **state) {
  static const char *const sources[] = {kWide, kIfdef, kExternC, kCallSource, kSwap};
  const char *exprs[] = {"scale<float>", "scale<double4>", "scale<Vec<short> >", NULL};
  static const char templ[] =
      "template <typename T> struct Vec { T x, y; };\n"
      "template <typename T> __global__ void scale(T *x, T s, char c, Vec<T> v) {}\n";
  size_t i;
  cujit_module *m;
  (void)state;
  for (i = 0; i < CJ_COUNT(sources); i++) {
    m = types_compile(sources[i], "wide.cu", NULL, NULL, NULL, 0);
    check_module_against_ptx(m);
    cujit_module_destroy(m);
  }
  m = types_compile(templ, "templ.cu", NULL, exprs, NULL, 0);
  check_module_against_ptx(m);
  cujit_module_destroy(m);
  m = types_compile(kSaxpy, "saxpy.cu", NULL, kSaxpyExprs, NULL, 0);
  check_module_against_ptx(m);
  cujit_module_destroy(m);
}

#ifdef CUJIT_FAULT_INJECTION
/* Every allocation of a probe fails in turn (its compile a memory-cache hit): out of
 * memory is reported, or the caches absorb it; nothing crashes or leaks (the fault build
 * runs under AddressSanitizer). */
static void probe_allocation_failures(void **state) {
  cujit_module *m = types_compile(kExternC, "externc.cu", NULL, NULL, NULL, 1);
  types_kernel k;
  char sym[64];
  size_t nparams;
  long n;
  int fired = 0;
  (void)state;
  assert_ok(types_read(m, "ck", 1, &k)); /* the probe is in the caches now */
  snprintf(sym, sizeof sym, "%s", k.sym);
  nparams = k.n;
  types_free(&k);
  for (n = 1; n < 10000; n++) {
    cj_ptypes *t = NULL;
    cujit_status st;
    cj_module_probe_free(cj_module_find(m));
    cujit_test_fail_alloc_after(n);
    st = cj_ptypes_of(cj_module_find(m), sym, nparams, 1, &t);
    if (cujit_test_alloc_countdown() != 0) {
      cujit_test_fail_alloc_after(0);
      assert_ok(st);
      cj_ptypes_free(t);
      break;
    }
    cujit_test_fail_alloc_after(0);
    fired++;
    cj_ptypes_free(t);
    if (st == CUJIT_OK) continue; /* a cache lookup that failed became a miss */
    if (st != CUJIT_ERROR_OUT_OF_MEMORY)
      fail_msg("allocation %ld: %s: %s", n, cujit_status_name(st), cujit_last_error());
    assert_non_null(strstr(cujit_last_error(), "out of host memory"));
  }
  assert_true(fired > 10);
  cujit_module_destroy(m);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(preprocessor_branches_and_defines),
      cmocka_unit_test(same_names_in_two_namespaces),
      cmocka_unit_test(templates),
      cmocka_unit_test(types_from_headers),
      cmocka_unit_test(vector_and_scalar_types),
      cmocka_unit_test(extern_c_kernels_are_probed),
      cmocka_unit_test(probes_that_cannot_compile),
      cmocka_unit_test(prebuilt_code),
      cmocka_unit_test(symbols_that_cannot_be_read),
      cmocka_unit_test(types_agree_with_the_ptx),
#ifdef CUJIT_FAULT_INJECTION
      cmocka_unit_test(probe_allocation_failures),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

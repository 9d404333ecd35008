/* test_signature - kernel signatures without a GPU: the declaration reader on a wide table
 * of sources (checked against NVRTC's own parameter layout), type strings, the layout
 * check, cujit_call's varargs and promotions, and libffi-bound function pointers, with the
 * launch replaced by a recorder (cj_set_launcher) so that the arguments built can be seen.
 * The recorder needs the fault-injection build (CUJIT_FAULT_INJECTION, which scripts/check
 * makes), the only one with that seam; elsewhere the tests that use it are reported
 * skipped, and the rest run. */
#include <limits.h>
#include <math.h>
#include <pthread.h>

#include "testutil.h"
#include "call/signature.h"
#include "compile/symbols.h" /* cj_ptx_params: NVRTC's layout of each kernel, as the oracle */

/* Compiles `src` for compute_90 without a GPU (and without the cache); `cuda_headers`
 * puts the toolkit's include directory on the path for cuda_fp16.h. */
static cujit_module *compile(const char *src, const char *name, int cuda_headers) {
  const char *dirs[] = {CUJIT_TEST_CUDA_INCLUDE, NULL};
  cujit_options o = {0};
  cujit_module *m = NULL;
  o.arch = "compute_90";
  o.include_dirs = cuda_headers ? dirs : NULL;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, src, name, &o));
  return m;
}

/* ---- reading declarations ---- */

/* Reads `kernel` from `src` and compares its type string. */
static void expect_sig(const char *src, const char *kernel, const char *want) {
  cj_signature *s = NULL;
  cujit_status st = cj_sig_from_source(src, "t.cu", kernel, NULL, &s);
  if (st != CUJIT_OK)
    fail_msg("%s: %s: %s\nsource:\n%s", kernel, cujit_status_name(st), cujit_last_error(), src);
  if (strcmp(s->text, want) != 0)
    fail_msg("%s: got \"%s\", wanted \"%s\"\nsource:\n%s", kernel, s->text, want, src);
  cj_sig_free(s);
}

/* Expects CUJIT_ERROR_SIGNATURE with both needles in the message (and the advice). */
static void expect_err(const char *src, const char *kernel, const char *n1, const char *n2) {
  cj_signature *s = NULL;
  assert_status_detail(cj_sig_from_source(src, "t.cu", kernel, NULL, &s), CUJIT_ERROR_SIGNATURE,
                       n1);
  if (n2 && !strstr(cujit_last_error(), n2)) fail_msg("detail lacks \"%s\": %s", n2, cujit_last_error());
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature()"));
  assert_null(s);
}

typedef struct sig_case {
  const char *src, *kernel, *want;
} sig_case;

static const sig_case sig_cases[] = {
    {"__global__ void saxpy(float a, const float *x, float *__restrict__ y, unsigned n) {}",
     "saxpy", "f32 ptr ptr u32"},
    /* every integer spelling */
    {"__global__ void k(char a, signed char b, unsigned char c, short d, short int e,\n"
     "  unsigned short f, int g, unsigned h, long i, unsigned long j, long long k2,\n"
     "  unsigned long long l, long long int m, long unsigned int n, signed s, bool t,\n"
     "  signed short int u, unsigned long long int v, wchar_t w, char16_t x, char32_t y) {}",
     "k", "i8 i8 u8 i16 i16 u16 i32 u32 i64 u64 i64 u64 i64 u64 i32 u8 i16 u64 i32 u16 u32"},
    {"__global__ void k(size_t a, ptrdiff_t b, intptr_t c, uintptr_t d, int8_t e, uint8_t f,\n"
     "  int16_t g, uint16_t h, int32_t i, uint32_t j, int64_t k2, uint64_t l, std::size_t m,\n"
     "  ::int32_t n, cuda::std::uint64_t o, ssize_t p) {}",
     "k", "u64 i64 i64 u64 i8 u8 i16 u16 i32 u32 i64 u64 u64 i32 u64 i64"},
    {"__global__ void k(float a, double b, __half c, half d, __nv_bfloat16 e, nv_bfloat16 f,\n"
     "  __half2 g, __nv_bfloat162 h) {}",
     "k", "f32 f64 f16 f16 bf16 bf16 f16x2 bf16x2"},
    /* pointers: every qualifier, position and depth; arrays and function pointers */
    {"__global__ void k(const float *a, float const *b, float *const c, const float *const d,\n"
     "  volatile int *e, float *__restrict__ f, float * restrict g, float *__restrict h,\n"
     "  float **i, const char *const *j, void *k2, float l[], float m[16], void (*n)(int),\n"
     "  const volatile unsigned long long *__restrict__ const o, int *&&p2 = 0) {}",
     "k", NULL}, /* has a reference: checked among the errors */
    {"__global__ void k(const float *a, float const *b, float *const c, const float *const d,\n"
     "  volatile int *e, float *__restrict__ f, float * restrict g, float *__restrict h,\n"
     "  float **i, const char *const *j, void *k2, float l[], float m[16], void (*n)(int),\n"
     "  const volatile unsigned long long *__restrict__ const o, float (*p)[4]) {}",
     "k", "ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr ptr"},
    /* pointers to types not defined here are fine: only values need a layout */
    {"__global__ void k(Foo *a, const struct Bar *b, Baz<int, 3> *c, ns::Q *d) {}", "k",
     "ptr ptr ptr ptr"},
    {"__global__ void k(char1 a, uchar2 b, char3 c, char4 d, short2 e, ushort4 f, int1 g,\n"
     "  uint2 h, int3 i, int4 j, long2 k2, ulong3 l, longlong2 m, ulonglong4 n, float2 o,\n"
     "  float3 p, float4 q, double1 r, double2 s, double3 t, double4 u, double4_32a v,\n"
     "  longlong4_16a w, half2 x, dim3 y) {}",
     "k", "i8x1 u8x2 i8x3 i8x4 i16x2 u16x4 i32x1 u32x2 i32x3 i32x4 i64x2 u64x3 i64x2 u64x4 "
          "f32x2 f32x3 f32x4 f64x1 f64x2 f64x3 f64x4 f64x4:32 i64x4 f16x2 u32x3"},
    /* structs, unions, enums, typedefs and aliases defined in the source */
    {"struct P { float a; int b; double c; };\n"
     "__global__ void k(P p, struct P q, const P r, __grid_constant__ const P s) {}",
     "k", "{f32 i32 f64} {f32 i32 f64} {f32 i32 f64} {f32 i32 f64}"},
    {"typedef struct { char c; float4 v; } Q;\n__global__ void k(char x, Q q) {}", "k",
     "i8 {i8 f32x4}"},
    {"struct __align__(16) A { float x, y, z; };\n"
     "struct alignas(8) A8 { char c; };\n"
     "struct A2 { short s; } __attribute__((aligned(4)));\n" /* ignored, as NVRTC does */
     "struct __attribute__((aligned(4))) A4 { short s; };\n"
     "__global__ void k(A a, A8 b, A2 c, A4 d) {}",
     "k", "{f32 f32 f32}:16 {i8}:8 {i16} {i16}:4"},
    {"struct B { char c; alignas(8) int i; };\n__global__ void k(B b) {}", "k", "{i8 i32:8}"},
    {"struct In { short s[3]; };\nstruct Out { In in; double d[2]; float4 v; };\n"
     "__global__ void k(Out o) {}",
     "k", "{{i16[3]} f64[2] f32x4}"},
    {"#define N 4\nstruct G { float m[N][2]; int n; };\n__global__ void k(G g) {}", "k",
     "{f32[8] i32}"},
    {"union U { float f; int i; double d; };\nstruct S { char c; union { int a; float b; }; "
     "U u; };\n__global__ void k(U u, union U v, S s) {}",
     "k", "b8:8 b8:8 {i8 b4:4 b8:8}"},
    {"enum Mode { A, B = 4 };\nenum class Small : unsigned char { X };\n"
     "enum struct Wide : long long { Y };\n__global__ void k(Mode m, Small s, enum Mode t, Wide w) {}",
     "k", "i32 u8 i32 i64"},
    {"typedef float real;\ntypedef real *realp, realv;\nusing idx = unsigned long long;\n"
     "typedef float4 vec;\ntypedef int arr3[3];\ntypedef void (*cb_t)(int);\n"
     "typedef struct P { int a; } P, *PP;\n"
     "__global__ void k(real a, realp b, idx c, vec d, arr3 e, cb_t f, P g, PP h, realv i) {}",
     "k", "f32 ptr u64 f32x4 ptr ptr {i32} ptr f32"},
    {"struct M {\n  __device__ float len() const { return x * y; }\n  static const int K = 3;\n"
     "  float x;\n  __device__ M() : x(0), y(1) {}\n  typedef int inner;\n  float y;\n"
     "  __device__ M &operator=(const M &o) = default;\npublic:\n  int z = 4;\n"
     "  void (*cb)(int);\n  float *data, **more;\n  struct { short a, b; } pair;\n};\n"
     "__global__ void k(M m) {}",
     "k", "{f32 f32 i32 ptr ptr ptr {i16 i16}}"},
    {"struct E {};\n__global__ void k(E e, int n) {}", "k", "b1 i32"},
    /* comments and line breaks inside the list */
    {"__global__ void k(float a, // the scale, with commas\n"
     "  /* input, also ( with ) parentheses */ const float *x,\n\n"
     "  float *y /* out */,\n  unsigned /* count */ n)\n{ }",
     "k", "f32 ptr ptr u32"},
    /* object-like macros for types, qualifiers and the declaration itself */
    {"#define REAL float\n#define PTR REAL *\n#define KERNEL extern \"C\" __global__ void\n"
     "#define RESTRICT __restrict__\n#define NOTHING\n"
     "KERNEL k(REAL a, PTR b, REAL * RESTRICT c NOTHING) {}",
     "k", "f32 ptr ptr"},
    {"#define A B\n#define B A\n__global__ void k(float x, A *y) {}", "k", "f32 ptr"},
    {"#define T double\n#undef T\n#define T int\n__global__ void k(T x) {}", "k", "i32"},
    {"#if 0\n__global__ void k(int a);\n#if 1\n#endif\n#else\n#endif\n"
     "__global__ void k(float a) {}",
     "k", "f32"},
    {"#ifdef USE_DOUBLE\n#define REAL double\n#else\n#define REAL float\n#endif\n"
     "__global__ void k(REAL *a, int n) {}",
     "k", "ptr i32"},
    /* attributes and storage */
    {"extern \"C\" __global__ void __launch_bounds__(256, 2) k(int n) {}", "k", "i32"},
    {"static __global__ __launch_bounds__(128) void k(double d) {}", "k", "f64"},
    {"__global__ void __maxnreg__(32) k([[maybe_unused]] int n, float *__attribute__((unused)) p) {}",
     "k", "i32 ptr"},
    {"extern \"C\" {\n__global__ void k(void) {}\n}", "k", ""},
    {"__global__ void k() {}", "k", ""},
    {"__global__ void k(int n = 10, float s = 1.0f, int m = (3, 4)) {}", "k", "i32 f32 i32"},
    /* several kernels, forward declarations, namespaces, unnamed parameters */
    {"__global__ void a(float *x);\n__global__ void b(int n, double d) {}\n"
     "__global__ void a(float *x) { x[0] = 1; }\n__global__ void c(char) {}",
     "a", "ptr"},
    {"__global__ void a(float *x) {}\n__global__ void b(int n, double d) {}", "b", "i32 f64"},
    {"__global__ void a(float *x) {}\n__global__ void c(char, float4) {}", "c", "i8 f32x4"},
    {"namespace ns { struct V { int a, b; }; __global__ void k(V v) {} }", "k", "{i32 i32}"},
    {"namespace ns { __global__ void k(int a); }\n__global__ void ns::k(int a) {}", "k", "i32"},
};

static void declarations(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < CJ_COUNT(sig_cases); i++)
    if (sig_cases[i].want) expect_sig(sig_cases[i].src, sig_cases[i].kernel, sig_cases[i].want);
}

static void declaration_errors(void **state) {
  (void)state;
  expect_err("template <typename T> __global__ void k(T *x) {}", "k", "is a template",
             "name_expressions");
  expect_err("template <typename T, int N = 4>\n__launch_bounds__(64) __global__ void k(T x) {}",
             "k", "is a template", NULL);
  expect_err("__global__ void k(int a) {}\n__global__ void k(float a) {}", "k",
             "overloaded: (i32) on line 1, (f32) on line 2", NULL);
  expect_err(sig_cases[4].src, "k", "parameter 16 'int * && p2 = 0'", "C++ references");
  expect_err("__global__ void k(int &a) {}", "k", "C++ references", NULL);
  expect_err("__global__ void k(float a, Foo f) {}", "k", "parameter 2 'Foo f'",
             "unknown type 'Foo'");
  expect_err("#define T(x) x\n__global__ void k(T(float) a) {}", "k", "function-like macro", NULL);
  expect_err("#ifdef USE_DOUBLE\n#define REAL double\n#else\n#define REAL float\n#endif\n"
             "__global__ void k(REAL a) {}",
             "k", "macro 'REAL', which is defined differently on lines 2, 4", NULL);
  expect_err("struct F { int a : 3; int b : 5; };\n__global__ void k(F f) {}", "k", "bit-fields",
             NULL);
  expect_err("struct V { virtual void f(); int a; };\n__global__ void k(V v) {}", "k", "virtual",
             NULL);
  expect_err("struct B0 { int a; };\nstruct D : B0 { int b; };\n__global__ void k(D d) {}", "k",
             "'D' derives from another class", NULL);
  expect_err("template <typename T> struct W { T v; };\n__global__ void k(W<float> w) {}", "k",
             "'W<...>' is a template type", NULL);
  expect_err("template <typename T> struct W { T v; };\n__global__ void k(W w) {}", "k",
             "'W' is a template", NULL);
  expect_err("__global__ void k(long double x) {}", "k", "long double", NULL);
  expect_err("__global__ void k(int n, ...) {}", "k", "variadic", NULL);
  expect_err("__global__ void k(void x) {}", "k", "void", NULL);
  expect_err("__global__ void a(int n) {}", "nope", "kernel 'nope'", "no __global__ declaration");
  expect_err("__global__ void k(int a", "k", "not closed", NULL);
  expect_err("__global__ void k(int a,) {}", "k", "parameter 2", "empty");
  expect_err("struct S { float v[N2]; };\n__global__ void k(S s) {}", "k",
             "array size 'N2' is not a plain number", NULL);
  expect_err("typedef A B;\ntypedef B A;\n__global__ void k(A a) {}", "k", "in terms of itself",
             NULL);
  expect_err("__global__ void k(float * RESTRICT a) {}", "k", "unexpected 'a' after 'RESTRICT'",
             "macro");
  expect_err("struct S { float v[4096][4096]; };\n__global__ void k(S s) {}", "k",
             "more than 2^20", NULL);
  expect_err("__global__ void k(unsigned float x) {}", "k", "invalid combination", NULL);
}

/* With the driver's layout, an overload is picked when only one fits. */
static void overloads_by_layout(void **state) {
  const char *src = "__global__ void k(int a) {}\n__global__ void k(double a, int b) {}\n"
                    "__global__ void k(float a) {}\n";
  size_t offs[2] = {0, 8}, sizes[2] = {8, 4}, offs1[1] = {0}, sizes1[1] = {4};
  cj_layout two = {2, offs, sizes}, one = {1, offs1, sizes1};
  cj_signature *s = NULL;
  (void)state;
  assert_ok(cj_sig_from_source(src, "t.cu", "k", &two, &s));
  assert_string_equal(s->text, "f64 i32");
  cj_sig_free(s);
  assert_status_detail(cj_sig_from_source(src, "t.cu", "k", &one, &s), CUJIT_ERROR_SIGNATURE,
                       "does not tell which one");
  assert_null(s);
}

/* Offsets and sizes the declaration reader computes equal NVRTC's for a wide set of
 * kernels (the PTX states each parameter's size and alignment). */
static const char kLayouts[] =
    "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
    "struct P { float a; int b; double c; };\n"
    "typedef struct { char c; float4 v; } Q;\n"
    "struct __align__(16) A { float x, y, z; };\n"
    "struct A2 { short s; } __attribute__((aligned(8)));\n"
    "struct __attribute__((aligned(8))) A8 { short s; };\n"
    "struct B { char c; alignas(8) int i; };\n"
    "struct In { short s[3]; };\n"
    "struct Out { In in; double d[2]; float4 v; char tail; };\n"
    "union U { float f; int i; double d; };\n"
    "enum Mode { MA, MB };\nenum class Small : unsigned char { X };\n"
    "typedef float real;\ntypedef real *realp;\nusing idx = unsigned long long;\n"
    "typedef float4 vec;\ntypedef int arr3[3];\n"
    "struct M { __device__ float len() const { return x; } static const int K = 3; float x;\n"
    "  float y; };\n"
    "struct L { float *data; int n; void (*cb)(int); char c; };\n"
    "struct E {};\n"
    "struct H { __half h; char c; __nv_bfloat16 b; };\n"
    "extern \"C\" {\n"
    "__global__ void ints(char a, signed char b, unsigned char c, short d, unsigned short e,\n"
    "  int f, unsigned g, long h, unsigned long i, long long j, unsigned long long k, bool l,\n"
    "  size_t m, char n) {}\n"
    "__global__ void floats(char c0, float a, char c1, double b, char c2, __half c, half d,\n"
    "  __nv_bfloat16 e, char c3, __half2 f, __nv_bfloat162 g, char c4) {}\n"
    "__global__ void vectors(char1 a, uchar2 b, char3 c, char4 d, short2 e, ushort4 f,\n"
    "  int1 g, char pad0, uint2 h, int3 i, char pad1, int4 j, long2 k, ulong3 l, char pad2,\n"
    "  longlong2 m, ulonglong4_32a n, float2 o, float3 p, char pad3, float4 q, double1 r,\n"
    "  double2 s, double3 t, double4_16a u, double4_32a v, longlong4_16a w, dim3 x, char y) {}\n"
    "__global__ void structs(char x, P p, Q q, A a, A2 a2, B b, Out o, U u, Mode m, Small s,\n"
    "  M mm, L l, E e, H h, char tail, A8 a8, char t2) {}\n"
    "__global__ void aliases(real a, realp b, idx c, char pad, vec d, arr3 e, char f,\n"
    "  double4_32a g) {}\n"
    "__global__ void pointers(char a, const float *__restrict__ b, char c, void (*d)(int),\n"
    "  char e, float f[8]) {}\n"
    "}\n";

static void layouts_match_nvrtc(void **state) {
  static const char *const kernels[] = {"ints", "floats", "vectors", "structs", "aliases",
                                        "pointers"};
  cujit_module *m = compile(kLayouts, "layouts.cu", 1);
  size_t i;
  (void)state;
  for (i = 0; i < CJ_COUNT(kernels); i++) {
    size_t n = 0, *offs = NULL, *sizes = NULL, j;
    cj_signature *s = NULL;
    cj_layout l;
    assert_ok(cj_ptx_params(cujit_module_ptx(m, NULL), kernels[i], &n, &offs, &sizes));
    assert_ok(cj_sig_from_source(kLayouts, "layouts.cu", kernels[i], NULL, &s));
    l.n = n;
    l.offsets = offs;
    l.sizes = sizes;
    if (!cj_sig_fits(s, &l)) {
      for (j = 0; j < n && j < s->n; j++)
        printf("%s %zu: ptx %zu@%zu, parsed %u@%u\n", kernels[i], j, sizes[j], offs[j],
               s->params[j].size, s->params[j].offset);
      fail_msg("%s: \"%s\" (%zu parameters) does not match NVRTC's layout (%zu)", kernels[i],
               s->text, s->n, n);
    }
    cj_sig_free(s);
    free(offs);
    free(sizes);
  }
  cujit_module_destroy(m);
}

/* ---- type strings ---- */

static void expect_types(const char *types, const char *want) {
  cj_signature *s = NULL;
  cujit_status st = cj_sig_from_types(types, &s);
  if (st != CUJIT_OK) fail_msg("\"%s\": %s", types, cujit_last_error());
  if (strcmp(s->text, want) != 0) fail_msg("\"%s\" reads as \"%s\", wanted \"%s\"", types, s->text, want);
  cj_sig_free(s);
}

static void expect_types_err(const char *types, const char *needle) {
  cj_signature *s = NULL;
  assert_status_detail(cj_sig_from_types(types, &s), CUJIT_ERROR_SIGNATURE, needle);
  assert_non_null(strstr(cujit_last_error(), "f32x4 is float4")); /* the grammar is recalled */
  assert_null(s);
}

/* Checks each parameter's offset and size (n = the signature's count). */
static void expect_layout(const char *types, const unsigned *offs, const unsigned *sizes) {
  cj_signature *s = NULL;
  size_t i;
  assert_ok(cj_sig_from_types(types, &s));
  for (i = 0; i < s->n; i++)
    if (s->params[i].offset != offs[i] || s->params[i].size != sizes[i])
      fail_msg("\"%s\" parameter %zu: %u bytes at %u, wanted %u at %u", types, i + 1,
               s->params[i].size, s->params[i].offset, sizes[i], offs[i]);
  cj_sig_free(s);
}

static void type_strings(void **state) {
  cj_signature *s = NULL;
  char deep[128];
  size_t i;
  (void)state;
  expect_types("f32 ptr ptr u32", "f32 ptr ptr u32");
  expect_types("  f32,ptr , ptr\tu32\n", "f32 ptr ptr u32");
  expect_types("", "");
  expect_types(" void ", "");
  expect_types("i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 ptr",
               "i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 ptr");
  expect_types("f32x4 i8x3 f64x4:32 u16x2 bf16x2 i64x1", "f32x4 i8x3 f64x4:32 u16x2 bf16x2 i64x1");
  expect_types("f32x4:16 f32:4 b3:1", "f32x4 f32 b3");
  expect_types("{f32 i32 f64} {i8 f64}:16 {i8 {i16 f32}[2] f64[3]}",
               "{f32 i32 f64} {i8 f64}:16 {i8 {i16 f32}[2] f64[3]}");
  expect_types("{ f32, i32 }", "{f32 i32}");
  expect_types("b12 b12:4 b16:16 f32:16 {i8 i32:8}", "b12 b12:4 b16:16 f32:16 {i8 i32:8}");

  /* offsets and sizes follow C's and CUDA's rules */
  expect_layout("i8 f32x4 {i8 f64} i16 b12:4 f64x4:32 u8",
                (const unsigned[]){0, 16, 32, 48, 52, 64, 96}, (const unsigned[]){1, 16, 16, 2, 12, 32, 1});
  expect_layout("{i8 i32:8} {f32 f32 f32}:16 i8x3 f64x3 {i32:8 i8}",
                (const unsigned[]){0, 16, 32, 40, 64}, (const unsigned[]){16, 16, 3, 24, 8});
  assert_ok(cj_sig_from_types("u8 {i8} f16 bf16 ptr", &s));
  assert_int_equal(s->params[0].tag, CUJIT_TYPE_U8);
  assert_int_equal(s->params[1].tag, CUJIT_TYPE_BYTES);
  assert_int_equal(s->params[2].tag, CUJIT_TYPE_F16);
  assert_int_equal(s->params[3].tag, CUJIT_TYPE_BF16);
  assert_int_equal(s->params[4].tag, CUJIT_TYPE_PTR);
  cj_sig_free(s);

  expect_types_err("q32", "unknown type at offset 0");
  expect_types_err("f32 q32", "unknown type at offset 4");
  expect_types_err("f32x5", "unknown type");
  expect_types_err("ptrx2", "unknown type");
  expect_types_err("b", "unknown type");
  expect_types_err("b0", "a blob is b followed by its size");
  expect_types_err("b2000000", "a blob is b followed by its size");
  expect_types_err("b12x", "a blob is b followed by its size");
  expect_types_err("{f32 i32", "this { has no matching }");
  expect_types_err("{}", "at least one member");
  expect_types_err("f32[3]", "arrays are passed by pointer");
  expect_types_err("{f32[0]}", "type[N]");
  expect_types_err("{f32[3}", "type[N]");
  expect_types_err("f32:3", "power of two");
  expect_types_err("f32:8192", "power of two");
  expect_types_err("f64:4", "not lower it");
  expect_types_err("f32x4:8", "not lower it");
  expect_types_err("void f32", "void is only allowed");
  expect_types_err("f32ptr", "unknown type");
  expect_types_err("f32{i32}", "expected a space");
  expect_types_err("{b1048576 b1048576}", "larger than 1 MiB");
  for (i = 0; i < 40; i++) deep[i] = '{';
  strcpy(deep + 40, "i32");
  expect_types_err(deep, "nested too deeply");
}

/* ---- functions built by hand (no device): layout checks and calls ---- */

typedef struct hand {
  cujit_function fn;
  size_t offs[64], sizes[64];
} hand;

/* A function named `name` whose driver layout is that of type string `layout` (NULL: no
 * layout known yet). */
static void hand_init(hand *h, cujit_module *m, const char *name, const char *layout) {
  cj_signature *s = NULL;
  size_t i;
  memset(h, 0, sizeof *h);
  h->fn.module = m;
  h->fn.name = (char *)name;
  h->fn.lowered = (char *)name;
  h->fn.dev = (cj_fstate *)(void *)h; /* any non-NULL: the module layer's state; never touched here */
  if (!layout) return;
  assert_ok(cj_sig_from_types(layout, &s));
  assert_true(s->n <= 64);
  for (i = 0; i < s->n; i++) {
    h->offs[i] = s->params[i].offset;
    h->sizes[i] = s->params[i].size;
  }
  h->fn.nparams = s->n;
  h->fn.param_offsets = h->offs;
  h->fn.param_sizes = h->sizes;
  cj_sig_free(s);
}

static void hand_free(hand *h) {
  if (h->fn.upper_free) h->fn.upper_free(&h->fn);
}

static void layout_check(void **state) {
  hand h;
  (void)state;
  hand_init(&h, NULL, "k", "i8 f32x4 f32");
  assert_status_detail(cujit_function_set_signature(&h.fn, "i8 f32x4"), CUJIT_ERROR_SIGNATURE,
                       "signature \"i8 f32x4\" has 2 parameters, but kernel 'k' has 3");
  assert_status_detail(cujit_function_set_signature(&h.fn, "i8 b16 f32"), CUJIT_ERROR_SIGNATURE,
                       "parameter 2 (b16): the signature puts 16 bytes at offset 1, but kernel "
                       "'k' takes 16 bytes at offset 16; the alignment differs");
  assert_non_null(strstr(cujit_last_error(), "b16:16"));
  assert_status_detail(cujit_function_set_signature(&h.fn, "i8 f32x4 f64"), CUJIT_ERROR_SIGNATURE,
                       "parameter 3 (f64): the signature puts 8 bytes at offset 32, but kernel "
                       "'k' takes 4 bytes at offset 32; the types differ in size");
  assert_null(h.fn.upper); /* nothing replaced, nothing kept */
  assert_ok(cujit_function_set_signature(&h.fn, "i8 b16:16 f32"));
  assert_string_equal(cujit_function_signature(&h.fn), "i8 b16:16 f32");
  assert_ok(cujit_function_set_signature(&h.fn, "u8 f32x4 i32"));
  assert_string_equal(cujit_function_signature(&h.fn), "u8 f32x4 i32");
  assert_non_null(h.fn.upper->sig->older); /* the replaced one lives on until the function is freed */
  assert_status_detail(cujit_function_set_signature(&h.fn, "u8 junk"), CUJIT_ERROR_SIGNATURE,
                       "unknown type");
  assert_string_equal(cujit_function_signature(&h.fn), "u8 f32x4 i32");
  assert_status_detail(cujit_function_set_signature(NULL, "i32"), CUJIT_ERROR_INVALID_VALUE,
                       "fn is NULL");
  assert_status_detail(cujit_function_set_signature(&h.fn, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "types is NULL");
  assert_null(cujit_function_signature(NULL));
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_INVALID_VALUE);
  hand_free(&h);
}

/* ---- the launch recorder (fault-injection build only) ---- */

#ifdef CUJIT_FAULT_INJECTION

static struct {
  int calls;
  cujit_function *fn;
  cujit_dim3 grid, block;
  size_t nargs;
  cujit_arg args[64];
  unsigned char big[64][64]; /* bytes of values held by reference */
  const cujit_launch_options *opts;
  unsigned shared;
  cujit_status result;
} seen;

static cujit_status record_launch(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                                  const cujit_arg *args, size_t nargs,
                                  const cujit_launch_options *opts) {
  size_t i;
  seen.calls++;
  seen.fn = (cujit_function *)fn;
  seen.grid = grid;
  seen.block = block;
  seen.nargs = nargs;
  for (i = 0; i < nargs && i < 64; i++) {
    seen.args[i] = args[i];
    if (args[i].data && args[i].size <= 64) memcpy(seen.big[i], args[i].data, args[i].size);
  }
  seen.opts = opts;
  seen.shared = opts ? opts->shared_bytes : 0;
  if (seen.result != CUJIT_OK)
    return cj_fail(seen.result, "no device here to launch '%s' on", fn->name);
  return CUJIT_OK;
}

static int setup_recorder(void **state) {
  (void)state;
  memset(&seen, 0, sizeof seen);
  cj_set_launcher(record_launch);
  return 0;
}

static int teardown_recorder(void **state) {
  (void)state;
  cj_set_launcher(NULL);
  return 0;
}

/* Asserts the grid and block of the recorded launch. */
static void assert_dims(cujit_dim3 grid, cujit_dim3 block) {
  assert_int_equal(seen.grid.x, grid.x);
  assert_int_equal(seen.grid.y, grid.y);
  assert_int_equal(seen.grid.z, grid.z);
  assert_int_equal(seen.block.x, block.x);
  assert_int_equal(seen.block.y, block.y);
  assert_int_equal(seen.block.z, block.z);
}

/* Asserts that recorded argument i is a by-value argument holding `n` bytes `v`. */
static void assert_arg(size_t i, int type, const void *v, size_t n) {
  const cujit_arg *a = &seen.args[i];
  assert_int_equal(a->kind, CUJIT_ARG_VALUE);
  assert_int_equal(a->type, type);
  assert_int_equal(a->size, n);
  assert_memory_equal(a->data ? seen.big[i] : a->value.bytes, v, n);
}
#endif

/* ---- varargs: promotions and conversions ---- */

/* Converts varargs through cj_args_from_va, as cujit_call does. */
static cujit_status convert(const char *types, cujit_arg *out, int nargs, ...) {
  cj_signature *s = NULL;
  cujit_status st;
  va_list ap;
  assert_ok(cj_sig_from_types(types, &s));
  va_start(ap, nargs);
  st = cj_args_from_va(s, "k", nargs, &ap, out);
  va_end(ap);
  cj_sig_free(s);
  return st;
}

static uint16_t f16_of(double d) {
  cujit_arg a;
  assert_ok(convert("f16", &a, 1, d));
  assert_int_equal(a.size, 2);
  return (uint16_t)(a.value.bytes[0] | a.value.bytes[1] << 8);
}

static uint16_t bf16_of(double d) {
  cujit_arg a;
  assert_ok(convert("bf16", &a, 1, d));
  return (uint16_t)(a.value.bytes[0] | a.value.bytes[1] << 8);
}

static void promotions(void **state) {
  cujit_arg a[8];
  signed char sc = -1;
  short sh = -32768;
  float f = 0.1f;
  int32_t i32 = INT_MIN;
  uint32_t u32 = 0xFFFFFFFFu;
  int64_t i64 = INT64_MIN;
  uint64_t u64 = 0xFEDCBA9876543210ull;
  double d = 0.1, inf = HUGE_VAL;
  uint8_t b8;
  (void)state;
  /* char and short arrive as int and are narrowed back; both signednesses fit */
  assert_ok(convert("i8 u8 u8 i16 u16 i32 u32", a, 7, (int)sc, 255, sc, sh, 65535, i32, u32));
  b8 = 0xFF;
  assert_memory_equal(a[0].value.bytes, &b8, 1);
  assert_memory_equal(a[1].value.bytes, &b8, 1);
  assert_memory_equal(a[2].value.bytes, &b8, 1);
  assert_int_equal(a[0].type, CUJIT_TYPE_I8);
  assert_int_equal(a[0].size, 1);
  assert_memory_equal(a[3].value.bytes, &sh, 2);
  assert_int_equal(a[4].value.bytes[0] & a[4].value.bytes[1], 0xFF);
  assert_memory_equal(a[5].value.bytes, &i32, 4);
  assert_memory_equal(a[6].value.bytes, &u32, 4);
  assert_int_equal(a[6].type, CUJIT_TYPE_U32);
  assert_status_detail(convert("i32 u8", a, 2, 1, 256), CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'k', parameter 2 (u8): 256 does not fit in 8 bits");
  assert_status_detail(convert("i8", a, 1, -129), CUJIT_ERROR_INVALID_ARGS, "-129 does not fit");
  assert_status_detail(convert("u16", a, 1, 70000), CUJIT_ERROR_INVALID_ARGS, "16 bits");
  /* 64-bit integers */
  assert_ok(convert("i64 u64", a, 2, i64, u64));
  assert_memory_equal(a[0].value.bytes, &i64, 8);
  assert_memory_equal(a[1].value.bytes, &u64, 8);
  assert_int_equal(a[1].type, CUJIT_TYPE_U64);
  /* a float arrives as double and is narrowed back; a double for f32 is rounded */
  assert_ok(convert("f32 f32 f64 f32", a, 4, f, d, d, inf));
  assert_memory_equal(a[0].value.bytes, &f, 4);
  assert_memory_equal(a[1].value.bytes, &f, 4); /* (float)0.1 == 0.1f */
  assert_memory_equal(a[2].value.bytes, &d, 8);
  assert_true(isinf(a[3].value.f32));
  assert_int_equal(a[0].type, CUJIT_TYPE_F32);
  assert_int_equal(a[2].type, CUJIT_TYPE_F64);
  /* f16 and bf16 take a double, rounded to nearest with ties to even */
  assert_int_equal(f16_of(1.0), 0x3c00);
  assert_int_equal(f16_of(0.1), 0x2e66);
  assert_int_equal(f16_of(1.0 / 3), 0x3555);
  assert_int_equal(f16_of(-2.5), 0xc100);
  assert_int_equal(f16_of(65504), 0x7bff);
  assert_int_equal(f16_of(65519), 0x7bff);
  assert_int_equal(f16_of(65520), 0x7c00); /* the tie rounds up into infinity */
  assert_int_equal(f16_of(1e300), 0x7c00);
  assert_int_equal(f16_of(-HUGE_VAL), 0xfc00);
  assert_int_equal(f16_of(NAN) & 0x7e00, 0x7e00);
  assert_int_equal(f16_of(-0.0), 0x8000);
  assert_int_equal(f16_of(ldexp(1, -14)), 0x0400); /* smallest normal */
  assert_int_equal(f16_of(ldexp(1, -24)), 0x0001); /* smallest subnormal */
  assert_int_equal(f16_of(ldexp(1, -25)), 0x0000); /* tie to even: 0 */
  assert_int_equal(f16_of(ldexp(3, -25)), 0x0002); /* tie to even: 2 */
  assert_int_equal(f16_of(ldexp(1023, -24) + ldexp(1, -25)), 0x0400); /* into the normals */
  assert_int_equal(f16_of(1 + ldexp(1, -11)), 0x3c00);
  assert_int_equal(f16_of(1 + ldexp(3, -11)), 0x3c02);
  assert_int_equal(f16_of(1 + ldexp(1, -11) + ldexp(1, -40)), 0x3c01); /* one rounding only */
  assert_int_equal(f16_of(1e-300), 0x0000);
  assert_int_equal(bf16_of(1.0), 0x3f80);
  assert_int_equal(bf16_of(3.140625), 0x4049);
  assert_int_equal(bf16_of(1 + ldexp(1, -8)), 0x3f80);
  assert_int_equal(bf16_of(1 + ldexp(3, -8)), 0x3f82);
  assert_int_equal(bf16_of(-0.5), 0xbf00);
  assert_int_equal(bf16_of(3.4e38), 0x7f80);
  assert_int_equal(bf16_of(ldexp(1, -133)), 0x0001);
  assert_int_equal(bf16_of(NAN) & 0x7fc0, 0x7fc0);
  assert_ok(convert("bf16", a, 1, 1.0));
  assert_int_equal(a[0].type, CUJIT_TYPE_BF16);
}

static void pointers_and_values(void **state) {
  typedef struct { float x, y, z; } f3;
  typedef struct { double v[5]; } big;
  cujit_arg a[4], src = cujit_in(a, 16), small = cujit_i32(7);
  char host[32];
  f3 v = {1, 2, 3};
  big b = {{1, 2, 3, 4, 5}};
  CUdeviceptr p = 0x7f0000001230ull;
  (void)state;
  /* device pointers pass through; In/Out references bring their wrapper */
  assert_ok(convert("ptr ptr ptr ptr", a, 4, p, CUJIT_OUT(host, sizeof host), cujit_arg_ref(&src),
                    (CUdeviceptr)0));
  assert_int_equal(a[0].kind, CUJIT_ARG_VALUE);
  assert_int_equal(a[0].type, CUJIT_TYPE_PTR);
  assert_int_equal(a[0].value.ptr, p);
  assert_int_equal(a[1].kind, CUJIT_ARG_OUT);
  assert_ptr_equal(a[1].host, host);
  assert_int_equal(a[1].bytes, sizeof host);
  assert_int_equal(a[2].kind, CUJIT_ARG_IN);
  assert_int_equal(a[3].value.ptr, 0);
  assert_status_detail(convert("ptr", a, 1, cujit_arg_ref(&small)), CUJIT_ERROR_INVALID_ARGS,
                       "parameter 1 (ptr): a pointer parameter takes a device pointer or "
                       "CUJIT_IN/CUJIT_OUT/CUJIT_INOUT, not a 4-byte value");
  assert_status_detail(convert("ptr", a, 1, cujit_arg_ref(NULL)), CUJIT_ERROR_INVALID_ARGS,
                       "the argument reference is NULL");
  /* structs, vectors and blobs take a pointer to the value */
  assert_ok(convert("f32x3 {f32 f32 f32} b12:4 {f64[5]}", a, 4, &v, &v, &v, &b));
  assert_int_equal(a[0].size, 12);
  assert_memory_equal(a[0].value.bytes, &v, 12);
  assert_int_equal(a[0].type, CUJIT_TYPE_BYTES);
  assert_memory_equal(a[1].value.bytes, &v, 12);
  assert_memory_equal(a[2].value.bytes, &v, 12);
  assert_int_equal(a[3].size, 40);
  assert_ptr_equal(a[3].data, &b); /* large values are referenced */
  assert_status_detail(convert("i32 f32x4", a, 2, 1, (void *)NULL), CUJIT_ERROR_INVALID_ARGS,
                       "parameter 2 (f32x4): a struct, vector or blob parameter takes a pointer");
  /* a wrong count is refused before any argument is read */
  assert_status_detail(convert("f32 ptr ptr u32", a, 3, 1.0, p, p), CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'k' takes 4 arguments (f32 ptr ptr u32) but 3 were given");
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
}

#ifdef CUJIT_FAULT_INJECTION
static void call_counts_arguments(void **state) {
  hand h;
  float x = 2;
  CUdeviceptr p = 0x1000;
  typedef struct { float x, y, z, w; } vec4;
  vec4 v = {1, 2, 3, 4};
  cujit_launch_options o = {0};
  (void)state;
  hand_init(&h, NULL, "saxpy", "f32 ptr ptr u32");
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr u32"));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(4, 2), CUJIT_DIM3(256), x, p, CUJIT_OUT(&v, 16), 100));
  assert_int_equal(seen.calls, 1);
  assert_ptr_equal(seen.fn, &h.fn);
  assert_int_equal(seen.grid.x, 4);
  assert_int_equal(seen.grid.y, 2);
  assert_int_equal(seen.grid.z, 1);
  assert_int_equal(seen.block.x, 256);
  assert_int_equal(seen.nargs, 4);
  assert_arg(0, CUJIT_TYPE_F32, &x, 4);
  assert_int_equal(seen.args[2].kind, CUJIT_ARG_OUT);
  assert_null(seen.opts);
  /* too few and too many are refused, and nothing is launched */
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), x, p, p),
                       CUJIT_ERROR_INVALID_ARGS, "takes 4 arguments (f32 ptr ptr u32) but 3");
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), x, p, p, 1, 2),
                       CUJIT_ERROR_INVALID_ARGS, "but 5 were given");
  assert_int_equal(seen.calls, 1);
  /* cujit_call_ex passes the options */
  o.shared_bytes = 64;
  assert_ok(cujit_call_ex(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, p, p, 1));
  assert_ptr_equal(seen.opts, &o);
  assert_int_equal(seen.shared, 64);
  assert_status_detail(cujit_call_ex(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x),
                       CUJIT_ERROR_INVALID_ARGS, "but 1 were given");
  /* a struct by address; an unparenthesised compound literal miscounts, safely */
  assert_status_detail(cujit_function_set_signature(&h.fn, "f32x4 i32"), CUJIT_ERROR_SIGNATURE,
                       "has 2 parameters");
  hand_free(&h);
  hand_init(&h, NULL, "v", "f32x4");
  assert_ok(cujit_function_set_signature(&h.fn, "f32x4"));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &v));
  assert_arg(0, CUJIT_TYPE_BYTES, &v, 16);
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &(vec4){1, 2, 3, 4}),
                       CUJIT_ERROR_INVALID_ARGS, "in parentheses");
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), (&(vec4){5, 6, 7, 8})));
  assert_int_equal(seen.args[0].value.f32, 5);
  /* the launch's own failure comes back as it is */
  seen.result = CUJIT_ERROR_NO_DEVICE;
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &v), CUJIT_ERROR_NO_DEVICE,
                       "no device here to launch 'v' on");
  assert_status_detail(cujit_call_n(NULL, 0, CUJIT_DIM3(1), CUJIT_DIM3(1)),
                       CUJIT_ERROR_INVALID_VALUE, "fn is NULL");
  hand_free(&h);
}

/* More parameters than the stack array holds: the arguments go to the heap. */
static void call_many_parameters(void **state) {
  char types[256] = "";
  hand h;
  size_t i;
  (void)state;
  for (i = 0; i < 40; i++) strcat(types, i ? " u32" : "u32");
  hand_init(&h, NULL, "many", types);
  assert_ok(cujit_function_set_signature(&h.fn, types));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                       12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
                       31, 32, 33, 34, 35, 36, 37, 38, 39));
  assert_int_equal(seen.nargs, 40);
  for (i = 0; i < 40; i++) assert_int_equal(seen.args[i].value.bytes[0], i);
  hand_free(&h);
}

/* ---- signatures read from a module's source ---- */

static const char kSaxpy[] =
    "// saxpy and friends\n"
    "struct P { float a; int b; double c; };\n"
    "__global__ void saxpy(float a, const float *x, float *__restrict__ y, unsigned n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "namespace ns { __global__ void take(P p, float4 v) {} }\n"
    "template <typename T> __global__ void scale(T *x, T s) { x[threadIdx.x] *= s; }\n"
    "template __global__ void scale<float>(float *, float);\n";

static void signature_from_module(void **state) {
  cujit_module *m = compile(kSaxpy, "saxpy.cu", 0);
  hand h;
  (void)state;
  hand_init(&h, m, "saxpy", "f32 ptr ptr u32");
  assert_string_equal(cujit_function_signature(&h.fn), "f32 ptr ptr u32");
  assert_int_equal(h.fn.upper->sig->checked, 1);
  assert_string_equal(h.fn.upper->sig->params[1].name, "x");
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2.0f, (CUdeviceptr)1, (CUdeviceptr)2, 3));
  assert_int_equal(seen.calls, 1);
  hand_free(&h);
  /* a mangled or qualified name finds the declaration too */
  hand_init(&h, m, "_ZN2ns4takeE1P6float4", "{f32 i32 f64} f32x4");
  assert_string_equal(cujit_function_signature(&h.fn), "{f32 i32 f64} f32x4");
  hand_free(&h);
  hand_init(&h, m, "ns::take", "{f32 i32 f64} f32x4");
  assert_string_equal(cujit_function_signature(&h.fn), "{f32 i32 f64} f32x4");
  hand_free(&h);
  /* the layout disagrees: refused, naming the parameter */
  hand_init(&h, m, "saxpy", "f32 ptr ptr u64");
  assert_null(cujit_function_signature(&h.fn));
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_SIGNATURE);
  assert_non_null(strstr(cujit_last_error(), "parameter 4 'n' (u32)"));
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1.0, (CUdeviceptr)1,
                                  (CUdeviceptr)2, 3ull),
                       CUJIT_ERROR_SIGNATURE, "differ in size");
  /* an explicit signature that matches is the way out */
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr u64"));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1.0, (CUdeviceptr)1, (CUdeviceptr)2, 3ull));
  hand_free(&h);
  /* templates need an explicit signature */
  hand_init(&h, m, "scale<float>", "ptr f32");
  assert_null(cujit_function_signature(&h.fn));
  assert_non_null(strstr(cujit_last_error(), "is a template"));
  assert_ok(cujit_function_set_signature(&h.fn, "ptr f32"));
  assert_string_equal(cujit_function_signature(&h.fn), "ptr f32");
  hand_free(&h);
  /* a signature read before the layout was known is checked once it is */
  hand_init(&h, m, "saxpy", NULL);
  h.fn.nparams = 4;
  assert_string_equal(cujit_function_signature(&h.fn), "f32 ptr ptr u32");
  assert_int_equal(h.fn.upper->sig->checked, 0);
  h.fn.nparams = 3;
  h.fn.param_offsets = h.offs;
  h.fn.param_sizes = h.sizes;
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1.0, (CUdeviceptr)1,
                                  (CUdeviceptr)2, 3),
                       CUJIT_ERROR_SIGNATURE, "has 4 parameters, but kernel 'saxpy' has 3");
  hand_free(&h);
  /* no module, no source */
  hand_init(&h, NULL, "k", "i32");
  assert_null(cujit_function_signature(&h.fn));
  assert_non_null(strstr(cujit_last_error(), "no source to read its signature from"));
  hand_free(&h);
  cujit_module_destroy(m);
}

/* ---- bound function pointers ---- */

typedef struct __attribute__((aligned(16))) f4 {
  float x, y, z, w;
} f4;
typedef struct P {
  float a;
  int b;
  double c;
} P;
typedef cujit_status (*wide_fn)(cujit_dim3, cujit_dim3, int8_t, uint16_t, float /* f16 */, double,
                                CUdeviceptr, f4, P, const void * /* b12:4 */, int64_t, float);

static void bound_calls(void **state) {
  const char *types = "i8 u16 f16 f64 ptr f32x4 {f32 i32 f64} b12:4 i64 f32";
  hand h;
  void *ptr = NULL, *ptr2 = NULL;
  wide_fn f;
  f4 v = {1.5f, -2, 3, 4};
  P p = {0.25f, -7, 1e300};
  unsigned char blob[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  int8_t i8 = -5;
  uint16_t u16 = 65535, half = 0x3800;
  double d = 2.25;
  int64_t i64 = INT64_MIN;
  float fl = -0.125f;
  char host[64];
  cujit_launch_options o = {0};
  (void)state;
  hand_init(&h, NULL, "wide", types);
  assert_ok(cujit_function_set_signature(&h.fn, types));
  assert_ok(cujit_function_bind(&h.fn, NULL, &ptr));
  assert_non_null(ptr);
  f = (wide_fn)ptr;
  assert_ok(f(CUJIT_DIM3(2, 3, 4), CUJIT_DIM3(32), i8, u16, 0.5f, d, (CUdeviceptr)0xABC0, v, p,
              blob, i64, fl));
  assert_int_equal(seen.calls, 1);
  assert_dims(CUJIT_DIM3(2, 3, 4), CUJIT_DIM3(32));
  assert_int_equal(seen.nargs, 10);
  assert_arg(0, CUJIT_TYPE_I8, &i8, 1);
  assert_arg(1, CUJIT_TYPE_U16, &u16, 2);
  assert_arg(2, CUJIT_TYPE_F16, &half, 2);
  assert_arg(3, CUJIT_TYPE_F64, &d, 8);
  assert_int_equal(seen.args[4].value.ptr, 0xABC0);
  assert_arg(5, CUJIT_TYPE_BYTES, &v, 16);
  assert_arg(6, CUJIT_TYPE_BYTES, &p, 16);
  assert_arg(7, CUJIT_TYPE_BYTES, blob, 12);
  assert_arg(8, CUJIT_TYPE_I64, &i64, 8);
  assert_arg(9, CUJIT_TYPE_F32, &fl, 4);
  assert_null(seen.opts);
  /* In/Out through a pointer parameter */
  assert_ok(f(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, CUJIT_INOUT(host, sizeof host), v, p,
              blob, 0, 0));
  assert_int_equal(seen.args[4].kind, CUJIT_ARG_INOUT);
  assert_ptr_equal(seen.args[4].host, host);
  /* errors come back from the call, and nothing is launched */
  assert_status_detail(f(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, v, p, NULL, 0, 0),
                       CUJIT_ERROR_INVALID_ARGS, "parameter 8: an opaque (bN) parameter");
  assert_int_equal(seen.calls, 2);
  seen.result = CUJIT_ERROR_NO_DRIVER;
  assert_status_detail(f(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, v, p, blob, 0, 0),
                       CUJIT_ERROR_NO_DRIVER, "no device here to launch 'wide' on");
  seen.result = CUJIT_OK;
  /* options are read at every call */
  assert_ok(cujit_function_bind(&h.fn, &o, &ptr2));
  assert_true(ptr2 != ptr);
  o.shared_bytes = 128;
  assert_ok(((wide_fn)ptr2)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, v, p, blob, 0, 0));
  assert_ptr_equal(seen.opts, &o);
  assert_int_equal(seen.shared, 128);
  o.shared_bytes = 256;
  assert_ok(((wide_fn)ptr2)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, v, p, blob, 0, 0));
  assert_int_equal(seen.shared, 256);
  /* unbinding one leaves the other working; unknown pointers are ignored */
  cujit_function_unbind(&h.fn, ptr);
  cujit_function_unbind(&h.fn, ptr);
  cujit_function_unbind(&h.fn, (void *)bound_calls);
  cujit_function_unbind(NULL, ptr2);
  assert_ok(((wide_fn)ptr2)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, v, p, blob, 0, 0));
  /* a new signature does not change pointers already made */
  assert_ok(cujit_function_set_signature(&h.fn, "i8 u16 b2:2 f64 ptr f32x4 {f32 i32 f64} b12:4 i64 f32"));
  assert_ok(((wide_fn)ptr2)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0.5f, 0, 0, v, p, blob, 0, 0));
  assert_arg(2, CUJIT_TYPE_F16, &half, 2);
  hand_free(&h); /* frees ptr2 with the function */
  assert_null(h.fn.upper); /* freed, the bindings with it */
}

/* Scalars only, 26 of them: integers beyond the six registers' worth and floating-point
 * values beyond the eight land on the stack, interleaved, and libffi must find each. */
typedef cujit_status (*scalars_fn)(cujit_dim3, cujit_dim3, int8_t, uint8_t, int16_t, uint16_t,
                                   int32_t, uint32_t, int64_t, uint64_t, CUdeviceptr, float,
                                   double, float /* f16 */, float /* bf16 */, float, double,
                                   float, double, float, double, int32_t, float, uint64_t,
                                   double, CUdeviceptr, int16_t, float);
#define SCALAR_TYPES "i8 u8 i16 u16 i32 u32 i64 u64 ptr f32 f64 f16 bf16 f32 f64 f32 f64 f32 " \
                     "f64 i32 f32 u64 f64 ptr i16 f32"

static cujit_status call_scalars_k(scalars_fn f, int k) {
  return f(CUJIT_DIM3(5, 6, 7), CUJIT_DIM3(64, 2), (int8_t)(-100 + k), 200, -30000, 60000,
           -2000000000, 4000000000u, INT64_MIN + k, UINT64_MAX - (uint64_t)k,
           (CUdeviceptr)0x7f0000001000ull, 1.25f, -2.5, 0.5f, 1.5f, 3.0f, 4.0, 5.0f, 6.0, 7.0f,
           8.0, -9, 10.0f, 11, 12.0, (CUdeviceptr)0x13000, -14, 15.5f);
}

static void call_scalars(scalars_fn f, int k) { assert_ok(call_scalars_k(f, k)); }

/* A call with every argument set that must fail with `want`. */
static void call_scalars_status(scalars_fn f, cujit_status want) {
  assert_status_detail(call_scalars_k(f, 1), want, "");
}

static void assert_scalars(int k) {
  int8_t i8 = (int8_t)(-100 + k);
  uint8_t u8 = 200;
  int16_t i16 = -30000, i16b = -14;
  uint16_t u16 = 60000, half = 0x3800, bf = 0x3FC0;
  int32_t i32 = -2000000000, i32b = -9;
  uint32_t u32 = 4000000000u;
  int64_t i64 = INT64_MIN + k;
  uint64_t u64 = UINT64_MAX - (uint64_t)k, u64b = 11;
  float fa = 1.25f, f3 = 3.0f, f5 = 5.0f, f7 = 7.0f, f10 = 10.0f, f15 = 15.5f;
  double da = -2.5, d4 = 4.0, d6 = 6.0, d8 = 8.0, d12 = 12.0;
  assert_dims(CUJIT_DIM3(5, 6, 7), CUJIT_DIM3(64, 2));
  assert_int_equal(seen.nargs, 26);
  assert_arg(0, CUJIT_TYPE_I8, &i8, 1);
  assert_arg(1, CUJIT_TYPE_U8, &u8, 1);
  assert_arg(2, CUJIT_TYPE_I16, &i16, 2);
  assert_arg(3, CUJIT_TYPE_U16, &u16, 2);
  assert_arg(4, CUJIT_TYPE_I32, &i32, 4);
  assert_arg(5, CUJIT_TYPE_U32, &u32, 4);
  assert_arg(6, CUJIT_TYPE_I64, &i64, 8);
  assert_arg(7, CUJIT_TYPE_U64, &u64, 8);
  assert_int_equal(seen.args[8].value.ptr, 0x7f0000001000ull);
  assert_arg(9, CUJIT_TYPE_F32, &fa, 4);
  assert_arg(10, CUJIT_TYPE_F64, &da, 8);
  assert_arg(11, CUJIT_TYPE_F16, &half, 2);
  assert_arg(12, CUJIT_TYPE_BF16, &bf, 2);
  assert_arg(13, CUJIT_TYPE_F32, &f3, 4);
  assert_arg(14, CUJIT_TYPE_F64, &d4, 8);
  assert_arg(15, CUJIT_TYPE_F32, &f5, 4);
  assert_arg(16, CUJIT_TYPE_F64, &d6, 8);
  assert_arg(17, CUJIT_TYPE_F32, &f7, 4);
  assert_arg(18, CUJIT_TYPE_F64, &d8, 8);
  assert_arg(19, CUJIT_TYPE_I32, &i32b, 4);
  assert_arg(20, CUJIT_TYPE_F32, &f10, 4);
  assert_arg(21, CUJIT_TYPE_U64, &u64b, 8);
  assert_arg(22, CUJIT_TYPE_F64, &d12, 8);
  assert_int_equal(seen.args[23].value.ptr, 0x13000);
  assert_arg(24, CUJIT_TYPE_I16, &i16b, 2);
  assert_arg(25, CUJIT_TYPE_F32, &f15, 4);
}

static void bound_scalars_every_place(void **state) {
  enum { N = 4 };
  void *ptrs[N], *again = NULL;
  scalars_fn stale;
  hand h;
  int i;
  (void)state;
  hand_init(&h, NULL, "sc", SCALAR_TYPES);
  assert_ok(cujit_function_set_signature(&h.fn, SCALAR_TYPES));
  for (i = 0; i < N; i++) assert_ok(cujit_function_bind(&h.fn, NULL, &ptrs[i]));
  for (i = 0; i < N; i++) { /* each pointer sees its own call's arguments */
    seen.calls = 0;
    call_scalars((scalars_fn)ptrs[i], 10 * i + 1);
    assert_int_equal(seen.calls, 1);
    assert_scalars(10 * i + 1);
  }
  /* an unbound pointer refuses the call, launching nothing; the others go on */
  stale = (scalars_fn)ptrs[0];
  cujit_function_unbind(&h.fn, ptrs[0]);
  seen.calls = 0;
  assert_status_detail(stale(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                       CUJIT_ERROR_INVALID_VALUE, "after cujit_function_unbind()");
  assert_int_equal(seen.calls, 0);
  call_scalars((scalars_fn)ptrs[1], 3);
  assert_scalars(3);
  /* a new binding never takes a freed pointer's place */
  assert_ok(cujit_function_bind(&h.fn, NULL, &again));
  assert_true(again != ptrs[0]);
  assert_status_detail(stale(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                       CUJIT_ERROR_INVALID_VALUE, "nothing was launched");
  call_scalars((scalars_fn)again, 5);
  assert_scalars(5);
  hand_free(&h);
  assert_null(h.fn.upper); /* freed, the bindings with it */
  seen.calls = 0;
  call_scalars_status((scalars_fn)again, CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(seen.calls, 0);
}

typedef cujit_status (*small_fn)(cujit_dim3, cujit_dim3, const void *);

static void bind_refusals(void **state) {
  hand h;
  void *ptr = (void *)1;
  double x[2] = {3, 4};
  (void)state;
  hand_init(&h, NULL, "k", "{i8 i32:8}");
  assert_ok(cujit_function_set_signature(&h.fn, "{i8 i32:8}"));
  assert_status_detail(cujit_function_bind(&h.fn, NULL, &ptr), CUJIT_ERROR_SIGNATURE,
                       "kernel 'k', parameter 1 ({i8 i32:8}): it has a member aligned beyond its "
                       "size");
  assert_null(ptr);
  assert_non_null(strstr(cujit_last_error(), "bN:A"));
  /* the suggested way out: the same bytes as an opaque blob, passed by address */
  assert_ok(cujit_function_set_signature(&h.fn, "b16:8"));
  assert_ok(cujit_function_bind(&h.fn, NULL, &ptr));
  assert_ok(((small_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), x));
  assert_arg(0, CUJIT_TYPE_BYTES, x, 16);
  hand_free(&h);
  hand_init(&h, NULL, "k", "f32:16");
  assert_ok(cujit_function_set_signature(&h.fn, "f32:16"));
  assert_status_detail(cujit_function_bind(&h.fn, NULL, &ptr), CUJIT_ERROR_SIGNATURE,
                       "aligned beyond its size");
  hand_free(&h);
  assert_status_detail(cujit_function_bind(NULL, NULL, &ptr), CUJIT_ERROR_INVALID_VALUE,
                       "fn is NULL");
  hand_init(&h, NULL, "k", "i32");
  assert_status_detail(cujit_function_bind(&h.fn, NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "fnptr is NULL");
  assert_status_detail(cujit_function_bind(&h.fn, NULL, &ptr), CUJIT_ERROR_SIGNATURE,
                       "no source to read its signature from");
  hand_free(&h);
}

/* Nested and vector structs by value through libffi, several passed on the stack. */
typedef struct { short s[3]; } in3;
typedef struct { in3 in; double d[2]; } out2;
typedef struct { unsigned char x, y, z; } uc3;
typedef struct __attribute__((aligned(8))) { int x, y; } i2;
typedef cujit_status (*structs_fn)(cujit_dim3, cujit_dim3, out2, uc3, i2, f4, f4, f4, f4, f4,
                                   double, out2, char);

static void bound_structs(void **state) {
  const char *types = "{{i16[3]} f64[2]} u8x3 i32x2 f32x4 f32x4 f32x4 f32x4 f32x4 f64 "
                      "{{i16[3]} f64[2]} i8";
  hand h;
  void *ptr;
  out2 o = {{{1, -2, 3}}, {0.5, -0.25}}, o2 = {{{7, 8, 9}}, {1e10, -1e-10}};
  uc3 u = {250, 251, 252};
  i2 iv = {-1, 2};
  f4 a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c = {9, 10, 11, 12};
  double d = -3.5;
  char ch = 'x';
  size_t i;
  (void)state;
  hand_init(&h, NULL, "s", types);
  assert_ok(cujit_function_set_signature(&h.fn, types));
  assert_ok(cujit_function_bind(&h.fn, NULL, &ptr));
  assert_ok(((structs_fn)ptr)(CUJIT_DIM3(9), CUJIT_DIM3(8), o, u, iv, a, b, c, a, b, d, o2, ch));
  assert_int_equal(seen.nargs, 11);
  assert_arg(0, CUJIT_TYPE_BYTES, &o, sizeof o);
  assert_arg(1, CUJIT_TYPE_BYTES, &u, 3);
  assert_arg(2, CUJIT_TYPE_BYTES, &iv, 8);
  assert_arg(3, CUJIT_TYPE_BYTES, &a, 16);
  assert_arg(4, CUJIT_TYPE_BYTES, &b, 16);
  assert_arg(5, CUJIT_TYPE_BYTES, &c, 16);
  assert_arg(6, CUJIT_TYPE_BYTES, &a, 16);
  assert_arg(7, CUJIT_TYPE_BYTES, &b, 16);
  assert_arg(8, CUJIT_TYPE_F64, &d, 8);
  for (i = 0; i < 3; i++) assert_int_equal(((const short *)seen.big[9])[i], o2.in.s[i]);
  assert_arg(9, CUJIT_TYPE_BYTES, &o2, sizeof o2);
  assert_arg(10, CUJIT_TYPE_I8, &ch, 1);
  assert_int_equal(seen.grid.x, 9);
  assert_int_equal(seen.block.x, 8);
  hand_free(&h);
}

/* ---- threads: the first use of a signature races safely ---- */

static int counted;

static cujit_status count_launch(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                                 const cujit_arg *args, size_t nargs,
                                 const cujit_launch_options *opts) {
  (void)fn, (void)grid, (void)block, (void)opts;
  if (nargs != 4 || args[0].value.f32 != 2.0f || args[3].value.bytes[0] != 7)
    return cj_fail(CUJIT_ERROR_INVALID_ARGS, "wrong arguments");
  __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
  return CUJIT_OK;
}

typedef cujit_status (*saxpy_fn)(cujit_dim3, cujit_dim3, float, CUdeviceptr, CUdeviceptr,
                                 unsigned);

static void *caller(void *arg) {
  cujit_function *fn = arg;
  void *ptr = NULL;
  int i;
  for (i = 0; i < 200; i++)
    if (cujit_call(fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2.0f, (CUdeviceptr)1, (CUdeviceptr)2, 7) !=
        CUJIT_OK)
      return (void *)1;
  if (cujit_function_bind(fn, NULL, &ptr) != CUJIT_OK) return (void *)2;
  for (i = 0; i < 200; i++)
    if (((saxpy_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), 2.0f, 1, 2, 7) != CUJIT_OK) return (void *)3;
  cujit_function_unbind(fn, ptr);
  return NULL;
}

static void threads_share_a_function(void **state) {
  enum { T = 8 };
  cujit_module *m = compile(kSaxpy, "saxpy.cu", 0);
  pthread_t th[T];
  hand h;
  void *ret;
  int i;
  (void)state;
  hand_init(&h, m, "saxpy", "f32 ptr ptr u32");
  cj_set_launcher(count_launch);
  counted = 0;
  for (i = 0; i < T; i++) assert_int_equal(pthread_create(&th[i], NULL, caller, &h.fn), 0);
  for (i = 0; i < T; i++) {
    assert_int_equal(pthread_join(th[i], &ret), 0);
    assert_null(ret);
  }
  cj_set_launcher(NULL);
  assert_int_equal(counted, T * 400);
  assert_null(h.fn.upper->sig->older); /* read once */
  hand_free(&h);
  cujit_module_destroy(m);
}

/* Every allocation of reading, checking and binding fails in turn: out of memory is
 * reported, nothing crashes or leaks (the fault build runs under AddressSanitizer). */
static const char kFaultTypes[] = "i8 {i8 {i16 f32}[2] f64[3]} f32x4 b12:4 ptr";

static cujit_status read_bind_call(hand *h) {
  void *ptr;
  cj_signature *s = NULL;
  cujit_status st = cujit_function_set_signature(&h->fn, kFaultTypes);
  if (st == CUJIT_OK) st = cj_sig_from_source(kLayouts, "layouts.cu", "structs", NULL, &s);
  cj_sig_free(s);
  if (st == CUJIT_OK) st = cujit_function_bind(&h->fn, NULL, &ptr);
  return st;
}

static void allocation_failures(void **state) {
  long n;
  int fired = 0;
  (void)state;
  for (n = 1; n < 100000; n++) {
    hand h;
    cujit_status st;
    hand_init(&h, NULL, "structs", kFaultTypes);
    cujit_test_fail_alloc_after(n);
    st = read_bind_call(&h);
    if (cujit_test_alloc_countdown() != 0) {
      cujit_test_fail_alloc_after(0);
      hand_free(&h);
      assert_ok(st);
      break;
    }
    cujit_test_fail_alloc_after(0);
    hand_free(&h);
    fired++;
    if (st != CUJIT_ERROR_OUT_OF_MEMORY)
      fail_msg("allocation %ld: %s: %s", n, cujit_status_name(st), cujit_last_error());
    assert_non_null(strstr(cujit_last_error(), "out of host memory"));
  }
  assert_true(fired > 20);
}
#endif /* CUJIT_FAULT_INJECTION */

/* ---- freed pointers (every build) ---- */

typedef cujit_status (*mixed_fn)(cujit_dim3, cujit_dim3, int, double, CUdeviceptr);

/* A pointer freed by cujit_function_unbind() or with its function refuses every later
 * call with CUJIT_ERROR_INVALID_VALUE, and is never handed out again. No live pointer is
 * called here, so this needs no recorder. */
static void stale_pointers_refuse(void **state) {
  enum { CYCLES = 300 };
  static void *seen_ptrs[CYCLES];
  cujit_launch_options o = {0};
  void *live = NULL, *gone = NULL, *p;
  hand h;
  int i, j;
  (void)state;
  hand_init(&h, NULL, "mixed", "i32 f64 ptr");
  assert_ok(cujit_function_set_signature(&h.fn, "i32 f64 ptr"));
  assert_ok(cujit_function_bind(&h.fn, &o, &live));
  assert_ok(cujit_function_bind(&h.fn, NULL, &gone));
  cujit_function_unbind(&h.fn, gone);
  assert_status_detail(((mixed_fn)gone)(CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 2.0, 0x1000),
                       CUJIT_ERROR_INVALID_VALUE,
                       "a bound kernel was called after cujit_function_unbind() or the "
                       "destruction of its module freed it; nothing was launched");
  assert_non_null(strstr(cujit_last_error(), "bind it again"));
  cujit_function_unbind(&h.fn, gone); /* once is enough; again is ignored */
  assert_status_detail(((mixed_fn)gone)(CUJIT_DIM3(2), CUJIT_DIM3(3), -1, 0.5, 0),
                       CUJIT_ERROR_INVALID_VALUE, "nothing was launched");
  /* bound and unbound over and over: every pointer is new */
  for (i = 0; i < CYCLES; i++) {
    assert_ok(cujit_function_bind(&h.fn, NULL, &p));
    assert_true(p != gone && p != live);
    for (j = 0; j < i; j++)
      if (seen_ptrs[j] == p) fail_msg("cycle %d was given cycle %d's freed pointer again", i, j);
    seen_ptrs[i] = p;
    cujit_function_unbind(&h.fn, p);
  }
  assert_status_detail(((mixed_fn)seen_ptrs[CYCLES / 2])(CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 2.0, 0),
                       CUJIT_ERROR_INVALID_VALUE, "after cujit_function_unbind()");
  /* freeing the function (as cujit_module_destroy does) frees the live one too */
  hand_free(&h);
  assert_status_detail(((mixed_fn)live)(CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 2.0, 0),
                       CUJIT_ERROR_INVALID_VALUE, "destruction of its module");
}

#ifndef CUJIT_FAULT_INJECTION
/* Stands in for each test that needs the test hooks. */
static void without_recorder(void **state) {
  (void)state;
  printf("SKIP: this test needs the library's test hooks (the launch recorder, "
         "cj_set_launcher(), and the allocation-failure hook), which only the fault-injection "
         "build has (-DCUJIT_FAULT_INJECTION=ON; scripts/check runs it)\n");
  skip();
}
#endif

/* A test that launches through the recorder: in the fault-injection build it runs with
 * the recorder installed, elsewhere it is reported skipped under its own name. */
#ifdef CUJIT_FAULT_INJECTION
#  define RECORDED(t) cmocka_unit_test_setup_teardown(t, setup_recorder, teardown_recorder)
#else
#  define RECORDED(t) {#t, without_recorder, NULL, NULL, NULL}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(declarations),
      cmocka_unit_test(declaration_errors),
      cmocka_unit_test(overloads_by_layout),
      cmocka_unit_test(layouts_match_nvrtc),
      cmocka_unit_test(type_strings),
      cmocka_unit_test(layout_check),
      cmocka_unit_test(promotions),
      cmocka_unit_test(pointers_and_values),
      RECORDED(call_counts_arguments),
      RECORDED(call_many_parameters),
      RECORDED(signature_from_module),
      RECORDED(bound_calls),
      RECORDED(bind_refusals),
      RECORDED(bound_scalars_every_place),
      RECORDED(bound_structs),
      RECORDED(threads_share_a_function),
      RECORDED(allocation_failures),
      cmocka_unit_test(stale_pointers_refuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_elementwise - the elementwise generator's loop on chunks, without a GPU:
 *  - which operations may run on chunks, as read from their text (ewtext.c), on many
 *    operations, tricky ones included (other indices, i declared again, addresses,
 *    members, macros, comments, strings, lambdas, digraphs), and which arrays each uses,
 *    may write and assigns whole;
 *  - where a call starts its chunks (cj_gen_ew_head): views at every offset, arrays of mixed
 *    sizes, a written array overlapping another, ranges with steps;
 *  - the generated kernels compile with NVRTC for sm_90 for every kind of element, and
 *    lin_comb's reads and writes 16 bytes at a time; the kernel that does not compile
 *    with chunks falls back to the one at a time;
 *  - the generated loops give the same elements as the operation one at a time: the
 *    kernels compiled as C++ for the host (with the host C++ compiler, where there is one)
 *    and run thread after thread, for sizes from 0 up, views at every offset, grids of one
 *    thread to many, ranges, and every alignment checked by UBSan;
 *  - on the checking fake driver, calls through the public API on views, which launch
 *    without a violation. */
#include "testutil.h"
#include "gen/gen.h"
#include "fakedriver/checkdriver.h"

/* ---- what the text says ---- */

typedef struct decision {
  const char *decl, *op, *preamble, *loop_prep, *after_loop;
  int chunks;
  unsigned used, written, whole; /* bit k: declaration k */
} decision;

#define LIN "float a, float *x, float b, float *y, float *z" /* x: 2, y: 8, z: 16 */
#define INTS "int a, int *x, int b, int *y, int *z"

static const decision kDecisions[] = {
    /* yes */
    {LIN, "z[i] = a*x[i] + b*y[i]", NULL, NULL, NULL, 1, 0x1a, 0x10, 0x10},
    {LIN, "z[ i ] = a * x [i] + b*y[\ti ]", NULL, NULL, NULL, 1, 0x1a, 0x10, 0x10},
    {LIN, "z[i] = x[i] /* y[i+1] */ + 1; // x[i-1]\n", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "y[i] += x[i]", NULL, NULL, NULL, 1, 0x0a, 0x08, 0},
    {LIN, "z[i] = x[i]; z[i] *= 2", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "if (x[i] > 0) z[i] = x[i]; else z[i] = -x[i]", NULL, NULL, NULL, 1, 0x12, 0x10, 0},
    {LIN, "do z[i] = x[i]; while (0)", NULL, NULL, NULL, 1, 0x12, 0x10, 0},
    {LIN, "z[i] = x[i] > 0 ? sqrtf(x[i]) : 0.0f", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = i * 2.0f + x[i]", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = (float)i", NULL, NULL, NULL, 1, 0x10, 0x10, 0x10},
    {LIN, "z[i] = x[i] * 2 + (i % 3) - 2 * i + x[i] * i", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "if (i < 5) z[i] = 0", NULL, NULL, NULL, 1, 0x10, 0x10, 0},
    {LIN, "float t = x[i] * a; z[i] = t * t", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = x[i]; y[i] = z[i]", NULL, NULL, NULL, 1, 0x1a, 0x18, 0x18},
    {LIN, "z[i] = z[i] + x[i]", NULL, NULL, NULL, 1, 0x12, 0x10, 0},
    {LIN, "z[i]++", NULL, NULL, NULL, 1, 0x10, 0x10, 0},
    {LIN, "++z[i]; --y[i]", NULL, NULL, NULL, 1, 0x18, 0x18, 0},
    {LIN, "z[i] = (printf(\"%d x[i+1]\\n\", (int)i), x[i])", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = 'x' + x[i] + '\\''", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = sizeof x[i]", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {LIN, "z[i] = fmaxf(x[i], y[i])", NULL, NULL, NULL, 1, 0x1a, 0x10, 0x10},
    {LIN, "z[i] = sq(x[i])", "__device__ float sq(float v) { return v * v; }", NULL, NULL, 1, 0x12,
     0x10, 0x10},
    /* a preamble function may take a reference: its arguments may be written */
    {LIN, "twice(z[i])", "__device__ void twice(float &v) { v *= 2; }", NULL, NULL, 1, 0x10, 0x10,
     0},
    {LIN, "z[i] = x[i], a += 1", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {INTS, "z[i] = x[i] & 1", NULL, NULL, NULL, 1, 0x12, 0x10, 0x10},
    {INTS, "z[i] = (x[i] > 0) && (y[i] > 0)", NULL, NULL, NULL, 1, 0x1a, 0x10, 0x10},
    {"complex<float> *c, float *x", "x[i] = c[i].real()", NULL, NULL, NULL, 1, 0x3, 0x3, 0x2},
    /* no */
    {LIN, "z[i] = x[i+1]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i-1] + x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[2*i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[0]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = *(x + i)", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[(i)]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i][0]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i](1)", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "float *p = x; z[i] = p[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = (&x[i])[1]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = i[x]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "long long i = 0; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "for (int i = 0; i < 3; i++) z[i] += x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "int j = 0, i = 2; z[i] = j", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "struct S { int i; } s; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "decltype(a) i = 0; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "__attribute__((unused)) int i = 0; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "auto [i, j] = f(); z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "const auto [i, j] = f(); z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "int (i) = 0; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "float *i; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "typedef int i; z[0] = x[0]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = s.x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = ::x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = sinf(i)", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = a * i", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]; return", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "if (x[i] < 0) return; z[i] = 1", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]; if (a > 0) goto done; done:", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = threadIdx.x", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "__syncthreads(); z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = __shfl_sync(0xffffffff, x[i], 0)", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]", NULL, "float *q = x;", NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]", NULL, NULL, "z[0] = 1;", 0, 0, 0, 0},
    {LIN, "z[i] = X", "#define X x[i+1]", NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]", "#include <cuda/std/utility>\n", NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]", "%:define Y 1\n", NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i] + cj_n", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "\n#pragma unroll\nz[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i] \\\n + 1", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = R\"(x[i+1])\"[0]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z<:i:> = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "auto f = [&](long long k) { return x[k]; }; z[i] = f(i)", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "auto g = [=] { return 1; }; z[i] = g()", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "float &r = z[i]; r = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "auto &&r = z[i]; r = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = (x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i]) + (1", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i] /* unterminated", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = \"x", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "asm(\"trap;\"); z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "__shared__ float s[32]; z[i] = x[i]", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "(void)a", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i] @ 2", NULL, NULL, NULL, 0, 0, 0, 0},
    {LIN, "z[i] = x[i] + const_cast<float &>(y[i])", NULL, NULL, NULL, 0, 0, 0, 0},
    {INTS, "z[i] = a & b", NULL, NULL, NULL, 0, 0, 0, 0},
    {"float *i, float *z", "z[i] = 1", NULL, NULL, NULL, 0, 0, 0, 0},
};

static void which_operations_take_chunks(void **state) {
  size_t c;
  (void)state;
  for (c = 0; c < CJ_COUNT(kDecisions); c++) {
    const decision *t = &kDecisions[c];
    cj_gen_decl *d = NULL;
    size_t n = 0;
    cj_gen_ew_access a;
    assert_ok(cj_gen_decl_parse(t->decl, &d, &n));
    cj_gen_ew_access_of(t->op, d, n, t->preamble, t->loop_prep, t->after_loop, &a);
    if (a.chunks != t->chunks || a.used != t->used || a.written != t->written ||
        a.whole != t->whole)
      fail_msg("\"%s\": chunks %d used %#llx written %#llx whole %#llx; wanted %d %#x %#x %#x",
               t->op, a.chunks, (unsigned long long)a.used, (unsigned long long)a.written,
               (unsigned long long)a.whole, t->chunks, t->used, t->written, t->whole);
    cj_free(d);
  }
}

/* ---- kernels made by hand from a declaration and an operation ---- */

typedef struct ew {
  cj_gen_decl *d;
  size_t n;
  int types[64];
  char params[1024];
  cj_gen_ew_kernel k;
} ew;

static void ew_init(ew *e, const char *name, const char *decl, const char *op,
                    const char *preamble) {
  size_t i;
  memset(e, 0, sizeof *e);
  assert_ok(cj_gen_decl_parse(decl, &e->d, &e->n));
  for (i = 0; i < e->n; i++) {
    size_t used = strlen(e->params);
    e->types[i] = e->d[i].type;
    snprintf(e->params + used, sizeof e->params - used, "%s%s%s %s%s", i ? ", " : "",
             e->d[i].is_const ? "const " : "", cj_elem_of(e->d[i].type)->c_name,
             e->d[i].is_array ? "*" : "", e->d[i].name);
  }
  e->k.name = name;
  e->k.params = e->params;
  e->k.body = op;
  e->k.preamble = preamble;
  e->k.types = e->types;
  e->k.n_types = e->n;
  e->k.decls = e->d;
  cj_gen_ew_access_of(op, e->d, e->n, preamble, NULL, NULL, &e->k.access);
  for (i = 0; i < e->n; i++)
    if (e->d[i].is_const) e->k.access.written &= ~((uint64_t)1 << i);
}

static void ew_free(ew *e) { cj_free(e->d); }

static char *ew_text(const ew *e, int chunks) {
  cj_buf b = {0};
  cj_gen_ew_source(&b, &e->k, chunks);
  assert_false(b.oom);
  return b.data;
}

static cujit_status compile(const char *src, cujit_module **m) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "sm_90";
  return cujit_module_from_source(m, src, "ew.cu", &o);
}

/* ---- where a call's chunks start ---- */

static long long head_of(ew *e, int64_t start, int64_t step, int64_t size,
                         const CUdeviceptr *ptrs) {
  cujit_arg args[8];
  size_t i;
  for (i = 0; i < e->n; i++) args[i] = e->d[i].is_array ? cujit_ptr(ptrs[i]) : cujit_f32(1);
  return cj_gen_ew_head(&e->k, cj_gen_ew_width(&e->k), start, step, size, args);
}

static void chunks_start_at_a_boundary(void **state) {
  const CUdeviceptr base = 0x7f0000100000ull;
  ew lin, mix, alias;
  int off;
  (void)state;
  ew_init(&lin, "lin", LIN, "z[i] = a*x[i] + b*y[i]", NULL);
  assert_int_equal(cj_gen_ew_width(&lin.k), 4);
  for (off = 0; off < 8; off++) { /* views x[off:], y[off:], z[off:] */
    CUdeviceptr p[5] = {0, base + 4 * off, 0, base + 0x10000 + 4 * off, base + 0x20000 + 4 * off};
    assert_int_equal(head_of(&lin, 0, 1, 1000, p), (4 - off % 4) % 4);
    assert_int_equal(head_of(&lin, 3, 1, 1000, p), (4 - (off + 3) % 4) % 4); /* a range */
    assert_int_equal(head_of(&lin, 0, 2, 1000, p), -1);                      /* a step */
    assert_int_equal(head_of(&lin, 8, -1, 1000, p), -1);
    p[3] += 4; /* one array a float further on: no common boundary */
    assert_int_equal(head_of(&lin, 0, 1, 1000, p), -1);
    p[3] += 12; /* four floats: one again */
    assert_int_equal(head_of(&lin, 0, 1, 1000, p), (4 - off % 4) % 4);
  }
  { /* a pointer not aligned to its element: one at a time */
    CUdeviceptr p[5] = {0, base + 2, 0, base + 0x10002, base + 0x20002};
    assert_int_equal(head_of(&lin, 0, 1, 1000, p), -1);
  }
  /* 8-byte, 1-byte and 4-byte elements: two a chunk, the same offset in elements */
  ew_init(&mix, "mix", "double *d, unsigned char *u, float *f", "f[i] = (float)(d[i] * u[i]) + i",
          NULL);
  assert_int_equal(cj_gen_ew_width(&mix.k), 2);
  for (off = 0; off < 4; off++) {
    CUdeviceptr p[3] = {base + 8 * off, base + 0x10000 + off, base + 0x20000 + 4 * off};
    assert_int_equal(head_of(&mix, 0, 1, 100, p), off % 2);
  }
  /* a written array overlapping another: one at a time; two read-only ones may */
  ew_init(&alias, "alias", "float *x, float *y, float *z", "z[i] = x[i] + y[i]", NULL);
  {
    CUdeviceptr p[3] = {base, base, base + 0x10000};
    assert_int_equal(head_of(&alias, 0, 1, 1000, p), 0);
    p[2] = base; /* z is x */
    assert_int_equal(head_of(&alias, 0, 1, 1000, p), -1);
    p[2] = base + 4 * 999; /* z's first element is x's last */
    assert_int_equal(head_of(&alias, 0, 1, 1000, p), -1);
    p[2] = base + 4 * 1000; /* just past it */
    assert_int_equal(head_of(&alias, 0, 1, 1000, p), 0);
  }
  ew_free(&lin);
  ew_free(&mix);
  ew_free(&alias);
}

/* ---- the kernels compile ---- */

typedef struct kernel_case {
  const char *decl, *op, *preamble;
  unsigned width; /* 0: no chunks */
} kernel_case;

static const kernel_case kKernels[] = {
    {LIN, "z[i] = a*x[i] + b*y[i]", NULL, 4},
    {"double *d, unsigned char *u, float *f", "f[i] = (float)(d[i] * u[i]) + i", NULL, 2},
    {"__half *h, const __half *g, float s", "h[i] = __hmul(g[i], __float2half(s))", NULL, 8},
    {"__nv_bfloat16 *h, const float *x", "h[i] = __float2bfloat16(x[i] * 2)", NULL, 4},
    {"complex<float> *c, float *x", "x[i] = c[i].real(); c[i] *= 2", NULL, 2},
    {"bool *m, const unsigned char *c", "m[i] = c[i] > 7", NULL, 16},
    {"int *x, const int *y", "x[i] += y[i] * 3", NULL, 4},
    {"long long *x, unsigned long long *y, short *s", "x[i] = (long long)y[i] - i + s[i]", NULL, 2},
    {"float *z, const float *x", "if (x[i] > 0) z[i] = x[i]", NULL, 4},
    {LIN, "twice(z[i])", "__device__ void twice(float &v) { v *= 2; }", 4},
    {LIN, "z[i] = x[i] > 0 ? sqrtf(x[i]) : 0.0f", NULL, 4},
    {LIN, "z[i] = x[i+1]", NULL, 0},
};

static void kernels_compile_with_chunks(void **state) {
  size_t c;
  (void)state;
  for (c = 0; c < CJ_COUNT(kKernels); c++) {
    const kernel_case *t = &kKernels[c];
    cujit_module *m = NULL;
    char *src;
    ew e;
    int chunks;
    ew_init(&e, "k", t->decl, t->op, t->preamble);
    if (cj_gen_ew_width(&e.k) != t->width)
      fail_msg("\"%s\": width %u, wanted %u", t->op, cj_gen_ew_width(&e.k), t->width);
    for (chunks = c == 0 ? 0 : 1; chunks < 2; chunks++) { /* one at a time: lin_comb's */
      src = ew_text(&e, chunks);
      if (chunks && t->width) assert_non_null(strstr(src, "cj_head"));
      if (chunks && !t->width) assert_null(strstr(src, "cj_head")); /* the same kernel */
      if (compile(src, &m) != CUJIT_OK)
        fail_msg("\"%s\" (chunks %d): %s\n%s", t->op, chunks, cujit_last_error(), src);
      if (c == 0 && chunks) { /* lin_comb: x and y read, z written, 16 bytes at a time */
        const char *ptx = cujit_module_ptx(m, NULL);
        assert_non_null(strstr(ptx, "ld.global.v4"));
        assert_non_null(strstr(ptx, "st.global.v4"));
      }
      cujit_module_destroy(m);
      free(src);
    }
    ew_free(&e);
  }
}

/* An array written where the text shows no write (through parentheses, here) is read-only
 * in the kernel with chunks, which then does not compile: the one at a time is used. */
static void a_kernel_that_does_not_compile_with_chunks(void **state) {
  ew e;
  cujit_module *m = NULL;
  cujit_function *fn = NULL;
  char *src;
  int chunks = -1;
  (void)state;
  ew_init(&e, "paren", "float *z, const float *x", "(z[i]) = x[i]", NULL);
  assert_int_equal(e.k.access.chunks, 1);
  assert_int_equal(e.k.access.written, 0); /* unseen */
  src = ew_text(&e, 1);
  assert_int_equal(compile(src, &m), CUJIT_ERROR_COMPILE);
  free(src);
  src = ew_text(&e, 0);
  assert_ok(compile(src, &m));
  cujit_module_destroy(m);
  free(src);
  assert_ok(cj_gen_ew_prepare(&e.k, &fn, &chunks)); /* on the checking driver */
  assert_int_equal(chunks, 0);
  assert_int_equal(e.k.chunks_failed, 1);
  assert_non_null(fn);
  chunks = -1;
  assert_ok(cj_gen_ew_prepare(&e.k, &fn, &chunks)); /* not tried again */
  assert_int_equal(chunks, 0);
  ew_free(&e);
  /* a kernel whose operation does not compile either: the one at a time's errors */
  ew_init(&e, "broken", "float *z, const float *x", "z[i] = x[i] +", NULL);
  assert_int_equal(e.k.access.chunks, 1);
  assert_status_detail(cj_gen_ew_prepare(&e.k, &fn, &chunks), CUJIT_ERROR_COMPILE, "");
  assert_non_null(strstr(cujit_last_error(), "for (; cj_k < cj_n; cj_k += cj_stride)"));
  ew_free(&e);
}

/* ---- the loops, compiled for the host and run thread after thread ---- */

#ifdef CUJIT_TEST_CXX /* the host sources, used only with a C++ compiler */
static const char kHostPrelude[] =
    "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
    "struct cj_dim3 { unsigned x = 1, y = 1, z = 1; };\n"
    "static cj_dim3 gridDim, blockDim, blockIdx, threadIdx;\n"
    "#define __global__\n#define __device__\n#define __forceinline__ inline\n"
    "struct alignas(16) uint4 { unsigned x, y, z, w; };\n"
    "struct alignas(8) uint2 { unsigned x, y; };\n";

/* The host kernels' checks: each runs a kernel over arrays placed at every offset from an
 * aligned address, for many sizes and grids, with the chunks where a call would take them
 * (and without), and compares every element with the operation done here one at a time,
 * and the elements around with what they were. */
static const char kHostMain[] =
    "template <class F> static void launch(unsigned blocks, F f) {\n"
    "  gridDim.x = blocks; blockDim.x = 32;\n"
    "  for (unsigned b = 0; b < blocks; b++)\n"
    "    for (unsigned t = 0; t < 32; t++) { blockIdx.x = b; threadIdx.x = t; f(); }\n"
    "}\n"
    "static int fails;\n"
    "#define CHECK(c, ...) do { if (!(c) && fails++ < 20) printf(__VA_ARGS__); } while (0)\n"
    "static long long head(const void *p, size_t es, unsigned w, int on) {\n"
    "  return on ? (long long)((w - (uintptr_t)p / es % w) % w) : -1;\n"
    "}\n"
    "template <class T> static T *buf(size_t n) {\n"
    "  return (T *)aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);\n"
    "}\n"
    "static const long long sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000,\n"
    "                                  4099};\n"
    "static const unsigned grids[] = {1, 3, 64};\n"
    "#define EACH_CASE(W) \\\n"
    "  for (long long n : sizes) for (int off = 0; off < 2 * (W); off++) \\\n"
    "  for (unsigned g : grids) for (int on = 0; on < 2; on++) \\\n"
    "  for (long long start = 0; start <= (n > 3 ? 3 : n); start += (n > 3 ? 3 : 1)) \\\n"
    "  for (long long step = 1; step <= (start ? 2 : 1); step++)\n"
    "static long long count_of(long long n, long long start, long long step) {\n"
    "  return (n - start + step - 1) / step;\n"
    "}\n"
    "static bool in_range(long long k, long long start, long long step, long long cnt) {\n"
    "  return k >= start && (k - start) % step == 0 && (k - start) / step < cnt;\n"
    "}\n"
    "static void lin() {\n"
    "  EACH_CASE(4) {\n"
    "    float *x = buf<float>(n + 16), *y = buf<float>(n + 16), *z = buf<float>(n + 16);\n"
    "    for (long long k = 0; k < n + 16; k++) x[k] = k * 0.5f + 1, y[k] = 3.0f - k, z[k] = -7;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(x + off + start, 4, 4, on) : -1;\n"
    "    launch(g, [&] { k_lin::k_lin(2.5f, x + off, -1.5f, y + off, z + off, start, step, cnt, "
    "h); });\n"
    "    for (long long k = -off; k < n + 16 - off; k++) {\n"
    "      float want = in_range(k, start, step, cnt) ? 2.5f * x[off + k] + -1.5f * y[off + k] : "
    "-7;\n"
    "      CHECK(z[off + k] == want, \"lin n %lld off %d g %u head %lld start %lld step %lld:\"\n"
    "            \" z[%lld] %g, wanted %g\\n\", n, off, g, h, start, step, k, z[off + k], want);\n"
    "    }\n"
    "    free(x), free(y), free(z);\n"
    "  }\n"
    "}\n"
    "static void mix() {\n"
    "  EACH_CASE(2) {\n"
    "    double *d = buf<double>(n + 8);\n"
    "    unsigned char *u = buf<unsigned char>(n + 8);\n"
    "    float *f = buf<float>(n + 8);\n"
    "    for (long long k = 0; k < n + 8; k++) d[k] = k * 0.25, u[k] = (unsigned char)(k * 7), "
    "f[k] = -7;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(d + off + start, 8, 2, on) : -1;\n"
    "    launch(g, [&] { k_mix::k_mix(d + off, u + off, f + off, start, step, cnt, h); });\n"
    "    for (long long k = -off; k < n + 8 - off; k++) {\n"
    "      float want = in_range(k, start, step, cnt) ? (float)(d[off + k] * u[off + k]) + k : "
    "-7;\n"
    "      CHECK(f[off + k] == want, \"mix n %lld off %d head %lld: f[%lld] %g, wanted %g\\n\",\n"
    "            n, off, h, k, f[off + k], want);\n"
    "    }\n"
    "    free(d), free(u), free(f);\n"
    "  }\n"
    "}\n"
    "static void rmw() { /* read, modified and written: and one written only where x > 0 */\n"
    "  EACH_CASE(4) {\n"
    "    int *x = buf<int>(n + 16), *y = buf<int>(n + 16);\n"
    "    float *z = buf<float>(n + 16), *w = buf<float>(n + 16);\n"
    "    for (long long k = 0; k < n + 16; k++) x[k] = (int)k, y[k] = (int)(k % 5) - 2, z[k] = -7, "
    "w[k] = -7;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(x + off + start, 4, 4, on) : -1;\n"
    "    launch(g, [&] { k_rmw::k_rmw(x + off, y + off, start, step, cnt, h); });\n"
    "    for (long long k = -off; k < n + 16 - off; k++) {\n"
    "      int want = (int)(off + k) + (in_range(k, start, step, cnt) ? y[off + k] * 3 : 0);\n"
    "      CHECK(x[off + k] == want, \"rmw n %lld off %d head %lld: x[%lld] %d, wanted %d\\n\",\n"
    "            n, off, h, k, x[off + k], want);\n"
    "    }\n"
    "    for (long long k = 0; k < n + 16; k++) w[k] = (k % 3) ? (float)k : -(float)k, z[k] = -7;\n"
    "    launch(g, [&] { k_cond::k_cond(z + off, w + off, start, step, cnt, h); });\n"
    "    for (long long k = -off; k < n + 16 - off; k++) {\n"
    "      float want = in_range(k, start, step, cnt) && w[off + k] > 0 ? w[off + k] : -7;\n"
    "      CHECK(z[off + k] == want, \"cond n %lld off %d head %lld: z[%lld] %g, wanted %g\\n\",\n"
    "            n, off, h, k, z[off + k], want);\n"
    "    }\n"
    "    free(x), free(y), free(z), free(w);\n"
    "  }\n"
    "}\n"
    "static void bytes() { /* sixteen 1-byte elements a chunk; assigned, then changed */\n"
    "  EACH_CASE(16) {\n"
    "    bool *m = buf<bool>(n + 40);\n"
    "    unsigned char *c = buf<unsigned char>(n + 40);\n"
    "    for (long long k = 0; k < n + 40; k++) c[k] = (unsigned char)(k * 13), m[k] = true;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(c + off + start, 1, 16, on) : -1;\n"
    "    launch(g, [&] { k_bytes::k_bytes(m + off, c + off, start, step, cnt, h); });\n"
    "    for (long long k = -off; k < n + 40 - off; k++) {\n"
    "      bool want = in_range(k, start, step, cnt) ? !(c[off + k] > 7) : true;\n"
    "      CHECK(m[off + k] == want, \"bytes n %lld off %d head %lld: m[%lld] %d, wanted %d\\n\",\n"
    "            n, off, h, k, m[off + k], want);\n"
    "    }\n"
    "    free(m), free(c);\n"
    "  }\n"
    "}\n"
    "int main() {\n"
    "  lin(); mix(); rmw(); bytes();\n"
    "  if (!fails) printf(\"ok\\n\");\n"
    "  return fails != 0;\n"
    "}\n";

/* The host kernels: name, declaration, operation. */
static const char *const kHostKernels[][3] = {
    {"k_lin", LIN, "z[i] = a*x[i] + b*y[i]"},
    {"k_mix", "double *d, unsigned char *u, float *f", "f[i] = (float)(d[i] * u[i]) + i"},
    {"k_rmw", "int *x, const int *y", "x[i] += y[i] * 3"},
    {"k_cond", "float *z, const float *w", "if (w[i] > 0) z[i] = w[i]"},
    {"k_bytes", "bool *m, const unsigned char *c", "m[i] = c[i] > 7; m[i] = !m[i]"},
};

#endif

static void loops_on_the_host(void **state) {
#ifndef CUJIT_TEST_CXX
  (void)state;
  test_skip_part("loops_on_the_host: no C++ compiler was found when the tests were configured");
#else
  cj_buf b = {0};
  char *dir = test_tempdir("ewhost"), cmd[8192], out[4096];
  size_t i;
  int rc;
  (void)state;
  assert_non_null(dir);
  cj_buf_puts(&b, kHostPrelude);
  for (i = 0; i < CJ_COUNT(kHostKernels); i++) {
    ew e;
    char *src;
    ew_init(&e, kHostKernels[i][0], kHostKernels[i][1], kHostKernels[i][2], NULL);
    assert_true(cj_gen_ew_width(&e.k) > 1);
    src = ew_text(&e, 1);
    cj_buf_printf(&b, "namespace %s {\n%s}\n", kHostKernels[i][0], src);
    free(src);
    ew_free(&e);
  }
  cj_buf_puts(&b, kHostMain);
  assert_false(b.oom);
  assert_int_equal(test_write_file(dir, "loops.cpp", b.data), 0);
  /* -fsanitize=alignment: every chunk's access must be aligned, as the GPU needs */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' -std=c++17 -O1 -ffp-contract=off -fsanitize=alignment,undefined "
           "-fno-sanitize-recover=all -w -o loops loops.cpp 2>&1 && ./loops 2>&1",
           dir, CUJIT_TEST_CXX);
  rc = test_capture(cmd, out, sizeof out);
  if (rc != 0 || strcmp(out, "ok\n") != 0) fail_msg("%s (exit %d):\n%s", cmd, rc, out);
  cj_buf_free(&b);
  test_rmtree(dir);
  free(dir);
#endif
}

/* ---- calls through the public interface on the checking fake driver ---- */

static void calls_on_views_launch(void **state) {
  checkdriver_api cd;
  cujit_elementwise *k = NULL;
  cujit_array *x = NULL, *y = NULL, *z = NULL, *vx = NULL, *vy = NULL, *vz = NULL;
  int64_t n = 1003;
  int off;
  (void)state;
  memset(&cd, 0, sizeof cd);
  assert_int_equal(checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd), 0);
  assert_ok(cujit_elementwise_create(&k, LIN, "z[i] = a*x[i] + b*y[i]", NULL));
  assert_ok(cujit_array_empty(&x, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_empty(&y, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_empty(&z, CUJIT_TYPE_F32, 1, &n));
  for (off = 0; off < 5; off++) {
    assert_ok(cujit_array_view(x, off, off + n - 5, &vx));
    assert_ok(cujit_array_view(y, off, off + n - 5, &vy));
    assert_ok(cujit_array_view(z, (off + 1) % 5, (off + 1) % 5 + n - 5, &vz));
    assert_ok(CUJIT_ELEMENTWISE(k, 2.0f, vx, 3.0f, vy, vx)); /* in place */
    assert_ok(CUJIT_ELEMENTWISE(k, 2.0f, vx, 3.0f, vy, vz)); /* offsets apart */
    assert_ok(CUJIT_ELEMENTWISE_RANGE(k, 1, n - 5, 2, 2.0f, vx, 3.0f, vy, vy));
    assert_ok(CUJIT_ELEMENTWISE_RANGE(k, 2, n - 5, 1, 2.0f, vx, 3.0f, vy, vz));
    cujit_array_destroy(vx);
    cujit_array_destroy(vy);
    cujit_array_destroy(vz);
  }
  assert_ok(cujit_synchronize());
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(z);
  cujit_elementwise_destroy(k);
  assert_int_equal(cd.violations(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(which_operations_take_chunks),
      cmocka_unit_test(chunks_start_at_a_boundary),
      cmocka_unit_test(kernels_compile_with_chunks),
      cmocka_unit_test(a_kernel_that_does_not_compile_with_chunks),
      cmocka_unit_test(loops_on_the_host),
      cmocka_unit_test(calls_on_views_launch),
  };
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}

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
 *    without a violation;
 *  - arrays whose shapes broadcast: the shape, which arrays are stretched and how each finds
 *    its element (checked against its coordinates at every index), the refusals of shapes
 *    that do not broadcast; the variants' sources (for arrays of one shape, byte for byte
 *    the kernel of a call with no shape given) compiled with NVRTC; where their chunks
 *    start; their loops run
 *    on the host against NumPy's pairing of elements (with the loops above); and calls on
 *    the checking fake driver: each stretched array's indexer among the launch's
 *    parameters, ranges, and the refusals of a stretched array the operation writes. */
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
  cj_gen_ew_source(&b, &e->k, NULL, chunks, 0);
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
  return cj_gen_ew_head(&e->k, NULL, cj_gen_ew_width(&e->k, NULL), start, step, size, args);
}

static void chunks_start_at_a_boundary(void **state) {
  const CUdeviceptr base = 0x7f0000100000ull;
  ew lin, mix, alias;
  int off;
  (void)state;
  ew_init(&lin, "lin", LIN, "z[i] = a*x[i] + b*y[i]", NULL);
  assert_int_equal(cj_gen_ew_width(&lin.k, NULL), 4);
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
  assert_int_equal(cj_gen_ew_width(&mix.k, NULL), 2);
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
    if (cj_gen_ew_width(&e.k, NULL) != t->width)
      fail_msg("\"%s\": width %u, wanted %u", t->op, cj_gen_ew_width(&e.k, NULL), t->width);
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
  assert_ok(cj_gen_ew_prepare(&e.k, NULL, &fn, &chunks)); /* on the checking driver */
  assert_int_equal(chunks, 0);
  assert_int_equal(e.k.chunks_failed, 1);
  assert_non_null(fn);
  chunks = -1;
  assert_ok(cj_gen_ew_prepare(&e.k, NULL, &fn, &chunks)); /* not tried again */
  assert_int_equal(chunks, 0);
  ew_free(&e);
  /* a kernel whose operation does not compile either: the one at a time's errors */
  ew_init(&e, "broken", "float *z, const float *x", "z[i] = x[i] +", NULL);
  assert_int_equal(e.k.access.chunks, 1);
  assert_status_detail(cj_gen_ew_prepare(&e.k, NULL, &fn, &chunks), CUJIT_ERROR_COMPILE, "");
  assert_non_null(strstr(cujit_last_error(), "for (; cj_k < cj_n; cj_k += cj_stride)"));
  ew_free(&e);
}

/* ---- arrays broadcast to one shape ---- */

/* An array as the layer sees it: contiguous, of `shape` (ndim dimensions), at `at`. */
static cj_array array_of(int type, int ndim, const int64_t *shape, CUdeviceptr at) {
  cj_array a;
  int d;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.ndim = ndim;
  a.size = 1;
  for (d = 0; d < ndim; d++) a.shape[d] = shape[d], a.size *= shape[d];
  cj_layout_contiguous(ndim, a.shape, a.strides);
  a.contig = 1;
  a.data = at;
  return a;
}

/* Array a's element at element j (C order) of the shape `sh`, from the coordinates, as
 * NumPy's broadcasting places it; and as the runs of its packed indexer give it. */
static int64_t by_coordinates(const cj_array *sh, const cj_array *a, int64_t j) {
  int64_t off = 0, stride = 1;
  int d, e;
  for (d = sh->ndim - 1, e = a->ndim - 1; d >= 0; d--, e--) {
    int64_t c = j % sh->shape[d];
    j /= sh->shape[d];
    if (e < 0) continue;
    if (a->shape[e] != 1) off += c * stride;
    stride *= a->shape[e];
  }
  return off;
}

static int64_t by_runs(const uint64_t *packed, int runs, int64_t j) {
  uint64_t o = 0;
  int r;
  for (r = 0; r < runs; r++) {
    const uint64_t *run = packed + 1 + 3 * r;
    uint64_t q = (uint64_t)j / run[0];
    if (run[1]) q %= run[1];
    o += q * run[2];
  }
  return (int64_t)o;
}

typedef struct shape_case {
  int ndim[3];
  int64_t shape[3][4];
  const char *result; /* the broadcast shape, as text */
  unsigned stretched; /* bit k: array k */
  int runs[3];        /* of the stretched ones */
} shape_case;

static const shape_case kShapes[] = {
    {{2, 2, 2}, {{3, 4}, {3, 4}, {3, 4}}, "(3, 4)", 0, {0}},
    {{2, 3, 1}, {{3, 4}, {1, 3, 4}, {12}}, NULL, 0, {0}}, /* (4,) and (12,): refused */
    {{2, 3, 2}, {{3, 4}, {1, 3, 4}, {3, 4}}, "(1, 3, 4)", 0, {0}},
    {{2, 1, 2}, {{3, 4}, {4}, {3, 4}}, "(3, 4)", 0x2, {0, 1, 0}},
    {{2, 1, 2}, {{4, 1}, {3}, {4, 3}}, "(4, 3)", 0x3, {1, 1, 0}},
    {{3, 2, 3}, {{2, 3, 4}, {3, 1}, {2, 3, 4}}, "(2, 3, 4)", 0x2, {0, 1, 0}},
    {{3, 3, 3}, {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}, "(2, 3, 4)", 0x3, {2, 1, 0}},
    {{4, 4, 1}, {{2, 1, 3, 1}, {1, 5, 1, 7}, {1}}, "(2, 5, 3, 7)", 0x7, {2, 2, 0}},
    {{2, 0, 2}, {{5, 7}, {0}, {5, 7}}, "(5, 7)", 0x2, {0, 0, 0}},
    {{1, 1, 1}, {{37}, {1}, {37}}, "(37,)", 0x2, {0, 0, 0}},
    {{2, 1, 1}, {{1, 64}, {64}, {1}}, "(1, 64)", 0x4, {0, 0, 0}},
    {{2, 2, 2}, {{1, 64}, {64, 1}, {64, 64}}, "(64, 64)", 0x3, {1, 1, 0}},
    {{2, 1, 2}, {{0, 4}, {4}, {1, 4}}, "(0, 4)", 0, {0}}, /* no element: nothing stretched */
    {{2, 1, 2}, {{3, 4}, {3}, {3, 4}}, NULL, 0, {0}},
};

/* The shape of each case's three arrays, which array is stretched and with how many runs,
 * and for every index of the shape, the element its runs give against the one its
 * coordinates give. */
static void shapes_broadcast_to_one(void **state) {
  static const char kDecl[] = "const float *x, float s, const float *y, float *z";
  cj_gen_decl *d = NULL;
  size_t n = 0, c;
  (void)state;
  assert_ok(cj_gen_decl_parse(kDecl, &d, &n));
  for (c = 0; c < CJ_COUNT(kShapes); c++) {
    const shape_case *t = &kShapes[c];
    cj_array a[3];
    const cj_array *arrays[4];
    cj_gen_shape s;
    char text[CJ_SHAPE_TEXT];
    size_t k;
    int64_t j;
    for (k = 0; k < 3; k++)
      a[k] = array_of(CUJIT_TYPE_F32, t->ndim[k], t->shape[k], 0x10000 * (k + 1));
    arrays[0] = &a[0], arrays[1] = NULL, arrays[2] = &a[1], arrays[3] = &a[2];
    if (!t->result) {
      assert_int_equal(cj_gen_shape_of("call", d, n, arrays, &s), CUJIT_ERROR_INVALID_VALUE);
      continue;
    }
    assert_ok(cj_gen_shape_of("call", d, n, arrays, &s));
    if (strcmp(cj_array_shape_text(&s.shape, text), t->result) != 0)
      fail_msg("case %zu: shape %s, wanted %s", c, text, t->result);
    for (k = 0; k < 3; k++) {
      size_t decl = k ? k + 1 : 0;
      assert_int_equal(s.count[decl], a[k].size);
      if (cj_gen_stretched(&s, decl) != (int)(t->stretched >> k & 1))
        fail_msg("case %zu: array %zu stretched %d", c, k, cj_gen_stretched(&s, decl));
      if (!cj_gen_stretched(&s, decl)) continue;
      assert_int_equal(s.runs[decl], t->runs[k]);
      assert_int_equal(s.packed[decl][0], a[k].data);
      for (j = 0; j < s.shape.size; j++)
        if (by_runs(s.packed[decl], s.runs[decl], j) != by_coordinates(&s.shape, &a[k], j))
          fail_msg("case %zu, array %zu, element %lld: %lld by the runs, %lld by coordinates", c, k,
                   (long long)j, (long long)by_runs(s.packed[decl], s.runs[decl], j),
                   (long long)by_coordinates(&s.shape, &a[k], j));
    }
  }
  assert_false(cj_gen_stretched(NULL, 0));
  cj_free(d);
}

/* What a call that does not broadcast says: both arguments, their shapes and sizes; and
 * where the arrays have one size, how to pair their elements in C order. */
static void shapes_that_do_not_broadcast(void **state) {
  static const int64_t s34[] = {3, 4}, s3[] = {3}, s12[] = {12}, s43[] = {4, 3};
  cj_gen_decl *d = NULL;
  size_t n = 0;
  cj_array x = array_of(CUJIT_TYPE_F32, 2, s34, 0x1000),
           y = array_of(CUJIT_TYPE_F32, 1, s3, 0x2000);
  cj_array z = array_of(CUJIT_TYPE_F32, 1, s12, 0x3000),
           w = array_of(CUJIT_TYPE_F32, 2, s43, 0x4000);
  const cj_array *arrays[3] = {&x, NULL, &y};
  cj_gen_shape s;
  (void)state;
  assert_ok(cj_gen_decl_parse("float *x, float a, float *y", &d, &n));
  assert_status_detail(cj_gen_shape_of("cujit_elementwise_call", d, n, arrays, &s),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call: argument 1 ('x') has shape (3, 4) and argument 3 "
                       "('y') (3,), which do not broadcast (NumPy's rule: aligned on their last "
                       "dimensions, sizes must be equal or 1; here 4 and 3)");
  assert_null(strstr(cujit_last_error(), "reshape"));
  arrays[2] = &z;
  assert_status_detail(cj_gen_shape_of("f", d, n, arrays, &s), CUJIT_ERROR_INVALID_VALUE,
                       "argument 1 ('x') has shape (3, 4) and argument 3 ('y') (12,), which do not "
                       "broadcast");
  assert_status_detail(cj_gen_shape_of("f", d, n, arrays, &s), CUJIT_ERROR_INVALID_VALUE,
                       "here 4 and 12); to pair their elements in C order, pass views of one shape "
                       "(cujit_array_reshape())");
  arrays[2] = &w;
  assert_status_detail(cj_gen_shape_of("f", d, n, arrays, &s), CUJIT_ERROR_INVALID_VALUE,
                       "here 3 and 4); to pair their elements in C order");
  cj_free(d);
}

/* The shape of a call of e's arrays (of shapes, in declaration order, scalars skipped),
 * each at its own fake address. */
static void shape_for(const ew *e, const int *ndim, const int64_t (*shape)[4], cj_array *room,
                      cj_gen_shape *s) {
  const cj_array *arrays[8];
  size_t k, a = 0;
  for (k = 0; k < e->n; k++) {
    arrays[k] = NULL;
    if (!e->d[k].is_array) continue;
    room[a] = array_of(e->d[k].type, ndim[a], shape[a], 0x7f0000000000ull + 0x100000 * (a + 1));
    arrays[k] = &room[a++];
  }
  assert_ok(cj_gen_shape_of("call", e->d, e->n, arrays, s));
}

static char *variant_text(const ew *e, const cj_gen_shape *s, int chunks, int writable) {
  cj_buf b = {0};
  cj_gen_ew_source(&b, &e->k, s, chunks, writable);
  assert_false(b.oom);
  return b.data;
}

/* A variant's source: the stretched array's parameter its indexer (const), the others as
 * declared; the chunks hold the others only, the stretched one walked over each chunk's
 * indices; it compiles with NVRTC, and lin_comb's x and
 * z still move 16 bytes at a time. Arrays of one shape: the kernel of a call without
 * broadcasting, byte for byte. The variant that tells whether an operation writes a
 * stretched array: those of it writable, but one declared const. */
static void broadcast_variants_compile(void **state) {
  static const int nd[] = {2, 1, 2};
  static const int64_t sh[][4] = {{3, 4}, {4}, {3, 4}}, same[][4] = {{3, 4}, {3, 4}, {3, 4}};
  cj_array room[4];
  cj_gen_shape s, one;
  cujit_module *m = NULL;
  char *src, *plain;
  ew lin, wr, wr2;
  int chunks;
  (void)state;
  ew_init(&lin, "lin", LIN, "z[i] = a*x[i] + b*y[i]", NULL);
  shape_for(&lin, nd, sh, room, &s);
  assert_int_equal(s.stretched, 0x8); /* y */
  assert_int_equal(cj_gen_ew_width(&lin.k, &s), 4);
  shape_for(&lin, (const int[]){2, 2, 2}, same, room, &one);
  assert_int_equal(one.stretched, 0);
  for (chunks = 0; chunks < 2; chunks++) {
    src = variant_text(&lin, &s, chunks, 0);
    assert_non_null(strstr(src, "template <typename T, int R> struct cj_bcast"));
    assert_non_null(strstr(src, "void lin(float a, float *x, float b, cj_bcast<const float, 1> y, "
                                "float *z, long long cj_start"));
    assert_int_equal(strstr(src, "cj_one<const float> x{") != NULL, chunks);
    assert_int_equal(strstr(src, "cj_one<float> z{") != NULL, chunks);
    assert_null(strstr(src, " y{cj_v"));
    assert_int_equal(strstr(src, "cj_bcast_walk<const float, 1> cj_w3(y, cj_i0);") != NULL, chunks);
    assert_int_equal(strstr(src, "const cj_one<const float> y{*cj_w3};") != NULL, chunks);
    assert_int_equal(strstr(src, "cj_w3.next();") != NULL, chunks);
    if (chunks) { /* its loops hold the one at a time's too */
      const char *ptx;
      if (compile(src, &m) != CUJIT_OK) fail_msg("%s\n%s", cujit_last_error(), src);
      ptx = cujit_module_ptx(m, NULL);
      assert_non_null(strstr(ptx, "ld.global.v4"));
      assert_non_null(strstr(ptx, "st.global.v4"));
      cujit_module_destroy(m);
    }
    /* arrays of one shape: the kernel of a call with no shape, byte for byte */
    plain = ew_text(&lin, chunks);
    free(src);
    src = variant_text(&lin, &one, chunks, 0);
    assert_string_equal(src, plain);
    free(src);
    free(plain);
    src = variant_text(&lin, NULL, chunks, 0);
    plain = ew_text(&lin, chunks);
    assert_string_equal(src, plain);
    free(src);
    free(plain);
  }
  /* 16-bit floats stretched: their indexers compile, the bools chunked */
  ew_init(&wr, "kinds", "const __half *h, const __nv_bfloat16 *c, bool *m",
          "m[i] = __half2float(h[i]) + __bfloat162float(c[i]) > 0", NULL);
  shape_for(&wr, (const int[]){2, 1, 2}, (const int64_t[][4]){{4, 1}, {5}, {4, 5}}, room, &s);
  assert_int_equal(s.stretched, 0x3);
  assert_int_equal(cj_gen_ew_width(&wr.k, &s), 16);
  src = variant_text(&wr, &s, 1, 0);
  if (compile(src, &m) != CUJIT_OK) fail_msg("%s\n%s", cujit_last_error(), src);
  cujit_module_destroy(m);
  free(src);
  ew_free(&wr);
  /* the variant that tells a write the text does not show: y writable, a const array not
   * (broadcast_calls_launch compiles it) */
  ew_init(&wr, "wr", "const float *x, float *y", "(y[i]) = x[i]", NULL);
  shape_for(&wr, (const int[]){1, 2}, (const int64_t[][4]){{4}, {3, 4}}, room, &s);
  assert_int_equal(s.stretched, 0x1);
  src = variant_text(&wr, &s, 0, 1);
  assert_non_null(strstr(src, "void wr(cj_bcast<const float, 1> x, float *y,"));
  free(src);
  ew_init(&wr2, "wr", "const float *x, float *y", "(y[i]) = x[i]", NULL);
  shape_for(&wr2, (const int[]){2, 1}, (const int64_t[][4]){{3, 4}, {4}}, room, &s);
  src = variant_text(&wr2, &s, 0, 0);
  assert_non_null(strstr(src, "void wr(const float *x, cj_bcast<const float, 1> y,"));
  free(src);
  src = variant_text(&wr2, &s, 0, 1);
  assert_non_null(strstr(src, "void wr(const float *x, cj_bcast<float, 1> y,"));
  free(src);
  ew_free(&wr2);
  ew_free(&lin);
  ew_free(&wr);
}

/* Where a broadcast call's chunks start: the arrays held in chunks decide, a stretched one
 * is read element by element wherever it lies; a written array overlapping a stretched
 * one's own elements (not the shape's count of them) runs one at a time. */
static void broadcast_chunks_start_at_a_boundary(void **state) {
  const CUdeviceptr base = 0x7f0000100000ull;
  cj_array room[4];
  cj_gen_shape s;
  cujit_arg args[5];
  ew lin;
  int off;
  (void)state;
  ew_init(&lin, "lin", LIN, "z[i] = a*x[i] + b*y[i]", NULL);
  shape_for(&lin, (const int[]){2, 1, 2}, (const int64_t[][4]){{3, 4}, {4}, {3, 4}}, room, &s);
  for (off = 0; off < 8; off++) {
    args[0] = cujit_f32(1), args[2] = cujit_f32(1);
    args[1] = cujit_ptr(base + 4 * off);
    args[3] = cujit_ptr(0);
    args[4] = cujit_ptr(base + 0x20000 + 4 * off);
    s.packed[3][0] = base + 0x10000 + 4 * off + 4; /* a float further on than x and z */
    cj_gen_shape_args(&s, 5, args);
    assert_int_equal(args[3].size, 32); /* its address, one run's div, len and step */
    assert_int_equal(cj_gen_ew_head(&lin.k, &s, 4, 0, 1, 12, args), (4 - off % 4) % 4);
    assert_int_equal(cj_gen_ew_head(&lin.k, &s, 4, 0, 2, 12, args), -1);
    s.packed[3][0] = base + 0x20000 + 4 * off - 16; /* y's 4 elements just before z's */
    assert_int_equal(cj_gen_ew_head(&lin.k, &s, 4, 0, 1, 12, args), (4 - off % 4) % 4);
    s.packed[3][0] += 4; /* its last element is z's first */
    assert_int_equal(cj_gen_ew_head(&lin.k, &s, 4, 0, 1, 12, args), -1);
  }
  ew_free(&lin);
}

/* ---- the loops, compiled for the host and run thread after thread ---- */

#ifdef CUJIT_TEST_CXX /* the host sources, used only with a C++ compiler */
static const char kHostPrelude[] =
    "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
    "struct cj_dim3 { unsigned x = 1, y = 1, z = 1; };\n"
    "static cj_dim3 gridDim, blockDim, blockIdx, threadIdx;\n"
    "#define __global__\n#define __device__\n#define __forceinline__ inline\n"
    "#define __noinline__ __attribute__((noinline))\n"
    "struct alignas(16) uint4 { unsigned x, y, z, w; };\n"
    "struct alignas(8) uint2 { unsigned x, y; };\n";

/* What the host programs' checks share: a launch as a loop over blocks and threads, the
 * check, a chunk's head as a call computes it, aligned buffers, the sizes, grids and
 * ranges they run. */
static const char kHostHelpers[] =
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
    "}\n";

/* The host kernels' checks: each runs a kernel over arrays placed at every offset from an
 * aligned address, for many sizes and grids, with the chunks where a call would take them
 * (and without), and compares every element with the operation done here one at a time,
 * and the elements around with what they were. */
static const char kHostMain[] =
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
    "}\n";

/* The host kernels: name, declaration, operation. */
static const char *const kHostKernels[][3] = {
    {"k_lin", LIN, "z[i] = a*x[i] + b*y[i]"},
    {"k_mix", "double *d, unsigned char *u, float *f", "f[i] = (float)(d[i] * u[i]) + i"},
    {"k_rmw", "int *x, const int *y", "x[i] += y[i] * 3"},
    {"k_cond", "float *z, const float *w", "if (w[i] > 0) z[i] = w[i]"},
    {"k_bytes", "bool *m, const unsigned char *c", "m[i] = c[i] > 7; m[i] = !m[i]"},
};

/* Each case runs its kernel (through `run`, which passes each array as its parameter takes
 * it) over arrays of its shapes placed at every offset from an aligned address, for many
 * grids and ranges, with chunks where a call would take them and without, and compares
 * every element of the output (the shape's) with the operation done here on the elements
 * NumPy's broadcasting pairs, found from their coordinates, and those around it with what
 * they were. */
static const char kHostBroadcast[] =
    "#include <vector>\n"
    "typedef std::vector<long long> shp;\n"
    "static long long elems(const shp &a) { long long n = 1; for (long long s : a) n *= s; "
    "return n; }\n"
    "/* array a's element at element j (C order) of the shape s, by j's coordinates */\n"
    "static long long bpos(const shp &s, const shp &a, long long j) {\n"
    "  long long off = 0, stride = 1;\n"
    "  for (int d = (int)s.size() - 1, e = (int)a.size() - 1; d >= 0; d--, e--) {\n"
    "    long long c = j % s[d];\n"
    "    j /= s[d];\n"
    "    if (e < 0) continue;\n"
    "    if (a[e] != 1) off += c * stride;\n"
    "    stride *= a[e];\n"
    "  }\n"
    "  return off;\n"
    "}\n"
    "#define EACH_BCASE(W, n) \\\n"
    "  for (int off = 0; off < 2 * (int)(W); off++) for (unsigned g : grids) \\\n"
    "  for (int on = 0; on < 2; on++) \\\n"
    "  for (long long start = 0; start <= (n > 3 ? 3 : n); start += (n > 3 ? 3 : 1)) \\\n"
    "  for (long long step = 1; step <= (start ? 2 : 1); step++)\n"
    "template <class F> static void lin_b(const char *name, unsigned w, shp s, shp xs, shp ys,\n"
    "                                     F run) {\n"
    "  long long n = elems(s), nx = elems(xs), ny = elems(ys);\n"
    "  EACH_BCASE(w, n) {\n"
    "    float *x = buf<float>(nx + 16), *y = buf<float>(ny + 16), *z = buf<float>(n + 16);\n"
    "    for (long long k = 0; k < nx + 16; k++) x[k] = k * 0.5f + 1;\n"
    "    for (long long k = 0; k < ny + 16; k++) y[k] = 3.0f - k;\n"
    "    for (long long k = 0; k < n + 16; k++) z[k] = -7;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(z + off + start, 4, w, on) : -1;\n"
    "    run(x + off, y + off, z + off, start, step, cnt, h, g);\n"
    "    for (long long k = -off; k < n + 16 - off; k++) {\n"
    "      float want = in_range(k, start, step, cnt)\n"
    "          ? 2.5f * x[off + bpos(s, xs, k)] + -1.5f * y[off + bpos(s, ys, k)] : -7;\n"
    "      CHECK(z[off + k] == want, \"%s off %d g %u head %lld start %lld step %lld: \"\n"
    "            \"z[%lld] %g, wanted %g\\n\", name, off, g, h, start, step, k, z[off + k], "
    "want);\n"
    "    }\n"
    "    free(x), free(y), free(z);\n"
    "  }\n"
    "}\n"
    "template <class F> static void mix_b(const char *name, unsigned w, shp s, shp ds, shp us,\n"
    "                                     F run) {\n"
    "  long long n = elems(s), nd = elems(ds), nu = elems(us);\n"
    "  EACH_BCASE(w, n) {\n"
    "    double *d = buf<double>(nd + 16);\n"
    "    unsigned char *u = buf<unsigned char>(nu + 16);\n"
    "    float *f = buf<float>(n + 16);\n"
    "    for (long long k = 0; k < nd + 16; k++) d[k] = k * 0.25;\n"
    "    for (long long k = 0; k < nu + 16; k++) u[k] = (unsigned char)(k * 7);\n"
    "    for (long long k = 0; k < n + 16; k++) f[k] = -7;\n"
    "    long long cnt = count_of(n, start, step);\n"
    "    long long h = step == 1 ? head(f + off + start, 4, w, on) : -1;\n"
    "    run(d + off, u + off, f + off, start, step, cnt, h, g);\n"
    "    for (long long k = -off; k < n + 16 - off; k++) {\n"
    "      float want = in_range(k, start, step, cnt)\n"
    "          ? (float)(d[off + bpos(s, ds, k)] * u[off + bpos(s, us, k)]) + k : -7;\n"
    "      CHECK(f[off + k] == want, \"%s off %d head %lld: f[%lld] %g, wanted %g\\n\", name,\n"
    "            off, h, k, f[off + k], want);\n"
    "    }\n"
    "    free(d), free(u), free(f);\n"
    "  }\n"
    "}\n";

typedef struct host_bcase {
  int mix; /* 0: lin_comb over x and y; 1: mix over d and u */
  int ndim[3];
  int64_t shape[3][4]; /* the two inputs', then the output's (the broadcast shape) */
} host_bcase;

static const host_bcase kHostBcases[] = {
    {0, {2, 1, 2}, {{3, 4}, {4}, {3, 4}}},
    {0, {2, 1, 2}, {{4, 1}, {3}, {4, 3}}},
    {0, {3, 2, 3}, {{2, 3, 4}, {3, 1}, {2, 3, 4}}},
    {0, {3, 3, 3}, {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}},
    {0, {4, 4, 4}, {{2, 1, 3, 1}, {1, 5, 1, 7}, {2, 5, 3, 7}}},
    {0, {2, 0, 2}, {{5, 7}, {0}, {5, 7}}},
    {0, {1, 1, 1}, {{37}, {1}, {37}}},
    {0, {2, 2, 2}, {{1, 64}, {64, 1}, {64, 64}}},
    {0, {2, 1, 2}, {{33, 129}, {129}, {33, 129}}},
    {1, {2, 1, 2}, {{4, 1}, {5}, {4, 5}}},
    {1, {2, 1, 2}, {{3, 17}, {17}, {3, 17}}},
};

/* The shape as the host program's initializer: {3, 4}. */
static void put_shp(cj_buf *b, int ndim, const int64_t *shape) {
  int d;
  cj_buf_puts(b, "shp{");
  for (d = 0; d < ndim; d++) cj_buf_printf(b, "%s%lld", d ? ", " : "", (long long)shape[d]);
  cj_buf_puts(b, "}");
}

/* Array k of the call as its parameter takes it: the pointer `var`, or its indexer with
 * the runs the call computed. */
static void put_arg(cj_buf *b, const cj_gen_shape *s, size_t k, const char *type, const char *var) {
  int r;
  if (!cj_gen_stretched(s, k)) {
    cj_buf_puts(b, var);
    return;
  }
  cj_buf_printf(b, "cj_bcast<const %s, %d>{%s, {", type, s->runs[k], var);
  for (r = 0; r < (s->runs[k] ? s->runs[k] : 1); r++)
    cj_buf_printf(b, "%s{%lluull, %lluull, %lluull}", r ? ", " : "",
                  (unsigned long long)s->packed[k][1 + 3 * r],
                  (unsigned long long)s->packed[k][2 + 3 * r],
                  (unsigned long long)s->packed[k][3 + 3 * r]);
  cj_buf_puts(b, "}}");
}

/* Appends case c's kernel (namespace kb<c>) to `kernels` and its run to `runs`. */
static void host_bcase_source(size_t c, cj_buf *kernels, cj_buf *runs) {
  const host_bcase *t = &kHostBcases[c];
  char name[16];
  cj_array room[4];
  cj_gen_shape s;
  char *src;
  ew e;
  snprintf(name, sizeof name, "kb%zu", c);
  if (t->mix)
    ew_init(&e, name, "double *d, unsigned char *u, float *f", "f[i] = (float)(d[i] * u[i]) + i",
            NULL);
  else
    ew_init(&e, name, LIN, "z[i] = a*x[i] + b*y[i]", NULL);
  shape_for(&e, t->ndim, t->shape, room, &s);
  assert_true(s.stretched != 0);
  src = variant_text(&e, &s, 1, 0);
  cj_buf_printf(kernels, "namespace %s {\n%s}\n", name, src);
  free(src);
  cj_buf_printf(runs, "  %s(\"case %zu\", %u, ", t->mix ? "mix_b" : "lin_b", c,
                cj_gen_ew_width(&e.k, &s));
  put_shp(runs, t->ndim[2], t->shape[2]);
  cj_buf_puts(runs, ", ");
  put_shp(runs, t->ndim[0], t->shape[0]);
  cj_buf_puts(runs, ", ");
  put_shp(runs, t->ndim[1], t->shape[1]);
  if (t->mix) {
    cj_buf_puts(runs, ",\n    [&](double *d, unsigned char *u, float *f, long long start, "
                      "long long step, long long cnt, long long h, unsigned g) {\n");
    cj_buf_printf(runs, "      launch(g, [&] { %s::%s(", name, name);
    put_arg(runs, &s, 0, "double", "d");
    cj_buf_puts(runs, ", ");
    put_arg(runs, &s, 1, "unsigned char", "u");
    cj_buf_puts(runs, ", f, start, step, cnt, h); });\n    });\n");
  } else {
    cj_buf_puts(runs, ",\n    [&](float *x, float *y, float *z, long long start, long long step, "
                      "long long cnt, long long h, unsigned g) {\n");
    cj_buf_printf(runs, "      launch(g, [&] { %s::%s(2.5f, ", name, name);
    put_arg(runs, &s, 1, "float", "x");
    cj_buf_puts(runs, ", -1.5f, ");
    put_arg(runs, &s, 3, "float", "y");
    cj_buf_puts(runs, ", z, start, step, cnt, h); });\n    });\n");
  }
  ew_free(&e);
}

#endif

static void loops_on_the_host(void **state) {
#ifndef CUJIT_TEST_CXX
  (void)state;
  test_skip_part("loops_on_the_host: no C++ compiler was found when the tests were configured");
#else
  cj_buf b = {0}, runs = {0};
  char *dir = test_tempdir("ewhost"), cmd[8192], out[4096];
  size_t i;
  int rc;
  (void)state;
  assert_non_null(dir);
  cj_buf_puts(&b, kHostPrelude);
  cj_gen_bcast_source(&b); /* once, outside the kernels' namespaces */
  for (i = 0; i < CJ_COUNT(kHostBcases); i++) host_bcase_source(i, &b, &runs);
  for (i = 0; i < CJ_COUNT(kHostKernels); i++) {
    ew e;
    char *src;
    ew_init(&e, kHostKernels[i][0], kHostKernels[i][1], kHostKernels[i][2], NULL);
    assert_true(cj_gen_ew_width(&e.k, NULL) > 1);
    src = ew_text(&e, 1);
    cj_buf_printf(&b, "namespace %s {\n%s}\n", kHostKernels[i][0], src);
    free(src);
    ew_free(&e);
  }
  cj_buf_puts(&b, kHostHelpers);
  cj_buf_puts(&b, kHostMain);
  cj_buf_puts(&b, kHostBroadcast);
  cj_buf_printf(&b,
                "int main() {\n  lin(); mix(); rmw(); bytes();\n%s"
                "  if (!fails) printf(\"ok\\n\");\n  return fails != 0;\n}\n",
                runs.data);
  assert_false(b.oom || runs.oom);
  assert_int_equal(test_write_file(dir, "loops.cpp", b.data), 0);
  /* -fsanitize=alignment: every chunk's access must be aligned, as the GPU needs */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s' -std=c++17 -O1 -ffp-contract=off -fsanitize=alignment,undefined "
           "-fno-sanitize-recover=all -w -o loops loops.cpp 2>&1 && ./loops 2>&1",
           dir, CUJIT_TEST_CXX);
  rc = test_capture(cmd, out, sizeof out);
  if (rc != 0 || strcmp(out, "ok\n") != 0) fail_msg("%s (exit %d):\n%s", cmd, rc, out);
  cj_buf_free(&b);
  cj_buf_free(&runs);
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

/* ---- broadcast calls through the public interface on the checking fake driver ---- */

static cujit_array *empty_of(int ndim, const int64_t *shape) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_empty(&a, CUJIT_TYPE_F32, ndim, shape));
  return a;
}

/* Whether the last launch's parameters hold, 8-byte aligned, these n words in a row. */
static int last_params_hold(const checkdriver_api *cd, const uint64_t *words, size_t n) {
  uint64_t p[64];
  size_t len = cd->last_params(p, sizeof p), i;
  for (i = 0; (i + n) * 8 <= len && i + n <= CJ_COUNT(p); i++)
    if (memcmp(&p[i], words, n * 8) == 0) return 1;
  return 0;
}

/* Calls whose arrays broadcast launch, each stretched array as its indexer; the range is
 * over the shape's elements; shapes that do not broadcast, and a stretched array the
 * operation writes (shown by its text, or by the variant compiling only with it
 * writable), are refused before anything launches, each naming the argument; a reduction
 * broadcasts its arrays the same way. */
static void broadcast_calls_launch(void **state) {
  static const int64_t s34[] = {3, 4}, s4[] = {4}, s31[] = {3, 1}, s3[] = {3}, s12[] = {12};
  checkdriver_api cd;
  cujit_elementwise *lin = NULL, *paren = NULL, *keep = NULL;
  cujit_reduction *dot = NULL, *sneaky = NULL;
  cujit_array *x = empty_of(2, s34), *y = empty_of(1, s4), *z = empty_of(2, s34);
  cujit_array *col = empty_of(2, s31), *y3 = empty_of(1, s3), *z12 = empty_of(1, s12);
  cujit_array *out = NULL;
  int count = 0;
  float r;
  (void)state;
  assert_ok(cujit_device_get_count(&count));
  memset(&cd, 0, sizeof cd);
  assert_int_equal(checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd), 0);
  assert_ok(cujit_elementwise_create(&lin, LIN, "z[i] = a*x[i] + b*y[i]", NULL));
  /* (3, 4) and (4,): y's indexer, its address then div 1, len 4, step 1 */
  assert_ok(CUJIT_ELEMENTWISE(lin, 2.0f, x, 3.0f, y, z));
  assert_true(last_params_hold(&cd, (const uint64_t[]){cujit_array_data(y), 1, 4, 1}, 4));
  /* (3, 1) and (4,): x by j / 4 (the outermost run: no %), y by j % 4 */
  assert_ok(CUJIT_ELEMENTWISE(lin, 2.0f, col, 3.0f, y, z));
  assert_true(last_params_hold(&cd, (const uint64_t[]){cujit_array_data(col), 4, 0, 1}, 4));
  assert_ok(CUJIT_ELEMENTWISE_RANGE(lin, 1, 12, 2, 2.0f, x, 3.0f, y, z));
  assert_ok(CUJIT_ELEMENTWISE_RANGE(lin, 11, -1, -3, 2.0f, x, 3.0f, y, z));
  assert_status_detail(CUJIT_ELEMENTWISE_RANGE(lin, 0, 13, 1, 2.0f, x, 3.0f, y, z),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call_range: the range 0 to 13 (step 1) leaves the "
                       "arrays' 12 elements (their shape (3, 4))");
  /* shapes that do not broadcast */
  assert_status_detail(CUJIT_ELEMENTWISE(lin, 2.0f, x, 3.0f, y3, z), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call: argument 2 ('x') has shape (3, 4) and argument 4 "
                       "('y') (3,), which do not broadcast");
  assert_status_detail(CUJIT_ELEMENTWISE(lin, 2.0f, x, 3.0f, x, z12), CUJIT_ERROR_INVALID_VALUE,
                       "argument 5 ('z') (12,), which do not broadcast (NumPy's rule: aligned on "
                       "their last dimensions, sizes must be equal or 1; here 4 and 12); to pair "
                       "their elements in C order, pass views of one shape");
  /* a stretched array written: z of shape (4,) for x of (3, 4) */
  assert_status_detail(CUJIT_ELEMENTWISE(lin, 2.0f, x, 3.0f, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call: argument 5 ('z') has shape (4,), stretched to "
                       "the call's shape (3, 4), and the operation writes it: each of its "
                       "elements would be written for several i at once; pass an array of shape "
                       "(3, 4) for it, or write another array");
  assert_status_detail(CUJIT_ELEMENTWISE(lin, 2.0f, col, 3.0f, y, y), CUJIT_ERROR_INVALID_VALUE,
                       "argument 5 ('z') has shape (4,), stretched to the call's shape (3, 4)");
  /* ... where the text does not show it: the variant does not compile with z const */
  assert_ok(cujit_elementwise_create(&paren, LIN, "(z[i]) = a*x[i] + b*y[i]", NULL));
  assert_status_detail(CUJIT_ELEMENTWISE(paren, 2.0f, x, 3.0f, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "argument 5 ('z') has shape (4,), stretched to the call's shape (3, 4), "
                       "and the operation writes it");
  /* an operation that does not compile for another reason, with x writable too: NVRTC's
   * log of the variant the call runs; here a stretched array's name used as a pointer */
  assert_ok(cujit_elementwise_create(&keep, "float *x, float *z", "z[i] = *(x + i)", NULL));
  assert_status_detail(CUJIT_ELEMENTWISE(keep, y, z), CUJIT_ERROR_COMPILE,
                       "void elementwise(cj_bcast<const float, 1> x, float *z,");
  assert_null(strstr(cujit_last_error(), "cj_bcast<float, 1> x"));
  assert_ok(CUJIT_ELEMENTWISE(keep, z, z)); /* of one shape: x a pointer */
  /* a reduction: x (3, 4) by y (4,) */
  assert_ok(cujit_reduction_create(&dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                   "float *x, float *y", NULL));
  assert_ok(CUJIT_REDUCTION(dot, &out, x, y));
  assert_true(last_params_hold(&cd, (const uint64_t[]){cujit_array_data(y), 1, 4, 1}, 4));
  assert_ok(CUJIT_REDUCTION_HOST(dot, &r, x, y));
  assert_status_detail(CUJIT_REDUCTION(dot, &out, x, y3), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call: argument 1 ('x') has shape (3, 4) and argument 2 "
                       "('y') (3,), which do not broadcast");
  assert_ok(cujit_reduction_create(&sneaky, CUJIT_TYPE_F32, "0", "a+b", "x[i] * (y[i] = 2)",
                                   "float *x, float *y", NULL));
  assert_status_detail(CUJIT_REDUCTION(sneaky, &out, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call: argument 2 ('y') has shape (4,), stretched to the "
                       "call's shape (3, 4), and the operation writes it");
  assert_ok(cujit_synchronize());
  assert_int_equal(cd.violations(), 0);
  cujit_array_destroy(out);
  cujit_array_destroy(x), cujit_array_destroy(y), cujit_array_destroy(z);
  cujit_array_destroy(col), cujit_array_destroy(y3), cujit_array_destroy(z12);
  cujit_elementwise_destroy(lin);
  cujit_elementwise_destroy(paren);
  cujit_elementwise_destroy(keep);
  cujit_reduction_destroy(dot);
  cujit_reduction_destroy(sneaky);
}

/* An elementwise kernel takes at most 61 arguments: a call of one declaring more is
 * refused before anything compiles. */
static void at_most_61_arguments(void **state) {
  cujit_elementwise *k = NULL;
  cujit_array *x = empty_of(1, (const int64_t[]){8});
  cujit_arg args[62];
  char decl[62 * 16] = "";
  size_t i, used = 0;
  (void)state;
  for (i = 0; i < 62; i++) {
    used += (size_t)snprintf(decl + used, sizeof decl - used, "%sfloat *x%zu", i ? ", " : "", i);
    args[i] = cujit_arr(x);
  }
  assert_ok(cujit_elementwise_create(&k, decl, "x0[i] = 1", NULL));
  assert_status_detail(cujit_elementwise_call(k, args, 62), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call: 62 arguments declared; an elementwise kernel "
                       "takes at most 61");
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(which_operations_take_chunks),
      cmocka_unit_test(chunks_start_at_a_boundary),
      cmocka_unit_test(kernels_compile_with_chunks),
      cmocka_unit_test(a_kernel_that_does_not_compile_with_chunks),
      cmocka_unit_test(loops_on_the_host),
      cmocka_unit_test(calls_on_views_launch),
      cmocka_unit_test(shapes_broadcast_to_one),
      cmocka_unit_test(shapes_that_do_not_broadcast),
      cmocka_unit_test(broadcast_variants_compile),
      cmocka_unit_test(broadcast_chunks_start_at_a_boundary),
      cmocka_unit_test(broadcast_calls_launch),
      cmocka_unit_test(at_most_61_arguments),
  };
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}

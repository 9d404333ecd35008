/* test_signature - kernel signatures without a GPU: signatures made from the compiler's
 * types (fitted to NVRTC's own parameter layout), type strings, the layout check, explicit
 * signatures against the compiler's types, cujit_call's varargs and promotions, and
 * libffi-bound function pointers, with the launch replaced by a recorder (cj_call_set_launcher)
 * so that the arguments built can be seen. The recorder needs the fault-injection build
 * (CUJIT_FAULT_INJECTION, which scripts/check makes), the only one with that seam;
 * elsewhere the tests that use it (run apart, `test_signature --recorded`, CTest's
 * test_signature_recorded) are reported skipped, and the rest run. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>

#include "typestest.h"
#include "kernelsrc.h"
#include "call/signature.h"

#ifdef CUJIT_FAULT_INJECTION
void cujit_test_fail_alloc_after(long n);
long cujit_test_alloc_countdown(void);
#endif

/* ---- type strings ---- */

static void expect_types(const char *types, const char *want) {
  cj_signature *s = NULL;
  cujit_status st = cj_sig_from_types(types, &s);
  if (st != CUJIT_OK) fail_msg("\"%s\": %s", types, cujit_last_error());
  if (strcmp(s->text, want) != 0)
    fail_msg("\"%s\" reads as \"%s\", wanted \"%s\"", types, s->text, want);
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
                (const unsigned[]){0, 16, 32, 48, 52, 64, 96},
                (const unsigned[]){1, 16, 16, 2, 12, 32, 1});
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
  char sym[512];
} hand;

/* A function named `name` whose driver layout is that of type string `layout` (NULL: no
 * layout known yet). */
static void hand_init(hand *h, cujit_module *m, const char *name, const char *layout) {
  cj_signature *s = NULL;
  size_t i;
  memset(h, 0, sizeof *h);
  h->fn.module = cj_module_find(m);
  h->fn.name = (char *)name;
  h->fn.lowered = (char *)name;
  h->fn.dev =
      (cj_fstate *)(void *)h; /* any non-NULL: the module layer's state; never touched here */
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

#ifdef CUJIT_FAULT_INJECTION /* the tests that use it need the launch recorder */
/* Kernel `name` of m as a lookup makes it: its symbol, its layout from the PTX, and the
 * types decoded from its symbol (an extern "C" kernel's are probed when first needed). */
static void hand_init_from(hand *h, cujit_module *m, const char *name) {
  size_t n = 0, *offs = NULL, *sizes = NULL;
  memset(h, 0, sizeof *h);
  snprintf(h->sym, sizeof h->sym, "%s", types_symbol(m, name));
  assert_ok(cj_ptx_params(cujit_module_ptx(m, NULL), h->sym, &n, &offs, &sizes));
  assert_true(n <= 64);
  if (n) {
    memcpy(h->offs, offs, n * sizeof *offs);
    memcpy(h->sizes, sizes, n * sizeof *sizes);
  }
  free(offs);
  free(sizes);
  h->fn.module = cj_module_find(m);
  h->fn.name = (char *)name;
  h->fn.lowered = h->sym;
  h->fn.dev =
      (cj_fstate *)(void *)h; /* any non-NULL: the module layer's state; never touched here */
  h->fn.nparams = n;
  h->fn.param_offsets = h->offs;
  h->fn.param_sizes = h->sizes;
  cj_function_decode(&h->fn);
}
#endif

static void hand_free(hand *h) {
  if (h->fn.upper_free) h->fn.upper_free(&h->fn);
  cj_function_drop_types(&h->fn);
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
  assert_non_null(
      h.fn.upper->sig->older); /* the replaced one lives on until the function is freed */
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
  cj_call_set_launcher(record_launch);
  return 0;
}

static int teardown_recorder(void **state) {
  (void)state;
  cj_call_set_launcher(NULL);
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
  assert_int_equal(f16_of(ldexp(1, -14)), 0x0400);                    /* smallest normal */
  assert_int_equal(f16_of(ldexp(1, -24)), 0x0001);                    /* smallest subnormal */
  assert_int_equal(f16_of(ldexp(1, -25)), 0x0000);                    /* tie to even: 0 */
  assert_int_equal(f16_of(ldexp(3, -25)), 0x0002);                    /* tie to even: 2 */
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
  typedef struct {
    float x, y, z;
  } f3;
  typedef struct {
    double v[5];
  } big;
  cujit_arg a[4] = {0}, src = cujit_in(a, 16), small = cujit_i32(7);
  char host[32];
  f3 v = {1, 2, 3};
  big b = {{1, 2, 3, 4, 5}};
  CUdeviceptr p = 0x7f0000001230ull;
  (void)state;
  /* device pointers pass through; In/Out references bring their wrapper */
  assert_ok(convert("ptr ptr ptr ptr", a, 4, p, CUJIT_OUT_PTR(host, sizeof host),
                    cujit_arg_ref(&src), (CUdeviceptr)0));
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
                       "CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR, not a 4-byte value");
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
  typedef struct {
    float x, y, z, w;
  } vec4;
  vec4 v = {1, 2, 3, 4};
  cujit_launch_options o = {0};
  (void)state;
  hand_init(&h, NULL, "saxpy", "f32 ptr ptr u32");
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr u32"));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(4, 2), CUJIT_DIM3(256), x, p, CUJIT_OUT_PTR(&v, 16), 100));
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
  /* a struct by address; a wrong count says what to do (an unparenthesised compound
   * literal, which used to miscount, no longer compiles: cujit_call looks at each
   * argument) */
  assert_status_detail(cujit_function_set_signature(&h.fn, "f32x4 i32"), CUJIT_ERROR_SIGNATURE,
                       "has 2 parameters");
  hand_free(&h);
  hand_init(&h, NULL, "v", "f32x4");
  assert_ok(cujit_function_set_signature(&h.fn, "f32x4"));
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &v));
  assert_arg(0, CUJIT_TYPE_BYTES, &v, 16);
  assert_status_detail(cujit_call_n(&h.fn, 4, CUJIT_DIM3(1), CUJIT_DIM3(1), &v, 2, 3, 4),
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

/* cujit_call() takes C values by the kernel's signature as a launch takes plain values:
 * each taken as it is, or converted as C converts an argument to a prototyped parameter,
 * or refused, naming the parameter, the value's type and the value; a struct, vector or
 * blob parameter takes a pointer to the value. Nothing is launched after a refusal. */
static void typed_calls_convert_or_refuse(void **state) {
  static const char types[] = "f32 i32 u32 i64 u8 f16 f64 ptr f32x4";
  typedef struct {
    float x, y, z, w;
  } vec4;
  vec4 v = {1, 2, 3, 4};
  float two = 2;
  int32_t seven = 7;
  uint32_t five = 5;
  int64_t minus5 = -5;
  uint8_t one = 1;
  uint16_t half = 0x3800;
  double quarter = 0.25;
  CUdeviceptr p = 0x1000;
  hand h;
  (void)state;
  hand_init(&h, NULL, "k", types);
  assert_ok(cujit_function_set_signature(&h.fn, types));
  assert_ok(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7.0, 5, -5, true, 0.5, 0.25f, p, &v));
  assert_int_equal(seen.calls, 1);
  assert_arg(0, CUJIT_TYPE_F32, &two, 4);
  assert_arg(1, CUJIT_TYPE_I32, &seven, 4);
  assert_arg(2, CUJIT_TYPE_U32, &five, 4);
  assert_arg(3, CUJIT_TYPE_I64, &minus5, 8); /* an int for a 64-bit parameter */
  assert_arg(4, CUJIT_TYPE_U8, &one, 1);
  assert_arg(5, CUJIT_TYPE_F16, &half, 2);
  assert_arg(6, CUJIT_TYPE_F64, &quarter, 8);
  assert_arg(7, CUJIT_TYPE_PTR, &p, 8);
  assert_arg(8, CUJIT_TYPE_BYTES, &v, 16);
  assert_status_detail(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 2.5f, 5, -5, 1, 0.5, 0.25, p, &v),
      CUJIT_ERROR_INVALID_ARGS,
      "kernel 'k', parameter 2 (i32): given a float (f32) 2.5: not an integer (C would truncate "
      "it, or leave it undefined); round it first, or declare the parameter as a float type; "
      "nothing was launched");
  assert_status_detail(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, -1, -5, 1, 0.5, 0.25, p, &v),
      CUJIT_ERROR_INVALID_ARGS,
      "kernel 'k', parameter 3 (u32): given an int (i32) -1: out of the parameter type's range (C "
      "would wrap it or leave it undefined); nothing was launched");
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, 5, -5, 256, 0.5, 0.25,
                                  p, &v),
                       CUJIT_ERROR_INVALID_ARGS,
                       "parameter 5 (u8): given an int (i32) 256: out of");
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, 5, -5, 1, 70000, 0.25,
                                  p, &v),
                       CUJIT_ERROR_INVALID_ARGS,
                       "parameter 6 (f16): given an int (i32) 70000: beyond the parameter "
                       "type's range");
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1e300, 7, 5, -5, 1, 0.5,
                                  0.25, p, &v),
                       CUJIT_ERROR_INVALID_ARGS,
                       "parameter 1 (f32): given a double (f64) 1.0000000000000001e+300: beyond");
  assert_status_detail(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), &v, 7, 5, -5, 1, 0.5, 0.25, p, &v),
      CUJIT_ERROR_INVALID_ARGS,
      "kernel 'k', parameter 1 (f32): given a pointer (&v), which only a struct, vector or blob "
      "parameter takes; pass the number itself");
  assert_status_detail(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, 5, -5, 1, 0.5, 0.25, 0, &v),
      CUJIT_ERROR_INVALID_ARGS,
      "kernel 'k', parameter 8 (ptr): given an int (i32), but a pointer parameter takes a "
      "CUdeviceptr (an unsigned long long) or CUJIT_IN_PTR/CUJIT_OUT_PTR/CUJIT_INOUT_PTR");
  assert_status_detail(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, 5, -5, 1, 0.5, 0.25, p, 1.0f),
      CUJIT_ERROR_INVALID_ARGS,
      "kernel 'k', parameter 9 (f32x4): a struct, vector or blob parameter takes a pointer to its "
      "value (&v), not a float (f32)");
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 7, 5, -5, 1, 0.5, 0.25, p,
                                  (const void *)NULL),
                       CUJIT_ERROR_INVALID_ARGS,
                       "parameter 9 (f32x4): a struct, vector or blob "
                       "parameter takes a pointer to its value (&v), "
                       "not NULL");
  assert_int_equal(seen.calls, 1);
  hand_free(&h);
}

/* A bool parameter, which a signature spells u8, takes 0 and 1 only, as a launch's does;
 * an enum, which it spells as an integer of its size, takes a number as that integer. */
static void typed_calls_keep_bools_bools(void **state) {
  cujit_module *m = types_compile("enum E { E0, E1 };\n"
                                  "__global__ void b(bool f, unsigned char u, E e) {}\n",
                                  "b.cu", NULL, NULL, NULL, 0);
  uint8_t one = 1, two = 2;
  int32_t e1 = 1;
  hand h;
  (void)state;
  hand_init_from(&h, m, "b");
  assert_string_equal(cujit_function_signature(&h.fn), "u8 u8 i32");
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), true, 2, (short)1));
  assert_arg(0, CUJIT_TYPE_BOOL, &one, 1);
  assert_arg(1, CUJIT_TYPE_U8, &two, 1);
  assert_arg(2, CUJIT_TYPE_I32, &e1, 4);
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1.0, 2, 1));
  assert_arg(0, CUJIT_TYPE_BOOL, &one, 1);
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 2, 1),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'b', parameter 1 (u8): given an int (i32) 2: a bool takes 0 and 1 "
                       "(false and true) only");
  hand_free(&h);
  cujit_module_destroy(m);
}

/* ---- signatures from the compiler's types ---- */

typedef struct __attribute__((aligned(16))) f4v {
  float v[4];
} f4v;

static void signature_from_module(void **state) {
  cujit_module *m = types_compile(kSaxpy, "saxpy.cu", NULL, kSaxpyExprs, NULL, 0);
  hand h;
  (void)state;
  hand_init_from(&h, m, "saxpy");
  assert_string_equal(cujit_function_signature(&h.fn), "f32 ptr ptr u32");
  assert_int_equal(h.fn.upper->sig->checked, 1);
  assert_ok(
      cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 2.0f, (CUdeviceptr)1, (CUdeviceptr)2, 3));
  assert_int_equal(seen.calls, 1);
  assert_int_equal(seen.args[0].type, CUJIT_TYPE_F32);
  assert_int_equal(seen.args[3].type, CUJIT_TYPE_U32);
  hand_free(&h);
  /* a struct by value is known by name: opaque bytes of the layout's size and alignment */
  hand_init_from(&h, m, "ns::take");
  assert_string_equal(cujit_function_signature(&h.fn), "b16:8 f32x4 i8");
  assert_string_equal(h.fn.types->p[0].m.spelling, "P");
  hand_free(&h);
  /* template instances, through their name expressions */
  hand_init_from(&h, m, "scale<float>");
  assert_string_equal(cujit_function_signature(&h.fn), "ptr f32");
  hand_free(&h);
  hand_init_from(&h, m, "scale<double>");
  assert_string_equal(cujit_function_signature(&h.fn), "ptr f64");
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), (CUdeviceptr)1, 0.5));
  assert_int_equal(seen.args[1].type, CUJIT_TYPE_F64);
  assert_true(seen.args[1].value.f64 == 0.5);
  hand_free(&h);
  /* an extern "C" kernel's types are probed at the first typed call, not at lookup */
  hand_init_from(&h, m, "csaxpy");
  assert_null(cj_function_ptypes(&h.fn));
  assert_string_equal(cujit_function_signature(&h.fn), "f32 ptr ptr u32");
  assert_non_null(cj_function_ptypes(&h.fn));
  assert_int_equal(cj_function_ptypes(&h.fn)->from, CJ_TYPES_COMPILER);
  assert_string_equal(cj_function_ptypes(&h.fn)->p[1].m.spelling, "const float *");
  hand_free(&h);
  /* no module: nothing to ask */
  hand_init(&h, NULL, "k", "i32");
  assert_null(cujit_function_signature(&h.fn));
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_SIGNATURE);
  assert_non_null(strstr(cujit_last_error(), "belongs to no module"));
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature()"));
  hand_free(&h);
  cujit_module_destroy(m);
}

/* A typedef chosen by the preprocessor is what the compiler says: a double here, where a
 * reader of the source that honoured only `#if 0` took the other branch and read an int. */
typedef cujit_status (*take_fn)(cujit_dim3, cujit_dim3, const void *, f4v, char);

static void typed_calls_read_what_the_compiler_read(void **state) {
  static const char src[] = "#if 1\ntypedef double real;\n#elif 1\ntypedef int real;\n#endif\n"
                            "__global__ void k(real x, unsigned n) {}\n";
  cujit_module *m = types_compile(src, "real.cu", NULL, NULL, NULL, 0),
               *s2 = types_compile(kSaxpy, "saxpy.cu", NULL, kSaxpyExprs, NULL, 0);
  double x = 2.5;
  unsigned n = 7;
  struct {
    float a;
    int b;
    double c;
  } p = {1, 2, 3};
  f4v v = {{1, 2, 3, 4}};
  void *ptr = NULL;
  hand h;
  (void)state;
  hand_init_from(&h, m, "k");
  assert_ok(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), x, n));
  assert_arg(0, CUJIT_TYPE_F64, &x, 8);
  assert_arg(1, CUJIT_TYPE_U32, &n, 4);
  hand_free(&h);
  /* a struct known by name is bound by address; vectors stay by value */
  hand_init_from(&h, s2, "ns::take");
  assert_ok(cujit_function_bind(&h.fn, NULL, &ptr));
  assert_ok(((take_fn)ptr)(CUJIT_DIM3(1), CUJIT_DIM3(1), &p, v, 'c'));
  assert_arg(0, CUJIT_TYPE_BYTES, &p, 16);
  assert_arg(1, CUJIT_TYPE_BYTES, &v, 16);
  assert_arg(2, CUJIT_TYPE_I8, &(char){'c'}, 1);
  hand_free(&h);
  cujit_module_destroy(s2);
  cujit_module_destroy(m);
}

/* An explicit signature may describe a parameter otherwise (opaque bytes, members), but
 * not as another scalar than the compiler says; it is kept over the compiler's for calls. */
static void explicit_signatures_against_the_compiler(void **state) {
  cujit_module *m = types_compile(kSaxpy, "saxpy.cu", NULL, kSaxpyExprs, NULL, 0);
  hand h;
  (void)state;
  hand_init_from(&h, m, "saxpy");
  assert_status_detail(cujit_function_set_signature(&h.fn, "u32 ptr ptr f32"),
                       CUJIT_ERROR_SIGNATURE,
                       "signature \"u32 ptr ptr f32\" does not match "
                       "kernel 'saxpy': its parameter 1 (u32) is not what the compiler says the "
                       "kernel takes there, 'float'");
  assert_status_detail(cujit_function_set_signature(&h.fn, "f32 u64 ptr u32"),
                       CUJIT_ERROR_SIGNATURE, "parameter 2 (u64)");
  assert_null(h.fn.upper);
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr b4:4"));
  assert_string_equal(cujit_function_signature(&h.fn), "f32 ptr ptr b4:4");
  assert_int_equal(cj_function_ptypes(&h.fn)->from, CJ_TYPES_COMPILER); /* launches: the truth */
  hand_free(&h);
  hand_init_from(&h, m, "ns::take");
  assert_ok(cujit_function_set_signature(&h.fn, "{f32 i32 f64} f32x4 i8"));
  assert_string_equal(cujit_function_signature(&h.fn), "{f32 i32 f64} f32x4 i8");
  hand_free(&h);
  /* an extern "C" kernel not probed: launches check against the signature meanwhile */
  hand_init_from(&h, m, "csaxpy");
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr u32"));
  assert_int_equal(cj_function_ptypes(&h.fn)->from, CJ_TYPES_SIGNATURE);
  assert_string_equal(cj_function_ptypes(&h.fn)->p[3].m.spelling, "unsigned int");
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr i32"));
  assert_string_equal(cj_function_ptypes(&h.fn)->p[3].m.spelling, "int");
  hand_free(&h);
  /* a signature set before the layout is known is checked once it is */
  hand_init(&h, NULL, "late", NULL);
  h.fn.nparams = 4; /* a count, but no offsets and sizes yet */
  assert_ok(cujit_function_set_signature(&h.fn, "f32 ptr ptr u32"));
  assert_int_equal(h.fn.upper->sig->checked, 0);
  h.fn.nparams = 3;
  h.fn.param_offsets = h.offs;
  h.fn.param_sizes = h.sizes;
  assert_status_detail(cujit_call(&h.fn, CUJIT_DIM3(1), CUJIT_DIM3(1), 1.0, (CUdeviceptr)1,
                                  (CUdeviceptr)2, 3),
                       CUJIT_ERROR_SIGNATURE, "has 4 parameters, but kernel 'late' has 3");
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
  assert_ok(f(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, CUJIT_INOUT_PTR(host, sizeof host), v, p,
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
  assert_ok(
      cujit_function_set_signature(&h.fn, "i8 u16 b2:2 f64 ptr f32x4 {f32 i32 f64} b12:4 i64 f32"));
  assert_ok(((wide_fn)ptr2)(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0.5f, 0, 0, v, p, blob, 0, 0));
  assert_arg(2, CUJIT_TYPE_F16, &half, 2);
  hand_free(&h);           /* frees ptr2 with the function */
  assert_null(h.fn.upper); /* freed, the bindings with it */
}

/* Scalars only, 26 of them: integers beyond the six registers' worth and floating-point
 * values beyond the eight land on the stack, interleaved, and libffi must find each. */
typedef cujit_status (*scalars_fn)(cujit_dim3, cujit_dim3, int8_t, uint8_t, int16_t, uint16_t,
                                   int32_t, uint32_t, int64_t, uint64_t, CUdeviceptr, float, double,
                                   float /* f16 */, float /* bf16 */, float, double, float, double,
                                   float, double, int32_t, float, uint64_t, double, CUdeviceptr,
                                   int16_t, float);
#  define SCALAR_TYPES                                                        \
    "i8 u8 i16 u16 i32 u32 i64 u64 ptr f32 f64 f16 bf16 f32 f64 f32 f64 f32 " \
    "f64 i32 f32 u64 f64 ptr i16 f32"

static cujit_status call_scalars_k(scalars_fn f, int k) {
  return f(CUJIT_DIM3(5, 6, 7), CUJIT_DIM3(64, 2), (int8_t)(-100 + k), 200, -30000, 60000,
           -2000000000, 4000000000u, INT64_MIN + k, UINT64_MAX - (uint64_t)k,
           (CUdeviceptr)0x7f0000001000ull, 1.25f, -2.5, 0.5f, 1.5f, 3.0f, 4.0, 5.0f, 6.0, 7.0f, 8.0,
           -9, 10.0f, 11, 12.0, (CUdeviceptr)0x13000, -14, 15.5f);
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
  assert_status_detail(stale(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                       CUJIT_ERROR_INVALID_VALUE, "after cujit_function_unbind()");
  assert_int_equal(seen.calls, 0);
  call_scalars((scalars_fn)ptrs[1], 3);
  assert_scalars(3);
  /* a new binding never takes a freed pointer's place */
  assert_ok(cujit_function_bind(&h.fn, NULL, &again));
  assert_true(again != ptrs[0]);
  assert_status_detail(stale(CUJIT_DIM3(1), CUJIT_DIM3(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
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
                       "belongs to no module");
  hand_free(&h);
}

/* Nested and vector structs by value through libffi, several passed on the stack. */
typedef struct {
  short s[3];
} in3;
typedef struct {
  in3 in;
  double d[2];
} out2;
typedef struct {
  unsigned char x, y, z;
} uc3;
typedef struct __attribute__((aligned(8))) {
  int x, y;
} i2;
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

typedef cujit_status (*saxpy_fn)(cujit_dim3, cujit_dim3, float, CUdeviceptr, CUdeviceptr, unsigned);

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
  cujit_module *m = types_compile(kSaxpy, "saxpy.cu", NULL, kSaxpyExprs, NULL, 0);
  pthread_t th[T];
  hand h;
  void *ret;
  int i;
  (void)state;
  hand_init_from(&h, m, "saxpy");
  cj_call_set_launcher(count_launch);
  counted = 0;
  for (i = 0; i < T; i++) assert_int_equal(pthread_create(&th[i], NULL, caller, &h.fn), 0);
  for (i = 0; i < T; i++) {
    assert_int_equal(pthread_join(th[i], &ret), 0);
    assert_null(ret);
  }
  cj_call_set_launcher(NULL);
  assert_int_equal(counted, T * 400);
  assert_null(h.fn.upper->sig->older); /* read once */
  hand_free(&h);
  cujit_module_destroy(m);
}

/* Every allocation of reading, checking and binding fails in turn: out of memory is
 * reported, nothing crashes or leaks (the fault build runs under AddressSanitizer). */
static const char kFaultTypes[] = "i8 {i8 {i16 f32}[2] f64[3]} f32x4 b12:4 ptr";

/* Sets a signature, reads the compiler's types of a C++ kernel from its symbol and makes
 * its signature, and binds. */
static cujit_status read_bind_call(hand *h, cujit_module *m, const types_kernel *k) {
  void *ptr;
  cj_signature *s = NULL;
  cj_ptypes *t = NULL;
  cujit_status st = cujit_function_set_signature(&h->fn, kFaultTypes);
  if (st == CUJIT_OK) st = cj_ptypes_of(cj_module_find(m), k->sym, k->n, 0, &t);
  if (st == CUJIT_OK) st = cj_sig_from_ptypes(t, k->n, k->offsets, k->sizes, &s);
  cj_sig_free(s);
  cj_ptypes_free(t);
  if (st == CUJIT_OK) st = cujit_function_bind(&h->fn, NULL, &ptr);
  return st;
}

static void allocation_failures(void **state) {
  static const char src[] =
      "struct S { char c; double d; };\n"
      "namespace ns { template <typename T> struct V { T x; }; }\n"
      "__global__ void k(char a, S s, float4 v, ns::V<int> w, const int *__restrict__ p,\n"
      "                  void (*f)(S, ns::V<S> *), uchar3 u) {}\n";
  cujit_module *m = types_compile(src, "faults.cu", NULL, NULL, NULL, 0);
  types_kernel k;
  long n;
  int fired = 0;
  (void)state;
  assert_ok(types_read(m, "k", 0, &k));
  for (n = 1; n < 100000; n++) {
    hand h;
    cujit_status st;
    hand_init(&h, NULL, "structs", kFaultTypes);
    cujit_test_fail_alloc_after(n);
    st = read_bind_call(&h, m, &k);
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
  types_free(&k);
  cujit_module_destroy(m);
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

/* `test_signature --recorded` runs the tests that launch through the recorder, with it
 * installed: a CTest entry of its own (test_signature_recorded), skipped (77) saying why
 * in a build without the hooks, so that the plain tests' pass is not taken for theirs. */
static int run_recorded(void) {
#ifdef CUJIT_FAULT_INJECTION
#  define RECORDED(t) cmocka_unit_test_setup_teardown(t, setup_recorder, teardown_recorder)
  const struct CMUnitTest tests[] = {
      RECORDED(call_counts_arguments),
      RECORDED(call_many_parameters),
      RECORDED(typed_calls_convert_or_refuse),
      RECORDED(typed_calls_keep_bools_bools),
      RECORDED(signature_from_module),
      RECORDED(typed_calls_read_what_the_compiler_read),
      RECORDED(explicit_signatures_against_the_compiler),
      RECORDED(bound_calls),
      RECORDED(bind_refusals),
      RECORDED(bound_scalars_every_place),
      RECORDED(bound_structs),
      RECORDED(threads_share_a_function),
      RECORDED(allocation_failures),
  };
  return cmocka_run_group_tests_name("recorded", tests, NULL, NULL);
#else
  printf("SKIP: these tests need the library's test hooks (the launch recorder, "
         "cj_call_set_launcher(), and the allocation-failure hook), which only the fault-injection "
         "build has (-DCUJIT_FAULT_INJECTION=ON; scripts/check runs it)\n");
  return TEST_SKIP_CODE;
#endif
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(type_strings),
      cmocka_unit_test(layout_check),
      cmocka_unit_test(promotions),
      cmocka_unit_test(pointers_and_values),
      cmocka_unit_test(stale_pointers_refuse),
  };
  if (argc == 2 && strcmp(argv[1], "--recorded") == 0) return run_recorded();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

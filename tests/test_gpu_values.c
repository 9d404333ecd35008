/* test_gpu_values - arguments by value reach the kernel intact at the offsets it expects:
 * every scalar width, float3, float4, int4, double2, a user struct with padding, and a
 * struct larger than 16 bytes, mixed so that alignment gaps appear between them. */
#include "gputest.h"

static const char kSrc[] =
    "struct S { char c; double d; int i; };\n"
    "struct Big { float v[10]; };\n"
    "__global__ void scalars(double *o, signed char i8, unsigned char u8, short i16,\n"
    "                        unsigned short u16, int i32, unsigned u32, long long i64,\n"
    "                        unsigned long long u64, float f32, double f64) {\n"
    "  o[0] = i8; o[1] = u8; o[2] = i16; o[3] = u16; o[4] = i32; o[5] = u32;\n"
    "  o[6] = (double)i64; o[7] = (double)u64; o[8] = f32; o[9] = f64;\n"
    "}\n"
    "__global__ void vectors(double *o, char tag, float3 a, float4 b, int4 c, double2 d) {\n"
    "  o[0] = tag; o[1] = a.x; o[2] = a.y; o[3] = a.z;\n"
    "  o[4] = b.x; o[5] = b.y; o[6] = b.z; o[7] = b.w;\n"
    "  o[8] = c.x; o[9] = c.y; o[10] = c.z; o[11] = c.w; o[12] = d.x; o[13] = d.y;\n"
    "}\n"
    "__global__ void structs(double *o, char c, S s, Big big, short tail) {\n"
    "  o[0] = c; o[1] = s.c; o[2] = s.d; o[3] = s.i;\n"
    "  for (int k = 0; k < 10; k++) o[4 + k] = big.v[k];\n"
    "  o[14] = tail;\n"
    "}\n";

typedef struct {
  float x, y, z;
} host_float3;
typedef struct {
  float x, y, z, w;
} host_float4;
typedef struct {
  int x, y, z, w;
} host_int4;
typedef struct {
  double x, y;
} host_double2;
typedef struct {
  char c;
  double d;
  int i;
} host_s;
typedef struct {
  float v[10];
} host_big;

static void every_scalar_width(void **state) {
  static const double want[] = {-100,        200,          -30000,           60000,
                                -2000000000, 4000000000.0, -1099511627776.0, 18014398509481984.0,
                                1.5,         -2.25e100};
  double out[10];
  cujit_function *f = gpu_function(mod, "scalars");
  size_t i;
  (void)state;
  memset(out, 0, sizeof out);
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(out, sizeof out),
                         cujit_i8(-100), cujit_u8(200), cujit_i16(-30000), cujit_u16(60000),
                         cujit_i32(-2000000000), cujit_u32(4000000000u),
                         cujit_i64(-1099511627776LL), cujit_u64(18014398509481984ULL),
                         cujit_f32(1.5f), cujit_f64(-2.25e100)));
  for (i = 0; i < 10; i++) {
    if (out[i] != want[i]) fail_msg("value %zu: got %.17g, want %.17g", i, out[i], want[i]);
  }
}

static void vector_types(void **state) {
  host_float3 a = {1.5f, -2.5f, 3.25f};
  host_float4 b = {4, 5, 6, 7};
  host_int4 c = {-8, 9, -10, 11};
  host_double2 d = {1e-300, -3e300};
  double out[14], want[14] = {42, 1.5, -2.5, 3.25, 4, 5, 6, 7, -8, 9, -10, 11, 1e-300, -3e300};
  cujit_function *f = gpu_function(mod, "vectors");
  size_t i, off = 0, size = 0;
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(out, sizeof out), cujit_i8(42),
                         CUJIT_VALUE(a), CUJIT_VALUE(b), CUJIT_VALUE(c), CUJIT_VALUE(d)));
  for (i = 0; i < 14; i++) {
    if (out[i] != want[i]) fail_msg("field %zu: got %.17g, want %.17g", i, out[i], want[i]);
  }
  assert_ok(cujit_function_get_param_info(f, 3, &off, &size)); /* float4 is 16-byte aligned */
  assert_int_equal(off, 32);
  assert_int_equal(size, 16);
}

static void user_structs_small_and_large(void **state) {
  host_s s = {'q', 2.5e-7, -123456};
  host_big big;
  double out[15];
  cujit_function *f = gpu_function(mod, "structs");
  int k;
  (void)state;
  for (k = 0; k < 10; k++) big.v[k] = (float)k * 1.25f - 3.0f;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_out(out, sizeof out), cujit_i8('c'),
                         CUJIT_VALUE(s), CUJIT_VALUE(big), cujit_i16(-7)));
  assert_true(out[0] == 'c');
  assert_true(out[1] == 'q');
  assert_true(out[2] == 2.5e-7);
  assert_true(out[3] == -123456);
  for (k = 0; k < 10; k++) assert_true(out[4 + k] == (double)big.v[k]);
  assert_true(out[14] == -7);
}

GPU_GROUP_MAIN(kSrc, "values.cu", NULL, cmocka_unit_test(every_scalar_width),
               cmocka_unit_test(vector_types), cmocka_unit_test(user_structs_small_and_large))

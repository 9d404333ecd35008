/* random.c - random arrays from Philox-4x32-10, a counter-based generator: one call maps a
 * 128-bit counter and a 64-bit key to 128 random bits, so element i's value depends only on
 * (seed, i) and never on the grid, the block or the device.
 *
 * The counter is {q, q >> 32, 0, 0} for the q-th group of elements and the key is the
 * seed; each call's four 32-bit words give:
 *   F32 uniform: 4 elements, (w >> 8) * 2^-24, in [0, 1);
 *   F64 uniform: 2 elements, (53 bits of two words) * 2^-53, in [0, 1);
 *   F32 normal:  4 elements, Box-Muller on the pairs (w0, w1) and (w2, w3), each word a
 *                uniform number of 32 bits, computed in double and rounded to float;
 *   F64 normal:  2 elements, Box-Muller on two uniform numbers of 53 bits.
 * Box-Muller's logarithm, sine and cosine are written here with correctly rounded
 * operations only (+, -, *, /, fma, sqrt, each spelled as an intrinsic so that the compiler
 * cannot contract or reorder them), so that every device, and a C program on the host
 * doing the same operations, gets the same bits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

/* Terms of the series below: atanh's up to s^19, sine's to x^17, cosine's to x^18. */
#define ATANH_TERMS 9
#define SIN_TERMS 8
#define COS_TERMS 9

static const char kPhilox[] =
    "#define CJ_2M24F 5.9604644775390625e-08f /* 2^-24 */\n"
    "#define CJ_2M32 2.3283064365386962890625e-10 /* 2^-32 */\n"
    "#define CJ_2M53 1.1102230246251565404236316680908203125e-16 /* 2^-53 */\n\n"
    "static __device__ __forceinline__ void cj_philox(unsigned c[4], unsigned k0, unsigned k1) "
    "{\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    if (r) {\n"
    "      k0 += 0x9E3779B9u;\n"
    "      k1 += 0xBB67AE85u;\n"
    "    }\n"
    "    unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];\n"
    "    unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];\n"
    "    unsigned x0 = hi1 ^ c[1] ^ k0, x2 = hi0 ^ c[3] ^ k1;\n"
    "    c[0] = x0;\n"
    "    c[1] = lo1;\n"
    "    c[2] = x2;\n"
    "    c[3] = lo0;\n"
    "  }\n"
    "}\n\n";

/* Box-Muller with its own logarithm and sine/cosine (see the file's comment). The
 * coefficients are inserted before this text as cj_atanh[], cj_sin[] and cj_cos[]. */
static const char kNormal[] =
    "#define CJ_ADD __dadd_rn\n"
    "#define CJ_SUB __dsub_rn\n"
    "#define CJ_MUL __dmul_rn\n"
    "#define CJ_FMA __fma_rn\n"
    "\n"
    "/* Horner's rule with fused steps: c[0] + x * (c[1] + x * (... c[n - 1])). */\n"
    "static __device__ __forceinline__ double cj_poly(const double *c, int n, double x) {\n"
    "  double p = c[n - 1];\n"
    "  for (int k = n - 2; k >= 0; k--) p = CJ_FMA(p, x, c[k]);\n"
    "  return p;\n"
    "}\n"
    "\n"
    "/* log(u) for u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) is\n"
    " * 2 atanh(s) with s = (m - 1) / (m + 1); ln 2 is split so that e * ln2_hi is exact. */\n"
    "static __device__ double cj_log(double u) {\n"
    "  unsigned long long bits = (unsigned long long)__double_as_longlong(u);\n"
    "  int e = (int)((bits >> 52) & 0x7ff) - 1023;\n"
    "  double m = __longlong_as_double((long long)((bits & 0xfffffffffffffull) |\n"
    "                                              0x3ff0000000000000ull));\n"
    "  if (m > 1.4142135623730951) {\n"
    "    m = CJ_MUL(m, 0.5);\n"
    "    e += 1;\n"
    "  }\n"
    "  double s = __ddiv_rn(CJ_SUB(m, 1.0), CJ_ADD(m, 1.0)), s2 = CJ_ADD(s, s);\n"
    "  double z = CJ_MUL(s, s);\n"
    "  double log_m = CJ_FMA(CJ_MUL(s2, z), cj_poly(cj_atanh, CJ_ATANH_TERMS, z), s2);\n"
    "  double de = (double)e;\n"
    "  return CJ_ADD(CJ_MUL(de, 0.693145751953125), CJ_FMA(de, 1.4286068203094173e-06, "
    "log_m));\n"
    "}\n"
    "\n"
    "/* sin and cos of 2 pi t for t in [0, 1): t = q / 4 + r with |r| <= 1/8 (exact), then\n"
    " * series in x = 2 pi r, |x| <= pi / 4, and the quadrant q. */\n"
    "static __device__ void cj_sincos_2pi(double t, double *sin_out, double *cos_out) {\n"
    "  double q = rint(CJ_MUL(t, 4.0)), r = CJ_SUB(t, CJ_MUL(q, 0.25));\n"
    "  double x = CJ_FMA(r, 6.2831853071795862, CJ_MUL(r, 2.4492935982947064e-16));\n"
    "  double x2 = CJ_MUL(x, x);\n"
    "  double s = CJ_FMA(CJ_MUL(x, x2), cj_poly(cj_sin, CJ_SIN_TERMS, x2), x);\n"
    "  double c = CJ_FMA(x2, cj_poly(cj_cos, CJ_COS_TERMS, x2), 1.0);\n"
    "  switch ((int)q & 3) {\n"
    "    case 0: *sin_out = s; *cos_out = c; break;\n"
    "    case 1: *sin_out = c; *cos_out = -s; break;\n"
    "    case 2: *sin_out = -s; *cos_out = -c; break;\n"
    "    default: *sin_out = -c; *cos_out = s; break;\n"
    "  }\n"
    "}\n"
    "\n"
    "/* Two normal numbers from u1 in (0, 1] and u2 in [0, 1). */\n"
    "static __device__ void cj_box_muller(double u1, double u2, double *z0, double *z1) {\n"
    "  double r = __dsqrt_rn(CJ_MUL(-2.0, cj_log(u1))), s, c;\n"
    "  cj_sincos_2pi(u2, &s, &c);\n"
    "  *z0 = CJ_MUL(r, c);\n"
    "  *z1 = CJ_MUL(r, s);\n"
    "}\n"
    "\n"
    "static __device__ __forceinline__ unsigned long long cj_53(unsigned hi, unsigned lo) {\n"
    "  return (((unsigned long long)hi << 32) | lo) >> 11;\n"
    "}\n\n";

/* What each distribution and type makes of one Philox output c[4]: CJ_PER values in v. */
static const char kUniformF32[] =
    "#define CJ_PER 4\n"
    "static __device__ __forceinline__ void cj_values(const unsigned c[4], float v[4]) {\n"
    "  for (int k = 0; k < 4; k++) v[k] = (float)(c[k] >> 8) * CJ_2M24F;\n"
    "}\n";
static const char kUniformF64[] =
    "#define CJ_PER 2\n"
    "static __device__ __forceinline__ void cj_values(const unsigned c[4], double v[2]) {\n"
    "  v[0] = (double)(((unsigned long long)c[0] << 32 | c[1]) >> 11) * CJ_2M53;\n"
    "  v[1] = (double)(((unsigned long long)c[2] << 32 | c[3]) >> 11) * CJ_2M53;\n"
    "}\n";
static const char kNormalF32[] =
    "#define CJ_PER 4\n"
    "static __device__ __forceinline__ void cj_values(const unsigned c[4], float v[4]) {\n"
    "  for (int k = 0; k < 4; k += 2) {\n"
    "    double z0, z1;\n"
    "    cj_box_muller(CJ_MUL(CJ_ADD((double)c[k], 1.0), CJ_2M32),\n"
    "                  CJ_MUL((double)c[k + 1], CJ_2M32), &z0, &z1);\n"
    "    v[k] = __double2float_rn(z0);\n"
    "    v[k + 1] = __double2float_rn(z1);\n"
    "  }\n"
    "}\n";
static const char kNormalF64[] =
    "#define CJ_PER 2\n"
    "static __device__ __forceinline__ void cj_values(const unsigned c[4], double v[2]) {\n"
    "  cj_box_muller(CJ_MUL(CJ_ADD((double)cj_53(c[0], c[1]), 1.0), CJ_2M53),\n"
    "                CJ_MUL((double)cj_53(c[2], c[3]), CJ_2M53), &v[0], &v[1]);\n"
    "}\n";

static const char kKernel[] =
    "(cj_t *out, unsigned long long n, unsigned long long seed) {\n"
    "  unsigned long long groups = (n + CJ_PER - 1) / CJ_PER;\n"
    "  for (unsigned long long q = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "       q < groups; q += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "    unsigned c[4] = {(unsigned)q, (unsigned)(q >> 32), 0u, 0u};\n"
    "    cj_t v[CJ_PER];\n"
    "    cj_philox(c, (unsigned)seed, (unsigned)(seed >> 32));\n"
    "    cj_values(c, v);\n"
    "    for (unsigned k = 0; k < CJ_PER; k++)\n"
    "      if (q * CJ_PER + k < n) out[q * CJ_PER + k] = v[k];\n"
    "  }\n"
    "}\n";

/* The series' coefficients, the kernel's and the host's (cujit_array_random_host). */
typedef struct series {
  double atanh[ATANH_TERMS]; /* 1/3, 1/5, ... */
  double sin[SIN_TERMS];     /* -1/3!, 1/5!, ... */
  double cos[COS_TERMS];     /* -1/2!, 1/4!, ... */
} series;

/* 1/k! for k = first, first + 2, ... (n terms), signs alternating from `sign`; or 1/k for
 * odd k with `inverse`. */
static void terms(double *c, int n, int first, double sign, int inverse) {
  double fact = 1;
  int k, i;
  for (k = 2; k <= first; k++) fact *= k;
  for (i = 0, k = first; i < n; i++, k += 2) {
    c[i] = inverse ? 1.0 / k : sign / fact;
    fact *= (double)(k + 1) * (k + 2);
    sign = -sign;
  }
}

static void series_init(series *s) {
  terms(s->atanh, ATANH_TERMS, 3, 1, 1);
  terms(s->sin, SIN_TERMS, 3, -1, 0);
  terms(s->cos, COS_TERMS, 2, -1, 0);
}

/* Appends `static __device__ const double name[] = {...}` (%.17g gives each double back
 * exactly). */
static void coefficients(cj_buf *b, const char *name, const double *c, int n) {
  int i;
  cj_buf_printf(b, "static __device__ const double %s[] = {", name);
  for (i = 0; i < n; i++) cj_buf_printf(b, "%s%.17g", i ? ", " : "", c[i]);
  cj_buf_puts(b, "};\n");
}

static void normal_prelude(cj_buf *b) {
  series s;
  series_init(&s);
  cj_buf_printf(b,
                "#define CJ_ATANH_TERMS %d\n#define CJ_SIN_TERMS %d\n#define CJ_COS_TERMS "
                "%d\n",
                ATANH_TERMS, SIN_TERMS, COS_TERMS);
  coefficients(b, "cj_atanh", s.atanh, ATANH_TERMS);
  coefficients(b, "cj_sin", s.sin, SIN_TERMS);
  coefficients(b, "cj_cos", s.cos, COS_TERMS);
  cj_buf_puts(b, kNormal);
}

static char *random_source(int type, cujit_distribution dist, const char *name) {
  int f64 = type == CUJIT_TYPE_F64;
  cj_buf b = {0};
  cj_buf_printf(&b, "typedef %s cj_t;\n\n", f64 ? "double" : "float");
  cj_buf_puts(&b, kPhilox);
  if (dist == CUJIT_RANDOM_NORMAL) normal_prelude(&b);
  if (dist == CUJIT_RANDOM_UNIFORM)
    cj_buf_puts(&b, f64 ? kUniformF64 : kUniformF32);
  else
    cj_buf_puts(&b, f64 ? kNormalF64 : kNormalF32);
  cj_buf_printf(&b, "\nextern \"C\" __global__ void %s", name);
  cj_buf_puts(&b, kKernel);
  if (b.oom) {
    cj_buf_free(&b);
    return NULL;
  }
  return cj_buf_take(&b);
}

static cujit_status random_kernel(int type, cujit_distribution dist, cujit_function **fn) {
  char name[40], *src;
  cujit_status st;
  snprintf(name, sizeof name, "cj_random_%s_%s",
           dist == CUJIT_RANDOM_UNIFORM ? "uniform" : "normal", cj_elem_of(type)->name);
  if (!(src = random_source(type, dist, name))) return cj_fail_oom("writing a random kernel");
  st = cj_array_kernel(src, name, fn);
  cj_free(src);
  return st;
}

/* The type and distribution of `fn` (cujit_array_random or its host form). */
static cujit_status check(const char *fn, cujit_type type, cujit_distribution dist) {
  CJ_CHECK(type == CUJIT_TYPE_F32 || type == CUJIT_TYPE_F64, CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not a type random "
           "arrays are made of; use CUJIT_TYPE_F32 or CUJIT_TYPE_F64 (and "
           "cujit_array_astype() for others)",
           fn, (int)type);
  CJ_CHECK(dist == CUJIT_RANDOM_UNIFORM || dist == CUJIT_RANDOM_NORMAL, CUJIT_ERROR_INVALID_VALUE,
           "%s: distribution %d is unknown; "
           "use CUJIT_RANDOM_UNIFORM or CUJIT_RANDOM_NORMAL",
           fn, (int)dist);
  return CUJIT_OK;
}

cujit_status cujit_array_random(cujit_array **out, cujit_type type, int ndim, const int64_t *shape,
                                cujit_distribution dist, uint64_t seed) {
  cujit_function *fn = NULL;
  int64_t per;
  cj_array *a;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_array_random: out is NULL");
  *out = NULL;
  CJ_TRY(check("cujit_array_random", type, dist));
  CJ_TRACE("cujit: random %s", CJ_TYPE_NAME(type));
  /* the kernel first: it needs no device, so that a broken toolkit shows everywhere */
  CJ_TRY(random_kernel(type, dist, &fn));
  CJ_TRY(cj_array_new(out, &a, type, ndim, shape, "cujit_array_random"));
  per = type == CUJIT_TYPE_F32 ? 4 : 2;
  st = cj_array_launch(fn, (a->size + per - 1) / per, a->stream,
                       (cujit_arg[]){cujit_ptr(a->data), cujit_u64((uint64_t)a->size),
                                     cujit_u64(seed)},
                       3);
  return cj_array_unmake(st, out, 1);
}

/* ---- the same numbers on the host (cujit_array_random_host) ----
 *
 * Each step below is the kernel's, in its order: its fused steps are fma(), and this file
 * is built without contraction of a * b + c (-ffp-contract=off), so that every product
 * and sum is rounded where the kernel rounds it and the bits agree. */

static void host_philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  int r;
  for (r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t x0, x2;
    if (r) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    x0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    x2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = x0;
    c[1] = (uint32_t)p1;
    c[2] = x2;
    c[3] = (uint32_t)p0;
  }
}

static double host_poly(const double *c, int n, double x) {
  double p = c[n - 1];
  int k;
  for (k = n - 2; k >= 0; k--) p = fma(p, x, c[k]);
  return p;
}

static double host_log(const series *sr, double u) {
  uint64_t bits;
  double m, s, s2, z, log_m, de;
  int e;
  memcpy(&bits, &u, sizeof bits);
  e = (int)((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0xfffffffffffffull) | 0x3ff0000000000000ull;
  memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m = m * 0.5;
    e += 1;
  }
  s = (m - 1.0) / (m + 1.0);
  s2 = s + s;
  z = s * s;
  log_m = fma(s2 * z, host_poly(sr->atanh, ATANH_TERMS, z), s2);
  de = (double)e;
  return de * 0.693145751953125 + fma(de, 1.4286068203094173e-06, log_m);
}

static void host_box_muller(const series *sr, double u1, double u2, double z[2]) {
  double r = sqrt(-2.0 * host_log(sr, u1));
  double q = rint(u2 * 4.0), t = u2 - q * 0.25;
  double x = fma(t, 6.2831853071795862, t * 2.4492935982947064e-16), x2 = x * x;
  double sn = fma(x * x2, host_poly(sr->sin, SIN_TERMS, x2), x);
  double cs = fma(x2, host_poly(sr->cos, COS_TERMS, x2), 1.0);
  double quad_sin[4] = {sn, cs, -sn, -cs}, quad_cos[4] = {cs, -sn, -cs, sn};
  z[0] = r * quad_cos[(int)q & 3];
  z[1] = r * quad_sin[(int)q & 3];
}

#define HOST_2M24F 5.9604644775390625e-08f
#define HOST_2M32 2.3283064365386962890625e-10
#define HOST_2M53 1.1102230246251565404236316680908203125e-16

static uint64_t host_53(uint32_t hi, uint32_t lo) { return (((uint64_t)hi << 32) | lo) >> 11; }

/* The values of the q-th Philox output: 4 floats or 2 doubles, as cj_values makes them. */
static void host_values(const series *sr, int f64, int normal, const uint32_t c[4], void *out) {
  float *f = out;
  double *d = out, z[2];
  int k;
  if (f64 && !normal) {
    d[0] = (double)host_53(c[0], c[1]) * HOST_2M53;
    d[1] = (double)host_53(c[2], c[3]) * HOST_2M53;
  } else if (f64) {
    host_box_muller(sr, ((double)host_53(c[0], c[1]) + 1.0) * HOST_2M53,
                    (double)host_53(c[2], c[3]) * HOST_2M53, d);
  } else if (!normal) {
    for (k = 0; k < 4; k++) f[k] = (float)(c[k] >> 8) * HOST_2M24F;
  } else {
    for (k = 0; k < 4; k += 2) {
      host_box_muller(sr, ((double)c[k] + 1.0) * HOST_2M32, (double)c[k + 1] * HOST_2M32, z);
      f[k] = (float)z[0];
      f[k + 1] = (float)z[1];
    }
  }
}

cujit_status cujit_array_random_host(void *host, cujit_type type, size_t n, cujit_distribution dist,
                                     uint64_t seed) {
  int f64 = type == CUJIT_TYPE_F64, normal = dist == CUJIT_RANDOM_NORMAL;
  size_t per, size, q, i;
  unsigned char v[16];
  series sr;
  CJ_TRY(check("cujit_array_random_host", type, dist));
  CJ_CHECK(host || !n, CUJIT_ERROR_INVALID_VALUE, "cujit_array_random_host: host is NULL");
  per = f64 ? 2 : 4;
  size = f64 ? sizeof(double) : sizeof(float);
  if (normal) series_init(&sr);
  for (q = 0, i = 0; i < n; q++, i += per) {
    uint32_t c[4] = {(uint32_t)q, (uint32_t)((uint64_t)q >> 32), 0, 0};
    host_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    host_values(&sr, f64, normal, c, v);
    memcpy((unsigned char *)host + i * size, v, (n - i < per ? n - i : per) * size);
  }
  return CUJIT_OK;
}

/* philoxref.h - a host reference of cujit_array_random(), written from the definitions:
 * Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11) and
 * the transforms cujit documents (uniform from the top bits, Box-Muller with a logarithm
 * and a sine/cosine made of correctly rounded operations). Each floating-point step is the
 * one the generated kernel makes, so results agree bit for bit; the including test must be
 * compiled without contraction of a * b + c into fma (-ffp-contract=off). */
#ifndef CUJIT_PHILOXREF_H
#define CUJIT_PHILOXREF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static void ref_philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  int r;
  for (r = 0; r < 10; r++) {
    uint64_t p0, p1;
    uint32_t x0, x2;
    if (r) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    p0 = (uint64_t)0xD2511F53u * c[0];
    p1 = (uint64_t)0xCD9E8D57u * c[2];
    x0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    x2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = x0;
    c[1] = (uint32_t)p1;
    c[2] = x2;
    c[3] = (uint32_t)p0;
  }
}

/* c[0] + x * (c[1] + ... ) with fused steps. */
static double ref_poly(const double *c, int n, double x) {
  double p = c[n - 1];
  int k;
  for (k = n - 2; k >= 0; k--) p = fma(p, x, c[k]);
  return p;
}

/* 1/3, 1/5, ... 1/19; -1/3!, 1/5!, ... 1/17!; -1/2!, 1/4!, ... 1/18!. */
static double ref_atanh_c[9], ref_sin_c[8], ref_cos_c[9];

static void ref_init(void) {
  double fact = 1;
  int k;
  for (k = 0; k < 9; k++) ref_atanh_c[k] = 1.0 / (2 * k + 3);
  for (k = 1; k <= 18; k++) {
    fact *= k;
    if (k >= 2 && k % 2 == 0) ref_cos_c[k / 2 - 1] = (k % 4 == 2 ? -1.0 : 1.0) / fact;
    if (k >= 3 && k % 2 == 1) ref_sin_c[k / 2 - 1] = (k % 4 == 3 ? -1.0 : 1.0) / fact;
  }
}

static double ref_log(double u) {
  uint64_t bits;
  int e;
  double m, s, s2, z, log_m, de;
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
  log_m = fma(s2 * z, ref_poly(ref_atanh_c, 9, z), s2);
  de = (double)e;
  return de * 0.693145751953125 + fma(de, 1.4286068203094173e-06, log_m);
}

static void ref_sincos_2pi(double t, double *sin_out, double *cos_out) {
  double q = rint(t * 4.0), r = t - q * 0.25;
  double x = fma(r, 6.2831853071795862, r * 2.4492935982947064e-16), x2 = x * x;
  double s = fma(x * x2, ref_poly(ref_sin_c, 8, x2), x);
  double c = fma(x2, ref_poly(ref_cos_c, 9, x2), 1.0);
  switch ((int)q & 3) {
    case 0:
      *sin_out = s;
      *cos_out = c;
      break;
    case 1:
      *sin_out = c;
      *cos_out = -s;
      break;
    case 2:
      *sin_out = -s;
      *cos_out = -c;
      break;
    default:
      *sin_out = -c;
      *cos_out = s;
      break;
  }
}

static void ref_box_muller(double u1, double u2, double *z0, double *z1) {
  double r = sqrt(-2.0 * ref_log(u1)), s, c;
  ref_sincos_2pi(u2, &s, &c);
  *z0 = r * c;
  *z1 = r * s;
}

static uint64_t ref_53(uint32_t hi, uint32_t lo) { return (((uint64_t)hi << 32) | lo) >> 11; }

#define REF_2M32 2.3283064365386962890625e-10
#define REF_2M53 1.1102230246251565404236316680908203125e-16

/* Element i of cujit_array_random(type, normal ? CUJIT_RANDOM_NORMAL : CUJIT_RANDOM_UNIFORM, seed),
 * as a double (a float's value for F32). */
static double ref_random(int f64, int normal, uint64_t seed, uint64_t i) {
  uint64_t per = f64 ? 2 : 4, q = i / per;
  uint32_t c[4] = {(uint32_t)q, (uint32_t)(q >> 32), 0, 0};
  unsigned k = (unsigned)(i % per);
  double z[2];
  ref_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
  if (!normal && !f64) return (double)((float)(c[k] >> 8) * 5.9604644775390625e-08f);
  if (!normal) return (double)ref_53(c[2 * k], c[2 * k + 1]) * REF_2M53;
  if (f64) {
    ref_box_muller(((double)ref_53(c[0], c[1]) + 1.0) * REF_2M53,
                   (double)ref_53(c[2], c[3]) * REF_2M53, &z[0], &z[1]);
    return z[k];
  }
  ref_box_muller(((double)c[k & 2] + 1.0) * REF_2M32, (double)c[(k & 2) + 1] * REF_2M32, &z[0],
                 &z[1]);
  return (double)(float)z[k & 1];
}

#endif

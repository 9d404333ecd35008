/* test_gpu_elementwise - the elementwise generator's loop on chunks on a GPU, against host
 * references, every element of the arrays under the views compared (those outside them
 * must stay as they were): lin_comb at sizes below a chunk, odd ones and 10^6 + 3, on
 * views at every offset (the elements before the first chunk boundary and after the last
 * one at a time) and at offsets that differ (all one at a time), over ranges of step 1
 * (chunks from the range's start), 2 and -1, and in place; 8-, 1- and 4-byte elements in
 * one operation (two a chunk), sixteen 1-byte elements a chunk, __half, an array read,
 * changed and written, one written only where a condition holds (its other elements read
 * and written back unchanged), and an operation whose kernel with chunks does not compile
 * (the one at a time runs it). Arrays whose shapes broadcast (NumPy's rule): lin_comb with
 * its scalars over (3, 4) + (4,), (4, 1) + (3,), 3-D and 4-D patterns, a 0-d array and large
 * sizes, at offsets and over ranges of the broadcast shape's flat indices; other element
 * types, a const complex array, i and other indices in the operation; and a reduction over
 * arrays that broadcast. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "gputest.h"
#include "cujit_array.h"

static const int64_t kSizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 1000, 1000003};

enum { PAD = 40 }; /* elements around each view */

static cujit_array *whole(cujit_type t, int64_t n, const void *host) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_from_host(&a, t, 1, &n, host));
  return a;
}

static cujit_array *view(const cujit_array *a, int64_t start, int64_t n) {
  cujit_array *v = NULL;
  assert_ok(cujit_array_view(a, start, start + n, &v));
  return v;
}

/* Exact in float: halves and small integers, products and sums well below 2^24. */
static float xval(int64_t k) { return (float)(k % 1000) * 0.5f; }
static float yval(int64_t k) { return 3.0f - (float)(k % 777); }

/* lin_comb on x[ox:], y[oy:], z[oz:] of n elements, over i = start, start + step, ...
 * below stop (a range when `range` is set, else all n), z in place on x when `in_place`. */
static void lin_case(cujit_elementwise *k, int64_t n, int ox, int oy, int oz, int range,
                     int64_t start, int64_t stop, int64_t step, int in_place) {
  const int64_t total = n + PAD;
  float *hx = malloc((size_t)total * 4), *hy = malloc((size_t)total * 4),
        *hz = malloc((size_t)total * 4), *got = malloc((size_t)total * 4);
  cujit_array *x, *y, *z, *vx, *vy, *vz;
  int64_t j, i;
  for (j = 0; j < total; j++) hx[j] = xval(j), hy[j] = yval(j), hz[j] = -7.0f;
  x = whole(CUJIT_TYPE_F32, total, hx);
  y = whole(CUJIT_TYPE_F32, total, hy);
  z = whole(CUJIT_TYPE_F32, total, hz);
  vx = view(x, ox, n);
  vy = view(y, oy, n);
  vz = in_place ? view(x, ox, n) : view(z, oz, n);
  if (range)
    assert_ok(CUJIT_ELEMENTWISE_RANGE(k, start, stop, step, 2.5f, vx, -1.5f, vy, vz));
  else
    assert_ok(CUJIT_ELEMENTWISE(k, 2.5f, vx, -1.5f, vy, vz));
  assert_ok(cujit_array_read(in_place ? x : z, got, (size_t)total * 4));
  for (j = 0; j < total; j++) {
    float *before = in_place ? hx : hz, want = before[j];
    int off = in_place ? ox : oz;
    i = j - off;
    if (i >= 0 && i < n &&
        (!range || (step > 0 ? i >= start && i < stop && (i - start) % step == 0
                             : i <= start && i > stop && (start - i) % -step == 0)))
      want = 2.5f * hx[ox + i] + -1.5f * hy[oy + i];
    if (got[j] != want)
      fail_msg("lin_comb n %lld offsets %d %d %d range %d (%lld, %lld, %lld) in place %d: "
               "element %lld of the array is %g, wanted %g",
               (long long)n, ox, oy, oz, range, (long long)start, (long long)stop, (long long)step,
               in_place, (long long)j, got[j], want);
  }
  cujit_array_destroy(vx);
  cujit_array_destroy(vy);
  cujit_array_destroy(vz);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(z);
  free(hx), free(hy), free(hz), free(got);
}

static void lin_comb_on_chunks(void **state) {
  cujit_elementwise *k = NULL;
  size_t s;
  int off;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "float a, float *x, float b, float *y, float *z",
                                     "z[i] = a*x[i] + b*y[i]", NULL));
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++) {
    int64_t n = kSizes[s];
    for (off = 0; off < 5; off++) {
      lin_case(k, n, off, off, off, 0, 0, 0, 1, 0); /* one offset: chunks */
      lin_case(k, n, off, off, off, 0, 0, 0, 1, 1); /* in place */
    }
    lin_case(k, n, 1, 2, 0, 0, 0, 0, 1, 0); /* offsets that differ: one at a time */
    lin_case(k, n, 0, 0, 4, 0, 0, 0, 1, 0); /* four floats apart: chunks again */
    if (n > 3) {
      lin_case(k, n, 0, 0, 0, 1, 3, n, 1, 0); /* chunks from element 3 */
      lin_case(k, n, 2, 2, 2, 1, 1, n - 1, 1, 0);
      lin_case(k, n, 1, 1, 1, 1, 1, n, 2, 0);       /* a step: one at a time */
      lin_case(k, n, 0, 0, 0, 1, n - 1, -1, -1, 0); /* downwards */
    }
  }
  cujit_elementwise_destroy(k);
}

/* 8-, 1- and 4-byte elements: two a chunk. */
static void mixed_sizes(void **state) {
  cujit_elementwise *k = NULL;
  size_t s;
  int off;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "double *d, unsigned char *u, float *f",
                                     "f[i] = (float)(d[i] * u[i]) + i", NULL));
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++)
    for (off = 0; off < 3; off++) {
      const int64_t n = kSizes[s], total = n + PAD;
      double *hd = malloc((size_t)total * 8);
      unsigned char *hu = malloc((size_t)total);
      float *hf = malloc((size_t)total * 4), *got = malloc((size_t)total * 4);
      cujit_array *d, *u, *f, *vd, *vu, *vf;
      int64_t j;
      for (j = 0; j < total; j++) hd[j] = (double)(j % 100) * 0.25, hu[j] = (unsigned char)j;
      for (j = 0; j < total; j++) hf[j] = -7.0f;
      d = whole(CUJIT_TYPE_F64, total, hd);
      u = whole(CUJIT_TYPE_U8, total, hu);
      f = whole(CUJIT_TYPE_F32, total, hf);
      vd = view(d, off, n), vu = view(u, off, n), vf = view(f, off, n);
      assert_ok(CUJIT_ELEMENTWISE(k, vd, vu, vf));
      assert_ok(cujit_array_read(f, got, (size_t)total * 4));
      for (j = 0; j < total; j++) {
        int64_t i = j - off;
        float want = i >= 0 && i < n ? (float)(hd[j] * hu[j]) + (float)i : -7.0f;
        if (got[j] != want)
          fail_msg("mixed n %lld offset %d: element %lld is %g, wanted %g", (long long)n, off,
                   (long long)j, got[j], want);
      }
      cujit_array_destroy(vd), cujit_array_destroy(vu), cujit_array_destroy(vf);
      cujit_array_destroy(d), cujit_array_destroy(u), cujit_array_destroy(f);
      free(hd), free(hu), free(got);
    }
  cujit_elementwise_destroy(k);
}

/* Sixteen bytes a chunk: assigned whole, then changed; and __half, eight a chunk. */
static void bytes_and_halves(void **state) {
  cujit_elementwise *k = NULL, *h = NULL;
  size_t s;
  int off;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "bool *m, const unsigned char *c",
                                     "m[i] = c[i] > 7; m[i] = !m[i]", NULL));
  assert_ok(cujit_elementwise_create(&h, "__half *o, const __half *g",
                                     "o[i] = __hmul(g[i], __float2half(2.0f))", NULL));
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++)
    for (off = 0; off < 17; off += 3) {
      const int64_t n = kSizes[s], total = n + PAD;
      unsigned char *hc = malloc((size_t)total);
      bool *hm = malloc((size_t)total), *gm = malloc((size_t)total);
      uint16_t *hg = malloc((size_t)total * 2), *ho = malloc((size_t)total * 2),
               *go = malloc((size_t)total * 2);
      cujit_array *c, *m, *g, *o, *vc, *vm, *vg, *vo;
      int64_t j;
      for (j = 0; j < total; j++) {
        hc[j] = (unsigned char)(j * 13), hm[j] = true;
        hg[j] = (uint16_t)(0x3c00 + (j % 512)); /* 1.0 and up, exact when doubled */
        ho[j] = 0x7bff;
      }
      c = whole(CUJIT_TYPE_U8, total, hc), m = whole(CUJIT_TYPE_BOOL, total, hm);
      g = whole(CUJIT_TYPE_F16, total, hg), o = whole(CUJIT_TYPE_F16, total, ho);
      vc = view(c, off, n), vm = view(m, off, n), vg = view(g, off, n), vo = view(o, off, n);
      assert_ok(CUJIT_ELEMENTWISE(k, vm, vc));
      assert_ok(CUJIT_ELEMENTWISE(h, vo, vg));
      assert_ok(cujit_array_read(m, gm, (size_t)total));
      assert_ok(cujit_array_read(o, go, (size_t)total * 2));
      for (j = 0; j < total; j++) {
        int64_t i = j - off;
        bool want = i >= 0 && i < n ? !(hc[j] > 7) : true;
        uint16_t want_h = i >= 0 && i < n ? (uint16_t)(hg[j] + 0x0400) : 0x7bff; /* x2 */
        if (gm[j] != want)
          fail_msg("bytes n %lld offset %d: element %lld is %d", (long long)n, off, (long long)j,
                   gm[j]);
        if (go[j] != want_h)
          fail_msg("halves n %lld offset %d: element %lld is %#x, wanted %#x", (long long)n, off,
                   (long long)j, go[j], want_h);
      }
      cujit_array_destroy(vc), cujit_array_destroy(vm), cujit_array_destroy(vg);
      cujit_array_destroy(vo), cujit_array_destroy(c), cujit_array_destroy(m);
      cujit_array_destroy(g), cujit_array_destroy(o);
      free(hc), free(hm), free(gm), free(hg), free(ho), free(go);
    }
  cujit_elementwise_destroy(k);
  cujit_elementwise_destroy(h);
}

/* Read, changed and written; written where a condition holds; and an operation whose
 * kernel with chunks does not compile ((z[i]) = ... writes z where the text shows no
 * write), which runs one element at a time. */
static void reads_writes_and_fallback(void **state) {
  cujit_elementwise *rmw = NULL, *cond = NULL, *paren = NULL;
  size_t s;
  int off;
  (void)state;
  assert_ok(cujit_elementwise_create(&rmw, "int *x, const int *y", "x[i] += y[i] * 3", NULL));
  assert_ok(cujit_elementwise_create(&cond, "float *z, const float *w", "if (w[i] > 0) z[i] = w[i]",
                                     NULL));
  assert_ok(
      cujit_elementwise_create(&paren, "float *z, const float *w", "(z[i]) = w[i] * 2", NULL));
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++)
    for (off = 0; off < 5; off++) {
      const int64_t n = kSizes[s], total = n + PAD;
      int *hx = malloc((size_t)total * 4), *hy = malloc((size_t)total * 4),
          *gx = malloc((size_t)total * 4);
      float *hw = malloc((size_t)total * 4), *gz = malloc((size_t)total * 4),
            *gp = malloc((size_t)total * 4), *init = malloc((size_t)total * 4);
      cujit_array *x, *y, *w, *z, *p, *vx, *vy, *vw, *vz, *vp;
      int64_t j;
      for (j = 0; j < total; j++) {
        hx[j] = (int)j, hy[j] = (int)(j % 5) - 2;
        hw[j] = j % 3 ? (float)j : -(float)j, init[j] = -7.0f;
      }
      x = whole(CUJIT_TYPE_I32, total, hx), y = whole(CUJIT_TYPE_I32, total, hy);
      w = whole(CUJIT_TYPE_F32, total, hw), z = whole(CUJIT_TYPE_F32, total, init);
      p = whole(CUJIT_TYPE_F32, total, init);
      vx = view(x, off, n), vy = view(y, off, n), vw = view(w, off, n), vz = view(z, off, n);
      vp = view(p, off, n);
      assert_ok(CUJIT_ELEMENTWISE(rmw, vx, vy));
      assert_ok(CUJIT_ELEMENTWISE(cond, vz, vw));
      assert_ok(CUJIT_ELEMENTWISE(paren, vp, vw));
      assert_ok(cujit_array_read(x, gx, (size_t)total * 4));
      assert_ok(cujit_array_read(z, gz, (size_t)total * 4));
      assert_ok(cujit_array_read(p, gp, (size_t)total * 4));
      for (j = 0; j < total; j++) {
        int64_t i = j - off;
        int in = i >= 0 && i < n;
        int want_x = (int)j + (in ? hy[j] * 3 : 0);
        float want_z = in && hw[j] > 0 ? hw[j] : -7.0f, want_p = in ? hw[j] * 2 : -7.0f;
        if (gx[j] != want_x || gz[j] != want_z || gp[j] != want_p)
          fail_msg("n %lld offset %d element %lld: x %d (%d), z %g (%g), p %g (%g)", (long long)n,
                   off, (long long)j, gx[j], want_x, gz[j], want_z, gp[j], want_p);
      }
      cujit_array_destroy(vx), cujit_array_destroy(vy), cujit_array_destroy(vw);
      cujit_array_destroy(vz), cujit_array_destroy(vp), cujit_array_destroy(x);
      cujit_array_destroy(y), cujit_array_destroy(w), cujit_array_destroy(z);
      cujit_array_destroy(p);
      free(hx), free(hy), free(gx), free(hw), free(gz), free(gp), free(init);
    }
  cujit_elementwise_destroy(rmw);
  cujit_elementwise_destroy(cond);
  cujit_elementwise_destroy(paren);
}

/* ---- arrays of shapes that broadcast ---- */

static int64_t elems(int nd, const int64_t *s) {
  int64_t n = 1;
  int d;
  for (d = 0; d < nd; d++) n *= s[d];
  return n;
}

/* Array a's element (C order, contiguous) at element j of the shape s, as NumPy's
 * broadcasting pairs them: from j's coordinates, 0 along a's dimensions of one element and
 * those it lacks. */
static int64_t bpos(int nd, const int64_t *s, int na, const int64_t *a, int64_t j) {
  int64_t off = 0, stride = 1;
  int d, e;
  for (d = nd - 1, e = na - 1; d >= 0; d--, e--) {
    int64_t c = j % s[d];
    j /= s[d];
    if (e < 0) continue;
    if (a[e] != 1) off += c * stride;
    stride *= a[e];
  }
  return off;
}

/* An array of `shape` holding host[off ...]: a view `off` elements into a 1-D array of
 * `total` elements, reshaped. *base gets the 1-D array. */
static cujit_array *shaped(cujit_type t, const void *host, int64_t total, int64_t off, int nd,
                           const int64_t *shape, cujit_array **base) {
  cujit_array *v = NULL, *r = NULL;
  *base = whole(t, total, host);
  v = view(*base, off, elems(nd, shape));
  assert_ok(cujit_array_reshape(v, nd, shape, &r));
  cujit_array_destroy(v);
  return r;
}

typedef struct bcast_case {
  int nd[3]; /* x, y, z (the broadcast shape) */
  int64_t shape[3][4];
} bcast_case;

static const bcast_case kBcasts[] = {
    {{2, 1, 2}, {{3, 4}, {4}, {3, 4}}},
    {{2, 1, 2}, {{4, 1}, {3}, {4, 3}}},
    {{3, 2, 3}, {{2, 3, 4}, {3, 1}, {2, 3, 4}}},
    {{3, 3, 3}, {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}},
    {{3, 2, 3}, {{5, 1, 7}, {6, 1}, {5, 6, 7}}},
    {{4, 4, 4}, {{2, 1, 3, 1}, {1, 5, 1, 7}, {2, 5, 3, 7}}},
    {{2, 0, 2}, {{5, 7}, {0}, {5, 7}}},
    {{1, 1, 1}, {{37}, {1}, {37}}},
    {{2, 2, 2}, {{1, 300}, {300, 1}, {300, 300}}},
    {{2, 1, 2}, {{1000, 1003}, {1003}, {1000, 1003}}},
    {{3, 1, 3}, {{1, 1, 1000003}, {1}, {1, 1, 1000003}}},
    {{2, 2, 2}, {{1000003, 1}, {1, 3}, {1000003, 3}}},
};

/* lin_comb of x and y (the case's shapes, each `off` elements into its memory) into z of
 * the broadcast shape, over all its elements or a range of them, against the host. */
static void bcast_lin(cujit_elementwise *k, const bcast_case *c, int off, int range, int64_t start,
                      int64_t stop, int64_t step) {
  const int64_t nx = elems(c->nd[0], c->shape[0]), ny = elems(c->nd[1], c->shape[1]),
                n = elems(c->nd[2], c->shape[2]);
  float *hx = malloc((size_t)(nx + off) * 4), *hy = malloc((size_t)(ny + off) * 4),
        *hz = malloc((size_t)(n + off) * 4), *got = malloc((size_t)(n + off) * 4);
  cujit_array *bx, *by, *bz, *x, *y, *z;
  int64_t j;
  for (j = 0; j < nx + off; j++) hx[j] = xval(j);
  for (j = 0; j < ny + off; j++) hy[j] = yval(j);
  for (j = 0; j < n + off; j++) hz[j] = -7.0f;
  x = shaped(CUJIT_TYPE_F32, hx, nx + off, off, c->nd[0], c->shape[0], &bx);
  y = shaped(CUJIT_TYPE_F32, hy, ny + off, off, c->nd[1], c->shape[1], &by);
  z = shaped(CUJIT_TYPE_F32, hz, n + off, off, c->nd[2], c->shape[2], &bz);
  if (range)
    assert_ok(CUJIT_ELEMENTWISE_RANGE(k, start, stop, step, 2.5f, x, -1.5f, y, z));
  else
    assert_ok(CUJIT_ELEMENTWISE(k, 2.5f, x, -1.5f, y, z));
  assert_ok(cujit_array_read(bz, got, (size_t)(n + off) * 4));
  for (j = 0; j < n + off; j++) {
    int64_t i = j - off;
    float want = -7.0f;
    if (i >= 0 && (!range || (step > 0 ? i >= start && i < stop && (i - start) % step == 0
                                       : i <= start && i > stop && (start - i) % -step == 0)))
      want = 2.5f * hx[off + bpos(c->nd[2], c->shape[2], c->nd[0], c->shape[0], i)] +
             -1.5f * hy[off + bpos(c->nd[2], c->shape[2], c->nd[1], c->shape[1], i)];
    if (got[j] != want)
      fail_msg("broadcast case %d-d %lld: offset %d range %d (%lld, %lld, %lld): element %lld "
               "is %g, wanted %g",
               c->nd[2], (long long)n, off, range, (long long)start, (long long)stop,
               (long long)step, (long long)j, got[j], want);
  }
  cujit_array_destroy(x), cujit_array_destroy(y), cujit_array_destroy(z);
  cujit_array_destroy(bx), cujit_array_destroy(by), cujit_array_destroy(bz);
  free(hx), free(hy), free(hz), free(got);
}

/* lin_comb with scalars a and b between arrays of shapes that broadcast: (3, 4) + (4,),
 * (4, 1) + (3,), 3-D and 4-D patterns with each array stretched along other dimensions, a
 * 0-d array, and sizes where the chunks run; at offsets (the chunks' head), over ranges
 * of steps 1, 2 and -1 of the broadcast shape's flat indices. */
static void broadcast_lin_comb(void **state) {
  cujit_elementwise *k = NULL;
  size_t c;
  int off;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "float a, float *x, float b, float *y, float *z",
                                     "z[i] = a*x[i] + b*y[i]", NULL));
  for (c = 0; c < sizeof kBcasts / sizeof *kBcasts; c++) {
    const bcast_case *t = &kBcasts[c];
    const int64_t n = elems(t->nd[2], t->shape[2]);
    for (off = 0; off < 3; off++) bcast_lin(k, t, off, 0, 0, 0, 1);
    bcast_lin(k, t, 1, 1, 3, n, 1);
    bcast_lin(k, t, 0, 1, 1, n - 1, 2);
    bcast_lin(k, t, 2, 1, n - 1, -1, -1);
  }
  cujit_elementwise_destroy(k);
}

/* Other element types and i in the operation: a double stretched along rows, bytes along
 * columns, float out; a const-declared stretched array of complex numbers; and an
 * operation reading other indices of a stretched array (x[i] and x[n - 1 - i]: each at
 * its own broadcast position). */
static void broadcast_types_and_indices(void **state) {
  static const int64_t s41[] = {400, 1}, s5[] = {517}, s45[] = {400, 517}, s3[] = {3},
                       s23[] = {2, 3};
  cujit_elementwise *mix = NULL, *cx = NULL, *rev = NULL;
  const int64_t nd = 400, nu = 517, n = 400 * 517;
  double *hd = malloc(nd * 8);
  unsigned char *hu = malloc(nu);
  float *got = malloc(n * 4);
  float hc[6] = {1, 2, 3, 4, 5, 6}, hr[6], gr[6];
  float hs[6] = {0.5f, -1, 2, 3, -4, 8};
  cujit_array *d, *u, *f, *cxa, *sa, *r;
  int64_t j;
  (void)state;
  assert_ok(cujit_elementwise_create(&mix, "double *d, unsigned char *u, float *f",
                                     "f[i] = (float)(d[i] * u[i]) + i", NULL));
  for (j = 0; j < nd; j++) hd[j] = (double)(j % 100) * 0.25;
  for (j = 0; j < nu; j++) hu[j] = (unsigned char)(j * 7);
  assert_ok(cujit_array_from_host(&d, CUJIT_TYPE_F64, 2, s41, hd));
  assert_ok(cujit_array_from_host(&u, CUJIT_TYPE_U8, 1, s5, hu));
  assert_ok(cujit_array_empty(&f, CUJIT_TYPE_F32, 2, s45));
  assert_ok(CUJIT_ELEMENTWISE(mix, d, u, f));
  assert_ok(cujit_array_read(f, got, (size_t)n * 4));
  for (j = 0; j < n; j++) {
    float want = (float)(hd[j / nu] * hu[j % nu]) + (float)j;
    if (got[j] != want)
      fail_msg("mixed types: element %lld is %g, wanted %g", (long long)j, got[j], want);
  }
  /* complex<float> (3,) const and stretched, its real part scaled into a (2, 3) array */
  assert_ok(cujit_elementwise_create(&cx, "const complex<float> *c, float s, float *o",
                                     "o[i] = c[i].real() * s + c[i].imag()", NULL));
  assert_ok(cujit_array_from_host(&cxa, CUJIT_TYPE_C64, 1, s3, hc));
  assert_ok(cujit_array_empty(&r, CUJIT_TYPE_F32, 2, s23));
  assert_ok(CUJIT_ELEMENTWISE(cx, cxa, 3.0, r));
  assert_ok(cujit_array_read(r, gr, sizeof gr));
  for (j = 0; j < 6; j++) {
    float want = hc[2 * (j % 3)] * 3.0f + hc[2 * (j % 3) + 1];
    if (gr[j] != want)
      fail_msg("complex: element %lld is %g, wanted %g", (long long)j, gr[j], want);
  }
  /* other indices of a stretched array: x[5 - i] is at the position of element 5 - i */
  assert_ok(
      cujit_elementwise_create(&rev, "const float *x, float *o", "o[i] = x[i] - x[5 - i]", NULL));
  assert_ok(cujit_array_from_host(&sa, CUJIT_TYPE_F32, 1, s3, hs));
  assert_ok(CUJIT_ELEMENTWISE(rev, sa, r));
  assert_ok(cujit_array_read(r, gr, sizeof gr));
  for (j = 0; j < 6; j++) {
    hr[j] = hs[j % 3] - hs[(5 - j) % 3];
    if (gr[j] != hr[j])
      fail_msg("x[5 - i]: element %lld is %g, wanted %g", (long long)j, gr[j], hr[j]);
  }
  cujit_array_destroy(d), cujit_array_destroy(u), cujit_array_destroy(f);
  cujit_array_destroy(cxa), cujit_array_destroy(sa), cujit_array_destroy(r);
  cujit_elementwise_destroy(mix);
  cujit_elementwise_destroy(cx);
  cujit_elementwise_destroy(rev);
  free(hd), free(hu), free(got);
}

/* A reduction's arrays broadcast as well: sum(x * y) of x (3000, 1001) and y (1001,), and
 * of x (3000, 1) and y (1001,), in doubles of small integers (exact), against the host. */
static void broadcast_reduction(void **state) {
  static const int64_t s_full[] = {3000, 1001}, s_col[] = {3000, 1}, s_row[] = {1001};
  cujit_reduction *dot = NULL;
  const int64_t rows = 3000, cols = 1001;
  double *hx = malloc((size_t)(rows * cols) * 8), hy[1001], got, want;
  cujit_array *x, *col, *y;
  int64_t j;
  (void)state;
  for (j = 0; j < rows * cols; j++) hx[j] = (double)(j % 13) - 6;
  for (j = 0; j < cols; j++) hy[j] = (double)(j % 7) - 3;
  assert_ok(cujit_reduction_create(&dot, CUJIT_TYPE_F64, "0", "a+b", "x[i]*y[i]",
                                   "const double *x, const double *y", NULL));
  assert_ok(cujit_array_from_host(&x, CUJIT_TYPE_F64, 2, s_full, hx));
  assert_ok(cujit_array_from_host(&col, CUJIT_TYPE_F64, 2, s_col, hx));
  assert_ok(cujit_array_from_host(&y, CUJIT_TYPE_F64, 1, s_row, hy));
  assert_ok(CUJIT_REDUCTION_HOST(dot, &got, x, y));
  for (want = 0, j = 0; j < rows * cols; j++) want += hx[j] * hy[j % cols];
  if (got != want) fail_msg("sum(x * y), y stretched: %g, wanted %g", got, want);
  assert_ok(CUJIT_REDUCTION_HOST(dot, &got, col, y));
  for (want = 0, j = 0; j < rows * cols; j++) want += hx[j / cols] * hy[j % cols];
  if (got != want) fail_msg("sum(x * y), both stretched: %g, wanted %g", got, want);
  cujit_array_destroy(x), cujit_array_destroy(col), cujit_array_destroy(y);
  cujit_reduction_destroy(dot);
  free(hx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lin_comb_on_chunks),  cmocka_unit_test(mixed_sizes),
      cmocka_unit_test(bytes_and_halves),    cmocka_unit_test(reads_writes_and_fallback),
      cmocka_unit_test(broadcast_lin_comb),  cmocka_unit_test(broadcast_types_and_indices),
      cmocka_unit_test(broadcast_reduction),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

"""What sums, products, dots and scans of floats may come to when the order of their
combinations is cujit's (a tree: each thread folds a run of elements, then the warps and
blocks combine), not the reference's.

Without overflow or underflow the result is the exact value within the bounds of
README.md. Where a partial result may leave the type's range, the order decides between
IEEE outcomes, and each that some order gives is accepted (compare.py's `alt`):
  - a sum: a partial sum overflows to +inf only if the positive elements' sum reaches the
    largest finite value (every partial sum lies between minus the negative elements' sum
    and the positive ones'), to -inf likewise, and +inf meeting -inf is NaN. An infinite
    element makes the sum that infinity, or NaN where a partial sum may overflow the other
    way; NaN, or infinities of both signs, make it NaN in every order;
  - a product: every partial product's magnitude lies between the product of the elements
    below 1 in magnitude and the product of those above. It may overflow (+-inf, the
    product's sign) when the second reaches the largest finite value, round to 0 when the
    first falls below half the smallest subnormal, and be NaN when both may happen (0 * inf).
    A zero element and an infinite one make it NaN in every order, a zero element alone 0
    (or NaN where a partial may overflow), an infinite one +-inf (or NaN where a partial may
    reach 0). Where a partial may fall below the smallest normal number, each rounding
    there may be off by half the smallest subnormal, then multiplied by the factors still
    to come: n * 2^-1075 (2^-150 for float) times the largest partial product is added to
    the bound;
  - a dot product: a sum of the products (NaN where an infinity meets a zero); a product
    may be fused into the sum (-fmad), so one beyond the range is a partial that may
    overflow, not a certain infinity;
  - a prefix sum: element k as the sum of elements 0 to k (exclusive: to k - 1);
  - complex sums add their parts apart, each part as a real sum. Complex products and dot
    products follow C99 Annex G's recovery of infinities (cuda::std::complex), whose signs
    the order decides: where a partial may overflow or an element is an infinity or NaN,
    any infinity and any NaN are accepted, and a finite result must still be within the
    bound; an overflowing result must not be finite.
The accumulator's range is the type the combinations round to: float for the sums and
products of 16-bit types (combined in float), the 16-bit type itself for their scans
(which round every combination)."""

import math
from fractions import Fraction

import numpy as np

import compare as C

# largest finite, smallest normal, smallest subnormal
LIMITS = {"f16": (65504.0, 2.0**-14, 2.0**-24),
          "bf16": (3.3895313892515355e38, 2.0**-126, 2.0**-133),
          "f32": (float(np.finfo(np.float32).max), 2.0**-126, 2.0**-149),
          "f64": (float(np.finfo(np.float64).max), 2.0**-1022, 2.0**-1074)}

WIDE = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None


def exact_sum(values):
    """The correctly rounded sum of finite values (doubles, or long doubles that may be
    beyond the doubles' range), +-inf where it is beyond the doubles' range."""
    values = np.asarray(values).reshape(-1)
    with np.errstate(all="ignore"):
        v = [float(x) for x in values]
        if not all(math.isfinite(x) for x in v):  # long doubles beyond the range
            return float(np.sum(values.astype(WIDE or np.float64)))
    try:
        return math.fsum(v)
    except OverflowError:  # a partial beyond the range: the exact rational sum
        s = sum((Fraction(x) for x in v), Fraction(0))
        try:
            return float(s)
        except OverflowError:
            return math.inf if s > 0 else -math.inf


def sum_outcome(w, acc, gamma):
    """A sum of the values w (doubles or long doubles: finite, infinite or NaN), each
    combination rounded to `acc` with at most the relative error gamma on any path: (the
    reference, the outcomes accepted beside it)."""
    big = LIMITS[acc][0]
    w = np.asarray(w).reshape(-1)
    with np.errstate(all="ignore"):
        if np.isnan(w).any():
            return math.nan, 0
        pinf, ninf = bool((w == np.inf).any()), bool((w == -np.inf).any())
        fin = w[np.isfinite(w)]
        pos = float(np.sum((fin[fin > 0] / big).astype(np.float64)))
        neg = float(np.sum((-fin[fin < 0] / big).astype(np.float64)))
    p_may = pinf or pos * (1 + gamma) >= 1
    n_may = ninf or neg * (1 + gamma) >= 1
    if pinf and ninf:
        return math.nan, 0
    if pinf:
        return math.inf, C.NAN if n_may else 0
    if ninf:
        return -math.inf, C.NAN if p_may else 0
    alt = (C.POS_INF if p_may else 0) | (C.NEG_INF if n_may else 0)
    alt |= C.NAN if p_may and n_may else 0
    return exact_sum(fin), alt


def _log2_range(mags):
    """log2 of the products of the magnitudes below 1 and of those above 1."""
    with np.errstate(all="ignore"):
        lg = np.log2(mags.astype(np.float64))
    return float(lg[lg < 0].sum()), float(lg[lg > 0].sum())


def exact_product(values):
    """The product of finite nonzero values (doubles or long doubles), computed as
    mantissas and an exponent, so that no partial leaves the range: a double, or +-inf or
    +-0 where the product itself is beyond the doubles' range."""
    wide = WIDE or np.float64
    f, k = np.frexp(np.asarray(values).reshape(-1).astype(wide))
    m, e = wide(1), int(k.astype(np.int64).sum())
    step = 8192 if WIDE is not None else 512  # 0.5 ** step stays a normal number
    for i in range(0, f.size, step):  # the mantissas, a run at a time
        m, k = np.frexp(m * np.prod(f[i:i + step]))
        e += int(k)
    with np.errstate(all="ignore"):
        if e > 2000:
            return float(np.copysign(np.inf, float(m)))
        if e < -2200:
            return float(np.copysign(0.0, float(m)))
        return float(np.ldexp(float(m), e)) if WIDE is None else float(np.ldexp(m, e))


def _pow2(x, e):
    """x * 2^e (e real), inf beyond the doubles' range."""
    k = math.ceil(e)
    return math.inf if k > 1100 else math.ldexp(x, k)


def prod_range(mags, acc, gamma):
    """Whether a partial product of elements of these magnitudes (finite, nonzero) may
    overflow, round to 0, or be subnormal; and log2 of the largest partial."""
    big, tiny, least = LIMITS[acc]
    low, high = _log2_range(mags)
    slop = 2 * gamma / math.log(2)
    over = high + slop >= math.log2(big)
    zero = low - slop <= math.log2(least) - 1
    sub = low - slop < math.log2(tiny)
    return over, zero, sub, high


def prod_outcome(w, acc, gamma):
    """A product of the real values w, combined in `acc` (relative error gamma on any
    path): (the reference, the outcomes accepted beside it, an absolute allowance to add)."""
    w = np.asarray(w).reshape(-1)
    n = w.size
    with np.errstate(all="ignore"):
        if np.isnan(w).any():
            return math.nan, 0, 0.0
        zero, inf = bool((w == 0).any()), bool(np.isinf(w).any())
        sign = -1.0 if int((w < 0).sum()) % 2 else 1.0
        fin = w[np.isfinite(w) & (w != 0)]
    over, to_zero, sub, high = prod_range(np.abs(fin), acc, gamma)
    if zero and inf:
        return math.nan, 0, 0.0
    if inf:
        return sign * math.inf, C.NAN if to_zero else 0, 0.0
    if zero:
        return sign * 0.0, C.NAN if over else 0, 0.0
    alt = ((C.POS_INF if sign > 0 else C.NEG_INF) if over else 0) | (C.ZERO if to_zero else 0)
    alt |= C.NAN if over and to_zero else 0
    extra = 0.0
    if sub:  # half the smallest subnormal per rounding, times the factors still to come
        extra = n * _pow2(LIMITS[acc][2], high - 1)
    return exact_product(fin), alt, extra


def complex_prod_outcome(z, acc, gamma):
    """A product of complex values z in `acc` (the parts' type): (the reference, the
    outcomes accepted beside it, an absolute allowance to add)."""
    z = np.asarray(z).reshape(-1)
    rinf, rnan = C.classes(z)
    zero = bool((z == 0).any())
    mags = np.abs(z[~rinf & ~rnan & (z != 0)].astype(np.clongdouble))
    over, to_zero, sub, high = prod_range(mags, acc, gamma)
    loose = C.CX_INF | C.CX_NAN
    if rnan.any():
        return complex(math.nan, math.nan), loose, 0.0
    if rinf.any():
        return complex(math.inf, math.inf), loose if zero or to_zero else C.CX_INF, 0.0
    if zero:
        return 0j, loose if over else 0, 0.0
    ref = _scaled_cprod(z[z != 0])
    alt = (loose if over else 0) | (C.CX_ZERO if to_zero else 0)
    extra = 0.0
    if sub:
        extra = 2 * z.size * _pow2(LIMITS[acc][2], high)
    return ref, alt, extra


def _scaled_cprod(z):
    """The product of finite nonzero complex values, each scaled by a power of two (exact)
    and the product kept near 1, so that no partial leaves the range."""
    m, e = np.clongdouble(1), 0
    for v in np.asarray(z).reshape(-1):
        v = complex(v)
        k = math.frexp(max(abs(v.real), abs(v.imag)))[1]
        m = m * np.clongdouble(complex(math.ldexp(v.real, -k), math.ldexp(v.imag, -k)))
        s = math.frexp(float(max(abs(m.real), abs(m.imag))))[1]
        m = m / np.clongdouble(2.0**s)
        e += k + s
    if e > 1100:
        return complex(math.copysign(math.inf, float(m.real)) if m.real else 0.0,
                       math.copysign(math.inf, float(m.imag)) if m.imag else 0.0)
    if e < -1200:
        return 0j
    scale = np.longdouble(2.0) ** e if WIDE is not None else None
    if scale is not None:
        with np.errstate(all="ignore"):
            return complex(float(m.real * scale), float(m.imag * scale))
    try:
        return complex(math.ldexp(float(m.real), e), math.ldexp(float(m.imag), e))
    except OverflowError:
        return complex(math.copysign(math.inf, float(m.real)) if m.real else 0.0,
                       math.copysign(math.inf, float(m.imag)) if m.imag else 0.0)


def prefix_outcomes(w, acc, gammas, exclusive):
    """Element k of the prefix sums of the real values w (inclusive, or exclusive), as
    sum_outcome sees each: (the references, the outcomes accepted beside them)."""
    big = LIMITS[acc][0]
    w = np.asarray(w).reshape(-1)
    n = w.size
    with np.errstate(all="ignore"):
        nan = np.cumsum(np.isnan(w)) > 0
        pinf = np.cumsum(w == np.inf) > 0
        ninf = np.cumsum(w == -np.inf) > 0
        fin = np.where(np.isfinite(w), w, 0)
        pos = np.cumsum(np.where(fin > 0, fin, 0).astype(np.float64) / big)
        neg = np.cumsum(np.where(fin < 0, -fin, 0).astype(np.float64) / big)
        exact = np.cumsum(fin.astype(WIDE or np.float64))
    p_may = pinf | (pos * (1 + gammas) >= 1)
    n_may = ninf | (neg * (1 + gammas) >= 1)
    both = pinf & ninf
    ref = np.where(nan | both, np.nan, np.where(pinf, np.inf, np.where(ninf, -np.inf, exact)))
    alt = np.where(p_may, C.POS_INF, 0) | np.where(n_may, C.NEG_INF, 0)
    alt |= np.where(p_may & n_may, C.NAN, 0)
    alt = np.where(nan | both, 0, np.where(pinf, np.where(n_may, C.NAN, 0),
                                           np.where(ninf, np.where(p_may, C.NAN, 0), alt)))
    if exclusive and n:
        ref = np.concatenate([np.zeros(1, ref.dtype), ref[:-1]])
        alt = np.concatenate([np.zeros(1, alt.dtype), alt[:-1]])
    return ref, alt.astype(np.int64)

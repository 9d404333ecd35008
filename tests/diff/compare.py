"""Comparing what cujit computed with what the reference expects.

An expectation is a Check: the reference's values (in a wider type where the operation is
not emulated exactly) and, per element, what difference is allowed:
  - integers and bools: bit for bit;
  - floats: |got - ref| <= ulps * ulp(ref) + slack, with ulp the spacing of the result's type
    at |ref| (the distance to the correctly rounded result is what the CUDA math library's
    error tables measure); ulps 0 and no slack means equal. NaN must meet NaN (any payload);
    an infinity must meet the same infinity, except that a reference within the allowance
    of the largest finite value also accepts the infinity of its sign; +0 and -0 are equal;
  - complex numbers: |got - ref| (the distance in the plane) <= the allowance, or (with
    `parts`, for sums, whose parts are added apart) each part within it as a float is;
    where the reference has an infinite part, the same infinite parts and the finite ones
    within the allowance; NaN in either part meeting NaN in either part.
Beside the reference, `alt` names outcomes an element may have instead, where the order of
a reduction's combinations decides (a partial sum that overflows, a product that reaches
0 * inf) or where C99 Annex G leaves signs open: for floats NAN, POS_INF, NEG_INF and ZERO
(either sign); for complex numbers the same for each part (as a sum's parts: `parts`,
real part's bits, then the imaginary part's shifted by IM), and CX_INF (any infinity: a
part infinite, the other anything), CX_NAN (a NaN part, none infinite) and CX_ZERO.
Elements marked undefined (a C conversion of a value outside the integer's range) are not
compared."""

import numpy as np

import dtypes

NAN, POS_INF, NEG_INF, ZERO = 1, 2, 4, 8
IM = 4  # an imaginary part's bits: NAN << IM, ...
CX_INF, CX_NAN, CX_ZERO = 256, 512, 1024


class Check:
    def __init__(self, type_name, ref, ulps=0.0, slack=None, undefined=None, alt=None,
                 parts=False, whole=False):
        self.type = type_name
        self.ref = np.asarray(ref)
        self.ulps = ulps
        self.slack = slack  # None, or an array (or scalar) of absolute allowances
        shape = self.ref.shape
        self.undefined = np.zeros(shape, bool) if undefined is None else np.asarray(undefined)
        self.alt = alt  # None, or an int array (or scalar): the outcomes accepted beside ref
        self.parts = parts  # complex: each part compared as a float (sums)
        # complex: the allowance is of the whole value's magnitude, also where a part is
        # infinite (products, quotients, powers: a finite part beside it is below it)
        self.whole = whole

    def exact(self):
        return not self.ulps and self.slack is None

    def alts(self, shape):
        return np.broadcast_to(np.asarray(0 if self.alt is None else self.alt, np.int64), shape)


def spacing(name, x):
    """The spacing of type `name` at |x| (x float64): its ulp there."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    if name == "bf16":
        with np.errstate(divide="ignore"):
            x = np.minimum(np.nan_to_num(x, nan=0.0), 3.3895313892515355e38)
        e = np.floor(np.log2(np.where(x > 0, x, 1.0)))
        e = np.maximum(e, -126)
        return np.ldexp(1.0, (e - 7).astype(int))
    dt = dtypes.dtype(name)
    top = np.finfo(dt).max
    x = np.minimum(np.nan_to_num(x, nan=0.0), float(top))
    with np.errstate(over="ignore", invalid="ignore"):
        sp = np.spacing(x.astype(dt)).astype(np.float64)
    # at the largest finite value, the spacing below it (the one above is infinite)
    return np.where(np.isinf(sp), float(top - np.nextafter(top, dt.type(0))), sp)


def _max_finite(name):
    if name == "bf16":
        return 3.3895313892515355e38
    return float(np.finfo(dtypes.dtype(name)).max)


def mismatches(check, got):
    """The indices (C order) of the elements of `got` (an array of check.type) that the
    check does not allow, at most 8."""
    got = np.asarray(got)
    if got.shape != check.ref.shape:
        return [-1]
    return list(np.flatnonzero(bad_mask(check, got).reshape(-1))[:8])


def bad_mask(check, got):
    """Where the elements of `got` (an array of check.type, of the reference's shape) are
    not allowed."""
    ref, name = check.ref, check.type
    got = np.asarray(got)
    if dtypes.is_complex(name):
        bad = _complex_bad(check, got)
    elif dtypes.is_float(name):
        bad = _float_bad(check, got.astype(np.float64), ref, name)
    else:
        bad = got != ref.astype(got.dtype)
    return np.broadcast_to(np.asarray(bad) & ~check.undefined, got.shape)


def _float_bad(check, got, ref, name):
    allow = _allowance(check, name, np.asarray(ref).astype(np.float64))
    ok = _float_ok(got, np.asarray(ref), allow, name)
    return ~(ok | _alt_ok(got, check.alts(got.shape)))


def _allowance(check, real, magnitude):
    """The allowed distance (None: none, equal) at references of magnitude `magnitude`."""
    if check.exact():
        return None
    allow = check.ulps * spacing(real, magnitude)
    if check.slack is not None:
        allow = allow + np.asarray(check.slack, dtype=np.float64)
    return allow


def _float_ok(got, ref, allow, name):
    """Where floats got (float64) meet the reference ref (float64 or longdouble) within
    allow (None: equal), as the module's doc says."""
    ref64 = ref.astype(np.float64)
    gnan, rnan = np.isnan(got), np.isnan(ref64)
    finite = ~gnan & ~rnan
    if allow is None:
        with np.errstate(invalid="ignore"):
            return (gnan & rnan) | (finite & (got == ref64))
    with np.errstate(invalid="ignore", over="ignore"):
        wide = ref.astype(np.longdouble) if ref.dtype == np.longdouble else ref64
        diff = np.abs(got.astype(wide.dtype) - wide).astype(np.float64)
        rinf, ginf = np.isinf(ref64), np.isinf(got)
        near_max = np.abs(ref64) + allow >= _max_finite(name)
        inf_ok = ginf & (rinf | near_max) & (np.sign(got) == np.sign(ref64))
        same_inf = rinf & ginf & (np.sign(got) == np.sign(ref64))
        close = ~rinf & ~ginf & (diff <= allow)
    return (gnan & rnan) | (finite & (same_inf | close | inf_ok))


def _alt_ok(got, bits):
    """Where floats got are one of the outcomes that `bits` (NAN, POS_INF ...) name."""
    with np.errstate(invalid="ignore"):
        return ((((bits & NAN) != 0) & np.isnan(got)) | (((bits & POS_INF) != 0) & (got == np.inf))
                | (((bits & NEG_INF) != 0) & (got == -np.inf)) | (((bits & ZERO) != 0) & (got == 0)))


def classes(z):
    """Annex G's classes of complex values z: (infinity: a part infinite; NaN: a part NaN
    and none infinite)."""
    inf = np.isinf(z.real) | np.isinf(z.imag)
    return inf, ~inf & (np.isnan(z.real) | np.isnan(z.imag))


def _complex_bad(check, got):
    ref = check.ref
    real = dtypes.real_of(check.type)
    alt = check.alts(ref.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        rinf, rnan = classes(ref.astype(got.dtype))  # a part beyond the range is infinite
        ginf, gnan = classes(got)
        # the magnitude the allowance is of: |ref|, or an infinity's finite part's
        mag = np.abs(ref.astype(np.clongdouble)).astype(np.float64)
        finite_part = np.where(np.isinf(ref.real), np.abs(ref.imag), np.abs(ref.real))
        mag = np.where(rinf, np.nan_to_num(finite_part.astype(np.float64), nan=0.0,
                                           posinf=0.0), mag)
        allow = _allowance(check, real, mag)
        if check.whole and allow is not None:
            allow = np.where(rinf, np.inf, allow)
        if check.parts:  # each part on its own, as a float
            ok = ((_float_ok(got.real.astype(np.float64), ref.real, allow, real)
                   | _alt_ok(got.real.astype(np.float64), alt))
                  & (_float_ok(got.imag.astype(np.float64), ref.imag, allow, real)
                     | _alt_ok(got.imag.astype(np.float64), alt >> IM)))
        else:
            if allow is None:
                near = got == ref.astype(got.dtype)
            else:
                diff = np.abs(got.astype(np.clongdouble) - ref.astype(np.clongdouble))
                near = diff.astype(np.float64) <= allow
            finite = ~rinf & ~rnan & ~ginf & ~gnan & near
            # an infinity: the same infinite parts, NaN parts NaN, finite parts close
            each = [_float_ok(g.astype(np.float64), r, allow, real)
                    for g, r in ((got.real, ref.real), (got.imag, ref.imag))]
            ok = finite | (rnan & gnan) | (rinf & ginf & each[0] & each[1])
        ok = (ok | (((alt & CX_INF) != 0) & ginf) | (((alt & CX_NAN) != 0) & gnan)
              | (((alt & CX_ZERO) != 0) & (got == 0)))
    return ~ok


def describe(check, got, index, limit=8):
    """Lines naming each differing element: its index, what came, what was expected and
    what difference was allowed."""
    ref = check.ref.reshape(-1)
    g = np.asarray(got).reshape(-1)
    lines = []
    for i in index[:limit]:
        if i < 0:
            lines.append("shape %s, expected %s" % (np.asarray(got).shape, check.ref.shape))
            continue
        allow = "bit for bit"
        if not check.exact():
            allow = "%g ulp" % check.ulps
            if check.slack is not None:
                s = np.broadcast_to(np.asarray(check.slack, dtype=np.float64), check.ref.shape)
                allow += " + %.3g" % s.reshape(-1)[i]
        lines.append("  element %d: got %r, expected %r (%s)" % (i, _show(g[i]), _show(ref[i]), allow))
    return lines


def _show(v):
    if isinstance(v, (np.floating,)) and v.dtype == np.longdouble:
        return float(v)
    return v.item() if hasattr(v, "item") else v

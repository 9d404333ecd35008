"""Comparing what cujit computed with what the reference expects.

An expectation is a Check: the reference's values (in a wider type where the operation is
not emulated exactly) and, per element, what difference is allowed:
  - integers and bools: bit for bit;
  - floats: |got - ref| <= ulps * ulp(ref) + slack, with ulp the spacing of the result's type
    at |ref| (the distance to the correctly rounded result is what the CUDA math library's
    error tables measure); ulps 0 and no slack means equal. NaN must meet NaN (any payload);
    an infinity must meet the same infinity, except that a reference within the allowance
    of the largest finite value also accepts the infinity of its sign; +0 and -0 are equal;
  - complex numbers: |got - ref| (the distance in the plane) <= the allowance, per element,
    NaN in either part meeting NaN in either part.
Elements marked undefined (a C conversion of a value outside the integer's range) are not
compared."""

import numpy as np

import dtypes


class Check:
    def __init__(self, type_name, ref, ulps=0.0, slack=None, undefined=None):
        self.type = type_name
        self.ref = np.asarray(ref)
        self.ulps = ulps
        self.slack = slack  # None, or an array (or scalar) of absolute allowances
        shape = self.ref.shape
        self.undefined = np.zeros(shape, bool) if undefined is None else np.asarray(undefined)

    def exact(self):
        return not self.ulps and self.slack is None


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
    x = np.minimum(np.nan_to_num(x, nan=0.0), float(np.finfo(dt).max))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.spacing(x.astype(dt)).astype(np.float64)


def _max_finite(name):
    if name == "bf16":
        return 3.3895313892515355e38
    return float(np.finfo(dtypes.dtype(name)).max)


def mismatches(check, got):
    """The indices (C order) of the elements of `got` (an array of check.type) that the
    check does not allow, at most 8."""
    ref, name = check.ref, check.type
    got = np.asarray(got)
    if got.shape != ref.shape:
        return [-1]
    if dtypes.is_complex(name):
        bad = _complex_bad(check, got)
    elif dtypes.is_float(name):
        bad = _float_bad(check, got.astype(np.float64), ref, name)
    else:
        bad = got != ref.astype(got.dtype)
    bad = np.asarray(bad) & ~check.undefined
    return list(np.flatnonzero(bad.reshape(-1))[:8])


def _float_bad(check, got, ref, name):
    ref = np.asarray(ref)
    ref64 = ref.astype(np.float64)
    gnan, rnan = np.isnan(got), np.isnan(ref64)
    bad = gnan != rnan
    finite = ~gnan & ~rnan
    if check.exact():
        with np.errstate(invalid="ignore"):
            return bad | (finite & (got != ref64))
    allow = check.ulps * spacing(name, ref64)
    if check.slack is not None:
        allow = allow + np.asarray(check.slack, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        wide = ref.astype(np.longdouble) if ref.dtype == np.longdouble else ref64
        diff = np.abs(got.astype(wide.dtype) - wide).astype(np.float64)
        rinf, ginf = np.isinf(ref64), np.isinf(got)
        near_max = np.abs(ref64) + allow >= _max_finite(name)
        inf_ok = ginf & (rinf | near_max) & (np.sign(got) == np.sign(ref64))
        same_inf = rinf & ginf & (np.sign(got) == np.sign(ref64))
        close = ~rinf & ~ginf & (diff <= allow)
    return bad | (finite & ~(same_inf | close | inf_ok))


def _complex_bad(check, got):
    ref = check.ref
    rnan = np.isnan(ref.real) | np.isnan(ref.imag)
    gnan = np.isnan(got.real) | np.isnan(got.imag)
    bad = rnan != gnan
    finite = ~rnan & ~gnan
    if check.exact():
        with np.errstate(invalid="ignore"):
            return bad | (finite & (got != ref.astype(got.dtype)))
    real = dtypes.real_of(check.type)
    allow = check.ulps * spacing(real, np.abs(ref))
    if check.slack is not None:
        allow = allow + np.asarray(check.slack, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        rinf = np.isinf(ref.real) | np.isinf(ref.imag)
        ginf = np.isinf(got.real) | np.isinf(got.imag)
        diff = np.abs(got.astype(np.clongdouble) - ref.astype(np.clongdouble)).astype(np.float64)
        ok = np.where(rinf | ginf, got == ref.astype(got.dtype), diff <= allow)
    return bad | (finite & ~ok)


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

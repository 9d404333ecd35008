"""The float rules of the reference (README.md's bounds) held to examples: each outcome the
header allows is accepted, and values a defect would give are not; and a program whose
first result cujit rounds otherwise, within the allowance, is checked on from cujit's
values. Run by CTest (difftest_rules); exits 0 when every example holds, 1 otherwise."""

import math
import sys
import warnings

try:
    import numpy as np
except ImportError:
    print("SKIP: %s has no NumPy (the reference needs it)" % sys.executable)
    sys.exit(77)

import check  # noqa: E402
import compare  # noqa: E402
import dtypes  # noqa: E402
import model  # noqa: E402
from program import Stmt, hexbytes, parse_results  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")
failures = []


def accepts(check, value, want, what):
    got = np.array(value, dtype=dtypes.dtype(check.type)).reshape(check.ref.shape)
    ok = not compare.mismatches(check, got)
    if ok != want:
        failures.append("%s: %r %s, should %s" % (what, value, "accepted" if ok else "refused",
                                                  "be" if want else "not be"))


def fold(op, t, values):
    return model.fold_values(op, t, np.array(values, dtype=dtypes.dtype(t)))


def adoption():
    """A cumsum that cujit rounds to 1.0 where the exact sum is 0.99951 (1 ulp of f16 away,
    within the scan's allowance), then that sum to the power -2^62: the harness must take
    cujit's 1.0 for the power (whose answer is then 1), not its own 0.99951 (which gives
    +inf). Returns what fails, if anything."""
    x = np.array([0.5, 0.49951172], dtype=np.float16)
    e = np.array([-2**62, -2**62], dtype=np.int64)
    stmts = [Stmt("host", ["f16", "[2]", hexbytes(x.tobytes())], target=0),
             Stmt("host", ["i64", "[2]", hexbytes(e.tobytes())], target=1),
             Stmt("cumsum", ["v0", "0"], target=2),
             Stmt("binary", ["pow", "v2", "v1"], target=3)]
    m, lines = model.Model(), ["program p"]
    for i, st in enumerate(stmts):
        m.step(st)
        v = m.vars[st.target]
        if st.op == "cumsum":
            v.data[1] = 1.0  # cujit's rounding: the simulated device computes on from it
        lines += ["s %d 0 0 %s [%d]" % (i, v.type, v.data.size),
                  "d v%d %s" % (st.target, v.data.tobytes().hex())]
    lines += ["f v%d %s [2] %s" % (k, v.type, v.data.tobytes().hex())
              for k, v in sorted(m.vars.items())] + ["end p"]
    f, _ = check.check_program(stmts, parse_results(lines)["p"])
    out = ["a cumsum 1 ulp off, then a power of it: %s" % f] if f else []
    # the reference's own sum gives +inf there: without taking cujit's, it would fail
    own = model.binop_values("pow", "f64", "f64", np.array([0.99951171875]), np.array([-2.0**62]))
    if not compare.mismatches(own, np.array([1.0])):
        out.append("the adoption example proves nothing: the power of 0.99951 accepts 1")
    return out


def main():
    big = float(np.finfo(np.float32).max)
    # a sum whose partial sums may overflow: the finite sum or +inf, nothing else
    ch = fold("sum", "f32", [3e38, 3e38, -3e38])
    accepts(ch, 3e38, True, "3e38 + 3e38 - 3e38 in f32")
    accepts(ch, math.inf, True, "3e38 + 3e38 - 3e38 in f32, overflowed first")
    accepts(ch, -math.inf, False, "3e38 + 3e38 - 3e38 in f32")
    accepts(ch, math.nan, False, "3e38 + 3e38 - 3e38 in f32")
    accepts(ch, 2e38, False, "3e38 + 3e38 - 3e38 in f32")
    # a sum no order overflows stays finite
    accepts(fold("sum", "f32", [big / 2, big / 4, -1.0]), math.inf, False, "a sum below the max")
    # a product holding 0 whose other factors overflow: 0 or NaN
    ch = fold("prod", "f32", [0.0, 1e30, 1e30])
    accepts(ch, 0.0, True, "0 * 1e30 * 1e30 in f32")
    accepts(ch, math.nan, True, "0 * 1e30 * 1e30 in f32, overflowed first")
    accepts(ch, math.inf, False, "0 * 1e30 * 1e30 in f32")
    accepts(fold("prod", "f32", [0.0, 2.0, 3.0]), math.nan, False, "0 * 2 * 3")
    # integers: bit for bit, wrapping
    ch = fold("sum", "i32", [2**31 - 1, 1])
    accepts(ch, -2**31, True, "INT32_MAX + 1")
    accepts(ch, -2**31 + 1, False, "INT32_MAX + 1")
    # complex functions: 32 ulp of the magnitude, not 1e-14 off (a c128 asin once was)
    z = np.array([-1.0218 + 2.7j])
    ch = model.unop_values("asin", "c128", "c128", z)
    want = complex(np.arcsin(np.clongdouble(z[0])))
    accepts(ch, [want], True, "asin(-1.0218+2.7j)")
    accepts(ch, [want + 1.4e-14], False, "asin(-1.0218+2.7j) off by 1.4e-14")
    # an infinity times a nonzero number: an infinity (Annex G), where NumPy gives NaN
    x, y = np.array([complex(math.inf, 0)]), np.array([complex(2, 1)])
    ch = model.binop_values("mul", "c128", "c128", x, y)
    accepts(ch, [complex(math.inf, math.inf)], True, "(inf+0j) * (2+1j)")
    accepts(ch, [complex(math.nan, math.nan)], False, "(inf+0j) * (2+1j)")
    accepts(ch, [complex(1, 0)], False, "(inf+0j) * (2+1j)")
    # 0 ** 0 is 1, as NumPy's
    zero = np.array([0j])
    ch = model.binop_values("pow", "c128", "c128", zero, zero)
    accepts(ch, [1 + 0j], True, "0 ** 0")
    accepts(ch, [complex(math.nan, math.nan)], False, "0 ** 0")
    # exp beyond log(max): an infinite part accepted only there
    ch = model.unop_values("exp", "c128", "c128", np.array([complex(709.9, 1e-300)]))
    accepts(ch, [complex(math.inf, math.nan)], True, "exp(709.9 + tiny i)")
    ch = model.unop_values("exp", "c128", "c128", np.array([complex(700, 1e-300)]))
    accepts(ch, [complex(math.inf, math.nan)], False, "exp(700 + tiny i)")
    # a c64 dot of subnormal parts: their products underflow to 0 in float, as NumPy's do
    x = np.array([complex(1.68e-44, 0)], dtype=np.complex64)
    ch = model.dot_values("c64", "c64", x, x)
    accepts(ch, [0j], True, "a c64 dot of (1.7e-44+0j) with itself")
    accepts(ch, [complex(1e-40, 0)], False, "a c64 dot of (1.7e-44+0j) with itself")
    # pow at an infinite base is Annex F's: (-inf)^y is +0 for y < 0 not an odd integer
    # (-2^63 is even), -0 for a negative odd one; +inf for y > 0 not an odd integer (0.5)
    x = np.array([-math.inf, -math.inf, math.inf, -math.inf])
    y = np.array([-2.0**63, -3.0, -2.0**63, 2.0**63])
    ch = model.binop_values("pow", "f64", "f64", x, y)
    accepts(ch, [0.0, -0.0, 0.0, math.inf], True, "(-inf, -inf, inf, -inf) ** (-2^63, -3, -2^63, 2^63)")
    accepts(ch, [math.inf, -0.0, 0.0, math.inf], False, "(-inf) ** -2^63 as inf")
    x = np.array([-math.inf, -0.0, 4.0], dtype=np.float32)
    # a scalar exponent, as op_scalar passes it (NumPy takes a stride-0 0.5 as a sqrt)
    half = np.broadcast_to(np.array(0.5, dtype=np.float32), (3,))
    ch = model.binop_values("pow", "f32", "f32", x, half)
    accepts(ch, [math.inf, 0.0, 2.0], True, "(-inf, -0, 4) ** 0.5 in f32")
    accepts(ch, [math.nan, 0.0, 2.0], False, "(-inf) ** 0.5 in f32 as NaN")
    # x * y + z fused into one rounding (an FMA) may differ from the rounded product's sum
    # by an ulp of the result, past the product's ulp (seed 23 on an H200: 3.12f * 3.12f +
    # 18 computed in float, the result f64, gave 27.7343998 where two roundings give
    # 27.7343979)
    x = np.frombuffer(bytes.fromhex("14ae4740"), np.float32)
    env = [model.Var(x, np.ones(1, bool), "f32"), model.Var(x.copy(), np.ones(1, bool), "f32"),
           model.Var(np.array([18], np.int64), np.ones(1, bool), "i64")]
    ch = model.map_values("x * y + z", ["x", "y", "z"], env, "f64")
    accepts(ch, [27.734397888183594], True, "3.12f * 3.12f + 18 rounded twice")
    accepts(ch, [27.734399795532227], True, "3.12f * 3.12f + 18 fused")
    accepts(ch, [27.73440170288086], False, "3.12f * 3.12f + 18 two float ulps off")
    # promotion: bf16 with c128 is c128, with c64 c64, with f16 f32
    for a, b, want in (("bf16", "c128", "c128"), ("bf16", "c64", "c64"), ("f16", "bf16", "f32"),
                       ("bf16", "i8", "bf16"), ("bf16", "i16", "f32"), ("bf16", "i32", "f64")):
        for p, q in ((a, b), (b, a)):
            if dtypes.promote(p, q) != want:
                failures.append("promote(%s, %s) is %s, should be %s"
                                % (p, q, dtypes.promote(p, q), want))
    failures.extend(adoption())
    for f in failures:
        print("difftest_rules:", f)
    print("difftest_rules: %s" % ("FAIL" if failures else "PASS"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""The element types of cujit's arrays as NumPy sees them: names, NumPy dtypes, promotion
(include/cujit_array.h, "Array operations") and conversions as cujit's kernels convert
(C conversions; 16-bit floats through float, or from double in one rounding).

bfloat16 comes from the ml_dtypes package; without it, BF16 is left out of every program
and the harness says so."""

import numpy as np

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # the harness reports it and generates no bf16
    ml_dtypes = None
    BF16 = None

# name: (cujit_type enum value, NumPy dtype or None, C spelling of the enum)
TYPES = {
    "bool": (14, np.dtype(np.bool_), "CUJIT_TYPE_BOOL"),
    "i8": (1, np.dtype(np.int8), "CUJIT_TYPE_I8"),
    "u8": (2, np.dtype(np.uint8), "CUJIT_TYPE_U8"),
    "i16": (3, np.dtype(np.int16), "CUJIT_TYPE_I16"),
    "u16": (4, np.dtype(np.uint16), "CUJIT_TYPE_U16"),
    "i32": (5, np.dtype(np.int32), "CUJIT_TYPE_I32"),
    "u32": (6, np.dtype(np.uint32), "CUJIT_TYPE_U32"),
    "i64": (7, np.dtype(np.int64), "CUJIT_TYPE_I64"),
    "u64": (8, np.dtype(np.uint64), "CUJIT_TYPE_U64"),
    "f16": (9, np.dtype(np.float16), "CUJIT_TYPE_F16"),
    "bf16": (13, BF16, "CUJIT_TYPE_BF16"),
    "f32": (10, np.dtype(np.float32), "CUJIT_TYPE_F32"),
    "f64": (11, np.dtype(np.float64), "CUJIT_TYPE_F64"),
    "c64": (15, np.dtype(np.complex64), "CUJIT_TYPE_C64"),
    "c128": (16, np.dtype(np.complex128), "CUJIT_TYPE_C128"),
}

NAMES = [n for n in TYPES if TYPES[n][1] is not None]
INTS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
SIGNED = ["i8", "i16", "i32", "i64"]
UNSIGNED = ["u8", "u16", "u32", "u64"]
FLOATS = [n for n in ("f16", "bf16", "f32", "f64") if n in NAMES]
HALVES = [n for n in ("f16", "bf16") if n in NAMES]
COMPLEX = ["c64", "c128"]


def dtype(name):
    return TYPES[name][1]


def size(name):
    return TYPES[name][1].itemsize


def kind(name):
    """'b', 'i', 'u', 'f' or 'c'."""
    if name == "bool":
        return "b"
    return name[0] if name[0] in "iuc" else "f"


def is_int(name):  # bool included, as cujit counts it
    return kind(name) in "biu"


def is_float(name):
    return kind(name) == "f"


def is_complex(name):
    return kind(name) == "c"


def int_range(name):
    bits = 8 * size(name)
    if kind(name) == "u":
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def real_of(name):
    return {"c64": "f32", "c128": "f64"}.get(name, name)


# ---- promotion: NumPy 2's rules, as cujit_type_promote() follows them (NumPy's own
# result_type is the reference where it knows both types; bf16 follows the header) ----

def promote(a, b):
    """The type of an operation on arrays of types a and b: NumPy's result_type, bf16
    counting as f16 does (with an integer of 2 bytes or more: f32 or f64; with a complex
    type: that type), but f16 with bf16 gives f32 (the header's rule)."""
    if "bf16" not in (a, b):
        return _name_of(np.result_type(dtype(a), dtype(b)))
    if {a, b} == {"f16", "bf16"}:
        return "f32"
    as_f16 = [np.dtype(np.float16) if t == "bf16" else dtype(t) for t in (a, b)]
    r = _name_of(np.result_type(*as_f16))
    return "bf16" if r == "f16" else r


def promote_weak(a, scalar):
    """An array of type a with a Python int ('int') or float ('float')."""
    k = kind(a)
    if scalar == "int":
        return "i64" if k == "b" else a
    return a if k in "fc" else "f64"


def _name_of(dt):
    for n in NAMES:
        if TYPES[n][1] == dt:
            return n
    raise KeyError(dt)


# ---- conversions, as cj_array_convert writes them ----


def round_to(x, name):
    """float64 (or longdouble) values x rounded once to the real type `name`."""
    if name == "bf16":
        return f64_to_bf16(np.asarray(x, dtype=np.float64))
    return np.asarray(x).astype(dtype(name))


def f64_to_bf16(x):
    """Round-to-nearest-even of doubles to bfloat16 in one rounding (what
    __double2bfloat16 does); NaN stays NaN. Each value is kept to 8 significant bits (fewer
    below 2**-126, where bf16's subnormals are), then taken through float exactly."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        m, e = np.frexp(np.abs(x))  # |x| = m * 2**e, 0.5 <= m < 1
        bits = np.where(e - 1 >= -126, 8, np.maximum(0, 8 - (-126 - (e - 1))))
        scaled = np.ldexp(m, bits)  # its integer part: the kept bits
        q = np.floor(scaled)
        rest = scaled - q
        q = q + ((rest > 0.5) | ((rest == 0.5) & (np.fmod(q, 2) == 1)))
        r = np.ldexp(q, e - bits)
        r = np.copysign(np.where(r > 3.3895313892515355e38, np.inf, r), x)
        r = np.where(np.isfinite(x) & (x != 0), r, x)
        return r.astype(np.float32).astype(BF16)


def convert(x, src, dst):
    """Elements x (a NumPy array of type src) converted to type dst as cujit converts
    them. Returns (values, undefined): undefined marks elements whose C conversion is
    undefined (a float outside the integer type's range, or NaN, converted to an
    integer), which no comparison may look at."""
    x = np.asarray(x)
    undefined = np.zeros(x.shape, dtype=bool)
    if src == dst:
        return x.copy(), undefined
    if is_complex(dst):
        if is_complex(src):
            return x.astype(dtype(dst)), undefined
        re, undefined = convert(x, src, real_of(dst))
        return re.astype(dtype(dst)), undefined
    if is_complex(src):
        if dst == "bool":
            return (x.real != 0) | (x.imag != 0), undefined
        return convert(x.real.copy(), real_of(src), dst)
    if src in ("f16", "bf16"):
        return convert(x.astype(np.float32), "f32", dst)
    if dst in ("f16", "bf16"):
        if size(src) > 2 and src != "f32":  # from double or a wide integer: one rounding
            return round_to(x.astype(np.float64), dst), undefined
        return round_to(x.astype(np.float32).astype(np.float64), dst), undefined
    if is_float(src) and is_int(dst) and dst != "bool":
        lo, hi = int_range(dst)
        with np.errstate(invalid="ignore"):
            t = np.trunc(x.astype(np.float64))
            # hi + 1 is a power of two, exact as a double
            ok = (t >= float(lo)) & (t < float(hi) + 1.0)
        safe = np.where(ok, t, 0.0)
        wide = safe.astype(np.uint64) if dst == "u64" else safe.astype(np.int64)
        return wide.astype(dtype(dst)), ~ok
    if dst == "bool":
        return x != 0, undefined
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dtype(dst)), undefined


def to_bytes(a):
    """The C-order bytes of array a."""
    return np.ascontiguousarray(a).tobytes()


def from_bytes(b, name, shape):
    return np.frombuffer(b, dtype=dtype(name)).reshape(shape).copy()

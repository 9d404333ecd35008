"""The reference: each statement of a program run on NumPy arrays, with cujit's semantics as
include/cujit_array.h states them (NumPy 2's, NEP 50 promotion; the differences the header
documents are followed and listed in README.md, "Where cujit differs from NumPy").

The model holds one NumPy array per live cujit array, views as views of one base, and beside
each a mask of the elements ever written (an `empty` array's are not, and are never
compared), and a mask of the elements whose bytes the checking fake driver holds too
(`real`): on the fake no kernel runs, so only what the driver itself moves is there (host
data, memsets, copies of contiguous arrays of one type, and views of those); CPU mode
compares those elements only. Which statements move bytes without a kernel is cujit's own
choice, written here as src/array/io.c and select.c make it (README.md has the table).

Model.step(stmt) says what the statement must do: its status, the type and shape of what
it makes or writes, and a compare.Check of the values. In GPU mode the values cujit
wrote are then put into the model (Model.sync), so that each statement is checked against
what its own inputs held on the device: a rounding allowed in one statement is not carried
into the next."""

import math

import numpy as np

import dtypes
import folds
import compare as C
from compare import IM, Check
from program import unf64, unhex, unshape, untext

OK, INVALID, SKIP = "ok", "invalid", "skip"

BINOPS = ["add", "sub", "mul", "div", "pow", "minimum", "maximum", "fmod",
          "eq", "ne", "lt", "le", "gt", "ge"]
UNOPS = ["neg", "fabs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "floor", "ceil"]
REDOPS = ["sum", "min", "max", "prod", "any", "all", "argmin", "argmax"]
MODES = ["raise", "wrap", "clip"]
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")

# The CUDA math library's documented maximum error in ulp (CUDA C++ Programming Guide,
# "Mathematical Functions", devices of compute capability 5.2 and later); the reference is
# the correctly rounded value (computed in a wider type), so that is the allowed distance.
# One ulp more covers the reference's own rounding where it is a near tie.
ULP_F32 = {"exp": 2, "log": 1, "log10": 2, "sin": 2, "cos": 2, "tan": 4, "asin": 2,
           "acos": 2, "atan": 2, "sinh": 3, "cosh": 2, "tanh": 2, "pow": 4, "fabs": 0}
ULP_F64 = {"exp": 1, "log": 1, "log10": 1, "sin": 2, "cos": 2, "tan": 2, "asin": 2,
           "acos": 2, "atan": 2, "sinh": 2, "cosh": 1, "tanh": 1, "pow": 2, "fabs": 0}
# Complex functions (cuda::std::complex) have no documented bound: their distance from the
# reference is allowed COMPLEX_ULPS ulp of the result's magnitude (arithmetic: of the
# operands' magnitudes, as below).
COMPLEX_ULPS = 32

WIDE = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None


class Expect:
    def __init__(self, status=OK, type_name=None, shape=None, check=None):
        self.status = status
        self.type = type_name
        self.shape = shape
        self.check = check
        self.value_dependent = False  # the status depends on device values (RAISE)
        self.words = []  # a refusal: what its message must say (Invalid.words)
        self.ub = False  # the statement relies on undefined behaviour: never generated
        self.why = ""

    def __repr__(self):
        return "Expect(%s %s %s%s)" % (self.status, self.type, self.shape,
                                       " ub" if self.ub else "")


class Var:
    __slots__ = ("data", "mask", "type", "real")

    def __init__(self, data, mask, type_name, real=None):
        self.data, self.mask, self.type = data, mask, type_name
        self.real = np.zeros(mask.shape, bool) if real is None and mask is not None else real


def contiguous(a):
    return bool(a.flags["C_CONTIGUOUS"]) or a.size == 0


class Invalid(Exception):
    """A refusal: why, and (words) what its message must say: alternatives, each a list of
    texts the message holds all of."""

    def __init__(self, why, words=None):
        super().__init__(why)
        self.words = words or []


def need(cond, why):
    if not cond:
        raise Invalid(why)


def broadcast_shape(shapes, names=None):
    """NumPy's broadcasting of the shapes, or a refusal; names (one per shape, None for
    one left out): the operands as cujit's message names them, which must name two of
    them that do not broadcast, with their shapes."""
    try:
        return tuple(np.broadcast_shapes(*[s for s in shapes if s is not None]))
    except ValueError:
        pass
    words = []
    for i, a in enumerate(shapes):
        for j in range(i + 1, len(shapes)):
            b = shapes[j]
            if names and a is not None and b is not None and not _broadcasts(a, b):
                words.append(["%s has shape %s and %s %s, which do not broadcast"
                              % (names[i], shape_text(a), names[j], shape_text(b))])
    raise Invalid("shapes do not broadcast", words)


def _broadcasts(a, b):
    return all(x == y or 1 in (x, y) for x, y in zip(a[::-1], b[::-1]))


def shape_text(sh):
    """A shape as cujit's messages write it: (4, 4), (16,), ()."""
    return "(%s)" % (", ".join(str(d) for d in sh) + ("," if len(sh) == 1 else ""))


def compute_type(t):
    return "f32" if t in ("f16", "bf16") else t


class Model:
    def __init__(self):
        self.vars = {}

    # ---- state ----

    def new(self, type_name, sh):
        data = np.zeros(sh, dtype=dtypes.dtype(type_name))
        return Var(data, np.zeros(sh, dtype=bool), type_name)

    def sync(self, k, raw):
        """Puts the bytes cujit's array vk holds into the model."""
        v = self.vars.get(k)
        if v is None or isinstance(raw, str):
            return
        vals = np.frombuffer(raw, dtype=v.data.dtype).reshape(v.data.shape)
        v.data[...] = vals

    def live(self, k):
        return k in self.vars

    # ---- one statement ----

    def step(self, st):
        if st.op == "destroy":
            k = int(st.args[0][1:])
            if k not in self.vars:
                return Expect(SKIP)
            del self.vars[k]
            return Expect(OK)
        for k in st.refs():
            if k not in self.vars:
                return Expect(SKIP)
        if st.target is not None and not st.given and st.target in self.vars:
            return Expect(SKIP)
        fn = getattr(self, "op_" + st.op, None)
        if fn is None:
            return Expect(SKIP)
        try:
            return fn(st)
        except Invalid as e:
            x = Expect(INVALID)
            x.why = str(e)
            x.words = e.words
            return x
        except _Raise as e:
            return e.expect

    def arr(self, word):
        return self.vars[int(word[1:])]

    # ---- results ----

    def made(self, st, var, check=None):
        """A new array (a view, or a new output) named st.target."""
        self.vars[st.target] = var
        if check is None:
            check = Check(var.type, var.data.copy(), undefined=~var.mask)
        return Expect(OK, var.type, var.data.shape, check)

    def output(self, st, type_name, sh):
        """The output of an operation: the given one (checked) or None for a new one."""
        if not st.given:
            return None
        o = self.vars[st.target]
        need(o.type == type_name, "the output holds %s, the result is %s" % (o.type, type_name))
        need(o.data.shape == tuple(sh), "the output's shape differs from the result's")
        return o

    def write(self, st, o, type_name, values, check, real=False):
        """Stores a result computed into a temporary (values) into the output; `real`
        says which of its elements the fake driver holds (by default none: a kernel
        wrote them)."""
        if o is None:
            o = self.new(type_name, values.shape)
            self.vars[st.target] = o
        o.data[...] = values
        o.mask[...] = True
        o.real[...] = real
        check.undefined = check.undefined | np.zeros(values.shape, bool)
        x = Expect(OK, type_name, o.data.shape, check)
        x.ub = bool(check.undefined.any())
        return x

    # ---- making arrays ----

    def _shape(self, type_name, sh):
        need(type_name in dtypes.NAMES, "type")
        need(0 <= len(sh) <= 4, "ndim")
        total = 1
        for d in sh:
            need(d >= 0, "negative size")
            need(d == 0 or total <= (1 << 62) // d, "too many elements")
            total *= d
        return total

    def op_empty(self, st):
        t, sh = st.args[0], unshape(st.args[1])
        self._shape(t, sh)
        return self.made(st, self.new(t, sh))

    def op_zeros(self, st):
        t, sh = st.args[0], unshape(st.args[1])
        self._shape(t, sh)
        v = self.new(t, sh)
        v.mask[...] = True
        v.real[...] = True  # a memset
        return self.made(st, v)

    def op_full(self, st):
        t, sh = st.args[0], unshape(st.args[1])
        self._shape(t, sh)
        v = self.new(t, sh)
        v.data[...] = np.frombuffer(unhex(st.args[2]), dtype=dtypes.dtype(t))[0]
        v.mask[...] = True
        return self.made(st, v)

    def op_host(self, st):
        t, sh = st.args[0], unshape(st.args[1])
        self._shape(t, sh)
        v = self.new(t, sh)
        v.data[...] = np.frombuffer(unhex(st.args[2]), dtype=dtypes.dtype(t)).reshape(sh)
        v.mask[...] = True
        v.real[...] = True  # a copy from the host
        return self.made(st, v)

    def op_like(self, st):
        a = self.arr(st.args[0])
        return self.made(st, self.new(a.type, a.data.shape))

    def op_arange(self, st):
        t = st.args[0]
        start, stop, step = (unf64(w) for w in st.args[1:4])
        need(t in dtypes.NAMES, "type")
        need(step > 0 or step < 0, "step 0 or NaN")
        with np.errstate(all="ignore"):
            count = (stop - start) / step
        need(count < 9.2e18, "too long")
        n = int(count) + (float(int(count)) < count) if count > 0 else 0
        i = np.arange(n, dtype=np.float64)
        # start + i * step in double, as two roundings; the device may fuse them into one
        with np.errstate(all="ignore"):
            x = start + i * step
        vals, undefined = dtypes.convert(x, "f64", t)
        v = self.new(t, (n,))
        v.data[...] = vals
        v.mask[...] = True
        ulps = 1.0 if dtypes.is_float(t) else 0.0
        ref = x if t == "f64" else vals
        check = Check(t, ref, ulps=ulps, undefined=undefined)
        if dtypes.is_int(t):  # an integer range must be exact in double
            with np.errstate(all="ignore"):
                fused = np.array([math.fsum([start, k * step]) for k in range(n)])
            undefined = undefined | (fused != x)
            check.undefined = undefined
        x_ = self.made(st, v, check)
        x_.ub = bool(undefined.any())
        return x_

    # ---- views ----

    def _view(self, st, a, view):
        """The view `view` (a function of an array: a slice, a reshape ...) of a."""
        return self.made(st, Var(view(a.data), view(a.mask), a.type, view(a.real)))

    def op_view(self, st):
        a = self.arr(st.args[0])
        start, stop = int(st.args[1]), int(st.args[2])
        need(0 <= start <= stop <= a.data.size, "range")
        try:
            np.reshape(a.data, (-1,), copy=False)
        except ValueError:
            raise Invalid("no 1-D view")
        return self._view(st, a, lambda x: np.reshape(x, (-1,), copy=False)[start:stop])

    def op_reshape(self, st):
        a = self.arr(st.args[0])
        sh = unshape(st.args[1])
        total = self._shape(a.type, sh)
        need(total == a.data.size, "size")
        try:
            np.reshape(a.data, sh, copy=False)
        except ValueError:
            raise Invalid("no view of that shape")
        return self._view(st, a, lambda x: np.reshape(x, sh, copy=False))

    def op_slice(self, st):
        a = self.arr(st.args[0])
        dim, start, stop, step = (int(w) for w in st.args[1:5])
        need(0 <= dim < a.data.ndim, "dim")
        need(step != 0, "step")
        size = a.data.shape[dim]
        idx = range(start, stop, step)
        count = len(idx)
        if count:
            need(0 <= idx[0] < size and 0 <= idx[-1] < size, "outside")
            end = idx[-1] + (1 if step > 0 else -1)
            sl = slice(start, end if end >= 0 else None, step)
        else:
            need(0 <= start <= size, "outside")
            sl = slice(start, start)
        key = (slice(None),) * dim + (sl,)
        return self._view(st, a, lambda x: x[key])

    def op_transpose(self, st):
        a = self.arr(st.args[0])
        return self._view(st, a, lambda x: x.T)

    # ---- copies and fills ----

    def op_copy(self, st):
        a = self.arr(st.args[0])
        return self._convert(st, a, a.type)

    def op_astype(self, st):
        a = self.arr(st.args[0])
        t = st.args[1]
        need(t in dtypes.NAMES, "type")
        return self._convert(st, a, t)

    def _convert(self, st, a, t):
        o = self.output(st, t, a.data.shape)
        vals, undefined = dtypes.convert(a.data, a.type, t)
        undefined = undefined | ~a.mask
        # a copy of one type between contiguous arrays is the driver's (cuMemcpyDtoD,
        # through a contiguous temporary when they overlap): it moves what a held
        copied = a.type == t and contiguous(a.data) and (o is None or contiguous(o.data))
        real = a.real.copy() if copied else False
        x = self.write(st, o, t, vals, Check(t, vals, undefined=undefined), real)
        return x

    def op_fill(self, st):
        a = self.arr(st.args[0])
        a.data[...] = np.frombuffer(unhex(st.args[1]), dtype=a.data.dtype)[0]
        a.mask[...] = True
        a.real[...] = False  # a kernel
        return Expect(OK, a.type, a.data.shape, Check(a.type, a.data.copy()))

    def op_write(self, st):
        a = self.arr(st.args[0])
        raw = unhex(st.args[1])
        need(len(raw) == a.data.nbytes, "bytes")
        a.data[...] = np.frombuffer(raw, dtype=a.data.dtype).reshape(a.data.shape)
        a.mask[...] = True
        a.real[...] = contiguous(a.data)  # else through a temporary and a kernel
        return Expect(OK, a.type, a.data.shape, Check(a.type, a.data.copy()))

    # ---- elementwise ----

    def _broadcast(self, ops, names):
        """The result's shape by NumPy's broadcasting of the arrays' shapes (None: scalars),
        named in a refusal's message as `names` names them."""
        return broadcast_shape([v.data.shape if v is not None else None for v in ops], names)

    def op_binary(self, st):
        op = st.args[0]
        need(op in BINOPS, "op")
        a, b = self.arr(st.args[1]), self.arr(st.args[2])
        sh = self._broadcast([a, b], ("a", "b")) if a.data.shape != b.data.shape else \
            a.data.shape
        p = dtypes.promote(a.type, b.type)
        r = _binop_allowed(op, p)
        o = self.output(st, r, sh)
        x = np.broadcast_to(a.data, sh) if a.data.shape != sh else a.data
        y = np.broadcast_to(b.data, sh) if b.data.shape != sh else b.data
        xm = np.broadcast_to(a.mask, sh)
        ym = np.broadcast_to(b.mask, sh)
        cx, ux = dtypes.convert(x, a.type, _binop_compute(op, p))
        cy, uy = dtypes.convert(y, b.type, _binop_compute(op, p))
        check = binop_values(op, p, r, cx, cy)
        check.undefined = check.undefined | ~xm | ~ym | ux | uy
        return self.write(st, o, r, check.values, check)

    def op_scalar(self, st):
        op = st.args[0]
        need(op in BINOPS, "op")
        a = self.arr(st.args[1])
        s = unf64(st.args[2])
        flags = int(st.args[3])
        need(flags & ~3 == 0, "flags")
        is_int = bool(flags & 2)
        p = dtypes.promote_weak(a.type, "int" if is_int else "float")
        r = _binop_allowed(op, p)
        if is_int:
            need(s == math.floor(s) and abs(s) < 2.0**63, "not an integer below 2^63")
            if dtypes.is_int(p) and p != "bool":
                lo, hi = dtypes.int_range(p)
                need(lo <= s <= hi, "does not fit")
            need(not (op == "pow" and dtypes.is_int(p) and s < 0 and not flags & 1),
                 "integers to negative integer powers")
        o = self.output(st, r, a.data.shape)
        c = _binop_compute(op, p)
        # the scalar is converted to the operation's type first (NEP 50), then computed
        sv, _ = dtypes.convert(np.array(s), "f64", p)
        sc, _ = dtypes.convert(sv, p, c)
        cx, ux = dtypes.convert(a.data, a.type, c)
        cs = np.broadcast_to(sc, a.data.shape)
        if flags & 1:
            check = binop_values(op, p, r, cs, cx)
        else:
            check = binop_values(op, p, r, cx, cs)
        check.undefined = check.undefined | ~a.mask | ux
        return self.write(st, o, r, check.values, check)

    def op_unary(self, st):
        op = st.args[0]
        need(op in UNOPS, "op")
        a = self.arr(st.args[1])
        t = a.type
        need(not (op == "neg" and t == "bool"), "neg of bool")
        need(not (dtypes.is_complex(t) and op in ("floor", "ceil")), "complex order")
        if op == "neg":
            r = t
        elif op == "fabs" and dtypes.is_complex(t):
            r = dtypes.real_of(t)
        else:
            r = "f64" if dtypes.is_int(t) else t
        o = self.output(st, r, a.data.shape)
        c = compute_type(t) if op == "neg" else compute_type(r if dtypes.is_int(t) else t)
        cx, ux = dtypes.convert(a.data, t, c)
        check = unop_values(op, c, r, cx)
        check.undefined = check.undefined | ~a.mask | ux
        return self.write(st, o, r, check.values, check)

    def op_map(self, st):
        expr = untext(st.args[0])
        n = int(st.args[1])
        names = [st.args[2 + 2 * i] for i in range(n)]
        arrays = [self.arr(st.args[3 + 2 * i]) for i in range(n)]
        need(n >= 1, "no arrays")
        sh = self._broadcast(arrays, ["'%s'" % name for name in names])
        arrays = [v if v.data.shape == sh else
                  Var(np.broadcast_to(v.data, sh), np.broadcast_to(v.mask, sh), v.type)
                  for v in arrays]
        r = arrays[0].type
        for v in arrays[1:]:
            r = dtypes.promote(r, v.type)
        if st.given:
            r = self.vars[st.target].type
        o = self.output(st, r, sh)
        check = map_values(expr, names, arrays, r)
        for v in arrays:
            check.undefined = check.undefined | ~v.mask
        return self.write(st, o, r, check.values, check)

    def _value(self, word):
        """A where-value: (Var, type) for an array, (None, type, value) for a scalar."""
        if word.startswith("v"):
            v = self.arr(word)
            return v, v.type, None
        t, _, hexpart = word.partition(":")
        need(t in dtypes.NAMES, "scalar type")
        val = np.frombuffer(bytes.fromhex(hexpart[2:]), dtype=dtypes.dtype(t))[0]
        return None, t, val

    def op_where(self, st):
        return self._select(st, False)

    def op_ifpos(self, st):
        return self._select(st, True)

    def _select(self, st, positive):
        c = self.arr(st.args[0])
        xa, tx, xs = self._value(st.args[1])
        ya, ty, ys = self._value(st.args[2])
        need(not (positive and dtypes.is_complex(c.type)), "complex order")
        sh = self._broadcast([c, xa, ya], ("crit" if positive else "cond", "a", "b"))
        r = dtypes.promote(tx, ty)
        o = self.output(st, r, sh)
        cond = np.broadcast_to(c.data, sh)
        if positive:
            cc, _ = dtypes.convert(cond, c.type, compute_type(c.type))
            with np.errstate(invalid="ignore"):
                pick = cc > 0
        else:
            pick, _ = dtypes.convert(cond, c.type, "bool")
        undefined = ~np.broadcast_to(c.mask, sh)
        vals = []
        for v, t, s in ((xa, tx, xs), (ya, ty, ys)):
            src = np.broadcast_to(v.data if v is not None else np.array(s), sh)
            cv, u = dtypes.convert(src, t, r)
            vals.append(cv)
            undefined = undefined | u
            if v is not None:
                undefined = undefined | ~np.broadcast_to(v.mask, sh)
        res = np.where(pick, vals[0], vals[1]).astype(dtypes.dtype(r))
        check = Check(r, res, undefined=undefined)
        check.values = res
        return self.write(st, o, r, res, check)

    # ---- take, put, joins ----

    def _indexed(self, a, idx, mode):
        need(idx.type in ("i32", "i64"), "index type")
        need(mode in (0, 1, 2), "mode")
        need(a.data.size or not idx.data.size, "empty a")
        n = a.data.size
        ix = idx.data.astype(np.int64).reshape(-1)
        bad = np.zeros(ix.shape, bool)
        if mode == 0:
            bad = (ix < -n) | (ix >= n)
            res = np.where(ix < 0, ix + n, ix)
        elif mode == 1:
            res = np.mod(ix, n) if n else ix
        else:
            res = np.clip(ix, 0, max(n - 1, 0))
        return res, bad

    def op_take(self, st):
        a, idx = self.arr(st.args[0]), self.arr(st.args[1])
        mode = _mode(st.args[2])
        where, bad = self._indexed(a, idx, mode)
        o = self.output(st, a.type, idx.data.shape)
        flat = a.data.reshape(-1)
        safe = np.where(bad, 0, where)
        vals = flat[safe] if flat.size else np.zeros(safe.shape, a.data.dtype)
        vals = np.where(bad, np.zeros((), a.data.dtype), vals).astype(a.data.dtype)
        vals = vals.reshape(idx.data.shape)
        known = a.mask.reshape(-1)[safe] if flat.size else np.ones(safe.shape, bool)
        undefined = (~known & ~bad).reshape(idx.data.shape) | ~idx.mask
        check = Check(a.type, vals, undefined=undefined)
        if bad.any():
            # cujit writes the others and 0 for the bad ones, then reports the first
            if o is not None:
                o.data[...] = vals
                o.mask[...] = True
                o.real[...] = False
            x = Expect(INVALID)
            x.value_dependent = True
            x.ub = bool(undefined.any())
            raise _Raise(x)
        return self.write(st, o, a.type, vals, check)

    def op_put(self, st):
        a, idx, v = self.arr(st.args[0]), self.arr(st.args[1]), self.arr(st.args[2])
        mode = _mode(st.args[3])
        where, bad = self._indexed(a, idx, mode)
        bcast = v.data.size == 1 and v.data.shape != idx.data.shape
        need(bcast or v.data.shape == idx.data.shape, "values' shape")
        vals, undefined = dtypes.convert(v.data, v.type, a.type)
        vals = np.broadcast_to(vals.reshape(-1) if bcast else vals, idx.data.shape).reshape(-1)
        vmask = np.broadcast_to(v.mask.reshape(-1) if bcast else v.mask, idx.data.shape)
        undefined = np.broadcast_to(undefined.reshape(-1) if bcast else undefined,
                                    idx.data.shape).reshape(-1)
        ok = ~bad
        targets = where[ok]
        ub = bool(undefined[ok].any() or not vmask.reshape(-1)[ok].all()
                  or not idx.mask.all())
        # a repeated index with different values: which lands is unspecified
        if len(np.unique(targets)) != len(targets):
            ub = True
        flat = np.reshape(a.data, (-1,), copy=False) if contiguous(a.data) else None
        src = vals.copy()
        if flat is not None:
            flat[targets] = src[ok]
            np.reshape(a.mask, (-1,), copy=False)[targets] = True
            np.reshape(a.real, (-1,), copy=False)[targets] = False
        else:
            coords = np.unravel_index(targets, a.data.shape)
            a.data[coords] = src[ok]
            a.mask[coords] = True
            a.real[coords] = False
        x = Expect(OK, a.type, a.data.shape, Check(a.type, a.data.copy(), undefined=~a.mask))
        if bad.any():
            x = Expect(INVALID)
            x.value_dependent = True
        x.ub = ub
        return x

    def _joined(self, st, stack):
        n = int(st.args[0])
        need(n >= 1, "n is 0")
        arrays = [self.arr(w) for w in st.args[1:1 + n]]
        for v in arrays:
            need(v.data.ndim == 1, "not 1-D")
        t = arrays[0].type
        for v in arrays[1:]:
            t = dtypes.promote(t, v.type)
        if stack:
            for v in arrays:
                need(v.data.shape == arrays[0].data.shape, "shapes")
            sh = (n, arrays[0].data.size)
        else:
            sh = (sum(v.data.size for v in arrays),)
        o = self.output(st, t, sh)
        parts, undef = [], []
        for v in arrays:
            cv, u = dtypes.convert(v.data, v.type, t)
            parts.append(cv)
            undef.append(u | ~v.mask)
        join = np.stack if stack else np.concatenate
        vals = join(parts).reshape(sh).astype(dtypes.dtype(t))
        undefined = join(undef).reshape(sh)
        # each part is the driver's copy where it is contiguous and of the result's type
        # and the output is contiguous (through a temporary or not), else a kernel's
        real = False
        if o is None or contiguous(o.data):
            real = join([v.real.copy() if v.type == t and contiguous(v.data) else
                         np.zeros(v.data.shape, bool) for v in arrays]).reshape(sh)
        return self.write(st, o, t, vals, Check(t, vals, undefined=undefined), real)

    def op_concat(self, st):
        return self._joined(st, False)

    def op_stack(self, st):
        return self._joined(st, True)

    # ---- reductions and scans ----

    def op_reduce(self, st):
        word = st.args[0]
        need(word in REDOPS, "op")
        a = self.arr(st.args[1])
        return self._reduce(st, word, a, _reduce_result(word, a.type))

    def op_reduceas(self, st):
        word = st.args[0]
        need(word in ("sum", "prod"), "op")
        a = self.arr(st.args[1])
        t = st.args[2]
        need(t in dtypes.NAMES, "type")
        need(not dtypes.is_complex(a.type) or dtypes.is_complex(t), "drops imaginary parts")
        return self._reduce(st, word, a, t)

    def _reduce(self, st, op, a, r):
        orders = op in ("min", "max", "argmin", "argmax")
        need(not (orders and dtypes.is_complex(a.type)), "complex order")
        need(not (orders and a.data.size == 0), "empty")
        o = self._reduce_output(st, r)
        flat = a.data.reshape(-1)
        if op in ("sum", "prod"):
            cv, u = dtypes.convert(flat, a.type, r)
            check = fold_values(op, r, cv)
            check.undefined = np.asarray(bool(u.any() or not a.mask.all()))
        else:
            check = extreme_values(op, a.type, r, flat)
            check.undefined = np.asarray(not a.mask.all())
        return self.write(st, o, r, np.asarray(check.values), check)

    def op_reduceaxis(self, st):
        word = st.args[0]
        need(word in REDOPS, "op")
        a = self.arr(st.args[1])
        return self._reduce_axis(st, word, a, _reduce_result(word, a.type))

    def op_reduceaxisas(self, st):
        word = st.args[0]
        need(word in ("sum", "prod"), "op")
        a = self.arr(st.args[1])
        t = st.args[4]
        need(t in dtypes.NAMES, "type")
        need(not dtypes.is_complex(a.type) or dtypes.is_complex(t), "drops imaginary parts")
        return self._reduce_axis(st, word, a, t)

    def _reduce_axis(self, st, op, a, r):
        """op of a along the axes of st.args[2] (keepdims st.args[3]) into type r: one
        result per position of the kept dimensions, in C order (src/reduce/axis.c)."""
        naxes, axes = parse_axes(st.args[2])
        keep = int(st.args[3]) != 0
        nd = a.data.ndim
        need(naxes >= 0, "a negative naxes")
        need(axes is not None or naxes == 0, "axes NULL with naxes above 0")
        orders = op in ("min", "max", "argmin", "argmax")
        need(naxes == 1 or op not in ("argmin", "argmax"), "argmin and argmax take one axis")
        reduced = [False] * nd
        for ax in axes or []:
            need(nd > 0, "a 0-d array has no axis")
            need(-nd <= ax < nd, "axis outside the dimensions")
            ax = ax + nd if ax < 0 else ax
            need(not reduced[ax], "an axis given twice")
            reduced[ax] = True
        need(not (orders and dtypes.is_complex(a.type)), "complex order")
        red = [d for d in range(nd) if reduced[d]]
        kept = [d for d in range(nd) if not reduced[d]]
        need(not orders or all(a.data.shape[d] for d in red), "an empty axis, no identity")
        sh = tuple(1 if reduced[d] else a.data.shape[d] for d in range(nd) if keep or not reduced[d])
        o = self.output(st, r, sh)
        n_red = int(np.prod([a.data.shape[d] for d in red], dtype=np.int64)) if red else 1
        n_out = int(np.prod([a.data.shape[d] for d in kept], dtype=np.int64)) if kept else 1

        def rows(x):  # (n_out, n_red): each result's elements, in C order
            return np.moveaxis(x, red, list(range(len(kept), nd))).reshape(n_out, n_red)

        data, mask = rows(a.data), rows(a.mask)
        if op in ("sum", "prod"):
            cv, u = dtypes.convert(data, a.type, r)
            check = fold_rows(op, r, cv)
            check.undefined = (u | ~mask).any(axis=1)
        else:
            check = extreme_rows(op, a.type, r, data)
            check.undefined = (~mask).any(axis=1)
        check.ref = check.ref.reshape(sh)
        check.values = np.asarray(check.values).reshape(sh)
        check.undefined = check.undefined.reshape(sh)
        for f in ("slack", "alt"):
            if np.ndim(getattr(check, f)):
                setattr(check, f, getattr(check, f).reshape(sh))
        return self.write(st, o, r, check.values, check)

    def _reduce_output(self, st, r):
        if not st.given:
            return None
        o = self.vars[st.target]
        need(o.type == r, "output type")
        need(o.data.ndim == 0, "output not 0-d")
        return o

    def op_dot(self, st):
        a, b = self.arr(st.args[0]), self.arr(st.args[1])
        need(a.data.shape == b.data.shape, "shapes")
        p = dtypes.promote(a.type, b.type)
        o = self._reduce_output(st, p)
        acc = compute_type(p)
        x, ux = dtypes.convert(a.data.reshape(-1), a.type, acc)
        y, uy = dtypes.convert(b.data.reshape(-1), b.type, acc)
        check = dot_values(p, acc, x, y)
        check.undefined = np.asarray(bool(ux.any() or uy.any() or not a.mask.all()
                                          or not b.mask.all()))
        return self.write(st, o, p, np.asarray(check.values), check)

    # ---- values to the host, and allclose ----

    def _host_value(self, st, t, r, reduce):
        """A reduction's value written into a host variable of type t (its size checked
        against the result type r's), then made a 0-d array of t."""
        need(not st.given, "a host value has no output array")
        need(t in dtypes.NAMES, "type")
        need(dtypes.size(t) == dtypes.size(r), "bytes are not the result type's size")
        need(dtypes.is_complex(t) or not dtypes.is_complex(r), "no double for a complex value")
        x = reduce()
        if x.status != OK or t == r:
            return x
        # the bytes of an r read as a t: a type and shape to compare, no value
        v = self.vars[st.target]
        data = np.asarray(v.data).reshape(1).view(dtypes.dtype(t)).reshape(())
        self.vars[st.target] = Var(data.copy(), np.ones((), bool), t)
        return Expect(OK, t, (), Check(t, data.copy(), undefined=np.ones((), bool)))

    def op_reducehost(self, st):
        word = st.args[0]
        need(word in REDOPS, "op")
        a = self.arr(st.args[1])
        r = _reduce_result(word, a.type)
        return self._host_value(st, st.args[2], r, lambda: self._reduce(st, word, a, r))

    def op_dothost(self, st):
        a, b = self.arr(st.args[0]), self.arr(st.args[1])
        r = dtypes.promote(a.type, b.type)
        return self._host_value(st, st.args[2], r, lambda: self.op_dot(st))

    def _allclose(self, st, a, b, b_mask, words):
        need(not st.given, "allclose has no output array")
        rtol, atol, eq = unf64(words[0]), unf64(words[1]), int(words[2]) != 0
        broadcast_shape([a.data.shape, b.shape], ("a", "b"))
        with np.errstate(all="ignore"):
            close = bool(np.allclose(a.data, b, rtol=rtol, atol=atol, equal_nan=eq))
        undefined = np.asarray(bool(not a.mask.all() or not np.all(b_mask)))
        vals = np.asarray(close)
        return self.write(st, None, "bool", vals, Check("bool", vals, undefined=undefined))

    def op_allclose(self, st):
        a, b = self.arr(st.args[0]), self.arr(st.args[1])
        return self._allclose(st, a, b.data, b.mask, st.args[2:5])

    def op_allclosehost(self, st):
        a = self.arr(st.args[0])
        raw = unhex(st.args[1])
        need(len(raw) == a.data.nbytes or len(raw) == a.data.dtype.itemsize,
             "b is neither a's elements nor one")
        one = len(raw) != a.data.nbytes
        b = np.frombuffer(raw, dtype=a.data.dtype).reshape(() if one else a.data.shape)
        return self._allclose(st, a, b, True, st.args[2:5])

    def op_cumsum(self, st):
        a = self.arr(st.args[0])
        excl = int(st.args[1]) != 0
        t = _cumsum_type(a.type)
        if st.given:
            need(self.vars[st.target].data.ndim == 1, "output not 1-D")
        need(contiguous(a.data), "strided input")
        o = self.output(st, t, (a.data.size,))
        need(o is None or contiguous(o.data), "strided output")
        cv, u = dtypes.convert(a.data.reshape(-1), a.type, t)
        check = scan_values("a + b", t, cv, excl)
        check.undefined = check.undefined | u.any() | (not a.mask.all())
        return self.write(st, o, t, check.values, check)

    def op_scan(self, st):
        t = st.args[0]
        expr, neutral = untext(st.args[1]), untext(st.args[2])
        excl = int(st.args[3]) != 0
        a = self.arr(st.args[4])
        need(t in dtypes.NAMES and expr and neutral, "create")
        need(a.type == t, "type")
        need(a.data.ndim == 1, "not 1-D")
        need(contiguous(a.data), "strided input")
        if st.given:
            need(self.vars[st.target].data.ndim == 1, "output not 1-D")
        o = self.output(st, t, (a.data.size,))
        need(o is None or contiguous(o.data), "strided output")
        check = scan_values(expr, t, a.data.copy(), excl, neutral)
        check.undefined = check.undefined | (not a.mask.all())
        x = self.write(st, o, t, check.values, check)
        # the expression is the caller's C++: a + b of i32 or i64 past the type's range is
        # a signed overflow (undefined), in whatever order the scan combines the elements
        x.ub |= expr == "a + b" and t in ("i32", "i64") and _segment_overflows(a.data, t)
        return x


def _segment_overflows(v, t):
    """Whether the sum of some run of consecutive elements of v leaves type t's range."""
    lo, hi = dtypes.int_range(t)
    most = least = 0
    for e in v.reshape(-1).tolist():
        most = max(int(e), most + int(e))
        least = min(int(e), least + int(e))
        if most > hi or least < lo:
            return True
    return False


class _Raise(Exception):
    def __init__(self, expect):
        super().__init__("raise")
        self.expect = expect


def _mode(word):
    return MODES.index(word) if word in MODES else int(word)


# ---- the operations' values ----


def _binop_allowed(op, p):
    """The result type of op on promoted type p, or Invalid."""
    if dtypes.is_complex(p):
        need(op not in ("fmod", "minimum", "maximum", "lt", "le", "gt", "ge"),
             "complex numbers have no order")
    need(not (p == "bool" and op == "sub"), "bool sub")
    if op in COMPARISONS:
        return "bool"
    if op == "div" and dtypes.is_int(p):
        return "f64"
    if p == "bool" and op in ("pow", "fmod"):  # NumPy computes these of bools in int8
        return "i8"
    return p


def _binop_compute(op, p):
    if op == "div" and dtypes.is_int(p):
        return "f64"
    if p == "bool" and op in ("pow", "fmod"):
        return "i8"
    return compute_type(p)


def _wide(x, c):
    """x of float type c in the widest type that reference functions take."""
    if c == "f32" or c == "c64":
        return x.astype(np.complex128 if c == "c64" else np.float64)
    if WIDE is not None:
        return x.astype(np.clongdouble if c == "c128" else WIDE)
    return x


def _round(ref, r):
    """A wide reference rounded to the result type r (through f32 for 16-bit results, as the
    device converts a float result)."""
    if r in ("f16", "bf16"):
        return dtypes.round_to(np.asarray(ref, dtype=np.float64).astype(np.float32), r)
    return np.asarray(ref).astype(dtypes.dtype(r))


def binop_values(op, p, r, x, y):
    c = x.dtype
    cname = dtypes._name_of(c) if c != np.bool_ else "bool"
    with np.errstate(all="ignore"):
        if op in COMPARISONS:
            f = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                 "gt": np.greater, "ge": np.greater_equal}[op]
            v = f(x, y)
            return _exact("bool", v)
        if dtypes.is_int(cname):
            return _exact(r, _int_binop(op, cname, x, y).astype(dtypes.dtype(r)))
        if dtypes.is_complex(cname):
            return _complex_binop(op, cname, r, x, y)
        return _float_binop(op, cname, r, x, y)


def _exact(r, v):
    ch = Check(r, np.asarray(v).astype(dtypes.dtype(r)))
    ch.values = ch.ref
    return ch


def _int_binop(op, c, x, y):
    if op in ("add", "sub", "mul"):
        if c == "bool":
            return (x | y) if op == "add" else (x & y)
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
        return f(x, y)
    if op == "minimum":
        return np.where(x < y, x, y)
    if op == "maximum":
        return np.where(x > y, x, y)
    if op == "pow":
        return _ipow(c, x, y)
    if op == "fmod":
        return _imod(c, x, y)
    raise AssertionError(op)


def _ipow(c, x, y):
    bits = 8 * dtypes.size(c)
    out = []
    for b, e in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist()):
        b, e = int(b), int(e)
        if e < 0:
            v = 1 if b == 1 else ((-1 if e & 1 else 1) if b == -1 else 0)
        else:
            v = pow(b, e, 1 << bits)
        out.append(v % (1 << bits))
    u = np.array(out, dtype=np.uint64).reshape(x.shape) if out else np.zeros(x.shape, np.uint64)
    return u.astype(dtypes.dtype(c))


def _imod(c, x, y):
    out = []
    for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist()):
        a, b = int(a), int(b)
        out.append(0 if b == 0 else int(math.fmod(a, b)) if abs(a) < 2**52 and abs(b) < 2**52
                   else (abs(a) % abs(b)) * (1 if a >= 0 else -1))
    if not out:
        return np.zeros(x.shape, dtypes.dtype(c))
    return np.array([_wrap(v, c) for v in out]).astype(dtypes.dtype(c)).reshape(x.shape)


def _float_binop(op, c, r, x, y):
    if op in ("add", "sub", "mul", "div", "fmod"):
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "fmod": np.fmod}[op]
        return _exact(r, _round(f(x, y), r))  # IEEE operations, emulated exactly
    if op in ("minimum", "maximum"):
        better = y < x if op == "minimum" else y > x
        v = np.where(np.isnan(x), x, np.where(np.isnan(y), y, np.where(better, y, x)))
        return _exact(r, _round(v, r))
    # pow: a documented bound; the reference in a wider type, but at an infinite base
    # the value C99 Annex F gives exactly
    wx, wy = _wide(x, c), _wide(y, c)
    ref = np.power(wx, wy)
    at_inf = np.isinf(wx) & ~np.isnan(wy)
    if np.any(at_inf):
        ref = np.where(at_inf, pow_of_infinity(wx, wy).astype(ref.dtype), ref)
    return _approx(r, c, "pow", ref)


def pow_of_infinity(x, y):
    """pow(x, y) for x = +-inf and y not NaN, as C99 Annex F (F.10.4.4) defines it and the
    CUDA math library computes it: 1 for y = +-0; for x = +inf, +inf where y > 0 and +0
    where y < 0; for x = -inf, -inf (-0) where y is a positive (negative) odd integer, else
    +inf (+0). The host's libm is not asked: glibc's x86-64 powl (2.36) gives +inf for
    powl(-inf, -2^63)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        # an odd integer: below 2^53 in magnitude (every larger double is even)
        odd = (np.abs(y) < 2.0**53) & (np.floor(y) == y) & (np.fmod(y, 2.0) != 0)
        big = np.where(y > 0, np.inf, 0.0)
        neg = np.where(odd, -big, big)
        out = np.where(x > 0, big, neg)
        return np.where(y == 0, 1.0, out)


def _approx(r, c, fn, ref):
    """A check of a math function's result: its documented bound in c, or 1 ulp of a 16-bit
    result (computed in float, rounded once)."""
    if r in ("f16", "bf16"):
        ulps = 1.0
    else:
        table = ULP_F32 if c == "f32" else ULP_F64
        ulps = table[fn] + (1.0 if table[fn] else 0.0)
        if WIDE is None and c == "f64" and table[fn]:
            ulps += 2.0  # the reference is the host's double libm, within 2 ulp itself
    ch = Check(r, ref, ulps=ulps)
    ch.values = _round(ref, r)
    return ch


def _complex_binop(op, c, r, x, y):
    """x op y of complex numbers: the reference in a wider type, within COMPLEX_ULPS ulp of
    the result's magnitude (pow: of |x^y| (1 + |y log x|), the error of log x carried
    through the exponent). An operand with an infinite or NaN part, or a zero divisor, gives
    C99 Annex G's kind of result (cuda::std::complex's), where NumPy may give NaN (an
    infinity times a nonzero number, a finite number over an infinity); as the signs are
    left open there, any infinity meets an infinity. A product of operands whose parts'
    products may overflow, and a power whose exponent's real part passes the log of the
    largest finite value, may be infinite or NaN in a part where the result's is finite."""
    if op in ("add", "sub"):
        v = np.add(x, y) if op == "add" else np.subtract(x, y)
        return _exact(r, v)
    real = dtypes.real_of(c)
    wx, wy = _wide(x, c), _wide(y, c)
    ainf, anan = C.classes(x)
    binf, bnan = C.classes(y)
    azero, bzero = x == 0, y == 0
    loose = C.CX_INF | C.CX_NAN
    slack = None
    if op == "mul":
        ref = wx * wy
        inf_cls = (ainf & ~bzero & ~bnan) | (binf & ~azero & ~anan)
        nan_cls = ((ainf & bzero) | (binf & azero)) & ~anan & ~bnan
        zero_cls = np.zeros(x.shape, bool)
        mags = (np.abs(wx.astype(np.clongdouble)) * np.abs(wy.astype(np.clongdouble)))
        over = ~ainf & ~anan & ~binf & ~bnan & (mags.astype(np.float64) > _max_of(real) / 2)
    elif op == "div":
        ref = wx / wy
        finite_a, finite_b = ~ainf & ~anan, ~binf & ~bnan
        zero_cls = finite_a & binf
        inf_cls = (ainf & finite_b) | (finite_a & ~azero & bzero)
        nan_cls = (azero & bzero) | (ainf & binf)
        over = np.zeros(x.shape, bool)
    else:  # pow
        ref = np.power(wx, wy)
        with np.errstate(all="ignore"):
            t = wy * np.log(np.where(wx == 0, 1, wx))
            mag = np.abs(ref.astype(np.clongdouble)).astype(np.float64)
            slack = (COMPLEX_ULPS * np.abs(t.astype(np.clongdouble)).astype(np.float64)
                     * dtypes_spacing(real, mag))
            slack = np.where(np.isfinite(slack), slack, 0.0)  # special operands: none
            # the exponent's real part beyond the range (cuda::std's exp), or an error
            # bound of the whole magnitude (the direction of an infinity is then unknown)
            over = (t.real.astype(np.float64) > LN_MAX[real]) | \
                (COMPLEX_ULPS * _eps(real) * np.abs(t).astype(np.float64) >= 1)
        rinf, rnan = C.classes(ref.astype(dtypes.dtype(r)))
        special = ainf | anan | binf | bnan
        over &= ~special
        # an operand with an infinite or NaN part: exp(y log x) of Annex G's functions,
        # which may be 0 where NumPy (multiplying integer powers out) gives NaN
        alt = np.where(special & (rinf | rnan), loose | C.CX_ZERO, 0) | np.where(over, loose, 0)
        ch = Check(r, ref, ulps=COMPLEX_ULPS, slack=slack, alt=alt, whole=True)
        ch.values = np.asarray(ref).astype(dtypes.dtype(r))
        return ch
    ref = np.array(ref, dtype=ref.dtype)
    inf, nan = complex(math.inf, math.inf), complex(math.nan, math.nan)
    ref = np.where(inf_cls, inf, np.where(nan_cls, nan, np.where(zero_cls, 0j, ref)))
    alt = (np.where(inf_cls, C.CX_INF, 0) | np.where(zero_cls, C.CX_ZERO, 0)
           | np.where(anan | bnan, loose, 0) | np.where(over, loose, 0))
    ch = Check(r, ref, ulps=COMPLEX_ULPS, alt=alt, whole=True)
    ch.values = np.asarray(ref).astype(dtypes.dtype(r))
    return ch


def _max_of(real):
    return float(np.finfo(dtypes.dtype(real)).max)


# The log of the largest finite value: exp(x) of float and double overflows beyond it.
LN_MAX = {"f32": math.log(float(np.finfo(np.float32).max)),
          "f64": math.log(float(np.finfo(np.float64).max))}


def dtypes_spacing(name, x):
    from compare import spacing

    with np.errstate(all="ignore"):
        return spacing(name, np.nan_to_num(np.asarray(x, dtype=np.float64), posinf=0.0))


_NP_UNARY = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log10": np.log10, "sin": np.sin,
             "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
             "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
             "floor": np.floor, "ceil": np.ceil}


def unop_values(op, c, r, x):
    with np.errstate(all="ignore"):
        if op == "neg":
            if c == "bool":
                return _exact(r, x)
            return _exact(r, _round(np.negative(x), r) if dtypes.is_float(c) else np.negative(x))
        if dtypes.is_complex(c):
            w = _wide(x, c)
            if op == "fabs":
                ref = np.abs(w)
                ch = Check(r, ref, ulps=4.0)
                ch.values = np.asarray(ref).astype(dtypes.dtype(r))
                return ch
            return _complex_fn(op, c, r, x, _NP_UNARY[op](w))
        if op == "fabs":
            return _exact(r, _round(np.abs(x), r))
        if op in ("floor", "ceil", "sqrt"):  # exact (sqrt correctly rounded)
            return _exact(r, _round(_NP_UNARY[op](x), r))
        ref = _NP_UNARY[op](_wide(x, c))
        return _approx(r, c, op, ref)


def _complex_fn(op, c, r, x, ref):
    """A complex function's check: within COMPLEX_ULPS ulp of the result's magnitude. For an
    argument with an infinite or NaN part, C99 Annex G's values, whose signs are left open
    in places: an infinity meets any infinity. exp, sinh and cosh (sin and cos) are
    cuda::std::complex's, which multiply by exp(x) (cosh and sinh of it): where the real
    (imaginary) part is beyond the log of the largest finite value, a part may be infinite
    or NaN where the result's is finite."""
    special = ~(np.isfinite(x.real) & np.isfinite(x.imag))
    rinf, _ = C.classes(ref.astype(dtypes.dtype(r)))
    alt = np.where(special & rinf, C.CX_INF, 0)
    lim = LN_MAX[dtypes.real_of(c)]
    if op in ("exp", "sinh", "cosh", "sin", "cos"):
        part = x.real if op in ("exp", "sinh", "cosh") else x.imag
        beyond = part > lim if op == "exp" else np.abs(part) > lim
        alt |= np.where(beyond & ~special, C.CX_INF | C.CX_NAN, 0)
    ch = Check(r, ref, ulps=COMPLEX_ULPS, alt=alt)
    ch.values = np.asarray(ref).astype(dtypes.dtype(r))
    return ch


# ---- map expressions: CUDA C++ evaluated on the elements' C types ----

# The C++ type an element type takes in arithmetic (after integer promotion), and its rank.
_CPP = {"bool": "i32", "i8": "i32", "u8": "i32", "i16": "i32", "u16": "i32", "i32": "i32",
        "u32": "u32", "i64": "i64", "u64": "u64", "f32": "f32", "f64": "f64"}


def cpp_common(a, b):
    """The usual arithmetic conversions of C++ on two element types."""
    a, b = _CPP[a], _CPP[b]
    if "f64" in (a, b):
        return "f64"
    if "f32" in (a, b):
        return "f32"
    if a == b:
        return a
    sa, sb = dtypes.size(a), dtypes.size(b)
    if a[0] == b[0]:
        return a if sa >= sb else b
    s, u = (a, b) if a[0] == "i" else (b, a)
    if dtypes.size(u) >= dtypes.size(s):
        return u
    return s  # a wider signed type holds every value of the unsigned one


MAP_EXPRS = ["x", "x + y", "x - y", "x * y", "x * y + z", "x > y ? x : y", "x + i",
             "sin(x) * y"]


def map_values(expr, names, arrays, r):
    env = dict(zip(names, arrays))
    x = env.get("x")
    n = x.data.size
    sh = x.data.shape
    if expr == "x":
        val, t, err = x.data, x.type, None
    elif expr in ("x + y", "x - y", "x * y"):
        val, t, err = _cpp_arith(expr[2], env["x"], env["y"])
    elif expr == "x * y + z":
        xy, t1, _ = _cpp_arith("*", env["x"], env["y"])
        val, t, _ = _cpp_arith("+", Var(xy, None, t1), env["z"])
        err = None
        if dtypes.is_float(t):  # the device may fuse x * y + z into one rounding: the
            # product's rounding (half its ulp) is skipped, and the sum's may then round
            # the other way (an ulp of the result)
            err = (dtypes_spacing(t, np.abs(xy.astype(np.float64))) / 2 +
                   dtypes_spacing(t, np.abs(np.asarray(val).astype(np.float64))))
    elif expr == "x > y ? x : y":
        t = cpp_common(env["x"].type, env["y"].type)
        a, _ = dtypes.convert(env["x"].data, env["x"].type, t)
        b, _ = dtypes.convert(env["y"].data, env["y"].type, t)
        val, err = np.where(a > b, a, b), None
    elif expr == "x + i":
        i = Var(np.arange(n, dtype=np.int64).reshape(sh), None, "i64")
        val, t, err = _cpp_arith("+", x, i)
    elif expr == "sin(x) * y":
        c = x.type
        s = np.sin(_wide(x.data, c))
        sv = _round(s, c)
        val, t, _ = _cpp_arith("*", Var(sv, None, c), env["y"])
        table = ULP_F32 if c == "f32" else ULP_F64
        err = (table["sin"] + 1) * dtypes_spacing(c, s) * np.abs(env["y"].data.astype(np.float64))
    else:
        raise AssertionError(expr)
    undefined = np.zeros(sh, bool)
    if isinstance(val, tuple):
        val, undefined = val
    if r in ("f16", "bf16"):  # __half((float)(expr))
        f, u = dtypes.convert(np.asarray(val), t, "f32")
        out, u2 = dtypes.convert(f, "f32", r)
    else:
        out, u = dtypes.convert(np.asarray(val), t, r)
        u2 = np.zeros(sh, bool)
    undefined = undefined | u | u2 | _signed_overflow(expr, env, t)
    if dtypes.is_float(r) and dtypes.is_float(t):
        ch = Check(r, out, ulps=1.0 if err is not None else 0.0, slack=err,
                   undefined=undefined)
    else:
        ch = Check(r, out, undefined=undefined)
    ch.values = out
    return ch


def _cpp_arith(op, a, b):
    t = cpp_common(a.type, b.type)
    x, _ = dtypes.convert(a.data, a.type, t)
    y, _ = dtypes.convert(b.data, b.type, t)
    with np.errstate(all="ignore"):
        v = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](x, y)
    return v.astype(dtypes.dtype(t)), t, None


def _signed_overflow(expr, env, t):
    """Elements whose signed C++ arithmetic overflows (undefined behaviour)."""
    if t not in ("i32", "i64") or expr in ("x", "x > y ? x : y"):
        return False
    lo, hi = dtypes.int_range(t)
    x = [int(v) for v in env["x"].data.reshape(-1).tolist()]
    if expr == "x + i":
        vals = [a + k for k, a in enumerate(x)]
    else:
        y = [int(v) for v in env["y"].data.reshape(-1).tolist()]
        if expr == "x + y":
            vals = [a + b for a, b in zip(x, y)]
        elif expr == "x - y":
            vals = [a - b for a, b in zip(x, y)]
        else:
            vals = [a * b for a, b in zip(x, y)]
            if expr == "x * y + z":
                bad = [not lo <= v <= hi for v in vals]
                z = [int(v) for v in env["z"].data.reshape(-1).tolist()]
                vals = [(v + c) if not b_ else 0 for v, c, b_ in zip(vals, z, bad)]
                return np.array([b_ or not lo <= v <= hi for v, b_ in zip(vals, bad)],
                                dtype=bool).reshape(env["x"].data.shape)
    return np.array([not lo <= v <= hi for v in vals], dtype=bool).reshape(
        env["x"].data.shape)


# ---- reductions ----


def _reduce_result(op, t):
    if op in ("sum", "prod"):
        if t in ("bool", "i8", "i16", "i32"):
            return "i64"
        if t in ("u8", "u16", "u32"):
            return "u64"
        return t
    if op in ("any", "all"):
        return "bool"
    if op in ("argmin", "argmax"):
        return "i64"
    return t


def _gamma(k, eps):
    k = max(int(k), 1)
    return k * eps / max(1 - k * eps, 0.5)


# A reduction's thread folds about 64 elements serially, then a block tree; a sum of n
# elements goes through at most this many roundings on any path.
def _depth(n):
    return min(n, 192) + 2 * max(1, math.ceil(math.log2(max(n, 2)))) + 4


# A reduction along axes: a thread (or a warp's lane) folds its share of a result's
# elements serially, the lanes combine by shuffles, the pieces serially in their order
# (src/reduce/axis.c); a result of every element is the whole-array tree's. Either way, at
# most this many roundings on any path.
def _depth_axis(n):
    return n + 2 * max(1, math.ceil(math.log2(max(n, 2)))) + 4


def fold_values(op, r, v, depth=None):
    """sum or prod of v (already of type r) combined in r (16-bit floats in float); depth:
    the most roundings a sum goes through on any path (by default the whole-array tree's)."""
    n = v.size
    depth = depth or _depth
    if dtypes.is_int(r):
        if r == "bool":
            return _exact(r, np.array(bool(v.any()) if op == "sum" else bool(v.all())))
        bits = 8 * dtypes.size(r)
        acc = 0 if op == "sum" else 1
        for e in v.tolist():
            acc = (acc + int(e)) if op == "sum" else (acc * int(e))
            acc %= 1 << bits
        return _exact(r, _wrap(acc, r))
    acc = compute_type(dtypes.real_of(r))
    eps = _eps(acc)
    if dtypes.is_complex(r):
        w = v.astype(np.complex128)
        if op == "sum":  # the parts are added apart
            g = _gamma(depth(n), eps)
            re, alt_re = folds.sum_outcome(w.real, acc, g)
            im, alt_im = folds.sum_outcome(w.imag, acc, g)
            ref, alt = complex(re, im), alt_re | alt_im << IM
            slack = g * float(_finite_mags(w).sum())  # a part's NaN leaves the other's
            ch = Check(r, np.array(ref, dtype=np.complex128), slack=slack + 1e-300, alt=alt,
                       parts=True)
        else:
            g = _gamma(2 * n + 2, eps)
            ref, alt, extra = folds.complex_prod_outcome(v, acc, g)
            with np.errstate(all="ignore"):
                slack = g * float(abs(np.clongdouble(ref))) + extra
            ch = Check(r, np.array(ref, dtype=np.complex128), slack=slack + 1e-300, alt=alt)
        ch.values = np.array(ref).astype(dtypes.dtype(r))
        return ch
    w = v.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "sum":
            g = _gamma(depth(n), eps)
            ref, alt = folds.sum_outcome(w, acc, g)
            slack = g * float(np.abs(w).sum())
        else:
            g = _gamma(n + 1, eps)
            ref, alt, extra = folds.prod_outcome(w, acc, g)
            slack = g * abs(ref) + extra
    ulps = 1.0 if r in ("f16", "bf16") else 0.5
    ch = Check(r, np.array(ref), ulps=ulps, slack=slack, alt=alt)
    ch.values = _round(np.array(ref), r)
    return ch


def _finite_mags(w):
    """|Re| + |Im| of complex values w, a part that is not finite counting 0 (its own sum
    is then not finite, and the other part's is compared with this allowance)."""
    with np.errstate(all="ignore"):
        re = np.where(np.isfinite(w.real), np.abs(w.real), 0.0)
        im = np.where(np.isfinite(w.imag), np.abs(w.imag), 0.0)
    return (re + im).astype(np.float64)


def _wrap(v, t):
    """The integer v (taken modulo 2**bits) as a value of integer type t."""
    bits = 8 * dtypes.size(t)
    v %= 1 << bits
    if t[0] == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return np.array(v, dtype=dtypes.dtype(t))


def _eps(c):
    return {"f32": 2.0**-24, "f64": 2.0**-53}[c]


def extreme_values(op, t, r, flat):
    f = flat
    if op in ("any", "all"):
        nz, _ = dtypes.convert(f, t, "bool")
        return _exact("bool", np.array(nz.any() if op == "any" else nz.all()))
    w = f.astype(np.float64) if dtypes.is_float(t) else f
    nan = np.isnan(w) if dtypes.is_float(t) else np.zeros(f.shape, bool)
    if nan.any():
        first = int(np.flatnonzero(nan)[0])
        if op in ("argmin", "argmax"):
            return _exact("i64", np.array(first))
        return _exact(r, np.array(f[first]))  # a NaN (any payload)
    if op in ("argmin", "argmax"):
        k = int(np.argmin(w) if op == "argmin" else np.argmax(w))
        return _exact("i64", np.array(k))
    v = f[int(np.argmin(w) if op == "min" else np.argmax(w))]
    return _exact(r, np.array(v))


def parse_axes(word):
    """An axes word: "[0,-1]" (naxes 2), "[]" (naxes 0, no array), or "null:N" (no array,
    naxes N): (naxes, the axes or None)."""
    if word.startswith("null:"):
        return int(word[5:]), None
    inner = word[1:-1]
    axes = [int(d) for d in inner.split(",")] if inner else []
    return len(axes), axes or None


def fold_rows(op, r, rows):
    """sum or prod of each row of `rows` (already of type r) as a reduction along an axis
    combines it: one Check of the results."""
    n_out, n = rows.shape
    if dtypes.is_int(r):
        if r == "bool":
            v = rows.any(axis=1) if op == "sum" else rows.all(axis=1)
        else:
            f = np.add if op == "sum" else np.multiply
            with np.errstate(all="ignore"):
                v = f.reduce(rows, axis=1, dtype=dtypes.dtype(r))  # wraps, as cujit's
        return _exact(r, v)
    if op == "sum" and dtypes.is_float(r) and n_out > 1:
        quick = _sum_rows(r, rows)
        if quick is not None:
            return quick
    checks = [fold_values(op, r, rows[i], _depth_axis) for i in range(n_out)]
    first = checks[0] if checks else fold_values(op, r, rows[:0].reshape(-1), _depth_axis)
    ref = np.array([c.ref for c in checks], dtype=first.ref.dtype).reshape(n_out)
    slack = None
    if first.slack is not None:
        slack = np.array([float(np.asarray(c.slack)) for c in checks]).reshape(n_out)
    alt = np.array([int(np.asarray(c.alts(()))) for c in checks], dtype=np.int64).reshape(n_out)
    ch = Check(r, ref, ulps=first.ulps, slack=slack, alt=alt, parts=first.parts,
               whole=first.whole)
    ch.values = np.array([np.asarray(c.values) for c in checks],
                         dtype=dtypes.dtype(r)).reshape(n_out)
    return ch


def _sum_rows(r, rows):
    """fold_rows of float sums whose partial sums stay finite in every order (every
    element finite, the magnitudes' sum below the largest value), all rows at once: what
    fold_values gives each row; None for other rows."""
    w = rows.astype(np.float64)
    acc = compute_type(r)
    g = _gamma(_depth_axis(rows.shape[1]), _eps(acc))
    with np.errstate(all="ignore"):
        mags = np.abs(w).sum(axis=1)
    if not np.isfinite(w).all() or not (mags * (1 + g) < folds.LIMITS[acc][0]).all():
        return None
    ref = np.array([math.fsum(row) for row in w.tolist()])
    ch = Check(r, ref, ulps=1.0 if r in ("f16", "bf16") else 0.5, slack=g * mags,
               alt=np.zeros(ref.shape, np.int64))
    ch.values = _round(ref, r)
    return ch


def extreme_rows(op, t, r, rows):
    """min, max, argmin, argmax, any or all of each row of `rows` (of type t; no row empty
    but for any and all): NaN wins, the first extremum's index (NumPy's rules)."""
    if op in ("any", "all"):
        nz, _ = dtypes.convert(rows, t, "bool")
        return _exact("bool", nz.any(axis=1) if op == "any" else nz.all(axis=1))
    w = rows.astype(np.float64) if dtypes.is_float(t) else rows
    n_out = rows.shape[0]
    if not n_out:
        return _exact(r, np.zeros(0, dtypes.dtype(r)))
    with np.errstate(invalid="ignore"):
        k = np.argmin(w, axis=1) if op in ("min", "argmin") else np.argmax(w, axis=1)
    if op in ("argmin", "argmax"):
        return _exact("i64", k)  # NumPy's: the first NaN, else the first extremum
    return _exact(r, rows[np.arange(n_out), k])


def dot_values(p, acc, x, y):
    n = x.size
    if dtypes.is_int(p):
        bits = 8 * dtypes.size(p)
        if p == "bool":
            return _exact("bool", np.array(bool((x & y).any())))
        total = sum(int(a) * int(b) for a, b in zip(x.tolist(), y.tolist())) % (1 << bits)
        return _exact(p, _wrap(total, p))
    real = dtypes.real_of(acc)
    eps = _eps(real)
    if dtypes.is_complex(p):
        wx, wy = _wide(x, acc), _wide(y, acc)
        with np.errstate(all="ignore"):
            prods = wx * wy
            ref = complex(np.sum(prods))
            mags = np.abs(wx.astype(np.clongdouble)) * np.abs(wy.astype(np.clongdouble))
            g = _gamma(_depth(n) + 2, eps)
            # each product's parts may underflow in acc's real type: half its smallest
            # step for each of the two products in a part, n times
            tiny = float(np.finfo(dtypes.dtype(real)).smallest_subnormal)
            slack = g * 2 * float(np.sum(mags)) + 2 * n * tiny
            # a product or a partial sum that may overflow, or an infinite or NaN element:
            # Annex G's recovery and the order decide between infinities and NaN
            special = any(c.any() for v in (wx, wy) for c in C.classes(v))
            loose = special or float(np.sum(mags)) * (1 + g) >= folds.LIMITS[real][0]
        alt = C.CX_INF | C.CX_NAN if loose else 0
        ch = Check(p, np.array(ref, dtype=np.complex128), slack=slack + 1e-300, alt=alt)
        ch.values = np.array(ref).astype(dtypes.dtype(p))
        return ch
    wx, wy = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        prods = (x.astype(WIDE) * y.astype(WIDE)) if WIDE is not None else wx * wy
        g = _gamma(_depth(n) + 1, eps)
        ref, alt = folds.sum_outcome(prods, real, g)
        slack = g * float(np.sum(np.abs(wx * wy)))
    ulps = 1.0 if p in ("f16", "bf16") else 0.5
    ch = Check(p, np.array(ref), ulps=ulps, slack=slack, alt=alt)
    ch.values = _round(np.array(ref), p)
    return ch


def _cumsum_type(t):
    if t in ("bool", "i8", "i16", "i32"):
        return "i64"
    if t in ("u8", "u16", "u32"):
        return "u64"
    return t


def scan_values(expr, t, v, exclusive, neutral="0"):
    """Prefix sums ('a + b') or maxima ('a > b ? a : b') of v (of type t) in t."""
    n = v.size
    if expr == "a + b":
        if dtypes.is_int(t):
            bits = 8 * dtypes.size(t)
            acc, out = 0, []
            for e in v.tolist():
                if exclusive:
                    out.append(acc)
                acc = (acc + int(e)) % (1 << bits) if t != "bool" else (acc or bool(e))
                if not exclusive:
                    out.append(acc)
            if t == "bool":
                return _exact(t, np.array(out, dtype=bool))
            arr = np.array(out, dtype=np.uint64) if out else np.zeros(0, np.uint64)
            return _exact(t, arr.astype(dtypes.dtype(t)))
        real = dtypes.real_of(t)
        # 16-bit scans round every combination to the 16-bit type
        eps = 2.0**-11 if t == "f16" else 2.0**-8 if t == "bf16" else _eps(real)
        k = np.arange(1, n + 1)
        kk = (k + 2) * eps
        gammas = kk / np.maximum(1 - kk, 0.5)  # _gamma(k + 2, eps) of each k
        w = v.astype(np.complex128 if dtypes.is_complex(t) else np.float64)
        with np.errstate(all="ignore"):
            mags = np.cumsum(_finite_mags(w) if dtypes.is_complex(t) else np.abs(w)) if n \
                else np.abs(w)
        if exclusive and n:
            mags = np.concatenate([np.zeros(1), mags[:-1]])
        slack = gammas * mags if n else mags
        if dtypes.is_complex(t):  # the parts are added apart
            re, alt_re = folds.prefix_outcomes(w.real, real, gammas, exclusive)
            im, alt_im = folds.prefix_outcomes(w.imag, real, gammas, exclusive)
            inc = np.empty(n, np.complex128)
            inc.real, inc.imag = re, im
            ch = Check(t, inc, slack=slack * 2 + 1e-300, alt=alt_re | alt_im << IM, parts=True)
            ch.values = inc.astype(dtypes.dtype(t))
        else:
            inc, alt = folds.prefix_outcomes(w, real, gammas, exclusive)
            ch = Check(t, inc, ulps=0.5, slack=slack, alt=alt)
            inc64 = inc.astype(np.float64)
            ch.values = _round(inc64, t) if t not in ("f16", "bf16") else dtypes.round_to(inc64, t)
        return ch
    # maxima: exact, in t
    word = neutral.rstrip("f")
    neutral_v = np.array(float(word) if dtypes.is_float(t) else int(word)).astype(
        dtypes.dtype(t))
    acc, out = neutral_v, []
    for e in v:
        if exclusive:
            out.append(acc)
        acc = acc if acc > e else e
        if not exclusive:
            out.append(acc)
    return _exact(t, np.array(out, dtype=dtypes.dtype(t)).reshape(-1))

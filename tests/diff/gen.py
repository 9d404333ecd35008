"""Random programs of array operations, each reproducible from its seed.

A program makes a few arrays (every way the API makes one: host data, zeros, full, arange,
empty then filled, empty_like), takes views of them (ranges, reshapes, slices with offsets
and negative steps, transposes, in up to 4 dimensions), and runs operations on them (of
one shape, with a single element, of shapes that broadcast by NumPy's rule, each of them
stretching where the other does not ((4, 1) with (3,)), at times of shapes that do not):
every binary, scalar (both orders, int and float scalars, at the edges of the array's type
and beyond) and unary operation, map expressions, where and if_positive with arrays and
typed scalars, take and put in every index mode with indices at the int64 edges,
concatenate and stack, every reduction (of the whole array, and along axes: one, several
in any order, none, negative ones, keepdims, with a result type), dot, cumsum and scans,
copies and conversions; outputs are new, or given, and a given output is often a view that
overlaps an input (the same array, a view of it, reversed, transposed, shifted, in part, an
input broadcast from a row or a slice of it). Some calls are wrong on purpose (an output
of another type or shape, shapes that do not meet, an index type, a mode or an op that
does not exist, axes that are not the array's), so that refusals are compared too.

The generator runs each statement on the model as it writes it: it knows every array's type,
shape and values, and leaves out a statement whose result C leaves undefined (a float
converted to an integer type it does not fit, a repeated index of put).

CPU mode's programs (cpu=True) are made for the checking fake driver, where every distinct
kernel costs an NVRTC compile and only what the driver moves itself can be compared: each
batch of BATCH programs draws its types and operations from a palette (Palette), so that
its kernels repeat, and its statements lean to those that need no kernel (host data,
views, copies of contiguous arrays, writes, joins of one type), whose values the fake
holds."""

import random
import struct

import numpy as np

import dtypes
import model as M
from program import Stmt, f64, hexbytes, shape as shape_word, text, var

EDGE_INT = [0, 1, -1, 2, -2, 3, 7, 100, -100]

# Programs of a CPU-mode run that share a palette: program i of a run with seed S (its
# seed S * RUN_STRIDE + i) draws from palette S + i // BATCH.
BATCH = 40
RUN_STRIDE = 1000003  # difftest.seed_of: a program's seed is S * RUN_STRIDE + i


class Palette:
    """The element types and operations of one batch of CPU-mode programs, few enough that
    the batch's kernels repeat (on the CPU each distinct kernel is an NVRTC compile, and a
    run starts with an empty cache). Palette k holds, counting cyclically in the lists of
    model.py and dtypes.NAMES:
      types 2k and 2k + 1 (so any 8 consecutive palettes hold all 15 types; complex ones,
        whose headers make the slowest compiles, are in 3 palettes of 15),
      binary operations 2k and 2k + 1 (any 7 hold all 14), unary ones 3k to 3k + 2 (any 6
        hold all 17), reduction k (any 8 hold all 8), index mode k, map expression k,
      i64 indices and CUJIT_SCALAR_INT scalars for even k, i32 and float ones for odd k.
    So any 8 consecutive palettes hold every type and operation."""

    def __init__(self, k):
        self.index = k
        self.types = _cyclic(dtypes.NAMES, 2 * k, 2)
        self.binops = _cyclic(M.BINOPS, 2 * k, 2)
        self.unops = _cyclic(M.UNOPS, 3 * k, 3)
        self.redops = _cyclic(M.REDOPS, k, 1)
        self.modes = _cyclic(M.MODES, k, 1)
        self.map_exprs = _cyclic(M.MAP_EXPRS, k, 1)
        self.index_type = ["i64", "i32"][k % 2]
        self.scalar_flags = [2, 3] if k % 2 == 0 else [0, 1]

    def __str__(self):
        return ("palette %d: types %s; binary %s; unary %s; reduction %s; mode %s; map %s; "
                "%s indices, %s scalars" % (
                    self.index, " ".join(self.types), " ".join(self.binops),
                    " ".join(self.unops), self.redops[0], self.modes[0], self.map_exprs[0],
                    self.index_type, "integer" if self.scalar_flags[0] else "float"))


def _cyclic(names, start, n):
    return [names[(start + j) % len(names)] for j in range(n)]


def palette_of(seed):
    """The palette of the CPU-mode program of this seed."""
    return Palette(seed // RUN_STRIDE + (seed % RUN_STRIDE) // BATCH)


class Gen:
    def __init__(self, seed, large=True, cpu=False):
        self.rng = random.Random(seed)
        self.seed = seed
        self.large = large
        self.palette = palette_of(seed) if cpu else None
        self.model = M.Model()
        self.stmts = []
        self.next_var = 0

    # ---- running statements on the model ----

    def snapshot(self):
        roots = {}
        for v in self.model.vars.values():
            for a in (v.data, v.mask, v.real):
                r = a
                while r.base is not None and isinstance(r.base, np.ndarray):
                    r = r.base
                roots[id(r)] = (r, r.copy())
        return dict(self.model.vars), roots

    def restore(self, snap):
        vars_, roots = snap
        for r, saved in roots.values():
            r[...] = saved
        self.model.vars = vars_

    def emit(self, st, keep_invalid=True):
        """Runs st on the model and keeps it unless it relies on undefined behaviour (or is
        refused and keep_invalid is 0). Returns the Expect, or None when dropped."""
        snap = self.snapshot()
        x = self.model.step(st)
        if x.ub or x.status == M.SKIP or (x.status == M.INVALID and not keep_invalid):
            self.restore(snap)
            if st.target is not None and not st.given:
                self.model.vars.pop(st.target, None)
            return None
        self.stmts.append(st)
        return x

    def fresh(self):
        k = self.next_var
        self.next_var += 1
        return k

    def make(self, op, args):
        """A statement making a new array; its var, or None."""
        k = self.fresh()
        x = self.emit(Stmt(op, args, target=k))
        return k if x is not None and x.status == M.OK else None

    def live(self, pred=None):
        return [k for k, v in self.model.vars.items() if pred is None or pred(v)]

    def pick(self, pred=None):
        ks = self.live(pred)
        return self.rng.choice(ks) if ks else None

    def v(self, k):
        return self.model.vars[k]

    # ---- values ----

    def types(self):
        return self.palette.types if self.palette else dtypes.NAMES

    def any_type(self):
        r = self.rng.random()
        if self.palette:
            return self.rng.choice(self.palette.types)
        if r < 0.35:
            return self.rng.choice(["f32", "i32", "f64", "i64"])
        return self.rng.choice(self.types())

    def ops(self, what, every):
        """The operations of a kind (what: the palette's field) this program draws from."""
        return getattr(self.palette, what) if self.palette else every

    def values(self, t, n, profile=None):
        """n values of type t of a profile: small numbers, the type's edges (its ends, 0,
        +-1, infinities, NaN, subnormals), wide ones, positive ones (drawn at once, by a
        NumPy generator seeded from the program's)."""
        rng = self.rng
        profile = profile or rng.choice(["small", "small", "edge", "wide", "pos"])
        g = np.random.default_rng(rng.getrandbits(63))
        k = dtypes.kind(t)
        if k == "b":
            return g.random(n) < 0.5
        if k in "iu":
            lo, hi = dtypes.int_range(t)
            dt = dtypes.dtype(t)
            if profile == "wide":
                return g.integers(lo, hi, size=n, dtype=dt, endpoint=True)
            if profile == "pos":
                return g.integers(0, min(hi, 20), size=n, dtype=dt, endpoint=True)
            out = g.integers(max(lo, -12), min(hi, 12), size=n, dtype=dt, endpoint=True)
            if profile == "edge":
                edges = [min(max(v, lo), hi) for v in [lo, hi, lo + 1, hi - 1, 0, 1] + EDGE_INT]
                pick = np.array(edges, dtype=object).astype(dt)[g.integers(0, len(edges), n)]
                out = np.where(g.random(n) < 0.5, pick, out).astype(dt)
            return out
        real = dtypes.real_of(t)
        parts = 2 if k == "c" else 1
        arr = self.float_values(g, real, profile, n * parts)
        if k == "c":
            arr = arr[0::2] + 1j * arr[1::2]
            return arr.astype(dtypes.dtype(t))
        if t == "bf16":
            return dtypes.round_to(arr, "bf16")
        with np.errstate(over="ignore"):
            return arr.astype(dtypes.dtype(t))

    @staticmethod
    def float_values(g, t, profile, n):
        """n doubles of a profile for the real type t, from NumPy generator g."""
        if profile == "wide":
            return np.where(g.random(n) < 0.5, 1.0, -1.0) * 2.0 ** g.uniform(-20, 20, n)
        if profile == "pos":
            return g.uniform(0.05, 4.0, n)
        out = np.round(g.uniform(-8, 8, n), 2)
        if profile == "edge":
            big = {"f16": 65504.0, "bf16": 3.3e38, "f32": 3.4e38, "f64": 1.7e308}[t]
            tiny = {"f16": 6e-8, "bf16": 1e-39, "f32": 1e-45, "f64": 5e-324}[t]
            edges = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, big, -big,
                              tiny, -tiny, 2.5, -2.5, 1e-3])
            out = np.where(g.random(n) < 0.4, edges[g.integers(0, len(edges), n)], out)
        return out

    # ---- making arrays ----

    def shape(self, size_hint=None):
        rng = self.rng
        r = rng.random()
        if r < 0.08:
            return ()
        if r < 0.5:
            return (self.length(),)
        nd = rng.choice([2, 2, 2, 3, 4])
        return tuple(rng.choice([0, 1, 2, 3, 4, 5]) if rng.random() < 0.1 else rng.randint(1, 5)
                     for _ in range(nd))

    def stretched(self, sh):
        """A shape that broadcasts with sh: some of its leading dimensions left out, some
        sizes 1, and, where sh has a size 1, sometimes a size of its own there."""
        rng = self.rng
        out = list(sh[rng.randint(0, len(sh)):]) if sh else []
        for d in range(len(out)):
            r = rng.random()
            if r < 0.4:
                out[d] = 1
            elif r < 0.6 and out[d] == 1:
                out[d] = rng.randint(2, 4)
        if len(out) < 4 and rng.random() < 0.2:
            out.insert(0, rng.randint(1, 3))
        return tuple(out)

    def bshapes(self, n, base=None):
        """n shapes that broadcast together by NumPy's rule, from a shape R (base, or a new
        one of 1 to 4 small dimensions): each with some of R's leading dimensions left out
        and some sizes 1, so that each stretches where another does not ((3, 4) with (4,),
        (4, 1) with (3,), (2, 1, 4) with (3, 1))."""
        rng = self.rng
        if base is None:
            base = tuple(rng.choice([0, 2, 3]) if rng.random() < 0.05 else rng.randint(1, 5)
                         for _ in range(rng.choice([1, 2, 2, 3, 3, 4])))
        out = []
        for _ in range(n):
            sh = list(base[rng.randint(0, len(base)):]) if base and rng.random() < 0.4 \
                else list(base)
            for d in range(len(sh)):
                if rng.random() < 0.4:
                    sh[d] = 1
            out.append(tuple(sh))
        return out

    def clash(self, sh):
        """A shape that does not broadcast with sh (None where every shape does: sh is all
        ones): one of sh's sizes other than 1 changed to another (or a dimension put after
        sh's last)."""
        rng = self.rng
        dims = [d for d in range(len(sh)) if sh[d] != 1]
        if not dims:
            return None
        d = rng.choice(dims)
        out = list(sh[rng.randint(0, d):])
        k = d - (len(sh) - len(out))
        out[k] = rng.choice([v for v in (2, 3, 4, 5, 7) if v != sh[d]])
        return tuple(out)

    def length(self):
        r = self.rng.random()
        if self.large and r < 0.03:
            return self.rng.randint(20000, 70000)
        if r < 0.12:
            return self.rng.randint(100, 3000)
        if r < 0.17:
            return self.rng.choice([0, 1])
        return self.rng.randint(2, 40)

    def new_array(self, t=None, sh=None, profile=None):
        rng = self.rng
        t = t or self.any_type()
        sh = self.shape() if sh is None else sh
        n = int(np.prod(sh)) if sh else 1
        how = rng.random()
        # host data, zeros, full, arange, else empty and fill (CPU mode: mostly the first
        # two, which need no kernel)
        cut = (0.75, 0.88, 0.92, 0.96) if self.palette else (0.6, 0.68, 0.78, 0.88)
        if how < cut[0]:
            vals = self.values(t, n, profile)
            return self.make("host", [t, shape_word(sh), hexbytes(dtypes.to_bytes(vals))])
        if how < cut[1]:
            return self.make("zeros", [t, shape_word(sh)])
        if how < cut[2]:
            val = self.values(t, 1, profile)
            return self.make("full", [t, shape_word(sh), hexbytes(dtypes.to_bytes(val))])
        if how < cut[3] and dtypes.kind(t) != "c":
            step = rng.choice([1, 2, -1, 0.5, 3, -0.25])
            if dtypes.is_int(t):
                step = int(step) or 1
            start = rng.randint(-10, 10)
            count = self.length()
            args = [t, f64(start), f64(start + step * count), f64(step)]
            return self.make("arange", args)
        k = self.make("empty", [t, shape_word(sh)])
        if k is None:
            return None
        val = self.values(t, 1, profile)
        self.emit(Stmt("fill", [var(k), hexbytes(dtypes.to_bytes(val))]))
        return k

    # ---- views ----

    def view_of(self, k):
        """A view of array k: a range, a reshape, a slice or a transpose."""
        rng = self.rng
        a = self.v(k).data
        r = rng.random()
        if r < 0.2 and a.size:
            start = rng.randint(0, a.size)
            stop = rng.randint(start, a.size)
            return self.make("view", [var(k), start, stop])
        if r < 0.35:
            return self.make("reshape", [var(k), shape_word(self.factor(a.size))])
        if r < 0.75 and a.ndim:
            dim = rng.randrange(a.ndim)
            size = a.shape[dim]
            step = rng.choice([1, 2, -1, -1, -2, 3])
            if size == 0:
                return self.make("slice", [var(k), dim, 0, 0, 1])
            if step > 0:
                start = rng.randint(0, size - 1)
                stop = rng.randint(start, size)
            else:
                start = rng.randint(0, size - 1)
                stop = rng.choice([-1, rng.randint(-1, start)])
            return self.make("slice", [var(k), dim, start, stop, step])
        return self.make("transpose", [var(k)])

    def factor(self, n):
        """A shape of n elements, 0 to 4 dimensions."""
        rng = self.rng
        if n == 1 and rng.random() < 0.3:
            return ()
        dims = []
        rest = n
        for _ in range(rng.randint(0, 3)):
            divs = [d for d in range(1, min(rest, 12) + 1) if rest % d == 0]
            d = rng.choice(divs) if rest else rng.choice([0, 1, 2])
            dims.append(d)
            rest = rest // d if d else 0
        dims.append(rest if n else 0)
        rng.shuffle(dims)
        return tuple(dims)

    # ---- operations ----

    def out_for(self, ins, t, sh):
        """An output for a result of type t and shape sh: None (new) mostly; else a live
        array of that type and shape, preferring one that overlaps an input."""
        rng = self.rng
        if rng.random() < 0.55:
            return None
        same = self.live(lambda v: v.type == t and v.data.shape == tuple(sh))
        over = [k for k in same if any(np.shares_memory(self.v(k).data, self.v(i).data)
                                       for i in ins if i is not None)]
        if over and rng.random() < 0.7:
            return rng.choice(over)
        if same and rng.random() < 0.6:
            return rng.choice(same)
        # make one overlapping an input: a reversed, transposed or shifted view of it
        cands = [i for i in ins if i is not None and self.v(i).type == t]
        if cands:
            i = rng.choice(cands)
            made = self.overlapping_view(i, sh)
            if made is not None:
                return made
        return None

    def overlapping_view(self, i, sh):
        rng = self.rng
        a = self.v(i).data
        if a.shape != tuple(sh) or not a.ndim:
            return None
        r = rng.random()
        if r < 0.35:
            return self.make("slice", [var(i), 0, a.shape[0] - 1, -1 if a.shape[0] else 1,
                                       -1 if a.shape[0] else 1])
        if r < 0.55 and a.ndim == 2 and a.shape[0] == a.shape[1]:
            return self.make("transpose", [var(i)])
        if r < 0.75 and a.ndim == 2:
            return self.make("slice", [var(i), 1, a.shape[1] - 1, -1, -1])
        return None

    def operand(self, pred=None):
        if self.palette:  # of the palette's types, where a live array is
            def mine(v, p=pred):
                return v.type in self.palette.types and (p is None or p(v))

            if self.live(mine):
                pred = mine
        k = self.pick(pred)
        if k is None or self.rng.random() < 0.15:
            k2 = self.new_array()
            if k2 is not None and (pred is None or pred(self.v(k2))):
                return k2
        return k

    def result_of(self, st):
        """Type and shape of st's result with a new output, without keeping st."""
        snap = self.snapshot()
        t = st.target
        x = self.model.step(st)
        self.restore(snap)
        self.model.vars.pop(t, None)
        return (x.type, x.shape) if x.status == M.OK and x.type else (None, None)

    def op_with_out(self, op, args, ins):
        k = self.fresh()
        st = Stmt(op, args, target=k)
        t, sh = self.result_of(st)
        if t is not None:
            o = self.out_for(ins, t, sh)
            if o is not None:
                st = Stmt(op, args, target=o, given=True)
        elif self.rng.random() < 0.3:  # refused anyway: into a wrong output, sometimes
            o = self.pick()
            if o is not None:
                st = Stmt(op, args, target=o, given=True)
        x = self.emit(st)
        return x

    def g_binary(self):
        a = self.operand()
        if a is None:
            return
        av = self.v(a)
        r = self.rng.random()
        if r < 0.42:  # the same shape
            b = self.operand(lambda v: v.data.shape == av.data.shape) or a
        elif r < 0.55:  # a single element
            b = self.operand(lambda v: v.data.size == 1) or self.new_array(sh=self.rng.choice(
                [(), (1,), (1, 1)]))
        elif r < 0.68:  # a shape that broadcasts with a's, by NumPy's rule
            b = self.new_array(sh=self.stretched(av.data.shape))
        elif r < 0.86:  # two shapes that both stretch
            sa, sb = self.bshapes(2)
            a, b = self.new_array(sh=sa), self.new_array(sh=sb)
        elif r < 0.9:  # a shape that does not broadcast with a's
            sh = self.clash(av.data.shape)
            b = self.new_array(sh=sh) if sh is not None else a
        else:
            b = self.operand()
        if a is None:
            return
        if b is None:
            return
        if self.rng.random() < 0.5:
            a, b = b, a
        op = self.rng.choice(self.ops("binops", M.BINOPS))
        self.op_with_out("binary", [op, var(a), var(b)], [a, b])

    def g_bcast_into(self):
        """An operation (binary, where, map) whose given output overlaps an input that is
        broadcast: that input is a view of the output (a slice of size 1 along a dimension,
        or its first row), which the result must not see written before it is read."""
        rng = self.rng
        sh = tuple(rng.randint(1, 4) for _ in range(rng.choice([1, 2, 2, 3])))
        if int(np.prod(sh)) < 2:
            sh = sh[:-1] + (3,)
        what = rng.choice(["binary", "binary", "where", "map"])
        ok = ["bool"] + dtypes.INTS + ["f32", "f64"]
        t = self.type_of(ok) if what == "map" else self.any_type()
        o = self.new_array(t=t, sh=sh)
        if o is None:
            return
        sh = self.v(o).data.shape  # an arange has a length of its own
        part = self.broadcast_view(o)
        other = self.new_array(t=t if what != "map" else self.type_of(ok),
                               sh=self.bshapes(1, sh)[0])
        if part is None or other is None:
            return
        ins = [var(part), var(other)]
        if rng.random() < 0.5:
            ins.reverse()
        if what == "binary":
            ops = [op for op in self.ops("binops", M.BINOPS) if _binop_gives(op, t) == t]
            if not ops:
                return
            st = Stmt("binary", [rng.choice(ops)] + ins, target=o, given=True)
        elif what == "where":
            cond = self.new_array(sh=self.bshapes(1, sh)[0]) if rng.random() < 0.7 else part
            if cond is None:
                return
            st = Stmt(rng.choice(["where", "ifpos"]), [var(cond)] + ins, target=o, given=True)
        else:
            st = Stmt("map", [text("x + y"), 2, "x", ins[0], "y", ins[1]], target=o, given=True)
        self.emit(st)

    def broadcast_view(self, k):
        """A view of array k that broadcasts to its shape: a slice of size 1 along one of
        its dimensions (a negative step at times), or its first row."""
        rng = self.rng
        a = self.v(k).data
        if not a.size:
            return None
        if rng.random() < 0.3 and a.ndim >= 2 and M.contiguous(a):
            return self.make("view", [var(k), 0, a.shape[-1]])
        d = rng.randrange(a.ndim)
        if a.shape[d] == 0:  # no element along it to stretch
            return None
        i = rng.randrange(a.shape[d])
        if rng.random() < 0.3:
            return self.make("slice", [var(k), d, i, i - 1, -1])
        return self.make("slice", [var(k), d, i, i + 1, 1])

    def scalar_value(self, t, is_int):
        rng = self.rng
        if is_int:
            p = dtypes.promote_weak(t, "int")
            if dtypes.is_int(p) and p != "bool" and rng.random() < 0.7:
                lo, hi = dtypes.int_range(p)
                cands = [0, 1, -1, 2, 3, -3, 7, lo, hi, lo - 1, hi + 1, 300, -300]
                return float(rng.choice(cands))
            return float(rng.choice([0, 1, -1, 2, 5, -7, 2**62, -2**62, 2**63, 1e16]))
        return rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.75, 0.1, 1e10, -1e-10,
                           float("inf"), float("nan"), 65504.0, 70000.0, 3.0e38, 1e300])

    def g_scalar(self):
        a = self.operand()
        if a is None:
            return
        flags = self.rng.choice(self.ops("scalar_flags", [0, 1, 2, 3, 2, 3]))
        if self.rng.random() < 0.02:
            flags = 4
        s = self.scalar_value(self.v(a).type, flags & 2)
        op = self.rng.choice(self.ops("binops", M.BINOPS))
        self.op_with_out("scalar", [op, var(a), f64(s), flags], [a])

    def g_unary(self):
        a = self.operand()
        if a is None:
            return
        op = self.rng.choice(self.ops("unops", M.UNOPS))
        self.op_with_out("unary", [op, var(a)], [a])

    def g_convert(self):
        a = self.operand()
        if a is None:
            return
        if self.rng.random() < (0.7 if self.palette else 0.4):
            self.op_with_out("copy", [var(a)], [a])
        else:
            self.op_with_out("astype", [var(a), self.any_type()], [a])

    def g_map(self):
        rng = self.rng
        expr = rng.choice(self.ops("map_exprs", M.MAP_EXPRS))
        names = [n for n in ("x", "y", "z") if n in expr.replace("max", "")]
        ok = ["bool"] + dtypes.INTS + ["f32", "f64"]
        if expr == "sin(x) * y":
            ok = ["f32", "f64"]
        first = self.operand(lambda v: v.type in ok)
        if first is None:
            return
        sh = self.v(first).data.shape
        ks = [first]
        r = rng.random()
        shapes = self.bshapes(len(names) - 1, sh) if r < 0.3 else []
        for j, _ in enumerate(names[1:]):
            if shapes:  # shapes that broadcast with the first's, each stretching
                k = self.new_array(t=self.type_of(ok), sh=shapes[j])
            elif r < 0.35 and self.clash(sh) is not None:  # one that does not
                k = self.new_array(t=self.type_of(ok), sh=self.clash(sh))
            else:
                k = self.operand(lambda v: v.type in ok and v.data.shape == sh)
            if k is None:
                return
            ks.append(k)
            try:  # a made array may have a shape of its own (arange's)
                sh = tuple(np.broadcast_shapes(sh, self.v(k).data.shape))
            except ValueError:
                pass  # refused
        args = [text(expr), len(names)]
        for n, k in zip(names, ks):
            args += [n, var(k)]
        if rng.random() < 0.3:  # into an output of a type of its own
            t = rng.choice(ok)
            o = self.pick(lambda v: v.type == t and v.data.shape == sh)
            if o is not None:
                self.emit(Stmt("map", args, target=o, given=True))
                return
        self.op_with_out("map", args, ks)

    def type_of(self, ok):
        """A type of `ok`: one of the palette's where it has one."""
        mine = [t for t in self.types() if t in ok] if self.palette else ok
        return self.rng.choice(mine or ok)

    def typed_scalar(self, t):
        val = self.values(t, 1)
        return "%s:%s" % (t, hexbytes(dtypes.to_bytes(val)))

    def g_where(self):
        rng = self.rng
        c = self.operand()
        if c is None:
            return
        sh = self.v(c).data.shape
        r = rng.random()
        shapes = self.bshapes(2, sh) if r < 0.3 else []
        vals = []
        # CPU mode: a and b of one type, so that the batch's kernels repeat (a kernel for
        # each of cond's, a's and b's types, and which of a and b are scalars)
        one = self.any_type() if self.palette else None
        for j in range(2):
            if rng.random() < 0.35:
                vals.append(self.typed_scalar(one or self.any_type()))
                continue
            if shapes:  # shapes that broadcast with cond's, each stretching
                k = self.new_array(t=one, sh=shapes[j])
            elif r < 0.35 and j == 1 and self.clash(sh) is not None:  # one that does not
                k = self.new_array(t=one, sh=self.clash(sh))
            else:
                k = self.operand(lambda v: (v.data.shape == sh or v.data.size == 1)
                                 and one in (None, v.type)) or self.new_array(t=one, sh=sh)
            if k is None:
                return
            vals.append(var(k))
        op = "where" if rng.random() < 0.6 else "ifpos"
        ins = [c] + [int(w[1:]) for w in vals if w.startswith("v")]
        self.op_with_out(op, [var(c)] + vals, ins)

    def indices(self, n, mode, count=None):
        """An index array for an array of n elements: in range, or at the edges."""
        rng = self.rng
        t = self.palette.index_type if self.palette else rng.choice(["i64", "i64", "i32"])
        count = count if count is not None else self.length()
        lo, hi = dtypes.int_range(t)
        g = np.random.default_rng(rng.getrandbits(63))
        r = g.random(count)
        edges = np.array([lo, hi, lo + 1, hi - 1, n, -n - 1, n + 5], dtype=np.int64)
        out = np.where(r < 0.9, edges[g.integers(0, len(edges), count)],
                       g.integers(lo, hi, size=count, dtype=np.int64, endpoint=True))
        if n:
            out = np.where(r < 0.75, g.integers(-n, n - 1, size=count, endpoint=True), out)
        if rng.random() < 0.05:
            t = rng.choice(["i16", "u32", "f32"])  # refused: not an index type
            arr = np.mod(out, 1000).astype(dtypes.dtype(t))
        else:
            arr = out.astype(dtypes.dtype(t))
        return self.make("host", [t, shape_word((count,)), hexbytes(dtypes.to_bytes(arr))])

    def g_take(self):
        rng = self.rng
        a = self.operand()
        if a is None:
            return
        n = self.v(a).data.size
        mode = rng.choice(self.ops("modes", ["raise", "wrap", "clip", "raise"]))
        if rng.random() < 0.03:
            mode = rng.choice(["3", "-1"])
        if rng.random() < 0.3 and self.v(a).data.ndim == 1 and n:
            # the defect's shape: a's own reversed indices, into a itself; of values that
            # differ (a gather without a temporary gives a reversed array of equal values
            # right)
            t = self.v(a).type
            if n > 1 and len(np.unique(self.v(a).data.astype(np.float64 if t == "bf16"
                                                              else self.v(a).data.dtype))) < 2:
                a = self.make("host", [t, shape_word((n,)), hexbytes(dtypes.to_bytes(
                    self.values(t, n, "wide")))])
                if a is None:
                    return
            idx = self.make("host", ["i64", shape_word((n,)), hexbytes(
                dtypes.to_bytes(np.arange(n - 1, -1, -1, dtype=np.int64)))])
            if idx is None:
                return
            self.emit(Stmt("take", [var(a), var(idx), mode], target=a, given=True))
            return
        idx = self.indices(n, mode)
        if idx is None:
            return
        self.op_with_out("take", [var(a), var(idx), mode], [a, idx])

    def g_put(self):
        rng = self.rng
        a = self.operand()
        if a is None:
            return
        n = self.v(a).data.size
        mode = rng.choice(self.ops("modes", ["raise", "wrap", "clip"]))
        count = rng.randint(0, min(n, 12)) if n else rng.choice([0, 1])
        # distinct targets, so that no index is written twice
        picks = rng.sample(range(n), count) if n else []
        t = self.palette.index_type if self.palette else rng.choice(["i64", "i32"])
        idx_vals = []
        for p in picks:
            r = rng.random()
            if mode == "wrap" and r < 0.3:
                p += n * rng.choice([1, -1, 3])
            elif mode == "raise" and r < 0.2:
                p -= n
            idx_vals.append(p)
        if mode == "raise" and rng.random() < 0.1:
            idx_vals.append(rng.choice([n, -n - 1, dtypes.int_range(t)[1]]))
        arr = np.array(idx_vals, dtype=dtypes.dtype(t))
        idx = self.make("host", [t, shape_word((len(idx_vals),)), hexbytes(dtypes.to_bytes(arr))])
        if idx is None:
            return
        if rng.random() < 0.3 and n >= len(idx_vals) and self.v(a).data.ndim == 1:
            # values from a itself: a view of it (overlapping what is written)
            vals = self.make("view", [var(a), 0, len(idx_vals)])
            if vals is not None and rng.random() < 0.5:
                vals = self.make("slice", [var(vals), 0, len(idx_vals) - 1, -1, -1]) \
                    if len(idx_vals) else vals
        elif rng.random() < 0.2:
            vals = self.new_array(sh=(1,))
        else:
            # CPU mode: mostly of a's type, so that the batch's kernels repeat
            same = rng.random() < (0.8 if self.palette else 0.5)
            vals = self.new_array(t=self.v(a).type if same else self.any_type(),
                                  sh=(len(idx_vals),))
        if vals is None:
            return
        self.emit(Stmt("put", [var(a), var(idx), var(vals), mode]))

    def g_join(self):
        rng = self.rng
        n = rng.randint(1, 4)
        if rng.random() < 0.02:
            n = 0
        stack = rng.random() < 0.35
        first = self.operand(lambda v: v.data.ndim == 1)
        if first is None:
            return
        ks = [first]
        t = self.v(first).type
        for _ in range(n - 1):
            pred = (lambda v: v.data.shape == self.v(first).data.shape) if stack else \
                (lambda v: v.data.ndim == 1)
            if self.palette and rng.random() < 0.7:  # of one type: the driver copies them
                def pred(v, p=pred):
                    return p(v) and v.type == t
            k = self.operand(pred)
            ks.append(k if k is not None else first)
        if rng.random() < 0.3 and self.v(first).data.size >= 2 and not stack:
            # pieces of one array joined back into it, in another order
            a = self.v(first).data.size
            cut = rng.randint(1, a - 1)
            p1 = self.make("view", [var(first), 0, cut])
            p2 = self.make("view", [var(first), cut, a])
            if p1 is not None and p2 is not None:
                self.emit(Stmt("concat", [2, var(p2), var(p1)], target=first, given=True))
                return
        ks = ks[:n]
        self.op_with_out("stack" if stack else "concat", [n] + [var(k) for k in ks], ks)

    def g_reduce(self):
        rng = self.rng
        a = self.operand()
        if a is None:
            return
        if rng.random() < 0.25:
            op = rng.choice(["sum", "prod", "sum", "min"])
            self.op_with_out("reduceas", [op, var(a), self.any_type()], [a])
        else:
            op = rng.choice(self.ops("redops", M.REDOPS))
            self.op_with_out("reduce", [op, var(a)], [a])

    def axes_for(self, nd, op):
        """The axes of a reduction along axes of an array of nd dimensions: one (the most
        often; negative at times), several in any order, none, all, or (at times) a call
        cujit must refuse: an axis twice or outside, NULL axes, a negative count."""
        rng = self.rng
        dims = list(range(nd))
        r = rng.random()
        if r < 0.04:
            bad = [[0, 0], [nd], [-nd - 1]] if nd else [[0], [-1]]
            return shape_word(rng.choice(bad)) if rng.random() < 0.7 else \
                rng.choice(["null:1", "null:-1"])
        if r < 0.08:
            return "[]"
        if not nd:
            return "[]"
        sign = lambda d: d - nd if rng.random() < 0.3 else d  # noqa: E731
        if r < 0.6 or op in ("argmin", "argmax") or nd == 1:
            return shape_word([sign(rng.choice(dims))])
        if r < 0.9:
            axes = rng.sample(dims, rng.randint(2, nd))
        else:
            axes = dims
        return shape_word([sign(d) for d in axes])

    def g_reduce_axis(self):
        """A reduction along axes (cujit_array_reduce_axis, _as): of an array of 1 to 4
        dimensions (views with offsets, negative steps, transposes too), keepdims or not,
        into a new output or a given one (a view of the array itself, at times)."""
        rng = self.rng
        a = self.operand(lambda v: v.data.ndim >= 1 or rng.random() < 0.1)
        if a is None:
            return
        if rng.random() < (0.25 if self.palette else 0.45):  # a view of it: offsets, steps
            a = self.view_of(a) if self.v(a).data.ndim else a
            if a is None:
                return
        nd = self.v(a).data.ndim
        as_type = rng.random() < 0.2
        op = rng.choice(["sum", "prod"]) if as_type else \
            rng.choice(self.ops("redops", M.REDOPS))
        args = [op, var(a), self.axes_for(nd, op), int(rng.random() < 0.4)]
        if as_type:
            args.append(self.any_type())
        kind = "reduceaxisas" if as_type else "reduceaxis"
        st = Stmt(kind, args, target=self.fresh())
        t, sh = self.result_of(st)
        if t is not None and rng.random() < 0.2:
            o = self.view_in(a, t, sh)
            if o is not None:
                self.emit(Stmt(kind, args, target=o, given=True))
                return
        self.op_with_out(kind, args, [a])

    def view_in(self, k, t, sh):
        """A view of array k of shape sh, when k is of type t: where a result of that shape
        goes into the array it is computed from (its first elements, or a slice of size 1
        along a dimension, which keepdims' shape matches)."""
        v = self.v(k)
        n = int(np.prod(sh, dtype=np.int64)) if sh else 1
        if v.type != t or not 0 < n <= v.data.size:
            return None
        if len(sh) == v.data.ndim and v.data.ndim and self.rng.random() < 0.5:
            dims = [d for d in range(v.data.ndim) if sh[d] == 1 and v.data.shape[d] > 1
                    and all(sh[e] == v.data.shape[e] for e in range(v.data.ndim) if e != d)]
            if dims:
                d = self.rng.choice(dims)
                start = self.rng.randrange(v.data.shape[d])
                return self.make("slice", [var(k), d, start, start + 1, 1])
        try:
            np.reshape(v.data, (-1,), copy=False)
        except ValueError:
            return None
        flat = self.make("view", [var(k), 0, n])
        return flat if flat is None or sh == (n,) else self.make("reshape", [var(flat),
                                                                             shape_word(sh)])

    def g_dot(self):
        a = self.operand()
        if a is None:
            return
        b = self.operand(lambda v: v.data.shape == self.v(a).data.shape)
        if b is None:
            return
        self.op_with_out("dot", [var(a), var(b)], [a, b])

    def g_tohost(self):
        """A reduction's value into a host variable: of the result type, or (sometimes) of
        another size, which is refused."""
        rng = self.rng
        a = self.operand()
        if a is None:
            return
        dot = rng.random() < 0.3
        if dot:
            b = self.operand(lambda v: v.data.shape == self.v(a).data.shape) or a
            st = Stmt("dot", [var(a), var(b)], target=self.fresh())
        else:
            op = rng.choice(M.REDOPS)
            st = Stmt("reduce", [op, var(a)], target=self.fresh())
        t, _ = self.result_of(st)
        if t is None or rng.random() < 0.1:
            t = self.any_type()
        if rng.random() < 0.1:
            t = rng.choice([u for u in self.types() if dtypes.size(u) != dtypes.size(t)] or [t])
        if dot:
            self.emit(Stmt("dothost", [var(a), var(b), t], target=self.fresh()))
        else:
            self.emit(Stmt("reducehost", [st.args[0], var(a), t], target=self.fresh()))

    def g_close(self):
        """NumPy's allclose of two arrays (of one shape, one element, shapes that broadcast,
        at times shapes that do not), or of an array and host data; b near a, as far as the
        tolerance or beyond it."""
        rng = self.rng
        a = self.operand(lambda v: v.type != "bf16")
        if a is None or self.v(a).type == "bf16":
            return
        av = self.v(a)
        rtol = rng.choice([1e-5, 1e-3, 0.0, 0.1])
        atol = rng.choice([1e-8, 0.0, 1e-3, 1.0])
        eq = rng.choice([0, 0, 1])
        words = [f64(rtol), f64(atol), eq]
        r = rng.random()
        if r < 0.4:  # host data near a's values, of a's type
            scale = rng.choice([0.0, 0.5, 2.0, 10.0]) * (rtol + atol)
            with np.errstate(all="ignore"):
                near = np.asarray(av.data, dtype=np.complex128 if dtypes.is_complex(av.type)
                                  else np.float64)
                near = near + scale * (np.abs(near) + 1) * rng.choice([-1, 1])
                vals = near.astype(av.data.dtype) if not dtypes.is_int(av.type) else \
                    np.asarray(av.data).copy()
            if rng.random() < 0.2 and vals.size:
                vals = vals.reshape(-1)[:1]
            self.emit(Stmt("allclosehost", [var(a), hexbytes(dtypes.to_bytes(vals))] + words,
                           target=self.fresh()))
            return
        if r < 0.6:
            b = self.operand(lambda v: v.type != "bf16" and v.data.shape == av.data.shape)
        elif r < 0.7:
            b = self.operand(lambda v: v.type != "bf16" and v.data.size == 1)
        elif r < 0.85:  # a's values where b's shape stretches: close where a repeats
            sh = self.bshapes(1, av.data.shape)[0]
            lead = av.data.ndim - len(sh)
            key = (0,) * lead + tuple(slice(0, 1) if d == 1 else slice(None) for d in sh)
            vals = np.ascontiguousarray(av.data[key]).reshape(sh) if av.data.size else \
                np.zeros(sh, av.data.dtype)
            b = self.make("host", [av.type, shape_word(sh), hexbytes(dtypes.to_bytes(vals))])
        elif r < 0.9 and self.clash(av.data.shape) is not None:  # shapes that do not broadcast
            b = self.new_array(t=av.type, sh=self.clash(av.data.shape))
        else:
            b = self.operand(lambda v: v.type != "bf16")
        if b is None or self.v(b).type == "bf16":
            b = a
        self.emit(Stmt("allclose", [var(a), var(b)] + words, target=self.fresh()))

    def g_scan(self):
        rng = self.rng
        a = self.operand()
        if a is None:
            return
        excl = rng.choice([0, 1])
        if rng.random() < 0.6:
            self.op_with_out("cumsum", [var(a), excl], [a])
            return
        t = self.v(a).type
        if rng.random() < 0.5 and (dtypes.is_int(t) and t != "bool" or t in ("f32", "f64")):
            lo = dtypes.int_range(t)[0] if dtypes.is_int(t) else -3.0e38
            expr, neutral = "a > b ? a : b", repr(lo) if t != "f32" else "-3.0e38f"
            if t == "f32":
                neutral = "-3.0e38f"
            if np.isnan(self.v(a).data.astype(np.float64) if not dtypes.is_int(t)
                        else np.zeros(1)).any():
                return
        else:
            expr, neutral = "a + b", "0"
        self.op_with_out("scan", [t, text(expr), text(neutral), excl, var(a)], [a])

    def g_view(self):
        k = self.pick()
        if k is not None:
            self.view_of(k)

    def g_write(self):
        k = self.pick()
        if k is None:
            return
        v = self.v(k)
        vals = self.values(v.type, v.data.size)
        if self.rng.random() < 0.5:
            self.emit(Stmt("write", [var(k), hexbytes(dtypes.to_bytes(vals))]))
        else:
            self.emit(Stmt("fill", [var(k), hexbytes(dtypes.to_bytes(vals[:1]
                                                                     if vals.size else
                                                                     self.values(v.type, 1)))]))

    def g_destroy(self):
        k = self.pick()
        if k is not None:
            self.emit(Stmt("destroy", [var(k)]))

    def g_like(self):
        k = self.pick()
        if k is None:
            return
        n = self.make("like", [var(k)])
        if n is not None:
            v = self.values(self.v(n).type, 1)
            self.emit(Stmt("fill", [var(n), hexbytes(dtypes.to_bytes(v))]))

    def g_int_edges(self):
        """Integer arithmetic at the ends of a type, where it wraps (NumPy's overflow):
        every pair of the type's edge values added, subtracted, multiplied, raised to a
        power; negated; with an edge scalar; summed and multiplied in the reductions
        (their documented result types, and reduce_as a narrower one), dot and cumsum."""
        rng = self.rng
        ints = [t for t in self.types() if dtypes.is_int(t) and t != "bool"]
        if not ints:
            return
        t = rng.choice(ints)
        lo, hi = dtypes.int_range(t)
        edges = sorted({v for v in (lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi) if lo <= v <= hi})
        m = len(edges)
        firsts = np.array([edges[i // m] for i in range(m * m)], dtype=object)
        seconds = np.array([edges[i % m] for i in range(m * m)], dtype=object)
        a = self.make("host", [t, shape_word((m * m,)), hexbytes(dtypes.to_bytes(
            firsts.astype(dtypes.dtype(t))))])
        if a is None:
            return
        r = rng.random()
        if r < 0.35:
            b = self.make("host", [t, shape_word((m * m,)), hexbytes(dtypes.to_bytes(
                seconds.astype(dtypes.dtype(t))))])
            if b is not None:
                op = rng.choice(["add", "sub", "mul", "mul", "pow"])
                self.op_with_out("binary", [op, var(a), var(b)], [a, b])
        elif r < 0.45:
            self.op_with_out("unary", ["neg", var(a)], [a])
        elif r < 0.6:
            s = rng.choice([v for v in edges if abs(v) < 2**63 and float(v) == v])
            op = rng.choice(["add", "sub", "mul", "pow"])
            flags = rng.choice([2, 3])
            if op == "pow" and flags == 2:
                s = abs(s) if abs(s) < 2**63 else 2
            self.op_with_out("scalar", [op, var(a), f64(s), flags], [a])
        elif r < 0.8:
            op = rng.choice(["sum", "prod"])
            if rng.random() < 0.5:
                self.op_with_out("reduce", [op, var(a)], [a])
            else:
                self.op_with_out("reduceas", [op, var(a), rng.choice(ints + ["i8", "u16"])], [a])
        elif r < 0.9:
            self.op_with_out("dot", [var(a), var(a)], [a])
        else:
            self.op_with_out("cumsum", [var(a), rng.choice([0, 1])], [a])

    def g_refused(self):
        """A call that must be refused."""
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            sh = rng.choice([(-1,), (1, 2, 3, 4, 5), (1 << 40, 1 << 30)])
            self.emit(Stmt("zeros", [self.any_type(), shape_word(sh)], target=self.fresh()))
        elif r < 0.45:
            self.emit(Stmt("zeros", [rng.choice(["0", "12", "99"]), "[2]"], target=self.fresh()))
        elif r < 0.6:
            a = self.pick()
            if a is not None:
                self.emit(Stmt("slice", [var(a), rng.randint(0, 4), 0, 9, rng.choice([0, 1])],
                               target=self.fresh()))
        elif r < 0.75:
            a = self.pick()
            if a is not None:
                self.emit(Stmt("reduce", [rng.choice(["9", "-1"]), var(a)], target=self.fresh()))
        else:
            a = self.pick()
            if a is not None:
                self.emit(Stmt("arange", ["f32", f64(0), f64(1), f64(rng.choice(
                    [0.0, float("nan")]))], target=self.fresh()))

    KINDS = [("binary", 14), ("scalar", 12), ("unary", 10), ("convert", 7), ("map", 5),
             ("where", 6), ("take", 6), ("put", 5), ("join", 5), ("reduce", 8), ("dot", 3),
             ("reduce_axis", 6), ("bcast_into", 3),
             ("scan", 5), ("view", 10), ("write", 3), ("destroy", 2), ("like", 1),
             ("refused", 3), ("tohost", 3), ("close", 4), ("int_edges", 3)]

    # CPU mode: fewer kernels, more of what the fake driver moves and CPU mode compares
    CPU_KINDS = [("binary", 5), ("scalar", 4), ("unary", 3), ("convert", 8), ("map", 1),
                 ("where", 1), ("take", 2), ("put", 2), ("join", 6), ("reduce", 3),
                 ("reduce_axis", 2), ("bcast_into", 1),
                 ("dot", 1), ("scan", 2), ("view", 14), ("write", 6), ("destroy", 2),
                 ("like", 1), ("refused", 4), ("int_edges", 1)]

    def program(self):
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            self.new_array()
        kinds = self.CPU_KINDS if self.palette else self.KINDS
        names = [k for k, _ in kinds]
        weights = [w for _, w in kinds]
        for _ in range(rng.randint(4, 14)):
            kind = rng.choices(names, weights)[0]
            getattr(self, "g_" + kind)()
        return self.stmts


def _binop_gives(op, t):
    """The type binary op gives on two arrays of type t (None: refused)."""
    try:
        return M._binop_allowed(op, t)
    except M.Invalid:
        return None


def generate(seed, large=True, cpu=False):
    return Gen(seed, large, cpu).program()


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]

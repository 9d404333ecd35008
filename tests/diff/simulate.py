"""A runner made of the model itself, for testing the harness without a GPU: it writes what
runner.c would write if cujit computed exactly what the model expects, or, with a fault,
what a wrong cujit would write. The harness must pass the first and catch every fault.
With cpu, it writes what runner.c writes on the checking fake driver: no kernel runs, so
every element a kernel would have written holds other bytes (random ones here), and a
strided array is not read ("~"); the harness must then compare only what the fake holds,
and still catch a fault there. With drift, the simulated cujit's float results differ from
the reference's within the allowance (a few ulp, where the check allows them), and it
computes on from its own values, as the device does: the harness must pass it, which it
does only by continuing each program from cujit's values (check.py, Model.sync): a
difference allowed in one statement, carried on by the reference's own values, may grow
past the next statement's allowance (a power with a huge exponent of a value near 1)."""

import random

import numpy as np

import compare
import dtypes
import model as M
from program import parse_results

FAULTS = ["value", "status", "type", "overlap", "stray", "crash", "message"]


def simulate(programs, fault=None, seed=0, cpu=False, drift=False):
    """programs: [(name, stmts)]. Returns the runner's output lines."""
    rng = random.Random(seed)
    out = []
    for name, stmts in programs:
        out += _one(name, stmts, fault, rng, cpu, drift and not cpu)
        if fault == "crash" and out[-1].startswith("crash"):
            out.pop()
            break
    return out


def _bytes(v, rng, cpu):
    """What the runner reads of v: its bytes; on the fake, other bytes where no kernel
    wrote them, and none ("~") for a strided array."""
    if cpu and not M.contiguous(v.data):
        return None
    data = np.ascontiguousarray(v.data)
    if cpu:
        size = data.dtype.itemsize
        noise = np.random.default_rng(rng.randrange(1 << 30)).integers(
            0, 256, data.size * size, dtype=np.uint8).reshape(data.shape + (size,))
        keep = np.ascontiguousarray(v.real)[..., None]
        data = np.where(keep, data.view(np.uint8).reshape(data.shape + (size,)), noise)
    return bytearray(data.tobytes())


def _drift(v, check, rng):
    """Moves some of v's float (or complex) elements 1, 2 or 4 ulp away from what the
    reference computed, where the check allows that; exact results stay."""
    t = v.type
    if check is None or check.exact() or not (dtypes.is_float(t) or dtypes.is_complex(t)):
        return
    got = np.array(v.data)
    if not got.size or got.shape != check.ref.shape:
        return
    gen = np.random.default_rng(rng.randrange(1 << 30))
    real = dtypes.real_of(t)

    def moved(part):
        w = part.astype(np.float64)
        with np.errstate(all="ignore"):
            mag = np.abs(got.astype(np.complex128)) if dtypes.is_complex(t) else np.abs(w)
            step = compare.spacing(real, mag) * gen.choice([-4, -2, -1, 1, 2, 4], w.shape)
            out = np.where(np.isfinite(w), w + step, w)
        return out if real == "f64" else dtypes.round_to(out, real).astype(np.float64)

    with np.errstate(all="ignore"):
        if dtypes.is_complex(t):
            cand = (moved(got.real) + 1j * moved(got.imag)).astype(got.dtype)
        elif real in ("f16", "bf16"):
            cand = dtypes.round_to(moved(got), real)
        else:
            cand = moved(got).astype(got.dtype)
    keep = compare.bad_mask(check, cand) | (gen.random(got.shape) < 0.4)
    v.data[...] = np.where(keep, got, cand)


def _one(name, stmts, fault, rng, cpu=False, drift=False):
    m = M.Model()
    lines = ["program %s" % name]
    faulted = False
    for i, st in enumerate(stmts):
        if fault == "crash" and i == len(stmts) // 2:
            lines.append("crash")
            return lines
        pre = None
        if fault == "overlap" and not faulted and st.op == "take" and st.given:
            pre = _take_inputs(m, st)
        x = m.step(st)
        if pre is not None and x.status == M.OK:
            faulted = _take_in_place(m, st, pre)
        if x.status == M.SKIP:
            lines.append("s %d skip" % i)
            continue
        if x.status == M.INVALID:
            status = 0 if (fault == "status" and not faulted) else 1
            faulted |= fault == "status"
            lines.append("s %d %d %d" % (i, status, 1))
            said = " ".join(x.words[0]) if x.words else x.why
            if fault == "message" and not faulted and x.words:
                said, faulted = "the shapes are wrong", True
            lines.append("m %s" % ("cujit_simulated: " + said).encode().hex())
            continue
        k = st.target if st.target is not None else None
        if st.op in ("fill", "write", "put"):
            k = int(st.args[0][1:])
        if k is None or st.op == "destroy":
            lines.append("s %d 0 0" % i)
            continue
        v = m.vars[k]
        if drift and x.status == M.OK:
            _drift(v, x.check, rng)
        ty = v.type
        if fault == "type" and not faulted:
            ty, faulted = ("f64" if ty != "f64" else "f32"), True
        lines.append("s %d 0 0 %s [%s]" % (i, ty, ",".join(str(d) for d in v.data.shape)))
        raw = _bytes(v, rng, cpu)
        if raw is None:
            lines.append("d v%d ~" % k)
            continue
        known = v.mask & v.real if cpu else v.mask
        if fault == "value" and not faulted and raw and known.all():
            raw[rng.randrange(len(raw))] ^= 0x40
            faulted = True
        if fault == "stray" and not faulted and st.op == "binary" and len(m.vars) > 1:
            # a write that lands in another array: seen only at the end
            other = [j for j in m.vars if j != k and m.vars[j].mask.all()
                     and m.vars[j].data.size and not np.shares_memory(m.vars[j].data, v.data)]
            if other:
                o = m.vars[other[0]]
                o.data.reshape(-1)[:1].view(np.uint8)[:1] ^= 0x5
                faulted = True
        lines.append("d v%d %s" % (k, bytes(raw).hex() or "-"))
    for k in sorted(m.vars):
        v = m.vars[k]
        raw = _bytes(v, rng, cpu)
        lines.append("f v%d %s [%s] %s" % (k, v.type, ",".join(str(d) for d in v.data.shape),
                                           "~" if raw is None else bytes(raw).hex() or "-"))
    lines.append("end %s" % name)
    return lines


def _take_inputs(m, st):
    """What take reads, before the statement: a's values (None when the output does not
    overlap a, or an array is missing)."""
    try:
        a, o = m.vars[int(st.args[0][1:])], m.vars[st.target]
    except KeyError:
        return None
    if not np.shares_memory(o.data, a.data) or a.data.size < 2:
        return None
    return a.data.copy()


def _take_in_place(m, st, pre):
    """take(a, indices, out=a) as a gather without a temporary does it: each element read
    from a as it is then, after the elements before it were written."""
    a, idx = m.vars[int(st.args[0][1:])], m.vars[int(st.args[1][1:])]
    o = m.vars[st.target]
    a.data[...] = pre
    n = a.data.size
    ix = idx.data.reshape(-1).astype(np.int64)
    mode = st.args[2]
    res = np.where(ix < 0, ix + n, ix) if mode == "raise" else (
        np.mod(ix, n) if mode == "wrap" else np.clip(ix, 0, n - 1))
    flat_o = np.reshape(o.data, (-1,), copy=False) if M.contiguous(o.data) else None
    for k in range(o.data.size):
        value = a.data.reshape(-1)[res[k]]
        if flat_o is not None:
            flat_o[k] = value
        else:
            o.data[np.unravel_index(k, o.data.shape)] = value
    return True


def results(programs, fault=None, seed=0, cpu=False, drift=False):
    return parse_results(simulate(programs, fault, seed, cpu, drift))

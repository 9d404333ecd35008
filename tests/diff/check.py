"""Checking what the runner did for one program against the model, statement by statement.

GPU mode compares statuses, messages, types, shapes and values (and, after the last
statement, every live array's bytes, so that a write outside an operation's output is seen
too). CPU mode (the checking fake driver: no kernel runs) compares statuses, messages, types
and shapes, and the values of the elements the fake holds (model.py's `real` mask: what
host copies, memsets and the driver's copies of contiguous arrays moved, never a kernel's
output) in every array the runner could read without a kernel (a contiguous one), after
each statement and at the end; a status that only the device's values decide (an index
outside the array with CUJIT_INDEX_RAISE) is not compared there."""

import numpy as np

import compare
import dtypes
import model as M

STATUS_OK, STATUS_INVALID = 0, 1


class Failure:
    def __init__(self, index, what, lines=None):
        self.index = index  # the statement (-1: the program as a whole)
        self.what = what
        self.lines = lines or []

    def __str__(self):
        head = "statement %d: %s" % (self.index, self.what) if self.index >= 0 else self.what
        return "\n".join([head] + self.lines)


class Counts:
    def __init__(self):
        self.programs = 0
        self.statements = 0
        self.refusals = 0
        self.values = 0  # elements compared
        self.not_compared = 0  # statuses left out (CPU mode, device values decide)

    def add(self, o):
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(o, k))


def check_program(stmts, result, cpu=False):
    """The first Failure of the runner's result for stmts, or None; and the Counts. cpu:
    the runner ran on the checking fake driver (see above)."""
    m = M.Model()
    n = Counts()
    made_by_values = set()  # CPU mode: arrays a refusal the device decides left made
    if result is None or not result.complete:
        return Failure(-1, "the runner ended inside the program (a crash?)"), n
    for i, st in enumerate(stmts):
        x = m.step(st)
        got = result.status.get(i)
        f = _check_status(i, st, x, got, not cpu, n, result.messages.get(i, ""))
        if f:
            return f, n
        if cpu and x.value_dependent and st.target is not None and not st.given:
            made_by_values.add(st.target)
        if x.status == M.OK and i in result.dumps:
            k, raw = result.dumps[i]
            if raw is None:  # CPU mode: a strided view, which only a kernel reads
                continue
            real = m.vars[k].real if cpu and k in m.vars else None
            f = _check_values(i, x, raw, n, real)
            if f:
                return f, n
            if not cpu:
                m.sync(k, raw)
    if result.violations:
        return Failure(-1, "the checking fake driver recorded %d violation(s): %s"
                       % (result.violations, result.violation)), n
    if result.sync:
        return Failure(-1, "cujit_synchronize() after the program returned %d" % result.sync), n
    n.programs = 1
    f = _check_final(m, result, n, cpu, made_by_values)
    if f:
        return f, n
    return None, n


def _check_status(i, st, x, got, device, n, message=""):
    """device: the statuses device values decide are compared too (GPU mode); message: a
    failure's message, which must name the function (and say what the model's `words`
    say, where it has some)."""
    if got is None:
        return Failure(i, "the runner wrote nothing for it")
    if got == "bad":
        return Failure(i, "the runner could not read it (a harness error): %s" % st.text())
    if x.status == M.SKIP or got == "skip":
        if (x.status == M.SKIP) != (got == "skip"):
            if not device and x.value_dependent:
                return None
            return Failure(i, "skipped by %s only" % ("the model" if x.status == M.SKIP
                                                     else "the runner"))
        return None
    status, msg, ty, sh = got
    n.statements += 1
    if x.status == M.INVALID and not device and x.value_dependent:
        n.not_compared += 1
        return None
    if x.status == M.INVALID:
        n.refusals += 1
        if status != STATUS_INVALID:
            return Failure(i, "cujit returned %d, the reference refuses it "
                              "(CUJIT_ERROR_INVALID_VALUE, 1): %s" % (status, x.why))
        if not msg:
            return Failure(i, "refused without a message naming the function")
        if x.words and not any(all(w in message for w in ws) for ws in x.words):
            return Failure(i, "the message does not say what went wrong (%s)" % x.why,
                           ["  it says: %s" % message[:300],
                            "  it should say: %s" % " | ".join(" ... ".join(ws)
                                                              for ws in x.words[:3])])
        return None
    if status != STATUS_OK:
        return Failure(i, "cujit returned %d, the reference computes it" % status)
    if x.type is not None and (ty != x.type or tuple(sh) != tuple(x.shape)):
        return Failure(i, "cujit's result is %s %s, the reference's %s %s"
                       % (ty, sh, x.type, tuple(x.shape)))
    return None


def _check_values(i, x, raw, n, real=None):
    """Compares the array the statement made or wrote with x's check; real: CPU mode's
    mask of the elements the fake driver holds (the others are not compared)."""
    if isinstance(raw, str):
        return Failure(i, "reading the result failed (status %s)" % raw[1:])
    if x.check is None:
        return None
    got = np.frombuffer(raw, dtype=dtypes.dtype(x.type)).reshape(x.shape)
    if real is not None:
        x.check.undefined = np.asarray(x.check.undefined) | ~np.asarray(real)
    bad = compare.mismatches(x.check, got)
    n.values += int(np.count_nonzero(~np.broadcast_to(x.check.undefined, got.shape)))
    if bad:
        lines = compare.describe(x.check, got, bad)
        return Failure(i, "%d value(s) differ (of %d; %s)" % (len(bad), got.size, x.type), lines)
    return None


def _check_final(m, result, n, cpu=False, made_by_values=()):
    for k, v in m.vars.items():
        got = result.final.get(k)
        if got is None:
            return Failure(-1, "v%d is live in the model but not in the runner" % k)
        ty, sh, raw = got
        if raw is None:  # CPU mode: not read (strided)
            continue
        if isinstance(raw, str):
            return Failure(-1, "reading v%d at the end failed (status %s)" % (k, raw[1:]))
        if ty != v.type or tuple(sh) != v.data.shape:
            return Failure(-1, "v%d is %s %s at the end, the model's %s %s"
                           % (k, ty, sh, v.type, v.data.shape))
        got_a = np.frombuffer(raw, dtype=v.data.dtype).reshape(v.data.shape)
        size = v.data.dtype.itemsize
        want = np.ascontiguousarray(v.data).view(np.uint8).reshape(v.data.shape + (size,))
        have = np.ascontiguousarray(got_a).view(np.uint8).reshape(v.data.shape + (size,))
        known = v.mask & v.real if cpu else v.mask
        differ = (want != have).any(axis=-1) & known
        if differ.any():
            idx = list(np.flatnonzero(differ.reshape(-1))[:8])
            lines = ["  element %d: got %r, the model holds %r" %
                     (j, got_a.reshape(-1)[j], v.data.reshape(-1)[j]) for j in idx]
            return Failure(-1, "at the end, v%d differs from what the statements wrote "
                               "(%d element(s): a write outside an output?)"
                           % (k, int(differ.sum())), lines)
        n.values += int(known.sum())
    extra = set(result.final) - set(m.vars) - set(made_by_values)
    if extra:
        return Failure(-1, "the runner holds arrays the model does not: %s"
                       % ", ".join("v%d" % k for k in sorted(extra)))
    return None

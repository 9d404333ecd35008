"""Shrinking a failing program to a short one that still fails: statements dropped (runs of
them, then one at a time; a statement that names a dropped array is skipped by both sides,
so every candidate is a program), then the arrays made from host data cut to fewer
elements and simpler values. `fails(stmts)` runs a candidate and answers its Failure or
None; candidates are tried in batches (`fails_many`) so that one runner process tries
many."""

import numpy as np

import dtypes
from program import Stmt, hexbytes, shape as shape_word, unhex, unshape


def shrink(stmts, fails_many, rounds=40):
    """The shortest failing program found, and its failure."""
    best = list(stmts)
    failure = fails_many([best])[0]
    if failure is None:
        return best, None
    for _ in range(rounds):
        cands = list(_drops(best)) + list(_simpler(best))
        if not cands:
            break
        found = None
        for start in range(0, len(cands), 64):
            batch = cands[start:start + 64]
            res = fails_many(batch)
            for c, f in zip(batch, res):
                if f is not None:
                    found = (c, f)
                    break
            if found:
                break
        if not found:
            break
        best, failure = found
    return best, failure


def _drops(stmts):
    n = len(stmts)
    size = max(n // 2, 1)
    while size >= 1:
        for start in range(0, n, size):
            cand = stmts[:start] + stmts[start + size:]
            if cand and len(cand) < n:
                yield cand
        if size == 1:
            break
        size //= 2


def _simpler(stmts):
    """Host arrays with fewer elements (1-D: the first half; any: 1 element) or with every
    element the first one's; a large input is the main cost of reading a failure."""
    for i, st in enumerate(stmts):
        if st.op != "host":
            continue
        t, sh = st.args[0], unshape(st.args[1])
        raw = unhex(st.args[2])
        if t not in dtypes.NAMES:
            continue
        vals = np.frombuffer(raw, dtype=dtypes.dtype(t))
        if len(sh) == 1 and sh[0] > 1:
            half = sh[0] // 2
            yield _with(stmts, i, Stmt("host", [t, shape_word((half,)),
                                                hexbytes(vals[:half].tobytes())], st.target))
        if vals.size > 1 and not (vals == vals[0]).all():
            same = np.full(vals.shape, vals[0])
            yield _with(stmts, i, Stmt("host", [t, st.args[1], hexbytes(same.tobytes())],
                                       st.target))


def _with(stmts, i, st):
    out = list(stmts)
    out[i] = st
    return out

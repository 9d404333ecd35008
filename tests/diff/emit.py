"""A program printed as C that calls cujit's public API (to paste into a test), and as the
NumPy statements it stands for."""

import struct

import numpy as np

import dtypes
import model as M
from program import unf64, unhex, unshape, untext

C_BINOP = {o: "CUJIT_BINOP_" + o.upper() for o in M.BINOPS}
C_UNOP = {o: "CUJIT_UNOP_" + o.upper() for o in M.UNOPS}
C_REDOP = {o: "CUJIT_REDOP_" + o.upper() for o in M.REDOPS}
C_MODE = {"raise": "CUJIT_INDEX_RAISE", "wrap": "CUJIT_INDEX_WRAP", "clip": "CUJIT_INDEX_CLIP"}


def _ctype(t):
    return dtypes.TYPES[t][2] if t in dtypes.TYPES else "(cujit_type)%s" % t


def _cbytes(raw, name):
    body = ", ".join("0x%02x" % b for b in raw) or "0"
    return "static const unsigned char %s[] = {%s};" % (name, body)


def _cshape(sh, name):
    return "const int64_t %s[] = {%s};" % (name, ", ".join(str(d) for d in sh) or "0")


def _double(word):
    v = unf64(word)
    bits = struct.unpack("<Q", struct.pack("<d", v))[0]
    if np.isfinite(v):
        return "%r" % v if repr(v) != "-0.0" else "-0.0"
    return "cj_bits(0x%016xull)" % bits


def _out(st):
    return "&v%d" % st.target


def to_c(stmts, failing=None):
    """C statements (a function body); each call's status is printed."""
    lines = ["/* a program of the differential test, shrunk; paste into a test and check",
             " * each status (and the failing statement's output) as the comments say */",
             "static double cj_bits(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }",
             "static void run_program(void) {",
             "  cujit_status st;"]
    declared = set()
    for st in stmts:
        for k in st.refs() + ([st.target] if st.target is not None else []):
            if k not in declared:
                declared.add(k)
                lines.append("  cujit_array *v%d = NULL;" % k)
    for i, st in enumerate(stmts):
        body = _c_stmt(st, i)
        lines.append("  /* %d: %s */" % (i, st.text()[:160]))
        lines += ["  " + b for b in body]
        lines.append('  printf("%d: %%s\\n", cujit_status_name(st));' % i)
        if failing == i:
            lines.append("  /* <- the statement that differs */")
    for k in sorted(declared):
        lines.append("  cujit_array_destroy(v%d);" % k)
    lines.append("}")
    return "\n".join(lines)


def _c_stmt(st, i):
    a = st.args
    op = st.op
    pre = []
    if op in ("empty", "zeros", "full", "host"):
        sh = unshape(a[1])
        pre.append("{ " + _cshape(sh, "shape"))
        call = {"empty": "cujit_array_empty(%s, %s, %d, shape)",
                "zeros": "cujit_array_zeros(%s, %s, %d, shape)"}.get(op)
        if call:
            return pre + ["  st = " + call % (_out(st), _ctype(a[0]), len(sh)) + "; }"]
        pre.append("  " + _cbytes(unhex(a[2]), "data"))
        fn = "cujit_array_full" if op == "full" else "cujit_array_from_host"
        return pre + ["  st = %s(%s, %s, %d, shape, data); }" % (fn, _out(st), _ctype(a[0]),
                                                                len(sh))]
    if op == "arange":
        return ["st = cujit_array_arange(%s, %s, %s, %s, %s);" % (
            _out(st), _ctype(a[0]), _double(a[1]), _double(a[2]), _double(a[3]))]
    if op == "like":
        return ["st = cujit_array_empty_like(%s, %s);" % (_out(st), a[0])]
    if op == "view":
        return ["st = cujit_array_view(%s, %s, %s, %s);" % (a[0], a[1], a[2], _out(st))]
    if op == "reshape":
        sh = unshape(a[1])
        return ["{ " + _cshape(sh, "shape"),
                "  st = cujit_array_reshape(%s, %d, shape, %s); }" % (a[0], len(sh), _out(st))]
    if op == "slice":
        return ["st = cujit_array_slice(%s, %s, %s, %s, %s, %s);" % (a[0], a[1], a[2], a[3],
                                                                      a[4], _out(st))]
    if op == "transpose":
        return ["st = cujit_array_transpose(%s, %s);" % (a[0], _out(st))]
    if op == "copy":
        return ["st = cujit_array_copy(%s, %s);" % (a[0], _out(st))]
    if op == "astype":
        return ["st = cujit_array_astype(%s, %s, %s);" % (a[0], _ctype(a[1]), _out(st))]
    if op in ("fill", "write"):
        raw = unhex(a[1])
        call = ("cujit_array_fill(%s, value)" % a[0] if op == "fill"
                else "cujit_array_write(%s, value, sizeof value)" % a[0])
        return ["{ " + _cbytes(raw, "value"), "  st = %s; }" % call]
    if op == "binary":
        return ["st = cujit_array_binary(%s, %s, %s, %s);" % (C_BINOP.get(a[0], a[0]), a[1],
                                                               a[2], _out(st))]
    if op == "scalar":
        flags = int(a[3])
        names = [n for b, n in ((1, "CUJIT_SCALAR_FIRST"), (2, "CUJIT_SCALAR_INT")) if flags & b]
        if flags & ~3:
            names.append("0x%x" % (flags & ~3))
        return ["st = cujit_array_binary_scalar(%s, %s, %s, %s, %s);" % (
            C_BINOP.get(a[0], a[0]), a[1], _double(a[2]), " | ".join(names) or "0", _out(st))]
    if op == "unary":
        return ["st = cujit_array_unary(%s, %s, %s);" % (C_UNOP.get(a[0], a[0]), a[1], _out(st))]
    if op == "map":
        n = int(a[1])
        names = ", ".join('"%s"' % a[2 + 2 * j] for j in range(n))
        arrays = ", ".join(a[3 + 2 * j] for j in range(n))
        return ["{ const char *names[] = {%s};" % names,
                "  const cujit_array *arrays[] = {%s};" % arrays,
                '  st = cujit_array_map(%s, "%s", %d, names, arrays); }' % (_out(st), untext(a[0]),
                                                                           n)]
    if op in ("where", "ifpos"):
        fn = "cujit_array_where" if op == "where" else "cujit_array_if_positive"
        return ["st = %s(%s, %s, %s, %s);" % (fn, a[0], _c_value(a[1]), _c_value(a[2]), _out(st))]
    if op == "take":
        return ["st = cujit_array_take(%s, %s, %s, %s);" % (a[0], a[1], C_MODE.get(a[2], a[2]),
                                                             _out(st))]
    if op == "put":
        return ["st = cujit_array_put(%s, %s, %s, %s);" % (a[0], a[1], a[2],
                                                            C_MODE.get(a[3], a[3]))]
    if op in ("concat", "stack"):
        n = int(a[0])
        fn = "cujit_array_concatenate" if op == "concat" else "cujit_array_stack"
        return ["{ const cujit_array *arrays[] = {%s};" % (", ".join(a[1:1 + n]) or "NULL"),
                "  st = %s(%d, arrays, %s); }" % (fn, n, _out(st))]
    if op == "reduce":
        return ["st = cujit_array_reduce(%s, %s, %s);" % (C_REDOP.get(a[0], "(cujit_redop)" + a[0]),
                                                           a[1], _out(st))]
    if op == "reduceas":
        return ["st = cujit_array_reduce_as(%s, %s, %s, %s);" % (
            C_REDOP.get(a[0], a[0]), a[1], _ctype(a[2]), _out(st))]
    if op in ("reduceaxis", "reduceaxisas"):
        naxes, axes = M.parse_axes(a[2])
        head = []
        if axes:
            head = ["{ const int axes[] = {%s};" % ", ".join(str(x) for x in axes)]
        args = "%s, %s, %d, %s, %s" % (C_REDOP.get(a[0], "(cujit_redop)" + a[0]), a[1], naxes,
                                       "axes" if axes else "NULL", a[3])
        call = ("cujit_array_reduce_axis(%s, %s)" % (args, _out(st)) if op == "reduceaxis" else
                "cujit_array_reduce_axis_as(%s, %s, %s)" % (args, _ctype(a[4]), _out(st)))
        return head + [("  " if head else "") + "st = %s;%s" % (call, " }" if head else "")]
    if op == "dot":
        return ["st = cujit_array_dot(%s, %s, %s);" % (a[0], a[1], _out(st))]
    if op in ("reducehost", "dothost"):
        t = a[2]
        call = ("cujit_array_dot_host(%s, %s" % (a[0], a[1]) if op == "dothost" else
                "cujit_array_reduce_host(%s, %s" % (C_REDOP.get(a[0], "(cujit_redop)" + a[0]),
                                                    a[1]))
        value = "NULL" if t in ("c64", "c128") else "&value"
        return ["{ unsigned char result[16]; double value;",
                "  st = %s, result, cujit_type_size(%s), %s); }" % (call, _ctype(t), value)]
    if op == "allclose":
        return ["{ int close; st = cujit_array_allclose(%s, %s, %s, %s, %s, &close); }" % (
            a[0], a[1], _double(a[2]), _double(a[3]), a[4])]
    if op == "allclosehost":
        return ["{ " + _cbytes(unhex(a[1]), "b") + " int close;",
                "  st = cujit_array_allclose_host(%s, b, %d, %s, %s, %s, &close); }" % (
                    a[0], len(unhex(a[1])), _double(a[2]), _double(a[3]), a[4])]
    if op == "cumsum":
        return ["st = cujit_array_cumsum(%s, %s, %s);" % (a[0], a[1], _out(st))]
    if op == "scan":
        return ["{ cujit_scan *s = NULL;",
                '  st = cujit_scan_create(&s, %s, "%s", "%s", %s, NULL);' % (
                    _ctype(a[0]), untext(a[1]), untext(a[2]), a[3]),
                "  if (st == CUJIT_OK) st = cujit_scan_call(s, %s, %s);" % (a[4], _out(st)),
                "  cujit_scan_destroy(s); }"]
    if op == "destroy":
        return ["cujit_array_destroy(%s); %s = NULL; st = CUJIT_OK;" % (a[0], a[0])]
    return ["/* unknown statement */ st = CUJIT_ERROR_INVALID_VALUE;"]


def _c_value(word):
    if word.startswith("v"):
        return "cujit_arr(%s)" % word
    t, _, h = word.partition(":")
    raw = bytes.fromhex(h[2:])
    v = np.frombuffer(raw, dtype=dtypes.dtype(t))[0]
    if t == "bool":
        return "cujit_bool(%d)" % int(v)
    if t in ("c64", "c128"):
        return "cujit_%s(%r, %r)" % (t, float(v.real), float(v.imag))
    if t in ("f32", "f64"):
        return "cujit_%s(%r)" % (t, float(v))
    if t in ("f16", "bf16"):
        return "cujit_arg_scalar_(%s, 2, (const unsigned char[]){0x%02x, 0x%02x})" % (
            _ctype(t), raw[0], raw[1])
    return "cujit_%s(%d)" % (t, int(v))


def to_numpy(stmts):
    """The NumPy statements the program stands for (the reference's semantics; see
    model.py for the exact rules it follows, README.md for where they differ)."""
    lines = ["import numpy as np"]
    for st in stmts:
        lines.append(_np_stmt(st))
    return "\n".join(lines)


def _np_dtype(t):
    return "ml_dtypes.bfloat16" if t == "bf16" else "np.%s" % dtypes.dtype(t).name \
        if t in dtypes.NAMES else repr(t)


def _np_stmt(st):
    a, op = st.args, st.op
    lhs = "v%d = " % st.target if st.target is not None and not st.given else ""
    out = ", out=v%d" % st.target if st.given else ""
    if op == "host":
        return "%snp.frombuffer(bytes.fromhex('%s'), %s).reshape(%s).copy()" % (
            lhs, unhex(a[2]).hex(), _np_dtype(a[0]), unshape(a[1]))
    if op in ("zeros", "empty"):
        return "%snp.%s(%s, %s)" % (lhs, op, unshape(a[1]), _np_dtype(a[0]))
    if op == "full":
        return "%snp.full(%s, np.frombuffer(bytes.fromhex('%s'), %s)[0])" % (
            lhs, unshape(a[1]), unhex(a[2]).hex(), _np_dtype(a[0]))
    if op == "arange":
        return "%s(%r + np.arange(n) * %r).astype(%s)  # n = ceil((%r - %r) / %r)" % (
            lhs, unf64(a[1]), unf64(a[3]), _np_dtype(a[0]), unf64(a[2]), unf64(a[1]), unf64(a[3]))
    if op == "view":
        return "%snp.reshape(%s, -1, copy=False)[%s:%s]" % (lhs, a[0], a[1], a[2])
    if op == "reshape":
        return "%snp.reshape(%s, %s, copy=False)" % (lhs, a[0], unshape(a[1]))
    if op == "slice":
        stop = int(a[3])
        idx = "[%s%s:%s:%s]" % (":, " * int(a[1]), a[2], stop if stop >= 0 else "", a[4])
        return "%s%s%s" % (lhs, a[0], idx)
    if op == "transpose":
        return "%s%s.T" % (lhs, a[0])
    if op == "binary":
        fn = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide",
              "pow": "power", "eq": "equal", "ne": "not_equal", "lt": "less",
              "le": "less_equal", "gt": "greater", "ge": "greater_equal"}.get(a[0], a[0])
        return "%snp.%s(%s, %s%s)" % (lhs, fn, a[1], a[2], out)
    if op == "scalar":
        s = unf64(a[2])
        s = int(s) if int(a[3]) & 2 and s == s and abs(s) != float("inf") else s
        x, y = (repr(s), a[1]) if int(a[3]) & 1 else (a[1], repr(s))
        return "%snp.%s(%s, %s%s)" % (lhs, a[0], x, y, out)
    if op == "unary":
        fn = {"neg": "negative", "fabs": "absolute", "asin": "arcsin", "acos": "arccos",
              "atan": "arctan"}.get(a[0], a[0])
        return "%snp.%s(%s%s)" % (lhs, fn, a[1], out)
    if op == "take":
        return "%snp.take(%s.ravel(), %s, mode=%r%s)" % (lhs, a[0], a[1], a[2], out)
    if op == "put":
        return "np.put(%s, %s, %s.copy(), mode=%r)" % (a[0], a[1], a[2], a[3])
    if op in ("concat", "stack"):
        n = int(a[0])
        fn = "concatenate" if op == "concat" else "stack"
        return "%snp.%s([%s])%s" % (lhs, fn, ", ".join(a[1:1 + n]),
                                    "  # then copied into v%d" % st.target if st.given else "")
    if op in ("reduce", "reduceas", "reduceaxis", "reduceaxisas", "reducehost") and \
            not a[0].isidentifier():  # an op number cujit refuses: no NumPy function
        return "# %s: op %s is no reduction, which cujit refuses" % (op, a[0])
    if op in ("reduce", "reduceas"):
        fn = {"sum": "sum", "prod": "prod", "min": "min", "max": "max", "any": "any",
              "all": "all", "argmin": "argmin", "argmax": "argmax"}.get(a[0], a[0])
        dt = ", dtype=%s" % _np_dtype(a[2]) if op == "reduceas" else ""
        return "%snp.%s(%s%s)" % (lhs, fn, a[1], dt)
    if op in ("reduceaxis", "reduceaxisas"):
        naxes, axes = M.parse_axes(a[2])
        axis = "None  # NULL axes, naxes %d" % naxes if axes is None and naxes else \
            "()" if not axes else str(axes[0]) if len(axes) == 1 else str(tuple(axes))
        dt = ", dtype=%s" % _np_dtype(a[4]) if op == "reduceaxisas" else ""
        keep = ", keepdims=True" if str(a[3]) != "0" else ""
        head = "%snp.%s(%s, axis=%s%s%s%s)" % (lhs, a[0], a[1], axis.split("  #")[0], dt, keep,
                                              out)
        return head + ("  #" + axis.split("  #")[1] if "  #" in axis else "")
    if op == "dot":
        return "%snp.sum(%s * %s)" % (lhs, a[0], a[1])
    if op == "reducehost":
        return "%snp.%s(%s)  # into a host %s" % (lhs, a[0], a[1], a[2])
    if op == "dothost":
        return "%snp.sum(%s * %s)  # into a host %s" % (lhs, a[0], a[1], a[2])
    if op == "allclose":
        return "%snp.allclose(%s, %s, rtol=%r, atol=%r, equal_nan=%s)" % (
            lhs, a[0], a[1], unf64(a[2]), unf64(a[3]), str(a[4]) != "0")
    if op == "allclosehost":
        return ("%snp.allclose(%s, np.frombuffer(bytes.fromhex('%s'), %s.dtype), rtol=%r, "
                "atol=%r, equal_nan=%s)" % (lhs, a[0], unhex(a[1]).hex(), a[0], unf64(a[2]),
                                            unf64(a[3]), str(a[4]) != "0"))
    if op == "cumsum":
        return "%snp.cumsum(%s)%s" % (lhs, a[0], "  # exclusive" if str(a[1]) != "0" else "")
    if op == "destroy":
        return "del %s" % a[0]
    return "# %s" % st.text()[:200]

#!/usr/bin/env python3
"""The array layer's integer kernels, compiled as host C++ and run under the host's
UndefinedBehaviorSanitizer at the edges of each type.

NVRTC has no sanitizer: a signed overflow in a generated kernel (INT_MAX + 1, -INT_MIN, an
unsigned short times an unsigned short, both promoted to int) is undefined behaviour that
no device run shows, since the device's adder wraps anyway, until a compiler uses it. C++
gives integer arithmetic one meaning on the host and the device, so this check takes the
kernels' own sources and lets the host's sanitizer judge them:

  1. the difftest runner (tests/diff/runner.c) makes arrays and runs every integer
     operation that computes: add, sub, mul, pow, fmod, neg (arrays, and with integer
     scalars on either side), sum and prod (as their result type and as i8), dot and
     cumsum, of i8, u16 (which C++ promotes to int), i32, i64 and u64, and the sums of
     bool, on the checking fake driver, so that each kernel is compiled (NVRTC, to PTX)
     and none runs;
  2. each kernel's source is read from the cache entry it was written to (the manifest
     every entry records, src/format/manifest.c);
  3. all of them, each in a namespace of its own, with cuda_host.h, become one host
     program, built with -fsanitize=undefined and no recovery;
  4. it runs every kernel as one thread on every pair of edge values (the lowest, -2 to
     2, the highest and their neighbours), every integer scalar the API accepts, 16-byte
     aligned so that both of the map engine's loops run, and prints what each wrote;
  5. what came is compared with NumPy's wrapping results, computed here with Python's
     integers: a value that differs fails, and so does any report of the sanitizer.

    hostrun.py --runner build/bin/difftest_runner --fake build/lib/libcujit-checkdriver.so
               --cxx c++ [--keep DIR]
Exits 0 when every kernel ran clean and gave NumPy's values, 1 otherwise, 77 (skipped,
saying why) when the C++ compiler cannot build and run a sanitized program."""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# element type name (as kernel names spell it) -> (C type, bits, signed)
TYPES = {"b8": ("bool", 8, False), "i8": ("signed char", 8, True),
         "u8": ("unsigned char", 8, False), "i16": ("short", 16, True),
         "u16": ("unsigned short", 16, False), "i32": ("int", 32, True),
         "u32": ("unsigned int", 32, False), "i64": ("long long", 64, True),
         "u64": ("unsigned long long", 64, False)}
BY_C = {c: (bits, signed) for c, bits, signed in TYPES.values()}
TESTED = ["i8", "u16", "i32", "i64", "u64"]


def edges(ctype):
    """The values of a C integer type this check tries: its ends and the small ones."""
    if ctype == "bool":
        return [0, 1]
    bits, signed = BY_C[ctype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    vals = [lo, lo + 1, -2, -1, 0, 1, 2, 3, hi - 1, hi]
    if not signed:
        vals += [1 << (bits - 1), (1 << (bits - 1)) - 1, 1 << (bits // 2)]
    return sorted({v for v in vals if lo <= v <= hi})


def wrap(v, name):
    """v modulo 2^bits as a value of the type `name` (NumPy's integer overflow)."""
    _, bits, signed = TYPES[name]
    if name == "b8":
        return int(v != 0)
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def sum_type(t):
    if t in ("b8", "i8", "i16", "i32"):
        return "i64"
    return "u64" if t in ("u8", "u16", "u32") else t


def f64(x):
    return "d:%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def program(types):
    """The runner's program: every integer operation that computes, once per type."""
    lines, k = ["program ints"], 0

    def st(text):
        nonlocal k
        lines.append("v%d = %s" % (k, text))
        k += 1
        return k - 1

    for t in types:
        a = st("zeros %s [16]" % ("bool" if t == "b8" else t))
        if t == "b8":
            st("reduce sum v%d" % a)
            st("cumsum v%d 0" % a)
            continue
        for op in ("add", "sub", "mul", "pow", "fmod"):
            st("binary %s v%d v%d" % (op, a, a))
        st("unary neg v%d" % a)
        st("scalar mul v%d %s 2" % (a, f64(3)))  # a * s, s an integer
        st("scalar sub v%d %s 3" % (a, f64(3)))  # s - a
        st("scalar pow v%d %s 2" % (a, f64(3)))  # a ** s
        st("reduce sum v%d" % a)
        st("reduce prod v%d" % a)
        st("reduceas sum v%d i8" % a)
        st("dot v%d v%d" % (a, a))
        st("cumsum v%d 0" % a)
    lines.append("end")
    return "\n".join(lines) + "\n"


def compile_kernels(runner, fake, work):
    """Runs the program on the fake driver, in two processes (half of the types each)
    sharing a cache of their own; the cache's path. The kernels are compiled to PTX
    (compute_90, which the fake driver loads): their sources are what this check reads, and
    a CUBIN (ptxas) would double the time for nothing it looks at."""
    cache = os.path.join(work, "cache")
    env = dict(os.environ, CUJIT_LIBCUDA=fake, CUJIT_CACHE_DIR=cache, CUJIT_ARCH="compute_90")
    types = TESTED + ["b8"]
    procs = []
    for i in range(2):
        path = os.path.join(work, "program%d.txt" % i)
        with open(path, "w") as fh:
            fh.write(program(types[i::2]))
        with open(path) as fh:
            procs.append(subprocess.Popen([runner, "--no-values"], stdin=fh,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, env=env))
    for p in procs:
        out, err = p.communicate(timeout=600)
        bad = [ln for ln in out.splitlines() if ln.startswith("s ") and ln.split()[2] != "0"]
        if p.returncode != 0 or bad or "end ints" not in out:
            sys.exit("hostrun: the runner failed (%d): %s\n%s" % (p.returncode, bad, err))
    return cache


def sources(cache):
    """Every kernel source of the cache's entries (the manifest after each payload:
    four strings, then the source's length and text)."""
    out = []
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            if not f.endswith(".cujit"):
                continue
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read()
            if data[:8] != b"CUJITKC\x1a":
                continue
            payload, manifest = struct.unpack_from("<Q", data, 32)[0], \
                struct.unpack_from("<Q", data, 48)[0]
            m = data[64 + payload:64 + payload + manifest]
            at = 0
            for _ in range(4):  # NVRTC identity, target, program name, directory
                at += 4 + struct.unpack_from("<I", m, at)[0]
            size = struct.unpack_from("<Q", m, at)[0]
            out.append(m[at + 8:at + 8 + size].decode())
    return out


SIGNATURE = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\) \{')


def parameters(text):
    """(type, name, is_pointer) of each parameter of a kernel's parameter list."""
    out = []
    for p in text.split(","):
        p = p.replace("const ", "").replace("__restrict__", "").strip()
        ptr = "*" in p
        ctype, name = (p.split("*") if ptr else p.rsplit(" ", 1))
        out.append((ctype.strip(), name.strip(), ptr))
    return out


class Kernel:
    def __init__(self, index, source):
        m = SIGNATURE.search(source)
        self.ns = "k%d" % index
        self.name = m.group(1)
        self.params = parameters(m.group(2))
        self.source = source
        self.typedefs = dict((b, a) for a, b in re.findall(r"typedef (.+?) (\w+);", source))

    def ctype(self, t):
        """A parameter's C type: the kernel's typedefs (cj_t) resolved."""
        return self.typedefs.get(t, t)

    def inputs(self):
        return [p for p in self.params if p[2] and p[1] in ("cj_in0", "cj_in1", "x", "y", "in")]

    def scalars(self):
        """The scalar values to run with: [None] for a kernel with none, else every
        integer the API passes for this operation (within the type, below 2^63 and a
        double, not negative as an exponent)."""
        if not any(p[1] == "s" for p in self.params):
            return [None]
        t = self.name.split("_")[2]
        vals = [v for v in edges(TYPES[t][0]) if abs(v) < 2**63 and float(v) == v]
        if self.name.startswith("cj_pow_") and not self.name.endswith("_first"):
            vals = [v for v in vals if v >= 0]
        return vals

    def n(self):
        return len(edges(self.ctype(self.inputs()[0][0]))) ** 2

    def data(self, which):
        """Input `which` (0 or 1): every pair of edge values over the two inputs."""
        e = edges(self.ctype(self.inputs()[which][0]))
        m = len(e)
        return [e[i // m] if which == 0 else e[i % m] for i in range(m * m)]


def literal(v, ctype):
    if ctype == "bool":
        return "true" if v else "false"
    bits, signed = BY_C[ctype]
    if signed and v == -(1 << (bits - 1)):
        return "(%s)(%dLL - 1)" % (ctype, v + 1)
    return "(%s)%d%s" % (ctype, v, "ULL" if not signed else "LL")


def driver(kernels):
    """The host program: every kernel's source in a namespace, then a main that runs
    each with its inputs and prints what it wrote: "NAME SCALAR v0 v1 ..." a line."""
    out = ['#include "cuda_host.h"', "#include <cstdio>", "#include <cstdlib>", ""]
    for k in kernels:
        src = k.source.replace('extern "C" ', "")
        out.append("namespace %s {" % k.ns)
        if "cj_smem" in src:
            out.append("alignas(16) unsigned char cj_smem[1 << 16];")
        out.append(src)
        out.append("}  // namespace %s" % k.ns)
        out += ["#undef %s" % d for d in sorted(set(re.findall(r"^#define (\w+)", src, re.M)))]
    out.append("template <class T> static void show(const T *v, long long n) {")
    out.append("  for (long long i = 0; i < n; i++) {")
    out.append("    if ((T)-1 < (T)0) std::printf(\" %lld\", (long long)v[i]);")
    out.append("    else std::printf(\" %llu\", (unsigned long long)v[i]);")
    out.append("  }")
    out.append("  std::printf(\"\\n\");")
    out.append("}")
    out.append("int main() {")
    for k in kernels:
        out += run_one(k)
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def run_one(k):
    """Statements running kernel k once per scalar, printing its output."""
    n = k.n()
    decls, args, result = [], [], None
    for j, (ctype, name, ptr) in enumerate(k.params):
        full = "%s::%s" % (k.ns, ctype) if ctype in k.typedefs else ctype
        c = k.ctype(ctype)
        inputs = [p[1] for p in k.inputs()]
        if ptr and name in inputs:
            vals = ", ".join(literal(v, c) for v in k.data(inputs.index(name)))
            decls.append("    alignas(16) static %s p%d[] = {%s};" % (full, j, vals))
            args.append("p%d" % j)
        elif ptr and name in ("cj_out", "out", "cj_res"):
            count = 1 if name == "cj_res" else n
            decls.append("    alignas(16) static %s p%d[%d];" % (full, j, count))
            args.append("p%d" % j)
            result = ("p%d" % j, count)
        elif ptr:  # a later pass's values, sums between a scan's phases: none here
            args.append("(%s *)0" % full)
        elif name == "s":
            args.append("s")
        elif name in ("cj_n", "n", "chunk"):
            args.append("%dLL" % n)
        elif name == "phase":
            args.append("1")
        else:
            raise SystemExit("hostrun: %s has a parameter this check does not know: %s %s"
                             % (k.name, ctype, name))
    lines = ["  {"] + decls
    for s in k.scalars():
        shown = "-" if s is None else str(s)
        lines.append("    {")
        if s is not None:
            lines.append("      const double s = %r;" % float(s))
        lines.append("      std::memset(%s, 0x5a, sizeof %s);" % (result[0], result[0]))
        lines.append('      std::fprintf(stderr, "kernel %s, scalar %s:\\n");' % (k.name, shown))
        lines.append("      %s::%s(%s);" % (k.ns, k.name, ", ".join(args)))
        lines.append('      std::printf("%s %s");' % (k.name, shown))
        lines.append("      show(%s, %d);" % result)
        lines.append("    }")
    lines.append("  }")
    return lines


# ---- what NumPy gives ----

def ipow(b, e, bits):
    if e < 0:  # cujit's documented rule (NumPy refuses it)
        return 1 if b == 1 else ((-1 if e & 1 else 1) if b == -1 else 0)
    return pow(b, e, 1 << bits)


def imod(a, b):
    if b == 0 or b == -1:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


BINARY = {"add": lambda a, b, bits: a + b, "sub": lambda a, b, bits: a - b,
          "mul": lambda a, b, bits: a * b, "pow": ipow, "fmod": lambda a, b, bits: imod(a, b)}


def expected(k, s):
    """NumPy's values for kernel k run with scalar s, or None where this check has no
    model of them."""
    parts = k.name.split("_")
    op = parts[1]
    x = k.data(0)
    bits = TYPES[parts[2]][1] if parts[2] in TYPES else 0
    if op in BINARY and len(parts) == 4 and parts[2] == parts[3]:
        return [wrap(BINARY[op](a, b, bits), parts[2]) for a, b in zip(x, k.data(1))]
    if op in BINARY and parts[3] == "int":
        t = parts[2]
        s = int(s)
        if len(parts) == 5:  # s op a
            return [wrap(BINARY[op](s, a, bits), t) for a in x]
        return [wrap(BINARY[op](a, s, bits), t) for a in x]
    if op == "neg":
        return [wrap(-a, parts[2]) for a in x]
    if op in ("sum", "prod"):
        r = parts[3] if len(parts) == 4 else sum_type(parts[2])
        acc = 0 if op == "sum" else 1
        for a in x:
            acc = wrap(acc + wrap(a, r) if op == "sum" else acc * wrap(a, r), r)
        return [acc]
    if op == "dot" and parts[2] == parts[3]:
        return [wrap(sum(a * b for a, b in zip(x, k.data(1))), parts[2])]
    if op == "cumsum" and parts[4] == "inclusive":
        acc, out = 0, []
        for a in x:
            acc = wrap(acc + wrap(a, parts[3]), parts[3])
            out.append(acc)
        return out
    return None


def check(kernels, output):
    """The failures: values that differ from NumPy's; and how many values were compared."""
    got = {}
    for line in output.splitlines():
        w = line.split()
        if len(w) >= 2:
            got[(w[0], w[1])] = [int(v) for v in w[2:]]
    bad, compared = [], 0
    for k in kernels:
        for s in k.scalars():
            key = (k.name, "-" if s is None else str(s))
            if key not in got:
                bad.append("%s (scalar %s) printed nothing" % key)
                continue
            want = expected(k, s)
            if want is None:
                continue
            compared += len(want)
            diff = [i for i, (a, b) in enumerate(zip(got[key], want)) if a != b]
            if diff or len(got[key]) != len(want):
                i = diff[0] if diff else 0
                bad.append("%s (scalar %s): element %d is %s, NumPy's %s (%d differ)"
                           % (key[0], key[1], i, got[key][i] if i < len(got[key]) else "-",
                              want[i], len(diff)))
    return bad, compared


def reports(stderr):
    """The sanitizer's reports, each once: (the kernel and scalar it came in, what it said
    with the line of kernels.cpp)."""
    out, where = [], "?"
    for line in stderr.splitlines():
        if line.startswith("kernel "):
            where = line[len("kernel "):].rstrip(":")
        elif "runtime error:" in line:
            what = line.split("runtime error:", 1)[1].strip()
            at = line.split(": runtime error", 1)[0].rsplit("/", 1)[-1]
            item = (where.split(",")[0], "%s (%s)" % (what, at))
            if item not in out:
                out.append(item)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--fake", required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--keep", help="a directory to keep the host program in")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="hostrun-")
    os.makedirs(work, exist_ok=True)
    try:
        return run(a, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


SANITIZE = ["-fsanitize=undefined,float-cast-overflow", "-fno-strict-aliasing"]


def run(a, work):
    # the sanitizer must see a signed overflow, or this check could not fail
    probe = os.path.join(work, "probe.cpp")
    with open(probe, "w") as fh:
        fh.write("int main(int argc, char **) { int x = 2147483647; x += argc; "
                 "return x == 0; }\n")
    p = subprocess.run([a.cxx, "-std=c++17"] + SANITIZE + [probe, "-o", probe + ".x"],
                       capture_output=True, text=True)
    seen = p.returncode == 0 and "runtime error" in subprocess.run(
        [probe + ".x"], capture_output=True, text=True).stderr
    if not seen:
        print("SKIP: %s cannot build a program with -fsanitize=undefined that reports a "
              "signed overflow: %s" % (a.cxx, p.stderr.strip()[:300]))
        return 77
    cache = compile_kernels(os.path.abspath(a.runner), os.path.abspath(a.fake), work)
    found = sorted(sources(cache), key=lambda t: SIGNATURE.search(t).group(1))
    kernels = [Kernel(i, s) for i, s in enumerate(found)]
    if not kernels:
        print("hostrun: FAIL: the cache holds no kernel")
        return 1
    prog = os.path.join(work, "kernels.cpp")
    with open(prog, "w") as fh:
        fh.write(driver(kernels))
    exe = os.path.join(work, "kernels")
    p = subprocess.run([a.cxx, "-std=c++17", "-O0", "-w", "-I", HERE] + SANITIZE +
                       [prog, "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        print("hostrun: FAIL: the kernels do not build as host C++ (%s):\n%s"
              % (prog, p.stderr[:4000]))
        return 1
    p = subprocess.run([exe], capture_output=True, text=True,
                       env=dict(os.environ, UBSAN_OPTIONS="print_stacktrace=0:halt_on_error=0"))
    ub = reports(p.stderr)
    for where, what in ub:
        print("undefined behaviour in %s: %s" % (where, what))
    bad, compared = check(kernels, p.stdout)
    for b in bad[:20]:
        print("differs:", b)
    print("hostrun: %d kernels run under -fsanitize=undefined (%s): %d report(s) of "
          "undefined behaviour; %d values compared with NumPy's wrapping results, %d differ"
          % (len(kernels), a.cxx, len(ub), compared, len(bad)))
    if p.returncode != 0 and not ub:
        print("hostrun: the host program exited with %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    if ub or bad or not compared or p.returncode != 0:
        print("hostrun: FAIL%s" % (" (the program: %s)" % prog if a.keep else
                                   " (--keep DIR keeps the host program)"))
        return 1
    print("hostrun: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

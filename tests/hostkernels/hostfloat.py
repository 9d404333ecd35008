#!/usr/bin/env python3
"""The array layer's floating-point kernels whose formulas are cujit's own, compiled as host
C++ and run on values of every kind, their results checked against the differential test's
reference with its bounds (tests/diff: model.py and compare.py).

The kernels: every complex function of c64 and c128 arrays, their products, quotients and
powers (src/ops/cxmath.c), and sums and products into f16 and bf16 (each element rounded
to the 16-bit type, then combined in float). C++ gives floating-point arithmetic one meaning
on the host and the device; the host's math library (sin, log1p, atan2 ...) stands in for
CUDA's, so this checks the formulas (their cancellation, overflow and special values) and
not CUDA's functions, whose own error the differential test's bounds allow for. The GPU
run of tests/diff checks the two together.

  1. the difftest runner (tests/diff/runner.c) runs each operation on the checking fake
     driver, so that its kernel is compiled (NVRTC, to PTX) and none runs;
  2. each kernel's source is read from the cache entry it was written to (hostrun.py);
  3. all of them, each in a namespace of its own, after CUDA's headers and cuda_host.h,
     become one host program;
  4. it runs each kernel as one thread on its values: complex numbers whose parts are 0,
     +-1, infinities, NaN, the largest and smallest values and others, in every pair, and
     values drawn near 1, near the branch points, small and across the whole range (pairs
     of them for the binary operations); the sums and products on the values that show
     the 16-bit rounding of each element, and overflow to infinities of both signs;
  5. what came is checked as the differential test checks a GPU's result.

    hostfloat.py --runner build/bin/difftest_runner --fake build/lib/libcujit-checkdriver.so
                 --cxx c++ --cuda-include /usr/local/cuda/include [--keep DIR]
Exits 0 when every value is within the reference's bounds, 1 otherwise, 77 (skipped, saying
why) where NumPy or a C++ compiler that builds CUDA's headers is missing."""

import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "diff"))

try:
    import numpy as np
except ImportError:
    np = None

import hostrun  # noqa: E402

FUNCTIONS = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
             "sinh", "cosh", "tanh"]
BINARY = ["mul", "div", "pow"]
N = 2000  # values per complex kernel
# the kernels' names (NumPy's) of the operations the harness names otherwise
NUMPY_NAMES = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "divide": "div",
               "multiply": "mul", "power": "pow"}

# sums and products into a 16-bit type: (op, source type, values)
FOLDS = [
    ("sum", "f32", "bf16", [-1.17, -7.92, 0.59, -0.15, 6.22, 1.56]),  # -0.857 (-0.871 in float)
    ("sum", "f32", "f16", [0.1, 0.2, 0.3, 2049.0, 1.0, -2048.0]),
    ("sum", "i32", "f16", [70000, -70000, 1, 2]),  # inf + -inf in f16: NaN
    ("sum", "f64", "bf16", [1.0 / 3, 2.0 / 3, 1e-3, 7.77]),
    ("prod", "f64", "bf16", [-7.49] * 20),  # 7.5^20, not 7.49^20
    ("prod", "u64", "f16", [3, 0, 1 << 40, 5]),  # 0 * inf in f16: NaN
    ("prod", "f32", "f16", [1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]),
]


def complex_values(t, seed):
    """N complex values of type t (c64 or c128): every pair of the special parts, then
    values drawn from each region where a formula might cancel or overflow."""
    big, tiny, lo, hi = ((3.4e38, 1e-45, -149, 127) if t == "c64" else
                         (1.7e308, 5e-324, -1074, 1023))
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf"), float("nan"), big, -big,
             tiny, -tiny, 2.5, -2.5, 1e-3]
    out = [complex(a, b) for a in parts for b in parts]
    rng = random.Random(seed)
    sign = lambda: rng.choice([1, -1])  # noqa: E731

    def one(kind):
        if kind == "small":
            return complex(round(rng.uniform(-8, 8), 2), round(rng.uniform(-8, 8), 2))
        if kind == "wide":
            return complex(sign() * 2.0 ** rng.uniform(-20, 20), sign() * 2.0 ** rng.uniform(-20, 20))
        if kind == "range":
            return complex(sign() * 2.0 ** rng.uniform(lo, hi), sign() * 2.0 ** rng.uniform(lo, hi))
        if kind == "near1":
            return complex(sign() * (1 + sign() * 2.0 ** rng.uniform(-50, -1)),
                           sign() * (1 + sign() * 2.0 ** rng.uniform(-50, -1)) * rng.choice([1, 0]))
        # near a branch point (+-1 or +-i), the other part small
        a = sign() * (1 + rng.choice([1, -1, 0]) * 2.0 ** rng.uniform(-60, -1))
        b = sign() * rng.choice([1, 0]) * 2.0 ** rng.uniform(lo, -1)
        return complex(a, b) if rng.random() < 0.5 else complex(b, a)

    kinds = ["small", "wide", "range", "near1", "branch"]
    while len(out) < N:
        out.append(one(kinds[len(out) % len(kinds)]))
    with np.errstate(all="ignore"):
        return np.array(out[:N], dtype=np.complex64 if t == "c64" else np.complex128)


def exponents(t, seed):
    """Exponents for the powers: small and integer ones mostly, some of every kind."""
    rng = random.Random(seed)
    vals = complex_values(t, seed + 1)
    out = []
    for v in vals:
        r = rng.random()
        if r < 0.4:
            out.append(complex(round(rng.uniform(-8, 8), 2), round(rng.uniform(-2, 2), 2)))
        elif r < 0.6:
            out.append(complex(rng.choice([0, 1, 2, 3, -1, -2, 0.5]), 0))
        else:
            out.append(complex(v))
    with np.errstate(all="ignore"):
        return np.array(out, dtype=np.complex64 if t == "c64" else np.complex128)


def program():
    lines, k = ["program floats"], 0

    def st(text):
        nonlocal k
        lines.append("v%d = %s" % (k, text))
        k += 1
        return k - 1

    for t in ("c64", "c128"):
        a = st("zeros %s [%d]" % (t, N))
        for f in FUNCTIONS:
            st("unary %s v%d" % (f, a))
        for op in BINARY:
            st("binary %s v%d v%d" % (op, a, a))
    for op, src, dst, vals in FOLDS:
        a = st("zeros %s [%d]" % (src, len(vals)))
        st("reduceas %s v%d %s" % (op, a, dst))
    lines.append("end")
    return "\n".join(lines) + "\n"


def compile_kernels(runner, fake, work):
    """Runs the program on the fake driver; the cache's path. PTX only (compute_90), as
    hostrun.py compiles: the sources are what is read."""
    cache = os.path.join(work, "cache")
    env = dict(os.environ, CUJIT_LIBCUDA=fake, CUJIT_CACHE_DIR=cache, CUJIT_ARCH="compute_90")
    path = os.path.join(work, "program.txt")
    with open(path, "w") as fh:
        fh.write(program())
    with open(path) as fh:
        p = subprocess.run([runner, "--no-values"], stdin=fh, capture_output=True, text=True,
                           env=env, timeout=600)
    bad = [ln for ln in p.stdout.splitlines() if ln.startswith("s ") and ln.split()[2] != "0"]
    if p.returncode != 0 or bad or "end floats" not in p.stdout:
        sys.exit("hostfloat: the runner failed (%d): %s\n%s" % (p.returncode, bad, p.stderr))
    return cache


C_TYPES = {"cuda::std::complex<float>": ("c64", 8), "cuda::std::complex<double>": ("c128", 16),
           "float": ("f32", 4), "double": ("f64", 8), "int": ("i32", 4),
           "unsigned long long": ("u64", 8), "__half": ("f16", 2), "__nv_bfloat16": ("bf16", 2)}


class Job:
    """A kernel and what it runs on: its name's parts, its inputs (NumPy arrays)."""

    def __init__(self, kernel):
        self.k = kernel
        parts = kernel.name.split("_")
        self.op = NUMPY_NAMES.get(parts[1], parts[1])  # kernels are named as NumPy names
        self.inputs = []
        if self.op in FUNCTIONS or self.op in BINARY:
            t = parts[2]
            if self.op in FUNCTIONS:
                self.inputs = [complex_values(t, 1)]
            elif self.op == "pow":
                self.inputs = [complex_values(t, 2), exponents(t, 3)]
            else:
                self.inputs = [complex_values(t, 4), np.roll(complex_values(t, 5), 7)]
            self.type = t
        else:  # cj_sum_f32_bf16
            self.src, self.type = parts[2], parts[3]
            for op, src, dst, vals in FOLDS:
                if (op, src, dst) == (self.op, self.src, self.type):
                    self.inputs = [np.array(vals, dtype=_np_type(src))]
        self.n = len(self.inputs[0])


def _np_type(name):
    return {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u64": np.uint64}[name]


def words(a):
    """An array's bytes as a C initializer of 64-bit words (zero-padded)."""
    raw = a.tobytes()
    raw += b"\0" * (-len(raw) % 8)
    return ", ".join("0x%016xull" % w for w in struct.unpack("<%dQ" % (len(raw) // 8), raw))


def driver(jobs):
    out = ["#include <cuda/std/complex>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>",
           '#include "cuda_host.h"', "#include <cstdio>", "#include <cstdlib>", ""]
    for j in jobs:
        src = j.k.source.replace('extern "C" ', "")
        out.append("namespace %s {" % j.k.ns)
        out.append(src)
        out.append("}  // namespace %s" % j.k.ns)
        out += ["#undef %s" % d for d in sorted(set(hostrun.re.findall(r"^#define (\w+)", src,
                                                                          hostrun.re.M)))]
    out.append("static void show(const char *name, const void *p, size_t bytes) {")
    out.append("  const unsigned char *b = (const unsigned char *)p;")
    out.append('  std::printf("%s ", name);')
    out.append('  for (size_t i = 0; i < bytes; i++) std::printf("%02x", b[i]);')
    out.append('  std::printf("\\n");')
    out.append("}")
    out.append("int main() {")
    for j in jobs:
        out += run_one(j)
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def run_one(j):
    decls, args, result = [], [], None
    ins = [p for p in j.k.params if p[2] and p[1] in ("cj_in0", "cj_in1", "x", "y")]
    for idx, (ctype, name, ptr) in enumerate(j.k.params):
        full = "%s::%s" % (j.k.ns, ctype) if ctype in j.k.typedefs else ctype
        if ptr and name in [p[1] for p in ins]:
            data = j.inputs[[p[1] for p in ins].index(name)]
            decls.append("    alignas(16) static unsigned long long w%d[] = {%s};"
                         % (idx, words(data)))
            args.append("reinterpret_cast<const %s *>(w%d)" % (full, idx))
        elif ptr and name in ("cj_out", "cj_res"):
            count = 1 if name == "cj_res" else j.n
            decls.append("    alignas(16) static %s p%d[%d];" % (full, idx, count))
            args.append("p%d" % idx)
            result = ("p%d" % idx, count)
        elif ptr:
            args.append("(%s *)0" % full)
        elif name in ("cj_n", "n"):
            args.append("%dLL" % j.n)
        else:
            raise SystemExit("hostfloat: %s has a parameter this check does not know: %s %s"
                             % (j.k.name, ctype, name))
    return (["  {"] + decls +
            ["    std::memset(%s, 0x5a, sizeof %s);" % (result[0], result[0]),
             "    %s::%s(%s);" % (j.k.ns, j.k.name, ", ".join(args)),
             '    show("%s", %s, sizeof %s);' % (j.k.name, result[0], result[0]), "  }"])


def expected(j):
    """The differential test's check of job j's result."""
    import dtypes
    import model

    if j.op in FUNCTIONS:
        return model.unop_values(j.op, j.type, j.type, j.inputs[0])
    if j.op in BINARY:
        return model.binop_values(j.op, j.type, j.type, j.inputs[0], j.inputs[1])
    v, _ = dtypes.convert(j.inputs[0], j.src, j.type)
    return model.fold_values(j.op, j.type, v)


def check(jobs, output):
    import compare
    import dtypes

    got = {}
    for line in output.splitlines():
        w = line.split()
        if len(w) == 2:
            got[w[0]] = bytes.fromhex(w[1])
    bad, compared = [], 0
    for j in jobs:
        raw = got.get(j.k.name)
        if raw is None:
            bad.append("%s printed nothing" % j.k.name)
            continue
        ch = expected(j)
        vals = np.frombuffer(raw, dtype=dtypes.dtype(j.type)).reshape(ch.ref.shape)
        with np.errstate(all="ignore"):
            miss = compare.mismatches(ch, vals)
        compared += vals.size
        if miss:
            lines = compare.describe(ch, vals, miss, limit=3)
            ins = [complex(a.reshape(-1)[i]) if np.iscomplexobj(a) else a.reshape(-1).tolist()
                   for a in j.inputs for i in miss[:1]]
            bad.append("%s: %d value(s) differ; first at element %d (input %s)\n%s"
                       % (j.k.name, len(miss), miss[0], ins, "\n".join(lines)))
    return bad, compared


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--fake", required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--cuda-include", required=True, help="the CUDA toolkit's include directory")
    ap.add_argument("--keep", help="a directory to keep the host program in")
    a = ap.parse_args()
    if np is None:
        print("SKIP: %s has no NumPy (the reference is the differential test's)" % sys.executable)
        return 77
    work = a.keep or tempfile.mkdtemp(prefix="hostfloat-")
    os.makedirs(work, exist_ok=True)
    try:
        return run(a, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(a, work):
    inc = ["-I", HERE, "-I", a.cuda_include, "-I", os.path.join(a.cuda_include, "cccl")]
    probe = os.path.join(work, "probe.cpp")
    with open(probe, "w") as fh:
        fh.write("#include <cuda/std/complex>\n#include <cuda_bf16.h>\n#include \"cuda_host.h\"\n"
                 "int main() { cuda::std::complex<double> z(1, 2); return z.real() != 1; }\n")
    p = subprocess.run([a.cxx, "-std=c++17", "-w"] + inc + [probe, "-o", probe + ".x"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("SKIP: %s does not build CUDA's headers (cuda/std/complex, cuda_bf16.h) for the "
              "host: %s" % (a.cxx, p.stderr.strip()[:300]))
        return 77
    cache = compile_kernels(os.path.abspath(a.runner), os.path.abspath(a.fake), work)
    found = sorted(hostrun.sources(cache), key=lambda t: hostrun.SIGNATURE.search(t).group(1))
    jobs = [Job(hostrun.Kernel(i, s)) for i, s in enumerate(found)]
    jobs = [j for j in jobs if j.inputs]
    want = 2 * (len(FUNCTIONS) + len(BINARY)) + len(FOLDS)
    if len(jobs) != want:
        print("hostfloat: FAIL: %d kernels found, %d expected" % (len(jobs), want))
        return 1
    prog = os.path.join(work, "kernels.cpp")
    with open(prog, "w") as fh:
        fh.write(driver(jobs))
    exe = os.path.join(work, "kernels")
    p = subprocess.run([a.cxx, "-std=c++17", "-O1", "-w"] + inc + [prog, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("hostfloat: FAIL: the kernels do not build as host C++ (%s):\n%s"
              % (prog, p.stderr[:4000]))
        return 1
    p = subprocess.run([exe], capture_output=True, text=True)
    if p.returncode != 0:
        print("hostfloat: FAIL: the host program exited with %d:\n%s"
              % (p.returncode, p.stderr[-2000:]))
        return 1
    bad, compared = check(jobs, p.stdout)
    for b in bad[:20]:
        print("differs:", b)
    print("hostfloat: %d kernels run on the host (%s), %d values checked against the "
          "differential test's reference, %d kernel(s) differ"
          % (len(jobs), a.cxx, compared, len(bad)))
    if bad or not compared:
        print("hostfloat: FAIL%s" % (" (the program: %s)" % prog if a.keep else
                                     " (--keep DIR keeps the host program)"))
        return 1
    print("hostfloat: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

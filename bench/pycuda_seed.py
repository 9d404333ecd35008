"""The seed-like process of the benchmark's firstio group, with PyCUDA: a new process makes
its context, compiles PyCUDA's multiply_them from PyCUDA's cache (CACHE_DIR, filled by an
earlier run), looks the kernel up, launches it with Out, In and In buffers of 400 floats
(drv.Out, drv.In), then again 11 times, and checks the result, as bench/seed.c does with
cujit.

    python3 bench/pycuda_seed.py CACHE_DIR

Prints one line of milliseconds: "imports context module function first second later",
"later" the median of launches 3 to 12. Without PyCUDA, NumPy or the nvcc PyCUDA compiles
with, it prints "skip: " and why, and exits 3.
"""
import sys
import time

T0 = time.perf_counter()

SOURCE = """
__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}
"""


def ms(t0, t1):
    return (t1 - t0) * 1e3


def main():
    if len(sys.argv) != 2:
        print("usage: pycuda_seed.py CACHE_DIR", file=sys.stderr)
        return 2
    try:
        import numpy
        import pycuda.driver as drv
        from pycuda.compiler import SourceModule
    except Exception as e:  # ImportError, or a PyCUDA built for another driver
        print("skip: PyCUDA cannot be imported: %s" % e)
        return 3
    t_import = time.perf_counter()
    drv.init()
    ctx = drv.Device(0).make_context()  # as pycuda.autoinit does
    try:
        t_ctx = time.perf_counter()
        try:
            mod = SourceModule(SOURCE, cache_dir=sys.argv[1])
        except Exception as e:  # no nvcc: PyCUDA asks it even on a cache hit
            print("skip: PyCUDA's SourceModule failed: %s" % str(e).splitlines()[0])
            return 3
        t_mod = time.perf_counter()
        multiply_them = mod.get_function("multiply_them")
        t_fn = time.perf_counter()
        a = numpy.random.randn(400).astype(numpy.float32)
        b = numpy.random.randn(400).astype(numpy.float32)
        dest = numpy.zeros_like(a)
        times = []
        for _ in range(12):
            t = time.perf_counter()
            multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(400, 1, 1), grid=(1, 1))
            times.append(ms(t, time.perf_counter()))
        if not numpy.array_equal(dest, a * b):
            print("skip: PyCUDA's result is wrong")
            return 3
        later = sorted(times[2:])
        print("%.6f %.6f %.6f %.6f %.6f %.6f %.6f" % (
            ms(T0, t_import), ms(t_import, t_ctx), ms(t_ctx, t_mod), ms(t_mod, t_fn),
            times[0], times[1], (later[4] + later[5]) / 2))
    finally:
        ctx.pop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

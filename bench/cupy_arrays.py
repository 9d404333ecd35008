"""CuPy's side of the benchmark's arrays group (bench/arrays.c): the same operations on the
same sizes, timed the same way (a warm-up call, then rounds of PER calls queued back to
back and one wait; the median over rounds), in a process of its own on the same GPU.

    python3 bench/cupy_arrays.py big ROUNDS    the 64 Mi float rows, seed 004, a + b on 1 Ki
    python3 bench/cupy_arrays.py first KIND    the first call of a new ElementwiseKernel
                                               (KIND elementwise) or ReductionKernel
                                               (reduction), in this new process; the caller
                                               sets CUPY_CACHE_DIR, empty or warm

Prints "name value" lines: GB/s for the 64 Mi float rows (bytes each must read and
write / time, as bench/arrays.c counts them), ms for seed004 and for first, us for
small_add; and "version" with CuPy's. Without CuPy it prints "skip: " and why, and exits 3.
"""
import statistics
import sys
import time

BIG = 64 << 20  # floats


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("big", "first"):
        print("usage: cupy_arrays.py big ROUNDS | first KIND", file=sys.stderr)
        return 2
    try:
        import numpy
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # ImportError, or no usable device
        print("skip: CuPy cannot be used: %s" % str(e).splitlines()[0])
        return 3
    print("version %s" % cupy.__version__)
    if sys.argv[1] == "first":
        return first(cupy, numpy, sys.argv[2])
    return big(cupy, numpy, int(sys.argv[2]))


def sync(cupy):
    cupy.cuda.Device().synchronize()


def time_op(cupy, op, per, rounds):
    """Median nanoseconds per call over `rounds` rounds of `per` calls."""
    op()  # warm: compile, first allocation
    sync(cupy)
    v = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            op()
        sync(cupy)
        v.append((time.perf_counter_ns() - t0) / per)
    return statistics.median(v)


def big(cupy, numpy, rounds):
    fb = BIG * 4
    x = cupy.full(BIG, 1.5, dtype=cupy.float32)
    y = cupy.full(BIG, 1.5, dtype=cupy.float32)
    z = cupy.empty(BIG, dtype=cupy.float32)
    src = cupy.empty(BIG, dtype=cupy.float32)
    dst = cupy.empty(BIG, dtype=cupy.float32)
    a, b = numpy.float32(5), numpy.float32(6)

    @cupy.fuse()
    def sqrt_fabs(v):
        return cupy.sqrt(cupy.fabs(v))

    lin_comb = cupy.ElementwiseKernel("float32 a, float32 x, float32 b, float32 y", "float32 z",
                                      "z = a*x + b*y", "lin_comb")
    dot = cupy.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b", "z = a",
                               "0", "dot")
    rows = [
        ("copy", 2 * fb, lambda: dst.data.copy_from_device_async(src.data, fb)),
        ("add", 3 * fb, lambda: x + y),
        ("sqrt_fabs_two", 4 * fb, lambda: cupy.sqrt(cupy.fabs(x))),
        ("sqrt_fabs_fused", 2 * fb, lambda: sqrt_fabs(x)),
        ("lin_comb", 3 * fb, lambda: lin_comb(a, x, b, y, z)),
        ("dot_reduction", 2 * fb, lambda: dot(x, y)),
        ("dot", 2 * fb, lambda: cupy.dot(x, y)),
        ("max", fb, lambda: x.max()),
    ]
    for name, bytes_, op in rows:
        print("%s %.6f" % (name, bytes_ / time_op(cupy, op, 10, rounds)))
    # where, joins, the added reductions, take and put, strided views (select_ops there)
    n = BIG
    cond = cupy.ones(n, dtype=cupy.bool_)
    one = cupy.asarray(numpy.float32(1))  # 0-d
    idx = cupy.arange(n, dtype=cupy.int64)
    perm = (cupy.random.random(n, dtype=cupy.float32) * 67108864.0).astype(cupy.int64)
    half = x[::2]
    xt = x.reshape(8192, 8192).T
    rows = [
        ("where", n + 3 * fb, lambda: cupy.where(cond, x, y)),
        ("if_positive", 2 * fb, lambda: cupy.where(x > 0, x, numpy.float32(0))),
        ("broadcast_add", 2 * fb, lambda: x + one),
        ("concatenate", 4 * fb, lambda: cupy.concatenate((x, y))),
        ("stack", 4 * fb, lambda: cupy.stack((x, y))),
        ("any", fb, lambda: x.any()),
        ("prod", fb, lambda: x.prod()),
        ("sum_f64", fb, lambda: x.sum(dtype=cupy.float64)),
        ("argmax", fb, lambda: x.argmax()),
        ("take_seq", 8 * n + 2 * fb, lambda: cupy.take(x, idx)),
        ("take_perm", 8 * n + 2 * fb, lambda: cupy.take(x, perm)),
        ("put_perm", 8 * n + 2 * fb, lambda: cupy.put(z, perm, y)),
        ("half_plus_one", fb, lambda: half + 1),
        ("half_sum", fb / 2, lambda: half.sum()),
        ("transposed_copy", 2 * fb, lambda: cupy.ascontiguousarray(xt)),
    ]
    for name, bytes_, op in rows:
        print("%s %.6f" % (name, bytes_ / time_op(cupy, op, 10, rounds)))
    # along the axes of x as a C-order matrix, and a row broadcast over it (axis_ops there)
    x2 = x.reshape(8192, 8192)
    row = y[:8192]
    rows = [("broadcast_row", 2 * fb, lambda: x2 + row)]
    for what in ("sum", "max", "argmax"):
        for axis in (0, 1):
            rows.append(("%s_axis%d" % (what, axis), fb,
                         lambda what=what, axis=axis: getattr(x2, what)(axis=axis)))
    for name, bytes_, op in rows:
        print("%s %.6f" % (name, bytes_ / time_op(cupy, op, 10, rounds)))
    del cond, one, idx, perm, half, xt, x2, row
    del x, y, z, src, dst
    cupy.get_default_memory_pool().free_all_blocks()

    h = (numpy.arange(4000 * 4000, dtype=numpy.int64) % 1000 / 1000.0).astype(numpy.float32)
    h = h.reshape(4000, 4000)
    v = []
    for r in range(-1, rounds):  # round -1 warms up
        t0 = time.perf_counter_ns()
        back = cupy.sin(2 * cupy.asarray(h) + 1).get()
        if r >= 0:
            v.append((time.perf_counter_ns() - t0) / 1e6)
    del back
    print("seed004 %.6f" % statistics.median(v))

    p = cupy.zeros(1024, dtype=cupy.float32)
    q = cupy.zeros(1024, dtype=cupy.float32)
    print("small_add %.6f" % (time_op(cupy, lambda: p + q, 1000, max(rounds, 3)) / 1e3))
    return 0


def first(cupy, numpy, kind):
    n = 1 << 20
    x = cupy.zeros(n, dtype=cupy.float32)
    y = cupy.zeros(n, dtype=cupy.float32)
    z = cupy.zeros(n, dtype=cupy.float32)
    if kind == "reduction":
        k = cupy.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b", "z = a",
                                 "0", "dot")

        def call():
            return k(x, y)
    else:
        k = cupy.ElementwiseKernel("float32 a, float32 x, float32 b, float32 y", "float32 z",
                                   "z = a*x + b*y", "lin_comb")

        def call():
            return k(numpy.float32(5), x, numpy.float32(6), y, z)
    sync(cupy)
    t0 = time.perf_counter_ns()
    call()
    sync(cupy)
    print("first %.6f" % ((time.perf_counter_ns() - t0) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())

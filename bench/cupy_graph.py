"""CuPy's side of the benchmark's graph group (bench/graph.c): the same work captured on a
stream into a CUDA graph (Stream.begin_capture / end_capture) and replayed (Graph.launch),
timed as bench/graph.c times cujit's (a warm-up replay, then rounds of a batch of replays
queued back to back and one wait for the stream; the median over rounds), in a process of
its own on the same GPU.

    python3 bench/cupy_graph.py ROUNDS

Prints "name value" lines, microseconds: replay10, replay100, replay1000 (per kernel: 10,
100, 1,000 launches of saxpy on 1 Ki floats replayed), chain_graph (sin(2x + 1) as three
operations into outputs made before, per replay), loop_graph (100 steps of acc += x in
place, per replay); and "version" with CuPy's. Without CuPy it prints "skip: " and why,
and exits 3.
"""
import statistics
import sys
import time

ELEMS = 1024

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def main():
    if len(sys.argv) != 2:
        print("usage: cupy_graph.py ROUNDS", file=sys.stderr)
        return 2
    try:
        import numpy
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # ImportError, or no usable device
        print("skip: CuPy cannot be used: %s" % str(e).splitlines()[0])
        return 3
    rounds = int(sys.argv[1])
    print("version %s" % cupy.__version__)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        kernel = cupy.RawKernel(SAXPY, "saxpy")
        x = cupy.zeros(ELEMS, dtype=cupy.float32)
        y = cupy.zeros(ELEMS, dtype=cupy.float32)
        args = (numpy.float32(0.5), x, y, numpy.int32(ELEMS))

        def launches(count):
            for _ in range(count):
                kernel((ELEMS // 256,), (256,), args)

        for count in (10, 100, 1000):
            per = 4 if count >= 1000 else 4000 // count
            us = replay(cupy, stream, lambda: launches(count), per, rounds)
            print("replay%d %.6f" % (count, us / count))

        t = cupy.empty_like(x)
        u = cupy.empty_like(x)
        out = cupy.empty_like(x)
        acc = cupy.zeros_like(x)

        def chain():
            cupy.multiply(x, 2, out=t)
            cupy.add(t, 1, out=u)
            cupy.sin(u, out=out)

        def loop():
            for _ in range(100):
                cupy.add(acc, x, out=acc)

        print("chain_graph %.6f" % replay(cupy, stream, chain, 500, rounds))
        print("loop_graph %.6f" % replay(cupy, stream, loop, 20, rounds))
    return 0


def replay(cupy, stream, work, per, rounds):
    """Captures work() on the stream once; the median microseconds per replay over
    `rounds` batches of `per` replays and one wait."""
    work()  # compiles, outside the capture
    stream.synchronize()
    stream.begin_capture()
    work()
    graph = stream.end_capture()
    graph.launch(stream)
    stream.synchronize()
    v = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            graph.launch(stream)
        stream.synchronize()
        v.append((time.perf_counter_ns() - t0) / per / 1e3)
    return statistics.median(v)


if __name__ == "__main__":
    sys.exit(main())

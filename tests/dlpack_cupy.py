"""dlpack_cupy.py - cujit arrays and CuPy arrays exchanged through DLPack, without a copy,
on a GPU: a round trip with a real consumer and producer.

    python3 tests/dlpack_cupy.py BUILD/lib/libcujit-dlpack-bridge.so

The C side is a small shared library of the tests (tests/dlpack_bridge.c, loaded with
ctypes) that calls cujit. Tensors cross as Python's DLPack protocol says: a cujit tensor
goes to cupy.from_dlpack() in a PyCapsule named "dltensor_versioned" (whose destructor
gives it back if no consumer took it), and a CuPy tensor comes to cujit from CuPy's
__dlpack__(), its capsule renamed "used_dltensor_versioned" (or "used_dltensor" for the
legacy struct) before cujit takes it over. Both deleters are wrapped by the bridge, which
counts their calls.

Checked, each on its own line: addresses equal on both sides (no copy); writes made by
either side seen by the other; shapes, strides (a transposed, a reversed, a stepped view)
and every element type both ways (bfloat16 only where CuPy has it); cujit's deleter
called once, only after CuPy lets go, also after cujit destroyed its own handles, and
the memory given back to cujit's pool then; CuPy's deleter called once, when the last
cujit array over its memory is destroyed, also for a tensor cujit refuses (a broadcast
view) and for the legacy struct. Prints "ok - ..." or "FAILED - ..." for each, then
"N passed, N failed"; exits 0 when all passed, 1 otherwise, 77 (saying why) when CuPy,
NumPy or a GPU is missing.
"""
import ctypes
import gc
import sys

PASSED = []
FAILED = []


def check(ok, what, detail=""):
    if ok:
        PASSED.append(what)
        print("ok - " + what)
    else:
        FAILED.append(what)
        print("FAILED - " + what + (": " + detail if detail else ""))


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


# ---- the Python C API, for capsules ----

api = ctypes.pythonapi
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, DESTRUCTOR]
api.PyCapsule_IsValid.restype = ctypes.c_int
api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# the destructor gets the capsule being freed: read it by address, never as an object
RAW_IS_VALID = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", api))
RAW_GET_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", api))

# capsule names live as long as the process, as the protocol asks
VERSIONED = b"dltensor_versioned"
USED_VERSIONED = b"used_dltensor_versioned"
LEGACY = b"dltensor"
USED_LEGACY = b"used_dltensor"

lib = None


@DESTRUCTOR
def capsule_destructor(capsule):
    """A cujit tensor no consumer took: the producer's side gives it back."""
    if RAW_IS_VALID(capsule, VERSIONED):
        lib.bridge_delete_lent(ctypes.c_void_p(RAW_GET_POINTER(capsule, VERSIONED)))


def load(path):
    global lib
    lib = ctypes.CDLL(path)
    vp, i64, c = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    sig = {
        "bridge_error": (ctypes.c_char_p, []),
        "bridge_init": (c, []),
        "bridge_sync": (c, []),
        "bridge_type_of": (c, [ctypes.c_char_p]),
        "bridge_current_device": (c, []),
        "bridge_pool_in_use": (ctypes.c_longlong, []),
        "bridge_array": (vp, [c, c, ctypes.POINTER(i64), vp]),
        "bridge_slice": (vp, [vp, c, i64, i64, i64]),
        "bridge_destroy": (None, [vp]),
        "bridge_data": (ctypes.c_uint64, [vp]),
        "bridge_read": (c, [vp, vp, ctypes.c_size_t]),
        "bridge_write": (c, [vp, vp, ctypes.c_size_t]),
        "bridge_stride": (i64, [vp, c]),
        "bridge_lend": (vp, [vp, ctypes.c_uint]),
        "bridge_delete_lent": (None, [vp]),
        "bridge_lent_deleted": (ctypes.c_long, []),
        "bridge_borrow": (vp, [vp, ctypes.c_uint]),
        "bridge_borrow_legacy": (vp, [vp, ctypes.c_uint]),
        "bridge_borrowed_deleted": (ctypes.c_long, []),
        "bridge_scale": (c, [vp, ctypes.c_double]),
        "bridge_add_one": (c, [vp]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def error():
    return lib.bridge_error().decode(errors="replace")


# ---- cujit's side ----

def cujit_array(numpy, host):
    """A cujit array holding a copy of the NumPy array `host` (C order)."""
    host = numpy.ascontiguousarray(host)
    t = lib.bridge_type_of(host.dtype.name.encode())
    shape = (ctypes.c_int64 * max(host.ndim, 1))(*host.shape)
    a = lib.bridge_array(t, host.ndim, shape, host.ctypes.data)
    if not a:
        raise RuntimeError("cujit_array_from_host: " + error())
    return a


def cujit_read(numpy, a, dtype, shape):
    out = numpy.empty(shape, dtype=dtype)
    if lib.bridge_read(a, out.ctypes.data, out.nbytes) != 0:
        raise RuntimeError("cujit_array_read: " + error())
    return out


class Lent:
    """A cujit array offered through Python's DLPack protocol, as a producer library
    offers one: __dlpack__ makes a cujit tensor (cujit_array_to_dlpack) and wraps it in a
    capsule named "dltensor_versioned"."""

    def __init__(self, handle, flags=0):
        self.handle, self.flags = handle, flags

    def __dlpack_device__(self):
        return (2, lib.bridge_current_device())  # kDLCUDA

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if max_version is None or max_version[0] < 1:
            raise BufferError("cujit lends DLPack 1.x tensors only")
        if copy:
            raise BufferError("cujit lends without a copy")
        # the consumer's stream must see cujit's work: all of it is finished here
        if lib.bridge_sync() != 0:
            raise BufferError(error())
        t = lib.bridge_lend(self.handle, self.flags)
        if not t:
            raise BufferError("cujit_array_to_dlpack: " + error())
        return api.PyCapsule_New(t, VERSIONED, capsule_destructor)


def borrow(cupy, arr, legacy=False, flags=0):
    """Hands CuPy's tensor of `arr` over to cujit: (handle or None, detail)."""
    cupy.cuda.Device().synchronize()  # CuPy's work on it is done
    cap = arr.__dlpack__() if legacy else arr.__dlpack__(max_version=(1, 0))
    name, used = (LEGACY, USED_LEGACY) if legacy else (VERSIONED, USED_VERSIONED)
    if not api.PyCapsule_IsValid(cap, name):
        raise RuntimeError("CuPy's capsule is not named %r" % name)
    ptr = api.PyCapsule_GetPointer(cap, name)
    api.PyCapsule_SetName(cap, used)  # the tensor is cujit's now, whatever cujit does
    h = (lib.bridge_borrow_legacy if legacy else lib.bridge_borrow)(ptr, flags)
    return h, ("" if h else error())


def collect():
    for _ in range(3):
        gc.collect()


# ---- cujit -> CuPy ----

def lend_to_cupy(cupy, numpy):
    host = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
    lent0 = lib.bridge_lent_deleted()
    pool0 = lib.bridge_pool_in_use()
    x = cujit_array(numpy, host)
    y = cupy.from_dlpack(Lent(x))
    check(y.data.ptr == lib.bridge_data(x),
          "cujit -> CuPy: cupy.from_dlpack(x) points at x's memory (no copy)",
          "CuPy 0x%x, cujit 0x%x" % (y.data.ptr, lib.bridge_data(x)))
    check(y.shape == (4, 6) and y.dtype == numpy.float32 and y.strides == (24, 4),
          "cujit -> CuPy: shape (4, 6), float32, strides (24, 4)",
          "got %s %s %s" % (y.shape, y.dtype, y.strides))
    check(numpy.array_equal(cupy.asnumpy(y), host), "cujit -> CuPy: CuPy reads x's values")
    y *= 2  # a CuPy kernel writes the memory
    cupy.cuda.Device().synchronize()
    check(numpy.array_equal(cujit_read(numpy, x, numpy.float32, (4, 6)), host * 2),
          "cujit -> CuPy: CuPy's y *= 2 is seen by cujit_array_read(x)")
    new = numpy.full((4, 6), -5, dtype=numpy.float32)
    lib.bridge_write(x, new.ctypes.data, new.nbytes)
    check(numpy.array_equal(cupy.asnumpy(y), new),
          "cujit -> CuPy: cujit_array_write(x) is seen by CuPy")
    # cujit lets go of its handle: CuPy's array keeps the memory
    lib.bridge_destroy(x)
    collect()
    check(lib.bridge_lent_deleted() == lent0,
          "cujit -> CuPy: no deleter is called while CuPy holds the tensor",
          "%d called" % (lib.bridge_lent_deleted() - lent0))
    y += 1
    check(numpy.array_equal(cupy.asnumpy(y), new + 1),
          "cujit -> CuPy: after cujit_array_destroy(x), CuPy still reads and writes the memory")
    del y
    collect()
    cupy.cuda.Device().synchronize()
    check(lib.bridge_lent_deleted() == lent0 + 1,
          "cujit -> CuPy: once CuPy lets go, the tensor's deleter is called exactly once",
          "%d calls" % (lib.bridge_lent_deleted() - lent0))
    check(lib.bridge_pool_in_use() == pool0,
          "cujit -> CuPy: the memory then goes back to cujit's pool",
          "in use %d bytes, %d before x" % (lib.bridge_pool_in_use(), pool0))


def lend_a_view_to_cupy(cupy, numpy):
    """A reversed, stepped view: x[:, 5::-2], strides (6, -2) elements."""
    host = numpy.arange(24, dtype=numpy.float32).reshape(4, 6)
    lent0 = lib.bridge_lent_deleted()
    x = cujit_array(numpy, host)
    v = lib.bridge_slice(x, 1, 5, -1, -2)
    y = cupy.from_dlpack(Lent(v))
    check(y.data.ptr == lib.bridge_data(v) and y.strides == (24, -8) and y.shape == (4, 3),
          "cujit -> CuPy: the view x[:, 5::-2] arrives with its address and strides (24, -8)",
          "CuPy 0x%x %s %s, cujit 0x%x" % (y.data.ptr, y.shape, y.strides,
                                            lib.bridge_data(v)))
    check(numpy.array_equal(cupy.asnumpy(y), host[:, 5::-2]),
          "cujit -> CuPy: CuPy reads the view's elements")
    y[...] = 0
    cupy.cuda.Device().synchronize()
    want = host.copy()
    want[:, 5::-2] = 0
    check(numpy.array_equal(cujit_read(numpy, x, numpy.float32, (4, 6)), want),
          "cujit -> CuPy: CuPy's writes through the view land in x's columns 5, 3 and 1")
    lib.bridge_destroy(v)
    lib.bridge_destroy(x)
    y += 1
    check(numpy.array_equal(cupy.asnumpy(y), want[:, 5::-2] + 1),
          "cujit -> CuPy: after cujit_array_destroy of x and the view, CuPy still writes "
          "and reads the view")
    del y
    collect()
    check(lib.bridge_lent_deleted() == lent0 + 1,
          "cujit -> CuPy: the view's tensor is given back once")


def lend_every_type(cupy, numpy):
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]
    for name in names:
        host = (numpy.arange(10) % 2 == 1) if name == "bool" else \
            (numpy.arange(10) * 3 - 7).astype(name)
        x = cujit_array(numpy, host)
        y = cupy.from_dlpack(Lent(x))
        got = cupy.asnumpy(y)
        check(y.dtype == numpy.dtype(name) and y.data.ptr == lib.bridge_data(x) and
              got.tobytes() == host.tobytes(),
              "cujit -> CuPy: %s arrives as %s, at x's address, with x's bytes"
              % (name, name), "CuPy dtype %s, values %s" % (y.dtype, got))
        del y
        lib.bridge_destroy(x)
    # bfloat16: CuPy has no such type; it takes the capsule, refuses, and gives it back
    lent0 = lib.bridge_lent_deleted()
    bf = lib.bridge_array(lib.bridge_type_of(b"bfloat16"), 1, (ctypes.c_int64 * 1)(4),
                          numpy.zeros(4, dtype=numpy.uint16).ctypes.data)
    try:
        y = cupy.from_dlpack(Lent(bf))
        check(str(y.dtype) == "bfloat16", "cujit -> CuPy: bfloat16 arrives as bfloat16",
              "as %s" % y.dtype)
        del y
    except Exception as e:  # CuPy without bfloat16
        print("note - CuPy does not take bfloat16 (%s: %s)" % (type(e).__name__, e))
    lib.bridge_destroy(bf)
    collect()
    check(lib.bridge_lent_deleted() == lent0 + 1,
          "cujit -> CuPy: the bfloat16 tensor is given back once, taken or not",
          "%d calls" % (lib.bridge_lent_deleted() - lent0))


def lend_untaken(cupy, numpy):
    """A capsule nobody consumes: its destructor gives the tensor back."""
    lent0 = lib.bridge_lent_deleted()
    x = cujit_array(numpy, numpy.ones(8, dtype=numpy.float32))
    cap = Lent(x).__dlpack__(max_version=(1, 0))
    lib.bridge_destroy(x)
    del cap
    collect()
    check(lib.bridge_lent_deleted() == lent0 + 1,
          "cujit -> Python: a capsule no consumer took gives its tensor back once",
          "%d calls" % (lib.bridge_lent_deleted() - lent0))


# ---- CuPy -> cujit ----

def borrow_from_cupy(cupy, numpy):
    a = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)
    host = cupy.asnumpy(a)
    gone0 = lib.bridge_borrowed_deleted()
    h, why = borrow(cupy, a)
    check(h is not None, "CuPy -> cujit: cujit_array_from_dlpack takes CuPy's tensor", why)
    if not h:
        return
    check(lib.bridge_data(h) == a.data.ptr,
          "CuPy -> cujit: the cujit array points at CuPy's memory (no copy)",
          "cujit 0x%x, CuPy 0x%x" % (lib.bridge_data(h), a.data.ptr))
    check(numpy.array_equal(cujit_read(numpy, h, numpy.float32, (4, 6)), host),
          "CuPy -> cujit: cujit reads CuPy's values")
    ok_scale = lib.bridge_scale(h, 3.0) == 0
    ok_add = lib.bridge_add_one(h) == 0
    lib.bridge_sync()
    check(ok_scale and ok_add and numpy.array_equal(cupy.asnumpy(a), host * 3 + 1),
          "CuPy -> cujit: cujit kernels (a generated x *= 3, a launched x += 1) write "
          "what CuPy then reads", error())
    a[1] = -1
    cupy.cuda.Device().synchronize()
    want = host * 3 + 1
    want[1] = -1
    check(numpy.array_equal(cujit_read(numpy, h, numpy.float32, (4, 6)), want),
          "CuPy -> cujit: CuPy's a[1] = -1 is seen by cujit")
    check(lib.bridge_borrowed_deleted() == gone0,
          "CuPy -> cujit: CuPy's deleter is not called while cujit holds the array")
    lib.bridge_destroy(h)
    check(lib.bridge_borrowed_deleted() == gone0 + 1,
          "CuPy -> cujit: cujit_array_destroy of the last array calls CuPy's deleter once",
          "%d calls" % (lib.bridge_borrowed_deleted() - gone0))
    # views: transposed, stepped; a reversed one where CuPy lends it
    for what, view in (("a.T", a.T), ("a[::2, 1:5:2]", a[::2, 1:5:2]),
                       ("a[:, ::-1]", a[:, ::-1])):
        gone0 = lib.bridge_borrowed_deleted()
        try:
            h, why = borrow(cupy, view)
        except Exception as e:
            print("note - CuPy does not lend %s (%s: %s)" % (what, type(e).__name__, e))
            continue
        strides = tuple(lib.bridge_stride(h, d) for d in range(view.ndim)) if h else None
        want_strides = tuple(s // 4 for s in view.strides)
        # CuPy 14.2 lends a negative stride divided as an unsigned number ((2^64 - 4) / 4
        # for -1): such a tensor spans more than memory holds, and refusing it is right
        wrapped = ["stride %d" % ((2**64 + s) // 4) for s in view.strides if s < 0]
        if h is None and wrapped and any(w + ")" in (why or "") for w in wrapped):
            print("note - CuPy lends %s with %s for a negative stride; cujit refuses it: %s"
                  % (what, " and ".join(wrapped), why))
            check(lib.bridge_borrowed_deleted() == gone0 + 1,
                  "CuPy -> cujit: %s, refused, has its deleter called once" % what)
            continue
        check(h is not None and lib.bridge_data(h) == view.data.ptr and strides == want_strides,
              "CuPy -> cujit: %s is taken as a view: its address and strides %s"
              % (what, want_strides), why or "cujit strides %s" % (strides,))
        if h:
            check(numpy.array_equal(cujit_read(numpy, h, numpy.float32, view.shape),
                                    cupy.asnumpy(view)),
                  "CuPy -> cujit: cujit reads %s's elements in order" % what)
            lib.bridge_destroy(h)
        check(lib.bridge_borrowed_deleted() == gone0 + 1,
              "CuPy -> cujit: %s's deleter called once" % what)


def borrow_every_type(cupy, numpy):
    for name in ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128"]:
        a = (cupy.arange(10) % 2 == 1) if name == "bool" else \
            (cupy.arange(10) * 5 - 11).astype(name)
        h, why = borrow(cupy, a)
        ok = h is not None and lib.bridge_data(h) == a.data.ptr and \
            cujit_read(numpy, h, numpy.dtype(name), (10,)).tobytes() == \
            cupy.asnumpy(a).tobytes()
        check(ok, "CuPy -> cujit: %s is taken over CuPy's memory with its bytes" % name, why)
        if h:
            lib.bridge_destroy(h)


def borrow_refused(cupy, numpy):
    """A broadcast view (a stride of 0): refused, and CuPy's deleter still called once."""
    gone0 = lib.bridge_borrowed_deleted()
    b = cupy.broadcast_to(cupy.arange(4, dtype=cupy.float32), (3, 4))
    h, why = borrow(cupy, b)
    check(h is None and "share an element" in why,
          "CuPy -> cujit: a broadcast view is refused with its reason", why)
    check(lib.bridge_borrowed_deleted() == gone0 + 1,
          "CuPy -> cujit: the refused tensor's deleter was called once, by cujit",
          "%d calls" % (lib.bridge_borrowed_deleted() - gone0))


def borrow_legacy(cupy, numpy):
    a = cupy.arange(12, dtype=cupy.int32)
    gone0 = lib.bridge_borrowed_deleted()
    try:
        h, why = borrow(cupy, a, legacy=True)
    except RuntimeError as e:
        print("note - CuPy's __dlpack__() without max_version did not give the legacy "
              "struct (%s)" % e)
        return
    check(h is not None and lib.bridge_data(h) == a.data.ptr and
          numpy.array_equal(cujit_read(numpy, h, numpy.int32, (12,)), cupy.asnumpy(a)),
          "CuPy -> cujit: the legacy DLManagedTensor is taken over CuPy's memory", why)
    if h:
        lib.bridge_destroy(h)
    check(lib.bridge_borrowed_deleted() == gone0 + 1,
          "CuPy -> cujit: the legacy tensor's deleter called once")


def main():
    if len(sys.argv) != 2:
        print("usage: dlpack_cupy.py LIBCUJIT_DLPACK_BRIDGE.so", file=sys.stderr)
        return 2
    try:
        import numpy
        import cupy
    except ImportError as e:
        skip("CuPy and NumPy are needed in this python3 (%s): %s" % (sys.executable, e))
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        skip("CuPy finds no usable GPU: %s" % str(e).splitlines()[0])
    if n == 0:
        skip("CuPy finds no GPU")
    load(sys.argv[1])
    if lib.bridge_init() != 0:
        skip("cujit finds no usable GPU: " + error())
    cupy.cuda.Device(lib.bridge_current_device()).use()
    print("CuPy %s, NumPy %s, device %d (%s)" % (
        cupy.__version__, numpy.__version__, lib.bridge_current_device(),
        cupy.cuda.runtime.getDeviceProperties(lib.bridge_current_device())["name"].decode()))
    for part in (lend_to_cupy, lend_a_view_to_cupy, lend_every_type, lend_untaken,
                 borrow_from_cupy, borrow_every_type, borrow_refused, borrow_legacy):
        try:
            part(cupy, numpy)
        except Exception as e:  # a part that breaks is one failure, and the rest still run
            check(False, part.__name__ + " ran to its end", "%s: %s" % (type(e).__name__, e))
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

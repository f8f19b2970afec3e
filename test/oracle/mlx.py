"""A small ctypes binding of the public mlx-c API of libmlx-cpu.so.

It owns three things for the numpy oracle (run.py):
  - loading the shared library and installing an error handler that records
    messages instead of exiting, so a failing call can be inspected;
  - moving arrays between numpy and mlx (copy in with mlx_array_new_data,
    copy out through mlx_array_eval + shape/strides/data_*);
  - calling any op declared in include/mlx/c/ops.h. The argument types are
    read from that header, so a new op needs no binding code here: the
    Python caller passes only the op's own arguments (the result out-param
    and the trailing stream are supplied), a list stands for a pointer plus
    its `_num` count, a dtype is given by name, None is an empty handle or an
    absent optional.

bfloat16 has no numpy type. Values of that dtype are carried as float32
arrays holding bfloat16-exact values ("carriers"); they cross the C boundary
as uint16 bit patterns.
"""
import ctypes as C
import os
import re

import numpy as np

# mlx_dtype enum order (include/mlx/c/array.h).
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
          "int32", "int64", "float16", "float32", "float64", "bfloat16",
          "complex64"]
DTYPE_ENUM = {name: i for i, name in enumerate(DTYPES)}

# numpy type used to hold values of each dtype on the Python side.
CARRIER = {"bool": np.bool_, "uint8": np.uint8, "uint16": np.uint16,
           "uint32": np.uint32, "uint64": np.uint64, "int8": np.int8,
           "int16": np.int16, "int32": np.int32, "int64": np.int64,
           "float16": np.float16, "float32": np.float32,
           "float64": np.float64, "bfloat16": np.float32,
           "complex64": np.complex64}
# numpy type with the dtype's memory layout (bfloat16 as raw bits).
WIRE = dict(CARRIER, bfloat16=np.uint16)
ITEMSIZE = {d: np.dtype(WIRE[d]).itemsize for d in DTYPES}


def bf16_round(x):
    """Rounds float values to the nearest bfloat16 (ties to even); returns
    float32 values that are exactly representable in bfloat16. NaN stays a
    quiet NaN; overflow goes to infinity as in a hardware conversion."""
    f = np.array(x, dtype=np.float32, order="C")  # ascontiguousarray would make 0-d 1-d
    bits = f.view(np.uint32).astype(np.uint64)
    sh = np.uint64(16)
    lsb = (bits >> sh) & np.uint64(1)
    rounded = ((bits + np.uint64(0x7FFF) + lsb) >> sh) << sh
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), np.float32(np.nan), out).astype(np.float32)


def bf16_to_bits(x):
    return (bf16_round(x).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def bf16_from_bits(b):
    return (np.asarray(b).astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_carrier(x, dtype):
    """Casts numpy values to the carrier of dtype, as a C cast would
    (bfloat16 rounds to nearest even)."""
    if dtype == "bfloat16":
        x = np.asarray(x)
        if x.dtype.kind == "c":
            x = x.real
        return bf16_round(x.astype(np.float32))
    x = np.asarray(x)
    if x.dtype.kind == "c" and dtype != "complex64":
        x = x.real  # MLX converts complex to real by taking the real part
    return x.astype(CARRIER[dtype])


class _Handle(C.Structure):
    _fields_ = [("ctx", C.c_void_p)]


class Array(_Handle):
    pass


class Stream(_Handle):
    pass


class VectorArray(_Handle):
    pass


class OptionalFloat(C.Structure):
    _fields_ = [("value", C.c_float), ("has_value", C.c_bool)]


class OptionalInt(C.Structure):
    _fields_ = [("value", C.c_int), ("has_value", C.c_bool)]


class OptionalDtype(C.Structure):
    _fields_ = [("value", C.c_int), ("has_value", C.c_bool)]


ERROR_HANDLER = C.CFUNCTYPE(None, C.c_char_p, C.c_void_p)


class MlxError(Exception):
    """A call returned non-zero; messages holds what the handler received."""

    def __init__(self, fn, rc, messages):
        super().__init__("%s returned %r: %s" % (fn, rc, " | ".join(messages) or "(no message)"))
        self.fn = fn
        self.rc = rc
        self.messages = list(messages)


class MArray:
    """Owns one mlx_array handle; free() (or garbage collection) drops it."""

    def __init__(self, lib, handle):
        self.lib = lib
        self.h = handle

    def free(self):
        if self.h is not None and self.h.ctx:
            self.lib.raw.mlx_array_free(self.h)
        self.h = None

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    @property
    def dtype(self):
        return DTYPES[self.lib.raw.mlx_array_dtype(self.h)]

    @property
    def shape(self):
        raw = self.lib.raw
        nd = raw.mlx_array_ndim(self.h)
        p = raw.mlx_array_shape(self.h)
        return tuple(p[i] for i in range(nd))

    def numpy(self):
        return self.lib.to_numpy(self)


# Parameter types of ops.h after dropping `const`, mapped to ctypes.
_CTYPES = {
    "mlx_array": Array, "mlx_array*": C.POINTER(Array),
    "mlx_vector_array": VectorArray, "mlx_vector_array*": C.POINTER(VectorArray),
    "mlx_stream": Stream, "int": C.c_int, "bool": C.c_bool, "float": C.c_float,
    "double": C.c_double, "size_t": C.c_size_t, "int*": C.POINTER(C.c_int),
    "int64_t*": C.POINTER(C.c_int64), "mlx_dtype": C.c_int,
    "mlx_optional_float": OptionalFloat, "mlx_optional_int": OptionalInt,
    "mlx_optional_dtype": OptionalDtype, "char*": C.c_char_p,
}


def parse_header(path):
    """Returns {function name: [(normalized type, param name), ...]} for
    every `int mlx_*(...)` declared in the header at path."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    decls = {}
    for m in re.finditer(r"\bint\s+(mlx_\w+)\s*\(([^)]*)\)\s*;", text):
        params = []
        for p in m.group(2).split(","):
            p = " ".join(p.replace("*", " * ").split())
            if not p or p == "void":
                continue
            toks = p.split(" ")
            name = toks[-1]
            ty = "".join(t for t in toks[:-1] if t != "const")
            ty = ty.replace("*", "*")
            params.append((ty, name))
        decls[m.group(1)] = params
    return decls


class Lib:
    """The loaded library plus the op signatures read from ops.h."""

    def __init__(self, path, header):
        self.raw = C.CDLL(os.path.abspath(path))
        self.messages = []
        self.sigs = parse_header(header)
        self._bound = {}
        self._declare_core()
        # Keep a reference to the callback: the library holds only its address.
        self._handler = ERROR_HANDLER(self._on_error)
        self.raw.mlx_set_error_handler(self._handler, None, None)
        self.stream = self.raw.mlx_default_cpu_stream_new()
        if not self.stream.ctx:
            raise RuntimeError("mlx_default_cpu_stream_new returned an empty stream: "
                               + "; ".join(self.messages))

    def _on_error(self, msg, data):
        self.messages.append(msg.decode("utf-8", "replace") if msg else "")

    def take_messages(self):
        m, self.messages = self.messages, []
        return m

    def _declare_core(self):
        r = self.raw
        r.mlx_set_error_handler.argtypes = [ERROR_HANDLER, C.c_void_p, C.c_void_p]
        r.mlx_set_error_handler.restype = None
        r.mlx_default_cpu_stream_new.argtypes = []
        r.mlx_default_cpu_stream_new.restype = Stream
        r.mlx_array_new.argtypes = []
        r.mlx_array_new.restype = Array
        r.mlx_array_free.argtypes = [Array]
        r.mlx_array_new_data.argtypes = [C.c_void_p, C.POINTER(C.c_int), C.c_int, C.c_int]
        r.mlx_array_new_data.restype = Array
        r.mlx_array_eval.argtypes = [Array]
        r.mlx_array_dtype.argtypes = [Array]
        r.mlx_array_dtype.restype = C.c_int
        r.mlx_array_ndim.argtypes = [Array]
        r.mlx_array_ndim.restype = C.c_size_t
        r.mlx_array_size.argtypes = [Array]
        r.mlx_array_size.restype = C.c_size_t
        r.mlx_array_shape.argtypes = [Array]
        r.mlx_array_shape.restype = C.POINTER(C.c_int)
        # size_t in the API; read as int64 so negative strides come out right.
        r.mlx_array_strides.argtypes = [Array]
        r.mlx_array_strides.restype = C.POINTER(C.c_int64)
        for d in DTYPES:
            f = getattr(r, "mlx_array_data_" + d)
            f.argtypes = [Array]
            f.restype = C.c_void_p
        r.mlx_vector_array_new.argtypes = []
        r.mlx_vector_array_new.restype = VectorArray
        r.mlx_vector_array_free.argtypes = [VectorArray]
        r.mlx_vector_array_size.argtypes = [VectorArray]
        r.mlx_vector_array_size.restype = C.c_size_t
        r.mlx_vector_array_get.argtypes = [C.POINTER(Array), VectorArray, C.c_size_t]
        r.mlx_vector_array_append_value.argtypes = [VectorArray, Array]
        if self.has("mlx_cpu_last_error"):
            r.mlx_cpu_last_error.argtypes = []
            r.mlx_cpu_last_error.restype = C.c_char_p

    def has(self, fn):
        """True when the library exports fn (hidden symbols do not resolve)."""
        try:
            getattr(self.raw, fn)
            return True
        except AttributeError:
            return False

    # ---- numpy <-> mlx ---------------------------------------------------

    def from_numpy(self, x, dtype):
        """Copies numpy values (a carrier of dtype) into a new mlx array."""
        if dtype == "bfloat16":
            wire = np.array(bf16_to_bits(x), order="C")
        else:
            wire = np.array(x, dtype=WIRE[dtype], order="C")
        shape = (C.c_int * max(1, wire.ndim))(*wire.shape)
        self.messages.clear()
        h = self.raw.mlx_array_new_data(wire.ctypes.data_as(C.c_void_p), shape,
                                        wire.ndim, DTYPE_ENUM[dtype])
        if not h.ctx:
            raise MlxError("mlx_array_new_data", None, self.take_messages())
        return MArray(self, h)

    def to_numpy(self, a):
        """Evaluates a and copies its elements out: (carrier array, dtype)."""
        r = self.raw
        self.messages.clear()
        if r.mlx_array_eval(a.h) != 0:
            raise MlxError("mlx_array_eval", 1, self.take_messages())
        dtype = DTYPES[r.mlx_array_dtype(a.h)]
        nd = r.mlx_array_ndim(a.h)
        sp = r.mlx_array_shape(a.h)
        shape = tuple(sp[i] for i in range(nd))
        size = int(np.prod(shape, dtype=np.int64)) if nd else 1
        wt = np.dtype(WIRE[dtype])
        if size == 0:
            out = np.empty(shape, dtype=wt)
        else:
            stp = r.mlx_array_strides(a.h)
            strides = [stp[i] for i in range(nd)]
            ptr = getattr(r, "mlx_array_data_" + dtype)(a.h)
            if not ptr:
                raise MlxError("mlx_array_data_" + dtype, None, self.take_messages())
            # The elements reachable through shape/strides lie between lo and
            # hi (in elements) around the first element.
            lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
            hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
            count = hi - lo + 1
            buf = (C.c_char * (count * wt.itemsize)).from_address(ptr + lo * wt.itemsize)
            flat = np.frombuffer(buf, dtype=wt, count=count)
            view = np.lib.stride_tricks.as_strided(
                flat[-lo:], shape=shape, strides=[s * wt.itemsize for s in strides])
            out = np.array(view, copy=True)
        if dtype == "bfloat16":
            out = bf16_from_bits(out)
        return out, dtype

    # ---- vectors ---------------------------------------------------------

    def vector_from(self, arrays):
        v = self.raw.mlx_vector_array_new()
        for a in arrays:
            self.raw.mlx_vector_array_append_value(v, a.h)
        return v

    def vector_to_list(self, v):
        out = []
        n = self.raw.mlx_vector_array_size(v)
        for i in range(n):
            h = self.raw.mlx_array_new()
            if self.raw.mlx_vector_array_get(C.byref(h), v, i) != 0:
                raise MlxError("mlx_vector_array_get", 1, self.take_messages())
            out.append(MArray(self, h))
        return out

    # ---- ops -------------------------------------------------------------

    def _bind(self, fn):
        f = self._bound.get(fn)
        if f is None:
            params = self.sigs[fn]
            f = getattr(self.raw, fn)
            f.argtypes = [_CTYPES[t] for t, _ in params]
            f.restype = C.c_int
            self._bound[fn] = f
        return f

    def call(self, op, *args):
        """Calls mlx_<op> with the op's own arguments (see the module
        comment). Returns an MArray, or a list of them for vector results.
        Raises MlxError when the call returns non-zero; in that case it also
        checks that the out-param was left as it was (None in .left_as_is
        when it was not)."""
        fn = "mlx_" + op
        f = self._bind(fn)
        params = self.sigs[fn]
        cargs = []
        keep = []  # objects that must outlive the call
        out_kind = params[0][0]
        if out_kind == "mlx_array*":
            res = self.raw.mlx_array_new()
            cargs.append(C.byref(res))
        elif out_kind == "mlx_vector_array*":
            res = self.raw.mlx_vector_array_new()
            cargs.append(C.byref(res))
        else:
            raise TypeError("%s: unsupported result type %s" % (fn, out_kind))
        args = list(args)
        i = 1
        while i < len(params):
            ty, name = params[i]
            if ty == "mlx_stream":
                cargs.append(self.stream)
                i += 1
                continue
            if not args:
                raise TypeError("%s: missing argument %s" % (fn, name))
            v = args.pop(0)
            if ty == "mlx_array":
                cargs.append(v.h if v is not None else Array())
            elif ty == "mlx_vector_array":
                vec = self.vector_from(v)
                keep.append(vec)
                cargs.append(vec)
            elif ty in ("int*", "int64_t*"):
                et = C.c_int if ty == "int*" else C.c_int64
                if v is None:
                    cargs.append(None)
                    n = 0
                else:
                    arr = (et * max(1, len(v)))(*[int(x) for x in v])
                    keep.append(arr)
                    cargs.append(arr)
                    n = len(v)
                if i + 1 < len(params) and params[i + 1][0] == "size_t" \
                        and params[i + 1][1].endswith("_num"):
                    cargs.append(n)
                    i += 1
            elif ty == "mlx_dtype":
                cargs.append(DTYPE_ENUM[v])
            elif ty == "mlx_optional_float":
                cargs.append(OptionalFloat(0.0, False) if v is None else OptionalFloat(v, True))
            elif ty == "mlx_optional_int":
                cargs.append(OptionalInt(0, False) if v is None else OptionalInt(v, True))
            elif ty == "char*":
                cargs.append(v.encode())
            else:
                cargs.append(v)
            i += 1
        if args:
            raise TypeError("%s: %d extra arguments" % (fn, len(args)))
        before = res.ctx
        self.messages.clear()
        rc = f(*cargs)
        for vec in keep:
            if isinstance(vec, VectorArray):
                self.raw.mlx_vector_array_free(vec)
        if rc != 0:
            err = MlxError(fn, rc, self.take_messages())
            err.left_as_is = res.ctx == before
            if res.ctx:
                if out_kind == "mlx_array*":
                    self.raw.mlx_array_free(res)
                else:
                    self.raw.mlx_vector_array_free(res)
            raise err
        if out_kind == "mlx_array*":
            return MArray(self, res)
        out = self.vector_to_list(res)
        self.raw.mlx_vector_array_free(res)
        return out

    def last_error(self):
        if not self.has("mlx_cpu_last_error"):
            return None
        s = self.raw.mlx_cpu_last_error()
        return s.decode("utf-8", "replace") if s else ""

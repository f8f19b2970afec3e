"""The oracle's table: one row per op of API.md's "Tier 1: ops".

Adding an elementwise op is one line (name, numpy reference, dtypes, output
dtype rule, value domain, tolerance factor). Shape, indexing, creation and
linear-algebra ops take a small builder each (shapes.py, build.py). Every
place where MLX's rule differs from numpy's is noted on its row ("MLX:").

Dtype lists: `opt` dtypes may be refused by the library (an error return is
then counted as unsupported, not failed): complex64 beyond the core ops,
per API.md. `rej` dtypes must be refused, as MLX refuses them.
"""
import math

import numpy as np

import build as K
import shapes as S
from kinds import Binary, Func, Reduce, Scan, Unary
from mlx import bf16_round
from rules import (ALL, BOOL, CPLX, FLOAT, INT, REAL, SINT, UINT, at_least_float,
                   promote, sum_dtype)

OPT_C = CPLX  # complex64 is optional outside creation/astype/add/sub/mul/abs

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erfinv(y):
    """erf^-1 in float64: a closed-form first guess (Winitzki's) refined by
    Newton steps on math.erf; |y| < 1."""
    y = np.asarray(y, dtype=np.float64)
    a = 0.147
    ln = np.log1p(-y * y)
    t = 2.0 / (math.pi * a) + ln / 2.0
    x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    for _ in range(4):
        x = x - (_erf(x) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


# ---- dtype-aware references (called as dref(work_dtype, *values)) --------

def _sign(w, x):
    if w == "bool":
        return x
    if w == "complex64":
        m = np.abs(x)
        return np.where(m == 0, x, x / np.where(m == 0, 1, m))
    if w in UINT:
        return (x != 0).astype(x.dtype)
    return np.sign(x)  # MLX: sign(NaN) is 0, numpy gives NaN (no NaN inputs here)


def _square(w, x):
    return x if w == "bool" else x * x  # MLX: square of bool is the bool


def _identity_int(fn):
    """floor/ceil: MLX returns integer and bool arrays unchanged (numpy's
    floor turns them into floats)."""
    def f(w, x):
        return x if w in INT or w == "bool" else fn(x)
    return f


def _round(w, x, decimals):
    """MLX: decimals == 0 rounds halves to even in the dtype; otherwise it
    multiplies by 10**decimals (a float32 constant cast to the dtype),
    rounds, multiplies by the float32 reciprocal and casts back."""
    if w in INT or w == "bool":
        if decimals >= 0:
            return x
        f = np.float32
        scale = f(10.0 ** decimals)
        r = np.rint(x.astype(f) * scale) * f(f(1.0) / scale)
        return r.astype(x.dtype)
    if decimals == 0:
        return np.rint(x)
    scale = np.float32(10.0 ** decimals)
    inv = np.float32(np.float32(1.0) / scale)
    if w == "bfloat16":
        return bf16_round(bf16_round(np.rint(bf16_round(x * bf16_round(scale))))
                          * bf16_round(inv))
    t = x.dtype.type
    return np.rint(x * t(scale)) * t(inv)


def _round_args(rng, d):
    if d in INT or d == "bool":
        return [int(rng.choice([0, -1, -2]))]
    if d in ("float32", "float64"):
        return [int(rng.choice([0, 0, 1, 2, -1]))]
    return [0]


_BF16_MAX = float(np.frombuffer(np.array([0x7F7F0000], dtype=np.uint32).tobytes(),
                                dtype=np.float32)[0])
_FMAX = {"float16": float(np.finfo(np.float16).max), "float32": float(np.finfo(np.float32).max),
         "bfloat16": _BF16_MAX, "float64": float(np.finfo(np.float64).max)}


def _nan_to_num_args(rng, d):
    pick = lambda: None if rng.random() < 0.5 else float(rng.choice([-5.0, 7.5, 100.0]))
    return [float(rng.choice([0.0, -1.0, 3.5])), pick(), pick()]


def _nan_to_num(w, x, nan, posinf, neginf):
    """Unset posinf/neginf mean the dtype's largest/lowest finite value.
    MLX refuses float64 when either is unset (the row lets float64 fail)."""
    if w in INT or w == "bool":
        return x
    t = x.dtype.type
    p = t(_FMAX[w]) if posinf is None else t(posinf)
    n = t(-_FMAX[w]) if neginf is None else t(neginf)
    y = np.where(np.isnan(x), t(nan), x)
    y = np.where(np.isposinf(x), p, y)
    y = np.where(np.isneginf(x), n, y)
    return y.astype(x.dtype)


def _isposinf(w, x):
    if w == "complex64":  # MLX compares with complex(inf, 0)
        return (x.real == np.inf) & (x.imag == 0)
    if w in INT or w == "bool":
        return np.zeros(x.shape, dtype=bool)
    return np.isposinf(x)


def _isneginf(w, x):
    if w == "complex64":
        return (x.real == -np.inf) & (x.imag == 0)
    if w in INT or w == "bool":
        return np.zeros(x.shape, dtype=bool)
    return np.isneginf(x)


def _invert(w, x):
    return ~x if w != "bool" else np.logical_not(x)  # MLX: bool goes to logical_not


def _real(w, x):
    return x.real.astype(np.float32) if w == "complex64" else x


def _imag(w, x):
    return x.imag.astype(np.float32) if w == "complex64" else np.zeros_like(x)


def _to_float32_if_complex(d):
    return "float32" if d == "complex64" else d


# ---- binary references ----------------------------------------------------

def _add(w, a, b):
    return a | b if w == "bool" else a + b  # bool: C++ bool + bool, cast back


def _sub(w, a, b):
    return a ^ b if w == "bool" else a - b  # MLX allows bool - bool; numpy refuses


def _mul(w, a, b):
    return a & b if w == "bool" else a * b


# Integer floor_divide: MLX divides integers with C's truncation toward zero
# in floor_divide (its Divide primitive; ml-explore/mlx#4346 discusses
# flooring it), while its remainder floors (its divmod truncates, as C's
# operators do). We follow MLX's source
# (include/mlx/c/ops.h says so); set False to check Python's floor instead.
FLOOR_DIVIDE_TRUNCATES = True


def _floor_divide(w, a, b):
    """Integers: see FLOOR_DIVIDE_TRUNCATES. Floats: floor(a / b), the
    division rounded to the dtype first, as MLX does."""
    if w == "bool":
        return a & b  # b is true (non-zero divisors)
    if w in INT:
        if FLOOR_DIVIDE_TRUNCATES:
            q = np.floor_divide(a, b)
            return np.where((q < 0) & (q * b != a), q + 1, q).astype(q.dtype)
        return np.floor_divide(a, b)
    if w == "bfloat16":
        return np.floor(bf16_round(a / b))
    return np.floor(a / b)


def _remainder(w, a, b):
    """Result takes b's sign (Python's %), as MLX's remainder does for
    signed integers and floats; unsigned is plain %."""
    if w == "bool":
        return np.zeros(np.broadcast(a, b).shape, dtype=bool)
    return np.remainder(a, b)


def _power(w, a, b):
    """Integers: MLX's pow by squaring wraps in the dtype and gives 0 for a
    negative exponent (numpy raises); bool: a or not b."""
    if w == "bool":
        return a | ~b
    if w in INT:
        neg = b < 0 if w in SINT else np.zeros(b.shape, dtype=bool)
        r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
        return np.where(neg, 0, r).astype(a.dtype)
    return np.power(a, b)


def _shift_work(a, b):
    p = promote(a, b)
    return "uint8" if p == "bool" else p  # MLX shifts bools as uint8


def _logaddexp(a, b):
    return np.logaddexp(a, b)


# ---- reduction references: ref(v, axes, keepdims, *extra) ----------------

def _sum(v, ax, kd):
    return np.sum(v, axis=ax, keepdims=kd, dtype=v.dtype)


def _prod(v, ax, kd):
    return np.prod(v, axis=ax, keepdims=kd, dtype=v.dtype)


def _count(v, ax):
    return float(np.prod([v.shape[a] for a in ax])) if ax else 1.0


def _sum_scale(v, ax, kd, *e):
    return np.sum(np.abs(v), axis=ax, keepdims=kd) * math.sqrt(max(1.0, _count(v, ax)))


def _mean_scale(v, ax, kd, *e):
    return _sum_scale(v, ax, kd) / max(1.0, _count(v, ax))


def _prod_scale(v, ax, kd, *e):
    return np.abs(np.prod(v, axis=ax, keepdims=kd)) * max(1.0, _count(v, ax))


def _var_scale(v, ax, kd, *e):
    return np.mean(np.abs(v) ** 2, axis=ax, keepdims=kd) * 4 if v.size else 1.0


def _argred(fn):
    def f(v, ax, kd):
        axis = ax[0] if len(ax) == 1 else None
        return fn(v, axis=axis, keepdims=kd).astype(np.uint32)
    return f


def _lse(v, ax, kd):
    m = np.max(v, axis=ax, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(v - m), axis=ax, keepdims=True)) + m
    return r if kd else np.squeeze(r, axis=ax)


def _softmax(v, ax, kd, precise):
    if v.size == 0:
        return v
    m = np.max(v, axis=ax, keepdims=True)
    e = np.exp(v - m)
    return e / np.sum(e, axis=ax, keepdims=True)


def _ddof(rng, d):
    return [int(rng.choice([0, 0, 1, 2]))]


def _var_out(d, shp):
    return "float32" if d == "complex64" else at_least_float(d)


# ---- scan identities -----------------------------------------------------

def _lowest(d):
    if d == "bool":
        return False
    if d in INT:
        return np.iinfo(np.dtype(d)).min
    return -np.inf


def _highest(d):
    if d == "bool":
        return True
    if d in INT:
        return np.iinfo(np.dtype(d)).max
    return np.inf


# ---- sorting (src/ops/sort.c) ---------------------------------------------

def _p_axis(rng, shp, d):
    return [int(rng.integers(-len(shp), len(shp)))]


def _p_median(rng, shp, d):
    """Distinct axes (in any order, some negative) holding elements, and
    keepdims; None (draw again) when they hold none."""
    nd = len(shp)
    axes = [int(a) for a in rng.permutation(nd)[:int(rng.integers(1, nd + 1))]]
    if any(shp[a] == 0 for a in axes):
        return None
    return [[a - nd if rng.random() < 0.3 else a for a in axes], bool(rng.random() < 0.5)]


def _median(x, axes, kd):
    """MLX's median: the middle of the sorted axes, or the mean of the two
    middle ones, in at_least_float of the input (float64 here, compared
    with the output dtype's tolerance)."""
    ax = tuple(a % x.ndim for a in axes)
    w = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if x.size == 0:  # numpy's median cannot reshape a size-0 array
        shp = [1 if i in ax else n for i, n in enumerate(x.shape) if kd or i not in ax]
        return np.zeros(shp, dtype=w.dtype)
    return np.median(w, axis=ax, keepdims=kd)


ROWS = [
    # ---- unary: arithmetic -------------------------------------------------
    Unary("abs", np.abs, ALL, out=_to_float32_if_complex, dom="wide", calc="exact"),
    Unary("negative", np.negative, [d for d in ALL if d != "bool"], dom="wide", calc="exact",
          rej=BOOL),  # MLX refuses bool; unsigned wraps as in numpy
    Unary("sign", dref=_sign, dtypes=REAL, calc="exact", opt=OPT_C),
    Unary("square", dref=_square, dtypes=REAL, opt=OPT_C),
    # ---- unary: floating results (integers and bool become float32) -------
    Unary("sqrt", np.sqrt, ALL, out="float", dom="nonneg", opt=OPT_C),
    Unary("rsqrt", lambda x: 1.0 / np.sqrt(x), ALL, out="float", dom="pos", opt=OPT_C),
    Unary("reciprocal", lambda x: 1.0 / x, ALL, out="float", dom="nonzero", opt=OPT_C),
    Unary("exp", np.exp, ALL, out="float", dom="small", opt=OPT_C),
    Unary("expm1", np.expm1, REAL, out="float", dom="small", rej=CPLX),
    Unary("log", np.log, ALL, out="float", dom="pos", opt=OPT_C),
    Unary("log1p", np.log1p, ALL, out="float", dom="log1p", opt=OPT_C),
    Unary("log2", np.log2, ALL, out="float", dom="pos", opt=OPT_C),
    Unary("log10", np.log10, ALL, out="float", dom="pos", opt=OPT_C),
    Unary("sin", np.sin, ALL, out="float", opt=OPT_C),
    Unary("cos", np.cos, ALL, out="float", opt=OPT_C),
    Unary("tan", np.tan, ALL, out="float", dom="tan", opt=OPT_C),
    Unary("arcsin", np.arcsin, ALL, out="float", dom="unit", opt=OPT_C),
    Unary("arccos", np.arccos, ALL, out="float", dom="unit", opt=OPT_C),
    Unary("arctan", np.arctan, ALL, out="float", opt=OPT_C),
    Unary("sinh", np.sinh, ALL, out="float", dom="small", opt=OPT_C),
    Unary("cosh", np.cosh, ALL, out="float", dom="small", opt=OPT_C),
    Unary("tanh", np.tanh, ALL, out="float", opt=OPT_C),
    Unary("arcsinh", np.arcsinh, ALL, out="float", opt=OPT_C),
    Unary("arccosh", np.arccosh, ALL, out="float", dom="ge1", opt=OPT_C),
    Unary("arctanh", np.arctanh, ALL, out="float", dom="open_unit", opt=OPT_C),
    Unary("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x)), REAL, out="float", rej=CPLX),
    Unary("erf", _erf, REAL, out="float", rej=CPLX),  # numpy has no erf: math.erf
    Unary("erfinv", _erfinv, REAL, out="float", dom="open_unit", rej=CPLX, tol=2),
    # MLX multiplies by the constant 180/pi (pi/180) rounded to the dtype.
    Unary("degrees", lambda x: x * (180.0 / math.pi), ALL, out="float", opt=OPT_C),
    Unary("radians", lambda x: x * (math.pi / 180.0), ALL, out="float", opt=OPT_C),
    Unary("floor", dref=_identity_int(np.floor), dtypes=REAL, calc="exact", rej=CPLX),
    Unary("ceil", dref=_identity_int(np.ceil), dtypes=REAL, calc="exact", rej=CPLX),
    Unary("round", dref=_round, dtypes=ALL, calc="exact", args=_round_args, opt=OPT_C),
    # ---- unary: bool results ----------------------------------------------
    # Logical ops: MLX turns complex into bool through the real part only
    # (numpy: either part non-zero), so complex is left out of them.
    Unary("logical_not", np.logical_not, REAL, out="bool"),
    Unary("isnan", np.isnan, ALL, out="bool", dom="special", opt=OPT_C),
    Unary("isinf", np.isinf, ALL, out="bool", dom="special", opt=OPT_C),
    Unary("isfinite", np.isfinite, ALL, out="bool", dom="special", opt=OPT_C),
    Unary("isposinf", dref=_isposinf, dtypes=ALL, out="bool", dom="special", opt=OPT_C),
    Unary("isneginf", dref=_isneginf, dtypes=ALL, out="bool", dom="special", opt=OPT_C),
    # ---- unary: misc ------------------------------------------------------
    Unary("nan_to_num", dref=_nan_to_num, dtypes=REAL, dom="special", calc="exact",
          args=_nan_to_num_args, opt=["float64"]),  # MLX: float64 needs posinf and neginf given
    Unary("bitwise_invert", dref=_invert, dtypes=INT + BOOL, dom="wide", rej=FLOAT + CPLX),
    Unary("stop_gradient", lambda x: x, ALL, dom="special", calc="exact"),
    Unary("copy", lambda x: x, ALL, dom="special", calc="exact"),
    Unary("conjugate", dref=lambda w, x: np.conj(x) if w == "complex64" else x, dtypes=ALL,
          calc="exact"),
    Unary("real", dref=_real, dtypes=ALL, out=_to_float32_if_complex, calc="exact"),
    Unary("imag", dref=_imag, dtypes=ALL, out=_to_float32_if_complex, calc="exact"),

    # ---- binary: arithmetic (MLX promotion, see rules.py) -----------------
    Binary("add", dref=_add, dtypes=ALL),
    Binary("subtract", dref=_sub, dtypes=ALL),
    Binary("multiply", dref=_mul, dtypes=ALL),
    Binary("divide", np.divide, ALL, work="pfloat", dom=("any", "nonzero"), opt=OPT_C),
    Binary("floor_divide", dref=_floor_divide, dtypes=REAL, dom=("any", "nonzero"),
           calc="exact", rej=CPLX),  # MLX refuses complex (floor of complex)
    Binary("remainder", dref=_remainder, dtypes=REAL, dom=("any", "nonzero"), rej=CPLX,
           tol=2),
    Binary("power", dref=_power, dtypes=ALL, dom=("base", "expo"), opt=OPT_C, tol=2),
    # NaN propagates from either side in MLX, as in numpy's maximum/minimum.
    Binary("maximum", np.maximum, ALL, dom=("cmp", "cmp"), calc="exact", opt=OPT_C),
    Binary("minimum", np.minimum, ALL, dom=("cmp", "cmp"), calc="exact", opt=OPT_C),
    Binary("arctan2", np.arctan2, REAL, work="pfloat", rej=CPLX),
    Binary("logaddexp", _logaddexp, REAL, work="pfloat"),
    # ---- binary: comparisons (promote, then compare; bool result) ---------
    Binary("equal", np.equal, ALL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("not_equal", np.not_equal, ALL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("less", np.less, ALL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("less_equal", np.less_equal, ALL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("greater", np.greater, ALL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("greater_equal", np.greater_equal, ALL, out="bool", dom=("cmp", "cmp"),
           opt=OPT_C),
    Binary("logical_and", np.logical_and, REAL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    Binary("logical_or", np.logical_or, REAL, out="bool", dom=("cmp", "cmp"), opt=OPT_C),
    # ---- binary: bitwise (integers and bool; a float promotion is refused,
    # so MLX refuses int64 with uint64, whose promotion is float32) --------
    Binary("bitwise_and", np.bitwise_and, INT + BOOL, dom=("wide", "wide"), rej=FLOAT + CPLX),
    Binary("bitwise_or", np.bitwise_or, INT + BOOL, dom=("wide", "wide"), rej=FLOAT + CPLX),
    Binary("bitwise_xor", np.bitwise_xor, INT + BOOL, dom=("wide", "wide"), rej=FLOAT + CPLX),
    Binary("left_shift", np.left_shift, INT + BOOL, work=_shift_work, dom=("wide", "shift"),
           rej=FLOAT + CPLX),
    Binary("right_shift", np.right_shift, INT + BOOL, work=_shift_work, dom=("wide", "shift"),
           rej=FLOAT + CPLX),

    # ---- reductions --------------------------------------------------------
    # MLX: sum and prod accumulate <=32-bit signed ints as int32, unsigned as
    # uint32 and bool as int32 (numpy: 64-bit); over no axes (a 0-d input,
    # or axes=[]) they return the input unchanged, dtype included.
    Reduce("sum", _sum, ALL, out=lambda d, s: sum_dtype(d), empty_axes_same=True,
           scale=_sum_scale, opt=OPT_C),
    Reduce("prod", _prod, ALL, out=lambda d, s: sum_dtype(d), dom="prod", empty_axes_same=True,
           scale=_prod_scale, opt=OPT_C),
    # MLX: mean of integers and bool is float32.
    Reduce("mean", lambda v, ax, kd: np.mean(v, axis=ax, keepdims=kd), ALL,
           out=lambda d, s: at_least_float(d), scale=_mean_scale, opt=OPT_C),
    # MLX: max and min fail over a size-0 axis.
    Reduce("max", lambda v, ax, kd: np.max(v, axis=ax, keepdims=kd), ALL, work="raw",
           nonempty="axis", opt=OPT_C),
    Reduce("min", lambda v, ax, kd: np.min(v, axis=ax, keepdims=kd), ALL, work="raw",
           nonempty="axis", opt=OPT_C),
    Reduce("all", lambda v, ax, kd: np.all(v != 0, axis=ax, keepdims=kd), REAL, out="bool",
           work="raw", dom="cmp"),
    Reduce("any", lambda v, ax, kd: np.any(v != 0, axis=ax, keepdims=kd), REAL, out="bool",
           work="raw", dom="cmp"),
    # MLX: the index is uint32; a size-0 input fails; ties give the first.
    Reduce("argmax", _argred(np.argmax), REAL, out="uint32", work="raw", dom="cmp",
           forms=("", "_axis"), nonempty="size"),
    Reduce("argmin", _argred(np.argmin), REAL, out="uint32", work="raw", dom="cmp",
           forms=("", "_axis"), nonempty="size"),
    # MLX: a size-0 input fails.
    Reduce("logsumexp", _lse, REAL, out=lambda d, s: at_least_float(d), nonempty="size",
           scale=lambda v, ax, kd: 4.0),
    # var divides by max(N - ddof, 0), as numpy does; complex gives float32.
    Reduce("var", lambda v, ax, kd, ddof: np.var(v, axis=ax, keepdims=kd, ddof=ddof), ALL,
           out=_var_out, extra=_ddof, scale=_var_scale, tol=2, opt=OPT_C),
    Reduce("std", lambda v, ax, kd, ddof: np.std(v, axis=ax, keepdims=kd, ddof=ddof), ALL,
           out=_var_out, extra=_ddof, scale=lambda v, ax, kd, dd: np.sqrt(_var_scale(v, ax, kd)),
           tol=2, opt=OPT_C),
    # MLX: softmax over trailing axes gives at_least_float, other axes come
    # back in the input dtype (astype at the end), so integer inputs give
    # different dtypes by axes: only floating inputs are checked. A size-0
    # input is returned as it is.
    Reduce("softmax", _softmax, FLOAT, out="same", keepdims=False,
           extra=lambda rng, d: [bool(rng.random() < 0.5)]),

    # ---- scans (need ndim >= 1) -------------------------------------------
    # MLX: cumsum keeps the dtype (int8 wraps in int8; numpy widens), bool
    # gives int32; cumprod keeps bool as bool (logical and).
    Scan("cumsum", lambda v, ax, o: np.cumsum(v, axis=ax, dtype=v.dtype), lambda d: 0, ALL,
         out=lambda d: "int32" if d == "bool" else d, scale="sum", opt=OPT_C),
    Scan("cumprod", lambda v, ax, o: np.cumprod(v, axis=ax, dtype=v.dtype), lambda d: 1, ALL,
         dom="prod", tol=4, opt=OPT_C),
    Scan("cummax", lambda v, ax, o: np.maximum.accumulate(v, axis=ax), _lowest, REAL),
    Scan("cummin", lambda v, ax, o: np.minimum.accumulate(v, axis=ax), _highest, REAL),
    Scan("logcumsumexp", lambda v, ax, o: np.logaddexp.accumulate(v, axis=ax),
         lambda d: -np.inf, FLOAT, scale="length"),
]

ROWS += [
    # numpy's stable sort orders as MLX's does (NaN last, -0.0 equal to
    # 0.0, complex64 by real then imaginary part); partition and topk keep
    # MLX's own order, which test_sort checks against MLX's results.
    Func("sort", None, lambda x: np.sort(x.reshape(-1), kind="stable")),
    Func("sort_axis", _p_axis, lambda x, a: np.sort(x, axis=a, kind="stable"), min_ndim=1),
    Func("argsort", None, lambda x: np.argsort(x.reshape(-1), kind="stable").astype(np.uint32),
         out="uint32"),
    Func("argsort_axis", _p_axis,
         lambda x, a: np.argsort(x, axis=a, kind="stable").astype(np.uint32), out="uint32",
         min_ndim=1),
    # MLX: complex64 medians sort lexicographically (numpy's median sorts
    # complex the same way and averages in complex128)
    Func("median", _p_median, _median, out="float", min_ndim=1, calc="hi"),
]

ROWS += S.ROWS + K.ROWS

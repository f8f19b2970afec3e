"""MLX's dtype rules and the oracle's comparison of results.

The promotion table is MLX's (mlx/dtype.cpp, which follows JAX): it differs
from numpy's, e.g. int64 + uint64 is float32, float16 + bfloat16 is float32,
any integer + float16 is float16, and float64 + complex64 is complex64.
"""
import numpy as np

from mlx import CARRIER, DTYPES, to_carrier, bf16_round

BOOL = ["bool"]
UINT = ["uint8", "uint16", "uint32", "uint64"]
SINT = ["int8", "int16", "int32", "int64"]
INT = UINT + SINT
FLOAT = ["float16", "float32", "float64", "bfloat16"]
CPLX = ["complex64"]
INEXACT = FLOAT + CPLX
REAL = BOOL + INT + FLOAT
ALL = BOOL + INT + FLOAT + CPLX
BITS = {"bool": 1, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
        "int8": 8, "int16": 16, "int32": 32, "int64": 64}

# Rows and columns in mlx_dtype order: b u8 u16 u32 u64 i8 i16 i32 i64 f16 f32
# f64 bf16 c64 (written with those short names).
_SHORT = ["b", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16",
          "f32", "f64", "bf16", "c64"]
_TABLE = """
b    u8   u16  u32  u64  i8   i16  i32  i64  f16  f32  f64  bf16 c64
u8   u8   u16  u32  u64  i16  i16  i32  i64  f16  f32  f64  bf16 c64
u16  u16  u16  u32  u64  i32  i32  i32  i64  f16  f32  f64  bf16 c64
u32  u32  u32  u32  u64  i64  i64  i64  i64  f16  f32  f64  bf16 c64
u64  u64  u64  u64  u64  f32  f32  f32  f32  f16  f32  f64  bf16 c64
i8   i16  i32  i64  f32  i8   i16  i32  i64  f16  f32  f64  bf16 c64
i16  i16  i32  i64  f32  i16  i16  i32  i64  f16  f32  f64  bf16 c64
i32  i32  i32  i64  f32  i32  i32  i32  i64  f16  f32  f64  bf16 c64
i64  i64  i64  i64  f32  i64  i64  i64  i64  f16  f32  f64  bf16 c64
f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f64  f32  c64
f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  f32  c64
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c64
bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f32  f32  f64  bf16 c64
c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
"""
_PROMOTE = {}
for _r, _line in enumerate(_TABLE.strip().splitlines()):
    for _c, _name in enumerate(_line.split()):
        _PROMOTE[(DTYPES[_r], DTYPES[_c])] = DTYPES[_SHORT.index(_name)]


def promote(*ds):
    out = ds[0]
    for d in ds[1:]:
        out = _PROMOTE[(out, d)]
    return out


def at_least_float(d):
    return d if d in INEXACT else "float32"


def sum_dtype(d):
    """Accumulator dtype of sum and prod: small integers widen to 32 bits
    (numpy widens to 64 bits on Linux), bool counts as int32."""
    if d in ("int8", "int16", "int32"):
        return "int32"
    if d in ("uint8", "uint16", "uint32"):
        return "uint32"
    if d == "bool":
        return "int32"
    return d


def is_exact(d):
    return d == "bool" or d in INT


def hi(x, d):
    """Carrier values of dtype d as float64 (complex128 for complex)."""
    return np.asarray(x).astype(np.complex128 if d == "complex64" else np.float64)


def round_to(x, d):
    """Rounds high-precision values to dtype d's carrier (for references
    computed exactly in the dtype)."""
    with np.errstate(all="ignore"):
        return to_carrier(x, d)


def in_dtype(fn, d, *xs):
    """Runs fn on carriers of dtype d as numpy computes in that dtype
    (bfloat16: in float32, rounded to bfloat16 after)."""
    with np.errstate(all="ignore"):
        if d == "bfloat16":
            r = fn(*[np.asarray(x, dtype=np.float32) for x in xs])
            return bf16_round(r) if np.asarray(r).dtype.kind == "f" else r
        return fn(*[np.asarray(x).astype(CARRIER[d]) for x in xs])


# (rtol, atol) per floating dtype; an op scales them by its tol factor.
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2),
       "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-13),
       "complex64": (1e-5, 1e-6)}


def compare(got, got_dtype, exp, exp_dtype, factor=1.0, atol_scale=None):
    """Returns None when got matches exp, else a short description of the
    first mismatch. Integers and bools must be equal; floats must agree
    within the dtype's tolerance times factor (NaN where NaN, equal
    infinities). atol_scale (scalar or array broadcastable to exp) widens
    the absolute tolerance for results that sum many terms."""
    if got_dtype != exp_dtype:
        return "dtype %s, expected %s" % (got_dtype, exp_dtype)
    exp = np.asarray(exp)
    got = np.asarray(got)
    if tuple(got.shape) != tuple(exp.shape):
        return "shape %s, expected %s" % (tuple(got.shape), tuple(exp.shape))
    if got.size == 0:
        return None
    if is_exact(exp_dtype):
        e = to_carrier(exp, exp_dtype)
        bad = got != e
    else:
        rtol, atol = TOL[exp_dtype]
        rtol *= factor
        atol *= factor
        if atol_scale is not None:
            atol = atol * np.maximum(1.0, np.abs(np.asarray(atol_scale, dtype=np.float64)))
        g = hi(got, exp_dtype)
        with np.errstate(all="ignore"):
            # Rounded to the result dtype first, so that what overflows
            # there is expected as infinity.
            e = hi(to_carrier(exp, exp_dtype), exp_dtype)
            if exp_dtype == "complex64":
                # Complex values are close when |got - exp| is small next to
                # |exp|; NaN and infinity are matched part by part.
                parts = [(g.real, e.real), (g.imag, e.imag)]
                fin = np.isfinite(e) & np.isfinite(g)
                close = np.abs(g - e) <= atol + rtol * np.abs(e)
                bad = fin & ~close
                for gp, ep in parts:
                    special = ~(np.isfinite(ep) & np.isfinite(gp))
                    same = (np.isnan(gp) & np.isnan(ep)) | (np.isinf(ep) & (gp == ep))
                    bad |= special & ~same
            else:
                gn, en = np.isnan(g), np.isnan(e)
                same_inf = np.isinf(e) & (g == e)
                close = np.abs(g - e) <= atol + rtol * np.abs(e)
                ok = (gn & en) | same_inf | (~gn & ~en & ~np.isinf(e) & close)
                bad = ~ok
    if not np.any(bad):
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    n = int(np.count_nonzero(bad))
    return "%d of %d elements differ; first at %s: got %r, expected %r" % (
        n, exp.size, idx, got[idx].item() if got.ndim else got.item(),
        np.asarray(exp)[idx].item() if exp.ndim else exp.item())

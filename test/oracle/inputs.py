"""Random inputs for the oracle: shapes, values per domain, and layouts.

A value domain names the range an op wants (log wants positives, arcsin
[-1, 1], a divisor non-zero...). Each input is made with a layout: a plain
contiguous copy, or a view made by mlx ops (transpose, broadcast_to, slice
with steps) when the library exports them, so kernels see non-contiguous,
zero-stride and negative-stride inputs.
"""
import numpy as np

from mlx import bf16_round
from rules import INT, UINT

# Moderate integer ranges for the 'any' domain: large enough to exercise
# every byte of the wider types, small enough that sums of a few hundred
# terms stay clear of overflow in the accumulator type.
_ANY_INT = {"int8": (-100, 100), "uint8": (0, 200), "int16": (-3000, 3000),
            "uint16": (0, 6000), "int32": (-100000, 100000),
            "uint32": (0, 200000), "int64": (-1000000, 1000000),
            "uint64": (0, 2000000)}

# Per domain: (float low, float high, int low, int high); ints are clipped to
# the dtype's range. None for the ints means "use _ANY_INT".
DOMAINS = {
    "any": (-10.0, 10.0, None, None),
    "small": (-5.0, 5.0, -5, 5),
    "tiny": (-1.5, 1.5, -3, 3),
    "pos": (0.1, 10.0, 1, 20),
    "nonneg": (0.0, 10.0, 0, 20),
    "unit": (-1.0, 1.0, -1, 1),
    "open_unit": (-0.95, 0.95, 0, 0),
    "ge1": (1.0, 10.0, 1, 10),
    "tan": (-1.3, 1.3, -1, 1),
    "log1p": (-0.9, 10.0, 0, 20),
    "base": (0.5, 3.0, -4, 4),
    "expo": (-2.0, 2.0, 0, 4),
    "index": (0.0, 10.0, 0, 10),
    "prod": (0.8, 1.25, -3, 3),
}


def int_range(d, lo, hi):
    info = np.iinfo(np.dtype(d))
    return max(lo, int(info.min)), min(hi, int(info.max))


def values(rng, shape, d, dom="any"):
    """Returns carrier values of dtype d drawn from domain dom."""
    shape = tuple(int(s) for s in shape)
    if dom.startswith("shift"):
        # Shift counts: 0 .. bits-1 of the promoted type (given in the name).
        n = int(dom[5:])
        hi = n - 1 if d not in INT else min(n - 1, int(np.iinfo(np.dtype(d)).max))
        if d == "bool":
            return rng.integers(0, 2, size=shape).astype(bool)
        return rng.integers(0, hi + 1, size=shape).astype(d)
    if d == "bool":
        if dom in ("pos", "ge1", "nonzero"):
            return np.ones(shape, dtype=bool)
        if dom == "open_unit":
            return np.zeros(shape, dtype=bool)
        return rng.integers(0, 2, size=shape).astype(bool)
    if dom == "wide":
        if d in INT:
            info = np.iinfo(np.dtype(d))
            return rng.integers(int(info.min), int(info.max), size=shape,
                                dtype=np.dtype(d), endpoint=True)
        dom = "any"
    if dom == "cmp":
        # Few distinct values, so equal elements are common.
        pool = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
        if d in INT:
            pool = np.array([0, 1, 2, 3] if d in UINT else [-2, -1, 0, 1, 2, 3])
        v = rng.choice(pool, size=shape)
        return _cast(rng, v, d, imag_pool=pool)
    if dom == "nonzero":
        if d in INT:
            lo, hi = int_range(d, -20, 20)
            v = rng.integers(max(lo, 1), hi + 1, size=shape)
            if d not in UINT:
                v = v * rng.choice([-1, 1], size=shape)
            return v.astype(d)
        v = rng.uniform(0.5, 10.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        return _cast(rng, v, d)
    if dom == "special":
        if d in INT:
            dom = "any"
        else:
            v = rng.uniform(-10.0, 10.0, size=shape)
            pick = rng.random(size=shape)
            v = np.where(pick < 0.1, np.nan, v)
            v = np.where((pick >= 0.1) & (pick < 0.2), np.inf, v)
            v = np.where((pick >= 0.2) & (pick < 0.3), -np.inf, v)
            return _cast(rng, v, d, special=True)
    if dom == "prod" and d == "complex64":
        # Magnitudes near 1, so long products stay finite.
        z = rng.uniform(0.95, 1.05, size=shape) * np.exp(1j * rng.uniform(-np.pi, np.pi, size=shape))
        return z.astype(np.complex64)
    flo, fhi, ilo, ihi = DOMAINS[dom]
    if d in INT:
        if ilo is None:
            lo, hi = _ANY_INT[d]
        else:
            lo, hi = int_range(d, ilo, ihi)
        return rng.integers(lo, hi + 1, size=shape).astype(d)
    return _cast(rng, rng.uniform(flo, fhi, size=shape), d, lohi=(flo, fhi))


def _cast(rng, v, d, imag_pool=None, special=False, lohi=(-10.0, 10.0)):
    if d in INT:
        return v.astype(d)
    if d == "complex64":
        if imag_pool is not None:
            im = rng.choice(imag_pool, size=v.shape)
        elif special:
            im = rng.uniform(-10.0, 10.0, size=v.shape)
        else:
            im = rng.uniform(lohi[0], lohi[1], size=v.shape)
        return (v + 1j * im).astype(np.complex64)
    if d == "bfloat16":
        return bf16_round(v)
    return np.asarray(v).astype(d)


# Dimension sizes: many small ones, 0 and 1 for the edge cases, and lengths
# around SIMD widths (8, 16, 17...).
_DIMS = [0, 1, 1, 2, 2, 3, 3, 4, 5, 7, 8, 9, 16, 17]
_VECTOR_LENGTHS = [1, 3, 7, 8, 15, 16, 31, 33, 64, 100, 257, 1000]


def shape(rng, k=2, min_ndim=0, max_ndim=4):
    """A random shape. k selects a flavour so every op meets each one: 0 a
    1-d vector of a SIMD-ish length, 1 a 0-d or empty array, else random."""
    if k == 0 and min_ndim <= 1 <= max_ndim:
        return (int(rng.choice(_VECTOR_LENGTHS)),)
    if k == 1:
        if min_ndim == 0 and rng.random() < 0.5:
            return ()
        nd = int(rng.integers(max(1, min_ndim), max_ndim + 1))
        s = [int(rng.choice(_DIMS[2:])) for _ in range(nd)]
        s[int(rng.integers(0, nd))] = 0
        return tuple(s)
    nd = int(rng.integers(min_ndim, max_ndim + 1))
    return tuple(int(rng.choice(_DIMS[1:] if rng.random() < 0.9 else _DIMS)) for _ in range(nd))


def big_shape(rng):
    """Large enough for the vector main loops and the thread pool."""
    return [(70001,), (3, 30011), (257, 259)][int(rng.integers(0, 3))]


def broadcast_pair(rng, out):
    """Two shapes that broadcast to out: suffixes of it with some axes 1."""
    res = []
    for _ in range(2):
        m = len(out) if rng.random() < 0.6 else int(rng.integers(0, len(out) + 1))
        s = [1 if rng.random() < 0.3 else d for d in out[len(out) - m:]]
        res.append(tuple(s))
    return res


def broadcastable_to(rng, out):
    return broadcast_pair(rng, out)[0]


class Input:
    """One argument: its carrier values (as the op sees them), the mlx
    array, and how the array was made (for failure reports)."""

    def __init__(self, vals, arr, dtype, how):
        self.vals = vals
        self.arr = arr
        self.dtype = dtype
        self.how = how

    def describe(self):
        return "%s%s %s" % (self.dtype, tuple(np.shape(self.vals)), self.how)


class Maker:
    """Makes Inputs, choosing among the layouts the library can build."""

    def __init__(self, lib):
        self.lib = lib
        self.layouts = ["contiguous"]
        if lib.has("mlx_transpose_axes") or lib.has("mlx_transpose"):
            self.layouts.append("transpose")
        if lib.has("mlx_broadcast_to"):
            self.layouts.append("broadcast")
        if lib.has("mlx_slice"):
            self.layouts.append("slice")

    def make(self, rng, shp, d, dom="any", layout=None, vals=None):
        """An Input of shape shp and dtype d. vals, when given, fixes the
        values (then broadcast layouts are not used)."""
        shp = tuple(shp)
        if layout is None:
            if rng.random() < 0.45:
                layout = "contiguous"
            else:
                layout = str(rng.choice(self.layouts))
        if layout == "transpose" and len(shp) >= 2:
            return self._transposed(rng, shp, d, dom, vals)
        if layout == "broadcast" and vals is None and any(s != 1 for s in shp):
            return self._broadcast(rng, shp, d, dom)
        if layout == "slice" and len(shp) >= 1:
            return self._sliced(rng, shp, d, dom, vals)
        v = values(rng, shp, d, dom) if vals is None else vals
        return Input(v, self.lib.from_numpy(v, d), d, "contiguous")

    def _transposed(self, rng, shp, d, dom, vals):
        nd = len(shp)
        if self.lib.has("mlx_transpose_axes"):
            perm = [int(p) for p in rng.permutation(nd)]
            if perm == list(range(nd)):
                perm = perm[::-1]
        else:
            perm = list(range(nd))[::-1]
        base_shape = [0] * nd
        for i, p in enumerate(perm):
            base_shape[p] = shp[i]
        if vals is None:
            base = values(rng, base_shape, d, dom)
        else:
            base = np.ascontiguousarray(np.transpose(vals, np.argsort(perm)))
        b = self.lib.from_numpy(base, d)
        if self.lib.has("mlx_transpose_axes"):
            arr = self.lib.call("transpose_axes", b, perm)
        else:
            arr = self.lib.call("transpose", b)
        b.free()
        return Input(np.transpose(base, perm), arr, d,
                     "transpose_axes(%s) of %s" % (perm, tuple(base_shape)))

    def _broadcast(self, rng, shp, d, dom):
        base_shape = [1 if (s != 1 and rng.random() < 0.5) else s for s in shp]
        if base_shape == list(shp):
            i = [j for j, s in enumerate(shp) if s != 1][0]
            base_shape[i] = 1
        lead = 0
        while lead < len(base_shape) and base_shape[lead] == 1 and rng.random() < 0.5:
            lead += 1
        base_shape = base_shape[lead:]
        base = values(rng, base_shape, d, dom)
        b = self.lib.from_numpy(base, d)
        arr = self.lib.call("broadcast_to", b, list(shp))
        b.free()
        return Input(np.broadcast_to(base, shp).copy(), arr, d,
                     "broadcast_to of %s" % (tuple(base_shape),))

    def _sliced(self, rng, shp, d, dom, vals):
        starts, stops, steps, base_shape, py = [], [], [], [], []
        for n in shp:
            step = int(rng.choice([1, 2, 3, -1, -2]))
            extra = int(rng.integers(0, 3))
            size = max(1, n * abs(step) + extra)
            off = int(rng.integers(0, extra + 1))
            if n == 0:
                start = stop = off
            elif step > 0:
                start = off
                stop = start + n * step
            else:
                start = size - 1 - off
                stop = start + n * step
                if stop < 0:
                    stop = -size - 1  # before element 0, as in Python
            starts.append(start)
            stops.append(stop)
            steps.append(step)
            base_shape.append(size)
            py.append(slice(start, stop, step))
        py = tuple(py)
        if vals is None:
            base = values(rng, base_shape, d, dom)
        else:
            base = values(rng, base_shape, d, "any")
            base[py] = vals
        b = self.lib.from_numpy(base, d)
        arr = self.lib.call("slice", b, starts, stops, steps)
        b.free()
        v = base[py]
        assert v.shape == shp, (v.shape, shp)
        return Input(v.copy(), arr, d, "slice(%s, %s, %s) of %s" % (
            starts, stops, steps, tuple(base_shape)))

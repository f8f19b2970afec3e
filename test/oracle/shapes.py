"""Oracle rows for shape, layout and indexing ops.

Most are Func rows: a parameter generator (rng, input shape, dtype) ->
the op's extra C arguments (or None to draw another shape), and a numpy
reference taking the input and those arguments. The rest (several arrays
in or out, indices) are Custom builders.
"""
import numpy as np

import inputs as I
from kinds import Case, Custom, Func
from mlx import to_carrier
from rules import ALL, SINT, promote


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def factor_shape(rng, n, min_nd=0, max_nd=4):
    """A random shape with n elements and min_nd..max_nd dims."""
    nd = int(rng.integers(max(min_nd, 0 if n == 1 else 1), max_nd + 1))
    if n == 0:
        s = [int(rng.choice([1, 2, 3])) for _ in range(nd)]
        s[int(rng.integers(0, nd))] = 0
        return s
    s, rest = [], n
    for _ in range(max(nd - 1, 0)):
        d = int(rng.choice(_divisors(rest)))
        s.append(d)
        rest //= d
    if nd:
        s.append(rest)
        rng.shuffle(s)
    return [int(x) for x in s]


def _size(shp):
    return int(np.prod(shp, dtype=np.int64))


def _ax(rng, nd, extra=0):
    """A random axis of an (nd + extra)-dim array, negative half the time."""
    n = nd + extra
    a = int(rng.integers(0, n))
    return a - n if rng.random() < 0.5 else a


# ---- parameter generators ---------------------------------------------------

def p_reshape(rng, shp, d):
    n = _size(shp)
    new = factor_shape(rng, n)
    if n > 0 and new and rng.random() < 0.3:
        new[int(rng.integers(0, len(new)))] = -1
    return [new]


def r_flatten(x, s, e):
    nd = x.ndim
    if nd == 0:
        return x.reshape(1)
    s = max(0, s + nd if s < 0 else s)
    e = min(nd - 1, e + nd if e < 0 else e)
    return x.reshape(x.shape[:s] + (_size(x.shape[s:e + 1]),) + x.shape[e + 1:])


def p_flatten(rng, shp, d):
    nd = len(shp)
    if nd == 0:
        return [0, -1]
    s = int(rng.integers(0, nd))
    e = int(rng.integers(s, nd))
    return [s - nd if rng.random() < 0.3 else s, e - nd if rng.random() < 0.5 else e]


def p_unflatten(rng, shp, d):
    nd = len(shp)
    ax = _ax(rng, nd)
    n = shp[ax]
    new = factor_shape(rng, n, min_nd=1, max_nd=3)
    if n > 0 and rng.random() < 0.3:
        new[int(rng.integers(0, len(new)))] = -1
    return [ax, new]


def r_unflatten(x, ax, new):
    ax = ax % x.ndim
    n = x.shape[ax]
    new = list(new)
    if -1 in new:
        known = _size([v for v in new if v != -1])
        new[new.index(-1)] = n // known
    return x.reshape(x.shape[:ax] + tuple(new) + x.shape[ax + 1:])


def p_perm(rng, shp, d):
    nd = len(shp)
    return [[int(p) - (nd if rng.random() < 0.3 else 0) for p in rng.permutation(nd)]]


def p_two_axes(rng, shp, d):
    nd = len(shp)
    return [_ax(rng, nd), _ax(rng, nd)]


def p_expand(rng, shp, d):
    return [_ax(rng, len(shp), 1)]


def p_expand_axes(rng, shp, d):
    k = int(rng.integers(1, 4))
    out = len(shp) + k
    pos = [int(p) for p in rng.permutation(out)[:k]]
    return [[p - out if rng.random() < 0.4 else p for p in pos]]


def shapes_with_ones(rng, k):
    nd = int(rng.integers(0 if k else 1, 5))
    return tuple(1 if rng.random() < 0.5 else int(rng.choice([0, 2, 3, 5])) for _ in range(nd))


def p_squeeze_axis(rng, shp, d):
    ones = [i for i, s in enumerate(shp) if s == 1]
    if not ones:
        return None
    a = int(rng.choice(ones))
    return [a - len(shp) if rng.random() < 0.4 else a]


def p_squeeze_axes(rng, shp, d):
    ones = [i for i, s in enumerate(shp) if s == 1]
    m = int(rng.integers(0, len(ones) + 1))
    pick = [int(a) for a in rng.permutation(ones)[:m]] if ones else []
    return [[a - len(shp) if rng.random() < 0.4 else a for a in pick]]


def p_broadcast_to(rng, shp, d):
    lead = [int(rng.choice([1, 2, 3, 0])) if rng.random() < 0.9 else 0
            for _ in range(int(rng.integers(0, 3)))]
    if len(shp) + len(lead) > 6:
        lead = []
    tail = [int(rng.choice([1, 2, 4, 5])) if s == 1 and rng.random() < 0.7 else s for s in shp]
    return [lead + tail]


def slice_params(rng, shp):
    """Random Python-style start/stop/step per axis (negative values and
    out-of-range ones included, as MLX normalizes them like Python)."""
    starts, stops, steps = [], [], []
    for n in shp:
        step = int(rng.choice([1, 1, 2, 3, -1, -2]))
        lo = -n
        start = int(rng.integers(lo, n + 2))
        stop = int(rng.integers(-n - 1, n + 2))
        starts.append(start)
        stops.append(stop)
        steps.append(step)
    return starts, stops, steps


def py_slices(starts, stops, steps):
    return tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))


def p_slice(rng, shp, d):
    return list(slice_params(rng, shp))


def p_tile(rng, shp, d):
    m = int(rng.integers(0, len(shp) + 2))
    return [[int(rng.choice([0, 1, 1, 2, 3])) for _ in range(m)]]


def p_repeat(rng, shp, d):
    return [int(rng.choice([0, 1, 2, 3]))]


def p_repeat_axis(rng, shp, d):
    return [int(rng.choice([0, 1, 2, 3])), _ax(rng, len(shp))]


def p_roll(rng, shp, d):
    return [[int(rng.integers(-9, 10)) for _ in range(int(rng.integers(1, 4)))]]


def p_as_strided(rng, shp, d):
    n = _size(shp)
    nd = int(rng.integers(0, 4))
    out = [int(rng.choice([0, 1, 2, 3, 4])) if n == 0 else int(rng.choice([1, 2, 3, 4]))
           for _ in range(nd)]
    if n == 0 and 0 not in out:
        if not out:
            return None
        out[0] = 0
    strides = [int(rng.integers(0, 4)) for _ in range(nd)]
    if _size(out) == 0:
        return [out, strides, 0]
    reach = sum((s - 1) * st for s, st in zip(out, strides))
    if reach >= n:
        return None
    return [out, strides, int(rng.integers(0, n - reach))]


def r_as_strided(x, shape, strides, offset):
    flat = np.ascontiguousarray(x).reshape(-1)
    it = flat.itemsize
    if _size(shape) == 0:
        return np.zeros(shape, dtype=flat.dtype)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=shape,
                                           strides=[s * it for s in strides]).copy()


def p_diag(rng, shp, d):
    return [int(rng.integers(-3, 4))]


def p_diagonal(rng, shp, d):
    nd = len(shp)
    a1 = int(rng.integers(0, nd))
    a2 = int(rng.choice([a for a in range(nd) if a != a1]))
    neg = lambda a: a - nd if rng.random() < 0.3 else a
    return [int(rng.integers(-3, 4)), neg(a1), neg(a2)]


def shapes_2d_plus(rng, k):
    nd = int(rng.integers(2, 5))
    s = [int(rng.choice([0, 1, 2, 3, 4, 5])) if (k == 1 or rng.random() < 0.1)
         else int(rng.choice([1, 2, 3, 4, 5])) for _ in range(nd)]
    return tuple(s)


def shapes_1d_2d(rng, k):
    nd = int(rng.integers(1, 3))
    return tuple(int(rng.choice([0, 1, 2, 3, 5, 7] if k == 1 else [1, 2, 3, 5, 7]))
                 for _ in range(nd))


def p_contiguous(rng, shp, d):
    return [bool(rng.random() < 0.5)]


# ---- custom builders ------------------------------------------------------------

_IDX = ["int32", "int64", "uint32", "int8", "uint8", "int16", "uint16", "uint64"]


def _indices(rng, ctx, shp, n):
    """An index Input of shape shp addressing an axis of length n (negative
    indices count from the end, for signed index dtypes)."""
    d = str(rng.choice(_IDX))
    if n == 0:
        vals = np.zeros(shp, dtype=d)
    else:
        lo = -n if d in SINT else 0
        hi = n - 1
        if d in ("int8", "uint8"):
            lo, hi = max(lo, np.iinfo(d).min), min(hi, np.iinfo(d).max)
        vals = rng.integers(lo, hi + 1, size=shp).astype(d)
    return ctx.maker.make(rng, shp, d, vals=vals)


def b_take(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, I.shape(rng, k, 0, 3), d)
    n = x.vals.size
    ishp = I.shape(rng, 2, 0, 3) if n else (0,)
    idx = _indices(rng, ctx, ishp, n)
    exp = np.take(x.vals.reshape(-1), idx.vals.astype(np.int64)) if n else \
        np.zeros(ishp, dtype=x.vals.dtype)
    return Case([x.arr, idx.arr], [x, idx], [(exp, d)])


def b_take_axis(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, I.shape(rng, k, 1, 3), d)
    nd = x.vals.ndim
    ax = _ax(rng, nd)
    n = x.vals.shape[ax]
    ishp = I.shape(rng, 2, 0, 2) if n else (0,)
    idx = _indices(rng, ctx, ishp, n)
    exp = np.take(x.vals, idx.vals.astype(np.int64), axis=ax)
    return Case([x.arr, idx.arr, ax], [x, idx], [(exp, d)], params="axis=%d" % ax)


def b_take_along_axis(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, I.shape(rng, k, 1, 3), d)
    nd = x.vals.ndim
    ax = _ax(rng, nd)
    n = x.vals.shape[ax]
    ishp = [s if rng.random() < 0.7 else 1 for s in x.vals.shape]
    ishp[ax] = int(rng.integers(0, 4)) if n else 0
    idx = _indices(rng, ctx, tuple(ishp), n)
    exp = np.take_along_axis(x.vals, idx.vals.astype(np.int64), axis=ax)
    return Case([x.arr, idx.arr, ax], [x, idx], [(exp, d)], params="axis=%d" % ax)


def b_slice_update(ctx, rng, combo, k):
    d = combo[0]
    src = ctx.maker.make(rng, I.shape(rng, k, 1, 4), d)
    st, sp, sd = slice_params(rng, src.vals.shape)
    sl = py_slices(st, sp, sd)
    region = src.vals[sl].shape
    du = str(rng.choice(ALL)) if rng.random() < 0.3 else d
    ushape = I.broadcastable_to(rng, region)
    upd = ctx.maker.make(rng, ushape, du)
    exp = src.vals.copy()
    exp[sl] = np.broadcast_to(to_carrier(upd.vals, d), region)
    return Case([src.arr, upd.arr, st, sp, sd], [src, upd], [(exp, d)],
                params="start=%s stop=%s strides=%s" % (st, sp, sd))


def b_pad(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, I.shape(rng, k, 1, 3), d)
    nd = x.vals.ndim
    mode = str(rng.choice(["constant", "constant", "edge", "reflect", "symmetric"]))
    if mode == "constant":
        m = int(rng.integers(0, nd + 1))
        axes = [int(a) for a in rng.permutation(nd)[:m]]
    else:
        axes = list(range(nd))  # MLX's edge padding reads the widths by axis
    low, high = [], []
    for a in axes:
        empty = x.vals.shape[a] == 0 and mode != "constant"
        low.append(0 if empty else int(rng.integers(0, 4)))
        high.append(0 if empty else int(rng.integers(0, 4)))
    dv = str(rng.choice(ALL)) if rng.random() < 0.3 else d
    pv = ctx.maker.make(rng, (), dv, layout="contiguous")
    width = [(0, 0)] * nd
    for a, lo, hi in zip(axes, low, high):
        width[a] = (lo, hi)
    if mode == "constant":
        exp = np.pad(x.vals, width, mode="constant",
                     constant_values=to_carrier(pv.vals, d)[()])
    else:
        exp = np.pad(x.vals, width, mode=mode)
    neg = [a - nd if rng.random() < 0.3 else a for a in axes]
    return Case([x.arr, neg, low, high, pv.arr, mode], [x, pv], [(exp, d)],
                params="axes=%s low=%s high=%s mode=%s" % (neg, low, high, mode))


def _list_dtypes(rng, d, n):
    """Dtypes for a list of n arrays: all d, or some mixed in."""
    if rng.random() < 0.7:
        return [d] * n
    return [d if rng.random() < 0.5 else str(rng.choice(ALL)) for _ in range(n)]


def b_concatenate(ctx, rng, combo, k, axis_form):
    d = combo[0]
    n = int(rng.integers(1, 4))
    base = list(I.shape(rng, k, 1 if axis_form else 0, 3))
    nd = len(base)
    ax = _ax(rng, nd) if axis_form else None
    dts = _list_dtypes(rng, d, n)
    xs = []
    for dt in dts:
        s = list(base)
        if axis_form:
            s[ax] = int(rng.choice([0, 1, 2, 3]))
        else:
            s = list(I.shape(rng, 2, 0, 3))
        xs.append(ctx.maker.make(rng, s, dt))
    out = promote(*dts)
    vals = [to_carrier(x.vals, out) for x in xs]
    exp = np.concatenate(vals, axis=ax) if axis_form else np.concatenate(
        [v.reshape(-1) for v in vals])
    args = [[x.arr for x in xs]] + ([ax] if axis_form else [])
    return Case(args, xs, [(exp, out)], params=("axis=%d" % ax) if axis_form else "")


def b_stack(ctx, rng, combo, k, axis_form):
    d = combo[0]
    n = int(rng.integers(1, 4))
    shp = I.shape(rng, k, 0, 3)
    ax = _ax(rng, len(shp), 1) if axis_form else 0
    dts = _list_dtypes(rng, d, n)
    xs = [ctx.maker.make(rng, shp, dt) for dt in dts]
    out = promote(*dts)
    exp = np.stack([to_carrier(x.vals, out) for x in xs], axis=ax)
    args = [[x.arr for x in xs]] + ([ax] if axis_form else [])
    return Case(args, xs, [(exp, out)], params="axis=%d" % ax)


def b_split(ctx, rng, combo, k):
    d = combo[0]
    shp = list(I.shape(rng, k, 1, 3))
    ax = _ax(rng, len(shp))
    num = int(rng.choice([1, 2, 3]))
    shp[ax] = num * int(rng.choice([0, 1, 2, 3]))
    x = ctx.maker.make(rng, shp, d)
    exp = [(p, d) for p in np.split(x.vals, num, axis=ax)]
    return Case([x.arr, num, ax], [x], exp, params="num_splits=%d axis=%d" % (num, ax))


def b_split_sections(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, I.shape(rng, k, 1, 3), d)
    ax = _ax(rng, x.vals.ndim)
    n = x.vals.shape[ax]
    m = int(rng.integers(0, 4))
    idx = sorted(int(v) for v in rng.integers(0, n + 2, size=m))
    if rng.random() < 0.2:
        idx = idx[::-1]  # unsorted: pieces between decreasing indices are empty
    pieces = []
    prev = 0
    for i in idx + [None]:
        sl = [slice(None)] * x.vals.ndim
        sl[ax] = slice(prev, i)
        pieces.append(x.vals[tuple(sl)])
        prev = i
    return Case([x.arr, idx, ax], [x], [(p, d) for p in pieces],
                params="indices=%s axis=%d" % (idx, ax))


def b_broadcast_arrays(ctx, rng, combo, k):
    d = combo[0]
    out = I.shape(rng, k, 0, 4)
    n = int(rng.integers(1, 4))
    dts = _list_dtypes(rng, d, n)
    xs = [ctx.maker.make(rng, I.broadcastable_to(rng, out) if i else out, dt)
          for i, dt in enumerate(dts)]
    rng.shuffle(xs)
    full = np.broadcast_shapes(*[x.vals.shape for x in xs])
    exp = [(np.broadcast_to(x.vals, full), x.dtype) for x in xs]
    return Case([[x.arr for x in xs]], xs, exp)


def b_meshgrid(ctx, rng, combo, k):
    d = combo[0]
    n = int(rng.integers(1, 4))
    dts = _list_dtypes(rng, d, n)
    xs = [ctx.maker.make(rng, I.shape(rng, 2, 0, 2), dt) for dt in dts]
    sparse = bool(rng.random() < 0.4)
    indexing = str(rng.choice(["xy", "ij"]))
    grids = np.meshgrid(*[x.vals for x in xs], sparse=sparse, indexing=indexing)
    exp = [(np.array(g), x.dtype) for g, x in zip(grids, xs)]
    return Case([[x.arr for x in xs], sparse, indexing], xs, exp,
                params="sparse=%s indexing=%s" % (sparse, indexing))


def b_trace(ctx, rng, combo, k):
    from rules import sum_dtype, is_exact, hi
    d = combo[0]
    x = ctx.maker.make(rng, shapes_2d_plus(rng, k), d)
    off, a1, a2 = p_diagonal(rng, x.vals.shape, d)
    dt = str(rng.choice([d, d, "int32", "float32", "int8", "float64"]))
    out = sum_dtype(dt)  # MLX: trace sums astype(diagonal, dtype) with sum's rule
    diag = to_carrier(np.diagonal(x.vals, off, a1, a2), dt)
    if is_exact(out):
        exp = np.sum(to_carrier(diag, out), axis=-1, dtype=np.dtype(to_carrier(0, out).dtype))
    else:
        exp = np.sum(hi(diag, dt), axis=-1)
    return Case([x.arr, off, a1, a2, dt], [x], [(exp, out)], optional="complex64" in (d, dt),
                params="offset=%d axis1=%d axis2=%d dtype=%s" % (off, a1, a2, dt))


ROWS = [
    Func("reshape", p_reshape, lambda x, s: x.reshape(s)),
    # MLX: a 0-d array flattens to shape (1,); axes are clamped to the array.
    Func("flatten", p_flatten, r_flatten),
    Func("unflatten", p_unflatten, r_unflatten, min_ndim=1),
    Func("transpose", None, np.transpose),
    Func("transpose_axes", p_perm, lambda x, p: np.transpose(x, [a % max(x.ndim, 1) for a in p])),
    Func("swapaxes", p_two_axes, np.swapaxes, min_ndim=1),
    Func("moveaxis", p_two_axes, np.moveaxis, min_ndim=1),
    Func("expand_dims", p_expand, np.expand_dims),
    Func("expand_dims_axes", p_expand_axes, lambda x, a: np.expand_dims(x, tuple(a)), max_ndim=3),
    Func("squeeze", None, np.squeeze, shapes=shapes_with_ones),
    Func("squeeze_axis", p_squeeze_axis, np.squeeze, shapes=shapes_with_ones),
    Func("squeeze_axes", p_squeeze_axes, lambda x, a: np.squeeze(x, tuple(a)),
         shapes=shapes_with_ones),
    Func("broadcast_to", p_broadcast_to, lambda x, s: np.broadcast_to(x, s).copy(),
         shapes=shapes_with_ones),
    Custom("broadcast_arrays", b_broadcast_arrays),
    Custom("concatenate", lambda c, r, co, k: b_concatenate(c, r, co, k, False)),
    Custom("concatenate_axis", lambda c, r, co, k: b_concatenate(c, r, co, k, True)),
    Custom("stack", lambda c, r, co, k: b_stack(c, r, co, k, False)),
    Custom("stack_axis", lambda c, r, co, k: b_stack(c, r, co, k, True)),
    Custom("split", b_split),
    Custom("split_sections", b_split_sections),
    Func("slice", p_slice, lambda x, a, b, c: x[py_slices(a, b, c)].copy(), min_ndim=1),
    Custom("slice_update", b_slice_update),
    Custom("take", b_take),
    Custom("take_axis", b_take_axis),
    Custom("take_along_axis", b_take_along_axis),
    Custom("pad", b_pad),
    Func("tile", p_tile, lambda x, r: np.tile(x, r) if r else x.copy(), max_ndim=3),
    Func("repeat", p_repeat, lambda x, r: np.repeat(x, r), max_ndim=3),
    Func("repeat_axis", p_repeat_axis, lambda x, r, a: np.repeat(x, r, axis=a), min_ndim=1,
         max_ndim=3),
    # mlx_roll has no axes: the array rolls as flattened, by the sum of shifts.
    Func("roll", p_roll, lambda x, s: np.roll(x, int(sum(s)))),
    Func("contiguous", p_contiguous, lambda x, c: x.copy()),
    Func("as_strided", p_as_strided, r_as_strided, max_ndim=3),
    Func("atleast_1d", None, np.atleast_1d),
    Func("atleast_2d", None, np.atleast_2d),
    Func("atleast_3d", None, np.atleast_3d),
    Func("diag", p_diag, lambda x, k: np.diag(x, k), shapes=shapes_1d_2d),
    Func("diagonal", p_diagonal, lambda x, o, a, b: np.diagonal(x, o, a, b).copy(),
         shapes=shapes_2d_plus),
    Custom("trace", b_trace),
]

"""Oracle rows for creation, selection, linear algebra and misc ops, plus
the bad-input rows (must fail with one message) and the crash probes
(must only survive)."""
import numpy as np

import inputs as I
from kinds import Case, Custom, Error, Probe
from mlx import to_carrier
from rules import (ALL, CPLX, FLOAT, INEXACT, INT, REAL, SINT, UINT, hi, is_exact, promote)


def _shape(rng, k, lo=0, hi_=4):
    return I.shape(rng, k, lo, hi_)


def _float_ref(exp_fn, out, *vals):
    """Evaluates exp_fn on float64/complex128 copies of vals (already cast
    to out) - for results compared with a tolerance."""
    with np.errstate(all="ignore"):
        return exp_fn(*[hi(v, out) for v in vals])


# ---- creation ------------------------------------------------------------------

def b_zeros_ones(value):
    def b(ctx, rng, combo, k):
        d = combo[0]
        shp = list(_shape(rng, k))
        return Case([shp, d], [], [(np.full(shp, value, dtype=to_carrier(0, d).dtype), d)],
                    params="shape=%s dtype=%s" % (shp, d))
    return b


def b_full(ctx, rng, combo, k):
    d = combo[0]
    shp = _shape(rng, k)
    dv = str(rng.choice(ALL)) if rng.random() < 0.5 else d
    v = ctx.maker.make(rng, I.broadcastable_to(rng, shp), dv)
    exp = np.broadcast_to(to_carrier(v.vals, d), shp)
    return Case([list(shp), v.arr, d], [v], [(exp, d)], params="shape=%s dtype=%s" % (shp, d))


def b_like(value):
    def b(ctx, rng, combo, k):
        d = combo[0]
        x = ctx.maker.make(rng, _shape(rng, k), d)
        return Case([x.arr], [x], [(np.full(x.vals.shape, value).astype(x.vals.dtype), d)])
    return b


def b_full_like(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, _shape(rng, k), str(rng.choice(ALL)))
    v = ctx.maker.make(rng, I.broadcastable_to(rng, x.vals.shape), str(rng.choice(ALL)))
    # MLX: the result has the broadcast shape of a and vals, cast to dtype.
    full = np.broadcast_shapes(x.vals.shape, v.vals.shape)
    exp = np.broadcast_to(to_carrier(v.vals, d), full)
    return Case([x.arr, v.arr, d], [x, v], [(exp, d)], params="dtype=%s" % d)


def b_arange(ctx, rng, combo, k):
    """MLX fills an arange by repeated addition of step in the dtype,
    starting from start cast to the dtype (so integer dtypes see integer
    start and step here, where that and numpy agree); the length is
    ceil((stop - start) / step) computed in double."""
    d = combo[0]
    if d == "bool":
        return Case([0.0, 3.0, 1.0, d], error=True, params="arange of bool")
    if d in INT:
        lo = 0 if d in UINT else -20
        start = float(rng.integers(lo, 20))
        step = float(rng.choice([1, 2, 3, -1, -2] if d in SINT else [1, 2, 3]))
        stop = start + step * float(rng.integers(-1, 15)) + float(rng.choice([0, 0.5]))
    else:
        start = float(np.round(rng.uniform(-5, 5), 2))
        step = float(rng.choice([0.25, 0.5, 1.0, 1.5, -0.5, -1.25]))
        stop = start + step * float(rng.integers(-1, 30)) + float(rng.choice([0.0, 0.1]))
    n = max(int(np.ceil((stop - start) / step)), 0)
    if d in INT:
        exp = (np.arange(n, dtype=np.float64) * step + start).astype(d)
    else:
        exp = np.arange(n, dtype=np.float64) * step + start
    return Case([start, stop, step, d], [], [(exp, d)], tol=max(4.0, n), optional=d in CPLX,
                params="start=%r stop=%r step=%r dtype=%s" % (start, stop, step, d))


def b_linspace(ctx, rng, combo, k):
    """MLX computes (1 - t) * start + t * stop in float32 (float64 for
    float64) and casts; integer dtypes use endpoints on the sample grid so
    the cast is exact."""
    d = combo[0]
    if d in INT or d == "bool":
        # num - 1 a power of two keeps t = i / (num - 1) exact in float32.
        num = int(rng.choice([0, 1, 2, 3, 5, 9, 17]))
        lo = 0 if (d in UINT or d == "bool") else -10
        step = 0 if d == "bool" else int(rng.integers(0, 3))
        start = float(rng.integers(lo, 2 if d == "bool" else 10))
        stop = start + step * max(num - 1, 0)
        exp = np.linspace(start, stop, num)
        return Case([start, stop, num, d], [], [(exp.astype(to_carrier(0, d).dtype), d)],
                    params="start=%r stop=%r num=%d dtype=%s" % (start, stop, num, d))
    num = int(rng.choice([0, 1, 2, 5, 9, 17, 50]))
    start, stop = float(rng.uniform(-10, 10)), float(rng.uniform(-10, 10))
    exp = np.linspace(start, stop, num)
    return Case([start, stop, num, d], [], [(exp, d)], tol=4, optional=d in CPLX,
                params="start=%r stop=%r num=%d dtype=%s" % (start, stop, num, d))


def b_eye(ctx, rng, combo, k):
    d = combo[0]
    n, m, kk = int(rng.integers(0, 6)), int(rng.integers(0, 6)), int(rng.integers(-6, 7))
    exp = np.eye(n, m, kk).astype(to_carrier(0, d).dtype)
    return Case([n, m, kk, d], [], [(exp, d)], params="n=%d m=%d k=%d" % (n, m, kk))


def b_identity(ctx, rng, combo, k):
    d = combo[0]
    n = int(rng.integers(0, 7))
    return Case([n, d], [], [(np.eye(n).astype(to_carrier(0, d).dtype), d)], params="n=%d" % n)


def b_tri(ctx, rng, combo, k):
    d = combo[0]
    n, m, kk = int(rng.integers(0, 6)), int(rng.integers(0, 6)), int(rng.integers(-6, 7))
    exp = np.tri(n, m, kk).astype(to_carrier(0, d).dtype)
    return Case([n, m, kk, d], [], [(exp, d)], params="n=%d m=%d k=%d" % (n, m, kk))


def b_trilu(fn):
    def b(ctx, rng, combo, k):
        d = combo[0]
        nd = int(rng.integers(2, 5))
        shp = [int(rng.choice([0, 1, 2, 3, 4, 5] if k == 1 else [1, 2, 3, 4, 5]))
               for _ in range(nd)]
        x = ctx.maker.make(rng, shp, d)
        kk = int(rng.integers(-4, 5))
        return Case([x.arr, kk], [x], [(fn(x.vals, kk), d)], params="k=%d" % kk)
    return b


# ---- selection ------------------------------------------------------------------

def b_where(ctx, rng, combo, k):
    dx, dy = combo
    out_shape = _shape(rng, k)
    sc = I.broadcastable_to(rng, out_shape)
    sx, sy = I.broadcast_pair(rng, out_shape)
    # The condition is real: MLX turns complex into bool through the real
    # part only, numpy looks at both parts.
    c = ctx.maker.make(rng, sc, str(rng.choice(REAL)), "cmp")
    x = ctx.maker.make(rng, sx, dx)
    y = ctx.maker.make(rng, sy, dy)
    out = promote(dx, dy)
    exp = np.where(c.vals != 0, to_carrier(x.vals, out), to_carrier(y.vals, out))
    return Case([c.arr, x.arr, y.arr], [c, x, y], [(exp, out)], optional=out == "complex64")


def b_clip(ctx, rng, combo, k):
    """MLX: maximum(a, a_min) then minimum(., a_max), each promoting, so the
    result dtype is the promotion of a with the bounds given."""
    d = combo[0]
    shp = _shape(rng, k)
    a = ctx.maker.make(rng, shp, d, "cmp")
    which = int(rng.integers(0, 3))  # 0: both, 1: min only, 2: max only
    lo = hi_ = None
    ins = [a]
    out = d
    if which in (0, 1):
        lo = ctx.maker.make(rng, I.broadcastable_to(rng, shp), str(rng.choice(REAL)), "cmp")
        ins.append(lo)
        out = promote(out, lo.dtype)
    if which in (0, 2):
        hi_ = ctx.maker.make(rng, I.broadcastable_to(rng, shp), str(rng.choice(REAL)), "cmp")
        ins.append(hi_)
        out = promote(out, hi_.dtype)
    with np.errstate(all="ignore"):
        r = to_carrier(a.vals, out)
        if lo is not None:
            r = np.maximum(r, to_carrier(lo.vals, out))
        if hi_ is not None:
            r = np.minimum(r, to_carrier(hi_.vals, out))
    args = [a.arr, lo.arr if lo is not None else None, hi_.arr if hi_ is not None else None]
    return Case(args, ins, [(r, out)], optional=d == "complex64",
                params="bounds=%s" % ["both", "min", "max"][which])


# ---- binary with two results ----------------------------------------------------

def b_divmod(ctx, rng, combo, k):
    """MLX 0.31.1's DivMod kernel is C's: the quotient truncates toward
    zero and the remainder takes the dividend's sign (fmod), for integers
    and floats alike (its docstring says (a // b, a % b); its CPU build
    does not)."""
    da, db = combo
    out_shape = _shape(rng, k)
    sa, sb = I.broadcast_pair(rng, out_shape)
    work = promote(da, db)
    a = ctx.maker.make(rng, sa, da)
    b = ctx.maker.make(rng, sb, db, "nonzero")
    if work == "complex64":
        return Case([a.arr, b.arr], [a, b], error=True)
    av, bv = to_carrier(a.vals, work), to_carrier(b.vals, work)
    with np.errstate(all="ignore"):
        if work == "bool":
            q, r = av & bv, np.zeros(np.broadcast(av, bv).shape, dtype=bool)
        elif is_exact(work):
            # numpy's fmod of integers is C's %; the floored quotient steps
            # up by one where the division is inexact and the signs differ
            r = np.fmod(av, bv)
            step = (np.remainder(av, bv) != 0) & ((av < 0) != (bv < 0))
            q = np.floor_divide(av, bv) + step.astype(av.dtype)
        else:
            # The quotient is rounded to the dtype before the truncation.
            q = np.trunc(hi(to_carrier(hi(av, work) / hi(bv, work), work), work))
            r = np.fmod(hi(av, work), hi(bv, work))
    return Case([a.arr, b.arr], [a, b], [(q, work), (r, work)], tol=2)


# ---- linear algebra -------------------------------------------------------------

def _mm_shapes(rng, k):
    """Shapes for matmul: batch dims that broadcast, or 1-d vectors."""
    M, K_, N = [int(rng.choice([0, 1, 2, 3, 5, 8, 17] if k == 1 else [1, 2, 3, 5, 8, 17, 33]))
                for _ in range(3)]
    batch = list(I.shape(rng, 2, 0, 2))
    ba, bb = I.broadcast_pair(rng, tuple(batch)) if batch else ((), ())
    sa = list(ba) + [M, K_]
    sb = list(bb) + [K_, N]
    if rng.random() < 0.15:
        sa = [K_]
    if rng.random() < 0.15:
        sb = [K_]
    return sa, sb


def _mm_combos():
    fl = [(d, d) for d in FLOAT] + [("int32", "float32"), ("float16", "float32"),
                                    ("bfloat16", "float16"), ("int8", "bfloat16"),
                                    ("float64", "int64"), ("complex64", "complex64")]
    return fl + [("int32", "int32"), ("bool", "bool"), ("uint8", "int8")]


def b_matmul(ctx, rng, combo, k):
    """MLX: floating (or complex) promotions only; integer matmul fails."""
    da, db = combo
    sa, sb = _mm_shapes(rng, k)
    a = ctx.maker.make(rng, sa, da, "small")
    b = ctx.maker.make(rng, sb, db, "small")
    out = promote(da, db)
    if out not in INEXACT:
        return Case([a.arr, b.arr], [a, b], error=True)
    av, bv = hi(to_carrier(a.vals, out), out), hi(to_carrier(b.vals, out), out)
    exp = np.matmul(av, bv)
    scale = [np.matmul(np.abs(av), np.abs(bv)) * 2]
    return Case([a.arr, b.arr], [a, b], [(exp, out)], scale=scale,
                optional=out == "complex64")


def b_addmm(ctx, rng, combo, k):
    da, db = combo
    sa, sb = _mm_shapes(rng, k)
    a = ctx.maker.make(rng, sa, da, "small")
    b = ctx.maker.make(rng, sb, db, "small")
    oshape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    dc = str(rng.choice([da, db]))
    c = ctx.maker.make(rng, I.broadcastable_to(rng, oshape), dc, "small")
    alpha, beta = float(rng.choice([1.0, 0.5, -2.0, 0.0])), float(rng.choice([1.0, 0.0, 1.5]))
    out = promote(da, db, dc)
    params = "alpha=%r beta=%r" % (alpha, beta)
    if out not in INEXACT:
        return Case([c.arr, a.arr, b.arr, alpha, beta], [c, a, b], error=True, params=params)
    av, bv, cv = [hi(to_carrier(v.vals, out), out) for v in (a, b, c)]
    exp = alpha * np.matmul(av, bv) + beta * cv
    scale = [np.abs(alpha) * np.matmul(np.abs(av), np.abs(bv)) * 2 + np.abs(beta * cv)]
    return Case([c.arr, a.arr, b.arr, alpha, beta], [c, a, b], [(exp, out)], scale=scale,
                optional=out == "complex64", params=params)


def b_inner(ctx, rng, combo, k):
    """MLX: a 0-d operand multiplies (any dtype); otherwise it contracts the
    last axes through matmul, so integer inputs fail."""
    da, db = combo
    K_ = int(rng.choice([0, 1, 3, 8]))
    sa = [] if rng.random() < 0.1 else list(I.shape(rng, 2, 0, 2)) + [K_]
    sb = [] if rng.random() < 0.1 else list(I.shape(rng, 2, 0, 2)) + [K_]
    a = ctx.maker.make(rng, sa, da, "small")
    b = ctx.maker.make(rng, sb, db, "small")
    out = promote(da, db)
    av, bv = to_carrier(a.vals, out), to_carrier(b.vals, out)
    if not sa or not sb:
        if is_exact(out):
            exp = av * bv if out != "bool" else av & bv
        else:
            exp = hi(av, out) * hi(bv, out)
        return Case([a.arr, b.arr], [a, b], [(exp, out)], optional=out == "complex64")
    if out not in INEXACT:
        return Case([a.arr, b.arr], [a, b], error=True)
    exp = np.inner(hi(av, out), hi(bv, out))
    scale = [np.inner(np.abs(hi(av, out)), np.abs(hi(bv, out))) * 2]
    return Case([a.arr, b.arr], [a, b], [(exp, out)], scale=scale, optional=out == "complex64")


def b_outer(ctx, rng, combo, k):
    """MLX: flattened a times flattened b, by multiply (any dtype)."""
    da, db = combo
    a = ctx.maker.make(rng, I.shape(rng, k, 0, 2), da)
    b = ctx.maker.make(rng, I.shape(rng, 2, 0, 2), db)
    out = promote(da, db)
    av, bv = to_carrier(a.vals, out).reshape(-1), to_carrier(b.vals, out).reshape(-1)
    with np.errstate(all="ignore"):
        if out == "bool":
            exp = np.logical_and.outer(av, bv)
        elif is_exact(out):
            exp = np.multiply.outer(av, bv)
        else:
            exp = np.multiply.outer(hi(av, out), hi(bv, out))
    return Case([a.arr, b.arr], [a, b], [(exp, out)])


def b_tensordot(ctx, rng, combo, k):
    da, db = combo
    nc = int(rng.integers(0, 3))
    csz = [int(rng.choice([1, 2, 3, 4])) for _ in range(nc)]
    fa = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))]
    fb = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))]
    pa = rng.permutation(len(fa) + nc)
    pb = rng.permutation(len(fb) + nc)
    sa = [0] * (len(fa) + nc)
    sb = [0] * (len(fb) + nc)
    axes_a = [int(p) for p in pa[:nc]]
    axes_b = [int(p) for p in pb[:nc]]
    for i in range(nc):
        sa[axes_a[i]] = csz[i]
        sb[axes_b[i]] = csz[i]
    for j, p in enumerate(pa[nc:]):
        sa[p] = fa[j]
    for j, p in enumerate(pb[nc:]):
        sb[p] = fb[j]
    a = ctx.maker.make(rng, sa, da, "small")
    b = ctx.maker.make(rng, sb, db, "small")
    out = promote(da, db)
    if out not in INEXACT:
        return Case([a.arr, b.arr, axes_a, axes_b], [a, b], error=True)
    av, bv = hi(to_carrier(a.vals, out), out), hi(to_carrier(b.vals, out), out)
    exp = np.tensordot(av, bv, axes=(axes_a, axes_b))
    scale = [np.tensordot(np.abs(av), np.abs(bv), axes=(axes_a, axes_b)) * 2]
    return Case([a.arr, b.arr, axes_a, axes_b], [a, b], [(exp, out)], scale=scale,
                optional=out == "complex64",
                params="axes_a=%s axes_b=%s" % (axes_a, axes_b))


def b_tensordot_axis(ctx, rng, combo, k):
    da, db = combo
    n = int(rng.integers(0, 3))
    common = [int(rng.choice([1, 2, 3, 4])) for _ in range(n)]
    sa = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))] + common
    sb = common + [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))]
    a = ctx.maker.make(rng, sa, da, "small")
    b = ctx.maker.make(rng, sb, db, "small")
    out = promote(da, db)
    if out not in INEXACT:
        return Case([a.arr, b.arr, n], [a, b], error=True)
    av, bv = hi(to_carrier(a.vals, out), out), hi(to_carrier(b.vals, out), out)
    exp = np.tensordot(av, bv, axes=n)
    scale = [np.tensordot(np.abs(av), np.abs(bv), axes=n) * 2]
    return Case([a.arr, b.arr, n], [a, b], [(exp, out)], scale=scale,
                optional=out == "complex64", params="axis=%d" % n)


def b_kron(ctx, rng, combo, k):
    """MLX: by multiply, so any dtype; an empty input fails."""
    da, db = combo
    a = ctx.maker.make(rng, [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))],
                       da, "small")
    b = ctx.maker.make(rng, [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))],
                       db, "small")
    out = promote(da, db)
    av, bv = to_carrier(a.vals, out), to_carrier(b.vals, out)
    with np.errstate(all="ignore"):
        if out == "bool":
            exp = np.kron(av.astype(np.int8), bv.astype(np.int8)).astype(bool)
        elif is_exact(out):
            exp = np.kron(av, bv)
        else:
            exp = np.kron(hi(av, out), hi(bv, out))
    return Case([a.arr, b.arr], [a, b], [(exp, out)], optional=out == "complex64")


# ---- misc -------------------------------------------------------------------------

def b_astype(ctx, rng, combo, k):
    """Conversions as C casts: integers wrap, floats truncate toward zero
    (values kept inside the target's range, where C defines the cast),
    complex keeps the real part. complex64 -> bool is not checked: MLX goes
    through the real part, numpy tests both parts."""
    src, dst = combo
    shp = I.big_shape(rng) if k == "big" else _shape(rng, k)
    dom = "any"
    if dst in UINT and src not in INT:
        dom = "nonneg"
    if dst in INT and src in FLOAT + CPLX:
        dom = "small" if dst in ("int8", "uint8") else "any"
    x = ctx.maker.make(rng, shp, src, dom)
    with np.errstate(all="ignore"):
        exp = to_carrier(x.vals, dst)
    return Case([x.arr, dst], [x], [(exp, dst)], params="dtype=%s" % dst)


def _astype_combos():
    return [(s, d) for s in ALL for d in ALL if not (s == "complex64" and d == "bool")]


def b_isclose(all_):
    """MLX: |a - b| <= atol + rtol * |b| computed after promotion (so
    unsigned differences wrap: unsigned dtypes are left out), infinities
    close only to the same infinity, NaN only with equal_nan."""
    def b(ctx, rng, combo, k):
        d = combo[0]
        shp = _shape(rng, k)
        rtol = float(rng.choice([1e-5, 1e-3, 0.1]))
        atol = float(rng.choice([1e-8, 1e-3, 0.5]))
        equal_nan = bool(rng.random() < 0.5)
        bv = I.values(rng, shp, d, "special" if d in FLOAT else "small")
        tolv = atol + rtol * np.abs(hi(bv, d))
        pick = rng.random(size=np.shape(bv))
        delta = np.where(pick < 0.5, 0.0, np.where(pick < 0.75, tolv * 0.25, tolv * 4 + 1))
        if d in INT:
            av = (bv + np.round(delta).astype(bv.dtype)).astype(bv.dtype)
        else:
            av = to_carrier(hi(bv, d) + delta * rng.choice([-1, 1], size=np.shape(bv)), d)
            nanpick = rng.random(size=np.shape(bv)) < 0.1
            av = np.where(nanpick & np.isnan(hi(bv, d)), bv, av)
        a = ctx.maker.make(rng, shp, d, vals=np.asarray(av))
        bb = ctx.maker.make(rng, shp, d, vals=np.asarray(bv))
        ah, bh = hi(a.vals, d), hi(bb.vals, d)
        with np.errstate(all="ignore"):
            close = np.abs(ah - bh) <= atol + rtol * np.abs(bh)
            anyinf = np.isinf(ah) | np.isinf(bh)
            close = (close & ~anyinf) | (np.isinf(ah) & (ah == bh))
            if equal_nan:
                close |= np.isnan(ah) & np.isnan(bh)
        exp = np.all(close) if all_ else close
        return Case([a.arr, bb.arr, rtol, atol, equal_nan], [a, bb], [(np.asarray(exp), "bool")],
                    params="rtol=%r atol=%r equal_nan=%s" % (rtol, atol, equal_nan))
    return b


def b_array_equal(ctx, rng, combo, k):
    da, db = combo
    shp = _shape(rng, k)
    dom = "special" if (da in FLOAT and db in FLOAT) else "cmp"
    a = ctx.maker.make(rng, shp, da, dom)
    if rng.random() < 0.2:
        bshape = I.shape(rng, 2)
        b = ctx.maker.make(rng, bshape, db, dom)
    else:
        bv = to_carrier(a.vals, db)
        if rng.random() < 0.4 and bv.size:
            bv = bv.copy()
            bv.reshape(-1)[int(rng.integers(0, bv.size))] = to_carrier(np.array(3), db)
        b = ctx.maker.make(rng, shp, db, vals=bv)
    equal_nan = bool(rng.random() < 0.5)
    if a.vals.shape != b.vals.shape:
        exp = False
    else:
        w = promote(da, db)
        av, bv2 = to_carrier(a.vals, w), to_carrier(b.vals, w)
        with np.errstate(all="ignore"):
            eq = av == bv2
            if equal_nan and w in INEXACT:
                eq |= np.isnan(hi(av, w)) & np.isnan(hi(bv2, w))
        exp = bool(np.all(eq))
    return Case([a.arr, b.arr, equal_nan], [a, b], [(np.asarray(exp), "bool")],
                params="equal_nan=%s" % equal_nan)


def b_number_of_elements(ctx, rng, combo, k):
    d = combo[0]
    x = ctx.maker.make(rng, _shape(rng, k, 1), "float32")
    nd = x.vals.ndim
    m = int(rng.integers(0, nd + 1))
    axes = [int(a) - (nd if rng.random() < 0.3 else 0) for a in rng.permutation(nd)[:m]]
    inverted = bool(rng.random() < 0.4)
    n = float(np.prod([x.vals.shape[a] for a in axes])) if axes else 1.0
    if n == 0 and d not in FLOAT:
        inverted = False  # 1/0 has no integer value
    with np.errstate(all="ignore"):
        v = (np.float64(1.0) / np.float64(n)) if inverted else n
    exp = to_carrier(np.float64(v), d)
    return Case([x.arr, axes, inverted, d], [x], [(np.asarray(exp), d)],
                params="axes=%s inverted=%s dtype=%s" % (axes, inverted, d))


# ---- bad input -------------------------------------------------------------------

def A(ctx, rng, shape, d="float32"):
    return ctx.maker.make(rng, shape, d, layout="contiguous").arr


ERRORS = [
    Error("reshape", "reshape (2,3) to (4,2)", lambda c, r: [A(c, r, (2, 3)), [4, 2]]),
    Error("reshape", "reshape with two -1", lambda c, r: [A(c, r, (2, 3)), [-1, -1]]),
    Error("broadcast_to", "broadcast (3,) to (4,)", lambda c, r: [A(c, r, (3,)), [4]]),
    Error("broadcast_to", "negative dimension", lambda c, r: [A(c, r, (1,)), [-2]]),
    Error("add", "shapes (2,3) and (4,)", lambda c, r: [A(c, r, (2, 3)), A(c, r, (4,))]),
    Error("transpose_axes", "repeated axis", lambda c, r: [A(c, r, (2, 3)), [0, 0]]),
    Error("transpose_axes", "axis out of range", lambda c, r: [A(c, r, (2, 3)), [0, 2]]),
    Error("swapaxes", "axis out of range", lambda c, r: [A(c, r, (2, 3)), 0, 2]),
    Error("moveaxis", "axis out of range", lambda c, r: [A(c, r, (2, 3)), -3, 0]),
    Error("expand_dims", "axis out of range", lambda c, r: [A(c, r, (2,)), 3]),
    Error("squeeze_axis", "axis of size 3", lambda c, r: [A(c, r, (1, 3)), 1]),
    Error("flatten", "start after end", lambda c, r: [A(c, r, (2, 3, 4)), 2, 1]),
    Error("unflatten", "wrong product", lambda c, r: [A(c, r, (6,)), 0, [4, 2]]),
    Error("sum_axis", "axis out of range", lambda c, r: [A(c, r, (2, 3)), 2, False]),
    Error("sum_axes", "repeated axis", lambda c, r: [A(c, r, (2, 3)), [0, -2], False]),
    Error("max_axis", "size-0 axis", lambda c, r: [A(c, r, (0, 3)), 0, False]),
    Error("argmax", "size-0 array", lambda c, r: [A(c, r, (0,)), False]),
    Error("logsumexp", "size-0 array", lambda c, r: [A(c, r, (2, 0)), False]),
    Error("cumsum", "0-d array", lambda c, r: [A(c, r, ()), 0, False, True]),
    Error("cumsum", "axis out of range", lambda c, r: [A(c, r, (3,)), 1, False, True]),
    Error("concatenate_axis", "mismatched shapes",
          lambda c, r: [[A(c, r, (2, 3)), A(c, r, (3, 3))], 1]),
    Error("concatenate_axis", "no arrays", lambda c, r: [[], 0]),
    Error("stack", "different shapes", lambda c, r: [[A(c, r, (2,)), A(c, r, (3,))]]),
    Error("split", "uneven split", lambda c, r: [A(c, r, (5,)), 2, 0]),
    Error("split", "zero splits", lambda c, r: [A(c, r, (4,)), 0, 0]),
    Error("slice", "wrong number of indices",
          lambda c, r: [A(c, r, (2, 3)), [0], [1], [1]]),
    Error("take_axis", "non-empty take from empty axis",
          lambda c, r: [A(c, r, (0, 2)), A(c, r, (2,), "int32"), 0]),
    Error("take_along_axis", "indices ndim differs",
          lambda c, r: [A(c, r, (2, 3)), A(c, r, (2,), "int32"), 0]),
    Error("pad", "negative width",
          lambda c, r: [A(c, r, (2,)), [0], [-1], [0], A(c, r, ()), "constant"]),
    Error("pad", "unknown mode",
          lambda c, r: [A(c, r, (2,)), [0], [1], [1], A(c, r, ()), "wrap"]),
    Error("pad", "reflect an empty axis",
          lambda c, r: [A(c, r, (0,)), [0], [1], [1], A(c, r, ()), "reflect"]),
    Error("repeat", "negative repeats", lambda c, r: [A(c, r, (3,)), -1]),
    Error("tril", "1-d input", lambda c, r: [A(c, r, (3,)), 0]),
    Error("triu", "0-d input", lambda c, r: [A(c, r, ()), 0]),
    Error("diag", "3-d input", lambda c, r: [A(c, r, (2, 2, 2)), 0]),
    Error("diagonal", "same axes", lambda c, r: [A(c, r, (2, 2)), 0, 1, 1]),
    Error("diagonal", "1-d input", lambda c, r: [A(c, r, (2,)), 0, 0, 1]),
    Error("trace", "1-d input", lambda c, r: [A(c, r, (2,)), 0, 0, 1, "float32"]),
    Error("arange", "zero step", lambda c, r: [0.0, 3.0, 0.0, "float32"]),
    Error("arange", "NaN bound", lambda c, r: [0.0, float("nan"), 1.0, "float32"]),
    Error("linspace", "negative num", lambda c, r: [0.0, 1.0, -1, "float32"]),
    Error("zeros", "negative dimension", lambda c, r: [[2, -1], "float32"]),
    Error("full", "negative dimension", lambda c, r: [[-1], A(c, r, ()), "float32"]),
    Error("eye", "negative n", lambda c, r: [-1, 2, 0, "float32"]),
    Error("matmul", "inner dimensions differ", lambda c, r: [A(c, r, (2, 3)), A(c, r, (4, 5))]),
    Error("matmul", "0-d operand", lambda c, r: [A(c, r, ()), A(c, r, (2, 2))]),
    Error("addmm", "0-d operand",
          lambda c, r: [A(c, r, (2,)), A(c, r, ()), A(c, r, (2, 2)), 1.0, 1.0]),
    Error("inner", "last dimensions differ", lambda c, r: [A(c, r, (2, 3)), A(c, r, (2,))]),
    Error("tensordot", "contracted sizes differ",
          lambda c, r: [A(c, r, (2, 3)), A(c, r, (4, 5)), [1], [0]]),
    Error("tensordot_axis", "negative axis", lambda c, r: [A(c, r, (2, 3)), A(c, r, (3,)), -1]),
    Error("kron", "empty input", lambda c, r: [A(c, r, (0,)), A(c, r, (2,))]),
    Error("meshgrid", "unknown indexing", lambda c, r: [[A(c, r, (2,))], False, "xx"]),
    Error("as_strided", "negative dimension",
          lambda c, r: [A(c, r, (4,)), [-1], [1], 0]),
    Error("clip", "no bound", lambda c, r: [A(c, r, (2,)), None, None]),
    Error("number_of_elements", "axis out of range",
          lambda c, r: [A(c, r, (2, 3)), [5], False, "int32"]),
    Error("squeeze_axes", "repeated axis", lambda c, r: [A(c, r, (1, 2)), [0, 0]]),
    Error("expand_dims_axes", "repeated axis", lambda c, r: [A(c, r, (2,)), [0, 0]]),
    Error("astype", "empty handle", lambda c, r: [None, "float32"]),
    Error("add", "empty handle", lambda c, r: [A(c, r, (2,)), None]),
]


# ---- crash probes: integer division by zero, INT_MIN / -1 -----------------------

def _div_probe(zero):
    def f(ctx, rng, d):
        info = np.iinfo(np.dtype(d))
        if zero:
            a = np.array([7, -7 if d in SINT else 3, 0, int(info.max)], dtype=d)
            b = np.zeros(4, dtype=d)
        else:
            a = np.array([int(info.min)] * 4, dtype=d)
            b = np.array([-1] * 4, dtype=d)
        return [ctx.lib.from_numpy(a, d), ctx.lib.from_numpy(b, d)]
    return f


PROBES = []
for _op in ("floor_divide", "remainder", "divmod"):
    PROBES.append(Probe(_op, "integer division by zero", _div_probe(True), INT))
    PROBES.append(Probe(_op, "INT_MIN / -1", _div_probe(False), SINT))


ROWS = [
    Custom("zeros", b_zeros_ones(0)),
    Custom("ones", b_zeros_ones(1)),
    Custom("full", b_full),
    Custom("zeros_like", b_like(0)),
    Custom("ones_like", b_like(1)),
    Custom("full_like", b_full_like),
    Custom("arange", b_arange),
    Custom("linspace", b_linspace),
    Custom("eye", b_eye),
    Custom("identity", b_identity),
    Custom("tri", b_tri),
    Custom("tril", b_trilu(np.tril)),
    Custom("triu", b_trilu(np.triu)),
    Custom("where", b_where, combos=[(x, y) for x in ALL for y in ALL],
           ncases=lambda c, n: n if c[0] == c[1] else 1),
    Custom("clip", b_clip),
    Custom("divmod", b_divmod, combos=[(x, x) for x in ALL] + [(x, y) for x in REAL for y in REAL
                                                               if x != y][::7],
           ncases=lambda c, n: n if c[0] == c[1] else 1),
    Custom("matmul", b_matmul, combos=_mm_combos()),
    Custom("addmm", b_addmm, combos=_mm_combos()),
    Custom("inner", b_inner, combos=_mm_combos()),
    Custom("outer", b_outer, combos=[(x, x) for x in ALL] + [("int8", "float32"),
                                                            ("uint16", "int16")]),
    Custom("tensordot", b_tensordot, combos=_mm_combos()),
    Custom("tensordot_axis", b_tensordot_axis, combos=_mm_combos()),
    Custom("kron", b_kron, combos=[(x, x) for x in ALL] + [("int8", "float32"),
                                                          ("bool", "uint8")]),
    Custom("astype", b_astype, combos=_astype_combos(),
           ncases=lambda c, n: max(1, n // 2)),
    Custom("allclose", b_isclose(True), dtypes=FLOAT + SINT),
    Custom("isclose", b_isclose(False), dtypes=FLOAT + SINT),
    Custom("array_equal", b_array_equal, combos=[(x, x) for x in ALL] + [
        ("int32", "float32"), ("uint8", "int64"), ("bool", "int8"), ("float16", "bfloat16")]),
    Custom("number_of_elements", b_number_of_elements, dtypes=REAL),
] + ERRORS + PROBES

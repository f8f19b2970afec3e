"""Kinds of oracle rows: how a row turns (dtypes, case number) into a Case.

A row of the table (table.py) is one of these classes with the op's name,
its numpy reference, the dtypes it allows and its rules. build() draws the
inputs with a per-case RNG, so a case is reproducible from its id alone.

Reference evaluation follows MLX's order of work: inputs are first cast to
the op's working dtype (the promoted dtype, or at_least_float of it), then
the function is applied. calc="hi" evaluates in float64/complex128 and the
comparison allows the output dtype's tolerance; calc="exact" evaluates in
the working dtype itself (bfloat16 via float32 and a final rounding), for
integer results and for float results that are exactly determined (floor,
maximum...).
"""
import numpy as np

import inputs as I
from mlx import to_carrier
from rules import ALL, at_least_float, hi, in_dtype, is_exact, promote


class Case:
    """What to call and what to expect.

    args      arguments for Lib.call (arrays as MArray)
    inputs    Input objects, for failure reports
    expect    list of (values, dtype), one per result array
    error     the call must fail (return non-zero, one message)
    optional  a failing call means "not supported here": counted apart
    nocheck   only the call's survival is checked (e.g. division by zero)
    tol       factor on the dtype tolerance; scale: per-result atol scale
    """

    def __init__(self, args, inputs=(), expect=None, error=False, optional=False,
                 nocheck=False, tol=1.0, scale=None, params=""):
        self.args = list(args)
        self.inputs = list(inputs)
        self.expect = expect
        self.error = error
        self.optional = optional
        self.nocheck = nocheck
        self.tol = tol
        self.scale = scale
        self.params = params

    def describe(self):
        parts = ["%s=%s" % (chr(ord("a") + i), x.describe()) for i, x in enumerate(self.inputs)]
        if self.params:
            parts.append(self.params)
        return "; ".join(parts)


def _rule(rule, *ds):
    """Resolves a dtype rule: a dtype name, 'same' (first input),
    'float' (at_least_float of the first), 'promote', 'pfloat'
    (at_least_float of the promotion) or a function of the dtypes."""
    if callable(rule):
        return rule(*ds)
    if rule == "same":
        return ds[0]
    if rule == "float":
        return at_least_float(ds[0])
    if rule == "promote":
        return promote(*ds)
    if rule == "pfloat":
        return at_least_float(promote(*ds))
    return rule


def evaluate(ref, dref, calc, work, out, xs, extra=()):
    """Runs the reference on carrier values xs already cast to work."""
    if calc is None:
        calc = "exact" if is_exact(out) else "hi"
    with np.errstate(all="ignore"):
        if calc == "exact":
            if dref is not None:
                return in_dtype(lambda *a: dref(work, *a, *extra), work, *xs)
            return in_dtype(lambda *a: ref(*a, *extra), work, *xs)
        hs = [hi(x, work) for x in xs]
        if dref is not None:
            return dref(work, *hs, *extra)
        return ref(*hs, *extra)


class Row:
    kind = "row"
    big = False  # also run one large case (vector loops, thread pool)

    def __init__(self, name, dtypes=ALL, note=""):
        self.name = name
        self.dtypes = list(dtypes)
        self.note = note

    def combos(self):
        return [(d,) for d in self.dtypes]

    def ncases(self, combo, n):
        return n

    def keys(self, combo, n, big):
        """The case keys for one dtype combo: 0..count-1, plus "big"."""
        ks = list(range(self.ncases(combo, n)))
        if big and self.big and combo in self.big_combos():
            ks.append("big")
        return ks

    def big_combos(self):
        return [c for c in self.combos() if c[0] in ("float32", "int32")][:2]

    def fn(self):
        return "mlx_" + self.name


class Unary(Row):
    """op(a[, extra args]): elementwise on one array."""
    kind = "unary"
    big = True

    def __init__(self, name, ref=None, dtypes=ALL, out="same", dom="any", calc=None,
                 tol=1.0, opt=(), rej=(), args=None, dref=None, work=None, note=""):
        super().__init__(name, list(dtypes) + [d for d in rej if d not in dtypes], note)
        self.ref, self.dref, self.out, self.dom, self.calc = ref, dref, out, dom, calc
        self.tol, self.opt, self.rej, self.args = tol, set(opt), set(rej), args
        self.work = work if work is not None else ("float" if out == "float" else "same")

    def build(self, ctx, rng, combo, k):
        d = combo[0]
        shp = I.big_shape(rng) if k == "big" else I.shape(rng, k)
        x = ctx.maker.make(rng, shp, d, self.dom if d not in self.rej else "any")
        extra = list(self.args(rng, d)) if self.args else []
        if d in self.rej:
            return Case([x.arr] + extra, [x], error=True, params=_p(extra))
        work, out = _rule(self.work, d), _rule(self.out, d)
        exp = evaluate(self.ref, self.dref, self.calc, work, out,
                       [to_carrier(x.vals, work)], extra)
        return Case([x.arr] + extra, [x], [(exp, out)], optional=d in self.opt,
                    tol=self.tol, params=_p(extra))


class Binary(Row):
    """op(a, b): elementwise on two arrays that broadcast together."""
    kind = "binary"
    big = True

    def __init__(self, name, ref=None, dtypes=ALL, work="promote", out=None,
                 dom=("any", "any"), calc=None, tol=1.0, opt=(), rej=(), dref=None,
                 mixed=True, note=""):
        super().__init__(name, list(dtypes) + [d for d in rej if d not in dtypes], note)
        self.ref, self.dref, self.work, self.out = ref, dref, work, out
        self.dom, self.calc, self.tol, self.opt, self.rej = dom, calc, tol, set(opt), set(rej)
        self.mixed = mixed

    def combos(self):
        same = [(d, d) for d in self.dtypes]
        if not self.mixed:
            return same
        ok = [d for d in self.dtypes if d not in self.rej]
        mixed = [(a, b) for a in ok for b in ok if a != b]
        return same + mixed

    def ncases(self, combo, n):
        return n if combo[0] == combo[1] else max(1, n // 3)

    def big_combos(self):
        c = self.combos()
        pick = [x for x in c if x in (("float32", "float32"), ("int32", "int32"), ("int8", "float32"))]
        return pick[:2]

    def domain(self, i, work):
        dom = self.dom[i]
        if dom == "base" and work == "complex64":
            dom = "pos"  # 0 ** complex is an edge numpy and C's cpow disagree on
        if dom.startswith("shift"):
            return "shift%d" % (8 if work == "bool" else {"uint8": 8, "int8": 8, "uint16": 16,
                                                          "int16": 16, "uint32": 32, "int32": 32,
                                                          "uint64": 64, "int64": 64}.get(work, 8))
        return dom

    def build(self, ctx, rng, combo, k):
        da, db = combo
        if k == "big":
            out_shape = I.big_shape(rng)
        else:
            out_shape = I.shape(rng, k)
        sa, sb = I.broadcast_pair(rng, out_shape)
        if k == "big":
            sa = out_shape
        work = _rule(self.work, da, db)
        if self.rej & {da, db} or work in self.rej:
            a = ctx.maker.make(rng, sa, da)
            b = ctx.maker.make(rng, sb, db)
            return Case([a.arr, b.arr], [a, b], error=True)
        a = ctx.maker.make(rng, sa, da, self.domain(0, work))
        b = ctx.maker.make(rng, sb, db, self.domain(1, work))
        out = _rule(self.out, da, db) if self.out is not None else work
        exp = evaluate(self.ref, self.dref, self.calc, work, out,
                       [to_carrier(a.vals, work), to_carrier(b.vals, work)])
        return Case([a.arr, b.arr], [a, b], [(np.asarray(exp), out)],
                    optional=bool(self.opt & {da, db, work}), tol=self.tol)


def _p(extra):
    return ("args=%r" % (extra,)) if extra else ""


def _axes_for(rng, nd):
    """A random set of distinct axes (some negative) of an nd-array."""
    m = int(rng.integers(0, nd + 1))
    axes = [int(x) for x in rng.permutation(nd)[:m]]
    return [a - nd if rng.random() < 0.3 else a for a in axes]


class Reduce(Row):
    """Reductions in mlx-c's three forms: name (all axes), name_axis,
    name_axes; keepdims random. One row expands to the three C functions
    (forms lists which exist). extra(rng, d) gives trailing arguments
    (ddof, precise); keepdims=False for ops without that argument.

    ref(v, axes_tuple, keepdims, *extra) computes on v, which is (work):
      'out' the input cast to the result dtype (integer sums wrap there),
      'raw' the input's own carrier values, 'hi' float64/complex128 values.
    nonempty: 'axis' = reducing a size-0 axis fails (max, min),
              'size' = any size-0 input fails (argmax, logsumexp).
    empty_axes_same: reducing over no axes returns the input unchanged,
    dtype included (MLX's sum and prod of a 0-d array or with axes=[])."""
    kind = "reduce"
    big = True

    def __init__(self, name, ref, dtypes=ALL, out="same", dom="any", work=None, tol=1.0,
                 opt=(), rej=(), forms=("", "_axis", "_axes"), extra=None, keepdims=True,
                 nonempty=None, empty_axes_same=False, scale=None, note=""):
        super().__init__(name, list(dtypes) + [d for d in rej if d not in dtypes], note)
        self.ref, self.out, self.dom, self.work, self.tol = ref, out, dom, work, tol
        self.opt, self.rej, self.forms, self.extra = set(opt), set(rej), forms, extra
        self.keepdims, self.nonempty, self.empty_axes_same = keepdims, nonempty, empty_axes_same
        self.scale = scale

    def expand(self):
        return [ReduceForm(self, f) for f in self.forms]


class ReduceForm(Row):
    kind = "reduce"
    big = True

    def __init__(self, base, form):
        super().__init__(base.name + form, base.dtypes, base.note)
        self.base, self.form = base, form

    def _draw(self, rng, k):
        shp = I.big_shape(rng) if k == "big" else I.shape(
            rng, k, min_ndim=1 if self.form == "_axis" else 0)
        nd = len(shp)
        if self.form == "":
            axes = list(range(nd))
        elif self.form == "_axis":
            axes = [int(rng.integers(-nd, nd))]
        else:
            axes = _axes_for(rng, nd)
        norm = tuple(sorted(a % nd for a in axes)) if nd else ()
        size = int(np.prod(shp, dtype=np.int64))
        bad = ((self.base.nonempty == "axis" and any(shp[a] == 0 for a in norm))
               or (self.base.nonempty == "size" and size == 0))
        return shp, axes, norm, bad

    def build(self, ctx, rng, combo, k):
        b, d = self.base, combo[0]
        for _ in range(30):
            shp, axes, ax, bad = self._draw(rng, k)
            if not bad or k == 1:
                break
        keepdims = bool(rng.random() < 0.4) if b.keepdims else None
        if b.name.startswith("arg") and not shp:
            keepdims = False  # MLX's keepdims path for a 0-d argmax is not meaningful
        x = ctx.maker.make(rng, shp, d, b.dom)
        extra = list(b.extra(rng, d)) if b.extra else []
        args = [x.arr]
        if self.form == "_axis":
            args.append(axes[0])
        elif self.form == "_axes":
            args.append(axes)
        if keepdims is not None:
            args.append(keepdims)
        args += extra
        params = "axes=%s keepdims=%s%s" % (axes if self.form else "all", keepdims,
                                           (" extra=%r" % extra) if extra else "")
        if d in b.rej or bad:
            return Case(args, [x], error=True, params=params)
        if not ax and b.empty_axes_same:
            out = d
        else:
            out = _rule(b.out, d, shp)
        work = b.work or ("out" if is_exact(out) else "hi")
        kd = bool(keepdims)
        with np.errstate(all="ignore"):
            if work == "out":
                v = to_carrier(x.vals, out)
            elif work == "raw":
                v = x.vals
            else:
                v = hi(x.vals, d)
            exp = b.ref(v, ax, kd, *extra)
            scale = None
            if b.scale is not None and not is_exact(out) and x.vals.size:
                scale = [b.scale(hi(x.vals, d), ax, kd, *extra)]
        return Case(args, [x], [(np.asarray(exp), out)], optional=d in b.opt, tol=b.tol,
                    scale=scale, params=params)


class Scan(Row):
    """Scans: name(a, axis, reverse, inclusive). acc(x, axis, out) is the
    inclusive forward scan; ident(d) the value an exclusive scan starts
    with. scale: "sum" widens the tolerance by the running sum of |x|,
    "length" by |result| * sqrt(scan length)."""
    kind = "scan"
    big = True

    def __init__(self, name, acc, ident, dtypes=ALL, out="same", dom="any", tol=1.0,
                 opt=(), rej=(), scale=False, note=""):
        super().__init__(name, list(dtypes) + [d for d in rej if d not in dtypes], note)
        self.acc, self.ident, self.out, self.dom, self.tol = acc, ident, out, dom, tol
        self.opt, self.rej, self.scale = set(opt), set(rej), scale

    def build(self, ctx, rng, combo, k):
        d = combo[0]
        shp = I.big_shape(rng) if k == "big" else I.shape(rng, k, min_ndim=1)
        nd = len(shp)
        axis = int(rng.integers(-nd, nd))
        rev, inc = bool(rng.random() < 0.5), bool(rng.random() < 0.6)
        x = ctx.maker.make(rng, shp, d, self.dom)
        args = [x.arr, axis, rev, inc]
        params = "axis=%d reverse=%s inclusive=%s" % (axis, rev, inc)
        if d in self.rej:
            return Case(args, [x], error=True, params=params)
        out = _rule(self.out, d)
        exact = is_exact(out)
        v = to_carrier(x.vals, out) if exact else hi(x.vals, d)
        exp = scan_ref(self.acc, v, axis % nd, rev, inc, self.ident(out), out if exact else None)
        scale = None
        if self.scale == "sum" and not exact:
            scale = [scan_ref(lambda a, ax, o: np.cumsum(np.abs(a), axis=ax), hi(x.vals, d),
                              axis % nd, rev, inc, 0.0, None)]
        elif self.scale == "length" and not exact:
            # A sequential scan's rounding error grows with its length.
            with np.errstate(all="ignore"):
                scale = [np.where(np.isfinite(exp), np.abs(exp), 0) * np.sqrt(shp[axis % nd])]
        return Case(args, [x], [(exp, out)], optional=d in self.opt, tol=self.tol,
                    scale=scale, params=params)


def scan_ref(acc, v, axis, reverse, inclusive, ident, out):
    with np.errstate(all="ignore"):
        if reverse:
            v = np.flip(v, axis)
        y = acc(v, axis, out)
        if not inclusive:
            first = np.full_like(np.take(y, [0], axis=axis) if y.shape[axis] else y, ident)
            y = np.concatenate([first, np.take(y, range(y.shape[axis] - 1), axis=axis)],
                               axis=axis)[tuple(slice(0, n) for n in v.shape)]
        if reverse:
            y = np.flip(y, axis)
        return y


class Func(Row):
    """op(a, params...) -> array or list of arrays, for shape and layout
    ops. params(rng, shape, dtype) returns the extra C arguments, or None
    when the shape does not suit (another is drawn). ref(a, *params) gives
    the expected values; out is the dtype rule. shapes(rng, k) may replace
    the default shape draw."""
    kind = "func"

    def __init__(self, name, params, ref, dtypes=ALL, out="same", min_ndim=0, max_ndim=4,
                 dom="any", shapes=None, tol=1.0, calc="exact", opt=(), note=""):
        super().__init__(name, dtypes, note)
        self.params, self.ref, self.out = params, ref, out
        self.min_ndim, self.max_ndim, self.dom, self.shapes = min_ndim, max_ndim, dom, shapes
        self.tol, self.calc, self.opt = tol, calc, set(opt)

    def build(self, ctx, rng, combo, k):
        d = combo[0]
        for _ in range(50):
            if self.shapes is not None:
                shp = self.shapes(rng, k)
            else:
                shp = I.shape(rng, k, self.min_ndim, self.max_ndim)
            extra = self.params(rng, shp, d) if self.params else []
            if extra is not None:
                break
        else:
            raise RuntimeError("%s: no suitable shape drawn" % self.name)
        x = ctx.maker.make(rng, shp, d, self.dom)
        out = _rule(self.out, d)
        with np.errstate(all="ignore"):
            if self.calc == "exact":
                r = self.ref(to_carrier(x.vals, d), *extra)
            else:
                r = self.ref(hi(x.vals, d), *extra)
        if isinstance(r, list):
            exp = [(np.asarray(e), out) for e in r]
        else:
            exp = [(np.asarray(r), out)]
        return Case([x.arr] + list(extra), [x], exp, optional=d in self.opt, tol=self.tol,
                    params=_p(list(extra)))


class Custom(Row):
    """Anything else: build(ctx, rng, combo, k) -> Case, with combos given
    as a list of dtype tuples (default: one per dtype)."""
    kind = "custom"

    def __init__(self, name, build, dtypes=ALL, combos=None, ncases=None, note=""):
        super().__init__(name, dtypes, note)
        self._build, self._combos, self._ncases = build, combos, ncases

    def combos(self):
        if self._combos is not None:
            return list(self._combos)
        return [(d,) for d in self.dtypes]

    def ncases(self, combo, n):
        return self._ncases(combo, n) if self._ncases else n

    def build(self, ctx, rng, combo, k):
        return self._build(ctx, rng, combo, k)


class Error(Row):
    """One bad-input call that must fail cleanly: args(ctx, rng) builds the
    arguments. The row's name is label; op the C function suffix."""
    kind = "error"

    def __init__(self, op, label, args, note=""):
        super().__init__(op, ["-"], note)
        self.label, self.argsf = label, args

    def combos(self):
        return [("-",)]

    def keys(self, combo, n, big):
        return ["E-" + "-".join("".join(c if c.isalnum() else " " for c in self.label).split())]

    def build(self, ctx, rng, combo, k):
        args = self.argsf(ctx, rng)
        return Case(args, error=True, params=self.label)


class Probe(Row):
    """Calls that must only survive (integer division by zero, INT_MIN / -1):
    the values are not checked."""
    kind = "probe"

    def __init__(self, op, label, args, dtypes):
        super().__init__(op, dtypes)
        self.label, self.argsf = label, args

    def keys(self, combo, n, big):
        return ["P-" + "-".join("".join(c if c.isalnum() else " " for c in self.label).split())]

    def build(self, ctx, rng, combo, k):
        return Case(self.argsf(ctx, rng, combo[0]), nocheck=True, params=self.label)

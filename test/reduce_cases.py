#!/usr/bin/python3
"""Writes test/reduce_cases.h and test/scan_cases.h: the numpy (1.24)
expectations of test_reduce.c and test_scan.c.

Each case names an op, an input dtype, a layout, its axes and flags; the
input is a fixed function of the element index (in_value below, mirrored
by the C tests), so only the results are stored. Results are computed in
float64 / int64 and converted to the output dtype MLX gives (mlx/ops.cpp):
sums and products of small integers in 32 bits (wrapping), mean / var /
std / logsumexp in at least float32, argmax / argmin as uint32, a softmax
over other than the trailing axes cast back to the input dtype, scans in
the input dtype (bool sums in int32).

Run: /usr/bin/python3 test/reduce_cases.py   (from the repository root)
"""
import math
import os

import numpy as np

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
          "int32", "int64", "float16", "float32", "float64", "bfloat16"]
ENUM = {d: i for i, d in enumerate(DTYPES)}
UINT = ["uint8", "uint16", "uint32", "uint64"]
SINT = ["int8", "int16", "int32", "int64"]
FLOAT = ["float16", "float32", "float64", "bfloat16"]


def bf16_round(x):
    f = np.atleast_1d(np.asarray(x, dtype=np.float32)).copy()
    bits = f.view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    lsb = (bits >> s16) & np.uint64(1)
    r = (((bits + np.uint64(0x7FFF) + lsb) >> s16) << s16).astype(np.uint32)
    out = r.view(np.float32).astype(np.float64)
    return np.where(np.isnan(f), np.nan, out).reshape(np.shape(x))


def in_value(i, d):
    """The i-th input element of dtype d (same formula as the C tests)."""
    k = (i * 37) % 23
    if d == "bool":
        return float(k % 3 != 0)
    if d in UINT:
        return float(k)
    if d in SINT:
        return float(k - 11)
    return (k - 11) / 4.0


def base_values(n, d):
    return np.array([in_value(i, d) for i in range(n)], dtype=np.float64)


SHAPE = (3, 4, 5)


def logical_input(d, layout, shape=SHAPE):
    """The logical array the C test builds for a layout (float64 values)."""
    a, b, c = shape
    if layout == 0:  # contiguous
        return base_values(a * b * c, d).reshape(shape)
    if layout == 1:  # transpose of a (c, b, a) array
        return base_values(a * b * c, d).reshape(c, b, a).transpose(2, 1, 0)
    if layout == 2:  # [:, :, ::2] of an (a, b, 2c) array
        return base_values(a * b * 2 * c, d).reshape(a, b, 2 * c)[:, :, ::2]
    if layout == 3:  # broadcast of a (1, b, c) array
        return np.broadcast_to(base_values(b * c, d).reshape(1, b, c), shape)
    raise ValueError(layout)


def at_least_float(d):
    return d if d in FLOAT else "float32"


def sum_dtype(d):
    if d in ("bool", "int8", "int16", "int32"):
        return "int32"
    if d in ("uint8", "uint16", "uint32"):
        return "uint32"
    return d


def to_dtype(v, d):
    """Values (float64 or int64 array) as dtype d would hold them, as float64."""
    v = np.asarray(v)
    if d == "bool":
        return (v != 0).astype(np.float64)
    if d in UINT or d in SINT:
        if v.dtype.kind == "f":
            # the 64-bit types' limits (exclusive scan identities) as doubles
            big = np.abs(v) >= 2.0 ** 62
            w = np.where(big, 0, v).astype(np.int64)
            return np.where(big, v, w.astype(d).astype(np.float64))
        return v.astype(d).astype(np.float64)
    if d == "bfloat16":
        return bf16_round(v.astype(np.float64))
    return v.astype(np.float64).astype(d).astype(np.float64)


def int_reduce(x, d, fn, axes, keep):
    acc = np.uint64 if d == "uint64" else np.int64
    with np.errstate(over="ignore"):
        return fn(x.astype(acc), axis=axes, keepdims=keep)


def norm_axes(axes, nd):
    return tuple(sorted(a % nd for a in axes))


def reduce_expect(op, d, x, form, axes, keep, ddof):
    """(out dtype, values) of an op on x (float64 values of dtype d)."""
    nd = x.ndim
    ax = tuple(range(nd)) if form == 0 else norm_axes(axes, nd)
    isint = d not in FLOAT
    if op in ("sum", "prod"):
        fn = np.sum if op == "sum" else np.prod
        od = sum_dtype(d)
        if isint:
            v = int_reduce(x, d, fn, ax, keep)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                v = fn(x, axis=ax, keepdims=keep)
        return od, to_dtype(v, od)
    if op in ("max", "min"):
        fn = np.max if op == "max" else np.min
        return d, to_dtype(fn(x, axis=ax, keepdims=keep), d)
    if op in ("all", "any"):
        fn = np.all if op == "all" else np.any
        return "bool", fn(x != 0, axis=ax, keepdims=keep).astype(np.float64)
    if op == "mean":
        od = at_least_float(d)
        return od, to_dtype(np.mean(x, axis=ax, keepdims=keep), od)
    if op in ("var", "std"):
        od = at_least_float(d)
        n = int(np.prod([x.shape[a] for a in ax])) if ax else 1
        mu = np.mean(x, axis=ax, keepdims=True)
        ss = np.sum((x - mu) ** 2, axis=ax, keepdims=keep)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = ss / max(n - ddof, 0) if ddof else ss / n
        if op == "std":
            v = np.sqrt(v)
        return od, to_dtype(v, od)
    if op == "logsumexp":
        od = at_least_float(d)
        m = np.max(x, axis=ax, keepdims=True)
        v = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
        if not keep:
            v = np.squeeze(v, axis=ax)
        return od, to_dtype(v, od)
    if op == "softmax":
        raw = list(range(nd)) if form == 0 else list(axes)
        fused = bool(raw) and (raw[-1] == nd - 1 or raw[-1] == -1)
        for i in range(len(raw) - 2, -1, -1):
            if raw[i] + 1 != raw[i + 1] or x.shape[raw[i]] != 1:
                fused = False
        m = np.max(x, axis=ax, keepdims=True)
        e = np.exp(x - m)
        v = to_dtype(e / np.sum(e, axis=ax, keepdims=True), at_least_float(d))
        if fused:
            return at_least_float(d), v
        if isint:
            frac = np.abs(v - np.round(v))
            assert np.all((frac > 1e-4) | (v < 0.5)), "softmax too close to an integer"
        # float -> integer truncates; float -> bool is "not zero"
        return d, to_dtype(np.trunc(v) if isint and d != "bool" else v, d)
    if op in ("argmax", "argmin"):
        fn = np.argmax if op == "argmax" else np.argmin
        if form == 0:
            v = np.array(fn(x.reshape(-1)))
            v = v.reshape((1,) * nd) if keep else v
        else:
            a = axes[0] % nd
            v = fn(x, axis=a)
            if keep:
                v = np.expand_dims(v, a)
        return "uint32", v.astype(np.float64)
    raise ValueError(op)


def scan_expect(op, d, x, axis, reverse, inclusive):
    od = "int32" if (op == "cumsum" and d == "bool") else d
    isint = d not in FLOAT
    y = np.flip(x, axis) if reverse else x
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "cumsum":
            r = np.cumsum(y.astype(np.int64) if isint else y, axis=axis)
            ident = 0.0
        elif op == "cumprod":
            r = np.cumprod(y.astype(np.int64) if isint else y, axis=axis)
            ident = 1.0
        elif op == "cummax" or (op == "logcumsumexp" and isint):
            r = np.maximum.accumulate(y, axis=axis)
            ident = -math.inf
        elif op == "cummin":
            r = np.minimum.accumulate(y, axis=axis)
            ident = math.inf
        else:
            r = np.logaddexp.accumulate(y, axis=axis)
            ident = -math.inf
    r = np.asarray(r)
    if not inclusive:
        if isint and ident in (math.inf, -math.inf):
            # the type's limits: MLX's identity of max / min on integers
            if d == "bool":
                ident = 1.0 if ident > 0 else 0.0
            else:
                info = np.iinfo(d)
                ident = float(info.max if ident > 0 else info.min)
        pad_shape = list(r.shape)
        pad_shape[axis] = 1
        pad = np.full(pad_shape, ident, dtype=np.float64)
        r = np.concatenate([pad, np.take(r, range(r.shape[axis] - 1), axis=axis).astype(np.float64)],
                           axis=axis)
    if reverse:
        r = np.flip(r, axis)
    return od, to_dtype(r, od)


def fmt(v):
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    if v == int(v) and abs(v) < 2 ** 53:
        return "%d" % int(v)
    return repr(float(v))


def emit_values(vals, out):
    line = "   "
    for v in vals:
        t = " " + fmt(float(v)) + ","
        if len(line) + len(t) > 100:
            out.append(line)
            line = "   "
        line += t
    if line.strip():
        out.append(line)


REDUCE_OPS = ["sum", "prod", "max", "min", "all", "any", "mean", "var", "std",
              "logsumexp", "softmax", "argmax", "argmin"]
# (form, axes, keepdims): plain; one axis; negative axis; several axes
# (unsorted); keepdims on and off.
COMBOS = [(0, [], 0), (1, [1], 1), (1, [-1], 0), (2, [2, 0], 0), (2, [-3, -2], 1)]
LAYOUT_OPS = ["sum", "max", "mean", "var", "logsumexp", "softmax", "argmax", "all"]
LAYOUT_DTYPES = ["float32", "int32", "float16"]


def reduce_header():
    cases, vals = [], []
    def add(op, d, layout, form, axes, keep, ddof=0):
        x = logical_input(d, layout)
        od, v = reduce_expect(op, d, x, form, axes, keep, ddof)
        v = np.asarray(v, dtype=np.float64)
        cases.append((op, d, layout, form, axes, keep, ddof, od, v.shape, len(vals)))
        vals.extend(v.reshape(-1).tolist())
    for op in REDUCE_OPS:
        for d in DTYPES:
            for form, axes, keep in COMBOS:
                if op.startswith("arg") and form == 2:
                    continue
                if op == "softmax" and form == 1 and keep:
                    continue  # keepdims is `precise` for softmax: covered below
                add(op, d, 0, form, axes, keep, 1 if (op in ("var", "std") and keep) else 0)
    for d in FLOAT:
        add("softmax", d, 0, 1, [1], 1)  # precise
    for op in LAYOUT_OPS:
        for d in LAYOUT_DTYPES:
            for layout in (1, 2, 3):
                for form, axes, keep in [(1, [0], 0), (2, [1, 2], 1), (0, [], 0)]:
                    if op.startswith("arg") and form == 2:
                        continue
                    add(op, d, layout, form, axes, keep)
    out = ["/* Generated by test/reduce_cases.py (numpy %s): do not edit. */" % np.__version__,
           "static const double reduce_vals[] = {"]
    emit_values(vals, out)
    out.append("};")
    out.append("static const reduce_case reduce_cases[] = {")
    for (op, d, layout, form, axes, keep, ddof, od, shape, off) in cases:
        ax = list(axes) + [0] * (3 - len(axes))
        sh = list(shape) + [0] * (3 - len(shape))
        out.append('    {"%s", %d, %d, %d, %d, {%d, %d, %d}, %d, %d, %d, %d, {%d, %d, %d}, %d},' % (
            op, ENUM[d], layout, form, len(axes), ax[0], ax[1], ax[2], keep, ddof, ENUM[od],
            len(shape), sh[0], sh[1], sh[2], off))
    out.append("};")
    return "\n".join(out) + "\n"


SCAN_OPS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
SCAN_SHAPE = (2, 3, 4)
SCAN_COMBOS = [(-1, 0, 1), (0, 1, 1), (1, 0, 0), (2, 1, 0), (-2, 1, 1)]


def scan_header():
    cases, vals = [], []
    def add(op, d, layout, axis, rev, incl):
        x = logical_input(d, layout, SCAN_SHAPE)
        od, v = scan_expect(op, d, x, axis % 3, rev, incl)
        cases.append((op, d, layout, axis, rev, incl, od, len(vals)))
        vals.extend(np.asarray(v, dtype=np.float64).reshape(-1).tolist())
    for op in SCAN_OPS:
        for d in DTYPES:
            for axis, rev, incl in SCAN_COMBOS:
                add(op, d, 0, axis, rev, incl)
    for op in ("cumsum", "cummax", "logcumsumexp"):
        for d in ("float32", "int32", "float16"):
            for layout in (1, 2, 3):
                for axis, rev, incl in [(0, 0, 1), (2, 1, 0)]:
                    add(op, d, layout, axis, rev, incl)
    out = ["/* Generated by test/reduce_cases.py (numpy %s): do not edit. */" % np.__version__,
           "static const double scan_vals[] = {"]
    emit_values(vals, out)
    out.append("};")
    out.append("static const scan_case scan_cases[] = {")
    for (op, d, layout, axis, rev, incl, od, off) in cases:
        out.append('    {"%s", %d, %d, %d, %d, %d, %d, %d},' % (op, ENUM[d], layout, axis, rev, incl,
                                                              ENUM[od], off))
    out.append("};")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "reduce_cases.h"), "w") as f:
        f.write(reduce_header())
    with open(os.path.join(here, "scan_cases.h"), "w") as f:
        f.write(scan_header())

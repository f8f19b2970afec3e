#!/usr/bin/env python3
"""Writes test/fixtures/sort_cases.h: what MLX 0.31.1 returns for sort,
argsort, partition, argpartition, topk and median over every dtype, along
each axis (positive and negative) and over the flattened array, on
contiguous, transposed, strided and broadcast inputs, with ties, -0.0,
infinities and NaN; and MLX's error messages for bad axes and kth / k.
test/test_sort.c rebuilds each input from the same values and compares.

Partition results are MLX's exact arrays (not just the kth element): the
library runs MLX's own selection algorithm and comparators.

Left out on purpose, where MLX's CPU result depends on how libstdc++'s
stable_sort handles a comparator that is not a strict weak order: NaN in
float16 / bfloat16 sort, argsort and median, and NaN in complex64 argsort
(docs/api.md states what the library does there: NaN last).

Needs MLX's CPU wheel in a venv CI never depends on:
    python3 -m venv /work/venv-mlx
    /work/venv-mlx/bin/pip install 'mlx[cpu]==0.31.1' numpy
Run (from the repository root):
    /work/venv-mlx/bin/python scripts/make_sort_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

MLX_VERSION = "0.31.1"
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "sort_cases.h")

# mlx-c's dtype enum values
DT = {
    "bool": 0, "uint8": 1, "uint16": 2, "uint32": 3, "uint64": 4, "int8": 5, "int16": 6,
    "int32": 7, "int64": 8, "float16": 9, "float32": 10, "float64": 11, "bfloat16": 12,
    "complex64": 13,
}
MXDT = {name: getattr(mx, name if name != "bool" else "bool_") for name in DT}
FLOATS = ("float16", "float32", "float64", "bfloat16")
OPS = {"sort": 0, "argsort": 1, "partition": 2, "argpartition": 3, "topk": 4, "median": 5}

rng = np.random.RandomState(14)
pool_in = []
pool_out = []
cases = []
errors = []


def values(dtype, n, nan):
    """n values of dtype with ties (a small set drawn with repeats)."""
    if dtype == "bool":
        return rng.randint(0, 2, n).astype(np.float64), None
    if dtype == "complex64":
        re = rng.randint(-2, 3, n).astype(np.float64)
        im = rng.randint(-2, 3, n).astype(np.float64)
        if nan:
            re[rng.rand(n) < 0.15] = np.nan
        return re, im
    if dtype in FLOATS:
        choice = np.array([-3, -2.5, -1, -0.0, 0.0, 0.5, 1, 2, 7, np.inf, -np.inf])
        v = choice[rng.randint(0, len(choice), n)]
        if nan:
            v[rng.rand(n) < 0.12] = np.nan
        return v, None
    lo, hi = {
        "uint8": (0, 256), "uint16": (0, 65536), "uint32": (0, 2**32), "uint64": (0, 2**40),
        "int8": (-128, 128), "int16": (-32768, 32768), "int32": (-(2**31), 2**31),
        "int64": (-(2**40), 2**40),
    }[dtype]
    # a few distinct values so rows have ties, including the extremes
    distinct = np.unique(np.concatenate([[lo, hi - 1, 0 if lo < 0 else lo + 1],
                                         rng.randint(lo // 4, hi // 4, 5, dtype=np.int64)]))
    return distinct[rng.randint(0, len(distinct), n)].astype(np.float64), None


def build(dtype, shape, nan, vals=None):
    n = int(np.prod(shape))
    re, im = values(dtype, n, nan) if vals is None else (np.asarray(vals, dtype=np.float64), None)
    if dtype == "complex64":
        a = mx.array((re + 1j * im).astype(np.complex64).reshape(shape))
        flat = np.stack([re, im], axis=1).reshape(-1)
    else:
        # mx.array makes float32 of float64 data: build from exact types
        if dtype in FLOATS:
            a = mx.array(re.reshape(shape).astype(np.float32)).astype(MXDT[dtype])
        else:
            a = mx.array(re.reshape(shape).astype(np.int64)).astype(MXDT[dtype])
        flat = re
    return a, flat


def layout_of(a, layout):
    if layout == 1:
        return mx.transpose(a)
    if layout == 2:
        return a[..., ::2]
    if layout == 3:
        return mx.broadcast_to(a, (3,) + a.shape[1:])
    return a


def out_values(r):
    if r.dtype == mx.complex64:
        c = np.array(r).reshape(-1)
        return np.stack([c.real, c.imag], axis=1).reshape(-1).astype(np.float64)
    if r.dtype == mx.bfloat16:
        r = r.astype(mx.float32)
    return np.array(r).astype(np.float64).reshape(-1)


def add(op, dtype, shape, layout, flat, axis=0, kth=0, axes=(), keepdims=False, nan=False,
        vals=None):
    a, vin = build(dtype, shape, nan, vals)
    x = layout_of(a, layout)
    if op == "sort":
        r = mx.sort(mx.reshape(x, (-1,)), 0) if flat else mx.sort(x, axis)
    elif op == "argsort":
        r = mx.argsort(mx.reshape(x, (-1,)), 0) if flat else mx.argsort(x, axis)
    elif op == "partition":
        r = mx.partition(mx.reshape(x, (-1,)), kth, 0) if flat else mx.partition(x, kth, axis)
    elif op == "argpartition":
        r = mx.argpartition(mx.reshape(x, (-1,)), kth, 0) if flat else mx.argpartition(x, kth, axis)
    elif op == "topk":
        r = mx.topk(mx.reshape(x, (-1,)), kth, 0) if flat else mx.topk(x, kth, axis)
    else:
        r = mx.median(x, axis=list(axes), keepdims=keepdims)
    if r.size == 0:
        # MLX's CPU sort divides by the zero axis size when evaluated
        # (SIGFPE); the shape and dtype are known without evaluating
        vout = np.zeros(0)
    else:
        mx.eval(r)
        vout = out_values(r)
    cases.append(dict(op=OPS[op], dtype=DT[dtype], shape=list(shape), layout=layout, flat=int(flat),
                      axis=axis, kth=kth, axes=list(axes), keepdims=int(keepdims),
                      in_off=len(pool_in), in_n=len(vin), out_dtype=DT[str(r.dtype).split(".")[-1]
                                                                      .replace("bool_", "bool")],
                      out_shape=list(r.shape), out_off=len(pool_out), out_n=len(vout)))
    pool_in.extend(vin.tolist())
    pool_out.extend(vout.tolist())


def killer(n, nth):
    """A row on which libstdc++'s nth_element (introselect: median of
    a[1], a[mid], a[n-1] moved to a[0], Hoare split, insertion sort below
    4, heap select after 2*floor(log2 n) splits) runs out of splits, found
    with McIlroy's adversary ("A killer adversary for quicksort", 1999):
    values are decided only when compared. Returns (values, splits run)."""
    gas = n
    val = [gas] * n
    state = {"solid": 0, "cand": 0, "depth_out": False}

    def less(x, y):  # x, y: items (original positions)
        if val[x] == gas and val[y] == gas:
            if x == state["cand"]:
                val[x] = state["solid"]
            else:
                val[y] = state["solid"]
            state["solid"] += 1
        if val[x] == gas:
            state["cand"] = x
        elif val[y] == gas:
            state["cand"] = y
        return val[x] < val[y]

    a = list(range(n))
    first, last, depth = 0, n, 2 * (n.bit_length() - 1)
    splits = 0
    while last - first > 3:
        if depth == 0:
            state["depth_out"] = True
            break
        depth -= 1
        splits += 1
        x, y, z = first + 1, first + (last - first) // 2, last - 1
        if less(a[x], a[y]):
            m = y if less(a[y], a[z]) else (z if less(a[x], a[z]) else x)
        else:
            m = x if less(a[x], a[z]) else (z if less(a[y], a[z]) else y)
        a[first], a[m] = a[m], a[first]
        f, l = first + 1, last
        while True:
            while less(a[f], a[first]):
                f += 1
            l -= 1
            while less(a[first], a[l]):
                l -= 1
            if not f < l:
                break
            a[f], a[l] = a[l], a[f]
            f += 1
        if f <= nth:
            first = f
        else:
            last = f
    return [v if v != gas else n for v in val], state["depth_out"]


def error(op, shape, axis, kth):
    a = mx.zeros(shape)
    try:
        if op == "sort":
            mx.sort(a, axis)
        elif op == "argsort":
            mx.argsort(a, axis)
        elif op == "partition":
            mx.partition(a, kth, axis)
        elif op == "argpartition":
            mx.argpartition(a, kth, axis)
        elif op == "topk":
            mx.topk(a, kth, axis)
        else:
            raise AssertionError(op)
    except ValueError as e:
        errors.append((OPS[op], list(shape), axis, kth, str(e)))
        return
    raise AssertionError(f"{op} {shape} {axis} {kth} did not fail")


def main():
    assert mx.__version__ == MLX_VERSION, mx.__version__
    for dtype in DT:
        nan_sort = dtype in ("float32", "float64", "complex64")
        nan_arg = dtype in ("float32", "float64")
        nan_part = dtype != "bool" and dtype in FLOATS + ("complex64",)
        # long rows (radix passes, partition rounds) for a few dtypes only,
        # to keep this file small
        long_rows = dtype in ("float32", "int16", "complex64")
        for layout, shape in ((0, (4, 9)), (1, (9, 4)), (2, (4, 18)), (3, (1, 9))):
            for axis in ((0, 1, -1, -2) if layout == 0 else (0, -1)):
                add("sort", dtype, shape, layout, False, axis=axis, nan=nan_sort)
                add("argsort", dtype, shape, layout, False, axis=axis, nan=nan_arg)
        add("sort", dtype, (3, 4, 5), 0, True, nan=nan_sort)
        add("argsort", dtype, (3, 4, 5), 1, True, nan=nan_arg)
        if long_rows:
            add("sort", dtype, (2, 3, 70), 2, False, axis=2, nan=nan_sort)
            add("argsort", dtype, (2, 70, 3), 0, False, axis=1, nan=nan_arg)
            add("sort", dtype, (300,), 0, False, axis=0, nan=nan_sort)
            add("argsort", dtype, (300,), 0, False, axis=-1, nan=nan_arg)
        for op in ("partition", "argpartition"):
            nan = nan_part if op == "partition" else dtype in FLOATS + ("complex64",)
            for layout, shape, axis, kth in ((0, (2, 41), 1, 7), (0, (2, 41), -1, -1), (1, (2, 41), 0, 20),
                                             (2, (2, 82), 1, 0), (3, (1, 41), -1, 40), (0, (3, 4, 7), 1, 3)):
                add(op, dtype, shape, layout, False, axis=axis, kth=kth, nan=nan)
            if long_rows:
                add(op, dtype, (120,), 0, False, axis=0, kth=60, nan=nan)
                add(op, dtype, (2, 200), 0, False, axis=1, kth=-50, nan=nan)
            add(op, dtype, (4, 25), 1, True, kth=33, nan=nan)
        for layout, shape, axis, k in ((0, (2, 41), 1, 5), (1, (2, 41), 0, 5), (2, (2, 82), -1, 41),
                                       (0, (2, 9), 1, 0), (3, (1, 41), -1, 12), (0, (3, 5, 4), -2, 3)):
            add("topk", dtype, shape, layout, False, axis=axis, kth=k, nan=nan_part)
        add("topk", dtype, (5, 13), 1, True, kth=9, nan=nan_part)
        nan_med = dtype in ("float32", "float64")
        for layout, shape, axes, keep in ((0, (4, 7), (1,), False), (0, (4, 6), (-1,), True),
                                          (1, (5, 4), (0,), False), (0, (3, 4, 5), (0, 2), True),
                                          (2, (3, 10), (1, 0), False), (0, (2, 3, 4), (0, 1, 2), False),
                                          (3, (1, 8), (0,), True)):
            add("median", dtype, shape, layout, False, axes=axes, keepdims=keep, nan=nan_med)
    # rows that drive MLX's nth_element into its heap select
    for n, nth in ((64, 32), (200, 190), (1000, 500)):
        vals, deep = killer(n, nth)
        assert deep, (n, nth)
        for dtype in ("int32", "float32"):
            add("partition", dtype, (n,), 0, False, axis=0, kth=nth, vals=vals)
            add("argpartition", dtype, (n,), 0, False, axis=0, kth=nth, vals=vals)
    # empty arrays: the empty result
    for dtype in ("float32", "int64", "complex64"):
        add("sort", dtype, (0, 5), 0, False, axis=0)
        add("sort", dtype, (3, 0), 0, False, axis=0)
        add("argsort", dtype, (0, 5), 0, False, axis=1)
        add("argsort", dtype, (2, 0, 3), 0, True)
        add("partition", dtype, (0, 5), 0, False, axis=1, kth=2)
        add("argpartition", dtype, (0, 5), 0, False, axis=-1, kth=-1)
        add("topk", dtype, (0, 5), 0, False, axis=1, kth=2)
        add("topk", dtype, (4, 0), 0, False, axis=1, kth=0)
        add("median", dtype, (0, 5), 0, False, axes=(1,))
    for op in ("sort", "argsort", "partition", "argpartition", "topk"):
        error(op, (2, 3), 2, 1)
        error(op, (2, 3), -3, 1)
        error(op, (4,), 1, 0)
    for op in ("partition", "argpartition"):
        error(op, (2, 3), 1, 3)
        error(op, (2, 3), 1, -4)
        error(op, (2, 3), -2, 2)
        error(op, (2, 0), 1, 0)
    error("topk", (2, 3), 1, 4)
    error("topk", (2, 3), -1, -1)
    error("topk", (2, 3), 0, 3)

    def ints(v):
        return "{" + ", ".join(str(int(x)) for x in v) + "}"

    def dbl(v):
        if np.isnan(v):
            return "NAN" if not np.signbit(v) else "-NAN"
        if np.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        if v == 0:
            return "-0.0" if np.signbit(v) else "0"
        return "%.17g" % v

    with open(OUT, "w") as f:
        f.write(f"/* Generated by scripts/make_sort_fixtures.py from MLX {MLX_VERSION}: do not edit.\n"
                " * Each case: op, input dtype, base shape, layout, flattened form,\n"
                " * axis, kth (or k), median axes and keepdims, the base values in\n"
                " * sort_in (complex64 as re, im pairs), and MLX's output: dtype, shape\n"
                " * and values in sort_out. */\n")
        f.write("static const double sort_in[] = {\n")
        for i in range(0, len(pool_in), 16):
            f.write("    " + ", ".join(dbl(v) for v in pool_in[i:i + 16]) + ",\n")
        f.write("};\nstatic const double sort_out[] = {\n")
        for i in range(0, len(pool_out), 16):
            f.write("    " + ", ".join(dbl(v) for v in pool_out[i:i + 16]) + ",\n")
        f.write("};\nstatic const sort_case sort_cases[] = {\n")
        for c in cases:
            f.write(f"    {{{c['op']}, {c['dtype']}, {len(c['shape'])}, {ints(c['shape'] or [0])}, "
                    f"{c['layout']}, {c['flat']}, {c['axis']}, {c['kth']}, {len(c['axes'])}, "
                    f"{ints(c['axes'] or [0])}, {c['keepdims']}, {c['in_off']}, {c['in_n']}, "
                    f"{c['out_dtype']}, {len(c['out_shape'])}, {ints(c['out_shape'] or [0])}, "
                    f"{c['out_off']}, {c['out_n']}}},\n")
        f.write("};\nstatic const sort_error_case sort_errors[] = {\n")
        for op, shape, axis, kth, msg in errors:
            f.write(f"    {{{op}, {len(shape)}, {ints(shape)}, {axis}, {kth}, \"{msg}\"}},\n")
        f.write("};\n")
    print(f"{len(cases)} cases, {len(errors)} errors, {len(pool_in)} + {len(pool_out)} values -> {OUT}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes test/fixtures/conv_cases.h: what MLX 0.31.1 returns for
conv1d/2d/3d, conv_general and conv_transpose1d/2d/3d over strides,
padding (symmetric, low/high, negative), kernel and input dilation,
groups (depthwise included), flip and output_padding, in float32, float16,
bfloat16 and float64; and MLX's error messages for bad arguments.
test/test_conv.c rebuilds each input from the same formula and compares.

Inputs are value(k, i) = (((i * 7 + k * 5 + 3) % 17) - 8) / 8 for element
i of input k (0 the input, 1 the weight): eighths, exact in every
floating dtype, so both sides convolve the same numbers.

Needs MLX's CPU wheel in a venv CI never depends on:
    /work/venv-mlx/bin/pip install 'mlx[cpu]==0.31.1' numpy
Run (from the repository root):
    /work/venv-mlx/bin/python scripts/make_conv_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

MLX_VERSION = "0.31.1"
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "conv_cases.h")

DT = {"float16": 9, "float32": 10, "float64": 11, "bfloat16": 12}
GENERAL, FIXED, TRANSPOSE = 0, 1, 2


def values(k, shape):
    n = int(np.prod(shape))
    i = np.arange(n)
    return ((((i * 7 + k * 5 + 3) % 17) - 8) / 8.0).reshape(shape)


cases = []  # dicts
pool = []
errors = []


def run(kind, dtype, xs, ws, stride=None, lo=None, hi=None, kdil=None, idil=None, groups=1, flip=False,
        outpad=None):
    nsp = len(xs) - 2
    x = mx.array(values(0, xs).astype(np.float32)).astype(getattr(mx, dtype))
    w = mx.array(values(1, ws).astype(np.float32)).astype(getattr(mx, dtype))
    stride = stride or [1] * nsp
    kdil = kdil or [1] * nsp
    idil = idil or [1] * nsp
    lo = lo if lo is not None else [0] * nsp
    hi = hi if hi is not None else list(lo)
    outpad = outpad or [0] * nsp
    if kind == GENERAL:
        y = mx.conv_general(x, w, stride=stride, padding=(lo, hi), kernel_dilation=kdil, input_dilation=idil,
                            groups=groups, flip=flip)
    elif kind == FIXED:
        f = {1: mx.conv1d, 2: mx.conv2d, 3: mx.conv3d}[nsp]
        a = (lambda v: v[0]) if nsp == 1 else tuple
        y = f(x, w, stride=a(stride), padding=a(lo), dilation=a(kdil), groups=groups)
    else:
        f = {1: mx.conv_transpose1d, 2: mx.conv_transpose2d, 3: mx.conv_transpose3d}[nsp]
        a = (lambda v: v[0]) if nsp == 1 else tuple
        y = f(x, w, stride=a(stride), padding=a(lo), dilation=a(kdil), output_padding=a(outpad), groups=groups)
    def call(x, w):
        if kind == GENERAL:
            return mx.conv_general(x, w, stride=stride, padding=(lo, hi), kernel_dilation=kdil,
                                   input_dilation=idil, groups=groups, flip=flip)
        if kind == FIXED:
            f = {1: mx.conv1d, 2: mx.conv2d, 3: mx.conv3d}[nsp]
            a = (lambda v: v[0]) if nsp == 1 else tuple
            return f(x, w, stride=a(stride), padding=a(lo), dilation=a(kdil), groups=groups)
        f = {1: mx.conv_transpose1d, 2: mx.conv_transpose2d, 3: mx.conv_transpose3d}[nsp]
        a = (lambda v: v[0]) if nsp == 1 else tuple
        return f(x, w, stride=a(stride), padding=a(lo), dilation=a(kdil), output_padding=a(outpad),
                 groups=groups)

    goff = -1
    if dtype == "float32":
        # the vjp with cotangent value(2, .) of the output's shape, for both inputs
        cot = mx.array(values(2, y.shape).astype(np.float32))
        try:
            _, (gx, gw) = mx.vjp(call, [x, w], [cot])
            mx.eval(gx, gw)
        except ValueError:
            # MLX 0.31.1's input cotangent pads its high side by the forward
            # low padding's complement computed from padding_hi: with unequal
            # low and high padding its shape is wrong and MLX raises
            gx = None
        if gx is not None and (gx.shape != x.shape or gw.shape != w.shape):
            # padding beyond the kernel's extent: MLX crops its input
            # cotangent twice and returns the wrong shape
            gx = None
        if gx is not None:
            goff = len(pool)
            pool.extend(np.array(gx, dtype=np.float64).ravel().tolist())
            pool.extend(np.array(gw, dtype=np.float64).ravel().tolist())
    y = np.array(y.astype(mx.float64) if dtype != "float64" else y, dtype=np.float64)
    pad3 = lambda v, d: list(v) + [d] * (3 - len(v))
    cases.append(dict(kind=kind, nsp=nsp, dtype=DT[dtype], xs=list(xs), ws=list(ws), stride=pad3(stride, 1),
                      lo=pad3(lo, 0), hi=pad3(hi, 0), kdil=pad3(kdil, 1), idil=pad3(idil, 1),
                      outpad=pad3(outpad, 0), groups=groups, flip=int(flip), ys=list(y.shape),
                      off=len(pool), n=y.size, goff=goff))
    pool.extend(y.ravel().tolist())


def err(kind, xs, ws, stride=None, lo=None, hi=None, kdil=None, idil=None, groups=1, flip=False, outpad=None,
        dtype="float32"):
    """Records MLX's message for a call that must fail."""
    nsp = max(len(xs) - 2, 1)
    stride = stride or [1] * nsp
    kdil = kdil or [1] * nsp
    idil = idil or [1] * nsp
    lo = lo if lo is not None else [0] * nsp
    hi = hi if hi is not None else list(lo)
    x = mx.array(values(0, xs).astype(np.float32)).astype(getattr(mx, dtype))
    w = mx.array(values(1, ws).astype(np.float32))
    try:
        if kind == GENERAL:
            mx.conv_general(x, w, stride=stride, padding=(lo, hi), kernel_dilation=kdil, input_dilation=idil,
                            groups=groups, flip=flip)
        else:
            f = {1: mx.conv1d, 2: mx.conv2d, 3: mx.conv3d}[nsp]
            a = (lambda v: v[0]) if nsp == 1 else tuple
            f(x, w, stride=a(stride), padding=a(lo), dilation=a(kdil), groups=groups)
    except ValueError as e:
        errors.append(dict(kind=kind, nsp=nsp, dtype=DT.get(dtype, 7), xs=list(xs), ws=list(ws),
                           stride=stride, lo=lo, hi=hi, kdil=kdil, idil=idil, groups=groups, flip=int(flip),
                           msg=str(e)))
        return
    raise SystemExit("expected an error: %r %r" % (xs, ws))


# ---- 1-d ----
run(FIXED, "float32", [2, 9, 3], [4, 3, 3])
run(FIXED, "float32", [2, 9, 3], [4, 3, 3], stride=[2], lo=[1])
run(FIXED, "float32", [1, 11, 2], [3, 3, 2], kdil=[2], lo=[2])
run(FIXED, "float32", [2, 8, 4], [6, 3, 2], groups=2, lo=[1])
run(FIXED, "float32", [2, 8, 4], [8, 3, 1], groups=4, lo=[1])  # depthwise, 2 outputs per channel
run(FIXED, "float32", [1, 10, 3], [3, 3, 1], groups=3, stride=[3], kdil=[2], lo=[3])
run(GENERAL, "float32", [2, 7, 3], [2, 3, 3], stride=[2], lo=[1], hi=[2], kdil=[1], idil=[2], flip=True)
run(GENERAL, "float32", [1, 9, 2], [2, 2, 2], lo=[-2], hi=[1])
run(GENERAL, "float32", [1, 9, 2], [2, 4, 2], lo=[0], hi=[-3], stride=[2])
run(GENERAL, "float32", [2, 6, 4], [4, 3, 2], groups=2, flip=True, idil=[3], lo=[2], hi=[2])
run(FIXED, "float16", [2, 9, 3], [4, 3, 3], stride=[2], lo=[1])
run(FIXED, "bfloat16", [2, 9, 3], [4, 3, 3], lo=[2], kdil=[2])
run(FIXED, "float64", [2, 9, 3], [4, 3, 3], stride=[2], lo=[1])
run(TRANSPOSE, "float32", [2, 5, 3], [4, 3, 3])
run(TRANSPOSE, "float32", [2, 5, 3], [4, 3, 3], stride=[2], lo=[1], outpad=[1])
run(TRANSPOSE, "float32", [1, 6, 4], [4, 3, 2], stride=[3], kdil=[2], groups=2)
run(TRANSPOSE, "float16", [1, 6, 2], [3, 4, 2], stride=[2], lo=[2])
# ---- 2-d ----
run(FIXED, "float32", [2, 6, 5, 3], [4, 3, 3, 3])
run(FIXED, "float32", [2, 7, 6, 3], [5, 3, 3, 3], stride=[2, 2], lo=[1, 1])
run(FIXED, "float32", [1, 7, 8, 2], [3, 3, 2, 2], stride=[1, 2], lo=[2, 0], kdil=[2, 3])
run(FIXED, "float32", [2, 5, 5, 4], [4, 3, 3, 2], groups=2, lo=[1, 1])
run(FIXED, "float32", [2, 6, 6, 4], [4, 3, 3, 1], groups=4, lo=[1, 1])  # depthwise
run(FIXED, "float32", [1, 6, 6, 3], [6, 3, 3, 1], groups=3, stride=[2, 2], lo=[1, 1])
run(FIXED, "float32", [2, 4, 5, 6], [7, 1, 1, 6])  # 1x1
run(FIXED, "float32", [2, 5, 5, 6], [7, 1, 1, 6], stride=[2, 2])
run(FIXED, "float32", [2, 4, 4, 6], [3, 1, 1, 6], lo=[1, 0])
run(GENERAL, "float32", [1, 5, 4, 2], [3, 2, 3, 2], stride=[2, 1], lo=[1, 0], hi=[0, 2], kdil=[1, 2],
    idil=[2, 1], flip=True)
run(GENERAL, "float32", [1, 6, 5, 2], [2, 3, 2, 2], lo=[-1, 1], hi=[1, -2])
run(GENERAL, "float32", [1, 4, 4, 4], [4, 2, 2, 2], groups=2, idil=[2, 2], flip=True)
run(FIXED, "float16", [2, 6, 5, 3], [4, 3, 3, 3], lo=[1, 1])
run(FIXED, "bfloat16", [2, 6, 5, 4], [4, 3, 3, 2], lo=[1, 1], groups=2)
run(FIXED, "float16", [2, 6, 6, 4], [4, 3, 3, 1], groups=4, lo=[1, 1])
run(FIXED, "float64", [1, 6, 5, 3], [2, 3, 3, 3], lo=[1, 1], stride=[2, 1])
run(TRANSPOSE, "float32", [1, 3, 4, 2], [3, 3, 3, 2], stride=[2, 2], lo=[1, 1], outpad=[1, 0])
run(TRANSPOSE, "float32", [2, 4, 3, 4], [4, 2, 3, 2], stride=[1, 2], kdil=[2, 1], groups=2)
run(TRANSPOSE, "bfloat16", [1, 3, 3, 2], [2, 3, 3, 2], stride=[2, 2], lo=[1, 1], outpad=[1, 1])
# ---- 3-d ----
run(FIXED, "float32", [1, 4, 4, 4, 2], [3, 2, 2, 2, 2])
run(FIXED, "float32", [2, 5, 4, 5, 2], [2, 3, 2, 3, 2], stride=[2, 1, 2], lo=[1, 0, 1], kdil=[1, 2, 1])
run(GENERAL, "float32", [1, 3, 4, 3, 2], [2, 2, 2, 2, 2], idil=[2, 1, 2], flip=True, lo=[1, 0, 0],
    hi=[0, 1, 1])
run(FIXED, "float16", [1, 4, 4, 4, 2], [3, 2, 2, 2, 2], lo=[1, 1, 1])
run(TRANSPOSE, "float32", [1, 3, 2, 3, 2], [2, 2, 3, 2, 2], stride=[2, 1, 2], lo=[0, 1, 1], outpad=[1, 0, 1])
# ---- errors ----
err(FIXED, [2, 9, 3], [4, 3, 3], dtype="int32")
err(FIXED, [2, 9, 3], [4, 3, 3, 1])
err(FIXED, [2, 9, 3], [4, 3, 2])
err(FIXED, [2, 9, 4], [4, 3, 2], groups=3)
err(FIXED, [2, 9, 4], [3, 3, 2], groups=2)
err(FIXED, [2, 9, 4], [4, 3, 1], groups=2)
err(FIXED, [2, 9, 3], [4, 12, 3])
err(FIXED, [2, 9, 3], [4, 3, 3], stride=[0])
err(FIXED, [2, 9, 3], [4, 3, 3], kdil=[0])
err(GENERAL, [2, 9, 3], [4, 3, 3], idil=[-1])
err(GENERAL, [1, 4, 4, 4, 2], [2, 2, 2, 2, 1], groups=2)
err(GENERAL, [2, 6, 5, 3], [4, 3, 3, 3], stride=[1, 1, 1])
err(GENERAL, [2, 6, 5, 3], [4, 3, 3, 3], lo=[1, 1, 1], hi=[0, 0])


def ints(v):
    return "{" + ", ".join(str(int(a)) for a in v) + "}"


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


with open(OUT, "w") as f:
    f.write("/* Generated by scripts/make_conv_fixtures.py from MLX %s: do not edit.\n" % MLX_VERSION)
    f.write(" * Each case: how it is called (0 conv_general, 1 conv1d/2d/3d, 2 conv_transpose1d/2d/3d),\n"
            " * spatial dims, dtype, input and weight shapes (values from the formula in the\n"
            " * script), strides, padding low/high, kernel and input dilation, output_padding,\n"
            " * groups, flip, and MLX's output shape and values (conv_out, offset and count);\n"
            " * for float32 cases, goff >= 0 is where MLX's vjp for the cotangent value(2, .)\n"
            " * starts in conv_out: the input's cotangent, then the weight's. */\n")
    f.write("typedef struct conv_case {\n    int kind, nsp, dtype;\n    int xs[5], ws[5];\n"
            "    int stride[3], lo[3], hi[3], kdil[3], idil[3], outpad[3];\n    int groups, flip;\n"
            "    int ys[5];\n    int off, n;\n    int goff;\n} conv_case;\n\n")
    f.write("static const double conv_out[] = {\n")
    for i in range(0, len(pool), 6):
        f.write("    " + ", ".join(repr(float(v)) for v in pool[i:i + 6]) + ",\n")
    f.write("};\n\nstatic const conv_case conv_cases[] = {\n")
    for c in cases:
        f.write("    {%d, %d, %d, %s, %s, %s, %s, %s, %s, %s, %s, %d, %d, %s, %d, %d, %d},\n" % (
            c["kind"], c["nsp"], c["dtype"], ints(c["xs"] + [0] * (5 - len(c["xs"]))),
            ints(c["ws"] + [0] * (5 - len(c["ws"]))), ints(c["stride"]), ints(c["lo"]), ints(c["hi"]),
            ints(c["kdil"]), ints(c["idil"]), ints(c["outpad"]), c["groups"], c["flip"],
            ints(c["ys"] + [0] * (5 - len(c["ys"]))), c["off"], c["n"], c["goff"]))
    f.write("};\n\n")
    f.write("/* Calls MLX refuses: kind 0 passes every vector with its own length. */\n")
    f.write("typedef struct conv_error_case {\n    int kind, dtype;\n    int xnd, xs[6], wnd, ws[6];\n"
            "    int nstride, stride[3], nlo, lo[3], nhi, hi[3], nkdil, kdil[3], nidil, idil[3];\n"
            "    int groups, flip;\n    const char *msg;\n} conv_error_case;\n\n")
    f.write("static const conv_error_case conv_errors[] = {\n")
    for e in errors:
        pad = lambda v, n: ints(list(v) + [0] * (n - len(v)))
        f.write("    {%d, %d, %d, %s, %d, %s, %d, %s, %d, %s, %d, %s, %d, %s, %d, %s, %d, %d,\n     %s},\n" % (
            e["kind"], e["dtype"], len(e["xs"]), pad(e["xs"], 6), len(e["ws"]), pad(e["ws"], 6),
            len(e["stride"]), pad(e["stride"], 3), len(e["lo"]), pad(e["lo"], 3), len(e["hi"]),
            pad(e["hi"], 3), len(e["kdil"]), pad(e["kdil"], 3), len(e["idil"]), pad(e["idil"], 3),
            e["groups"], e["flip"], cstr(e["msg"])))
    f.write("};\n")
print("wrote %d cases (%d values), %d errors to %s" % (len(cases), len(pool), len(errors), OUT))

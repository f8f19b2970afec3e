#!/usr/bin/env python3
"""Measures the float32 error of Winograd F(4x4, 3x3) convolutions against a
float64 sum, for the numbers stated in src/graph/conv_wino.c, simd/wino4_k.c
and docs/architecture.md.

  wino4_points.py points     simulates F(4x4, 3x3) in float32 with numpy for
                             several interpolation point sets (the one with
                             the lowest error is the one simd/wino4_k.c uses)
  wino4_points.py lib LIB    the library's own results (LIB: libmlx-cpu.so)
                             on the bench layers and on layers with up to 512
                             input channels, with the direct path, F(2x2) and
                             F(4x4) each forced (MLX_CPU_CONV_WINOGRAD=0/2/4)

Errors are relative to the float64 result's RMS: "rms" is the error's RMS,
"max" its largest magnitude; "maxrel" is the largest |error| / (|exact| +
1e-3 RMS), an element-wise relative error that ignores exact zeros. Inputs
are uniform in [-1, 1] ("uniform") or that rectified ("relu", as after a
ReLU); weights normal with variance 1 / (9 C). Needs numpy.
"""
import os
import subprocess
import sys
from fractions import Fraction as F

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def toom_cook(points, m=4, r=3):
    """A^T, G, B^T of F(m, r) for the finite points given plus infinity
    (1 / N_j of the Lagrange basis in G; B^T solved from the identity)."""
    n = m + r - 1
    pts = [F(p) for p in points]
    at, g = np.zeros((m, n)), np.zeros((n, r))
    for j, a in enumerate(pts):
        nj = F(1)
        for l, b in enumerate(pts):
            if l != j:
                nj *= a - b
        for i in range(m):
            at[i, j] = float(a ** i)
        for k in range(r):
            g[j, k] = float(a ** k / nj)
    at[m - 1, n - 1] = g[n - 1, r - 1] = 1
    rows, rhs = [], []
    for i in range(m):
        for k in range(r):
            for p in range(n):
                row = np.zeros((n, n))
                row[:, p] = at[i, :] * g[:, k]
                rows.append(row.ravel())
                rhs.append(1.0 if p == i + k else 0.0)
    sol = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    return at, g, sol.reshape(n, n)


def winograd_f32(x, w, at, g, bt):
    """x (N, H, W, C) padded, w (O, 3, 3, C): the F(m x m, 3x3) result with
    every stage rounded to float32."""
    f = np.float32
    m, n = at.shape
    N, H, W, C = x.shape
    O = w.shape[0]
    oh, ow = H - 2, W - 2
    th, tw = -(-oh // m), -(-ow // m)
    xp = np.zeros((N, th * m + 2, tw * m + 2, C), f)
    xp[:, :H, :W] = x
    u = np.einsum("ak,oklc,bl->aboc", g.astype(f), w, g.astype(f)).astype(f)
    d = np.stack([np.stack([xp[:, i * m:i * m + n, j * m:j * m + n] for j in range(tw)], 1)
                  for i in range(th)], 1)
    v = np.einsum("ap,nijpqc,bq->nijabc", bt.astype(f), d, bt.astype(f)).astype(f)
    prod = np.zeros((N, th, tw, n, n, O), f)
    vr = v.reshape(-1, n, n, C)
    for a in range(n):
        for b in range(n):
            prod[..., a, b, :] = (vr[:, a, b, :] @ u[a, b].T).reshape(N, th, tw, O)
    y = np.einsum("pa,nijabo,qb->nipjqo", at.astype(f), prod, at.astype(f)).astype(f)
    return y.reshape(N, th * m, tw * m, O)[:, :oh, :ow]


def direct(x, w, dt):
    N, H, W, C = x.shape
    O = w.shape[0]
    oh, ow = H - 2, W - 2
    cols = np.stack([x[:, i:i + oh, j:j + ow] for i in range(3) for j in range(3)], 3).astype(dt)
    return (cols.reshape(-1, 9 * C) @ w.reshape(O, 9 * C).astype(dt).T).reshape(N, oh, ow, O)


def stats(y, ref):
    e = y.astype(np.float64) - ref
    rms = np.sqrt((ref ** 2).mean())
    return (np.sqrt((e ** 2).mean()) / rms, np.abs(e).max() / rms,
            (np.abs(e) / (np.abs(ref) + 1e-3 * rms)).max())


def data(rng, n, h, c, o, kind):
    x = rng.uniform(-1, 1, (n, h + 2, h + 2, c)).astype(np.float32)
    if kind == "relu":
        x = np.maximum(x, 0)
    w = (rng.standard_normal((o, 3, 3, c)) / np.sqrt(9 * c)).astype(np.float32)
    return x, w


POINT_SETS = [("0 1 -1 2 -2", [0, 1, -1, 2, -2]),
              ("0 1 -1 1/2 -1/2", [0, 1, -1, F(1, 2), F(-1, 2)]),
              ("0 1 -1 2 -1/2", [0, 1, -1, 2, F(-1, 2)]),
              ("0 1 -1 1/2 -2", [0, 1, -1, F(1, 2), -2])]
SIM_LAYERS = [(2, 16, 64, 32, "uniform"), (2, 16, 64, 32, "relu"), (1, 10, 512, 32, "uniform"),
              (1, 30, 256, 64, "uniform"), (1, 30, 256, 64, "relu"), (1, 14, 512, 64, "relu")]
# (batch, H = W, C, O, input): the bench's 3x3 layers, then up to 512 channels
LIB_LAYERS = [(8, 56, 64, 64, "relu"), (8, 28, 128, 128, "relu"), (2, 16, 64, 32, "uniform"),
              (1, 30, 256, 64, "uniform"), (1, 30, 256, 64, "relu"), (1, 14, 512, 64, "relu"),
              (2, 12, 512, 128, "uniform")]


def points():
    rng = np.random.default_rng(0)
    for n, h, c, o, kind in SIM_LAYERS:
        x, w = data(rng, n, h, c, o, kind)
        ref = direct(x.astype(np.float64), w.astype(np.float64), np.float64)
        print("%dx%dx%dx%d -> %d %s: direct float32 rms %.2e max %.2e maxrel %.2e" % (
            (n, h, h, c, o, kind) + stats(direct(x, w, np.float32), ref)))
        for name, pts in POINT_SETS:
            at, g, bt = toom_cook(pts)
            print("  F(4x4) points %-16s rms %.2e max %.2e maxrel %.2e" % (
                (name,) + stats(winograd_f32(x, w, at, g, bt), ref)))


def lib_mode(path):
    """One process per mode: the library reads MLX_CPU_CONV_WINOGRAD once."""
    sys.path.insert(0, os.path.join(ROOT, "test", "oracle"))
    import mlx as binding
    lib = binding.Lib(path, os.path.join(ROOT, "include", "mlx", "c", "ops.h"))
    rng = np.random.default_rng(0)
    for n, h, c, o, kind in LIB_LAYERS:
        x, w = data(rng, n, h, c, o, kind)
        ref = direct(x.astype(np.float64), w.astype(np.float64), np.float64)
        # the handles must outlive the call (the binding frees on collection)
        xa, wa = lib.from_numpy(x, "float32"), lib.from_numpy(w, "float32")
        y = lib.call("conv2d", xa, wa, 1, 1, 0, 0, 1, 1, 1)
        got, _ = lib.to_numpy(y)
        print("%dx%dx%dx%d -> %d %s: rms %.2e max %.2e maxrel %.2e" % (
            (n, h, h, c, o, kind) + stats(got, ref)), flush=True)


def main(argv):
    if argv[1:2] == ["points"]:
        points()
    elif argv[1:2] == ["lib"] and len(argv) == 3:
        for mode, name in (("0", "direct"), ("2", "F(2x2)"), ("4", "F(4x4)")):
            print("== %s (MLX_CPU_CONV_WINOGRAD=%s)" % (name, mode), flush=True)
            env = dict(os.environ, MLX_CPU_CONV_WINOGRAD=mode)
            subprocess.run([sys.executable, argv[0], "lib-mode", argv[2]], env=env, check=True)
    elif argv[1:2] == ["lib-mode"] and len(argv) == 3:
        lib_mode(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

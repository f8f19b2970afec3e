#!/usr/bin/env python3
"""Writes test/fixtures/linalg_cases.h: what MLX 0.31.1 returns for each
linalg.h function on small inputs, float32, float64 and complex64 where MLX
takes it, including the conventions numpy does not share (eig's order and
vectors from LAPACK on the transpose, eigh's UPLO read on the transpose, lu's
row indices, signs of Q, U and Vt). test/test_linalg.c rebuilds each input
and compares every output within a few ulps times the size.

Left out: MLX's eig vectors of complex64 input, which are the conjugates of
its own right eigenvectors (A v != w v); the library returns right
eigenvectors there (test_linalg checks their residual instead).

Needs MLX's CPU wheel in a venv CI never depends on:
    /work/venv-mlx/bin/python scripts/make_linalg_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "linalg_cases.h")
DT = {"float32": 10, "float64": 11, "complex64": 13, "uint32": 3}
FN = ["inv", "tri_inv_lower", "tri_inv_upper", "cholesky_lower", "cholesky_upper", "cholesky_inv",
      "qr", "svd", "svdvals", "eig", "eigvals", "eigh_L", "eigh_U", "eigvalsh_L", "lu", "lu_factor",
      "solve", "solve_triangular_upper", "pinv", "norm_fro", "norm_nuc", "norm_ord", "cross"]
rng = np.random.RandomState(12)
vals = []
cases = []


def add_vals(a):
    a = np.asarray(a)
    off = len(vals)
    if np.iscomplexobj(a):
        for z in a.reshape(-1):
            vals.extend([float(z.real), float(z.imag)])
    else:
        vals.extend(float(x) for x in a.reshape(-1))
    return off


def dtname(a):
    return str(a.dtype).replace("mlx.core.", "")


def case(fn, inputs, outputs, extra=0.0):
    ins = []
    for a in inputs:
        a = np.array(a)
        ins.append((DT[str(a.dtype)], a.shape, add_vals(a)))
    outs = []
    for o in outputs:
        mx.eval(o)
        d = dtname(o)
        arr = np.array(o)
        outs.append((DT[d], arr.shape, add_vals(arr)))
    cases.append((FN.index(fn), extra, ins, outs))


def M(a):
    """An MLX array of a's dtype (MLX would make float64 input float32)."""
    a = np.asarray(a)
    return mx.array(a, dtype=mx.float64) if a.dtype == np.float64 else mx.array(a)


def mk(shape, dtype, kind="rand"):
    a = rng.uniform(-1, 1, shape)
    if dtype == "complex64":
        a = a + 1j * rng.uniform(-1, 1, shape)
    if kind == "spd":
        a = a @ np.swapaxes(a.conj(), -1, -2) + shape[-1] * np.eye(shape[-1])
    if kind == "tri_lower":
        a = np.tril(a) + 2 * np.eye(shape[-1])
    if kind == "tri_upper":
        a = np.triu(a) + 2 * np.eye(shape[-1])
    return a.astype(dtype)


cpu = mx.cpu
for dt in ("float32", "float64"):
    for shape in ((3, 3), (2, 4, 4)):
        a = mk(shape, dt)
        case("inv", [a], [mx.linalg.inv(M(a), stream=cpu)])
        lo, up = mk(shape, dt, "tri_lower"), mk(shape, dt, "tri_upper")
        case("tri_inv_lower", [lo], [mx.linalg.tri_inv(M(lo), upper=False, stream=cpu)])
        case("tri_inv_upper", [up], [mx.linalg.tri_inv(M(up), upper=True, stream=cpu)])
        spd = mk(shape, dt, "spd")
        case("cholesky_lower", [spd], [mx.linalg.cholesky(M(spd), upper=False, stream=cpu)])
        case("cholesky_upper", [spd], [mx.linalg.cholesky(M(spd), upper=True, stream=cpu)])
        case("cholesky_inv", [lo], [mx.linalg.cholesky_inv(M(lo), stream=cpu)])
        case("eig", [a], list(mx.linalg.eig(M(a), stream=cpu)))
        case("eigvals", [a], [mx.linalg.eigvals(M(a), stream=cpu)])
        case("eigh_L", [a], list(mx.linalg.eigh(M(a), UPLO="L", stream=cpu)))
        case("eigh_U", [spd], list(mx.linalg.eigh(M(spd), UPLO="U", stream=cpu)))
        case("eigvalsh_L", [a], [mx.linalg.eigvalsh(M(a), stream=cpu)])
        if len(shape) == 2:  # MLX's solve takes a vector b only for one matrix
            b = mk(shape[-1:], dt)
            case("solve", [a, b], [mx.linalg.solve(M(a), M(b), stream=cpu)])
        bm = mk(shape[:-1] + (2,), dt)
        case("solve", [a, bm], [mx.linalg.solve(M(a), M(bm), stream=cpu)])
        case("solve_triangular_upper", [up, bm],
             [mx.linalg.solve_triangular(M(up), M(bm), upper=True, stream=cpu)])
    for shape in ((3, 3), (4, 2), (2, 3, 5)):
        a = mk(shape, dt)
        case("qr", [a], list(mx.linalg.qr(M(a), stream=cpu)))
        case("svd", [a], mx.linalg.svd(M(a), stream=cpu))
        case("svdvals", [a], [mx.linalg.svd(M(a), compute_uv=False, stream=cpu)])
        case("lu", [a], mx.linalg.lu(M(a), stream=cpu))
        case("lu_factor", [a], list(mx.linalg.lu_factor(M(a), stream=cpu)))
        case("pinv", [a], [mx.linalg.pinv(M(a), stream=cpu)])
        case("norm_fro", [a], [mx.linalg.norm(M(a), "fro", axis=(-2, -1))])
        case("norm_nuc", [a], [mx.linalg.norm(M(a), "nuc", axis=(-2, -1), stream=cpu)])
        for ord_ in (1.0, -1.0, np.inf, -np.inf, 2.0, -2.0):
            ax = (len(shape) - 2, len(shape) - 1)  # MLX's inf orders fail on negative axes
            case("norm_ord", [a], [mx.linalg.norm(M(a), ord_, axis=ax, stream=cpu)], ord_)
        for ord_ in (0.0, 1.0, 2.0, 3.0, 0.5, np.inf, -np.inf):
            case("norm_ord", [a[..., 0, :]], [mx.linalg.norm(M(a[..., 0, :]), ord_, axis=-1)], ord_)
# complex64 where MLX takes it
for shape in ((3, 3), (2, 4, 4)):
    c = mk(shape, "complex64")
    case("eigvals", [c], [mx.linalg.eigvals(M(c), stream=cpu)])
    h = mk(shape, "complex64", "spd")
    case("eigh_L", [h], list(mx.linalg.eigh(M(h), stream=cpu)))
    case("svdvals", [c], [mx.linalg.svd(M(c), compute_uv=False, stream=cpu)])
    case("svd", [c], mx.linalg.svd(M(c), stream=cpu))
# a real matrix with complex eigenvalues: eig's pairing of conjugate vectors
rot = np.array([[0, -2, 1], [1, 0, 0.5], [0.25, 0, 1]], np.float32)
case("eig", [rot], list(mx.linalg.eig(M(rot), stream=cpu)))
for sa, sb in (((3,), (3,)), ((2, 3), (3,)), ((2,), (3,)), ((4, 2), (4, 2))):
    a, b = mk(sa, "float32"), mk(sb, "float32")
    case("cross", [a, b], [mx.linalg.cross(M(a), M(b))])

with open(OUT, "w") as f:
    f.write("/* Generated by scripts/make_linalg_fixtures.py with MLX %s: do not edit.\n"
            " * Inputs and outputs of mlx-c linalg.h calls (test/test_linalg.c). */\n" % mx.__version__)
    f.write("enum { LC_%s };\n" % ", LC_".join(n.upper() for n in FN))
    f.write("static const double lc_vals[] = {\n")
    for i in range(0, len(vals), 4):
        f.write("    " + ", ".join(repr(v) if np.isfinite(v) else ("INFINITY" if v > 0 else "-INFINITY")
                                   for v in vals[i:i + 4]) + ",\n")
    f.write("};\n")
    f.write("typedef struct lc_arr { int dtype, ndim, shape[3], off; } lc_arr;\n")
    f.write("typedef struct lc_case { int fn; double extra; int nin; lc_arr in[2]; int nout; lc_arr out[3]; } lc_case;\n")
    f.write("static const lc_case lc_cases[] = {\n")
    def arr(x):
        d, shp, off = x
        s = list(shp) + [0] * (3 - len(shp))
        return "{%d, %d, {%s}, %d}" % (d, len(shp), ", ".join(map(str, s)), off)
    for fn, extra, ins, outs in cases:
        ex = repr(extra) if np.isfinite(extra) else ("INFINITY" if extra > 0 else "-INFINITY")
        f.write("    {%d, %s, %d, {%s}, %d, {%s}},\n" % (fn, ex, len(ins), ", ".join(arr(x) for x in ins),
                                                        len(outs), ", ".join(arr(x) for x in outs)))
    f.write("};\n")
print("wrote", OUT, len(cases), "cases,", len(vals), "values")

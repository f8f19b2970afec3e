#!/usr/bin/env python3
"""Writes test/fixtures/mlxfn/: functions exported by MLX (mx.export_function,
mx.exporter) with the inputs they are called with and MLX's outputs, for
test/test_export.c. Run with MLX's Python build (0.31):

    /work/venv-mlx/bin/python scripts/make_mlxfn_fixtures.py

Each case NAME gives NAME.mlxfn and NAME.safetensors. The safetensors file
holds, for each call c, the positional inputs c<c>_in_<i>, the keyword
inputs c<c>_kw_<name> and MLX's outputs c<c>_out_<j>; its metadata says
how many calls, inputs and outputs there are ("calls", "c<c>_n_in",
"c<c>_kw" as comma-separated names, "c<c>_n_out"). Together the functions
cover every MLX primitive mlx-cpu imports (docs/api.md).

    /work/venv-mlx/bin/python scripts/make_mlxfn_fixtures.py --check DIR

imports instead each DIR/NAME.mlxfn that has a DIR/NAME.safetensors in that
format (test/test_export.c writes them, test/check_mlxfn_mlx.py runs this)
with MLX, calls it and compares with the outputs stored."""
import os
import sys

import mlx.core as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "mlxfn")
mx.set_default_device(mx.cpu)
mx.random.seed(7)


def rnd(*shape):
    # evaluated now: a function capturing it captures data, not a random graph
    a = mx.random.normal(shape).astype(mx.float32)
    mx.eval(a)
    return a


def save_calls(name, fun, calls):
    """Runs fun on each call's (args, kwargs) and stores inputs and outputs."""
    arrays, meta = {}, {"calls": str(len(calls))}
    for c, (args, kwargs) in enumerate(calls):
        outs = fun(*args, **kwargs)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        mx.eval(outs)
        for i, a in enumerate(args):
            arrays[f"c{c}_in_{i}"] = a
        for k, a in kwargs.items():
            arrays[f"c{c}_kw_{k}"] = a
        for j, o in enumerate(outs):
            arrays[f"c{c}_out_{j}"] = o
        meta[f"c{c}_n_in"] = str(len(args))
        meta[f"c{c}_kw"] = ",".join(sorted(kwargs))
        meta[f"c{c}_n_out"] = str(len(outs))
    mx.save_safetensors(os.path.join(OUT, name + ".safetensors"), arrays, meta)


COVERED = set()  # every primitive name the fixtures hold


def export(name, fun, args, kwargs=None, shapeless=False, more_calls=()):
    kwargs = kwargs or {}
    mx.export_function(os.path.join(OUT, name + ".mlxfn"), fun, *args, shapeless=shapeless, **kwargs)
    save_calls(name, fun, [(args, kwargs)] + list(more_calls))
    names = set()
    mx.export_function(lambda d: d.get("type") == "primitive" and names.add(d["name"]), fun, *args,
                       shapeless=shapeless, **kwargs)
    COVERED.update(names)
    print(f"{name}: {' '.join(sorted(names))}", file=sys.stderr)


# ---- elementwise ----

def unary(x):
    t = mx.tanh(x) * 0.9
    a = mx.abs(x)
    return [mx.abs(x), -x, mx.sign(x), mx.square(x), mx.sqrt(a), mx.rsqrt(a + 1), mx.exp(x), mx.expm1(x),
            mx.log(a + 1), mx.log1p(a), mx.log2(a + 1), mx.log10(a + 1), mx.sin(x), mx.cos(x), mx.tan(t),
            mx.arcsin(t), mx.arccos(t), mx.arctan(x), mx.sinh(x), mx.cosh(x), mx.tanh(x), mx.arcsinh(x),
            mx.arccosh(a + 1), mx.arctanh(t), mx.sigmoid(x), mx.erf(x), mx.erfinv(t), mx.floor(x * 3),
            mx.ceil(x * 3), mx.round(x * 3), mx.logical_not(x > 0), mx.stop_gradient(x)]


def binary(x, y):
    p = mx.abs(y) + 0.5
    return [x + y, x - y, x * y, x / p, mx.maximum(x, y), mx.minimum(x, y), mx.power(mx.abs(x) + 0.5, y),
            mx.arctan2(x, y), mx.logaddexp(x, y), mx.remainder(x, p), mx.floor_divide(x, p), x == y, x != y,
            x < y, x <= y, x > y, x >= y, mx.logical_and(x > 0, y > 0), mx.logical_or(x > 0, y > 0),
            mx.where(x > y, x, y), x + y[0], x * 2.0 + 1.0, mx.array_equal(x, x, equal_nan=True)]


def bitwise(a, b):
    return [a & b, a | b, a ^ b, a << 2, a >> 1]


# ---- views, slices, joins ----

def views(x):
    return [x.reshape(6, 4), x.transpose(2, 0, 1), x[:, ::2, 1:], x[::-1, :, ::-2], mx.expand_dims(x, 1),
            x[:1].squeeze(0), mx.flatten(x, 1, 2), mx.unflatten(x, 2, (2, 2)),
            mx.broadcast_to(x[:, :1, :], (2, 3, 4)), mx.concatenate([x, x * 2], axis=1),
            mx.pad(x, [(0, 0), (1, 2), (0, 1)], constant_values=3.0), x.astype(mx.int32), x.astype(mx.float16),
            mx.swapaxes(x, 0, 2), mx.as_strided(x, (3, 2), (1, 4), 2), mx.split(x, 2, axis=2)[1]]


def slice_update(x):
    y = mx.array(x)
    y[1:2, ::2] = 0.5
    z = mx.array(x)
    z[:, 1, -1] = x[:, 0, 0]
    return [y, z]


def scatter(x, idx, v):
    return [x.at[idx].add(v), mx.put_along_axis(x, mx.argsort(x, axis=1)[:, :2], mx.zeros((5, 2)), axis=1),
            x.at[idx].maximum(v)]


def fft(x):
    return [mx.fft.rfft(x, axis=-1), mx.fft.irfft(mx.fft.rfft(x), n=8), mx.fft.fft(x.astype(mx.complex64), axis=0)]


# ---- reductions, scans, sorts ----

def reductions(x):
    return [mx.sum(x, axis=1), mx.prod(x, axis=(0, 2)), mx.max(x, axis=2), mx.min(x), mx.mean(x, axis=1),
            mx.all(x > -3), mx.any(x > 0, axis=0), mx.argmax(x, axis=1), mx.argmin(x, axis=2),
            mx.softmax(x, axis=-1), mx.logsumexp(x, axis=-1), mx.cumsum(x, axis=1),
            mx.cumprod(x, axis=2, reverse=True), mx.cummax(x, axis=0), mx.sort(x, axis=1), mx.argsort(x, axis=2),
            mx.partition(x, 2, axis=2), mx.var(x, axis=1), mx.softmax(x, axis=1, precise=True)]


# ---- linear layers with captured constants ----

W1, B1, W2, B2, M3 = rnd(4, 8), rnd(8), rnd(8, 3), rnd(3), rnd(2, 5)


def mlp(x):
    h = mx.maximum(x @ W1 + B1, 0)
    return [mx.addmm(B2, h, W2), x @ W1[:, 0], M3 @ x]


# ---- indexing ----

def indexing(x, idx):
    return [mx.take(x, idx, axis=0), mx.take_along_axis(x, mx.argsort(x, axis=1), axis=1), x[idx, 1:3],
            x[:, idx % 4], mx.take(x, idx), x + mx.arange(4, dtype=mx.float32), mx.take(x, idx[:2] - 4, axis=1)]


# ---- convolution, quantized matmul, fast ----

CW1, CW2 = rnd(4, 3, 3), rnd(3, 3, 3, 2)


def conv(x1, x2):
    return [mx.conv1d(x1, CW1, stride=2, padding=1), mx.conv2d(x2, CW2, padding=1, dilation=1, groups=1)]


QW = rnd(32, 64)
QWQ, QS, QB = mx.quantize(QW, group_size=32, bits=4)
mx.eval(QWQ, QS, QB)


def qmm(x):
    return [mx.quantized_matmul(x, QWQ, QS, QB, transpose=True, group_size=32, bits=4)]


NW, NB = rnd(8), rnd(8)


def fast(x, q, k, v):
    return [mx.fast.rms_norm(x, NW, 1e-5), mx.fast.layer_norm(x, NW, NB, 1e-5),
            mx.fast.rope(q, 8, traditional=False, base=10000.0, scale=1.0, offset=3),
            mx.fast.scaled_dot_product_attention(q, k, v, scale=0.35, mask="causal")]


# ---- linear algebra: MLX writes each factorization's outputs ----

def linalg(a, spd):
    q, r = mx.linalg.qr(a)
    u, sv, vt = mx.linalg.svd(a)
    w, v = mx.linalg.eig(a)
    wh, vh = mx.linalg.eigh(spd)
    return [mx.linalg.inv(a), mx.linalg.tri_inv(a, upper=True), mx.linalg.tri_inv(a, upper=False),
            mx.linalg.cholesky(spd), mx.linalg.cholesky(spd, upper=True), q, r, u, sv, vt,
            mx.linalg.svd(a, compute_uv=False), w, v, mx.linalg.eigvals(a), wh, vh,
            mx.linalg.eigvalsh(spd, UPLO="U")]


def linalg_wide(a):
    q, r = mx.linalg.qr(a)
    u, sv, vt = mx.linalg.svd(a)
    return [q, r, u, sv, vt]


# ---- several outputs, dynamic slices, masks, dependencies ----

def divmod_fun(x, y, i, j):
    return list(mx.divmod(x, y)) + list(mx.divmod(i, j))


def dynamic(x, start, upd):
    y = mx.slice_update(x, upd, start, axes=(1,))
    return [mx.slice(x, start, axes=(1,), slice_size=(3, 2)), y,
            mx.slice(x, mx.concatenate([start, start]), axes=(0, 1), slice_size=(2, 2))]


def masked(x, m, v):
    y = mx.array(x)
    y[m] = v
    z = mx.array(x)
    z[x > 0] = 0.5
    return [y, z]


def depends(x, y):
    a, b = mx.depends([x * 2, y + 1], [x - y])
    return [a, b]


def hadamard(x, y, z):
    return [mx.hadamard_transform(x), mx.hadamard_transform(y, scale=0.5),
            mx.hadamard_transform(z.astype(mx.float16))]


def random_fun(key):
    k1, k2 = mx.random.split(key)
    return [mx.random.split(key, 3), mx.random.uniform(shape=(3, 5), key=k1), mx.random.randint(-5, 9, (7,), key=k2),
            mx.random.uniform(shape=(4,), dtype=mx.float16, key=k2), mx.random.normal((2, 3), key=k1)]


# ---- products by index and mask, quantized products in every mode ----

def gather_mm(a, b, li, ri):
    return [mx.gather_mm(a, b, li, ri), mx.gather_mm(a, b, None, ri[:3])]


def block_mm(a, b, mo, ml, mr):
    return [mx.block_masked_mm(a, b, 32, mask_out=mo), mx.block_masked_mm(a, b, 32, mask_lhs=ml, mask_rhs=mr),
            mx.block_masked_mm(a, b, 32, mo, ml.astype(mx.float32) * 0.5, mr)]


# its own key: the constants above keep their values
QW3 = mx.random.normal((3, 8, 64), key=mx.random.key(5))
QQ = {m: mx.quantize(QW3, mode=m) for m in ("mxfp4", "mxfp8", "nvfp4")}
QQ["affine"] = mx.quantize(QW3, group_size=32, bits=4)
mx.eval(QQ)


def qmm_modes(x, xb):
    outs = []
    for m in ("mxfp4", "mxfp8", "nvfp4"):
        w, sc = QQ[m]
        outs.append(mx.quantized_matmul(x, w[0], sc[0], None, transpose=True, mode=m))
    w, sc, bi = QQ["affine"]
    outs.append(mx.gather_qmm(xb, w, sc, bi, rhs_indices=mx.array([2, 0]), transpose=True, group_size=32, bits=4))
    for m in ("mxfp4", "mxfp8", "nvfp4"):
        w, sc = QQ[m]
        outs.append(mx.gather_qmm(xb, w, sc, None, lhs_indices=mx.array([1, 1, 0]), rhs_indices=mx.array([0, 2, 1]),
                                  transpose=True, mode=m))
    return outs


def quantize_fun(w):
    return list(mx.quantize(w, group_size=32, bits=4)) + list(mx.quantize(w, group_size=64, bits=8))


# ---- the rest of what MLX writes from these ops ----

def others(x, c, i):
    return [mx.argpartition(x, 1, axis=1), i * 2, mx.conj(c), mx.real(c), mx.imag(c), x.view(mx.int32),
            mx.stop_gradient(x), mx.log2(mx.abs(x) + 1), mx.log10(mx.abs(x) + 1), mx.rsqrt(mx.abs(x) + 1)]


def main():
    os.makedirs(OUT, exist_ok=True)
    x, y = rnd(3, 4), rnd(3, 4)
    export("unary", unary, [x])
    export("binary", binary, [x, y])
    ai = mx.array([[5, -3, 12], [7, 0, -9]], dtype=mx.int32)
    bi = mx.array([[3, 6, 10], [1, 2, 4]], dtype=mx.int32)
    export("bitwise", bitwise, [ai, bi])
    x3 = rnd(2, 3, 4)
    export("views", views, [x3])
    export("slice_update", slice_update, [x3])
    export("reductions", reductions, [x3])
    export("scatter", scatter, [rnd(5, 4), mx.array([4, 1], dtype=mx.int32), rnd(2, 4)])
    export("fft", fft, [rnd(3, 8)])
    export("mlp", mlp, [rnd(5, 4)])
    export("indexing", indexing, [rnd(5, 4), mx.array([3, 0, 4], dtype=mx.int32)])
    export("conv", conv, [rnd(2, 9, 3), rnd(1, 5, 5, 2)])
    export("qmm", qmm, [rnd(3, 64)])
    export("fast", fast, [rnd(2, 8), rnd(1, 2, 5, 8), rnd(1, 2, 5, 8), rnd(1, 2, 5, 8)])

    # a shapeless export called on other shapes (same dtypes and ndims)
    def shapeless(x):
        return [mx.exp(x) * 2 + mx.sum(x, axis=-1, keepdims=True), mx.max(x, axis=0)]

    export("shapeless", shapeless, [rnd(2, 3)], shapeless=True, more_calls=[([rnd(4, 5)], {}), ([rnd(1, 7)], {})])

    # keyword arguments
    def kw(x, *, bias, scale):
        return [x * scale + bias, mx.sum(bias)]

    export("kwargs", kw, [rnd(2, 3)], kwargs={"scale": rnd(2, 3), "bias": rnd(3)})

    # several traces in one file (exporter), sharing a captured constant
    W = rnd(4, 2)

    def multi(*args):
        if len(args) == 1:
            return [args[0] @ W]
        return [args[0] @ W + args[1]]

    path = os.path.join(OUT, "multi.mlxfn")
    calls = [([rnd(3, 4)], {}), ([rnd(5, 4)], {}), ([rnd(3, 4), rnd(3, 2)], {})]
    with mx.exporter(path, multi) as ex:
        for args, kwargs in calls:
            ex(*args, **kwargs)
    save_calls("multi", multi, calls)

    a = rnd(4, 4)
    spd = a @ a.T + 4 * mx.eye(4)
    export("linalg", linalg, [a, spd])
    export("linalg_wide", linalg_wide, [rnd(2, 3, 5)])
    export("divmod", divmod_fun, [x, mx.abs(y) + 0.5, mx.array([7, -7, 9, -9, 0], dtype=mx.int32),
                                  mx.array([2, 2, -4, -4, 3], dtype=mx.int32)])
    export("dynamic", dynamic, [rnd(4, 5), mx.array([2], dtype=mx.int32), rnd(4, 2)])
    export("masked", masked, [rnd(3, 4), mx.array([True, False, True]), rnd(2, 4)])
    export("depends", depends, [x, y])
    export("hadamard", hadamard, [rnd(2, 8), rnd(3, 12), rnd(2, 20)])
    export("random", random_fun, [mx.random.key(11)])
    export("gather_mm", gather_mm, [rnd(3, 2, 4), rnd(3, 4, 5), mx.array([2, 0, 1, 2], dtype=mx.uint32),
                                    mx.array([0, 0, 2, 1], dtype=mx.uint32)])
    bm = mx.array([[True, False], [False, True]])
    export("block_mm", block_mm, [rnd(40, 36), rnd(36, 50), bm, bm, bm])
    export("qmm_modes", qmm_modes, [rnd(2, 64), rnd(2, 2, 64)])
    export("quantize", quantize_fun, [rnd(3, 128)])

    export("others", others, [rnd(3, 4), (rnd(2, 3) + 1j * rnd(2, 3)).astype(mx.complex64),
                              mx.array([3, -4, 0], dtype=mx.int32)])

    # a shapeless mean: MLX writes NumberOfElements
    def shapeless_mean(x):
        return [mx.mean(x, axis=-1), mx.var(x, axis=0)]

    export("shapeless_mean", shapeless_mean, [rnd(2, 3)], shapeless=True, more_calls=[([rnd(4, 5)], {})])

    # a shapeless matmul of batches that broadcast: MLX writes BroadcastAxes
    def bcast_mm(a, b):
        return [a @ b]

    export("broadcast_axes", bcast_mm, [rnd(2, 3, 4), rnd(1, 4, 5)], shapeless=True,
           more_calls=[([rnd(3, 2, 4), rnd(1, 4, 3)], {}), ([rnd(1, 5, 2), rnd(4, 2, 2)], {})])

    # a primitive mlx-cpu does not import: MLX writes RMSNormVJP only from a
    # GPU trace, so a DivMod record of a real file is renamed to it (the
    # importer stops at the name, before the state)
    def divmod_only(x, y):
        return list(mx.divmod(x, y))

    path = os.path.join(OUT, "unsupported.mlxfn")
    mx.export_function(path, divmod_only, x, mx.abs(y) + 1)
    with open(path, "rb") as f:
        data = f.read()
    old = len("DivMod").to_bytes(8, "little") + b"DivMod"
    assert data.count(old) == 1
    data = data.replace(old, len("RMSNormVJP").to_bytes(8, "little") + b"RMSNormVJP")
    with open(path, "wb") as f:
        f.write(data)

    print(f"primitives covered ({len(COVERED)}): {' '.join(sorted(COVERED))}", file=sys.stderr)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {OUT}", file=sys.stderr)


def check(d):
    """Imports with MLX the functions mlx-cpu exported to d; 0 if all match."""
    failed = checked = 0
    for f in sorted(os.listdir(d)):
        if not f.endswith(".mlxfn") or not os.path.exists(os.path.join(d, f[:-6] + ".safetensors")):
            continue
        name = f[:-6]
        try:
            fun = mx.import_function(os.path.join(d, f))
            arrays, meta = mx.load(os.path.join(d, name + ".safetensors"), return_metadata=True)
            for c in range(int(meta["calls"])):
                args = [arrays[f"c{c}_in_{i}"] for i in range(int(meta[f"c{c}_n_in"]))]
                kws = {k: arrays[f"c{c}_kw_{k}"] for k in meta[f"c{c}_kw"].split(",") if k}
                outs = fun(*args, **kws)
                n_out = int(meta[f"c{c}_n_out"])
                if len(outs) != n_out:
                    raise AssertionError(f"{len(outs)} outputs, expected {n_out}")
                for j, o in enumerate(outs):
                    want = arrays[f"c{c}_out_{j}"]
                    if o.dtype != want.dtype or o.shape != want.shape:
                        raise AssertionError(f"output {j}: {o.dtype}{o.shape}, expected {want.dtype}{want.shape}")
                    if not mx.allclose(o, want, rtol=1e-4, atol=1e-5, equal_nan=True).item():
                        raise AssertionError(f"output {j} differs: {o} vs {want}")
            print(f"{name}: MLX imports it and gives mlx-cpu's outputs")
        except Exception as e:  # report every file, then fail
            print(f"{name}: FAILED: {e}")
            failed += 1
        checked += 1
    print(f"{checked} files checked, {failed} failed")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    main()

#!/usr/bin/env python3
"""Writes test/fixtures/random_vmap_cases.h: what MLX 0.31.1's mx.vmap
returns for the random functions over a batch of keys (and over batched
parameters with one key), and mx.grad of truncated_normal in its bounds.
test/test_random_vmap.c builds the same calls through our vmap and
compares the bytes (the gradients within rounding).

Every case draws from KEYS = split(key(7), 3) unless it says otherwise; the
C side knows each case by name. Run with MLX's CPU wheel:
    /work/venv-mlx/bin/python scripts/make_random_vmap_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

assert mx.__version__ == "0.31.1", mx.__version__
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "random_vmap_cases.h")

KEYS = mx.random.split(mx.random.key(7), 3)
K1 = mx.random.key(1)
cases = []
data = bytearray()


def dname(dt):
    return str(dt).split(".")[-1]


def add(name, out):
    mx.eval(out)
    dt = dname(out.dtype)
    if out.dtype in (mx.float16, mx.bfloat16):
        out = out.view(mx.uint16)
    raw = np.ascontiguousarray(np.array(out)).tobytes()
    cases.append((name, dt, tuple(out.shape), len(data), len(raw)))
    data.extend(raw)


def vk(f, keys=KEYS, in_axes=0, out_axes=0):
    return mx.vmap(f, in_axes=in_axes, out_axes=out_axes)(keys)


f32 = mx.float32
add("split", vk(lambda k: mx.random.split(k, 3)))
add("uniform", vk(lambda k: mx.random.uniform(-2.0, 3.0, (2, 3), key=k)))
add("uniform_f16", vk(lambda k: mx.random.uniform(shape=(5,), dtype=mx.float16, key=k)))
add("uniform_keys_axis1", vk(lambda k: mx.random.uniform(shape=(4,), key=k), keys=KEYS.T, in_axes=1))
add("uniform_out_axis1", vk(lambda k: mx.random.uniform(shape=(4,), key=k), out_axes=1))
add("normal", vk(lambda k: mx.random.normal((4,), key=k)))
add("normal_loc_scale", vk(lambda k: mx.random.normal((2, 2), loc=1.5, scale=0.25, key=k)))
add("randint", vk(lambda k: mx.random.randint(0, 10, (6,), key=k)))
add("bernoulli", vk(lambda k: mx.random.bernoulli(0.3, (7,), key=k)))
LOGITS = mx.array([[0.0, 1.0, 2.0, 0.5, -1.0], [3.0, 0.0, 0.0, 1.0, 1.0]], f32)
add("categorical", vk(lambda k: mx.random.categorical(LOGITS, key=k)))
add("categorical_samples", vk(lambda k: mx.random.categorical(LOGITS[0], num_samples=4, key=k)))
add("permutation", vk(lambda k: mx.random.permutation(6, key=k)))
X = mx.arange(10, dtype=f32).reshape(5, 2)
add("permutation_x", vk(lambda k: mx.random.permutation(X, axis=0, key=k)))
add("truncated_normal", vk(lambda k: mx.random.truncated_normal(-1.0, 2.0, (5,), key=k)))
add("gumbel", vk(lambda k: mx.random.gumbel((3,), key=k)))
add("laplace", vk(lambda k: mx.random.laplace((4,), key=k)))
add("split_then_normal", vk(lambda k: mx.random.normal((3,), key=mx.random.split(k)[1])))
# one key, a batched parameter: every element draws the same bits
LOWS = mx.array([0.0, 0.5, 0.9], f32)
add("uniform_batched_low", mx.vmap(lambda lo: mx.random.uniform(lo, 1.0, (3,), key=K1))(LOWS))
add("normal_batched_loc", mx.vmap(lambda m: mx.random.normal((3,), loc=m, key=K1))(LOWS))
UPS = mx.array([1.0, 2.0, 0.5], f32)
add("truncated_batched_bounds",
    mx.vmap(lambda k, lo, hi: mx.random.truncated_normal(lo, hi, (2,), key=k))(KEYS, -LOWS - 1.0, UPS))
# nested: keys of shape (2, 3, 2)
KK = mx.random.split(mx.random.key(9), 6).reshape(2, 3, 2)
add("nested", mx.vmap(mx.vmap(lambda k: mx.random.normal((2,), key=k)))(KK))
add("nested_inner_axis1", mx.vmap(mx.vmap(lambda k: mx.random.uniform(shape=(2,), key=k)), in_axes=1)(KK))

# gradients of truncated_normal in its bounds (MLX composes it of ops)
def tn_sum(lo, hi):
    return mx.random.truncated_normal(lo, hi, (4,), key=K1).sum()

for lo, hi in [(-1.0, 2.0), (-0.5, 0.25), (-3.0, -1.0), (0.3, 3.0)]:
    glo, ghi = mx.grad(tn_sum, argnums=(0, 1))(mx.array(lo, f32), mx.array(hi, f32))
    add(f"tn_grad_{lo}_{hi}", mx.stack([glo, ghi]))
LOV = mx.array([-1.0, -2.0, 0.0, -0.5], f32)
HIV = mx.array([1.0, 0.5, 2.0, 0.0], f32)
glo, ghi = mx.grad(lambda a, b: (mx.random.truncated_normal(a, b, (4,), key=K1) * mx.arange(1, 5)).sum(),
                   argnums=(0, 1))(LOV, HIV)
add("tn_grad_vec", mx.stack([glo, ghi]))
# jvp at (-1, 2) with tangents (1, 0) and (0, 1)
for i, t in enumerate([(1.0, 0.0), (0.0, 1.0)]):
    _, (jt,) = mx.jvp(lambda a, b: mx.random.truncated_normal(a, b, (4,), key=K1),
                      [mx.array(-1.0, f32), mx.array(2.0, f32)], [mx.array(t[0], f32), mx.array(t[1], f32)])
    add(f"tn_jvp_{i}", jt)

# multivariate_normal: MLX differentiates mean + z @ L^T in the mean; its
# SVD has no vjp or jvp, so the cov cannot be (the C test expects MLX's
# errors, checked here)
MEAN = mx.array([0.0, 1.0], f32)
COV = mx.array([[2.0, 0.5], [0.5, 1.0]], f32)
W = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], f32)
add("mvn_grad_mean",
    mx.grad(lambda m: (mx.random.multivariate_normal(m, COV, (3,), key=K1) * W).sum())(MEAN))
for how, call in [("vjp", lambda: mx.grad(lambda c: mx.random.multivariate_normal(MEAN, c, (3,), key=K1).sum())(COV)),
                  ("jvp", lambda: mx.jvp(lambda c: mx.random.multivariate_normal(MEAN, c, (3,), key=K1),
                                         [COV], [COV]))]:
    try:
        call()
        raise SystemExit(f"MLX now differentiates multivariate_normal's cov ({how})")
    except ValueError as e:
        assert str(e) == f"[Primitive::{how}] Not implemented for SVD.", str(e)

with open(OUT, "w") as f:
    f.write("/* Generated by scripts/make_random_vmap_fixtures.py from MLX 0.31.1: do not edit.\n"
            " * MLX's vmap of the random functions and truncated_normal's gradients\n"
            " * (test/test_random_vmap.c). */\n")
    f.write("#ifndef RANDOM_VMAP_CASES_H\n#define RANDOM_VMAP_CASES_H\n#include <stddef.h>\n\n")
    f.write("typedef struct rv_case {\n    const char *name, *dtype;\n    int ndim;\n    int shape[4];\n"
            "    size_t off, nbytes; /* into rv_bytes */\n} rv_case;\n\n")
    f.write("static const rv_case rv_cases[] = {\n")
    for name, dt, shape, off, n in cases:
        sh = list(shape) + [0] * (4 - len(shape))
        f.write(f'    {{"{name}", "{dt}", {len(shape)}, {{{", ".join(map(str, sh))}}}, {off}, {n}}},\n')
    f.write("};\n\nstatic const unsigned char rv_bytes[] = {\n")
    for i in range(0, len(data), 16):
        f.write("    " + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",\n")
    f.write("};\n\n#endif\n")
print(len(cases), "cases,", len(data), "bytes")

#!/usr/bin/env python3
"""Writes test/fixtures/random_op_cases.h: what MLX 0.31.1 returns for calls
of every mlx-c random.h function (test/test_random.c makes the same calls
through our API and compares the bytes).

A case names the mlx-c function, the key (or the global seed), the shape,
dtype, scalar arguments (a, b: low/high, loc/scale, p...), axis / num, up
to two parameter arrays (values, shape, dtype) and the expected output:
dtype, shape and raw little-endian bytes. Raw bits of mlx_random_bits are
checked against test/fixtures/random_cases.h instead (MLX's Python module
has no bits).

Run with MLX's CPU wheel (see make_random_fixtures.py):
    /work/venv-mlx/bin/python scripts/make_random_op_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

assert mx.__version__ == "0.31.1", mx.__version__
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "random_op_cases.h")

cases = []
params = []
data = bytearray()


def dname(dt):
    return str(dt).split(".")[-1]


def param(arr):
    if arr is None:
        return None
    vals = np.array(arr.astype(mx.float64) if arr.dtype != mx.float64 else arr).reshape(-1).tolist()
    off = len(params)
    params.extend(vals)
    return (dname(arr.dtype), tuple(arr.shape), off)


def add(name, fn, out, key=None, seed=None, shape=(), dtype=mx.float32, a=0.0, b=0.0, axis=0, num=0,
        p0=None, p1=None):
    mx.eval(out)
    out_dtype = dname(out.dtype)
    # (MLX's view to uint8 of a one-element float32 array repeats its first
    # byte, so the bytes come through numpy, with 16-bit floats as uint16)
    if out.dtype in (mx.float16, mx.bfloat16):
        out = out.view(mx.uint16)
    raw = np.ascontiguousarray(np.array(out)).tobytes()
    kw = [int(v) for v in np.array(key)] if key is not None else [0, 0]
    cases.append(dict(name=name, fn=fn, key=kw, use_key=key is not None, seed=seed if seed is not None else 0,
                      use_seed=seed is not None, shape=tuple(shape), dtype=dname(dtype), a=a, b=b, axis=axis,
                      num=num, p0=param(p0), p1=param(p1), out_dtype=out_dtype, out_shape=tuple(out.shape),
                      off=len(data), nbytes=len(raw)))
    data.extend(raw)


K = mx.random.key(42)
K2 = mx.random.key(0xDEADBEEF12345)
FLOATS = [mx.float32, mx.float16, mx.bfloat16]

# keys and splits
for seed in [0, 1, 42, 2**32 + 7, 2**64 - 1]:
    add(f"key_{seed}", "key", mx.random.key(seed), seed=seed)
k0, k1 = mx.random.split(K)
add("split_first", "split0", k0, key=K)
add("split_second", "split1", k1, key=K)
for num in [0, 1, 3, 7]:
    add(f"split_num_{num}", "split_num", mx.random.split(K2, num), key=K2, num=num)

# uniform
f32 = lambda v: mx.array(v, mx.float32)
for dt in FLOATS:
    for shape in [(0,), (1,), (7,), (3, 5), (2, 0, 3)]:
        add(f"uniform_{dname(dt)}_{shape}", "uniform",
            mx.random.uniform(f32(-2.5), f32(3.0), shape, dt, key=K), key=K, shape=shape, dtype=dt,
            p0=f32(-2.5), p1=f32(3.0))
lo = mx.array([[-1.0], [0.5], [10.0]], mx.float32)
hi = mx.array([[1.0, 2.0, 3.0, 40.0]], mx.float32)
for dt in FLOATS:
    add(f"uniform_broadcast_{dname(dt)}", "uniform", mx.random.uniform(lo, hi, (2, 3, 4), dt, key=K2),
        key=K2, shape=(2, 3, 4), dtype=dt, p0=lo, p1=hi)
add("uniform_f16_bounds", "uniform",
    mx.random.uniform(mx.array(0.1, mx.float16), mx.array(0.7, mx.float16), (9,), mx.float32, key=K), key=K,
    shape=(9,), p0=mx.array(0.1, mx.float16), p1=mx.array(0.7, mx.float16))
add("uniform_big", "uniform", mx.random.uniform(f32(0.0), f32(1.0), (4099,), key=K2), key=K2, shape=(4099,),
    p0=f32(0.0), p1=f32(1.0))

# normal
for dt in FLOATS + [mx.float64]:
    for loc, scale in [(0.0, 1.0), (1.5, 0.25), (-3.0, 1.0), (0.0, 7.0)]:
        add(f"normal_{dname(dt)}_{loc}_{scale}", "normal",
            mx.random.normal((3, 7), dt, loc=loc, scale=scale, key=K), key=K, shape=(3, 7), dtype=dt,
            a=loc, b=scale)
add("normal_big", "normal", mx.random.normal((5001,), key=K2), key=K2, shape=(5001,), a=0.0, b=1.0)
add("normal_empty", "normal", mx.random.normal((4, 0), key=K2), key=K2, shape=(4, 0), a=0.0, b=1.0)
locs = mx.array([0.0, 1.0, -2.0, 100.0], mx.float32)
scales = mx.array([[0.5], [2.0], [3.0]], mx.float32)
for dt in [mx.float32, mx.float16, mx.float64]:
    add(f"normal_broadcast_{dname(dt)}", "normal_broadcast",
        mx.random.normal((3, 4), dt, loc=locs, scale=scales, key=K), key=K, shape=(3, 4), dtype=dt,
        p0=locs, p1=scales)
add("normal_broadcast_widen", "normal_broadcast", mx.random.normal((4,), loc=mx.zeros((2, 4)), key=K),
    key=K, shape=(4,), p0=mx.zeros((2, 4)))
add("normal_broadcast_scale_only", "normal_broadcast", mx.random.normal((3, 4), scale=scales, key=K),
    key=K, shape=(3, 4), p1=scales)

# gumbel, laplace, truncated_normal
for dt in FLOATS:
    add(f"gumbel_{dname(dt)}", "gumbel", mx.random.gumbel((4, 9), dt, key=K), key=K, shape=(4, 9), dtype=dt)
for dt in FLOATS + [mx.float64]:
    for loc, scale in [(0.0, 1.0), (2.0, 0.5)]:
        add(f"laplace_{dname(dt)}_{loc}_{scale}", "laplace",
            mx.random.laplace((5, 5), dt, loc=loc, scale=scale, key=K2), key=K2, shape=(5, 5), dtype=dt,
            a=loc, b=scale)
for dt in FLOATS:
    add(f"truncated_normal_{dname(dt)}", "truncated_normal",
        mx.random.truncated_normal(f32(-1.0), f32(2.0), (6, 5), dt, key=K), key=K, shape=(6, 5), dtype=dt,
        p0=f32(-1.0), p1=f32(2.0))
tl = mx.array([[-3.0], [0.0], [1.0]], mx.float32)
tu = mx.array([0.5, 2.0, 4.0, 10.0], mx.float32)
add("truncated_normal_broadcast", "truncated_normal", mx.random.truncated_normal(tl, tu, (2, 3, 4), key=K2),
    key=K2, shape=(2, 3, 4), p0=tl, p1=tu)

# bernoulli, randint
for p in [0.0, 0.3, 0.5, 1.0]:
    add(f"bernoulli_{p}", "bernoulli", mx.random.bernoulli(f32(p), (3, 11), key=K), key=K, shape=(3, 11),
        p0=f32(p))
pb = mx.array([[0.1], [0.9], [0.5]], mx.float16)
add("bernoulli_broadcast_f16", "bernoulli", mx.random.bernoulli(pb, (3, 6), key=K2), key=K2, shape=(3, 6), p0=pb)
i32 = lambda v: mx.array(v, mx.int32)
for dt in [mx.int32, mx.int16, mx.uint8, mx.int64, mx.uint32]:
    add(f"randint_{dname(dt)}", "randint", mx.random.randint(i32(0), i32(100), (4, 8), dt, key=K), key=K,
        shape=(4, 8), dtype=dt, p0=i32(0), p1=i32(100))
add("randint_negative", "randint", mx.random.randint(i32(-50), i32(-3), (20,), key=K2), key=K2, shape=(20,),
    dtype=mx.int32, p0=i32(-50), p1=i32(-3))
rl = mx.array([0, 10, 1000], mx.int32)
add("randint_broadcast", "randint", mx.random.randint(rl, i32(2000), (2, 3), key=K), key=K, shape=(2, 3),
    dtype=mx.int32, p0=rl, p1=i32(2000))

# categorical
logits = mx.array(np.log(np.array([[0.1, 0.2, 0.3, 0.15, 0.25], [0.5, 0.1, 0.1, 0.2, 0.1],
                                   [0.01, 0.01, 0.01, 0.01, 0.96]])).astype(np.float32))
add("categorical_last", "categorical", mx.random.categorical(logits, -1, key=K), key=K, axis=-1, p0=logits)
add("categorical_axis0", "categorical", mx.random.categorical(logits, 0, key=K), key=K, axis=0, p0=logits)
add("categorical_shape", "categorical_shape", mx.random.categorical(logits, 1, shape=(4, 3), key=K2), key=K2,
    axis=1, shape=(4, 3), p0=logits)
add("categorical_num_samples", "categorical_num_samples",
    mx.random.categorical(logits, 1, num_samples=6, key=K2), key=K2, axis=1, num=6, p0=logits)
l1 = mx.array([0.0, 1.0, 2.0, -1.0], mx.float32)
add("categorical_1d_num_samples", "categorical_num_samples", mx.random.categorical(l1, 0, num_samples=9, key=K),
    key=K, axis=0, num=9, p0=l1)

# permutation
for n in [1, 10, 257]:  # n = 0 kills MLX 0.31.1 (SIGFPE in its CPU sort)
    add(f"permutation_arange_{n}", "permutation_arange", mx.random.permutation(n, key=K), key=K, num=n)
px = mx.arange(12, dtype=mx.float32).reshape(4, 3)
add("permutation_axis0", "permutation", mx.random.permutation(px, 0, key=K2), key=K2, axis=0, p0=px)
add("permutation_axis1", "permutation", mx.random.permutation(px, 1, key=K2), key=K2, axis=1, p0=px)

# multivariate_normal (an SVD and two matmuls: test_random checks these to
# a tolerance, not bit for bit)
mean = mx.array([1.0, -2.0, 0.5], mx.float32)
cov = mx.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], mx.float32)
add("mvn_basic", "multivariate_normal", mx.random.multivariate_normal(mean, cov, (4,), key=K), key=K, shape=(4,),
    p0=mean, p1=cov)
covs = mx.stack([cov, mx.eye(3) * 4.0])
add("mvn_batched", "multivariate_normal", mx.random.multivariate_normal(mx.zeros((3,)), covs, (5, 2), key=K2),
    key=K2, shape=(5, 2), p0=mx.zeros((3,)), p1=covs)

# the global key sequence
mx.random.seed(1234)
add("global_uniform_1", "uniform", mx.random.uniform(f32(0.0), f32(1.0), (5,)), seed=1234, shape=(5,),
    p0=f32(0.0), p1=f32(1.0))
add("global_uniform_2", "uniform", mx.random.uniform(f32(0.0), f32(1.0), (5,)), shape=(5,),
    p0=f32(0.0), p1=f32(1.0))
add("global_normal_3", "normal", mx.random.normal((5,)), shape=(5,), a=0.0, b=1.0)


def shape_c(s):
    s = list(s) + [0] * (6 - len(s))
    return "{" + ", ".join(str(v) for v in s) + "}"


def param_c(p):
    if p is None:
        return 'NULL, 0, {0}, 0'
    return f'"{p[0]}", {len(p[1])}, {shape_c(p[1])}, {p[2]}'


with open(OUT, "w") as f:
    f.write("/* Generated by scripts/make_random_op_fixtures.py from MLX %s: do not edit.\n"
            " * Expected outputs of mlx-c random.h calls (test/test_random.c). */\n" % mx.__version__)
    f.write("#ifndef RANDOM_OP_CASES_H\n#define RANDOM_OP_CASES_H\n#include <stddef.h>\n#include <stdint.h>\n\n")
    f.write("typedef struct ro_param {\n    const char *dtype; /* NULL: absent */\n    int ndim;\n"
            "    int shape[6];\n    size_t off; /* into ro_params */\n} ro_param;\n\n")
    f.write("typedef struct ro_case {\n    const char *name, *fn;\n    uint32_t key[2];\n    int use_key;\n"
            "    uint64_t seed;\n    int use_seed;\n    int ndim;\n    int shape[6];\n    const char *dtype;\n"
            "    double a, b;\n    int axis, num;\n    ro_param p0, p1;\n    const char *out_dtype;\n"
            "    int out_ndim;\n    int out_shape[6];\n    size_t off, nbytes; /* into ro_bytes */\n} ro_case;\n\n")
    f.write("static const ro_case ro_cases[] = {\n")
    for c in cases:
        f.write(f'    {{"{c["name"]}", "{c["fn"]}", {{{c["key"][0]}u, {c["key"][1]}u}}, {int(c["use_key"])}, '
                f'{c["seed"]}ull, {int(c["use_seed"])}, {len(c["shape"])}, {shape_c(c["shape"])}, '
                f'"{c["dtype"]}", {c["a"]!r}, {c["b"]!r}, {c["axis"]}, {c["num"]}, {{{param_c(c["p0"])}}}, '
                f'{{{param_c(c["p1"])}}}, "{c["out_dtype"]}", {len(c["out_shape"])}, {shape_c(c["out_shape"])}, '
                f'{c["off"]}, {c["nbytes"]}}},\n')
    f.write("};\n\nstatic const double ro_params[] = {\n")
    for i in range(0, len(params), 6):
        f.write("    " + ", ".join(repr(float(v)) for v in params[i:i + 6]) + ",\n")
    if not params:
        f.write("    0,\n")
    f.write("};\n\nstatic const unsigned char ro_bytes[] = {\n")
    for i in range(0, len(data), 16):
        f.write("    " + ", ".join(str(v) for v in data[i:i + 16]) + ",\n")
    f.write("};\n\n#endif\n")
print(len(cases), "cases,", len(data), "bytes")

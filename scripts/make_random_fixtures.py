#!/usr/bin/env python3
"""Writes test/fixtures/random_cases.h: the values MLX 0.31.1 gives for
keys, splits, raw bits and every distribution of mlx.core.random, which
test/test_random_kernels.c (and later the random ops' tests) compare with.

Each case records the op, the output dtype, the shape, the key it was drawn
with, its parameters (p[]) and its values as raw bit patterns in one pool
(float32 as its uint32 bits, float16 / bfloat16 as their uint16 bits,
float64 as its uint64 bits, integers and bools as their value).

MLX's Python module has no `bits`, so the raw-bits cases come from a small
C++ program built here against the wheel's headers and libmlx.so (the
wheel ships both) and calling mlx::core::random::bits for widths 1, 2, 4.

Needs MLX's CPU wheel, pinned to the version mlx-c v0.6.0 uses, in a venv
that CI never depends on:
    python3 -m venv /work/venv-mlx
    /work/venv-mlx/bin/pip install 'mlx[cpu]==0.31.1' numpy
Run (from the repository root):
    /work/venv-mlx/bin/python scripts/make_random_fixtures.py
"""
import os
import subprocess
import sys
import tempfile

import mlx.core as mx
import numpy as np

MLX_VERSION = "0.31.1"
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "random_cases.h")

cases = []  # (op, dtype, shape, seed, key, params, values)


def key_words(k):
    return [int(v) for v in np.array(k.view(mx.uint32)).reshape(-1)]


def raw_bits(a):
    """The bit patterns of the elements of a, flattened, as Python ints."""
    a = mx.array(a)
    view = {mx.float32: mx.uint32, mx.float16: mx.uint16, mx.bfloat16: mx.uint16,
            mx.float64: mx.uint64}.get(a.dtype)
    if view is not None:
        a = a.view(view)
    vals = np.array(a).reshape(-1)
    if vals.dtype.kind == "i":
        vals = vals.astype(np.int64).astype(np.uint64)
    return [int(v) for v in vals]


def dname(dt):
    return str(dt).split(".")[-1]


def add(op, dtype, shape, key, params, values, seed=0):
    cases.append((op, dname(dtype), tuple(shape), seed, key_words(key), list(params), raw_bits(values)))


# -- raw bits through the C++ API (Python has no mx.random.bits) ----------

CPP = r"""
#include <mlx/mlx.h>
#include <cstdio>
#include <cstdlib>
namespace mx = mlx::core;
/* argv: k0 k1 width dims...; prints the output's bytes in decimal */
int main(int argc, char **argv) {
    uint32_t k0 = strtoul(argv[1], 0, 10), k1 = strtoul(argv[2], 0, 10);
    int width = atoi(argv[3]);
    mx::Shape shape;
    for (int i = 4; i < argc; i++) shape.push_back(atoi(argv[i]));
    auto key = mx::array({k0, k1});
    auto b = mx::random::bits(shape, width, key, mx::Device::cpu);
    mx::eval(b);
    const uint8_t *p = b.data<uint8_t>();
    for (size_t i = 0; i < b.nbytes(); i++) printf("%u\n", p[i]);
    return 0;
}
"""


def build_bits_helper(tmp):
    site = os.path.dirname(mx.__file__)
    src = os.path.join(tmp, "bits.cpp")
    exe = os.path.join(tmp, "bits")
    with open(src, "w") as f:
        f.write(CPP)
    # the wheel's LAPACK needs its own bundled libgfortran at run time only
    subprocess.run(["c++", "-std=c++17", "-O1", "-I", os.path.join(site, "include"), src,
                    "-L", os.path.join(site, "lib"), "-lmlx", "-Wl,-rpath," + os.path.join(site, "lib"),
                    "-Wl,--allow-shlib-undefined", "-o", exe], check=True)
    return exe


def cpp_bits(exe, key, width, shape):
    k = key_words(key)
    out = subprocess.run([exe, str(k[0]), str(k[1]), str(width)] + [str(d) for d in shape],
                         check=True, capture_output=True, text=True).stdout.split()
    raw = bytes(int(v) for v in out)
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
    return [int(v) for v in np.frombuffer(raw, dtype=dt)]


def main():
    if mx.__version__ != MLX_VERSION:
        sys.exit("need mlx %s, found %s" % (MLX_VERSION, mx.__version__))
    mx.set_default_device(mx.cpu)

    for seed in [0, 1, 42, 2**32 - 1, 2**32, 2**40 + 12345, 2**64 - 1]:
        k = mx.random.key(seed)
        add("key", mx.uint32, (2,), k, [], k, seed=seed)

    for seed in [0, 42, 2**40 + 7]:
        k = mx.random.key(seed)
        for num in [1, 2, 3, 5]:
            add("split", mx.uint32, (num, 2), k, [num], mx.random.split(k, num))

    with tempfile.TemporaryDirectory() as tmp:
        exe = build_bits_helper(tmp)
        shapes = [(1,), (3,), (4,), (5,), (2, 3), (7,), (37,), (64,)]
        for seed in [0, 42]:
            k = mx.random.key(seed)
            for width, dt in [(4, mx.uint32), (2, mx.uint16), (1, mx.uint8)]:
                for shape in shapes:
                    vals = cpp_bits(exe, k, width, shape)
                    cases.append(("bits", dname(dt), shape, 0, key_words(k), [width], vals))
        # the layout's cross-check against Python: split(key, n) is bits((n, 2))
        k = mx.random.key(5)
        assert cpp_bits(exe, k, 4, (3, 2)) == raw_bits(mx.random.split(k, 3))

    k = mx.random.key(7)
    for dt in [mx.float32, mx.float16, mx.bfloat16]:
        for lo, hi in [(0.0, 1.0), (-2.0, 3.0), (0.5, 0.75)]:
            add("uniform", dt, (16,), k, [lo, hi], mx.random.uniform(lo, hi, (16,), dt, key=k))
    # float64 uniform is refused by MLX ("[uniform] Unsupported type."): no case.

    for dt in [mx.float32, mx.float16, mx.bfloat16, mx.float64]:
        add("normal", dt, (16,), k, [], mx.random.normal((16,), dt, key=k))
    add("normal", mx.float32, (16,), k, [1.5, 0.5], mx.random.normal((16,), mx.float32, 1.5, 0.5, key=k))
    add("normal", mx.float32, (2048,), mx.random.key(3), [], mx.random.normal((2048,), key=mx.random.key(3)))

    add("randint", mx.int32, (16,), k, [-5, 17], mx.random.randint(-5, 17, (16,), key=k))
    add("randint", mx.int32, (16,), k, [0, 1000], mx.random.randint(0, 1000, (16,), key=k))
    add("randint", mx.int32, (16,), k, [-100000000, 100000000],
        mx.random.randint(-100000000, 100000000, (16,), key=k))

    add("bernoulli", mx.bool_, (16,), k, [0.5], mx.random.bernoulli(0.5, (16,), key=k))
    add("bernoulli", mx.bool_, (16,), k, [0.3], mx.random.bernoulli(0.3, (16,), key=k))

    add("truncated_normal", mx.float32, (16,), k, [-1.0, 2.0],
        mx.random.truncated_normal(-1.0, 2.0, (16,), key=k))
    add("gumbel", mx.float32, (16,), k, [], mx.random.gumbel((16,), key=k))
    add("laplace", mx.float32, (16,), k, [0.0, 1.0], mx.random.laplace((16,), key=k))
    add("laplace", mx.float32, (16,), k, [2.0, 3.0], mx.random.laplace((16,), loc=2.0, scale=3.0, key=k))

    logits = [0.1, 1.0, -0.5, 2.0]
    add("categorical", mx.uint32, (8,), k, logits + [8],
        mx.random.categorical(mx.array(logits), num_samples=8, key=k))
    add("categorical", mx.uint32, (1,), k, logits, mx.random.categorical(mx.array(logits), key=k).reshape(1))

    add("permutation", mx.uint32, (10,), k, [10], mx.random.permutation(10, key=k))

    mean, cov = [0.0, 1.0], [1.0, 0.5, 0.5, 2.0]
    add("multivariate_normal", mx.float32, (3, 2), k, mean + cov,
        mx.random.multivariate_normal(mx.array(mean), mx.array(cov).reshape(2, 2), (3,), key=k))

    write()


def write():
    pool = []
    rows = []
    for op, dt, shape, seed, key, params, vals in cases:
        assert len(params) <= 8
        p = ", ".join(repr(float(v)) for v in params) or "0"
        shp = "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
        rows.append('    {"%s", "%s", "%s", %dull, {%du, %du}, %d, {%s}, %d, %d},'
                    % (op, dt, shp, seed, key[0], key[1], len(vals), p, len(params), len(pool)))
        pool += vals
    lines = ["/* Generated by scripts/make_random_fixtures.py with mlx %s: do not edit.\n"
             " * One row per case; its values are rf_vals[off .. off + n) as bit patterns\n"
             " * (float32 as uint32 bits, float16/bfloat16 as uint16 bits, float64 as\n"
             " * uint64 bits, integers and bools as their value). */" % MLX_VERSION,
             "#ifndef MC_TEST_RANDOM_CASES_H", "#define MC_TEST_RANDOM_CASES_H", "",
             "#include <stddef.h>", "#include <stdint.h>", "",
             '#define RF_MLX_VERSION "%s"' % MLX_VERSION, "",
             "typedef struct rf_case {",
             "    const char *op, *dtype, *shape;",
             "    uint64_t seed; /* the seed of a \"key\" case */",
             "    uint32_t key[2];",
             "    size_t n;",
             "    double p[8];",
             "    int np;",
             "    size_t off;",
             "} rf_case;", "",
             "static const rf_case rf_cases[] = {"]
    lines += [r.replace("{, ", "{") for r in rows]
    lines += ["};", "", "static const uint64_t rf_vals[] = {"]
    for i in range(0, len(pool), 6):
        lines.append("    " + " ".join("0x%xu," % v for v in pool[i:i + 6]))
    lines += ["};", "", "#endif", ""]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("wrote %s: %d cases, %d values" % (os.path.normpath(OUT), len(cases), len(pool)))


if __name__ == "__main__":
    main()

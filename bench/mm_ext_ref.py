#!/usr/bin/env python3
"""MLX's CPU gather_mm and block_masked_mm on the shapes of
bench/bench_matmul_ext.c, in the same BENCH line format. Run with the
python that has PyPI's mlx (BENCH_MLX_PYTHON, e.g. /work/venv-mlx/bin/python)."""
import time

import mlx.core as mx
import numpy as np

mx.set_default_device(mx.cpu)
E, D, T, P = 8, 1024, 64, 2


def measure(f, reps):
    for _ in range(2):
        mx.eval(f())
    ts = []
    for _ in range(reps):
        t = time.perf_counter_ns()
        mx.eval(f())
        ts.append(time.perf_counter_ns() - t)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def report(name, reps, f):
    med, mn = measure(f, reps)
    print(f"BENCH side=mlx name={name} threads=0 median_ns={med} min_ns={mn} reps={reps}")


x = mx.random.normal((T, 1, 1, D))
w = mx.random.normal((E, D, D))
iv = np.zeros((T, P), dtype=np.int32)
for t in range(T):
    e0 = (t * 5 + t // 7) % E
    iv[t] = (e0, (e0 + 1 + t % (E - 1)) % E)
idx = mx.array(iv)
order = np.argsort(iv.reshape(-1), kind="stable")
xs = mx.take(x, mx.array(order // P), axis=0).reshape(T * P, 1, D)
idxs = mx.array(iv.reshape(-1)[order])
mx.eval(x, w, xs, idxs)
report("gather_mm_moe_64x2_1024", 20, lambda: mx.gather_mm(x, w, None, idx))
report("gather_mm_moe_sorted_64x2_1024", 20, lambda: mx.gather_mm(xs, w, None, idxs, sorted_indices=True))

a = mx.random.normal((D, D))
b = mx.random.normal((D, D))
m = mx.array(np.arange(16 * 16).reshape(16, 16) // 16 < 8)
mx.eval(a, b, m)
report("block_masked_mm_1024_half_rows", 10, lambda: mx.block_masked_mm(a, b, 64, m))
report("matmul_1024", 10, lambda: a @ b)

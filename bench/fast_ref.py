"""The MLX reference for bench_fast: mx.fast.rms_norm, layer_norm and
scaled_dot_product_attention on MLX's own CPU build (PyPI mlx), on the
shapes bench_fast times (4096 x 4096 norms; B 1, 32 heads, L 1024, D 128
attention, no mask and causal), float32. Prints the lines bench/report.py
reads ("BENCH side=mlxpy name=.. threads=.. median_ns=.. min_ns=..
reps=.."); MLX's CPU build uses its own thread count, reported as 2.

Usage: /work/venv-mlx/bin/python bench/fast_ref.py"""
import os
import statistics
import time

import mlx.core as mx


def scaled(reps):
    """reps scaled as bench_util.c's bu_reps: BENCH_REPS_SCALE, a third
    under BENCH_QUICK."""
    scale = float(os.environ.get("BENCH_REPS_SCALE") or 1.0)
    if os.environ.get("BENCH_QUICK", "") not in ("", "0"):
        scale /= 3.0
    return max(1, int(reps * scale + 0.5))


def measure(fn, reps):
    reps = scaled(reps)
    for _ in range(2):
        mx.eval(fn())
    t = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        mx.eval(fn())
        t.append(time.perf_counter_ns() - t0)
    return int(statistics.median(t)), min(t), reps


def report(name, st):
    print(f"BENCH side=mlxpy name={name} threads=2 median_ns={st[0]} min_ns={st[1]} reps={st[2]}")


mx.set_default_device(mx.cpu)
x = mx.random.normal((4096, 4096))
w = mx.random.normal((4096,))
b = mx.random.normal((4096,))
q, k, v = (mx.random.normal((1, 32, 1024, 128)) for _ in range(3))
mx.eval(x, w, b, q, k, v)
s = 128 ** -0.5
report("fast_rms_norm_4096x4096", measure(lambda: mx.fast.rms_norm(x, w, 1e-5), 15))
report("fast_layer_norm_4096x4096", measure(lambda: mx.fast.layer_norm(x, w, b, 1e-5), 15))
report("fast_sdpa_L1024_H32_D128", measure(lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=s), 5))
report("fast_sdpa_causal_L1024_H32_D128",
       measure(lambda: mx.fast.scaled_dot_product_attention(q, k, v, scale=s, mask="causal"), 5))

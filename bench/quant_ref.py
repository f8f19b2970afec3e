#!/usr/bin/env python3
"""MLX's CPU quantized_matmul (affine 4-bit, group 64, float32 x; and mxfp4)
on the shapes of bench/bench_quant.c, in the same BENCH line format. Run with the python
that has PyPI's mlx (BENCH_MLX_PYTHON)."""
import os
import time

import mlx.core as mx

mx.set_default_device(mx.cpu)


def scaled(reps):
    """reps scaled as bench_util.c's bu_reps: BENCH_REPS_SCALE, a third
    under BENCH_QUICK."""
    scale = float(os.environ.get("BENCH_REPS_SCALE") or 1.0)
    if os.environ.get("BENCH_QUICK", "") not in ("", "0"):
        scale /= 3.0
    return max(1, int(reps * scale + 0.5))


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


for name, m, n, k in (("decode_4096x4096", 1, 4096, 4096), ("decode_11008x4096", 1, 11008, 4096),
                      ("prefill_512_4096x4096", 512, 4096, 4096)):
    x = mx.random.normal((m, k))
    w = mx.random.normal((n, k))
    q, s, b = mx.quantize(w, group_size=64, bits=4)
    mx.eval(x, q, s, b)
    reps = scaled(3 if m > 1 else 10)
    med, mn = measure(lambda: mx.quantized_matmul(x, q, s, b, transpose=True, group_size=64, bits=4), reps)
    print("BENCH side=mlx name=qmm_%s threads=0 median_ns=%d min_ns=%d reps=%d" % (name, med, mn, reps))

x = mx.random.normal((1, 4096))
q, s = mx.quantize(mx.random.normal((4096, 4096)), mode="mxfp4")
mx.eval(x, q, s)
reps = scaled(10)
med, mn = measure(lambda: mx.quantized_matmul(x, q, s, transpose=True, mode="mxfp4"), reps)
print("BENCH side=mlx name=qmm_mxfp4_decode_4096x4096 threads=0 median_ns=%d min_ns=%d reps=%d" % (med, mn, reps))

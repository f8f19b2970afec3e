#!/usr/bin/env python3
"""The Python references of bench/bench_io.c on the file it wrote:
numpy reading the bytes (np.fromfile), the safetensors package's numpy
loader, and MLX's mx.load with the arrays evaluated. A package the
interpreter lacks is reported as not installed.
Usage: io_ref.py [FILE] (default /tmp/mc_bench_io.safetensors)."""
import statistics
import sys
import time

path = sys.argv[1] if len(sys.argv) > 1 else '/tmp/mc_bench_io.safetensors'


def measure(name, fn, reps=7):
    fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        t.append(time.perf_counter_ns() - t0)
    print(f'BENCH side=py name={name} threads=1 median_ns={int(statistics.median(t))} min_ns={min(t)} reps={reps}')


try:
    import numpy as np
    measure('io_numpy_fromfile', lambda: np.fromfile(path, dtype=np.uint8))
except ImportError:
    print('INFO numpy=not installed')
try:
    from safetensors.numpy import load_file
    measure('io_safetensors_numpy', lambda: load_file(path))
except ImportError:
    print('INFO safetensors=not installed')
try:
    import mlx.core as mx

    def mlx_load():
        d = mx.load(path)
        mx.eval(list(d.values()))
    measure('io_mlx_load', mlx_load)
except ImportError:
    print('INFO mlx=not installed')

"""numpy side of the benchmarks: the same figures as bench/bench_ops.c, on
the same inputs, timed the same way (CLOCK_MONOTONIC, median of N
repetitions after warm-up), printed in the same "BENCH ..." line format.

Run it with the system python3 (numpy 1.24). It also reports, through
threadpoolctl when that is installed, which BLAS library and kernel numpy
runs; without threadpoolctl it asks OpenBLAS itself through ctypes and
says so.
"""
import ctypes
import os
import sys
import time

import numpy as np

N16M = 16 * 1024 * 1024
N1M = 1024 * 1024


def reps_of(n):
    """n scaled as bench_util.c's bu_reps does."""
    scale = float(os.environ.get("BENCH_REPS_SCALE") or 1.0)
    if os.environ.get("BENCH_QUICK", "") not in ("", "0"):
        scale /= 3.0
    return max(1, int(n * scale + 0.5))


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def fill(n, lo, hi, phase):
    """lo + (hi - lo) * frac(i * golden + phase), in float64, as float32:
    the formula of bench_ops.c's fill()."""
    f = np.arange(n, dtype=np.float64) * 0.6180339887498949 + phase
    f -= np.floor(f)
    return (lo + (hi - lo) * f).astype(np.float32)


def measure(fn, warm, reps):
    for _ in range(warm):
        fn()
    t = []
    for _ in range(reps):
        t0 = now_ns()
        fn()
        t.append(now_ns() - t0)
    t.sort()
    return t[(reps - 1) // 2], t[0], reps


def report(name, threads, fn, warm, reps):
    med, mn, n = measure(fn, warm, reps_of(reps))
    print(f"BENCH side=numpy name={name} threads={threads} "
          f"median_ns={med} min_ns={mn} reps={n}", flush=True)


def info(key, value):
    print(f"INFO {key}={value}", flush=True)


def blas_info():
    """Returns (description, BLAS threads) for the BLAS numpy loaded."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                desc = (f"{lib.get('internal_api')} {lib.get('version')} "
                        f"kernel={lib.get('architecture')} "
                        f"({os.path.basename(lib.get('filepath', ''))}; "
                        f"threadpoolctl)")
                return desc, lib.get("num_threads")
        return "no BLAS found by threadpoolctl", None
    # No threadpoolctl: find the OpenBLAS numpy mapped and ask it directly.
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps
                 if "openblas" in line and ".so" in line}
    for path in sorted(paths):
        lib = ctypes.CDLL(path)
        if hasattr(lib, "openblas_get_corename"):
            break
    else:
        return "threadpoolctl not installed; no OpenBLAS mapped", None
    lib.openblas_get_corename.restype = ctypes.c_char_p
    core = lib.openblas_get_corename().decode()
    threads = lib.openblas_get_num_threads()
    return (f"openblas kernel={core} ({os.path.basename(path)}; "
            f"threadpoolctl not installed, asked OpenBLAS via ctypes)"), threads


def bench_ew():
    x = fill(N16M, -1, 1, 0.0)
    y = fill(N16M, -1, 1, 0.5)
    # numpy's elementwise ufuncs and reductions run on one thread.
    report("add_16M", 1, lambda: x + y, 3, 21)
    report("multiply_16M", 1, lambda: x * y, 3, 21)


def bench_unary():
    unary = [
        ("exp_1M", np.exp, -10, 10),
        ("log_1M", np.log, 0.01, 100),
        ("tanh_1M", np.tanh, -5, 5),
        ("sin_1M", np.sin, -10, 10),
        ("sigmoid_1M", lambda v: 1 / (1 + np.exp(-v)), -10, 10),
    ]
    for name, fn, lo, hi in unary:
        v = fill(N1M, lo, hi, 0.0)
        report(name, 1, lambda fn=fn, v=v: fn(v), 5, 51)


def bench_reduce():
    x = fill(N16M, -1, 1, 0.0)
    report("sum_16M", 1, lambda: x.sum(), 3, 21)
    s = fill(4096 * 1024, -5, 5, 0.0).reshape(4096, 1024)

    def softmax():
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    report("softmax_4096x1024", 1, softmax, 3, 21)


def bench_matmul():
    a = fill(1024 * 1024, -1, 1, 0.0).reshape(1024, 1024)
    b = fill(1024 * 1024, -1, 1, 0.5).reshape(1024, 1024)
    # After the first BLAS call, so the library is loaded and initialised.
    a @ b
    desc, threads = blas_info()
    info("blas", desc)
    info("blas_threads", threads)
    report("matmul_1024", threads or 0, lambda: a @ b, 2, 11)


def bench_sort():
    x = fill(N1M, -1, 1, 0.0)
    report("sort_1M", 1, lambda: np.sort(x), 3, 21)
    m = fill(512 * 32000, -1, 1, 0.0).reshape(512, 32000)

    def topk():
        i = np.argpartition(m, -50, axis=-1)[:, -50:]
        return np.take_along_axis(m, i, axis=-1)
    report("topk_512x32000", 1, topk, 2, 11)


SECTIONS = {"ew": bench_ew, "unary": bench_unary, "reduce": bench_reduce,
            "matmul": bench_matmul, "sort": bench_sort}


def bench_random():
    g = np.random.default_rng(0)
    report("random_normal_16M", 1, lambda: g.standard_normal(N16M, dtype=np.float32), 2, 21)
    report("random_uniform_16M", 1, lambda: g.random(N16M, dtype=np.float32), 2, 21)


SECTIONS["random"] = bench_random


def bench_linalg():
    """bench_linalg.c's figures: 1000 4 x 4 solves in one batched call
    (float64 and float32) and the full SVD of a 1024 x 1024 float32 matrix,
    on numpy's OpenBLAS threads."""
    b_, n_ = 1000, 4
    f = np.arange(b_ * n_ * n_, dtype=np.float64) * 0.6180339887498949 + 0.25
    a = (-1 + 2 * (f - np.floor(f))).reshape(b_, n_, n_) + 4 * np.eye(n_)
    f = np.arange(b_ * n_, dtype=np.float64) * 0.6180339887498949 + 0.5
    b = (-1 + 2 * (f - np.floor(f))).reshape(b_, n_, 1)
    report("solve_1000x4x4_f64", 2, lambda: np.linalg.solve(a, b), 3, 51)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    report("solve_1000x4x4_f32", 2, lambda: np.linalg.solve(a32, b32), 3, 51)
    f = np.arange(1024 * 1024, dtype=np.float64) * 0.6180339887498949 + 0.125
    m = (-1 + 2 * (f - np.floor(f))).reshape(1024, 1024).astype(np.float32)
    report("svd_1024_f32", 2, lambda: np.linalg.svd(m), 1, 5)


SECTIONS["linalg"] = bench_linalg
def bench_fft():
    """numpy.fft (pocketfft; numpy 1.24 computes in complex128 and returns
    it) on bench_fft.c's inputs."""
    re = fill(2 * N1M, -1, 1, 0.0)
    c1 = re.view(np.complex64)
    cb = re[:2 * 1000 * 1000].view(np.complex64).reshape(1000, 1000)
    r1 = re[:N1M]
    report("fft_c64_2p20", 1, lambda: np.fft.fft(c1), 2, 21)
    report("fft_c64_1000x1000_last", 1, lambda: np.fft.fft(cb, axis=1), 2, 21)
    report("fft_c64_1000x1000_first", 1, lambda: np.fft.fft(cb, axis=0), 2, 21)
    report("rfft_f32_2p20", 1, lambda: np.fft.rfft(r1), 2, 21)


SECTIONS["fft"] = bench_fft
def bench_index():
    """The embedding lookup and its gradient, as bench/bench_index.c."""
    rows, dim, n = 32000, 1024, 4096
    t = ((np.arange(rows * dim, dtype=np.int64) % 1000003).astype(np.float32) * np.float32(1e-6)).reshape(rows, dim)
    u = ((np.arange(n * dim, dtype=np.int64) % 101).astype(np.float32) * np.float32(0.01)).reshape(n, dim)
    idx = ((np.arange(n, dtype=np.int64) * 7919) % rows).astype(np.int32)
    report("gather_rows_4096_of_32000x1024", 1, lambda: np.take(t, idx, axis=0), 3, 41)

    def grad():
        g = np.zeros((rows, dim), np.float32)
        np.add.at(g, idx, u)
        return g
    report("scatter_add_rows_4096_into_32000x1024", 1, grad, 2, 11)


SECTIONS["index"] = bench_index


def main():
    """Usage: numpy_ref.py [section...] (sections as bench_ops takes)."""
    info("program", "numpy_ref")
    info("numpy", np.__version__)
    info("python", sys.version.split()[0])
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        info(f"env_{var}", os.environ.get(var, "(unset)"))
    names = sys.argv[1:] or list(SECTIONS)
    for name in names:
        if name not in SECTIONS:
            sys.exit(f"numpy_ref.py: unknown section {name}")
        SECTIONS[name]()


if __name__ == "__main__":
    main()

"""The references for bench_conv: the same layers (batch 8, float32) in MLX's
own CPU build (mx.conv2d, channels last), JAX (jax.jit of
lax.conv_general_dilated, NHWC / OHWI) and PyTorch (torch.nn.functional.
conv2d, NCHW, torch.set_num_threads(2)), 2 threads each where the framework
lets us say so. Prints "BENCH side=.. name=.. threads=2 median_ns=..
min_ns=.. reps=.. gflops=.." lines as bench_conv does; a framework that is
not installed prints status=unavailable.

Usage: python3 conv_ref.py [mlx|jax|torch ...]   (default: all three)
bench/run_conv.sh runs each with the python that has it."""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=2")

# name, batch, h, w, c_in, c_out, kernel, stride, pad (as bench_conv.c)
LAYERS = [
    ("conv3x3_56x56x64", 8, 56, 56, 64, 64, 3, 1, 1),
    ("conv3x3_28x28x128", 8, 28, 28, 128, 128, 3, 1, 1),
    ("conv1x1_56x56x64_256", 8, 56, 56, 64, 256, 1, 1, 0),
    ("conv3x3_s2_56x56x64_128", 8, 56, 56, 64, 128, 3, 2, 1),
    ("dwconv3x3_56x56x128", 8, 56, 56, 128, 128, 3, 1, 1),
]


def reps_of(n):
    scale = float(os.environ.get("BENCH_REPS_SCALE") or 1.0)
    if os.environ.get("BENCH_QUICK", "") not in ("", "0"):
        scale /= 3.0
    return max(1, int(n * scale + 0.5))


def groups_of(layer):
    return layer[4] if layer[0].startswith("dw") else 1


def flops(layer):
    name, n, h, w, c, o, k, s, p = layer
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    return 2.0 * n * oh * ow * o * k * k * (c // groups_of(layer))


def measure(step, reps, warm=2):
    for _ in range(warm):
        step()
    times = []
    t_end = time.perf_counter() + 0.05
    while time.perf_counter() < t_end:
        step()
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        step()
        times.append(time.perf_counter_ns() - t0)
    return int(statistics.median(times)), int(min(times)), reps


def report(side, layer, st):
    med, mn, n = st
    print(f"BENCH side={side} name={layer[0]} threads=2 median_ns={med} min_ns={mn} reps={n} "
          f"gflops={flops(layer) / med:.1f}", flush=True)


def data(np, layer, wt_layout):
    name, n, h, w, c, o, k, s, p = layer
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    wt = rng.standard_normal((o, k, k, c // groups_of(layer))).astype(np.float32)
    return x, wt


def run_mlx(reps):
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.cpu)
    for layer in LAYERS:
        x, wt = data(np, layer, "ohwi")
        x, wt = mx.array(x), mx.array(wt)
        s, p = layer[7], layer[8]
        report("mlx", layer, measure(lambda: mx.eval(mx.conv2d(x, wt, stride=s, padding=p, groups=groups_of(layer))),
                                     reps))


def run_jax(reps):
    import jax
    import jax.numpy as jnp
    import numpy as np
    jax.config.update("jax_platforms", "cpu")
    for layer in LAYERS:
        x, wt = data(np, layer, "ohwi")
        s, p = layer[7], layer[8]
        g = groups_of(layer)
        f = jax.jit(lambda a, b: jax.lax.conv_general_dilated(
            a, b, (s, s), [(p, p), (p, p)], dimension_numbers=("NHWC", "OHWI", "NHWC"), feature_group_count=g))
        xa, wa = jnp.asarray(x), jnp.asarray(wt)
        report("jax", layer, measure(lambda: f(xa, wa).block_until_ready(), reps))


def run_torch(reps):
    import numpy as np
    import torch
    torch.set_num_threads(2)
    for layer in LAYERS:
        x, wt = data(np, layer, "ohwi")
        s, p = layer[7], layer[8]
        xt = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
        wtt = torch.from_numpy(wt).permute(0, 3, 1, 2).contiguous()
        with torch.no_grad():
            report("torch", layer, measure(
                lambda: torch.nn.functional.conv2d(xt, wtt, stride=s, padding=p, groups=groups_of(layer)), reps))


def main():
    which = sys.argv[1:] or ["mlx", "jax", "torch"]
    reps = reps_of(20)
    for side in which:
        try:
            {"mlx": run_mlx, "jax": run_jax, "torch": run_torch}[side](reps)
        except ImportError:
            for layer in LAYERS:
                print(f"BENCH side={side} name={layer[0]} threads=2 status=unavailable symbol={side}")


if __name__ == "__main__":
    main()

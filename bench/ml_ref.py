"""The references for bench_grad: the same MLP training step (784-256-256-10,
GELU, batch 256, float32, mean cross-entropy on one-hot labels, SGD) in
JAX (jax.jit of value_and_grad + update), MLX's own CPU build (mx.compile)
and PyTorch (eager, torch.set_num_threads), each on 2 threads where the
framework lets us say so. Prints the result lines bench/report.py reads
("BENCH side=.. name=mlp_step threads=2 median_ns=.. min_ns=.. reps=..");
a framework that is not installed prints status=unavailable.

Usage: python3 ml_ref.py [jax|mlx|torch ...]   (default: all three)
The interpreter must have the framework: bench/run.sh runs each one with
the python that has it (BENCH_JAX_PYTHON, BENCH_MLX_PYTHON,
BENCH_TORCH_PYTHON)."""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=2")

IN, HIDDEN, CLASSES, BATCH = 784, 256, 10, 256
LR = 0.05
REPS = int(os.environ.get("BENCH_ML_REPS", "60"))


def report(side, st):
    if st is None:
        print(f"BENCH side={side} name=mlp_step threads=2 status=unavailable symbol={side}")
        return
    med, mn, n = st
    print(f"BENCH side={side} name=mlp_step threads=2 median_ns={med} min_ns={mn} reps={n}", flush=True)


def measure(step, sync, reps=REPS, warm=5):
    for _ in range(warm):
        sync(step())
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        sync(step())
        times.append(time.perf_counter_ns() - t0)
    return int(statistics.median(times)), int(min(times)), reps


def data(np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]
    ws = [rng.standard_normal(s).astype(np.float32) * np.float32((2.0 / s[0]) ** 0.5)
          for s in [(IN, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, CLASSES)]]
    params = [ws[0], np.zeros(HIDDEN, np.float32), ws[1], np.zeros(HIDDEN, np.float32),
              ws[2], np.zeros(CLASSES, np.float32)]
    return x, y, params


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError:
        return None
    jax.config.update("jax_platform_name", "cpu")
    x, y, params = data(np)
    x, y = jnp.asarray(x), jnp.asarray(y)
    params = [jnp.asarray(p) for p in params]

    def loss(p, x, y):
        h = jax.nn.gelu(x @ p[0] + p[1], approximate=False)
        h = jax.nn.gelu(h @ p[2] + p[3], approximate=False)
        logits = h @ p[4] + p[5]
        return jnp.mean(jax.nn.logsumexp(logits, axis=1) - jnp.sum(logits * y, axis=1))

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, [a - LR * b for a, b in zip(p, g)]

    state = {"p": params}

    def run():
        l, state["p"] = step(state["p"], x, y)
        return l

    return measure(run, lambda l: l.block_until_ready())


def bench_mlx():
    try:
        import mlx.core as mx
        import numpy as np
    except ImportError:
        return None
    mx.set_default_device(mx.cpu)
    x, y, params = data(np)
    x, y = mx.array(x), mx.array(y)
    params = [mx.array(p) for p in params]

    def gelu(v):
        return v * (1 + mx.erf(v / 2 ** 0.5)) / 2

    def loss(p, x, y):
        h = gelu(mx.addmm(p[1], x, p[0]))
        h = gelu(mx.addmm(p[3], h, p[2]))
        logits = mx.addmm(p[5], h, p[4])
        return mx.mean(mx.logsumexp(logits, axis=1) - mx.sum(logits * y, axis=1))

    vg = mx.value_and_grad(loss)

    @mx.compile
    def step(p, x, y):
        l, g = vg(p, x, y)
        return l, [a - LR * b for a, b in zip(p, g)]

    state = {"p": params}

    def run():
        l, state["p"] = step(state["p"], x, y)
        mx.eval(l, state["p"])
        return l

    return measure(run, lambda l: None)


def bench_torch():
    try:
        import torch
        import numpy as np
    except ImportError:
        return None
    torch.set_num_threads(2)
    x, y, params = data(np)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    params = [torch.from_numpy(p).requires_grad_() for p in params]

    def run():
        h = torch.nn.functional.gelu(torch.addmm(params[1], x, params[0]))
        h = torch.nn.functional.gelu(torch.addmm(params[3], h, params[2]))
        logits = torch.addmm(params[5], h, params[4])
        l = (torch.logsumexp(logits, 1) - (logits * y).sum(1)).mean()
        for p in params:
            p.grad = None
        l.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
        return l

    return measure(run, lambda l: None)


def main():
    which = sys.argv[1:] or ["jax", "mlx", "torch"]
    for side in which:
        report(side, {"jax": bench_jax, "mlx": bench_mlx, "torch": bench_torch}[side]())


if __name__ == "__main__":
    main()

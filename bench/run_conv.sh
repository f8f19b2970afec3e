#!/usr/bin/env bash
# Runs the convolution benchmark (bench/bench_conv.c) next to its references
# (our im2col path with Winograd off, our Winograd F(2x2, 3x3) and
# F(4x4, 3x3) each forced, cblas_sgemm on the equivalent GEMM,
# and bench/conv_ref.py: MLX, JAX, PyTorch) in alternating rounds, all in
# this one run, and writes the table to docs/benchmarks-conv.md (each
# figure: the median over rounds of each round's median time).
#
# Environment: BENCH_BUILD_DIR (default build-bench/, release), BENCH_ROUNDS
# (default 3), BENCH_REPS_SCALE (default 0.5), BENCH_MLX_PYTHON /
# BENCH_JAX_PYTHON (default /work/venv-mlx/bin/python if present, else
# python3), BENCH_TORCH_PYTHON (default /usr/bin/python3), BENCH_OUT.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
rounds=${BENCH_ROUNDS:-3}
export BENCH_REPS_SCALE=${BENCH_REPS_SCALE:-0.5}
ml_default=python3
[ -x /work/venv-mlx/bin/python ] && ml_default=/work/venv-mlx/bin/python
mlx_py=${BENCH_MLX_PYTHON:-$ml_default}
jax_py=${BENCH_JAX_PYTHON:-$ml_default}
torch_py=${BENCH_TORCH_PYTHON:-/usr/bin/python3}
out=${BENCH_OUT:-$root/docs/benchmarks-conv.md}

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=release -Dtests=false -Dbench=true
fi
ninja -C "$build" -j2 bench/bench_conv

log=$(mktemp)
trap 'rm -f "$log"' EXIT
noblas=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
load_before=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq "$rounds"); do
    "${noblas[@]}" "$build/bench/bench_conv" lib >>"$log"
    "${noblas[@]}" "$build/bench/bench_conv" direct >>"$log"
    "${noblas[@]}" "$build/bench/bench_conv" wino2 >>"$log"
    "${noblas[@]}" "$build/bench/bench_conv" wino4 >>"$log"
    "${noblas[@]}" "$build/bench/bench_conv" sgemm >>"$log"
    "${noblas[@]}" "$jax_py" "$root/bench/conv_ref.py" jax 2>/dev/null >>"$log" || true
    "${noblas[@]}" "$torch_py" "$root/bench/conv_ref.py" torch 2>/dev/null >>"$log" || true
    # MLX's CPU build is slow enough that one round of it is plenty
    [ "$r" = 1 ] && { "${noblas[@]}" "$mlx_py" "$root/bench/conv_ref.py" mlx 2>/dev/null >>"$log" || true; }
done

python3 - "$log" "$out" "$rounds" "$load_before" <<'PY'
import re, statistics, subprocess, sys, time
log, out, rounds, load = sys.argv[1:5]
rows = {}
for line in open(log):
    m = re.match(r"BENCH side=(\S+) name=(\S+) threads=\d+ median_ns=(\d+) .*gflops=([\d.]+)", line)
    if m:
        rows.setdefault(m.group(2), {}).setdefault(m.group(1), []).append(int(m.group(3)))
flops = {}
for line in open(log):
    m = re.match(r"BENCH side=\S+ name=(\S+) threads=\d+ median_ns=(\d+) .*gflops=([\d.]+)", line)
    if m:
        flops[m.group(1)] = float(m.group(3)) * int(m.group(2))
sides = ["lib", "direct", "wino2", "wino4", "sgemm", "mlx", "jax", "torch"]
def g(name, side):
    t = rows.get(name, {}).get(side)
    return flops[name] / statistics.median(t) if t else None
lines = ["# Convolution benchmark", "",
         "Written by bench/run_conv.sh on %s (%s rounds, load average %s before the run; the" % (
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rounds, load),
         "host is shared, so figures move by 10-20% between runs). Batch 8, float32, 2 threads each;",
         "GFLOP/s = 2 * M * N * K of the equivalent GEMM (the convolution's multiply-adds), per second.",
         "sgemm: cblas_sgemm (OpenBLAS, 2 threads) on the equivalent GEMM, patches given.",
         "ours: 3x3 layers of stride 1 take the Winograd path, F(4x4, 3x3) or F(2x2, 3x3) by",
         "src/graph/conv_wino.c's rule; im2col: ours with it turned off (bench_conv direct,",
         "MLX_CPU_CONV_WINOGRAD=0), the path every other layer takes; F(2x2), F(4x4): ours with that",
         "variant forced (bench_conv wino2 / wino4, MLX_CPU_CONV_WINOGRAD=2 / 4).", "",
         "| layer | ours | im2col | ours/im2col | F(2x2) | ours/F(2x2) | F(4x4) | ours/F(4x4) | sgemm | ours/sgemm | MLX | ours/MLX | JAX | ours/JAX | PyTorch | ours/PyTorch |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for name in rows:
    v = {s: g(name, s) for s in sides}
    def f(x):
        return "%.1f" % x if x else "-"
    def r(s):
        return "%.2fx" % (v["lib"] / v[s]) if v["lib"] and v[s] else "-"
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        name, f(v["lib"]), f(v["direct"]), r("direct"), f(v["wino2"]), r("wino2"), f(v["wino4"]), r("wino4"),
        f(v["sgemm"]), r("sgemm"), f(v["mlx"]), r("mlx"), f(v["jax"]), r("jax"),
        f(v["torch"]), r("torch")))
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY

#!/usr/bin/env bash
# Builds the bench programs in a release build directory, runs them next to
# the numpy reference in alternating rounds, and writes docs/benchmarks.md.
# Every reference is measured in this same run; nothing is compared with
# numbers from another day or machine.
#
# Sections: bench_ops, bench_compile, bench_random, bench_linalg,
# bench_fft, bench_index, bench_vmap and bench_grad beside numpy_ref.py and ml_ref.py
# in every round; bench_conv (with conv_ref.py), bench_fast (fast_ref.py),
# bench_quant (quant_ref.py) and bench_io (io_ref.py), which take longer, in
# the first BENCH_EXTRA_ROUNDS rounds (MLX's convolutions and attention,
# which take seconds a call, in the first only), with attention's GEMM
# floor (bench_fast bound) and bench_matmul_ext (with mm_ext_ref.py) in
# the same rounds; the attention memory
# figure (bench_fast memory, not in a smoke run) and bench_distributed
# under mpirun -np 2 (when the build has MPI and mpirun exists) once.
#
# Environment knobs:
#   BENCH_BUILD_DIR  build directory (default: build-bench/ in the repo)
#   BENCH_ROUNDS     rounds (default 8; 2 with BENCH_QUICK=1)
#   BENCH_EXTRA_ROUNDS rounds that also run the longer sections (default 3;
#                    1 with BENCH_QUICK=1)
#   BENCH_REPS_SCALE share of each figure's nominal repetitions per round
#                    (default 0.5: the rounds make up the rest)
#   BENCH_PYTHON     the python with numpy 1.24 (default /usr/bin/python3)
#   BENCH_JAX_PYTHON, BENCH_MLX_PYTHON
#                    the pythons that have jax / mlx, for bench/ml_ref.py
#                    (default /work/venv-mlx/bin/python if it exists, else
#                    python3); a framework an interpreter lacks is reported
#                    as not installed
#   BENCH_TORCH_PYTHON the python that has torch (default /usr/bin/python3)
#   BENCH_OUT        the markdown file to write (default docs/benchmarks.md)
#   BENCH_QUICK=1    a third of the repetitions, fewer rounds, a 64 MiB
#                    file for bench_io and no attention memory figure, for a
#                    smoke run
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
quick=0
case ${BENCH_QUICK:-} in '' | 0) ;; *) quick=1 ;; esac
if [ "$quick" = 1 ]; then
    rounds=${BENCH_ROUNDS:-2}
    extra_rounds=${BENCH_EXTRA_ROUNDS:-1}
    io_mib=64
else
    rounds=${BENCH_ROUNDS:-8}
    extra_rounds=${BENCH_EXTRA_ROUNDS:-3}
    io_mib=256
fi
export BENCH_REPS_SCALE=${BENCH_REPS_SCALE:-0.5}
py=${BENCH_PYTHON:-/usr/bin/python3}
out=${BENCH_OUT:-$root/docs/benchmarks.md}
ml_default=python3
[ -x /work/venv-mlx/bin/python ] && ml_default=/work/venv-mlx/bin/python
jax_py=${BENCH_JAX_PYTHON:-$ml_default}
mlx_py=${BENCH_MLX_PYTHON:-$ml_default}
torch_py=${BENCH_TORCH_PYTHON:-/usr/bin/python3}

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=release -Dtests=false -Dbench=true
else
    meson configure "$build" -Dbuildtype=release -Dbench=true >/dev/null
fi
targets=(bench/bench_ops bench/bench_compile bench/bench_random bench/bench_grad bench/bench_linalg
    bench/bench_fft bench/bench_index bench/bench_conv bench/bench_fast bench/bench_quant bench/bench_io
    bench/bench_matmul_ext bench/bench_vmap)
# bench_distributed exists only in a build with MPI
if ninja -C "$build" -t targets all 2>/dev/null | grep -q '^bench/bench_distributed:'; then
    targets+=(bench/bench_distributed)
fi
ninja -C "$build" -j2 "${targets[@]}"

results=$build/bench-results
rm -rf "$results"
mkdir -p "$results"
# (mlx_save_safetensors adds the suffix to a name without it, as MLX does)
io_file=$(mktemp --suffix=.safetensors /tmp/mc_bench_io.XXXXXX)
trap 'rm -f "$io_file"' EXIT

# Some hosts set these for old OpenBLAS builds; they slow numpy. Unset them
# for both sides of the comparison alike, in these commands only.
noblas=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)

# The compiler meson used for the bench programs, as "--version" names it.
cc=$("$py" - "$build/meson-info/intro-targets.json" <<'PY' 2>/dev/null || echo unknown
import json, subprocess, sys
for t in json.load(open(sys.argv[1])):
    if t["name"] == "bench_ops":
        exe = t["target_sources"][0]["compiler"][0]
        out = subprocess.run([exe, "--version"], capture_output=True, text=True)
        print(out.stdout.splitlines()[0])
        break
PY
)
{
    echo "META date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "META cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
    echo "META cores=$(nproc)"
    echo "META load_before=$(cut -d' ' -f1 /proc/loadavg)"
    echo "META commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "META cc=$cc"
    echo "META buildtype=release"
    echo "META rounds=$rounds"
    echo "META extra_rounds=$extra_rounds"
    echo "META reps_scale=$BENCH_REPS_SCALE"
    echo "META env_OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"
    echo "META jax_python=$jax_py"
    echo "META mlx_python=$mlx_py"
    echo "META torch_python=$torch_py"
    echo "META env_OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-(unset)}"
} > "$results/meta.txt"

start=$(date +%s)
# Each section runs in numpy, then in bench_ops, back to back, so that a
# reference and our figure are measured seconds apart on this noisy host.
for r in $(seq 1 "$rounds"); do
    echo "round $r/$rounds" >&2
    for sec in ew unary reduce matmul sort; do
        "${noblas[@]}" "$py" "$root/bench/numpy_ref.py" "$sec" > "$results/numpy-$sec-$r.txt"
        "${noblas[@]}" "$build/bench/bench_ops" "$sec" > "$results/ops-$sec-$r.txt"
        # The unary ops once more on the AVX2 kernels, for AVX2-only hosts
        # (renamed so the report keeps them apart).
        if [ "$sec" = unary ] && [ "$(uname -m)" = x86_64 ]; then
            "${noblas[@]}" MLX_CPU_ISA=avx2 "$build/bench/bench_ops" unary |
                sed -e 's/^BENCH side=mlx /BENCH side=mlx_avx2 /' \
                    -e 's/^BENCH side=ref /BENCH side=ref_avx2 /' \
                    -e 's/^INFO program=bench_ops$/INFO program=bench_ops_avx2/' \
                    > "$results/ops-avx2-unary-$r.txt"
        fi
    done
    "${noblas[@]}" "$build/bench/bench_compile" > "$results/compile-$r.txt"
    "${noblas[@]}" "$py" "$root/bench/numpy_ref.py" random > "$results/numpy-random-$r.txt"
    "${noblas[@]}" "$build/bench/bench_random" > "$results/random-$r.txt"
    "${noblas[@]}" "$py" "$root/bench/numpy_ref.py" linalg > "$results/numpy-linalg-$r.txt"
    "${noblas[@]}" "$build/bench/bench_linalg" > "$results/linalg-$r.txt"
    "${noblas[@]}" "$py" "$root/bench/numpy_ref.py" fft > "$results/numpy-fft-$r.txt"
    "${noblas[@]}" "$build/bench/bench_fft" > "$results/fft-$r.txt"
    "${noblas[@]}" "$py" "$root/bench/numpy_ref.py" index > "$results/numpy-index-$r.txt"
    "${noblas[@]}" "$build/bench/bench_index" > "$results/index-$r.txt"
    "${noblas[@]}" "$build/bench/bench_vmap" > "$results/vmap-$r.txt"
    # The training step: each framework, then ours, back to back. An
    # interpreter that is missing altogether counts as the framework missing.
    for fw in jax mlx torch; do
        case $fw in jax) fpy=$jax_py ;; mlx) fpy=$mlx_py ;; torch) fpy=$torch_py ;; esac
        if command -v "$fpy" >/dev/null 2>&1; then
            "${noblas[@]}" "$fpy" "$root/bench/ml_ref.py" "$fw"
        else
            echo "BENCH side=$fw name=mlp_step threads=2 status=unavailable symbol=$fw"
        fi
    done > "$results/ml-$r.txt"
    "${noblas[@]}" "$build/bench/bench_grad" > "$results/grad-$r.txt"
    [ "$r" -le "$extra_rounds" ] || continue
    # convolutions: ours, the GEMM, then each framework (a missing one
    # prints status=unavailable); MLX's CPU build only once, it is slow
    {
        "${noblas[@]}" "$build/bench/bench_conv" lib
        "${noblas[@]}" "$build/bench/bench_conv" direct
        "${noblas[@]}" "$build/bench/bench_conv" wino2
        "${noblas[@]}" "$build/bench/bench_conv" wino4
        "${noblas[@]}" "$build/bench/bench_conv" sgemm
        "${noblas[@]}" "$jax_py" "$root/bench/conv_ref.py" jax 2>/dev/null || true
        "${noblas[@]}" "$torch_py" "$root/bench/conv_ref.py" torch 2>/dev/null || true
        if [ "$r" = 1 ]; then
            "${noblas[@]}" "$mlx_py" "$root/bench/conv_ref.py" mlx 2>/dev/null || true
        fi
    } > "$results/conv-$r.txt"
    "${noblas[@]}" "$build/bench/bench_fast" > "$results/fast-$r.txt"
    "${noblas[@]}" "$build/bench/bench_fast" bound > "$results/fastbound-$r.txt"
    # MLX's CPU attention takes tens of seconds a call: first round only
    if [ "$r" = 1 ]; then
        "${noblas[@]}" "$mlx_py" "$root/bench/fast_ref.py" > "$results/fastref-$r.txt" 2>/dev/null || true
    fi
    "${noblas[@]}" "$build/bench/bench_quant" > "$results/quant-$r.txt"
    "${noblas[@]}" "$mlx_py" "$root/bench/quant_ref.py" > "$results/quantref-$r.txt" 2>/dev/null || true
    "${noblas[@]}" "$build/bench/bench_matmul_ext" > "$results/mmext-$r.txt"
    "${noblas[@]}" "$mlx_py" "$root/bench/mm_ext_ref.py" > "$results/mmextref-$r.txt" 2>/dev/null || true
    "${noblas[@]}" "$build/bench/bench_io" "$io_file" "$io_mib" > "$results/io-$r.txt"
    "${noblas[@]}" "$mlx_py" "$root/bench/io_ref.py" "$io_file" > "$results/ioref-$r.txt" 2>/dev/null || true
    rm -f "$io_file"
done
# once: attention's peak memory (a fresh process; one attention of L 8192,
# a minute or more: not in a smoke run), and the collectives
if [ "$quick" = 0 ]; then
    "${noblas[@]}" "$build/bench/bench_fast" memory > "$results/fastmem-1.txt"
fi
if [ -x "$build/bench/bench_distributed" ] && command -v mpirun >/dev/null 2>&1; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_btl_vader_single_copy_mechanism=none \
        "${noblas[@]}" mpirun -np 2 --oversubscribe "$build/bench/bench_distributed" \
        > "$results/distributed-1.txt" || echo "bench_distributed failed" >&2
fi
echo "META load_after=$(cut -d' ' -f1 /proc/loadavg)" >> "$results/meta.txt"
echo "META seconds=$(( $(date +%s) - start ))" >> "$results/meta.txt"

"$py" "$root/bench/report.py" "$results" "$out"
echo "wrote $out ($(( $(date +%s) - start )) s of measuring)" >&2

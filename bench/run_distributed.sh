#!/usr/bin/env bash
# Runs bench_distributed under mpirun with 2 processes on this host and
# prints a markdown table of all_sum against MPI_Allreduce (same run).
#   BENCH_BUILD_DIR  the release build directory (default build-bench/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" --buildtype=release -Dtests=false -Dbench=true
ninja -C "$build" -j2 bench/bench_distributed >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun -np 2 --oversubscribe "$build/bench/bench_distributed" | python3 -c '
import re, sys
rows = {}
for line in sys.stdin:
    m = dict(re.findall(r"(\w+)=(\S+)", line))
    if line.startswith("BENCH") and "median_ns" in m:
        rows[(m["side"], m["name"])] = int(m["median_ns"])
print("| float32 all_sum, 2 ranks | MPI_Allreduce | mlx-cpu | ratio | mlx-cpu, no check | ratio |")
print("|---|---|---|---|---|---|")
for size in ("1KiB", "1MiB", "64MiB"):
    n = "all_sum_" + size
    raw, ours, nc = rows[("mpi_allreduce", n)], rows[("mlx-cpu", n)], rows[("mlx-cpu", n + "_nocheck")]
    f = lambda ns: "%.1f us" % (ns / 1e3) if ns < 1e6 else "%.2f ms" % (ns / 1e6)
    print("| %s | %s | %s | %.2fx | %s | %.2fx |" % (size, f(raw), f(ours), raw / ours, f(nc), raw / nc))
fl = rows.get(("mlx-cpu", "lazy_op_floor_1KiB"))
if fl:
    raw = rows[("mpi_allreduce", "all_sum_1KiB")]
    print("\none lazy op without communication (negative of 1 KiB + eval): %s (%.2fx of MPI_Allreduce 1KiB)" % (f(fl), raw / fl))
'

#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/fuzz_ops.c, the API; fuzz_npy.c,
# fuzz_safetensors.c and fuzz_mlxfn.c, the file formats) against a clang build of the
# library instrumented for coverage, AddressSanitizer and UBSan (every report
# fatal), then fuzzes for a fixed time. A crash, sanitizer report, leak or
# timeout fails the run; its input is written to <build dir>/crash-* (turn it
# into a test in test/test_fuzz_regressions.c).
#   fuzz/run.sh [seconds [build dir [target [extra libFuzzer flags...]]]]
# Defaults: 60 seconds, build-test-fuzz/, target "all": ops gets half the
# time, npy, safetensors and mlxfn a sixth each (a named target gets it
# all). New inputs the fuzzer finds go to <build dir>/corpus[_target] (the
# seeds in fuzz/corpus, corpus_npy, corpus_safetensors, corpus_mlxfn are
# only read).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${2:-build-test-fuzz}
target=${3:-all}
shift $(( $# < 3 ? $# : 3 ))
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

if [ ! -d "$dir" ]; then
  # (no MPI: nothing fuzzed talks to other processes)
  CC=clang meson setup "$dir" -Dtests=false -Dbench=false -Db_lundef=false -Dmpi=disabled \
    -Db_sanitize=address,undefined \
    "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    >/dev/null
fi
ninja -C "$dir" -j "$(nproc 2>/dev/null || echo 2)" libmlx-cpu.a >/dev/null

blas=$(pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
build() {
  clang -std=c11 -O1 -g -Iinclude "${san[@]}" -fsanitize=fuzzer \
    "fuzz/fuzz_$1.c" "$dir/libmlx-cpu.a" $(pkg-config --libs sleef kissfft-float) $blas -lm -lpthread \
    -o "$dir/fuzz_$1"
}

# detect_leaks: a leak in one input fails; rss_limit: the library's memory
# limit is 256 MiB, so more than 3 GiB means something escaped it.
run() {
  local name=$1 t=$2 len=$3 seeds=fuzz/corpus corpus=$dir/corpus
  shift 3
  [ "$name" = ops ] || { seeds=fuzz/corpus_$name; corpus=$dir/corpus_$name; }
  build "$name"
  mkdir -p "$corpus"
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$dir/fuzz_$name" -max_total_time="$t" -timeout=20 -rss_limit_mb=3072 -max_len="$len" \
    -print_final_stats=1 -artifact_prefix="$dir/$name-" "$@" "$corpus" "$seeds"
}

case $target in
  all)
    run ops $(( secs / 2 )) 1024 "$@"
    run npy $(( secs / 6 )) 4096 "$@"
    run safetensors $(( secs / 6 )) 4096 "$@"
    run mlxfn $(( secs / 6 )) 16384 "$@" ;;
  ops) run ops "$secs" 1024 "$@" ;;
  npy|safetensors) run "$target" "$secs" 4096 "$@" ;;
  mlxfn) run mlxfn "$secs" 16384 "$@" ;;
  *) echo "unknown fuzz target $target (all, ops, npy, safetensors, mlxfn)" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Builds the libFuzzer harness fuzz/fuzz_ops.c against a clang build of the
# library instrumented for coverage, AddressSanitizer and UBSan (every report
# fatal), then fuzzes for a fixed time. A crash, sanitizer report, leak or
# timeout fails the run; its input is written to <build dir>/crash-* (turn it
# into a test in test/test_fuzz_regressions.c).
#   fuzz/run.sh [seconds [build dir [extra libFuzzer flags...]]]
# Defaults: 60 seconds, build-test-fuzz/. New inputs the fuzzer finds go to
# <build dir>/corpus (the seeds in fuzz/corpus are only read).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${2:-build-test-fuzz}
shift $(( $# < 2 ? $# : 2 ))
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

if [ ! -d "$dir" ]; then
  CC=clang meson setup "$dir" -Dtests=false -Dbench=false -Db_lundef=false \
    -Db_sanitize=address,undefined \
    "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    >/dev/null
fi
ninja -C "$dir" -j "$(nproc 2>/dev/null || echo 2)" libmlx-cpu.a >/dev/null

blas=$(pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
clang -std=c11 -O1 -g -Iinclude "${san[@]}" -fsanitize=fuzzer \
  fuzz/fuzz_ops.c "$dir/libmlx-cpu.a" $(pkg-config --libs sleef) $blas -lm -lpthread \
  -o "$dir/fuzz_ops"

mkdir -p "$dir/corpus"
# detect_leaks: a leak in one input fails; rss_limit: the library's memory
# limit is 256 MiB, so more than 3 GiB means something escaped it.
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$dir/fuzz_ops" -max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 -max_len=1024 \
  -print_final_stats=1 -artifact_prefix="$dir/" "$@" "$dir/corpus" fuzz/corpus

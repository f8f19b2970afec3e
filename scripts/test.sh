#!/usr/bin/env bash
# Builds mlx-cpu and runs its tests.
#   scripts/test.sh        the plain run: gcc and clang builds, every suite
#   scripts/test.sh all    what CI runs: the plain run, then valgrind,
#                          AddressSanitizer+UBSan (gcc), ThreadSanitizer
#                          (clang) builds, and each stage's time
# Installs missing packages first (scripts/install-deps.sh). Build trees go
# to build-test-*/ in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-plain}
case "$mode" in plain|all) ;; *) echo "usage: scripts/test.sh [all]" >&2; exit 2 ;; esac

scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

stage() { # name, then the command
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name"
  "$@"
  echo "=== $name: passed in $((SECONDS - t0)) s"
}

build() { # dir, compiler, extra meson args...
  local dir=$1 compiler=$2; shift 2
  if [ ! -d "$dir" ]; then
    CC=$compiler meson setup "$dir" "$@" >/dev/null
  fi
  ninja -C "$dir" -j "$jobs" >/dev/null
}

plain() { # compiler
  build "build-test-$1" "$1"
  meson test -C "build-test-$1" --print-errorlogs --num-processes "$jobs"
}

memcheck() {
  build build-test-gcc gcc
  meson test -C build-test-gcc --suite c --print-errorlogs --num-processes "$jobs" \
    --timeout-multiplier 10 \
    --wrap='valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=1 --quiet'
}

asan() {
  build build-test-asan gcc -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-test-asan --suite c --print-errorlogs --num-processes "$jobs" --timeout-multiplier 3
}

tsan() {
  build build-test-tsan clang -Db_sanitize=thread -Db_lundef=false -Dbench=false
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    meson test -C build-test-tsan --suite threads --print-errorlogs --num-processes 1 --timeout-multiplier 5
}

stage "gcc build and tests" plain gcc
stage "clang build and tests" plain clang
if [ "$mode" = all ]; then
  stage "valgrind memcheck" memcheck
  stage "AddressSanitizer + UBSan (gcc)" asan
  stage "ThreadSanitizer (clang)" tsan
fi
echo "all stages passed"

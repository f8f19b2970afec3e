#!/usr/bin/env bash
# Builds mlx-cpu and runs its tests.
#   scripts/test.sh        the plain run: gcc and clang builds, every suite
#   scripts/test.sh all    what CI runs: the plain run, then valgrind,
#                          AddressSanitizer+UBSan (gcc), ThreadSanitizer
#                          (clang) builds, the allocation-failure sweeps
#                          under ASan, 60 s of fuzzing, the aarch64 cross
#                          build under qemu, and each stage's time
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

installed() { # a user's program against the installed library, via pkg-config
  local prefix
  prefix=$(mktemp -d)
  meson configure build-test-gcc -Dprefix="$prefix" >/dev/null
  meson install -C build-test-gcc --quiet >/dev/null
  local pc
  pc=$(dirname "$(find "$prefix" -name mlx-cpu.pc | head -n 1)")
  PKG_CONFIG_PATH=$pc cc -std=c11 -Wall -Wextra -Werror examples/tour.c \
    $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs mlx-cpu) -o "$prefix/tour"
  LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name libmlx-cpu.so | head -n 1)") "$prefix/tour" >/dev/null
  rm -rf "$prefix"
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
  # the mpi suite too, with Open MPI's own leaks suppressed; the slow
  # unwinder, since Open MPI's libraries have no frame pointers
  if meson test -C build-test-asan --list 2>/dev/null | grep -q '^mlx-cpu:mpi'; then
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0 \
    LSAN_OPTIONS=suppressions=$PWD/test/mpi-lsan.supp \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C build-test-asan --suite mpi --print-errorlogs --timeout-multiplier 3
  fi
}

# clang's sanitizer runtimes (TSAN, libFuzzer) are a package of their own
clang_runtime() {
  if command -v apt-get >/dev/null; then scripts/install-deps.sh libclang-rt-dev
  elif command -v dnf >/dev/null; then scripts/install-deps.sh compiler-rt
  fi
}

tsan() {
  clang_runtime
  build build-test-tsan clang -Db_sanitize=thread -Db_lundef=false -Dbench=false
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    meson test -C build-test-tsan --suite threads --print-errorlogs --num-processes 1 --timeout-multiplier 5
}

# -- hardening stages (cross/, fuzz/, test/test_fault.c, test/test_deep.c)

# The allocator hook fails each allocation in turn (test/test_fault.c and
# the sweeps in each area's suite, all compiled only with fault injection);
# ASan/LSan report any leak or bad access on those error paths. clang, so
# that suite c also meets clang's UBSan, which checks arithmetic that gcc
# narrows before instrumenting (16-bit products promoted to int).
fault() {
  clang_runtime
  build build-test-fault clang -Dfault_injection=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dbench=false
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-test-fault --suite c --print-errorlogs --num-processes "$jobs" \
    --timeout-multiplier 3
}

# libFuzzer (clang, ASan + UBSan) on fuzz/fuzz_ops.c and the file-format
# harnesses (npy, safetensors, mlxfn) for 60 s in all; a crash,
# leak, timeout or sanitizer report fails the stage (see fuzz/run.sh).
fuzz() {
  clang_runtime
  fuzz/run.sh 60 build-test-fuzz
}

# Cross-build for aarch64 (the NEON kernels) and run suite c under
# qemu-aarch64 through meson's exe_wrapper (cross/aarch64-linux-gnu.ini).
aarch64() {
  if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
    echo "skipped: the aarch64 stage cross-links against Debian's multiarch arm64 -dev"
    echo "packages (OpenBLAS, SLEEF, cmocka); Fedora does not ship them for a cross sysroot"
    return 0
  fi
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  dpkg --print-foreign-architectures | grep -qx arm64 || "${sudo_cmd[@]}" dpkg --add-architecture arm64
  # (not libc6-dev:arm64: it would upgrade unrelated amd64 packages; the
  # toolchain's libc6-dev-arm64-cross is what links)
  scripts/install-deps.sh gcc-aarch64-linux-gnu libc6-dev-arm64-cross pkgconf:arm64 qemu-user \
    libopenblas-dev:arm64 libsleef-dev:arm64 libkissfft-dev:arm64 libcmocka-dev:arm64
  if [ ! -d build-test-aarch64 ]; then
    meson setup build-test-aarch64 --cross-file cross/aarch64-linux-gnu.ini -Dbench=false -Dmpi=disabled >/dev/null
  fi
  ninja -C build-test-aarch64 -j "$jobs" >/dev/null
  # under qemu SLEEF runs ~18x and OpenBLAS ~300x slower than natively
  meson test -C build-test-aarch64 --suite c --print-errorlogs \
    --num-processes "$jobs" --timeout-multiplier 10
}

stage "gcc build and tests" plain gcc
stage "clang build and tests" plain clang
stage "installed headers and pkg-config" installed
if [ "$mode" = all ]; then
  stage "valgrind memcheck" memcheck
  stage "AddressSanitizer + UBSan (gcc)" asan
  stage "ThreadSanitizer (clang)" tsan
  stage "allocation failures, ASan + UBSan (clang)" fault
  stage "libFuzzer, 60 s (clang)" fuzz
  stage "aarch64 cross build, tests under qemu" aarch64
fi
echo "all stages passed"

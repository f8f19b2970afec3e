#!/usr/bin/env bash
# The main job: installs what is missing, builds mlx-cpu and runs the
# example program examples/mlp.c (training a perceptron with
# value_and_grad and compile; examples/tour.c is the other example).
# `scripts/run-example.sh safetensors` runs examples/safetensors.c instead
# (loading and saving named arrays through files, readers and writers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
if [ "${1:-}" = safetensors ]; then
  shift
  exec build/examples/safetensors "${@:-examples/arrays.safetensors}"
fi
exec build/examples/mlp "$@"

#!/usr/bin/env bash
# The main job: installs what is missing, builds mlx-cpu and runs the
# example program examples/mlp.c (training a perceptron with
# value_and_grad and compile; examples/tour.c is the other example).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
exec build/examples/mlp "$@"

#!/usr/bin/env bash
# Writes the benchmark models (models/README.md) as ONNX files with the built graphsub executable.
#   scripts/make_benchmark_models.sh [OUT_DIR] [graphsub models options and names...]
# OUT_DIR defaults to build/benchmark_models; GRAPHSUB_BUILD_DIR names another build folder.
# Examples:
#   scripts/make_benchmark_models.sh                                   every model at its default sizes
#   scripts/make_benchmark_models.sh /tmp/bm --image-size 64 resnet50  one model, smaller
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GRAPHSUB_BUILD_DIR:-$root/build}"
out="${1:-$build/benchmark_models}"
shift $(( $# > 0 ? 1 : 0 ))
graphsub="$build/cmd/graphsub"

if [ ! -x "$graphsub" ]; then
  echo "make_benchmark_models: $graphsub not found; build it first (scripts/setup.sh or cmake --build)" >&2
  exit 1
fi
"$graphsub" models --write "$out" "$@"

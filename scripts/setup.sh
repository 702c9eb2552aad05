#!/usr/bin/env bash
# Installs graphsub's dependencies, builds it, and runs either the demo or the whole test suite.
#   scripts/setup.sh demo   install, build, optimize the shipped model models/grouped_cnn.onnx and time it
#   scripts/setup.sh test   install, build, run every test (ctest, including the ONNX round trip)
set -euo pipefail

mode="${1:-demo}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GRAPHSUB_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"

debian_packages=(
  build-essential cmake pkg-config python3 python3-pip
  libprotobuf-dev protobuf-compiler libz3-dev libssl-dev libcli11-dev libspdlog-dev
  nlohmann-json3-dev catch2 libonnx-testdata libgoogle-perftools-dev
)
# The Python onnx is the release the C++ library is built from (scripts/build_onnx.sh), so the
# node tests it writes use the opsets graphsub's checker knows.
python_packages=(onnx==1.23.2 onnxruntime==1.32.0 numpy)

install_dependencies() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  local missing=()
  for package in "${debian_packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
  fi
  if ! python3 -c "import onnx, onnxruntime, numpy; assert onnx.__version__ == '1.23.2'" >/dev/null 2>&1; then
    python3 -m pip install -q "${python_packages[@]}" || \
      python3 -m pip install -q --break-system-packages "${python_packages[@]}"
  fi
}

build_graphsub() {
  local onnx_prefix
  onnx_prefix="$(bash "$root/scripts/build_onnx.sh" | tail -n 1)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DONNX_DIR="$onnx_prefix/lib/cmake/ONNX"
  cmake --build "$build" -j "$jobs"
}

run_demo() {
  local out="$build/demo"
  mkdir -p "$out"
  "$build/cmd/graphsub" inspect "$root/models/grouped_cnn.onnx"
  "$build/cmd/graphsub" -v optimize "$root/models/grouped_cnn.onnx" -o "$out/grouped_cnn.opt.onnx" \
    --dim N=1 --check 3 --report "$out/report.json"
  echo "wrote $out/grouped_cnn.opt.onnx and $out/report.json"
  "$build/cmd/graphsub" bench "$root/models/grouped_cnn.onnx" "$out/grouped_cnn.opt.onnx" --dim N=1
}

run_tests() {
  (cd "$build" && ctest --output-on-failure -j "$jobs")
}

case "$mode" in
  demo) install_dependencies; build_graphsub; run_demo ;;
  test) install_dependencies; build_graphsub; run_tests ;;
  *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;;
esac

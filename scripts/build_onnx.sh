#!/usr/bin/env bash
# Builds the ONNX C++ library (checker, shape inference, operator schemas) from the source release
# that PyPI serves, once, into a cache folder; prints the install prefix on its last line.
#
#   scripts/build_onnx.sh            build if the cache lacks it, print the prefix
#
# Why: Debian 12's libonnx-dev is ONNX 1.12, which knows opsets up to 17; today's exporters write
# 18 and later. The PyPI source distribution (onnx-X.tar.gz) holds the C++ sources and their CMake
# build, so a fresh machine repeats this with nothing but the package registries. It is built
# against Debian's protobuf (3.21), with a unity build (about 2.5 minutes on 2 cores), and cached in
# ${GRAPHSUB_DEPS_DIR:-~/.cache/graphsub-deps}/onnx-<version>; a second run only prints the prefix.
# ONNX 1.23 needs CMake >= 3.26 and Debian 12 has 3.25, so CMake comes from its PyPI wheel too.
set -euo pipefail

onnx_version="1.23.2"
onnx_url="https://files.pythonhosted.org/packages/3f/62/bc2dfadb63ecf04cb2d65a6b17751863039d36c65de51d6a3128ab35f1e7/onnx-${onnx_version}.tar.gz"
onnx_sha256="008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8"
cmake_wheel_version="3.31.6"

deps="${GRAPHSUB_DEPS_DIR:-$HOME/.cache/graphsub-deps}"
prefix="$deps/onnx-$onnx_version"
jobs="$(nproc 2>/dev/null || echo 2)"

if [ -f "$prefix/lib/cmake/ONNX/ONNXConfig.cmake" ] && [ -f "$prefix/.complete" ]; then
  echo "$prefix"
  exit 0
fi

mkdir -p "$deps"
work="$(mktemp -d "$deps/onnx-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# A CMake new enough for ONNX's CMakeLists (the system's when it is, else the PyPI wheel's).
cmake_bin="cmake"
if ! cmake --version 2>/dev/null | awk 'NR==1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 26)) }'; then
  cmake_dir="$deps/cmake-$cmake_wheel_version"
  if [ ! -x "$cmake_dir/cmake/data/bin/cmake" ]; then
    python3 -m pip install -q --no-deps --target "$cmake_dir" "cmake==$cmake_wheel_version" >&2
  fi
  cmake_bin="$cmake_dir/cmake/data/bin/cmake"
fi

echo "building ONNX $onnx_version from its PyPI source release (a few minutes, once) ..." >&2
python3 - "$onnx_url" "$onnx_sha256" "$work/onnx.tar.gz" <<'EOF'
import hashlib, sys, urllib.request
url, expected, path = sys.argv[1:4]
with urllib.request.urlopen(url, timeout=300) as response:
    data = response.read()
actual = hashlib.sha256(data).hexdigest()
if actual != expected:
    sys.exit(f"{url}: sha256 {actual}, expected {expected}")
with open(path, "wb") as f:
    f.write(data)
EOF
tar -xzf "$work/onnx.tar.gz" -C "$work"
rm -rf "$prefix"
"$cmake_bin" -S "$work/onnx-$onnx_version" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DONNX_ML=ON -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_PYTHON=OFF \
  -DONNX_GEN_PB_TYPE_STUBS=OFF -DONNX_BUILD_TESTS=OFF -DONNX_USE_UNITY_BUILD=ON >&2
"$cmake_bin" --build "$work/build" -j "$jobs" >&2
"$cmake_bin" --install "$work/build" >&2
touch "$prefix/.complete"
echo "$prefix"

#!/usr/bin/env bash
# Builds and runs graphsub's libFuzzer targets (tests/fuzz) with AddressSanitizer (leaks included)
# and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh import [RUNS|SECONDSs] [libFuzzer flags...]   ONNX model bytes: import, export
#   scripts/fuzz.sh rules  [RUNS|SECONDSs] [libFuzzer flags...]   rule-file text: parse, print, parse
#
# `scripts/fuzz.sh import 1000000` runs a million inputs, `scripts/fuzz.sh rules 600s` ten minutes
# (default: 100000 runs). Clang 16 and its fuzzer runtime come from Debian (installed with apt-get
# when missing; $FUZZ_CXX overrides): Debian 12's default clang, 14, rejects lambdas that capture
# structured bindings, which lib/ uses (g++ and clang 16 accept them in C++17 as an extension). The build goes to $GRAPHSUB_FUZZ_BUILD_DIR (default build-fuzz/), the growing corpus to
# <build>/corpus/<target>, crashing inputs to <build>/artifacts/<target>/. The corpus is seeded with
# models/*.onnx and every 8th model of the ONNX node tests (/usr/share/libonnx-testdata), or with
# rules/*.rules. FUZZ_JOBS=N runs N parallel jobs (default 1). A finding stops the run and the
# script exits non-zero; rerun one input with `<build>/tests/fuzz/<target>_fuzzer <file>`.
set -euo pipefail

target="${1:-}"
limit="${2:-100000}"
shift $(( $# < 2 ? $# : 2 ))
case "$target" in
  import) max_len=65536 ;;
  rules) max_len=16384 ;;
  *) echo "usage: scripts/fuzz.sh import|rules [RUNS|SECONDSs] [libFuzzer flags...]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GRAPHSUB_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${FUZZ_JOBS:-1}"
cxx="${FUZZ_CXX:-clang++-16}"

install_clang() {
  local runtime
  runtime="$("$cxx" -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)"
  if [ -f "$runtime" ]; then return; fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q clang-16 libclang-rt-16-dev
}

build_fuzzers() {
  local onnx_prefix
  onnx_prefix="$(bash "$root/scripts/build_onnx.sh" | tail -n 1)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
    -DGRAPHSUB_FUZZ=ON -DGRAPHSUB_BUILD_TESTS=OFF -DGRAPHSUB_WITH_CUDA=OFF \
    -DONNX_DIR="$onnx_prefix/lib/cmake/ONNX" >/dev/null
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${target}_fuzzer"
}

seed_corpus() {
  local seeds="$build/seeds/$target"
  rm -rf "$seeds"
  mkdir -p "$seeds"
  if [ "$target" = rules ]; then
    cp "$root"/rules/*.rules "$seeds/"
    return
  fi
  cp "$root"/models/*.onnx "$seeds/"
  local i=0 model
  for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    [ -f "$model" ] || continue
    if (( i++ % 8 == 0 )); then cp "$model" "$seeds/$(basename "$(dirname "$model")").onnx"; fi
  done
}

run_fuzzer() {
  local corpus="$build/corpus/$target" artifacts="$build/artifacts/$target/"
  local budget parallel=()
  mkdir -p "$corpus" "$artifacts" "$build/logs"
  if [[ "$limit" == *s ]]; then budget="-max_total_time=${limit%s}"; else budget="-runs=$limit"; fi
  # Parallel jobs each run the budget and log to <build>/logs/fuzz-<job>.log.
  if (( jobs > 1 )); then parallel=(-jobs="$jobs" -workers="$jobs"); cd "$build/logs"; fi
  ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}" \
    "$build/tests/fuzz/${target}_fuzzer" "$corpus" "$build/seeds/$target" "$budget" \
    -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 -detect_leaks=1 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "${parallel[@]}" "$@"
}

install_clang
build_fuzzers
seed_corpus
run_fuzzer "$@"

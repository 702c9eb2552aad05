#!/bin/bash
# Packs what a GPU machine without Debian's libraries needs to run graphsub's CUDA build into
# .gpu/ (add "/.gpu/" to .git/info/exclude): the stripped executables, the shared libraries they
# link that such a machine lacks, and the ONNX node tests the GPU check reads. The machine brings
# the driver and the cuBLAS/cuDNN wheels; scripts/gpu_run.sh, run there, finds them.
# Usage: bash scripts/gpu_bundle.sh [BUILD_DIR]   (after building with GRAPHSUB_WITH_CUDA=ON)
set -euo pipefail
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/data/libonnx/node .gpu/data/current/node
cp "$build/cmd/graphsub" "$build/tests/runtime_cuda_gpu_executor_check" .gpu/bin/
strip .gpu/bin/*
for lib in $(ldd "$build/cmd/graphsub" | awk '/=>/ {print $3}'); do
  case $(basename "$lib") in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libgcc_s.so*|libstdc++.so*|libz.so*|libcrypto.so*) ;;
    libcublas*|libcudnn*) ;;  # the machine's wheels provide these (hundreds of MB)
    *) cp -L "$lib" .gpu/lib/ ;;
  esac
done
python3 - "$build" <<'PY'
import os, shutil, sys
build = sys.argv[1]
for lists, data, dst in [("tests/ops/conformance", "/usr/share/libonnx-testdata/data/node", ".gpu/data/libonnx/node"),
                         ("tests/ops/conformance/current", f"{build}/onnx_node_tests/node", ".gpu/data/current/node")]:
    for name in sorted(os.listdir(lists)):
        if not name.endswith(".txt"):
            continue
        for line in open(os.path.join(lists, name)):
            test = line.strip()
            if test and not test.startswith("#"):
                shutil.copytree(os.path.join(data, test), os.path.join(dst, test), dirs_exist_ok=True)
PY
(cd .gpu && tar czf data.tgz data && rm -rf data)
cp scripts/gpu_run.sh .gpu/run.sh
du -sh .gpu

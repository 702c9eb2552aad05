#!/usr/bin/env python3
"""A model over protobuf's 2 GB limit, end to end: written, optimized, read back, compared.

Generates (nothing is committed) a model whose weights, kept as ONNX external data, total more
than 2 GiB: x [1, K] through MatMul layers with [K, K] float weights, a Relu after each, plus a
weight-only Transpose that graphsub folds. Then runs `graphsub optimize` on it (the `cpu` estimate
as target by default: timing a 2 GB model in onnxruntime takes minutes; `--target onnxruntime-cpu`
measures instead), and checks that:

- the written model is split into a .onnx file under 2 GB and its external data file;
- every weight of the written model equals the original's (by SHA-256 of its bytes), the folded
  Transpose's result equal to the transposed original;
- onnxruntime computes the same outputs on both models (a random input).

Not in CI: it needs about 3 x the model size in free disk (input, output, scratch) and a few
minutes; run it by hand: python3 scripts/large_model_check.py --graphsub build/cmd/graphsub
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnxruntime as ort


def build_model(folder, width, layers, seed):
    """The model, saved with external data as folder/large.onnx; returns its path and weights."""
    rng = np.random.default_rng(seed)
    nodes, initializers, weights = [], [], {}
    current = "x"
    for layer in range(layers):
        w = (rng.standard_normal((width, width), dtype=np.float32) / np.sqrt(width)).astype(np.float32)
        name = f"w{layer}"
        weights[name] = w
        initializers.append(numpy_helper.from_array(w, name))
        if layer == layers - 1:
            # A weight-only node: export folds the Transpose into a new initializer.
            nodes.append(helper.make_node("Transpose", [name], [f"{name}_t"], perm=[1, 0]))
            name = f"{name}_t"
        nodes.append(helper.make_node("MatMul", [current, name], [f"mm{layer}"]))
        nodes.append(helper.make_node("Relu", [f"mm{layer}"], [f"y{layer}"]))
        current = f"y{layer}"
    graph = helper.make_graph(
        nodes, "large",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [1, width])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = os.path.join(folder, "large.onnx")
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="large.onnx.data", size_threshold=1024)
    return path, weights


def sha(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def written_weights(path):
    model = onnx.load(path)  # external data loaded from beside the file
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def run(path, x):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", required=True)
    parser.add_argument("--width", type=int, default=14000, help="K: each weight is K x K floats")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--folder", help="scratch folder (default: a temporary one, removed after)")
    args = parser.parse_args()
    folder = args.folder or tempfile.mkdtemp(prefix="graphsub-large-")
    os.makedirs(folder, exist_ok=True)
    failures = []
    try:
        start = time.time()
        path, weights = build_model(folder, args.width, args.layers, seed=0)
        data_bytes = os.path.getsize(path + ".data")
        print(f"wrote {path}: {os.path.getsize(path)} bytes + {data_bytes / 2**30:.2f} GiB external data "
              f"({time.time() - start:.0f} s)")
        if data_bytes <= 2**31:
            failures.append("the generated weights do not pass 2 GiB; raise --width or --layers")
        out = os.path.join(folder, "large.opt.onnx")
        start = time.time()
        result = subprocess.run([args.graphsub, "optimize", path, "-o", out, "--target", args.target],
                                capture_output=True, text=True)
        print(f"graphsub optimize: exit {result.returncode} ({time.time() - start:.0f} s)")
        print(result.stdout.strip())
        if result.returncode != 0:
            print(result.stderr.strip(), file=sys.stderr)
            return 1
        size = os.path.getsize(out)
        data = out + ".data"
        print(f"written: {out} {size} bytes, {data}: "
              f"{os.path.getsize(data) / 2**30 if os.path.exists(data) else 0:.2f} GiB")
        if size >= 2**31:
            failures.append("the written .onnx file is over 2 GiB")
        written = written_weights(out)
        expected = {sha(w) for name, w in weights.items() if name != f"w{args.layers - 1}"}
        expected.add(sha(weights[f"w{args.layers - 1}"].T))
        got = {sha(w) for w in written.values()}
        if got != expected:
            failures.append(f"weights differ: {len(expected - got)} original weights missing from the output")
        else:
            print(f"all {len(expected)} weights equal (the folded Transpose's included)")
        x = np.random.default_rng(1).standard_normal((1, args.width), dtype=np.float32)
        before, after = run(path, x), run(out, x)
        difference = float(np.max(np.abs(before - after)))
        print(f"onnxruntime outputs: max abs difference {difference:.3g}")
        if not np.allclose(before, after, rtol=1e-4, atol=1e-5):
            failures.append(f"outputs differ by up to {difference}")
    finally:
        if not args.folder:
            shutil.rmtree(folder, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    print("large model check:", "failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

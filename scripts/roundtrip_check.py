#!/usr/bin/env python3
"""Round trip of the ONNX test data through `graphsub optimize`, checked by onnxruntime.

For every test model under the given folders of the ONNX test data, run `graphsub optimize` (with
the v100 estimate as target, so that the search's rewrites are written rather than measured and
mostly declined: this checks what rewrites and export compute, not speed) and
compare what onnxruntime computes on the optimized model with the test's expected outputs (the
test's own tolerance: rtol 1e-3, atol 1e-7 as in ONNX's backend tests). Where onnxruntime runs the
original but misses the expected values, the optimized model is compared with the original's
onnxruntime outputs instead. A model whose original onnxruntime cannot run at all is reported as an
exception with its reason, not as a graphsub failure. Exit status 1 when graphsub fails on a model
or the optimized model computes something else.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort

RTOL, ATOL = 1e-3, 1e-7


def read_value(path, type_proto):
    """Reads one test input/output file as the value kind the model declares."""
    with open(path, "rb") as f:
        data = f.read()
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def load_data_sets(test_dir, model):
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    outputs = list(model.graph.output)
    sets = []
    for entry in sorted(os.listdir(test_dir)):
        folder = os.path.join(test_dir, entry)
        if not entry.startswith("test_data_set") or not os.path.isdir(folder):
            continue
        feeds, expected = {}, []
        for i, value in enumerate(inputs):
            path = os.path.join(folder, f"input_{i}.pb")
            if os.path.exists(path):
                feeds[value.name] = read_value(path, value.type)
        for i, value in enumerate(outputs):
            path = os.path.join(folder, f"output_{i}.pb")
            expected.append(read_value(path, value.type) if os.path.exists(path) else None)
        sets.append((feeds, expected))
    return sets


def close(got, want):
    if want is None:
        return True
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(close, got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(close(got[k], want[k]) for k in want)
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc":
        return bool(np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool(np.array_equal(got, want))


def run_model(model_path, data_sets):
    """onnxruntime's outputs for every data set (raises what onnxruntime raises)."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    return [session.run(None, feeds) for feeds, _ in data_sets]


def reproduces(model_path, data_sets, want=None):
    """None when onnxruntime's outputs with this model match `want` (default: the test's expected
    outputs) on every data set, else the reason."""
    try:
        results = run_model(model_path, data_sets)
    except Exception as error:  # onnxruntime raises many exception types
        return " ".join(str(error).split())[:300]
    want = want if want is not None else [expected for _, expected in data_sets]
    for got, expected in zip(results, want):
        for index, (g, w) in enumerate(zip(got, expected)):
            if not close(g, w):
                return f"output {index} differs from the expected values"
    return None


def check_one(graphsub, test_dir, workdir):
    name = os.path.relpath(test_dir, os.path.dirname(os.path.dirname(test_dir)))
    model_path = os.path.join(test_dir, "model.onnx")
    out_path = os.path.join(workdir, name.replace("/", "__") + ".onnx")
    run = subprocess.run([graphsub, "-q", "optimize", model_path, "-o", out_path, "--target", "v100"],
                         capture_output=True, text=True, timeout=600)
    model = onnx.load(model_path, load_external_data=False)
    data_sets = load_data_sets(test_dir, model)
    original = reproduces(model_path, data_sets)
    if run.returncode != 0:
        message = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
        if original is not None:
            return name, "exception", f"graphsub rejected it ({message}); onnxruntime cannot run the original either: {original}"
        return name, "fail", f"graphsub failed: {message}"
    optimized = reproduces(out_path, data_sets)
    if optimized is None:
        os.remove(out_path)
        return name, "pass", ""
    if original is None:
        os.remove(out_path)
        return name, "fail", f"optimized model: {optimized}"
    if original.startswith("output"):
        # onnxruntime runs the original but misses the expected values: the optimized model must
        # then compute what the original computes in onnxruntime.
        same = reproduces(out_path, data_sets, want=run_model(model_path, data_sets))
        os.remove(out_path)
        if same is None:
            return name, "pass", "matches the original in onnxruntime (which misses the test's values)"
        return name, "fail", f"optimized model differs from the original in onnxruntime: {same}"
    os.remove(out_path)
    return name, "exception", f"onnxruntime cannot reproduce the original: {original}"


def test_dirs(root, folders):
    for folder in folders:
        base = os.path.join(root, folder)
        for entry in sorted(os.listdir(base)):
            if os.path.exists(os.path.join(base, entry, "model.onnx")):
                yield os.path.join(base, entry)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", required=True, help="path of the graphsub executable")
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--folders", nargs="+", default=["node", "pytorch-converted", "pytorch-operator", "simple"])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--json", help="write the per-model results here")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as workdir, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(check_one, args.graphsub, d, workdir) for d in test_dirs(args.data, args.folders)]
        for future in futures:
            results.append(future.result())
    counts = {status: sum(1 for r in results if r[1] == status) for status in ("pass", "exception", "fail")}
    for name, status, reason in results:
        if status != "pass":
            print(f"{status.upper():9} {name}: {reason}")
    total = len(results)
    versus_original = sum(1 for r in results if r[1] == "pass" and r[2])
    print(f"round trip: {counts['pass']} passed / {total} total ({versus_original} of them against the "
          f"original's onnxruntime outputs), {counts['exception']} exceptions (onnxruntime cannot run "
          f"the original), {counts['fail']} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"test": n, "status": s, "reason": r} for n, s, r in results], f, indent=1)
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Real PyTorch exports through `graphsub optimize`, as a new user would run them.

Exports torchvision and transformer models with random weights (nothing is downloaded) at the
given opsets with PyTorch's TorchScript exporter (or, with `--exporter dynamo`, once with the dynamo
exporter that torch.onnx.export uses by default), then for each model: runs
`graphsub optimize --target v100 --check 2` (reference executor; the v100 estimate, so that the
search's rewrites are written rather than declined by measurement: this checks what they compute,
scripts/bench_speed.py measures speed), compares the original and the optimized model
in onnxruntime on the same random inputs, and checks that graph input/output names, order and
types are unchanged and that the estimated cost (from `--report`) did not rise. Operators whose
count dropped (merged, fused or eliminated by a rule, or folded) are listed, not failed. Needs torch, torchvision and (for BERT) transformers: not part of CI, because those
packages are several GB; see README.md for the last results. The models and their export come from
torch_models.py.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

from torch_models import ALL_MODELS, EXTRA_MODELS, export


# The original seven: the default set checked (see README.md); --models takes any of the zoo.
DEFAULT_MODELS = ["resnet18", "resnet50", "inception_v3", "squeezenet1_1", "mobilenet_v2", "transformer_encoder",
                  "bert_base"]


def random_feeds(session, dims):
    rng = np.random.default_rng(1)
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in value.shape]
        if "int64" in value.type:
            feeds[value.name] = rng.integers(0, 2 if "mask" in value.name else 1000, shape).astype(np.int64)
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def ort_compare(original, optimized, dims):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    a = ort.InferenceSession(original, options, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(optimized, options, providers=["CPUExecutionProvider"])
    feeds = random_feeds(a, dims)
    worst = 0.0
    for x, y in zip(a.run(None, feeds), b.run(None, feeds)):
        worst = max(worst, float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0)
        if not np.allclose(x, y, rtol=1e-4, atol=1e-5):
            return False, worst
    return True, worst


def interface(model):
    def describe(values):
        return [(v.name, onnx.helper.printable_type(v.type)) for v in values]
    inits = {i.name for i in model.graph.initializer}
    return describe([v for v in model.graph.input if v.name not in inits]), describe(model.graph.output)


def constant_nodes(model):
    """Nodes computable from initializers alone: folding may legitimately remove them."""
    known = {i.name for i in model.graph.initializer}
    folded = set()
    for index, node in enumerate(model.graph.node):
        if node.op_type == "Constant" or all(not i or i in known for i in node.input):
            folded.add(index)
            known.update(node.output)
    return folded


def lost_ops(original, optimized):
    """Operators whose count dropped (other than constants folding removes): what the rules merged."""
    foldable = constant_nodes(original)
    before = collections.Counter(n.op_type for i, n in enumerate(original.graph.node) if i not in foldable)
    after = collections.Counter(n.op_type for n in optimized.graph.node)
    return {op: (count, after[op]) for op, count in before.items() if after[op] < count}


def check(graphsub, path, dims):
    out = path.replace(".onnx", ".opt.onnx")
    report = path.replace(".onnx", ".report.json")
    dim_flags = [flag for name, size in dims.items() for flag in ("--dim", f"{name}={size}")]
    start = time.perf_counter()
    run = subprocess.run([graphsub, "-q", "optimize", path, "-o", out, "--target", "v100", "--check", "2",
                          "--report", report, *dim_flags], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    row = {"model": os.path.basename(path), "seconds": seconds, "graphsub": "ok" if run.returncode == 0 else
           run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"}
    if run.returncode != 0:
        # Without --check, to see whether import/export itself works and compare in onnxruntime.
        plain = subprocess.run([graphsub, "-q", "optimize", path, "-o", out, "--target", "v100"], capture_output=True,
                               text=True)
        if plain.returncode != 0:
            return row
    if run.returncode == 0:
        with open(report) as file:
            search = json.load(file)["search"]
        row.update({"cost_ms": (round(search["cost_before"]["time_ms"], 4), round(search["cost_after"]["time_ms"], 4)),
                    "cost_kept_or_lower": search["cost_after"]["time_ms"] <= search["cost_before"]["time_ms"],
                    "steps": len(search["substitutions"]), "stop": search["stop_reason"]})
    same, worst = ort_compare(path, out, dims)
    original, optimized = onnx.load(path), onnx.load(out)
    row.update({"ort_equal": same, "ort_max_abs": worst, "interface_kept": interface(original) == interface(optimized),
                "nodes": (len(original.graph.node), len(optimized.graph.node)),
                "fewer_ops": lost_ops(original, optimized)})
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", required=True)
    parser.add_argument("--folder", default="/tmp/graphsub_torch_models")
    parser.add_argument("--opsets", type=int, nargs="+", default=[13, 17], help="of the TorchScript exporter")
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    parser.add_argument("--models", nargs="+", default=None, choices=list(ALL_MODELS), metavar="NAME",
                        help="default: the original seven")
    parser.add_argument("--extra", action="store_true",
                        help="torch_models.py's extra architectures (GPT-2, Swin, segmentation, ...) instead")
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    failures = 0
    for name in args.models or (list(EXTRA_MODELS) if args.extra else DEFAULT_MODELS):
        for opset in args.opsets if args.exporter == "torchscript" else [None]:
            try:
                path, dims = export(name, opset, args.folder, args.exporter)
            except Exception as error:  # PyTorch cannot export this model at this opset
                print(f"SKIP model={name} opset={opset} export failed: {' '.join(str(error).split())[:200]}")
                continue
            row = check(args.graphsub, path, dims)
            ok = row.get("graphsub") == "ok" and row.get("ort_equal") and row.get("interface_kept") \
                and row.get("cost_kept_or_lower")
            failures += not ok
            print(("PASS " if ok else "FAIL ") + " ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

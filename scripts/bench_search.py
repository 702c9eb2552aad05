#!/usr/bin/env python3
"""Every benchmark model through every search mode of `graphsub optimize`, side by side.

For each model (models/README.md) and mode it runs `graphsub optimize --target v100` (the papers'
setting: graphs ranked by the analytical V100 estimate, nothing measured) in its own process, and
reads from its --report the estimated cost before and after and the stop reason; the
wall time and the peak resident memory (ru_maxrss of that process) are measured here. Modes:

  backtrack-whole  backtracking on the whole graph (--split-threshold 0) at alpha 1.05: TASO's search
  backtrack        backtracking on the split graph: graphsub's default, MetaFlow's
  sampling-whole   OCGGS's sampling on the whole graph: OCGGS's search
  sampling         sampling on the split graph: what `--search sampling` does
  exhaustive       every reachable graph (whole graph): feasible only where it ends "exhausted"

Prints a table and writes JSON. Options:
  --repeat N       each run is made N times; the table gives the median times and the largest peak
                   (runs that end before their time limit never differ in cost: the search is
                   deterministic)
  --ort-check      onnxruntime runs the original and the optimized model on one seeded random input
                   (after the timing) and the row gives the largest difference of their outputs
  --resnet-blocks  also times the default mode on OCGGS's ResNet of each number of blocks (the
                   scaling check of issue 4)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ["resnet50", "resnext50", "inception_v3", "squeezenet", "nasnet_a", "nasrnn", "bert", "sru",
          "alexnet", "vgg16", "inception_e", "resnet18", "resnet"]
MODES = {
    "backtrack-whole": ["--search", "backtrack", "--split-threshold", "0", "--alpha", "1.05"],
    "backtrack": [],
    "sampling-whole": ["--search", "sampling", "--split-threshold", "0"],
    "sampling": ["--search", "sampling"],
    "exhaustive": ["--search", "exhaustive", "--split-threshold", "0", "--budget", "100000000"],
}


def write_models(graphsub, folder, names, extra=()):
    missing = [n for n in names if not os.path.exists(os.path.join(folder, n + ".onnx"))]
    if missing:
        subprocess.run([graphsub, "-q", "models", "--write", folder, *extra, *missing], check=True)


def onnxruntime_difference(original, optimized):
    """Largest |optimized - original| over every output, both run by onnxruntime on one seeded input
    (symbolic dims taken as 1). Runs in a child process: the parent must stay small, because a
    child's peak memory (ru_maxrss) counts the parent's resident memory at the fork."""
    script = """
import sys
import numpy as np, onnx, onnxruntime as ort
rng = np.random.default_rng(1)
feeds = {}
for value in onnx.load(sys.argv[1], load_external_data=False).graph.input:
    dims = [d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
    feeds[value.name] = rng.uniform(-1, 1, dims).astype(dtype)
options = ort.SessionOptions()
options.log_severity_level = 3
outputs = [ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]).run(None, feeds)
           for path in sys.argv[1:3]]
print(max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(*outputs)))
"""
    done = subprocess.run([sys.executable, "-c", script, original, optimized], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip())


def run_optimize(graphsub, model, flags, time_limit, ort_check=False):
    """Runs one optimize in a child process; returns its report, wall seconds and peak RSS (MB).
    With ort_check the report gains "ort_max_abs_diff", measured after the timing."""
    with tempfile.TemporaryDirectory() as scratch:
        out, report = os.path.join(scratch, "out.onnx"), os.path.join(scratch, "report.json")
        command = [graphsub, "-q", "optimize", model, "-o", out, "--report", report, "--target", "v100",
                   "--time-limit", str(time_limit), *flags]
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        error = child.stderr.read().decode().strip()
        child.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            return {"error": error.splitlines()[-1] if error else f"status {status}"}, seconds, usage.ru_maxrss / 1024
        with open(report) as file:
            result = json.load(file)
        if ort_check:
            result["ort_max_abs_diff"] = onnxruntime_difference(model, out)
        return result, seconds, usage.ru_maxrss / 1024


def measure(graphsub, model_file, name, mode, flags, args):
    """The row of args.repeat runs of one model and mode: median times, largest peak, the first run's
    costs (and its onnxruntime check, with args.ort_check)."""
    repeat = args.repeat
    runs = [row_of(name, mode, *run_optimize(graphsub, model_file, flags, args.time_limit, args.ort_check and k == 0))
            for k in range(repeat)]
    row = runs[0]
    if "error" in row or repeat == 1:
        return row
    row["runs"] = repeat
    row["peak_mb"] = max(r["peak_mb"] for r in runs)
    for key in ("seconds", "search_seconds"):
        row[key] = round(statistics.median(r[key] for r in runs), 2)
    if len({r.get("cost_after_ms") for r in runs}) > 1:
        row["costs_differ"] = sorted(r["cost_after_ms"] for r in runs)
    return row


def row_of(model, mode, report, seconds, peak_mb):
    row = {"model": model, "mode": mode, "seconds": round(seconds, 2), "peak_mb": round(peak_mb)}
    if "error" in report:
        row["error"] = report["error"]
        return row
    search = report["search"]
    before, after = search["cost_before"]["time_ms"], search["cost_after"]["time_ms"]
    row.update({"nodes": report["nodes_before"], "cost_before_ms": round(before, 4), "cost_after_ms": round(after, 4),
                "ratio": round(before / after, 3) if after > 0 else None,
                "search_seconds": round(report["seconds"]["search"], 2), "stop": search["stop_reason"],
                "parts": search["split"]["parts"], "resplit_parts": search["split"].get("resplit_parts", 0),
                "steps": len(search["substitutions"])})
    if "ort_max_abs_diff" in report:
        row["ort_max_abs_diff"] = report["ort_max_abs_diff"]
    return row


def print_header():
    header = f"{'model':14} {'mode':16} {'nodes':>5} {'cost before':>11} {'cost after':>10} {'ratio':>6} " \
             f"{'search s':>8} {'total s':>7} {'peak MB':>7} {'parts':>7}  stop"
    print(header, flush=True)
    print("-" * len(header), flush=True)


def print_row(r):
    if "error" in r:
        print(f"{r['model']:14} {r['mode']:16} error: {r['error']}", flush=True)
        return
    parts = f"{r['parts']}" + (f" ({r['resplit_parts']})" if r["resplit_parts"] else "")  # (parts split again)
    ort_diff = f"  ort diff {r['ort_max_abs_diff']:.1e}" if "ort_max_abs_diff" in r else ""
    print(f"{r['model']:14} {r['mode']:16} {r['nodes']:5} {r['cost_before_ms']:11.4f} {r['cost_after_ms']:10.4f} "
          f"{r['ratio']:6.3f} {r['search_seconds']:8.2f} {r['seconds']:7.2f} {r['peak_mb']:7} {parts:>7}  "
          f"{r['stop']:10}{ort_diff}", flush=True)


def best_by_model(rows):
    """Per model: the best cost any mode found, and how far the default mode is from it."""
    summary = {}
    for r in rows:
        if "error" in r or r["mode"] not in MODES:
            continue
        entry = summary.setdefault(r["model"], {"best_ms": r["cost_after_ms"], "best_mode": r["mode"]})
        if r["cost_after_ms"] < entry["best_ms"]:
            entry.update(best_ms=r["cost_after_ms"], best_mode=r["mode"])
        if r["mode"] == "backtrack":
            entry["default_ms"] = r["cost_after_ms"]
    for entry in summary.values():
        if "default_ms" in entry:
            entry["default_over_best"] = round(entry["default_ms"] / entry["best_ms"] - 1, 4)
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", default="build/cmd/graphsub")
    parser.add_argument("--models-dir", default="build/benchmark_models")
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--time-limit", type=float, default=60, help="seconds per run (graphsub --time-limit)")
    parser.add_argument("--resnet-blocks", type=int, nargs="*", default=[], help="e.g. 8 16 32")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each model and mode (median times)")
    parser.add_argument("--ort-check", action="store_true",
                        help="run each original and optimized model in onnxruntime and report the largest difference")
    parser.add_argument("--json", default="bench_search.json")
    args = parser.parse_args()
    os.makedirs(args.models_dir, exist_ok=True)
    write_models(args.graphsub, args.models_dir, args.models)
    rows = []
    print_header()
    for name in args.models:
        for mode in args.modes:
            rows.append(measure(args.graphsub, os.path.join(args.models_dir, name + ".onnx"), name, mode,
                                MODES[mode], args))
            print_row(rows[-1])
    for blocks in args.resnet_blocks:
        folder = os.path.join(args.models_dir, f"resnet_{blocks}_blocks")
        os.makedirs(folder, exist_ok=True)
        write_models(args.graphsub, folder, ["resnet"], ["--blocks", str(blocks)])
        rows.append(measure(args.graphsub, os.path.join(folder, "resnet.onnx"), f"resnet-{blocks}", "backtrack",
                            [], args))
        print_row(rows[-1])
    summary = best_by_model([r for r in rows if r["model"] in args.models])
    print("\nmodel          best mode         best ms    default ms  default over best")
    for model, entry in summary.items():
        if "default_ms" in entry:
            default = f"{entry['default_ms']:12.4f}  {100 * entry['default_over_best']:6.2f} %"
        else:
            default = f"{'not run':>12}"
        print(f"{model:14} {entry['best_mode']:16} {entry['best_ms']:9.4f} {default}")
    with open(args.json, "w") as file:
        json.dump({"rows": rows, "summary": summary}, file, indent=1)
    print(f"\nwrote {args.json}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

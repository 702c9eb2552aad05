#!/usr/bin/env python3
"""Measured speed of `graphsub optimize` with its defaults, model by model, as a user would see it.

For each model: `graphsub optimize` with the default target (onnxruntime on this CPU), first with
an empty cost cache (cold: it measures what it needs), then again with the cache it left (warm:
it should measure nothing and write the same bytes); then `graphsub bench original optimized`
times both in onnxruntime, alternated run by run, at ORT_ENABLE_ALL and the given threads, and the
speedup is the median of the run-by-run ratios (bench's `speedup`). The optimize wall time and peak memory (ru_maxrss) are
measured here; what the optimizer decided comes from its --report. Last, onnxruntime runs both
models on one seeded input and the row gives the largest difference of their outputs (flagged
DIFFERENT beyond rtol 1e-3, atol 1e-4), next to the largest difference onnxruntime's own graph
optimizations make to the original's outputs (a quantized model's move by quantization steps).

Models: the PyTorch exports of scripts/torch_models.py (needs torch, torchvision and transformers,
several GB: not part of CI; exported once into --folder) and any .onnx files given with --onnx.
Writes a Markdown table (--markdown) and the raw rows as JSON (--json).

  python3 scripts/bench_speed.py --graphsub build/cmd/graphsub --folder /tmp/gs_models
  python3 scripts/bench_speed.py --models resnet50 bert_base --runs 20
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

#: Sizes of the symbolic dims each export needs (the TorchScript exporter bakes some sizes into
#: reshapes: those models run only at the sizes they were traced with).
DIMS = {"transformer_encoder": {"batch": 2, "sequence": 16},
        **{name: {"batch": 1, "sequence": 32}
           for name in ("bert_base", "bert_classifier", "gpt2", "distilbert", "roberta", "t5_encoder",
                        "bert_base_int8", "bert_classifier_int8", "llama_decoder", "qwen2_decoder")},
        "llama_decode_step": {"batch": 1, "sequence": 1, "past_sequence": 127, "total_sequence": 128},
        # optimum_models.py's exports, timed as one decoding step too (optimum's dim names).
        **{name: {"batch_size": 1, "sequence_length": 1, "past_sequence_length": 127,
                  "past_sequence_length + sequence_length": 128}
           for name in ("o_llama", "o_qwen2", "o_mistral", "o_phi3", "o_gemma", "o_gpt2", "o_qwen2_5_0_5b",
                        "o_tinyllama_1_1b")},
        # optimum_models.py's encoders: a sentence of 128 tokens, an image of 224 x 224.
        **{name: {"batch_size": 1, "sequence_length": 128} for name in ("o_minilm_l6", "o_distilbert", "o_roberta")},
        "o_vit": {"batch_size": 1, "num_channels": 3, "height": 224, "width": 224}}


def torch_model_names(chosen, extra=False, quantized=False):
    """The zoo's names (asked of torch_models.py in a child process; its extra set with `extra`,
    its quantized set with `quantized`), or the chosen ones."""
    if chosen is not None:
        return chosen
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_models.py")
    which = ["--extra"] if extra else ["--quantized"] if quantized else []
    return subprocess.run([sys.executable, script, "--list", *which],
                          capture_output=True, text=True, check=True).stdout.split()


def export(name, folder, exporter):
    """The model's ONNX file (TorchScript at opset 17, or dynamo), exported by torch_models.py in a
    child process when missing: this process never imports torch, whose memory every child would
    otherwise start with (ru_maxrss carries over fork and exec)."""
    suffix = "dynamo" if exporter == "dynamo" else "opset17"
    path = os.path.join(folder, f"{name}_{suffix}.onnx")
    if not os.path.exists(path):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_models.py")
        subprocess.run([sys.executable, script, "--folder", folder, "--opset", "17", "--exporter", exporter,
                        "--models", name], check=True)
    return path


def dim_flags(name):
    return [flag for dim, size in DIMS.get(name, {"batch": 1}).items() for flag in ("--dim", f"{dim}={size}")]


def optimize(graphsub, model, out, report, cache_dir, flags):
    """One optimize run in its own process: (exit status, wall seconds, peak MB, stderr tail)."""
    env = dict(os.environ, GRAPHSUB_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    child = subprocess.Popen([graphsub, "-q", "optimize", model, "-o", out, "--report", report, *flags],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    error = child.stderr.read().decode().strip()
    child.stderr.close()
    return os.waitstatus_to_exitcode(status), seconds, usage.ru_maxrss / 1024, error.splitlines()[-1:] or [""]


def bench(graphsub, original, optimized, flags, runs):
    """graphsub bench A B: its JSON figures."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "bench.json")
        done = subprocess.run([graphsub, "-q", "bench", original, optimized, "--runs", str(runs),
                               "--max-seconds", "60", "--json", out, *flags], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        with open(out) as file:
            return json.load(file)


def outputs_difference(original, optimized, name):
    """Largest |optimized - original| over every output, both run by onnxruntime (optimizations
    off) on one seeded random input, whether they are equal within rtol 1e-3, atol 1e-4, and the
    largest difference onnxruntime's own optimizations make to the original's outputs (level all
    against off): a quantized model's outputs move by whole quantization steps either way."""
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    a = ort.InferenceSession(original, options, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(optimized, options, providers=["CPUExecutionProvider"])
    c = ort.InferenceSession(original, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    sizes = DIMS.get(name, {"batch": 1})
    feeds = {}
    for value in a.get_inputs():
        shape = [d if isinstance(d, int) else sizes.get(d, 1) for d in value.shape]
        feeds[value.name] = (rng.integers(0, 2 if "mask" in value.name or "token_type" in value.name else 1000, shape).astype(np.int64)
                             if "int64" in value.type else rng.standard_normal(shape).astype(np.float32))
    worst, equal, own = 0.0, True, 0.0
    for x, y, z in zip(a.run(None, feeds), b.run(None, feeds), c.run(None, feeds)):
        if x.size:
            worst = max(worst, float(np.max(np.abs(x.astype(np.float64) - y))))
            equal = equal and bool(np.allclose(y, x, rtol=1e-3, atol=1e-4))
            own = max(own, float(np.max(np.abs(x.astype(np.float64) - z))))
    return worst, equal, own


def measure(graphsub, name, model, args):
    """The row of one model: decisions, optimize times (cold, warm), memory, measured speedup."""
    flags = dim_flags(name) + ["--ort-threads", str(args.threads)]
    with tempfile.TemporaryDirectory() as scratch:
        cache = os.path.join(scratch, "cache")
        out, again = os.path.join(scratch, "out.onnx"), os.path.join(scratch, "again.onnx")
        report = os.path.join(scratch, "report.json")
        status, cold, peak, error = optimize(graphsub, model, out, report, cache, flags)
        if status != 0:
            return {"model": name, "error": error[0]}
        with open(report) as file:
            first = json.load(file)
        status, warm, _, error = optimize(graphsub, model, again, report, cache, flags)
        with open(report) as file:
            second = json.load(file)
        timed = bench(graphsub, model, out, flags, args.runs)
        worst, equal, own = outputs_difference(model, out, name)
        a, b = timed["models"]
        result = first.get("result", {})
        return {
            "model": name,
            "written": result.get("written"),
            "substitutions": len(first["search"]["substitutions"]),
            "narrowing_rewrites": first.get("narrowing", {}).get("rewrites", 0),
            "optimize_cold_s": round(cold, 2),
            "optimize_warm_s": round(warm, 2),
            # Where the cold run's time went (the report's "seconds": search, guard, layout forms, ...).
            "cold_phases_s": {phase: round(seconds, 1) for phase, seconds in first.get("seconds", {}).items()},
            "warm_measured": second.get("measurement", {}).get("node_signatures_measured", 0)
            + second.get("measurement", {}).get("comparisons_measured", 0),
            "warm_identical": status == 0 and open(out, "rb").read() == open(again, "rb").read(),
            "peak_mb": round(peak),
            "original_ms": round(a["median_ms"], 3),
            "optimized_ms": round(b["median_ms"], 3),
            "original_p90_ms": round(a["p90_ms"], 3),
            "optimized_p90_ms": round(b["p90_ms"], 3),
            "runs": min(a["runs"], b["runs"]),
            "speedup": round(timed["speedup"], 3),
            "ratio_of_medians": round(timed["ratio_of_medians"], 4),
            "copied_input": result.get("copied_input"),
            "guard_speedup": round(result["measured_speedup"], 3) if "measured_speedup" in result else None,
            "ort_max_abs_diff": worst,
            "ort_equal": equal,
            "ort_own_max_abs_diff": own,
        }


def markdown(rows, environment):
    lines = [f"Measured {environment}.", "",
             "| model | written | substitutions | original ms (p90) | optimized ms (p90) | speedup | optimize cold / warm s | "
             "cold search / guard / layout forms s | warm run measured | peak MB | outputs max abs diff | "
             "onnxruntime's own diff |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['model']} | error: {row['error']} | | | | | | | | | | |")
            continue
        written = "input (copied)" if row["copied_input"] else row["written"]
        narrowed = f" + {row['narrowing_rewrites']} narrowing" if row.get("narrowing_rewrites") else ""
        phases = " / ".join(str(row.get("cold_phases_s", {}).get(phase, 0)) for phase in ("search", "guard", "layout forms"))
        lines.append(f"| {row['model']} | {written} | {row['substitutions']}{narrowed} | "
                     f"{row['original_ms']} ({row['original_p90_ms']}) | {row['optimized_ms']} ({row['optimized_p90_ms']}) | "
                     f"{row['speedup']:.3f}x | {row['optimize_cold_s']} / {row['optimize_warm_s']} | {phases} | "
                     f"{row['warm_measured']} | {row['peak_mb']} | {row['ort_max_abs_diff']:.2g}"
                     f"{'' if row['ort_equal'] else ' DIFFERENT'} | {row['ort_own_max_abs_diff']:.2g} |")
    speedups = [row["speedup"] for row in rows if "speedup" in row]
    if speedups:
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        lines += ["", f"Geometric mean speedup over {len(speedups)} models: {geomean:.3f}x; "
                      f"lowest {min(speedups):.3f}x, highest {max(speedups):.3f}x."]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", default="build/cmd/graphsub")
    parser.add_argument("--folder", default="/tmp/graphsub_torch_models", help="where the exports are kept")
    parser.add_argument("--models", nargs="*", default=None,
                        help="names from scripts/torch_models.py (default: all; none with an empty list)")
    parser.add_argument("--extra", action="store_true",
                        help="torch_models.py's extra architectures (GPT-2, Swin, segmentation, ...) instead")
    parser.add_argument("--quantized", action="store_true",
                        help="torch_models.py's int8 forms of zoo models (dynamic BERT, QDQ ResNet-50, ...) instead")
    parser.add_argument("--onnx", nargs="*", default=[], help="further ONNX files")
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript",
                        help="which of torch's ONNX exporters writes the models (torch_models.py)")
    parser.add_argument("--runs", type=int, default=10, help="alternated runs of each model at least (bench --runs)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    parser.add_argument("--json", default="bench_speed.json")
    parser.add_argument("--markdown", default="bench_speed.md")
    args = parser.parse_args()
    graphsub = shutil.which(args.graphsub) or os.path.abspath(args.graphsub)
    models = [(name, export(name, args.folder, args.exporter)) for name in torch_model_names(args.models, args.extra, args.quantized)]
    models += [(os.path.splitext(os.path.basename(path))[0], path) for path in args.onnx]
    rows = []
    for name, path in models:
        row = measure(graphsub, name, path, args)
        rows.append(row)
        print(json.dumps(row), flush=True)
    import onnxruntime
    environment = (f"{time.strftime('%Y-%m-%d')}, onnxruntime {onnxruntime.__version__}, {args.threads} intra-op "
                   f"thread(s), ORT_ENABLE_ALL on both sides, medians of at least {args.runs} alternated runs")
    table = markdown(rows, environment)
    print(table)
    with open(args.markdown, "w") as file:
        file.write(table + "\n")
    with open(args.json, "w") as file:
        json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The optimizer with hand-written rules, with generated rules, and with both, side by side (issue 15).

For each model and rule set it runs `graphsub optimize` in its own process and reads from the
--report what the search found: the cost before and after (estimated by the analytical model for
--target v100, the papers' setting; measured in onnxruntime for --target onnxruntime-cpu, where
the row also gives `graphsub bench original optimized`, A/B alternated), the optimize wall time,
and which generated rules the written graph used. Rule sets:

  hand       the shipped set (the default of optimize)
  generated  the proved rules of the --generated file only
  both       the shipped files and the --generated file

Only proved rules are searched with (no --allow-unverified): prove the file first with
`graphsub verify-rules FILE --write`. The benchmark models are written by `graphsub models`.

  python3 scripts/bench_rules.py --generated generated.rules
  python3 scripts/bench_rules.py --generated generated.rules --target onnxruntime-cpu --models nasnet_a squeezenet
"""
import argparse
import collections
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_speed import bench, optimize  # noqa: E402  (scripts/ is not a package)

MODELS = ["nasnet_a", "inception_e", "inception_v3", "squeezenet", "resnet50", "resnext50", "bert", "nasrnn", "sru"]
SETS = ["hand", "generated", "both"]


def shipped_rule_files(root):
    return sorted(f for f in glob.glob(os.path.join(root, "rules", "*.rules"))
                  if not f.endswith("axioms.rules"))


def rule_flags(rule_set, generated, root):
    if rule_set == "hand":
        return []
    files = ([] if rule_set == "generated" else shipped_rule_files(root)) + [generated]
    return [flag for f in files for flag in ("--rules", f)]


def row_of(model, rule_set, report, seconds, peak_mb):
    search = report["search"]
    before, after = search["cost_before"]["time_ms"], search["cost_after"]["time_ms"]
    used = collections.Counter(s["rule"] for s in search["substitutions"] if s["rule"].startswith("gen-"))
    return {"model": model, "rules": rule_set, "searched_rules": report["rules"]["searched"],
            "cost_basis": search["cost_basis"], "cost_before_ms": round(before, 4), "cost_after_ms": round(after, 4),
            "ratio": round(before / after, 3) if after > 0 else None, "steps": len(search["substitutions"]),
            "generated_used": dict(sorted(used.items())), "written": report["result"]["written"],
            "seconds": round(seconds, 2), "peak_mb": round(peak_mb)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphsub", default="build/cmd/graphsub")
    parser.add_argument("--generated", required=True, help="rule file of generate-rules, proved (verify-rules --write)")
    parser.add_argument("--models-dir", default="build/benchmark_models")
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--sets", nargs="+", default=SETS, choices=SETS)
    parser.add_argument("--target", default="v100", help="optimize --target (v100: estimated; onnxruntime-cpu: measured)")
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--runs", type=int, default=10, help="bench runs of each model (measured target)")
    parser.add_argument("--json", default="bench_rules.json")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graphsub = os.path.abspath(args.graphsub)
    os.makedirs(args.models_dir, exist_ok=True)
    missing = [m for m in args.models if not os.path.exists(os.path.join(args.models_dir, m + ".onnx"))]
    if missing:
        import subprocess
        subprocess.run([graphsub, "-q", "models", "--write", args.models_dir, *missing], check=True)
    measured = args.target == "onnxruntime-cpu"
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        cache = os.path.join(scratch, "cache")  # one cache for every set: each signature measured once
        for model in args.models:
            path = os.path.join(args.models_dir, model + ".onnx")
            for rule_set in args.sets:
                out, report = os.path.join(scratch, "out.onnx"), os.path.join(scratch, "report.json")
                flags = ["--target", args.target, "--time-limit", str(args.time_limit),
                         *rule_flags(rule_set, args.generated, root)]
                status, seconds, peak, error = optimize(graphsub, path, out, report, cache, flags)
                if status != 0:
                    row = {"model": model, "rules": rule_set, "error": error[0]}
                else:
                    with open(report) as file:
                        row = row_of(model, rule_set, json.load(file), seconds, peak)
                    if measured:
                        timed = bench(graphsub, path, out, [], args.runs)
                        row["bench_speedup"] = round(timed["speedup"], 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"\n{'model':13} {'rules':9} {'searched':>8} {'before ms':>10} {'after ms':>10} {'ratio':>6} "
          f"{'bench':>6} {'opt s':>6}  generated rules used")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:13} {r['rules']:9} error: {r['error']}")
            continue
        used = ", ".join(f"{name} x{n}" for name, n in r["generated_used"].items()) or "-"
        bench_text = f"{r['bench_speedup']:6.3f}" if "bench_speedup" in r else f"{'':6}"
        print(f"{r['model']:13} {r['rules']:9} {r['searched_rules']:8} {r['cost_before_ms']:10.4f} "
              f"{r['cost_after_ms']:10.4f} {r['ratio']:6.3f} {bench_text} {r['seconds']:6.2f}  {used}")
    with open(args.json, "w") as file:
        json.dump(rows, file, indent=1)
    print(f"\nwrote {args.json} ({rows[0].get('cost_basis', '') if rows else ''})")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

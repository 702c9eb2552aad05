#!/usr/bin/env python3
"""The onnxruntime worker's stopping rule for paired timings (lib/profile/ort_worker.py), on
synthetic run times: decided comparisons stop, and so does one that the runs left before the
limits cannot turn into a gain; one that still can goes on. Run by ctest; exits 1 on a failure."""
import importlib.util
import math
import sys

import numpy as np

spec = importlib.util.spec_from_file_location("ort_worker", sys.argv[1])
worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worker)  # defines the functions; main() runs only as a script

REQUEST = {"min_runs": 10, "rel_error": 0.0, "decide_at": 0.99, "max_runs": 400, "max_seconds": 30.0}
failures = []


def paired(ratio, spread, runs, seed):
    """An original's times and a candidate's whose run-by-run log ratios to them have median
    log(ratio) exactly and spread about `spread` (normal draws, centred on their median), the
    original's own times disturbed too."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, spread, runs)
    logs = math.log(ratio) + noise - np.median(noise)
    original = 100.0 * np.exp(rng.normal(0.0, spread, runs))
    return [list(original), list(original * np.exp(logs))]


def expect(name, got, want):
    if got != want:
        failures.append(f"{name}: {got}, expected {want}")


# A copy of the original, ratios spreading 5 %: after 30 rounds its median is within two
# standard errors of 0.99, so it is not decided either way, and with no limit in sight it runs on.
copy = paired(1.0, 0.05, 30, seed=1)
expect("a copy, undecided, no limit", worker.stable_ratios(copy, REQUEST), False)
# With 40 rounds left at most, a gain would have to reach about 2 %: not in reach of a median at 1.
expect("a copy, the limit near", worker.stable_ratios(copy, REQUEST, runs_at_limit=40), True)
# A candidate 3 % faster at the same spread is not decided yet, but could be within the limit.
gain = paired(0.97, 0.05, 30, seed=2)
expect("a 3 % gain, the limit near", worker.stable_ratios(gain, REQUEST, runs_at_limit=40), False)
# A candidate clearly faster or slower is decided whatever the limit.
expect("a 20 % gain", worker.stable_ratios(paired(0.8, 0.02, 30, seed=3), REQUEST), True)
expect("20 % slower", worker.stable_ratios(paired(1.2, 0.02, 30, seed=4), REQUEST), True)
# Without decide_at (a plain timing to a precision), the limits change nothing.
plain = dict(REQUEST, decide_at=0)
expect("a copy, no decide_at", worker.stable_ratios(copy, plain, runs_at_limit=40), False)
# The rounds at the limits, at the pace so far.
expect("rounds at the time limit", worker.runs_at_limit(20, 10.0, REQUEST), 60)
expect("rounds at max_runs", worker.runs_at_limit(20, 0.1, REQUEST), 400)

for failure in failures:
    print("FAILED:", failure)
print(f"{8 - len(failures)} of 8 checks passed")
sys.exit(1 if failures else 0)

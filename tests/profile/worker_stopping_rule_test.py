#!/usr/bin/env python3
"""The onnxruntime worker's stopping rule for paired timings (lib/profile/ort_worker.py), on
synthetic run times: decided comparisons stop, and so does one that the runs left before the
limits cannot turn into a gain; one that still can goes on. On fake sessions with a fake clock:
a settled candidate leaves the rounds and the later blocks, and a large model's warm-up stops at
"warmup_seconds"; a timing goes on from prior runs. The timing inputs' cache. Which sessions share
one thread pool. Run by ctest; exits 1 on a failure."""
import importlib.util
import math
import sys

import numpy as np

spec = importlib.util.spec_from_file_location("ort_worker", sys.argv[1])
worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worker)  # defines the functions; main() runs only as a script

REQUEST = {"min_runs": 10, "rel_error": 0.0, "decide_at": 0.99, "max_runs": 400, "max_seconds": 30.0}
failures = []
checks = []  # every check made, passed or not


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
    checks.append(name)
    if got != want:
        failures.append(f"{name}: {got}, expected {want}")


# A copy of the original, ratios spreading 5 %: after 30 rounds its median is within two
# standard errors of 0.99, so it is not decided either way, and with no limit in sight it runs on.
copy = paired(1.0, 0.05, 30, seed=1)
expect("a copy, undecided, no limit", worker.settled_ratio(*copy, REQUEST), False)
# With 40 rounds left at most, a gain would have to reach about 2 %: not in reach of a median at 1.
expect("a copy, the limit near", worker.settled_ratio(*copy, REQUEST, runs_at_limit=40), True)
# A candidate 3 % faster at the same spread is not decided yet, but could be within the limit.
gain = paired(0.97, 0.05, 30, seed=2)
expect("a 3 % gain, the limit near", worker.settled_ratio(*gain, REQUEST, runs_at_limit=40), False)
# On a noisy machine (ratios spreading 16 %) a candidate whose 24 first rounds put its median at
# 1.02 may still be 6 % faster: where the rounds up to the limit are cheap, the median's own error
# counts, and it times on; where they are not, it stops as before.
noisy = paired(1.02, 0.16, 24, seed=5)
expect("a noisy median above 1, cheap rounds left", worker.settled_ratio(*noisy, REQUEST, runs_at_limit=100, cheap=True),
       False)
expect("a noisy median above 1, costly rounds left", worker.settled_ratio(*noisy, REQUEST, runs_at_limit=100), True)
# A candidate clearly faster or slower is decided whatever the limit.
expect("a 20 % gain", worker.settled_ratio(*paired(0.8, 0.02, 30, seed=3), REQUEST), True)
expect("20 % slower", worker.settled_ratio(*paired(1.2, 0.02, 30, seed=4), REQUEST), True)
# Without decide_at (a plain timing to a precision), the limits change nothing.
plain = dict(REQUEST, decide_at=0)
expect("a copy, no decide_at", worker.settled_ratio(*copy, plain, runs_at_limit=40), False)
# The rounds at the limits, at the pace so far.
expect("rounds at the time limit", worker.runs_at_limit(20, 10.0, REQUEST), 60)
expect("rounds at max_runs", worker.runs_at_limit(20, 0.1, REQUEST), 400)



class Clock:
    """The worker's clock, advanced only by the fake sessions' runs."""

    def __init__(self):
        self.seconds = 0.0

    def perf_counter(self):
        return self.seconds

    def perf_counter_ns(self):
        return int(round(self.seconds * 1e9))


class FakeSession:
    """A model whose runs take the milliseconds `times` draws, counted."""

    def __init__(self, clock, times):
        self.clock, self.times, self.runs = clock, times, 0

    def get_inputs(self):
        return []

    def run(self, outputs, feed):
        self.runs += 1
        self.clock.seconds += self.times() / 1000.0


def fake_worker(models):
    """time_models on fake sessions: `models` maps a path to a function drawing its run's ms.
    Returns the sessions made, by path, to count their runs."""
    clock = Clock()
    made = {}
    worker.time = clock

    def session(path, request):
        made.setdefault(path, []).append(FakeSession(clock, models[path]))
        return made[path][-1]

    worker.session = session
    return made


# Racing: the input, a candidate 20 % faster (settled at the first check) and one 4 % faster
# (settled after 39 rounds at this seed), timed in one block. The first leaves the rounds once it is
# settled; its runs pair with the input's first rounds; the others run on.
rng = np.random.default_rng(0)
fake_worker({"input": lambda: 10.0 * math.exp(rng.normal(0, 0.02)),
             "fast": lambda: 8.0 * math.exp(rng.normal(0, 0.02)),
             "slight": lambda: 9.6 * math.exp(rng.normal(0, 0.05))})
RACE = dict(REQUEST, models=["input", "fast", "slight"], paired=True, sessions=1, warmup=3, dims={})
timed = worker.time_models(RACE)["samples_ms"]
expect("the settled candidate leaves the rounds", len(timed[1]) < len(timed[2]), True)
expect("it ran the rounds its rule needed", len(timed[1]), 10)
expect("the undecided one ran as many rounds as the input", len(timed[2]), len(timed[0]))
expect("the undecided one settled", worker.settled_ratio(timed[0], timed[2], RACE), True)
# Over blocks of sessions: a settled candidate gets no session in the blocks after.
rng = np.random.default_rng(0)
made = fake_worker({"input": lambda: 10.0 * math.exp(rng.normal(0, 0.02)),
                    "fast": lambda: 8.0 * math.exp(rng.normal(0, 0.02)),
                    "slight": lambda: 9.6 * math.exp(rng.normal(0, 0.05))})
timed = worker.time_models(dict(RACE, sessions=4))["samples_ms"]
expect("sessions of the settled one", len(made["fast"]), 4)
expect("sessions of the others", len(made["slight"]) > 4 and len(made["slight"]) == len(made["input"]), True)

# Warm-up: three runs, or one of a 300 ms model when warmup_seconds is a quarter of a second.
for bound, want in ((0, 3), (0.25, 1)):
    made = fake_worker({"big": lambda: 300.0})
    worker.time_models(dict(REQUEST, models=["big"], sessions=1, warmup=3, warmup_seconds=bound,
                            min_runs=2, rel_error=1.0, abs_error_ms=0.0, dims={}))
    session_ = made["big"][0]
    expect(f"warm-up runs with warmup_seconds {bound}", session_.runs - 2, want)

# Prior runs: a timing goes on from them. 40 earlier rounds already settle a candidate 20 % faster,
# so one more round does (10 without them, min_runs); the answer opens with the prior runs.
rng = np.random.default_rng(1)
fake_worker({"input": lambda: 10.0 * math.exp(rng.normal(0, 0.02)),
             "fast": lambda: 8.0 * math.exp(rng.normal(0, 0.02))})
prior = [[10.0 * math.exp(rng.normal(0, 0.02)) for _ in range(40)]]
prior.append([0.8 * x * math.exp(rng.normal(0, 0.02)) for x in prior[0]])
PRIOR = dict(RACE, models=["input", "fast"], prior_ms=prior)
timed = worker.time_models(PRIOR)["samples_ms"]
expect("rounds after 40 settling prior ones", len(timed[0]), 41)
expect("the answer opens with the prior runs", timed[0][:40] == prior[0] and timed[1][:40] == prior[1], True)

# The timing inputs: drawn once per seed and input types, the values a fresh draw gives; the least
# recently used dropped beyond the cache's capacity.
class Input:
    def __init__(self, name, shape):
        self.name, self.type, self.shape = name, "tensor(float)", shape


class InputSession:
    def __init__(self, *inputs):
        self.inputs = list(inputs)

    def get_inputs(self):
        return self.inputs


a = InputSession(Input("x", [1, "N", 8]), Input("y", [3]))
b = InputSession(Input("other", [1, 2, 8]), Input("names", [3]))
request = {"seed": 5, "dims": {"N": 2}}
cache = worker.FeedCache(capacity=100)  # bytes: a's 76, then 20 and 24 more
first = cache.feeds(a, request)
fresh = worker.feeds(a, request, np.random.default_rng(5))
expect("cached inputs are a fresh draw's", all(np.array_equal(first[k], fresh[k]) for k in fresh), True)
expect("another session of the same input types shares them", cache.feeds(b, request)["other"] is first["x"], True)
cache.feeds(InputSession(Input("z", [5])), request)
cache.feeds(InputSession(Input("w", [6])), request)
expect("the oldest dropped beyond the capacity", cache.feeds(a, request)["x"] is first["x"], False)

# The check's inputs: an integer input named in index_bounds is drawn below its bound.
ids, kinds = Input("ids", [64]), Input("kinds", [64])
ids.type = kinds.type = "tensor(int64)"
drawn = worker.feeds(InputSession(ids, kinds), {"index_bounds": {"kinds": 2}}, np.random.default_rng(0),
                     worker.check_values)
expect("an index of a table of 2 is 0 or 1", set(drawn["kinds"].tolist()), {0, 1})
expect("other integers in [0, 4)", set(drawn["ids"].tolist()), {0, 1, 2, 3})

# Threads: sessions of more than one thread share one pool, made before the first session, of the
# first such request's size; another count after it is refused (graphsub starts a new worker). (This
# script makes no real session, so the pool can still be made here.)
expect("one thread: a pool per session", worker.shares_pool(1), False)
expect("two threads before any session: the shared pool", worker.shares_pool(2), True)
expect("two threads again: the same pool", worker.shares_pool(2), True)
options = worker.session_options({"threads": 2, "level": "all"})
expect("a shared-pool session has no threads of its own", options.use_per_session_threads, False)
for other in (1, 3):
    try:
        worker.shares_pool(other)
        expect(f"{other} threads once the pool has 2: refused", "served", "refused")
    except RuntimeError as error:
        expect(f"{other} threads once the pool has 2: refused", "need a new worker" in str(error), True)
fresh_worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fresh_worker)
fresh_worker.POOL["sessions_made"] = True
expect("no shared pool once a session was made", fresh_worker.shares_pool(2), False)

# Seconds of runs only (bench): sessions that take 10 s each to make, runs 0.2 s. A 30 s bound on
# the whole time stops in the first round of the second block (7 rounds: blocks of 6, the second's
# sessions made at 23 s); on the runs' own time, the four first blocks run (24 rounds) and the rule
# stops there.
for runs_only, want in ((False, 7), (True, 24)):
    clock = Clock()
    worker.time = clock

    def slow_session(path, request, clock=clock):
        clock.seconds += 10.0
        return FakeSession(clock, lambda: 200.0)

    worker.session = slow_session
    timed = worker.time_models(dict(REQUEST, models=["a", "b"], paired=True, sessions=4, warmup=1, dims={},
                                    min_runs=20, rel_error=0.5, decide_at=0, runs_only_seconds=runs_only))
    expect(f"runs with runs_only_seconds {runs_only}", len(timed["samples_ms"][0]), want)

# Memory: a fake machine where every live session holds 1 GiB. A session is made while the memory
# free is at least 1.25 times the largest session so far plus 256 MiB (1.5 GiB here).
GIB = 1 << 30


class Memory:
    def __init__(self, total):
        self.total, self.live, self.most = total, 0, 0


class SizedSession(FakeSession):
    """A fake session holding 1 GiB of the fake machine's memory while it lives."""

    def __init__(self, clock, times, memory):
        super().__init__(clock, times)
        self.memory = memory
        memory.live += 1
        memory.most = max(memory.most, memory.live)

    def __del__(self):
        self.memory.live -= 1


def memory_worker(models, total):
    clock = Clock()
    memory = Memory(total)
    worker.time = clock
    worker.session = lambda path, request: SizedSession(clock, models[path], memory)
    worker.rss_bytes = lambda: memory.live * GIB
    worker.free_bytes = lambda: memory.total - memory.live * GIB
    return memory


real_rss, real_free = worker.rss_bytes, worker.free_bytes
THREE = dict(RACE, models=["input", "fast", "slight"], sessions=2)
FASTER = {"input": lambda: 10.0, "fast": lambda: 8.0, "slight": lambda: 9.6}
memory = memory_worker(FASTER, 10 * GIB)
answer = worker.time_models(THREE)
expect("three that fit are made side by side", (memory.most, "one_at_a_time" in answer), (3, False))
memory = memory_worker(FASTER, 3 * GIB)
try:
    worker.time_models(THREE)
    expect("two fit but not three: an error", "timed", "an error")
except RuntimeError as error:
    expect("two fit but not three: an error", "3 sessions do not fit in the memory free" in str(error), True)
expect("no session left alive after it", memory.live, 0)
memory = memory_worker(FASTER, 2 * GIB)
answer = worker.time_models(dict(THREE, models=["input", "fast"], sessions=1))
timed = answer["samples_ms"]
expect("one at a time: never two sessions alive", memory.most, 1)
expect("one at a time: said so", answer.get("one_at_a_time"), {"session_bytes": GIB, "free_bytes": GIB})
expect("one at a time: as many runs of each, paired", len(timed[0]) == len(timed[1]) >= 10, True)
expect("one at a time: the candidate's ratio", float(np.median(np.array(timed[1]) / np.array(timed[0]))), 0.8)
# A session that reuses memory an earlier one freed grows the process by nothing: the size its
# model took before still counts.
memory = memory_worker(FASTER, 2 * GIB)
worker.rss_bytes = lambda: 0
answer = worker.time_models(dict(THREE, models=["input", "fast"], sessions=1))
expect("the size a model took before still counts", (memory.most, "one_at_a_time" in answer), (1, True))
worker.LARGEST_SESSION.clear()
worker.rss_bytes, worker.free_bytes = real_rss, real_free
expect("the worker reads this machine's free memory", (worker.free_bytes() or 0) > 0, True)

for failure in failures:
    print("FAILED:", failure)
print(f"{len(checks) - len(failures)} of {len(checks)} checks passed")
sys.exit(1 if failures else 0)

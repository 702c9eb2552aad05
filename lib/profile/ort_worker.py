"""graphsub's onnxruntime worker: times ONNX models in onnxruntime on the CPU, speaking JSON lines.

graphsub (lib/profile/ort_worker.cc) writes this text to a temporary file, starts python3 on it and
keeps it for the whole run. Each request is one JSON object on a line of stdin; each answer one JSON object on a
line of stdout (nothing else is ever printed there). Any failure answers {"ok": false, "error": ...}
and the worker goes on with the next request.

  {"cmd": "hello"}
    -> {"ok": true, "onnxruntime": "1.23.2", "cpu": "<model name>", "python": "3.11.7"}
  {"cmd": "time", "models": [path, ...], "threads": 1, "level": "all", "dims": {"N": 8},
   "seed": 0, "warmup": 3, "warmup_seconds": 0 (optional), "min_runs": 10, "max_runs": 100,
   "max_seconds": 5.0, "rel_error": 0.01, "abs_error_ms": 0.0005, "paired": false,
   "prior_ms": [[...], ...] (optional)}
    -> {"ok": true, "samples_ms": [[...], ...]}   (one list of run times per model, in order;
        with "one_at_a_time": {"session_bytes": ..., "free_bytes": ...} where the models did
        not fit in memory together: see "Memory")

  {"cmd": "profile", "models": [path, ...], "threads": 1, "level": "all", "dims": {}, "seed": 0,
   "warmup": 3, "runs": 10}
    -> {"ok": true, "by_op": [{"Conv": [ms, nodes, flops], ...}, ...]}   (one map per model, in order)

  {"cmd": "compare", "models": [reference, candidate], "threads": 1, "level": "all", "dims": {},
   "seed": 0, "samples": 3, "atol": 1e-5, "rtol": 1e-4, "reference_level": "disabled" (optional),
   "index_bounds": {"token_type_ids": 2} (optional)}
    -> {"ok": true, "outputs": [{"name": ..., "max_abs_error": ..., "max_rel_error": ..., "passed": ...}]}

  {"cmd": "observe", "models": [path], "threads": 1, "level": "disabled", "dims": {}, "seed": 0,
   "max_elements": 64}
    -> {"ok": true, "values": [{"name": ..., "shape": [...], "integers": [...]}, ...]}

"observe" runs the model once on the inputs a timing feeds it and tells, for every output, its
shape, and for an integer output of at most "max_elements" elements, its elements: what graphsub's
measuring instance could not work out of a value whose shape depends on data (lib/pipeline,
measure_sizes.h).

"compare" is `optimize --check` run in onnxruntime, for models the reference executor has no
kernel for: both models run on the same seeded random inputs of each sample (seed + sample), drawn
as graphsub's reference check draws them (floats uniform in [-1, 1), integers in [0, 4), or
below an "index_bounds" entry's bound where that is smaller, booleans either), and their outputs are compared by position: an element passes when |got - want| <= atol +
rtol x |want|, or both are the same infinity, or both NaN. With "reference_level", the reference
session is made at that optimization level instead of "level" (a model against itself: how much
onnxruntime's own graph optimizations change its outputs). With "variation_level", the reference
also runs in a third session at that level, and each output tells its "runtime_variation" (the
most the reference's outputs at the two levels differ by, over the samples: onnxruntime's own
variation) and whether it is "within_runtime_variation": on every sample where the candidate's
output failed, it differed from the reference's by at most as much as the reference's own output
at the other level did (a shape that differs counts as an infinite difference). Outputs that
select among computed values (TopK, NonMaxSuppression, ArgMax of near ties) can move by whole
entries under a rounding change, and onnxruntime's own fusions make such changes too.

"profile" runs each model in its own session with onnxruntime's profiler on, and adds up the
kernel time of every node of onnxruntime's optimized graph by operator type (FusedConv,
ReorderInput, ...): the milliseconds per run (the mean over "runs" runs after the warm-up) and
the nodes of that type, and for the dense operators (Conv, FusedConv, MatMul, FusedMatMul, Gemm)
the floating-point operations of one run, from the shapes the profiler records (2 x the output's
elements x the reduced length; 0 for other types). Profiling adds its own cost, so these sessions
are not the timed ones.

Memory: each session holds onnxruntime's prepacked copy of its model's weights (a 4.4 GB
language model: 4 GB of this process's memory per session; the weights file itself is mapped, and
dropped once packed), so a timing of the input and four candidates of a large model needs five
times its weights. Before each session after a request's first, the worker checks that the
memory free (the kernel's MemAvailable, less where this process's cgroup limit or
GRAPHSUB_WORKER_MEMORY_MB, a bound on this worker's resident memory, leaves less) is at least
1.25 times the largest growth of its resident memory that one of the request's sessions caused
(or a session of one of its model files in an earlier request), plus 256 MiB. When it is not, the sessions made are released and: where two or more had fitted,
the request fails, saying how many fit ("3 sessions do not fit in the memory free: ..."), and
graphsub times the candidates one by one against the input, in pairs; where only one fits, the
request goes on one session at a time: every block makes, warms up and runs one model's session,
then releases it before the next model's, in the alternating order of the blocks, at least two
blocks; run r of each model in a block pairs with run r of the others. That is slower (a session
made per model and block) and noisier than alternating run by run, and the answer says it
happened. Without the check the kernel's out-of-memory killer ended the worker, or another
process.

Threads: with "threads" > 1, every session runs on one intra-op thread pool of that many threads,
made before the worker's first session (onnxruntime's global thread pool; a request for another
count after it is refused, and graphsub starts a new worker when the count changes). With a pool
per session, the idle sessions of an alternated comparison keep their pool's threads spinning for
20-50 ms after each run (onnxruntime's default), against the session being timed: on a 2-core VM
at 2 threads, ShuffleNet-v2 timed 3.5 ms alone and 8 ms alternated with a second session, its
run-by-run ratios spreading 50 %. On one shared pool, a session alternated with others times as
it does alone, with the spinning a user's session has between its runs.

The models are timed alternately: each round runs every model once, in reverse order every other
round (A B B A ...), so a drift of the machine's speed falls on all of them alike. With
"sessions": N > 1 (made even), the rounds are spread over blocks of fresh sessions, every other
block creating, warming up and first running the models in reverse order: two sessions of one
file can time a few per cent apart, the one created and warmed up later mostly faster, and one
pair of sessions would hand that to the comparison. The first N blocks run ceil(min_runs / N)
rounds (made even) each; the stopping rule is asked at the end of the N-th block and of every
second block after it, so that as many blocks of each order are pooled. The blocks after the
N-th come in pairs of equal length, long enough that creating a block's sessions takes at most
as long as its rounds (a large model's sessions take a second or more to create), fitted into
what max_runs and max_seconds leave. With one block, the rule is asked after every round. The
rounds stop when every model has min_runs runs and the standard error of each one's mean is at
most max(abs_error_ms, rel_error x mean) (with "paired": the standard error of the median of each
model's run-by-run log ratio to the first model is at most rel_error, or, with "decide_at" > 0,
that median is below log(decide_at) by three of those standard errors or above it by two, or
cannot become a gain before the limits: the rounds max_runs and max_seconds leave, at the pace so
far, would bound a gain only beyond 2 x 1.2533 x spread / sqrt(those rounds), and the median is
not below that bound or log(decide_at), or, where those rounds take at most CHEAP_SECONDS, the
median less twice its standard error is not); or at max_runs; or once max_seconds have passed (with
at least three runs each). With "prior_ms" (one list per model, of equal length: runs an earlier
request made of the same models, round by round), the timing goes on from those runs: they open
each model's samples, the stopping rule counts them, and the answer includes them; max_runs and
max_seconds bound this request's own rounds (a gain within the noise timed again to a finer
precision needs not repeat the runs it already has). With "paired", a candidate whose comparison is settled by that rule
before the others leaves the rounds (and the blocks after, which make no session of it): its
runs are the first rounds', still paired with the first model's runs of the same rounds, and the
rounds left run the others faster (a whole-graph check times up to five graphs the size of the
user's model against the input). Each session warms up with "warmup" runs, or, with
"warmup_seconds" > 0, fewer once they have taken that long (at least one): a 300 ms model's
first run after its session is made times as its later ones, and three warm-up runs of each
model in each block cost seconds. Inputs are seeded random data, the
same for every model of a request: floats standard normal, integers and booleans zero (a valid
index, a valid shape-copy marker); symbolic dims take their size from "dims", else 1.
"""
import json
import math
import os
import platform
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

# Seconds of further rounds that count as cheap for a paired comparison's stopping rule: within
# them a comparison whose median noise may have pushed above a gain is timed on (settled_ratio).
CHEAP_SECONDS = 5.0

LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}

DTYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int16)": np.int16,
    "tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def session(path, request):
    try:
        return new_session(path, request)
    except Exception as error:
        raise RuntimeError(f"onnxruntime cannot load '{path}': {error}") from None


def new_session(path, request):
    options = session_options(request)
    POOL["sessions_made"] = True
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


# The one intra-op thread pool every session of more than one thread shares (its size, once
# made), and whether a session was made (after which onnxruntime's environment exists and no
# shared pool can be made). See the module's doc, "Threads".
POOL = {"threads": 0, "sessions_made": False}


def shares_pool(threads):
    """Whether a session of `threads` intra-op threads runs on the shared pool: made here before
    the first session, when that one asks for more than one thread. Once made, onnxruntime runs
    every session on it, so another count is an error (graphsub starts a new worker for it)."""
    if POOL["threads"] == 0 and threads > 1 and not POOL["sessions_made"]:
        ort.capi._pybind_state.set_global_thread_pool_sizes(threads, 1)
        POOL["threads"] = threads
    if POOL["threads"] not in (0, threads):
        raise RuntimeError(f"this worker's sessions share a pool of {POOL['threads']} threads; "
                           f"{threads} threads need a new worker")
    return POOL["threads"] == threads


def session_options(request):
    options = ort.SessionOptions()
    threads = int(request["threads"])
    if shares_pool(threads):
        options.use_per_session_threads = False
    else:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = LEVELS[request["level"]]
    options.log_severity_level = 3
    return options


def dim_size(dim, dims):
    if isinstance(dim, int) and dim >= 0:
        return dim
    return int(dims.get(dim, 1)) if isinstance(dim, str) else 1


def timing_values(dtype, shape, rng):
    """Inputs to time with: floats standard normal, integers and booleans zero."""
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return np.zeros(shape, dtype=dtype)


def check_values(dtype, shape, rng, bound=4):
    """Inputs to check with, as graphsub's reference check draws them (lib/runtime/equivalence.h):
    floats uniform in [-1, 1), integers in [0, 4) (in [0, bound) for an index of a smaller table),
    booleans either."""
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, max(1, min(4, bound)), shape).astype(dtype)


def feeds(sess, request, rng, values=timing_values):
    """One input of every input of the session, drawn by `values`; symbolic dims from "dims".
    check_values gets an integer input's bound from "index_bounds" where the request names it."""
    dims = request.get("dims", {})
    bounds = request.get("index_bounds") or {}
    result = {}
    for value in sess.get_inputs():
        if value.type not in DTYPES:
            raise ValueError(f"input '{value.name}' has type {value.type}, which the worker cannot feed")
        shape = [dim_size(d, dims) for d in value.shape]
        if values is check_values and value.name in bounds:
            result[value.name] = check_values(DTYPES[value.type], shape, rng, int(bounds[value.name]))
        else:
            result[value.name] = values(DTYPES[value.type], shape, rng)
    return result


class FeedCache:
    """The timing inputs already drawn, by seed and the dtypes and shapes of a session's inputs in
    order, kept up to `capacity` bytes (the least recently used dropped first). Drawing a 1x256x56x56
    float input takes 16 ms, more than timing the small operator it feeds: the search's node
    signatures share a few input shapes, and every block of a whole-graph timing made its inputs
    again. The arrays are the ones a fresh draw would give (the same seed, the same order), so the
    cache changes no value; onnxruntime only reads them."""

    def __init__(self, capacity=256 << 20):
        self.capacity = capacity
        self.held = {}  # key -> list of arrays; dicts keep insertion order, the oldest first
        self.size = 0

    def feeds(self, sess, request):
        dims = request.get("dims", {})
        inputs = sess.get_inputs()
        for value in inputs:
            if value.type not in DTYPES:
                raise ValueError(f"input '{value.name}' has type {value.type}, which the worker cannot feed")
        key = (int(request.get("seed", 0)),
               tuple((value.type, tuple(dim_size(d, dims) for d in value.shape)) for value in inputs))
        arrays = self.held.pop(key, None)
        if arrays is None:
            rng = np.random.default_rng(key[0])
            arrays = [timing_values(DTYPES[kind], list(shape), rng) for kind, shape in key[1]]
            self.size += sum(array.nbytes for array in arrays)
        self.held[key] = arrays
        while self.size > self.capacity and len(self.held) > 1:
            oldest = next(iter(self.held))
            self.size -= sum(array.nbytes for array in self.held.pop(oldest))
        return {value.name: array for value, array in zip(inputs, arrays)}


TIMING_FEEDS = FeedCache()


def timing_feeds(sess, request):
    """The timing inputs of a session: feeds(sess, request, default_rng(seed)), drawn once."""
    return TIMING_FEEDS.feeds(sess, request)


def stable(samples, request):
    if len(samples) < int(request["min_runs"]):
        return False
    mean = sum(samples) / len(samples)
    variance = sum((x - mean) ** 2 for x in samples) / (len(samples) - 1)
    error = math.sqrt(variance / len(samples))
    return error <= max(float(request["abs_error_ms"]), float(request["rel_error"]) * mean)


def settled_ratio(first, other, request, runs_at_limit=None, cheap=False):
    """Paired: the median of the model's run-by-run log ratio to the first has a standard error
    (1.2533 x interquartile range / 1.349 / sqrt(runs), robust to disturbed runs) of at most
    rel_error, or is decided against decide_at, or cannot be decided a gain within the runs the
    limits leave (`runs_at_limit`, the rounds the comparison would have when max_runs or
    max_seconds stop it; see the module's doc). With `cheap` (the rounds up to that limit take
    a few seconds at most), "cannot" allows for the median's own error: it stops only when the
    median less twice its standard error is still short of the bound."""
    logs = sorted(math.log(b / a) for a, b in zip(first, other) if a > 0 and b > 0)
    if len(logs) < max(4, int(request["min_runs"])):
        return False
    spread = (float(np.percentile(logs, 75)) - float(np.percentile(logs, 25))) / 1.349
    error = 1.2533 * spread / math.sqrt(len(logs))
    if error <= float(request["rel_error"]):
        return True
    decide_at = float(request.get("decide_at", 0))
    if decide_at <= 0:
        return False
    median = float(np.median(logs))
    threshold = math.log(decide_at)
    if median + 3 * error <= threshold or median - 2 * error > threshold:
        return True
    if runs_at_limit and runs_at_limit > len(logs):
        # What the caller will ask of the median at the limit: below log(decide_at) and below
        # minus twice its standard error then (pipeline::clearly_faster's noise bound), at this
        # spread. The median measured so far does not get there: more runs would at best make it
        # a gain at the noise's edge, which is no gain to write (the input is kept).
        bound = min(threshold, -2 * 1.2533 * spread / math.sqrt(runs_at_limit))
        return median - (2 * error if cheap else 0) > bound
    return False


def runs_at_limit(rounds, elapsed_s, request):
    """The rounds a comparison would have when max_runs or max_seconds stop it, at the pace of the
    rounds so far (session creation included)."""
    max_runs = int(request["max_runs"])
    if elapsed_s <= 0 or rounds <= 0:
        return max_runs
    return min(max_runs, int(rounds * float(request["max_seconds"]) / elapsed_s))


def time_models(request):
    """Times the models of a request in alternated rounds, over blocks of fresh sessions. A paired
    candidate whose comparison is settled leaves the rounds (see the module's doc)."""
    paths = request["models"]
    max_runs = int(request["max_runs"])
    max_seconds = float(request["max_seconds"])
    blocks = max(1, int(request.get("sessions", 1)))
    blocks += blocks % 2 if blocks > 1 else 0
    # Rounds of each of the first blocks: an even number, so that a block runs as many A B as B A
    # rounds. With one block, that block runs until the numbers are stable.
    size = even(max(2, math.ceil(int(request["min_runs"]) / blocks)))
    prior = request.get("prior_ms") or [[] for _ in paths]
    if len(prior) != len(paths) or len({len(p) for p in prior}) > 1:
        raise ValueError("prior_ms needs one list of runs per model, all of the same length")
    samples = [[float(x) for x in p] for p in prior]
    active = list(range(len(paths)))  # the models the rounds run: the first always
    start = time.perf_counter()
    rounds = 0
    # With "runs_only_seconds", max_seconds bounds the time of the timed runs alone, not the
    # sessions' creation and warm-up (bench: a large model's sessions take seconds each).
    runs_only = bool(request.get("runs_only_seconds"))
    timed_s = 0.0  # the timed runs' own time so far

    def spent():
        return timed_s if runs_only else time.perf_counter() - start

    def enough():  # the stopping rule, with the rounds the limits leave at the pace so far
        nonlocal active
        elapsed = spent()
        limit = len(prior[0]) + runs_at_limit(rounds, elapsed, request)
        # Timing on to that limit is cheap when it takes a few seconds at the pace so far: then a
        # median that noise may have pushed up does not end the comparison early.
        cheap = rounds > 0 and elapsed / rounds * (limit - len(samples[0])) <= CHEAP_SECONDS
        if request.get("paired") and len(paths) > 1:
            active = [0] + [i for i in active[1:]
                            if not settled_ratio(samples[0], samples[i], request, limit, cheap)]
            return len(active) == 1
        return all(stable(s, request) for s in samples)

    block = 0
    memory = {"session_bytes": max((LARGEST_SESSION.get(path, 0) for path in paths), default=0)}
    alone = None  # why the sessions are made one at a time, once they do not fit together
    while alone is None:
        created = time.perf_counter()
        try:
            sessions = fresh_sessions(paths, active, request, block % 2 == 1, memory)
        except MemoryTight as tight:
            if tight.made > 1:
                # Pairs fit: graphsub times the candidates one by one against the first model.
                raise RuntimeError(str(tight)) from None
            alone = {"session_bytes": tight.session_bytes, "free_bytes": tight.free}
            break
        began = time.perf_counter()
        for round_index in range(size if blocks > 1 else max_runs):
            forward = (round_index + block) % 2 == 0
            for i in (active if forward else reversed(active)):
                run, feed = sessions[i]
                begin = time.perf_counter_ns()
                run(None, feed)
                samples[i].append((time.perf_counter_ns() - begin) / 1e6)
                timed_s += samples[i][-1] / 1e3
            rounds += 1
            if rounds >= max_runs:
                return {"ok": True, "samples_ms": samples}
            if spent() >= max_seconds and rounds >= 3:
                return {"ok": True, "samples_ms": samples}
            if blocks == 1 and enough():
                return {"ok": True, "samples_ms": samples}
        # (`run` holds its session too: the next block's sessions are made without these.)
        del sessions, run, feed
        block += 1
        if block < blocks or block % 2 == 1:
            continue
        # A whole number of pairs of blocks, one of each creation order: the rule may stop here.
        if enough():
            return {"ok": True, "samples_ms": samples}
        size = next_pair_size(size, began - created, (time.perf_counter() - began) / size,
                              max_runs - rounds, max_seconds - spent(), not runs_only)
        if size == 0:
            return {"ok": True, "samples_ms": samples}
    # The models do not fit in memory together: each block makes, warms up and runs one session
    # at a time, in alternating order, for at least one pair of blocks. The rounds keep their
    # pairing by position within a block (run r of the original with run r of each candidate).
    if blocks == 1:
        blocks = 2
        size = even(max(2, math.ceil(int(request["min_runs"]) / blocks)))
    while True:
        creation_s = running_s = 0.0
        size = min(size, max_runs - rounds)
        for i in (list(reversed(active)) if block % 2 == 1 else list(active)):
            created = time.perf_counter()
            sessions = fresh_sessions(paths, [i], request, False, memory)
            began = time.perf_counter()
            run, feed = sessions[i]
            for _ in range(size):
                begin = time.perf_counter_ns()
                run(None, feed)
                samples[i].append((time.perf_counter_ns() - begin) / 1e6)
                timed_s += samples[i][-1] / 1e3
            running_s += time.perf_counter() - began
            creation_s += began - created
            del sessions, run, feed
        rounds += size
        block += 1
        answer = {"ok": True, "samples_ms": samples, "one_at_a_time": alone}
        if rounds >= max_runs or (spent() >= max_seconds and rounds >= 3):
            return answer
        if block < blocks or block % 2 == 1:
            continue
        if enough():
            return answer
        size = next_pair_size(size, creation_s, running_s / size, max_runs - rounds, max_seconds - spent(),
                              not runs_only)
        if size == 0:
            return answer


def even(rounds):
    return rounds + rounds % 2


def next_pair_size(size, creation_s, round_s, runs_left, seconds_left, creation_counts=True):
    """Rounds of each block of the next pair: enough that creating the sessions takes at most the
    time of the rounds after it (a large model's sessions take a second or more to create), fitted
    into the runs and seconds left (of which creating the sessions takes its part, unless not
    `creation_counts`); 0 when not even two rounds each fit."""
    wanted = max(size, even(math.ceil(creation_s / max(round_s, 1e-9))))
    creating = 2 * creation_s if creation_counts else 0.0
    fitting = min(runs_left // 2, int((seconds_left - creating) / max(2 * round_s, 1e-9)))
    rounds = min(wanted, fitting - fitting % 2)
    return rounds if rounds >= 2 else 0


def rss_bytes():
    """This worker's resident memory."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def meminfo_available():
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def cgroup_available():
    """What this process's cgroup (v2) limit leaves: memory.max less what the group holds that
    the kernel cannot drop (its usage less its inactive file pages); None without a limit."""
    try:
        with open("/proc/self/cgroup") as groups:
            path = next((line.strip()[3:] for line in groups if line.startswith("0::")), None)
        if path is None:
            return None
        folder = "/sys/fs/cgroup" + path.rstrip("/")
        with open(folder + "/memory.max") as limit_file:
            limit = limit_file.read().strip()
        if limit == "max":
            return None
        with open(folder + "/memory.current") as current_file:
            used = int(current_file.read())
        with open(folder + "/memory.stat") as stat:
            for line in stat:
                if line.startswith("inactive_file "):
                    used -= int(line.split()[1])
        return int(limit) - used
    except (OSError, ValueError, StopIteration):
        return None


def free_bytes():
    """The memory a new session may take: the kernel's MemAvailable, or less where a cgroup limit
    or GRAPHSUB_WORKER_MEMORY_MB (a bound on this worker's resident memory) leaves less; None
    when none of them is known."""
    known = [b for b in (meminfo_available(), cgroup_available()) if b is not None]
    bound = os.environ.get("GRAPHSUB_WORKER_MEMORY_MB", "")
    if bound:
        known.append(int(float(bound) * (1 << 20)) - rss_bytes())
    return min(known) if known else None


# A session is made while the memory free is at least this many times the largest session made
# so far in the request, plus SESSION_SPARE_BYTES: its working memory (the runs' activations, the
# arena) comes after it is made, and the process around it may grow too.
SESSION_MARGIN = 1.25
SESSION_SPARE_BYTES = 256 << 20


class MemoryTight(Exception):
    """The next session of a request would not fit in the memory free beside the ones made."""

    def __init__(self, made, session_bytes, free):
        super().__init__(f"{made + 1} sessions do not fit in the memory free: one takes up to "
                         f"{session_bytes / 2**30:.2f} GiB, and {free / 2**30:.2f} GiB were free beside "
                         f"{made}")
        self.made = made
        self.session_bytes = session_bytes
        self.free = free


def fits_another(session_bytes):
    """Whether a session of about `session_bytes` can be made beside the ones alive now."""
    free = free_bytes()
    return free is None or free >= SESSION_MARGIN * session_bytes + SESSION_SPARE_BYTES, free


# The largest resident growth a session of each model file caused in this worker: a request
# starts from what its models took before. (A session made where an earlier one's memory was
# freed but kept by the allocator grows the process less than it takes.)
LARGEST_SESSION = {}


def made_session(path, request, memory):
    """A session of `path`; `memory` (a dict) keeps the largest resident growth a session's
    creation caused in this request ("session_bytes"), or earlier for one of its models."""
    before = rss_bytes()
    made = session(path, request)
    grown = rss_bytes() - before
    LARGEST_SESSION[path] = max(LARGEST_SESSION.get(path, 0), grown)
    memory["session_bytes"] = max(memory.get("session_bytes", 0), grown)
    return made


def fresh_sessions(paths, indices, request, reverse, memory):
    """A new session of each model of `indices` (created and warmed up last to first when
    `reverse`): {index: (its run, its inputs)}. The session created later can run measurably
    faster (where its weights land in memory), so blocks alternate the order and their numbers are
    pooled. A session warms up with "warmup" runs, or fewer once they took "warmup_seconds" (when
    given; at least one run). Raises MemoryTight, the sessions made released, when the next one
    would not fit beside them (`memory`: see made_session)."""
    order = list(reversed(indices)) if reverse else list(indices)
    sessions = {}
    for i in order:
        if sessions:
            fits, free = fits_another(memory.get("session_bytes", 0))
            if not fits:
                made = len(sessions)
                sessions.clear()  # (the exception's frame would keep them alive otherwise)
                raise MemoryTight(made, memory["session_bytes"], free)
        made = made_session(paths[i], request, memory)
        sessions[i] = (made.run, timing_feeds(made, request))
        del made
    # The warm-up allocates each session's working memory: in the same order.
    warmup = max(1, int(request["warmup"]))
    bound = float(request.get("warmup_seconds", 0))
    for i in order:
        run, feed = sessions[i]
        began = time.perf_counter()
        try:
            for _ in range(warmup):
                run(None, feed)
                if bound > 0 and time.perf_counter() - began >= bound:
                    break
        except Exception as error:
            raise RuntimeError(f"onnxruntime cannot run '{paths[i]}': {error}") from None
    return sessions


def profile_model(path, request, feed):
    warmup = max(1, int(request["warmup"]))
    runs = max(1, int(request["runs"]))
    with tempfile.TemporaryDirectory(prefix="graphsub-profile-") as folder:
        options = session_options(request)
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(folder, "profile")
        POOL["sessions_made"] = True
        try:
            sess = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as error:
            raise RuntimeError(f"onnxruntime cannot load '{path}': {error}") from None
        inputs = feed(sess)
        try:
            for _ in range(warmup + runs):
                sess.run(None, inputs)
        except Exception as error:
            raise RuntimeError(f"onnxruntime cannot run '{path}': {error}") from None
        with open(sess.end_profiling()) as events:
            trace = json.load(events)
    # Each node's kernel times in run order (the warm-up runs' are dropped) and its FLOPs.
    times = {}
    flops = {}
    for event in trace:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            args = event.get("args", {})
            key = (args.get("op_name", "?"), event["name"])
            times.setdefault(key, []).append(event["dur"] / 1000.0)
            flops.setdefault(key, dense_flops(key[0], args))
    by_op = {}
    for (op, name), durations in times.items():
        total, nodes, work = by_op.get(op, (0.0, 0, 0))
        by_op[op] = (total + sum(durations[warmup:]) / runs, nodes + 1, work + flops[(op, name)])
    return {op: [total, nodes, work] for op, (total, nodes, work) in by_op.items()}


def shapes(args, side):
    """The shapes of a profiled node's inputs or outputs (one {"float": [dims]} per value)."""
    return [next(iter(value.values())) for value in args.get(side, []) if value]


def dense_flops(op, args):
    """2 x output elements x reduced length of a convolution or matrix product, from the shapes the
    profiler recorded; 0 for other operators or when a shape is missing."""
    inputs, outputs = shapes(args, "input_type_shape"), shapes(args, "output_type_shape")
    if not inputs or not outputs:
        return 0
    elements = math.prod(outputs[0])
    if op in ("Conv", "FusedConv") and len(inputs) > 1 and len(inputs[1]) >= 3:
        return 2 * elements * math.prod(inputs[1][1:])  # weight [M, C/group, k...]
    if op in ("MatMul", "FusedMatMul", "Gemm") and inputs[0]:
        # The reduced length: A's last dim (a transposed A is not told apart; rare in exports).
        return 2 * elements * inputs[0][-1]
    return 0


def compare_output(name, want, got, request):
    """The errors of one output and whether every element is within tolerance."""
    want = np.asarray(want)
    got = np.asarray(got)
    if want.shape != got.shape:
        raise RuntimeError(f"output '{name}' has shape {list(got.shape)} in the candidate, {list(want.shape)} in the input")
    want = want.astype(np.float64)
    got = got.astype(np.float64)
    same = (want == got) | (np.isnan(want) & np.isnan(got))
    error = np.where(same, 0.0, np.abs(got - want))
    error = np.where(np.isnan(error), np.inf, error)
    # Relative to a nonzero reference only: against 0 every difference is infinitely relative.
    magnitude = np.abs(want)
    relative = np.where(magnitude > 0, error / np.where(magnitude > 0, magnitude, 1.0), 0.0)
    passed = bool(np.all(error <= float(request["atol"]) + float(request["rtol"]) * np.abs(want)))
    return float(error.max(initial=0.0)), float(relative.max(initial=0.0)), passed


def compare_models(request):
    # "reference_level": the reference at another optimization level (a model against itself).
    reference = session(request["models"][0], dict(request, level=request.get("reference_level", request["level"])))
    candidate = session(request["models"][1], request)
    variation = request.get("variation_level")
    own = session(request["models"][0], dict(request, level=variation)) if variation else None
    names = [value.name for value in reference.get_outputs()]
    if len(candidate.get_outputs()) != len(names):
        raise RuntimeError("the candidate has a different number of outputs")
    errors = [[0.0, 0.0, True] for _ in names]
    variations = [0.0 for _ in names]  # the most the reference's own outputs differ by
    explained = [True for _ in names]  # every failed sample within that sample's own variation
    for sample in range(int(request["samples"])):
        feed = feeds(reference, request, np.random.default_rng(int(request.get("seed", 0)) + sample), check_values)
        candidate_feed = {value.name: feed[value.name] for value in candidate.get_inputs() if value.name in feed}
        want = reference.run(None, feed)
        got = candidate.run(None, candidate_feed)
        moved = own.run(None, feed) if own else None
        for i, name in enumerate(names):
            if own:
                absolute, relative, passed = compare_or_infinite(name, want[i], got[i], request)
                wobble = compare_or_infinite(name, want[i], moved[i], request)[0]
                variations[i] = max(variations[i], wobble)
                explained[i] = explained[i] and (passed or absolute <= wobble)
            else:
                absolute, relative, passed = compare_output(name, want[i], got[i], request)
            errors[i] = [max(errors[i][0], absolute), max(errors[i][1], relative), errors[i][2] and passed]
    finite = lambda x: min(x, sys.float_info.max)  # JSON has no infinity
    outputs = [{"name": name, "max_abs_error": finite(e[0]), "max_rel_error": finite(e[1]), "passed": e[2]}
               for name, e in zip(names, errors)]
    if own:
        for output, wobble, within in zip(outputs, variations, explained):
            output["runtime_variation"] = finite(wobble)
            output["within_runtime_variation"] = within
    return {"ok": True, "outputs": outputs}


def compare_or_infinite(name, want, got, request):
    """compare_output, with outputs of different shapes as infinitely apart (and failed)."""
    if np.shape(want) != np.shape(got):
        return math.inf, math.inf, False
    return compare_output(name, want, got, request)


def profile_models(request):
    by_op = [profile_model(path, request, lambda sess: timing_feeds(sess, request)) for path in request["models"]]
    return {"ok": True, "by_op": by_op}


def observe_model(request):
    sess = session(request["models"][0], request)
    feed = timing_feeds(sess, request)
    names = [value.name for value in sess.get_outputs()]
    values = []
    for name, value in zip(names, sess.run(None, feed)):
        value = np.asarray(value)
        observed = {"name": name, "shape": [int(d) for d in value.shape]}
        if value.dtype in (np.int64, np.int32) and value.size <= int(request["max_elements"]):
            observed["integers"] = [int(x) for x in value.reshape(-1)]
        values.append(observed)
    return {"ok": True, "values": values}


def answer(request):
    if request.get("cmd") == "hello":
        return {"ok": True, "onnxruntime": ort.__version__, "cpu": cpu_model(),
                "python": platform.python_version()}
    if request.get("cmd") == "time":
        return time_models(request)
    if request.get("cmd") == "profile":
        return profile_models(request)
    if request.get("cmd") == "compare":
        return compare_models(request)
    if request.get("cmd") == "observe":
        return observe_model(request)
    raise ValueError(f"unknown request {request.get('cmd')!r}")


def main():
    # Answers go to the real stdout, and anything else printed to sys.stdout (onnxruntime's Python
    # prints its "EP Error" banner there when a session fails) to stderr: one stray line would
    # break the protocol.
    answers = sys.stdout
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line))
        except Exception as error:  # every failure goes back to graphsub as one message
            reply = {"ok": False, "error": " ".join(str(error).split()) or type(error).__name__}
        answers.write(json.dumps(reply) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()

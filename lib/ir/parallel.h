// Work shared among threads: the one pool pattern the optimizer, the verifier and the rule
// generator use.
#pragma once

#include <cstddef>
#include <functional>

namespace graphsub {

/// Runs task(i, worker) for every i in [0, count) on up to `threads` threads (the caller's own
/// thread is worker 0), handing out indices in order as threads come free; rethrows the first
/// exception a task threw once every thread has stopped. Results that must not depend on the
/// number of threads are written by index, or merged per worker in worker order.
void run_parallel(std::size_t count, int threads, const std::function<void(std::size_t index, std::size_t worker)>& task);

/// run_parallel for tasks that need no worker index.
void run_parallel(std::size_t count, int threads, const std::function<void(std::size_t index)>& task);

}  // namespace graphsub

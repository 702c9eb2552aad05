// A pool of threads taking indices from one counter.
#include "ir/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace graphsub {

void run_parallel(std::size_t count, int threads, const std::function<void(std::size_t, std::size_t)>& task) {
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, threads))));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto work = [&](std::size_t worker) {
    for (std::size_t i = next++; i < count && !failed; i = next++) {
      try {
        task(i, worker);
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t worker = 1; worker < workers; ++worker) pool.emplace_back(work, worker);
  work(0);
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

void run_parallel(std::size_t count, int threads, const std::function<void(std::size_t)>& task) {
  run_parallel(count, threads, [&task](std::size_t index, std::size_t) { task(index); });
}

}  // namespace graphsub

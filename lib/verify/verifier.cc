// Verifying rules on a pool of threads, one Z3 context per rule.
#include "verify/verifier.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

namespace graphsub::verify {
namespace {

/// The status and detail a bounded result gives while it is the only proof path.
RuleVerdict verdict_of(const BoundedResult& bounded) {
  RuleVerdict verdict;
  verdict.bounded = bounded;
  if (bounded.verdict == BoundedVerdict::kRefuted) {
    verdict.status = rules::ProofStatus::kRefuted;
    verdict.detail = bounded.detail;
  } else if (bounded.verdict == BoundedVerdict::kHolds) {
    verdict.detail = "bounded check: " + bounded.detail + "; no proof for every shape (axioms not built yet)";
  } else {
    verdict.detail = bounded.detail;
  }
  return verdict;
}

/// Verifies one rule, turning any failure into an unknown verdict that names it.
RuleVerdict verify_one(const rules::Rule& rule, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RuleVerdict verdict;
  try {
    verdict = verdict_of(check_bounded(rule, options.bounded));
  } catch (const std::exception& e) {
    verdict.detail = std::string("verifier error: ") + e.what();
  }
  verdict.file = rule.file;
  verdict.name = rule.name;
  verdict.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return verdict;
}

}  // namespace

std::vector<RuleVerdict> verify_rules(const std::vector<rules::Rule>& rules, const VerifyOptions& options) {
  std::vector<RuleVerdict> verdicts(rules.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < rules.size(); i = next++) verdicts[i] = verify_one(rules[i], options);
  };
  const int threads = std::max(1, std::min<int>(options.jobs, static_cast<int>(rules.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  return verdicts;
}

}  // namespace graphsub::verify

// Rounds of search and measurement, and the measured check of each changed part.
#include "pipeline/measured_search.h"

#include <chrono>

#include "ir/clock.h"
#include "ir/log.h"

namespace graphsub::pipeline {
namespace {


/// Times a changed part against the original part in the target. While the round's search still
/// has unmeasured signatures, its result will be searched again, so the judge approves without
/// measuring anything (its answer is thrown away with the round).
class MeasuredJudge : public search::PartJudge {
 public:
  MeasuredJudge(Measurer& measurer, const cost::CachedModel& model, const GuardOptions& options, bool last_round)
      : measurer_(measurer), model_(model), options_(options), last_round_(last_round) {}

  bool keep(const ir::Graph& original, const ir::Graph& candidate, double predicted_ratio) override {
    if (!last_round_ && model_.pending_misses()) return true;
    const std::optional<cost::Comparison> measured = measurer_.compare(original, candidate, options_.deciding(options_.part));
    if (!measured) return false;
    const bool faster = clearly_faster(*measured, options_.min_gain);
    logger("search")->debug("part of {} nodes: the candidate takes {:.4f} of its time (predicted {:.4f}; spread "
                            "{:.4f}, {} runs): {}",
                            original.node_count(), measured->median_ratio, predicted_ratio, measured->spread,
                            measured->runs, faster ? "kept" : "rejected");
    return faster;
  }

 private:
  Measurer& measurer_;
  const cost::CachedModel& model_;
  const GuardOptions& options_;
  const bool last_round_;
};

}  // namespace

search::OptimizeResult measured_optimize(const ir::Graph& input, const rewrite::Matcher& matcher,
                                         cost::CachedModel& model, Measurer& measurer,
                                         search::OptimizerOptions options, const GuardOptions& guard,
                                         MeasuredSearchStats& stats, int max_rounds) {
  search::SplitMemo split;
  options.split_memo = &split;
  const auto start = Clock::now();
  for (int round = 1;; ++round) {
    const double elapsed = seconds_since(start);
    const bool last = round == max_rounds || !measurer.can_measure() || elapsed >= options.search.time_limit_s;
    MeasuredJudge judge(measurer, model, guard, last);
    options.judge = &judge;
    const auto searched = Clock::now();
    search::OptimizeResult result = search::optimize(input, matcher, model, options);
    SearchRound& this_round = stats.each.emplace_back();
    this_round.search_seconds = seconds_since(searched);
    this_round.reused_parts = result.split.reused_parts;
    this_round.reused_seams = result.split.reused_seams;
    stats.rounds = round;
    std::vector<cost::Miss> misses = model.take_misses();
    stats.estimated = static_cast<int64_t>(misses.size());
    this_round.signatures = stats.estimated;
    if (misses.empty() || last) return result;
    logger("search")->info("round {} ({:.1f} s; {} part and {} seam searches from earlier rounds): measuring {} "
                           "operator signatures the search met",
                           round, this_round.search_seconds, this_round.reused_parts, this_round.reused_seams,
                           misses.size());
    const auto measuring = Clock::now();
    measurer.measure(misses);
    this_round.measure_seconds = seconds_since(measuring);
  }
}

}  // namespace graphsub::pipeline

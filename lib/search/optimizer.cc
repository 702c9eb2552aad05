// Split, search the parts in parallel, stitch, search the seams.
#include "search/optimizer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/fmt/ranges.h>

#include "ir/clock.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/log.h"
#include "ir/parallel.h"
#include "search/exhaustive.h"
#include "search/sampling.h"
#include "search/search_state.h"
#include "search/split.h"
#include "search/subgraph.h"

namespace graphsub::search {
namespace {


/// Most rounds of the search around the seams (each round usually settles what the last one
/// started; a handful suffice).
constexpr int kSeamRounds = 8;


/// The less complete of two stop reasons: a time limit, a budget, a length limit, a natural end.
StopReason worse(StopReason a, StopReason b) {
  for (StopReason reason : {StopReason::kTimeLimit, StopReason::kBudget, StopReason::kLengthLimit}) {
    if (a == reason || b == reason) return reason;
  }
  return a;
}

/// Adds a search's counters to the whole run's (also for a search whose result was dropped).
void count_work(SearchResult& total, const SearchResult& part) {
  total.expanded += part.expanded;
  total.generated += part.generated;
  total.duplicates += part.duplicates;
  total.rejected += part.rejected;
}

/// Adds a part's search's counters and stop reason to the whole run's (also for a search whose
/// result was dropped).
void accumulate(SearchResult& total, const SearchResult& part) {
  count_work(total, part);
  total.stop = worse(total.stop, part.stop);
}

/// Groups of matches joined by shared nodes (union-find), each as the union of its nodes,
/// ordered by their smallest node id.
std::vector<std::vector<ir::NodeId>> clusters(const std::vector<const rewrite::Match*>& matches) {
  std::unordered_map<ir::NodeId, ir::NodeId> parent;
  std::function<ir::NodeId(ir::NodeId)> root = [&](ir::NodeId id) {
    const ir::NodeId up = parent.emplace(id, id).first->second;
    return up == id ? id : parent[id] = root(up);
  };
  for (const rewrite::Match* match : matches) {
    for (ir::NodeId id : match->nodes) parent[root(id)] = root(match->nodes.front());
  }
  std::map<ir::NodeId, std::vector<ir::NodeId>> groups;
  std::vector<ir::NodeId> members;
  for (const auto& entry : parent) members.push_back(entry.first);
  std::sort(members.begin(), members.end());
  for (ir::NodeId id : members) groups[root(id)].push_back(id);
  std::vector<std::vector<ir::NodeId>> result;
  for (auto& entry : groups) result.push_back(std::move(entry.second));
  std::sort(result.begin(), result.end());
  return result;
}

/// One optimization run: the split, the parts, the seams.
class Optimizer {
 public:
  Optimizer(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
            const OptimizerOptions& options)
      : input_(input), matcher_(matcher), model_(model), options_(options), start_(Clock::now()),
        threads_(options.threads > 0 ? options.threads
                                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

  OptimizeResult run() {
    const std::size_t threshold = options_.split_threshold;
    if (threshold == 0) return whole(run_search(options_.mode, input_, matcher_, model_, options_.search));
    if (input_.node_count() <= threshold) {
      SearchResult found = run_search(options_.mode, input_, matcher_, model_, part_options());
      if (!reached_part_budget(found) || input_.node_count() < 2) return whole(std::move(found));
      count_work(result_.search, found);
      ++result_.split.resplit_parts;
    }
    result_.search.initial_cost = model_.graph_cost(input_);
    Clock::time_point phase = Clock::now();
    const Partition partition = split_once();
    result_.split.disabled_matches = partition.disabled.size();
    for (std::size_t j : partition.disabled) logger("search")->debug("cut: {}", rewrite::describe(input_, matches_[j]));
    result_.split.split_seconds = seconds_since(phase);
    phase = Clock::now();
    ir::Graph graph = search_parts(partition);
    result_.split.parts_seconds = seconds_since(phase);
    phase = Clock::now();
    search_seams(graph);
    result_.split.seam_seconds = seconds_since(phase);
    return finish(std::move(graph));
  }

 private:
  /// A part as extracted and what its search found.
  struct PartSearch {
    Subgraph part;
    SearchResult found;
  };

  /// What became of one part of the partition: its search, or those of the pieces it was split
  /// into, in topological order; and the work and cuts of splitting it again.
  struct PartOutcome {
    std::vector<PartSearch> searches;
    SearchResult dropped;  ///< Counters of the searches that reached the part budget.
    std::size_t resplits = 0;
    std::size_t disabled = 0;
    std::size_t reused = 0;  ///< Searches taken from the memo.
  };

  /// The result of searching the whole graph as one.
  OptimizeResult whole(SearchResult found) {
    result_.search = std::move(found);
    result_.split.largest_part = input_.node_count();
    return std::move(result_);
  }

  /// The matches of the input and its partition, from the memo when it holds this graph's.
  Partition split_once() {
    SplitMemo* memo = options_.split_memo;
    const uint64_t hash = memo ? input_.structural_hash() : 0;
    if (memo && memo->valid && memo->graph_hash == hash && memo->threshold == options_.split_threshold) {
      matches_ = memo->matches;
      return memo->partition;
    }
    matches_ = with_two_step_matches(input_, matcher_, without_weight_only(input_, matcher_.find_all(input_)), threads_);
    Partition partition = split_graph(input_, matches_, options_.split_threshold);
    if (partition.parts.size() == 1) partition = halves_of(partition.parts.front());
    if (memo) *memo = SplitMemo{hash, options_.split_threshold, matches_, partition, true};
    return partition;
  }

  /// Each part's search limits: the part budget, and what is left of the time limit.
  SearchOptions part_options() const {
    SearchOptions limits = options_.search;
    limits.time_limit_s = std::max(0.0, options_.search.time_limit_s - seconds_since(start_));
    if (options_.part_budget > 0) limits.budget = std::min(limits.budget, options_.part_budget);
    return limits;
  }

  /// Whether a part's search stopped at the part budget (not at the search's own budget).
  bool reached_part_budget(const SearchResult& found) const {
    return found.stop == StopReason::kBudget && options_.part_budget > 0 &&
           options_.part_budget < options_.search.budget;
  }

  /// `nodes` bisected by a minimum cut, as a partition of two parts.
  Partition halves_of(const std::vector<ir::NodeId>& nodes) const {
    Bisection halves = bisect(input_, nodes, matches_);
    return Partition{{std::move(halves.upstream), std::move(halves.downstream)}, std::move(halves.disabled)};
  }

  /// Searches the part of `nodes`; when the search reaches the part budget, bisects the part and
  /// searches the halves instead (recursively), so that no part's search space runs away.
  void search_part(const std::vector<ir::NodeId>& nodes, PartOutcome& outcome) const {
    Subgraph part = extract(input_, nodes);
    SearchResult found = memoized_search(part.graph, outcome.reused);
    if (!reached_part_budget(found) || nodes.size() < 2) {
      outcome.searches.push_back({std::move(part), std::move(found)});
      return;
    }
    logger("search")->debug("the part {} .. {} ({} nodes) reached the part budget: searching its halves",
                            input_.node(nodes.front()).name, input_.node(nodes.back()).name, nodes.size());
    count_work(outcome.dropped, found);
    ++outcome.resplits;
    const Partition halves = halves_of(nodes);
    outcome.disabled += halves.disabled.size();
    for (const std::vector<ir::NodeId>& half : halves.parts) search_part(half, outcome);
  }

  /// The search of `graph`: the memo's (SearchMemo) applied to it, where the memo kept one of a
  /// graph that hashes alike; else run, and kept there when final.
  SearchResult memoized_search(const ir::Graph& graph, std::size_t& reused) const {
    return memoized_search(graph, reused, matcher_, {});
  }

  /// The same with `matcher`, which is matcher_ less the rules named in `left_out`.
  SearchResult memoized_search(const ir::Graph& graph, std::size_t& reused, const rewrite::Matcher& matcher,
                               const std::vector<std::string>& left_out) const {
    SearchMemo* memo = options_.search_memo;
    uint64_t key = memo ? memo_key(graph) : 0;
    for (const std::string& name : left_out) key = ir::hash_combine(key, std::hash<std::string>{}(name));
    if (memo) {
      if (std::optional<SearchResult> known = memo->find(key)) {
        ++reused;
        known->steps = replay(graph, known->applied, &known->best);
        return std::move(*known);
      }
    }
    const int64_t provisional = model_.provisional_answers();
    SearchResult found = run_search(options_.mode, graph, matcher, model_, part_options());
    if (memo && found.stop != StopReason::kTimeLimit && model_.provisional_answers() == provisional) {
      memo->keep(key, found);
    }
    return found;
  }

  /// What a search of `graph` depends on: the graph but for names and large weights' values, the
  /// options of its search (not the time limit), the rules and the cost model.
  uint64_t memo_key(const ir::Graph& graph) const {
    const SearchOptions limits = part_options();
    uint64_t key = ir::hash_combine(graph.replica_hash(), static_cast<uint64_t>(options_.mode));
    for (double number : {limits.alpha, limits.node_cap_factor}) {
      uint64_t bits = 0;
      std::memcpy(&bits, &number, sizeof bits);
      key = ir::hash_combine(key, bits);
    }
    for (int64_t number : {limits.budget, int64_t{limits.sample_size}, int64_t{limits.exploration_depth},
                           int64_t{limits.max_length}}) {
      key = ir::hash_combine(key, static_cast<uint64_t>(number));
    }
    key = ir::hash_combine(key, reinterpret_cast<std::uintptr_t>(&matcher_));
    return ir::hash_combine(key, reinterpret_cast<std::uintptr_t>(&model_));
  }

  /// Searches every part (in parallel) and stitches the results in the parts' order.
  ir::Graph search_parts(const Partition& partition) {
    std::vector<PartOutcome> outcomes(partition.parts.size());
    run_parallel(partition.parts.size(), threads_,
                 [&](std::size_t i) { search_part(partition.parts[i], outcomes[i]); });
    std::vector<PartSearch> searches;
    for (PartOutcome& outcome : outcomes) {
      count_work(result_.search, outcome.dropped);
      result_.split.resplit_parts += outcome.resplits;
      result_.split.disabled_matches += outcome.disabled;
      result_.split.reused_parts += outcome.reused;
      for (PartSearch& search : outcome.searches) searches.push_back(std::move(search));
    }
    result_.split.parts = searches.size();
    for (std::size_t i = 0; i < searches.size(); ++i) {
      const std::vector<ir::NodeId>& nodes = searches[i].part.nodes;
      result_.split.largest_part = std::max(result_.split.largest_part, nodes.size());
      logger("search")->debug("part {}: {} nodes, {} .. {}", i, nodes.size(), input_.node(nodes.front()).name,
                              input_.node(nodes.back()).name);
    }
    return stitch_parts(searches);
  }

  /// The input with every part's result stitched in, in the parts' order.
  ir::Graph stitch_parts(std::vector<PartSearch>& searches) {
    ir::Graph graph = input_;
    std::unordered_map<ir::ValueId, ir::ValueId> moved;  // input value → value now behind it
    for (std::size_t i = 0; i < searches.size(); ++i) {
      Subgraph& part = searches[i].part;
      const std::optional<SearchResult> kept = judged(input_, part, searches[i].found);
      for (ir::NodeId id : part.nodes) part_of_[id] = i;
      if (!kept) continue;
      const SearchResult& found = *kept;
      auto follow = [&](ir::ValueId& outer) {
        const auto it = moved.find(outer);
        if (it != moved.end()) outer = it->second;
      };
      for (ir::ValueId& outer : part.outer_inputs) follow(outer);
      for (auto& constant : part.outer_constants) follow(constant.second);
      const Stitched stitched = stitch(graph, part, found.best);
      for (std::size_t k = 0; k < stitched.outputs.size(); ++k) moved[part.outer_outputs[k]] = stitched.outputs[k];
      for (ir::NodeId id : stitched.nodes) part_of_[id] = i;
    }
    return graph;
  }

  /// The matches of `graph` whose nodes come from two or more parts: those the cuts disabled, or
  /// new ones the parts' rewrites made possible across a seam.
  std::vector<std::vector<ir::NodeId>> seam_clusters(const std::vector<rewrite::Match>& matches) const {
    std::vector<const rewrite::Match*> crossing;
    for (const rewrite::Match& match : matches) {
      std::unordered_set<std::size_t> parts;
      for (ir::NodeId id : match.nodes) parts.insert(part_of_.at(id));
      if (parts.size() > 1) crossing.push_back(&match);
    }
    return clusters(crossing);
  }

  /// Searches the regions around the seams, in rounds: a substitution there can make new matches
  /// with the nodes beside it, which the next round sees. Stops when a round changes nothing.
  void search_seams(ir::Graph& graph) {
    std::size_t next_label = result_.split.parts;
    for (int round = 0; round < kSeamRounds; ++round) {
      if (!search_seam_round(graph, round, next_label)) return;
    }
  }

  /// Searches the convex region around each cluster of seam-crossing matches and stitches it;
  /// the nodes a region gains get a label of their own. Returns whether anything changed.
  bool search_seam_round(ir::Graph& graph, int round, std::size_t& next_label) {
    const std::vector<rewrite::Match> matches = without_weight_only(graph, matcher_.find_all(graph));
    const auto limit = static_cast<std::size_t>(options_.seam_region_factor * static_cast<double>(options_.split_threshold));
    bool changed = false;
    for (const std::vector<ir::NodeId>& cluster : seam_clusters(matches)) {
      if (!std::all_of(cluster.begin(), cluster.end(), [&](ir::NodeId id) { return graph.has_node(id); })) continue;
      const std::vector<ir::NodeId> region = convex_hull(graph, cluster);
      logger("search")->debug("seam round {}: cluster of {} nodes, region of {} nodes{}", round, cluster.size(),
                              region.size(), region.size() > limit ? " (too large, skipped)" : "");
      if (region.size() > limit) continue;
      ++result_.split.seam_regions;
      Subgraph part = extract(graph, region);
      const std::optional<SearchResult> kept =
          judged(graph, part, memoized_search(part.graph, result_.split.reused_seams));
      if (!kept) continue;
      result_.split.seam_steps += kept->steps.size();
      for (ir::NodeId id : stitch(graph, part, kept->best).nodes) part_of_[id] = next_label;
      ++next_label;
      changed = true;
    }
    return changed;
  }

  /// What replaces a part (taken out of `outer`): its search's result `found` when it changed
  /// something and the judge (if any) agrees, given both with the nodes around the part
  /// (TimingContext). Where the judge refuses it as slower (OptimizerOptions::retry_above), the part
  /// is searched again less each rule the refused result used, in turn, and those alternatives
  /// are judged from the lowest cost up, at most OptimizerOptions::retries of them, each only
  /// where its cost is at most OptimizerOptions::retry_below of the part's: a rewrite the cost model counts as a gain (it sums
  /// operators) may stop a runtime's fusion that the judge sees (a GELU's division as a product),
  /// and the part's other rewrites may win without it. nullopt: the part stays as it is. The work
  /// of every search and the steps of the one kept are added to the run's.
  std::optional<SearchResult> judged(const ir::Graph& outer, const Subgraph& extracted, const SearchResult& found) {
    accumulate(result_.search, found);
    if (found.steps.empty()) return std::nullopt;
    if (!options_.judge) return kept(found);
    const double predicted = written_ratio(extracted.graph, found);
    if (!worth_judging(predicted)) {
      ++result_.split.unjudged;
      return std::nullopt;
    }
    const TimingContext context(outer, extracted, options_.context_depth);
    const PartJudge::Verdict first = judge(context, extracted, found, predicted);
    if (first.keep) {
      // Kept whole, it may still hold a region that loses: its other regions alone may measure
      // faster still.
      std::optional<Judged> regions = judged_regions(context, extracted, found);
      if (regions && regions->ratio < first.ratio) return kept(regions->result);
      return kept(found);
    }
    if (options_.retries <= 0 || first.ratio < options_.retry_above) return std::nullopt;
    if (std::optional<Judged> regions = judged_regions(context, extracted, found)) return kept(regions->result);
    std::vector<std::string> used;
    for (const AppliedStep& step : found.steps) {
      if (std::find(used.begin(), used.end(), step.rule) == used.end()) used.push_back(step.rule);
    }
    std::vector<SearchResult> alternatives(used.size());
    std::vector<std::size_t> reused(used.size(), 0);
    run_parallel(used.size(), threads_, [&](std::size_t k) {
      alternatives[k] = memoized_search(extracted.graph, reused[k], matcher_.without({used[k]}), {used[k]});
    });
    std::vector<std::size_t> order;
    std::vector<double> ratios(used.size(), 1);  // each alternative's written_ratio
    for (std::size_t k = 0; k < used.size(); ++k) {
      accumulate(result_.search, alternatives[k]);
      result_.split.reused_parts += reused[k];
      const SearchResult& alternative = alternatives[k];
      if (alternative.steps.empty()) continue;
      if (alternative.best_cost.time_ms > options_.retry_below * alternative.initial_cost.time_ms) continue;
      ratios[k] = written_ratio(extracted.graph, alternative);
      if (!worth_judging(ratios[k])) continue;
      order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return alternatives[a].best_cost.time_ms < alternatives[b].best_cost.time_ms;
    });
    const auto retries = static_cast<std::size_t>(options_.retries);
    if (order.size() > retries) order.resize(retries);
    for (std::size_t k : order) {
      logger("search")->debug("part of {} nodes searched again without {}", extracted.graph.node_count(), used[k]);
      ++result_.split.retried;
      if (judge(context, extracted, alternatives[k], ratios[k]).keep) return kept(alternatives[k]);
    }
    return std::nullopt;
  }

  /// A part's result and its measured time over the part's.
  struct Judged {
    SearchResult result;
    double ratio = 1;
  };

  /// For a result whose steps rewrote two or more separate regions of the part (step_regions):
  /// the regions one at a time, from the lowest written cost alone up, each judged with the
  /// regions kept before it, at most OptimizerOptions::retries judgments; the last kept, with its
  /// measured ratio, or nullopt. A runtime's fusion that one region's rewrites stop (a GELU's
  /// arithmetic reordered) otherwise takes the other regions' gains down with it where the judge
  /// refuses the whole, and stays in it where the others' gains outweigh it; leaving out one rule
  /// at a time does not help where several rules reorder it (FastViT's stem: a 1x1 convolution
  /// summed into a 3x3 one, and three rules on the GELU after it).
  std::optional<Judged> judged_regions(const TimingContext& context, const Subgraph& extracted,
                                       const SearchResult& found) {
    if (found.applied.size() < 2 || options_.retries <= 0) return std::nullopt;
    const StepRegions regions = step_regions(extracted.graph, found.applied);
    const std::vector<std::vector<std::size_t>>& groups = regions.groups;
    if (groups.size() < 2) return std::nullopt;
    // The regions alone, by their written cost.
    std::vector<std::optional<SearchResult>> alone(groups.size());
    std::vector<double> ratios(groups.size(), 1);
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      alone[k] = replayed(extracted.graph, found, regions, groups[k]);
      if (!alone[k]) continue;
      ratios[k] = written_ratio(extracted.graph, *alone[k]);
      if (worth_judging(ratios[k])) order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratios[a] < ratios[b]; });
    std::vector<std::size_t> chosen;
    std::optional<Judged> best;
    int judgments = 0;
    for (std::size_t k : order) {
      if (judgments >= options_.retries) break;
      std::vector<std::size_t> steps = chosen;
      steps.insert(steps.end(), groups[k].begin(), groups[k].end());
      std::sort(steps.begin(), steps.end());
      if (steps.size() == found.applied.size()) break;  // the whole result, judged already
      // A region alone was replayed and priced above; with others, it is replayed with them.
      std::optional<SearchResult> candidate =
          chosen.empty() ? std::move(alone[k]) : replayed(extracted.graph, found, regions, steps);
      if (!candidate) continue;
      const double ratio = chosen.empty() ? ratios[k] : written_ratio(extracted.graph, *candidate);
      if (!worth_judging(ratio)) continue;
      logger("search")->debug("part of {} nodes: {} of its result's {} steps, in separate regions",
                              extracted.graph.node_count(), steps.size(), found.steps.size());
      ++judgments;
      ++result_.split.retried;
      const PartJudge::Verdict verdict = judge(context, extracted, *candidate, ratio);
      if (!verdict.keep || (best && verdict.ratio >= best->ratio)) continue;
      chosen = std::move(steps);
      best = Judged{std::move(*candidate), verdict.ratio};
    }
    return best;
  }

  /// `found` with only its steps `chosen` replayed on `part` (replay_steps), costed.
  std::optional<SearchResult> replayed(const ir::Graph& part, const SearchResult& found, const StepRegions& regions,
                                       const std::vector<std::size_t>& chosen) const {
    SearchResult result;
    std::optional<ir::Graph> graph = replay_steps(part, found.applied, regions, chosen, result.applied, result.steps);
    if (!graph) return std::nullopt;
    result.best = std::move(*graph);
    result.initial_cost = found.initial_cost;
    result.best_cost = model_.graph_cost(result.best);
    result.stop = found.stop;
    return result;
  }

  /// `found`'s cost over `part`'s, both as export writes them (CostModel::written_cost); 1 for a
  /// part that costs nothing.
  double written_ratio(const ir::Graph& part, const SearchResult& found) const {
    const double before = model_.written_cost(part).time_ms;
    return before > 0 ? model_.written_cost(found.best).time_ms / before : 1;
  }

  /// Whether a result whose written_ratio is `ratio` is put to the judge: at most
  /// OptimizerOptions::judge_below. A result whose only gains are fusions that export writes back
  /// as the part's own nodes (ResNet-50's parts: convolutions with their ReLUs and residual sums,
  /// 0.93 of the parts' cost summed node by node) is the part once written, and timing the two
  /// would time one model twice; one priced within the judge's noise of the part is refused as
  /// even.
  bool worth_judging(double ratio) const { return ratio < 1 && ratio <= options_.judge_below; }

  /// `found` as kept: its steps added to the run's.
  SearchResult kept(const SearchResult& found) {
    result_.search.steps.insert(result_.search.steps.end(), found.steps.begin(), found.steps.end());
    return found;
  }

  /// The judge's verdict on `found` for the part, given both in the part's `context`; `predicted`
  /// is its written_ratio.
  PartJudge::Verdict judge(const TimingContext& context, const Subgraph& extracted, const SearchResult& found,
                           double predicted) {
    const ir::Graph& part = extracted.graph;
    ++result_.split.judged;
    if (logger("search")->should_log(spdlog::level::debug)) {
      std::vector<std::string> rules;
      for (const AppliedStep& step : found.steps) rules.push_back(step.rule);
      logger("search")->debug("part of {} nodes changed by {}", part.node_count(), fmt::join(rules, ", "));
    }
    const PartJudge::Verdict verdict = options_.judge->verdict(context.original(), context.around(found.best), predicted);
    if (!verdict.keep) ++result_.split.rejected;
    return verdict;
  }

  /// The stitched graph as the result, unless (by a bug elsewhere) it costs more than the input.
  OptimizeResult finish(ir::Graph graph) {
    SearchResult& search = result_.search;
    search.best_cost = model_.graph_cost(graph);
    if (search.best_cost.time_ms > search.initial_cost.time_ms || graph.has_cycle()) {
      logger("search")->warn("the stitched graph is no better than the input; keeping the input");
      search.best = input_;
      search.best_cost = search.initial_cost;
      search.steps.clear();
    } else {
      search.best = std::move(graph);
    }
    search.seconds = seconds_since(start_);
    logger("search")->info("{} parts (largest {} nodes, {} matches cut), {} seam regions: {:.6g} ms -> {:.6g} ms",
                           result_.split.parts, result_.split.largest_part, result_.split.disabled_matches,
                           result_.split.seam_regions, search.initial_cost.time_ms, search.best_cost.time_ms);
    return std::move(result_);
  }

  const ir::Graph& input_;
  const rewrite::Matcher& matcher_;
  const cost::CostModel& model_;
  const OptimizerOptions& options_;
  const Clock::time_point start_;
  const int threads_;
  std::vector<rewrite::Match> matches_;  ///< Every match of the input, two-step ones included.
  std::unordered_map<ir::NodeId, std::size_t> part_of_;  ///< Node of the stitched graph → its part.
  OptimizeResult result_;
};

}  // namespace

std::optional<SearchResult> SearchMemo::find(uint64_t key) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto known = found_.find(key);
  if (known == found_.end()) return std::nullopt;
  return known->second;
}

void SearchMemo::keep(uint64_t key, const SearchResult& found) {
  SearchResult kept = found;
  kept.best = ir::Graph();
  const std::lock_guard<std::mutex> lock(mutex_);
  found_.emplace(key, std::move(kept));
}

const char* to_string(SearchMode mode) {
  switch (mode) {
    case SearchMode::kBacktrack: return "backtrack";
    case SearchMode::kSampling: return "sampling";
    case SearchMode::kExhaustive: return "exhaustive";
  }
  return "backtrack";
}

SearchMode search_mode_by_name(const std::string& name) {
  for (SearchMode mode : {SearchMode::kBacktrack, SearchMode::kSampling, SearchMode::kExhaustive}) {
    if (name == to_string(mode)) return mode;
  }
  throw Error("unknown search '" + name + "'; expected backtrack, sampling or exhaustive");
}

SearchResult run_search(SearchMode mode, const ir::Graph& input, const rewrite::Matcher& matcher,
                        const cost::CostModel& model, const SearchOptions& options) {
  switch (mode) {
    case SearchMode::kSampling: return sampling_search(input, matcher, model, options);
    case SearchMode::kExhaustive: return exhaustive_search(input, matcher, model, options);
    case SearchMode::kBacktrack: break;
  }
  return backtracking_search(input, matcher, model, options);
}

OptimizeResult optimize(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
                        const OptimizerOptions& options) {
  return Optimizer(input, matcher, model, options).run();
}

}  // namespace graphsub::search

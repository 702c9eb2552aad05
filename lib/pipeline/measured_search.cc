// Rounds of search and measurement, and the measured check of each changed part.
#include "pipeline/measured_search.h"

#include <algorithm>
#include <chrono>

#include "ir/clock.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"
#include "profile/ort_profiler.h"

namespace graphsub::pipeline {
namespace {

/// Times a changed part against the original part in the target. While the round's search still
/// has unmeasured signatures, its result will be searched again, so the judge approves without
/// measuring anything (its answer is thrown away with the round).
class MeasuredJudge : public search::PartJudge {
 public:
  MeasuredJudge(Measurer& measurer, const cost::CachedModel& model, const GuardOptions& options, bool last_round)
      : measurer_(measurer), model_(model), options_(options), last_round_(last_round) {}

  Verdict verdict(const ir::Graph& original, const ir::Graph& candidate, double predicted_ratio) override {
    if (!last_round_ && model_.pending_misses()) return {true, 1};
    const std::optional<cost::Comparison> measured = measurer_.compare(original, candidate, options_.deciding(options_.part));
    if (!measured) return {false, 1};
    const bool faster = clearly_faster(*measured, options_.min_gain);
    logger("search")->debug("part of {} nodes: the candidate takes {:.4f} of its time (predicted {:.4f}; spread "
                            "{:.4f}, {} runs): {}",
                            original.node_count(), measured->median_ratio, predicted_ratio, measured->spread,
                            measured->runs, faster ? "kept" : "rejected");
    return {faster, measured->median_ratio};
  }

 private:
  Measurer& measurer_;
  const cost::CachedModel& model_;
  const GuardOptions& options_;
  const bool last_round_;
};

/// Rounds of search and measurement on `input` (one pass of measured_optimize); `start` is
/// when the first pass began.
search::OptimizeResult search_rounds(const ir::Graph& input, const rewrite::Matcher& matcher,
                                     cost::CachedModel& model, Measurer& measurer,
                                     search::OptimizerOptions options, const GuardOptions& guard,
                                     MeasuredSearchStats& stats, int max_rounds, int pass, Clock::time_point start) {
  search::SplitMemo split;
  options.split_memo = &split;
  for (int round = 1;; ++round) {
    const double elapsed = seconds_since(start);
    const bool last = round == max_rounds || !measurer.can_measure() || elapsed >= options.search.time_limit_s;
    MeasuredJudge judge(measurer, model, guard, last);
    options.judge = &judge;
    const auto searched = Clock::now();
    search::OptimizeResult result = search::optimize(input, matcher, model, options);
    SearchRound& this_round = stats.each.emplace_back();
    this_round.pass = pass;
    this_round.search_seconds = seconds_since(searched);
    this_round.reused_parts = result.split.reused_parts;
    this_round.reused_seams = result.split.reused_seams;
    ++stats.rounds;
    std::vector<cost::Miss> misses = model.take_misses();
    stats.estimated = static_cast<int64_t>(misses.size());
    this_round.signatures = stats.estimated;
    if (misses.empty() || last) return result;
    logger("search")->info("pass {} round {} ({:.1f} s; {} part and {} seam searches from earlier rounds): measuring "
                           "{} operator signatures the search met",
                           pass, round, this_round.search_seconds, this_round.reused_parts, this_round.reused_seams,
                           misses.size());
    const auto measuring = Clock::now();
    measurer.measure(misses);
    this_round.measure_seconds = seconds_since(measuring);
  }
}

/// A symbolic dim of `graph` that `sizes` does not size, or "" when there is none.
std::string unsized_symbol(const ir::Graph& graph, const cost::DimSizes& sizes) {
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (!graph.has_value(id)) continue;
    const ir::Shape& shape = graph.value(id).type.shape;
    if (!shape.rank_known) continue;
    for (const ir::Dim& dim : shape.dims) {
      if (dim.is_symbolic() && !sizes.count(dim.symbol)) return dim.symbol;
    }
  }
  return "";
}

/// `next`, a further pass over `last`'s result as written, folded into `last`: its graph and
/// steps after `last`'s, the counters summed.
void take_pass(search::OptimizeResult& last, search::OptimizeResult next) {
  search::SearchResult& into = last.search;
  search::SearchResult& from = next.search;
  into.best = std::move(from.best);
  into.best_cost = from.best_cost;
  into.steps.insert(into.steps.end(), from.steps.begin(), from.steps.end());
  into.stop = from.stop;
  into.expanded += from.expanded;
  into.generated += from.generated;
  into.duplicates += from.duplicates;
  into.rejected += from.rejected;
  into.seconds += from.seconds;
  search::SplitStats& split = last.split;
  const search::SplitStats& more = next.split;
  split.parts = std::max(split.parts, more.parts);
  split.largest_part = std::max(split.largest_part, more.largest_part);
  split.disabled_matches += more.disabled_matches;
  split.resplit_parts += more.resplit_parts;
  split.reused_parts += more.reused_parts;
  split.reused_seams += more.reused_seams;
  split.seam_regions += more.seam_regions;
  split.seam_steps += more.seam_steps;
  split.judged += more.judged;
  split.rejected += more.rejected;
  split.retried += more.retried;
  split.unjudged += more.unjudged;
  split.split_seconds += more.split_seconds;
  split.parts_seconds += more.parts_seconds;
  split.seam_seconds += more.seam_seconds;
}

/// The op of a fused activation, as export writes it.
ir::OpKind activation_op(const std::string& activation) {
  if (activation == "relu") return ir::OpKind::kRelu;
  if (activation == "sigmoid") return ir::OpKind::kSigmoid;
  if (activation == "tanh") return ir::OpKind::kTanh;
  throw Error("internal error: unknown activation '" + activation + "'");
}

}  // namespace

ir::Graph written_form(const ir::Graph& graph) {
  ir::Graph written = onnx_io::fold_weight_nodes(graph);
  for (ir::NodeId id : written.node_ids()) {
    const ir::Node& node = written.node(id);
    if (node.op != ir::OpKind::kConv && node.op != ir::OpKind::kMatMul) continue;
    // Conv's residual Z (input 3) and MatMul's C (input 2), as in onnx_io's export.
    const std::size_t plain_inputs = node.op == ir::OpKind::kConv ? 3 : 2;
    const bool summand = node.inputs.size() > plain_inputs;
    const std::string activation = node.attrs.get_string("activation", "none");
    if (!summand && activation == "none") continue;
    const ir::ValueId output = node.outputs.at(0);
    const ir::TensorType type = written.value(output).type;
    std::vector<ir::ValueId> inputs = node.inputs;
    inputs.resize(std::min(inputs.size(), plain_inputs));
    ir::Attributes attrs = node.attrs;
    attrs.set("activation", std::string("none"));
    const ir::ValueId summand_value = summand ? node.inputs[plain_inputs] : ir::kNoValue;
    const std::string name = node.name;
    ir::ValueId last = written.node(written.add_node(node.op, std::move(inputs), {{type, ""}}, std::move(attrs), name)).outputs[0];
    if (summand) last = written.node(written.add_node(ir::OpKind::kAdd, {last, summand_value}, {{type, ""}})).outputs[0];
    if (activation != "none") {
      last = written.node(written.add_node(activation_op(activation), {last}, {{type, ""}})).outputs[0];
    }
    const std::string output_name = written.value(output).name;
    written.replace_all_uses(output, last);
    written.remove_node(id);
    written.set_name(last, output_name);
  }
  return written;
}

ir::Graph as_written(const ir::Graph& graph) {
  const profile::TempDir folder;
  const std::string path = folder.path() + "/written.onnx";
  onnx_io::export_model(graph, path);
  return onnx_io::import_model(path);
}

search::OptimizeResult search_in_passes(const ir::Graph& input, const cost::CostModel& model,
                                        const SearchPass& search_pass, double time_limit_s, int max_passes,
                                        const cost::DimSizes* sizes, PassStats& stats) {
  const auto start = Clock::now();
  search::OptimizeResult result = search_pass(input, 1);
  stats.passes = 1;
  stats.pass_steps = {result.search.steps.size()};
  uint64_t searched = input.structural_hash();  // the graph the last kept pass searched
  for (int pass = 2;; ++pass) {
    std::string& end = stats.last_pass_end;
    if (pass > max_passes) {
      end = "the passes' limit was reached";
      break;
    }
    if (stats.pass_steps.back() == 0) {
      end = "the last pass found nothing";
      break;
    }
    if (seconds_since(start) >= time_limit_s) {
      end = "the search's time limit has passed";
      break;
    }
    ir::Graph written;
    try {
      written = as_written(result.search.best);
    } catch (const Error& error) {
      // The result is still written below, where such an error is reported; only the pass is lost.
      end = std::string("the result could not be read back as written: ") + error.what();
      break;
    }
    if (written.structural_hash() == searched) {
      end = "the last pass's result, as written, is the graph it searched";
      break;
    }
    if (const std::string symbol = sizes ? unsized_symbol(written, *sizes) : ""; !symbol.empty()) {
      end = "the result as written has a dim ('" + symbol + "') the measuring instance did not size";
      break;
    }
    search::OptimizeResult next = search_pass(written, pass);
    stats.passes = pass;
    // Both ranked by the costs as they stand now (a measured pass may have measured more).
    const double before = model.graph_cost(result.search.best).time_ms;
    const double after = model.graph_cost(next.search.best).time_ms;
    logger("search")->info("pass {} searched the result as written: {} substitutions, {:.4g} ms against {:.4g} ms",
                           pass, next.search.steps.size(), after, before);
    if (next.search.steps.empty() || after >= before) {
      end = "pass " + std::to_string(pass) + "'s result was not estimated cheaper than the last one's";
      break;
    }
    searched = written.structural_hash();
    stats.pass_steps.push_back(next.search.steps.size());
    take_pass(result, std::move(next));
  }
  result.search.initial_cost = model.graph_cost(input);
  result.search.best_cost = model.graph_cost(result.search.best);
  return result;
}

search::OptimizeResult measured_optimize(const ir::Graph& input, const rewrite::Matcher& matcher,
                                         cost::CachedModel& model, Measurer& measurer,
                                         search::OptimizerOptions options, const GuardOptions& guard,
                                         MeasuredSearchStats& stats, int max_rounds, int max_passes) {
  const auto start = Clock::now();
  search::SearchMemo memo;  // for every pass and round: the model's measured answers stay as they are
  options.search_memo = &memo;
  std::vector<int64_t> estimated;  // of each pass's result
  const SearchPass rounds = [&](const ir::Graph& graph, int pass) {
    // Signatures met by costing the passes' results against each other were met, and counted,
    // by the searches that found those results.
    model.take_misses();
    search::OptimizeResult result =
        search_rounds(graph, matcher, model, measurer, options, guard, stats, max_rounds, pass, start);
    estimated.push_back(stats.estimated);
    return result;
  };
  search::OptimizeResult result = search_in_passes(input, model, rounds, options.search.time_limit_s, max_passes,
                                                   &measurer.sizes(), stats);
  model.take_misses();
  stats.estimated = estimated.at(stats.pass_steps.size() - 1);  // of the result kept
  return result;
}

}  // namespace graphsub::pipeline

// The optimize flow, from the input file to the written model and its report.
#include "pipeline/pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "cost/analytical_model.h"
#include "cost/cached_model.h"
#include "cost/device.h"
#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"
#include "pipeline/layout_forms.h"
#include "pipeline/measure_sizes.h"
#include "pipeline/measured_search.h"
#include "pipeline/narrowing.h"
#include "profile/ort_profiler.h"
#include "profile/ort_worker.h"
#include "rewrite/activation_forms.h"
#include "rewrite/grouped_attention.h"
#include "rewrite/rsqrt_form.h"
#include "rewrite/channel_shuffle.h"
#include "rewrite/view_chains.h"
#include "rewrite/einsum_lowering.h"
#include "rewrite/matcher.h"
#include "rewrite/shape_arithmetic.h"
#include "rules/parser.h"
#include "rules/shipped_rules.h"
#include "rules/taso_reader.h"

namespace graphsub::pipeline {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

/// Passes of the search at most (search_in_passes): the 32-branch block's measured search kept
/// three (90, 10 and 7 substitutions) and its fourth found nothing cheaper.
constexpr int kMaxPasses = 8;
/// The measured searches of one run at most: the first, and those that settle its cache (below).
constexpr int kMaxSearches = 4;

/// Seconds spent in each phase.
class PhaseTimer {
 public:
  void start() { begin_ = std::chrono::steady_clock::now(); }
  void stop(const std::string& phase) {
    times_[phase] += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }
  const std::map<std::string, double>& times() const { return times_; }

 private:
  std::chrono::steady_clock::time_point begin_;
  std::map<std::string, double> times_;
};

void ensure_distinct(const std::string& input, const std::string& output) {
  std::error_code error;
  bool same = fs::exists(output, error) && fs::equivalent(input, output, error);
  same = same || fs::weakly_canonical(input, error) == fs::weakly_canonical(output, error);
  if (same) throw Error("refusing to overwrite the input model '" + input + "'; choose another -o");
}

std::vector<rules::Rule> all_rules(const OptimizeRequest& request) {
  std::vector<rules::Rule> rules;
  auto append = [&rules](std::vector<rules::Rule> more) {
    for (rules::Rule& rule : more) rules.push_back(std::move(rule));
  };
  if (request.rule_files.empty()) append(rules::default_rules());
  for (const std::string& path : request.rule_files) {
    if (fs::path(path).extension() != ".pb") {
      append(rules::read_rules_file(path));
      continue;
    }
    rules::TasoRules taso = rules::read_taso_rules(path);
    logger("cli")->info("{}: {} TASO rules read, {} skipped", path, taso.rules.size(), taso.skipped.size());
    append(std::move(taso.rules));
  }
  return rules;
}

Json cost_json(const cost::Cost& cost) {
  return {{"time_ms", cost.time_ms}, {"flops", cost.flops}, {"bytes", cost.bytes}, {"launches", cost.launches}};
}

Json timing_json(const std::optional<profile::Timing>& timing) {
  if (!timing) return nullptr;
  Json json = {{"median_ms", timing->median_ms}, {"spread_ms", timing->spread_ms}, {"runs", timing->runs}};
  if (!timing->samples_ms.empty()) {
    json["p10_ms"] = timing->p10_ms;
    json["p90_ms"] = timing->p90_ms;
  }
  return json;
}

Json split_json(const search::SplitStats& split, std::size_t threshold) {
  return {{"threshold", threshold},
          {"parts", split.parts},
          {"largest_part", split.largest_part},
          {"disabled_matches", split.disabled_matches},
          {"resplit_parts", split.resplit_parts},
          {"reused_part_searches", split.reused_parts},
          {"reused_seam_searches", split.reused_seams},
          {"seam_regions", split.seam_regions},
          {"seam_substitutions", split.seam_steps},
          {"measured_parts", split.judged},
          {"rejected_parts", split.rejected},
          {"parts_searched_again", split.retried},
          {"unjudged_parts", split.unjudged},
          {"seconds", {{"split", split.split_seconds}, {"parts", split.parts_seconds}, {"seams", split.seam_seconds}}}};
}

/// The rules of `steps` that are in `unverified`, each once, sorted.
std::vector<std::string> unverified_used(const std::vector<search::AppliedStep>& steps,
                                         const std::set<std::string>& unverified) {
  std::set<std::string> used;
  for (const search::AppliedStep& step : steps) {
    if (unverified.count(step.rule)) used.insert(step.rule);
  }
  return {used.begin(), used.end()};
}

Json search_json(const search::OptimizeResult& optimized, const OptimizeRequest& request, std::size_t rule_count,
                 bool measured, const std::set<std::string>& unverified) {
  const search::SearchResult& result = optimized.search;
  Json steps = Json::array();
  for (const search::AppliedStep& step : result.steps) {
    steps.push_back({{"rule", step.rule}, {"where", step.where}, {"proved", unverified.count(step.rule) == 0}});
  }
  return {{"rules", rule_count},
          {"unverified_rules_used", unverified_used(result.steps, unverified)},
          {"mode", search::to_string(request.optimizer.mode)},
          {"cost_basis", measured ? "sum of measured operator times (misses estimated)" : "analytical estimate"},
          {"cost_before", cost_json(result.initial_cost)},
          {"cost_after", cost_json(result.best_cost)},
          {"substitutions", steps},
          {"stop_reason", search::to_string(result.stop)},
          {"expanded", result.expanded},
          {"generated", result.generated},
          {"duplicates", result.duplicates},
          {"rejected", result.rejected},
          {"split", split_json(optimized.split, request.optimizer.split_threshold)}};
}

Json import_json(const onnx_io::ImportStats& stats) {
  return {{"opset", stats.opset},
          {"modelled_nodes", stats.modelled_nodes},
          {"opaque_nodes", stats.opaque_nodes},
          {"opaque_reasons", stats.opaque_reasons}};
}

Json target_json(const Target& target) {
  Json json = {{"name", target.spec.name},
               {"ranking", target.measurer ? "measured" : "estimated"},
               {"description", target.spec.description}};
  if (!target.note.empty()) json["note"] = target.note;
  if (target.measurer) {
    json["setup"] = cost::describe(target.measurer->cache().header());
    json["cost_cache"] = target.measurer->cache_path();
    json["measuring"] = target.measurer->can_measure();
  }
  return json;
}

/// The symbolic dims of the graph's inputs, in the order the inputs name them.
std::vector<std::string> input_symbols(const ir::Graph& graph) {
  std::vector<std::string> symbols;
  for (ir::ValueId input : graph.inputs()) {
    for (const ir::Dim& dim : graph.value(input).type.shape.dims) {
      if (dim.is_symbolic() && std::find(symbols.begin(), symbols.end(), dim.symbol) == symbols.end()) {
        symbols.push_back(dim.symbol);
      }
    }
  }
  return symbols;
}

/// "batch=1, sequence=1": the sizes the inputs' symbolic dims take at `sizes` (1 where not
/// given), in the order the inputs name them; empty when they have none.
std::string input_sizes_text(const ir::Graph& graph, const cost::DimSizes& sizes) {
  return pipeline::sizes_text(input_sizes(graph, sizes));
}

/// The inputs' symbolic dims that `sizes` does not give.
std::vector<std::string> sizes_not_given(const ir::Graph& graph, const cost::DimSizes& sizes) {
  std::vector<std::string> missing;
  for (const std::string& symbol : input_symbols(graph)) {
    if (!sizes.count(symbol)) missing.push_back(symbol);
  }
  return missing;
}

/// Says at which sizes (`at`) a measured target times the model, and warns when it picked some
/// of them (`missing`: 1, for want of --dim): a choice measured at one size may not hold at
/// another (a BERT export is timed at one token then, not the 32 or 512 it runs at).
void announce_measuring_sizes(const InputSizes& at_sizes, const std::vector<std::string>& missing) {
  const std::string at = sizes_text(at_sizes);
  if (at.empty()) return;
  if (missing.empty()) {
    logger("cli")->info("measuring at {}", at);
    return;
  }
  const std::string which = missing.size() == 1 ? "the size of " + missing[0] + " was"
                                                : fmt::format("the sizes of {} were", fmt::join(missing, ", "));
  logger("cli")->warn("measuring at {}: {} not given, so 1 is taken; what is faster at one size may not be at "
                      "another: give the sizes the model will run at (--dim NAME=SIZE or --input-shape "
                      "NAME:D1,D2,...)",
                      at, which);
}

/// "the input cannot run (...); it ran with ...": why the input could not run at `sizes`, and
/// what to do (sizes_hint).
std::string cannot_run_at(const ir::Graph& graph, const cost::DimSizes& sizes, const std::string& error) {
  return "the input cannot run (" + error + ")" + sizes_hint(graph, sizes, error);
}

/// What the measuring instance could not size statically, and what its run told.
Json instance_json(const InstanceRun& run) {
  Json json = {{"values_depending_on_data", run.unresolved},
               {"values_sized_by_a_run", run.sized},
               {"integer_values_computed_by_a_run", run.computed},
               {"symbols_measured_at_1", run.unsized}};
  if (!run.error.empty()) json["run_error"] = run.error;
  return json;
}

/// What the passes of the search did (search_in_passes).
Json passes_json(const PassStats& stats) {
  return {{"run", stats.passes},
          {"substitutions_of_each_kept", stats.pass_steps},
          {"why_no_further_pass", stats.last_pass_end}};
}

/// Node signature lookups of a run's searches, all of them.
struct Lookups {
  int64_t hits = 0;
  int64_t misses = 0;
};

Json measurement_json(const Measurer& measurer, const MeasuredSearchStats& search, const Lookups& lookups) {
  const MeasureStats& stats = measurer.stats();
  Json rounds = Json::array();
  for (const SearchRound& round : search.each) {
    rounds.push_back({{"pass", round.pass},
                      {"search_seconds", round.search_seconds},
                      {"reused_part_searches", round.reused_parts},
                      {"reused_seam_searches", round.reused_seams},
                      {"signatures_missed", round.signatures},
                      {"measure_seconds", round.measure_seconds}});
  }
  return {{"rounds", search.rounds},
          {"passes", passes_json(search)},
          {"each_round", rounds},
          {"node_signatures_measured", stats.nodes_measured},
          {"node_signatures_failed", stats.nodes_failed},
          {"node_signatures_still_estimated", search.estimated},
          {"comparisons_measured", stats.comparisons_measured},
          {"comparison_cache_hits", stats.comparison_hits},
          {"comparisons_reused", stats.comparisons_reused},
          {"comparisons_between_candidates", stats.comparisons_derived},
          {"comparisons_unmeasured", stats.comparisons_unmeasured},
          {"timings_one_session_at_a_time", measurer.timings_one_at_a_time()},
          {"node_lookups", {{"hits", lookups.hits}, {"misses", lookups.misses}}},
          {"instance", instance_json(measurer.instance_run())},
          {"instance_runs_read_from_cache", stats.observations_cached},
          {"seconds", stats.seconds}};
}

Json check_json(const runtime::CheckReport& report) {
  Json outputs = Json::array();
  for (const runtime::OutputCheck& output : report.outputs) {
    outputs.push_back({{"name", output.name},
                       {"max_abs_error", output.max_abs_error},
                       {"max_rel_error", output.max_rel_error},
                       {"passed", output.passed}});
    if (output.runtime_variation >= 0) {
      outputs.back()["runtime_variation"] = output.runtime_variation;
      outputs.back()["within_runtime_variation"] = output.within_runtime_variation;
    }
  }
  return {{"passed", report.passed()}, {"executor", report.executor}, {"outputs", outputs}};
}

/// Shape arithmetic resolved and weight-only nodes folded, round after round until one changes
/// nothing: folding can compute what the resolution cannot (torch's F.pad flips and transposes
/// its pads, a 2-D integer tensor), and the next round then types the node that reads it (the
/// Pad's output dims) and resolves the Shapes of that. `folded_nodes` counts the nodes folding
/// removed, `opaque_modelled` the opaque nodes modelled, `rounds` the rounds run.
ir::Graph resolved_and_folded(const ir::Graph& weights, rewrite::ShapeArithmeticStats& shapes,
                              std::size_t& folded_nodes, std::size_t& opaque_modelled, int& rounds) {
  // One Pad typed per round where each Pad's pads depend on the one before (timm's "same"
  // padding of tf_efficientnet_b0: 11 rounds; Swin-T's stages: 10); a round costs a sweep.
  constexpr int kMaxRounds = 64;
  ir::Graph graph = weights;
  for (rounds = 1; rounds <= kMaxRounds; ++rounds) {
    rewrite::ShapeArithmeticStats stats;
    std::size_t modelled = 0;
    const ir::Graph resolved =
        onnx_io::model_opaque_nodes(rewrite::resolve_shape_arithmetic(graph, &stats), &modelled);
    ir::Graph folded = onnx_io::fold_weight_nodes(resolved);
    const std::size_t folded_now = resolved.node_count() - folded.node_count();
    folded_nodes += folded_now;
    opaque_modelled += modelled;
    shapes += stats;
    graph = std::move(folded);
    if (!stats.changed() && modelled + folded_now == 0) break;
  }
  rounds = std::min(rounds, kMaxRounds);
  return graph;
}

std::string format(const char* pattern, double a, double b) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

/// True when `candidate`, once written and read back (a fused activation is written as its own
/// node again, weight-only nodes are folded), is the model `input` was read from, names aside:
/// measuring one against the other would only measure noise.
bool written_as_input(const ir::Graph& input, const ir::Graph& candidate) {
  // written_form is what export writes, so where it is the input, so is the file; where it is
  // not, export's other forms (graphsub's own ops as ONNX ops) may still make it so. The file
  // round trip copies every weight: VGG-16 peaked at 1.6 GB for it, its result only fused Relus.
  const uint64_t expected = input.structural_hash();
  return written_form(candidate).structural_hash() == expected || as_written(candidate).structural_hash() == expected;
}

}  // namespace

std::string sizes_text(const InputSizes& sizes) {
  std::string text;
  for (const auto& [symbol, size] : sizes) text += (text.empty() ? "" : ", ") + symbol + "=" + std::to_string(size);
  return text;
}

Json sizes_json(const InputSizes& sizes) {
  Json json = Json::object();
  for (const auto& [symbol, size] : sizes) json[symbol] = size;
  return json;
}

InputSizes input_sizes(const ir::Graph& graph, const std::map<std::string, int64_t>& sizes) {
  InputSizes taken;
  for (const std::string& symbol : input_symbols(graph)) {
    const auto given = sizes.find(symbol);
    taken.emplace_back(symbol, given == sizes.end() ? 1 : given->second);
  }
  return taken;
}

std::vector<std::string> warn_unnamed_dims(const std::vector<const ir::Graph*>& graphs,
                                           const std::vector<std::string>& paths,
                                           const std::map<std::string, int64_t>& dims) {
  std::vector<std::string> named;
  for (const ir::Graph* graph : graphs) {
    for (const std::string& symbol : input_symbols(*graph)) {
      if (std::find(named.begin(), named.end(), symbol) == named.end()) named.push_back(symbol);
    }
  }
  std::vector<std::string> unnamed;
  for (const auto& [symbol, size] : dims) {
    if (std::find(named.begin(), named.end(), symbol) != named.end()) continue;
    unnamed.push_back(symbol);
    logger("cli")->warn("--dim {}={} names no symbolic dim of the inputs of {} ({}): ignored", symbol, size,
                        fmt::join(paths, " or "),
                        named.empty() ? "they have none" : fmt::format("they have {}", fmt::join(named, ", ")));
  }
  return unnamed;
}

std::string sizes_hint(const ir::Graph& graph, const std::map<std::string, int64_t>& sizes, const std::string& error) {
  const std::string at = input_sizes_text(graph, sizes);
  // A model the runtime cannot load (an operator it lacks) fails at every size, and one that
  // crashes it is no matter of sizes.
  if (at.empty() || error.find("cannot load") != std::string::npos ||
      error.find("killed by signal") != std::string::npos) {
    return {};
  }
  return "; it ran with " + at +
         ": give the sizes it runs at with --dim NAME=SIZE (an exporter may have "
         "written a traced size into the model, as the TorchScript exporter does in attention's reshapes)";
}

std::map<std::string, int64_t> sizes_of_input_shapes(const ir::Graph& graph,
                                                     const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                     const std::map<std::string, int64_t>& dims) {
  std::map<std::string, int64_t> sizes = dims;
  for (const auto& [name, shape] : input_shapes) {
    const ir::Value* input = nullptr;
    for (ir::ValueId id : graph.inputs()) {
      if (graph.value(id).name == name) input = &graph.value(id);
    }
    if (!input) throw Error("--input-shape: the model has no graph input named '" + name + "'");
    const ir::Shape& declared = input->type.shape;
    if (!declared.rank_known || declared.rank() != shape.size()) {
      throw Error("--input-shape: input '" + name + "' is " + ir::to_string(input->type) + ", not of rank " +
                  std::to_string(shape.size()));
    }
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
      const ir::Dim& dim = declared.dims[axis];
      const std::string where = "--input-shape: input '" + name + "' axis " + std::to_string(axis);
      if (dim.is_known()) {
        if (dim.value != shape[axis]) throw Error(where + " has size " + std::to_string(dim.value) + ", not " + std::to_string(shape[axis]));
        continue;
      }
      if (!dim.is_symbolic()) throw Error(where + " has no name, so graphsub cannot size it");
      const auto [entry, added] = sizes.emplace(dim.symbol, shape[axis]);
      if (!added && entry->second != shape[axis]) {
        throw Error(where + " is '" + dim.symbol + "', already given size " + std::to_string(entry->second));
      }
    }
  }
  return sizes;
}

namespace {

/// One optimize run's state between the phases.
class Run {
 public:
  explicit Run(const OptimizeRequest& request) : request_(request) {}

  OptimizeOutcome go() {
    ensure_distinct(request_.input, request_.output);
    timer_.start();
    original_ = onnx_io::import_model(request_.input, {}, &import_stats_);
    timer_.stop("import");
    warn_unnamed_dims({&original_}, {request_.input}, request_.check.dims);
    if (!request_.input_shapes.empty()) {
      request_.check.dims = sizes_of_input_shapes(original_, request_.input_shapes, request_.check.dims);
      request_.target.sizes = request_.check.dims;
    }
    logger("cli")->info("read {}: {} nodes ({} opaque)", request_.input, original_.node_count(),
                        import_stats_.opaque_nodes);
    // The check's integer inputs stay valid indices of the tables they index (a caller's own
    // bounds, a test's, are kept).
    if (request_.check.index_bounds.empty()) request_.check.index_bounds = runtime::index_bounds(original_);
    if (request_.check.samples > 0) run_check_reference();
    const SearchRules searched = search_rules(request_);
    const std::vector<rules::Rule>& rules = searched.rules;
    for (const rules::Rule& rule : rules) {
      if (!rules::proved_under_shipped_axioms(rule)) unverified_.insert(rule.name);
    }
    const rewrite::Matcher matcher(rules);
    target_ = open_target(request_.target);
    logger("cli")->info("target {}: graphs ranked by {}", target_.spec.name,
                        target_.measurer ? "times measured on this machine (" +
                                               cost::describe(target_.measurer->cache().header()) + ")"
                                         : "the analytical estimate (not measured)");
    if (target_.measurer) {
      measured_at_ = input_sizes(original_, target_.measurer->sizes());
      sizes_not_given_ = sizes_not_given(original_, target_.measurer->sizes());
      announce_measuring_sizes(measured_at_, sizes_not_given_);
    }
    timer_.start();
    rewrite::ShapeArithmeticStats& shapes = shapes_;
    // Folded before as well as after, so shape arithmetic reads what weight-only nodes compute.
    const ir::Graph weights = onnx_io::fold_weight_nodes(original_);
    std::size_t folded_nodes = original_.node_count() - weights.node_count();
    ir::Graph folded = resolved_and_folded(weights, shapes, folded_nodes, opaque_modelled_, shape_rounds_);
    folded = narrowed(std::move(folded));
    folded = rewrite::lower_einsums(folded, &einsums_lowered_);
    if (einsums_lowered_ > 0) logger("cli")->info("{} Einsums written as the MatMul they are", einsums_lowered_);
    folded = rewrite::rewrite_channel_shuffles(folded, &shuffles_);
    if (shuffles_changed() > 0) {
      logger("cli")->info("channel shuffles: {} written as Gathers, {} folded into convolutions", shuffles_.as_gather,
                          shuffles_.into_convolutions);
    }
    folded = rewrite::simplify_view_chains(folded, &view_chains_);
    if (view_chains_.chains > 0) {
      logger("cli")->info("data movement: {} chains written in {} fewer nodes", view_chains_.chains,
                          view_chains_.nodes_removed);
    }
    folded = rewrite::write_activations(folded, &activations_);
    if (activations_.total() > 0) {
      logger("cli")->info("activations: {} element-wise chains written as HardSigmoid, {} products as HardSwish, {} "
                          "tanh GELUs in the form onnxruntime fuses",
                          activations_.hard_sigmoid, activations_.hard_swish, activations_.tanh_gelu);
    }
    folded = rewrite::write_rsqrt_as_division(folded, &rsqrt_divisions_);
    if (rsqrt_divisions_ > 0) {
      logger("cli")->info("{} reciprocals of a square root written as Div(1, Sqrt)", rsqrt_divisions_);
    }
    folded = rewrite::group_repeated_heads(folded, &grouped_);
    if (grouped_.repeats > 0) {
      logger("cli")->info("grouped-query attention: {} repeated key/value heads no longer copied, {} products grouped",
                          grouped_.repeats, grouped_.products);
    }
    if (Measurer* measurer = target_.measurer.get()) {
      const Observer observe = [measurer](const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                                          const cost::DimSizes& sizes) {
        return measurer->observe(instance, values, sizes);
      };
      measurer->set_instance(measuring_instance(folded, measurer->sizes(), observe));
      // An input the target cannot run at these sizes (a size an exporter fixed, a custom
      // operator) leaves nothing to measure against: the search is not worth its time.
      if (std::optional<std::string> error = measurer->run_error(original_, request_.input)) {
        input_error_ = cannot_run_at(original_, measurer->sizes(), *error);
      }
    }
    timer_.stop("fold");
    logger("cli")->info("shape arithmetic resolved ahead of time: {} values made constant, {} reshape and {} expand "
                        "targets made literal, {} computed shapes read from input dims, {} operands read as "
                        "attributes, {} nodes removed, {} opaque nodes modelled",
                        shapes.constants, shapes.reshapes, shapes.expands, shapes.compacted, shapes.attribute_forms,
                        shapes.nodes_removed, opaque_modelled_);
    logger("cli")->info("{} weight-only nodes computed before the search", folded_nodes);
    outcome_.report = {{"input", request_.input},          {"output", request_.output},
                       {"import", import_json(import_stats_)}, {"nodes_before", original_.node_count()},
                       {"target", target_json(target_)}, {"dims", request_.check.dims},
                       {"narrowing", {{"rewrites", narrowings_}}},
                       {"einsums_as_matmul", einsums_lowered_},
                       {"channel_shuffles", {{"as_gather", shuffles_.as_gather},
                                             {"into_convolutions", shuffles_.into_convolutions}}},
                       {"view_chains", {{"chains", view_chains_.chains}, {"nodes_removed", view_chains_.nodes_removed}}},
                       {"activations", {{"hard_sigmoid", activations_.hard_sigmoid},
                                        {"hard_swish", activations_.hard_swish},
                                        {"tanh_gelu", activations_.tanh_gelu}}},
                       {"rsqrt_as_division", rsqrt_divisions_},
                       {"grouped_attention", {{"repeats_removed", grouped_.repeats},
                                              {"products_grouped", grouped_.products}}},
                       {"shape_arithmetic", {{"values_made_constant", shapes.constants},
                                             {"reshape_targets_made_literal", shapes.reshapes},
                                             {"expand_targets_made_literal", shapes.expands},
                                             {"shapes_read_from_input_dims", shapes.compacted},
                                             {"operands_read_as_attributes", shapes.attribute_forms},
                                             {"nodes_removed", shapes.nodes_removed},
                                             {"opaque_nodes_modelled", opaque_modelled_},
                                             {"rounds", shape_rounds_}}},
                       {"rules", {{"searched", rules.size()},
                                  {"allow_unverified", request_.allow_unverified},
                                  {"unverified_left_out", searched.unverified_left_out}}}};
    if (target_.measurer) {
      outcome_.report["target"]["measured_at"] = sizes_json(measured_at_);
      outcome_.report["target"]["sizes_not_given"] = sizes_not_given_;
    }
    const ir::Graph& written = !target_.measurer   ? search_estimated(folded, matcher, rules.size())
                               : input_error_.empty() ? settled_search(folded, matcher, rules.size())
                                                      : unmeasurable_input();
    const std::vector<std::string> used = unverified_used(optimized_.search.steps, unverified_);
    if (&written != &original_ && !used.empty()) {
      outcome_.summary += fmt::format("\nunverified rules used (--allow-unverified): {}", fmt::join(used, ", "));
    }
    timer_.start();
    write(written);
    timer_.stop("export");
    if (target_.measurer) target_.measurer->save();
    if (request_.check.samples > 0) check_output();
    outcome_.report["seconds"] = timer_.times();
    return std::move(outcome_);
  }

 private:
  /// The input, written unchanged without a search, when the target cannot run it at the
  /// measuring sizes (input_error_): no candidate could be measured against it.
  const ir::Graph& unmeasurable_input() {
    logger("cli")->warn("{}: nothing can be measured, so the input is written unchanged", input_error_);
    outcome_.report["measurement"] = measurement_json(*target_.measurer, {}, lookups_);
    outcome_.report["result"] = {{"written", "input"},
                                 {"reason", input_error_ + ": nothing can be measured, so the input is kept"}};
    outcome_.summary = request_.output + ": the input, unchanged; " + input_error_ + ": nothing could be measured";
    return original_;
  }

  /// Searches with the analytical estimate; the best graph is written as found.
  const ir::Graph& search_estimated(const ir::Graph& folded, const rewrite::Matcher& matcher, std::size_t rules) {
    const cost::AnalyticalModel model(cost::device_by_name(target_.spec.device));
    timer_.start();
    search::SearchMemo memo;  // for every pass
    search::OptimizerOptions options = request_.optimizer;
    options.search_memo = &memo;
    const SearchPass once = [&](const ir::Graph& graph, int) { return search::optimize(graph, matcher, model, options); };
    PassStats passes;
    optimized_ = search_in_passes(folded, model, once, request_.optimizer.search.time_limit_s, kMaxPasses, nullptr,
                                  passes);
    timer_.stop("search");
    search_passes_ = static_cast<int>(passes.pass_steps.size());
    const search::SearchResult& result = optimized_.search;
    outcome_.report["search"] = search_json(optimized_, request_, rules, false, unverified_);
    outcome_.report["search"]["passes"] = passes_json(passes);
    const bool unchanged = result.steps.empty() && !rewritten_before_search() && folded.node_count() == original_.node_count();
    const bool alike = !unchanged && written_as_input(original_, result.best);
    const char* written = unchanged || alike ? "input" : changed_by_search_or_narrowing(result) ? "optimized" : "folded input";
    outcome_.report["result"] = {{"written", written},
                                 {"reason", alike ? "ranked by the analytical estimate; the result is the input once "
                                                    "written, so the input is kept"
                                                  : "ranked by the analytical estimate; nothing was measured"}};
    outcome_.summary = request_.output + ": " + changes(result.steps.size()) + "; " +
                       format("estimated %.4g ms -> %.4g ms", result.initial_cost.time_ms, result.best_cost.time_ms) +
                       " on " + target_.spec.name + " (an estimate, not measured)";
    if (alike) {
      outcome_.summary += "; written as ONNX that is the input again (e.g. a fused activation is written as its own "
                          "node), so the input is kept";
    }
    return unchanged || alike ? original_ : result.best;
  }

  /// search_measured until a search adds nothing to the cost cache (at most kMaxSearches). A
  /// search that measured something decided in part before its measurements (a round's last
  /// misses, a later pass's signatures that an earlier pass met estimated), so a rerun reading
  /// the saved cache may decide otherwise: the 32-branch block's cold run left 56 signatures to
  /// its first warm run, which wrote another model. The search after it reads the cache as that
  /// rerun would (Measurer::start_run), and once one measures nothing, a rerun with this cache
  /// writes these bytes. Usually the second search is the last, and costs what a warm run does.
  /// What counts is what the search added (its signatures and its parts' comparisons), not what
  /// the whole-graph checks after it timed: those read only their own comparisons, which a rerun
  /// finds in the cache and decides on alike. So a search that measured something skips those
  /// checks (another search follows, whose result they would have to time anyway where it
  /// differs: RT-DETR-L's first guard timed five graphs of a second each that the second search
  /// no longer had).
  const ir::Graph& settled_search(const ir::Graph& folded, const rewrite::Matcher& matcher, std::size_t rules) {
    Measurer& measurer = *target_.measurer;
    Json added = Json::array();  // cache entries each search added (before the checks)
    for (int searches = 1;; ++searches) {
      if (searches > 1) {
        measurer.start_run();
        forget_search();
      }
      const std::size_t before = measurer.cache().size();
      std::size_t searched = 0;  // what the search added, set by search_measured
      const ir::Graph* written = search_measured(folded, matcher, rules, searches < kMaxSearches, before, searched);
      added.push_back(searched);
      const bool settled = searched == 0;  // always so without a profiler
      if (settled || searches == kMaxSearches) {
        outcome_.report["measurement"]["searches"] = {{"run", searches},
                                                      {"cache_entries_added_by_each", added},
                                                      {"settled", settled}};
        if (searches > 1) {
          logger("cli")->info("searched {} times: the last search read the cache as a rerun would{}", searches,
                              settled ? " and measured nothing more" : "");
        }
        if (!settled) {
          logger("cli")->warn("the last of {} searches still measured {} cost cache entries: a rerun with this cache "
                              "may write another model",
                              searches, added.back().get<std::size_t>());
        }
        return *written;
      }
    }
  }

  /// Drops what search_measured made of the last search, for another.
  void forget_search() {
    optimized_ = {};
    without_value_info_ = {};
    layout_formed_ = {};
    result_forms_.reset();
    result_forms_made_ = false;
    result_forms_applied_ = 0;
    search_passes_ = 1;
  }

  /// Searches with measured costs, then keeps the result only if the target runs it faster.
  /// `searched` is set to the cost cache entries the search added (the cache held `before`);
  /// with `may_search_again`, a search that added some returns null before the checks, since
  /// settled_search searches again.
  const ir::Graph* search_measured(const ir::Graph& folded, const rewrite::Matcher& matcher, std::size_t rules,
                                   bool may_search_again, std::size_t before, std::size_t& searched) {
    Measurer& measurer = *target_.measurer;
    cost::CachedModel model(measurer.cache(), measurer.backend(), cost::device_by_name(target_.spec.device),
                            measurer.sizes());
    model.set_prices_written_chains(target_.spec.times_written_model);
    MeasuredSearchStats stats;
    timer_.start();
    optimized_ = measured_optimize(folded, matcher, model, measurer, request_.optimizer, request_.guard, stats, 10,
                                   kMaxPasses);
    timer_.stop("search");
    searched = measurer.cache().size() - before;
    lookups_.hits += model.hits();  // the checks below look nothing up in the model
    lookups_.misses += model.misses();
    if (may_search_again && searched > 0) {
      logger("cli")->info("the search measured {} cost cache entries: searching again before the checks", searched);
      return nullptr;
    }
    search_passes_ = static_cast<int>(stats.pass_steps.size());
    const search::SearchResult& result = optimized_.search;
    GuardVerdict verdict;
    timer_.start();
    if (result.steps.empty() && !rewritten_before_search() && folded.node_count() == original_.node_count()) {
      verdict.reason = "the search found nothing faster and there was nothing to fold, so the input is kept";
    } else if (written_as_input(original_, result.best)) {
      verdict.reason = "the optimized graph is the input once written (its rewrites are undone on export, e.g. a "
                       "fused activation written as its own node again), so the input is kept";
    } else {
      // Every graph the checks below may compare with the input, timed together in one request
      // (the input's runs shared): the result, the result without value_info, the input with
      // the layout forms (kept when the result is not), the input with its Einsums as MatMul,
      // and the result with the layout forms, which is also compared with the result and the
      // result without value_info over the same rounds (the forms' check of either, should it
      // be kept). The checks then find them in the cache.
      std::vector<const ir::Graph*> together = {&result.best};
      if (tries_before_search(folded)) together.push_back(&folded);
      if (tries_without_value_info(result.best)) {
        without_value_info_ = with_value_info(result.best, false);
        together.push_back(&without_value_info_);
      }
      if (const std::optional<ir::Graph>& forms = input_layout_formed()) together.push_back(&*forms);
      if (const std::optional<ir::Graph>& lowered = input_einsums_lowered()) together.push_back(&*lowered);
      std::vector<std::pair<std::size_t, std::size_t>> between;
      if (const std::optional<ir::Graph>& forms = result_layout_formed()) {
        const bool bare = together.size() > 1 && together[1] == &without_value_info_;
        together.push_back(&*forms);
        between.emplace_back(0, together.size() - 1);  // the forms against the result
        if (bare) between.emplace_back(1, together.size() - 1);  // and against it without value_info
      }
      if (together.size() > 1) {
        measurer.compare_all(original_, together, request_.guard.deciding(request_.guard.whole), request_.input, between);
      }
      GuardOptions options = request_.guard;
      options.time_again = !alternative_clearly_faster(measurer, folded);  // see GuardOptions::time_again
      verdict = guard(original_, result.best, measurer, options, {}, request_.input);
    }
    const ir::Graph* best = &result.best;
    Json bare_json;
    if (verdict.comparison && tries_without_value_info(result.best)) {
      // The same graph exported without value_info: measured, and kept when it is the faster
      // (onnxruntime's fusions depend on value_info; the CUDA executor reads none). Made above,
      // where it was timed with the result.
      bare_json = take_if_faster(without_value_info_, "the optimized graph without value_info", measurer, verdict, best);
    }
    Json lowered_json;
    if (const std::optional<ir::Graph>& lowered = input_einsums_lowered()) {
      // The input with its Einsums as MatMul and nothing else changed: onnxruntime may run a graph
      // whose shape arithmetic was resolved slower (its memory planning differs; MaxViT-T), which
      // would hide what the MatMuls gain.
      lowered_json = take_if_faster(*lowered, "the input with its Einsums as MatMul", measurer, verdict, best);
      lowered_json["einsums"] = einsums_lowered_;
    }
    Json before_json;
    if (verdict.comparison && tries_before_search(folded)) {
      // The graph the search started from: the fixed rewrites alone (activation chains, view
      // chains, channel shuffles, ...), kept when the search's additions made the result slower.
      before_json = take_if_faster(folded, "the graph before the search", measurer, verdict, best);
    }
    Json formed_json;
    if (!verdict.keep_candidate && verdict.comparison) {
      if (const std::optional<ir::Graph>& forms = result_layout_formed()) {
        // The result with the layout forms, against the input (timed with the result above).
        // Only now, when nothing else is kept: with_layout_forms below tries the forms on a
        // kept result against that result. Resolving the shape arithmetic shows onnxruntime the
        // shapes of a transformer's residual sums, so it fuses them into its SkipLayerNormalization,
        // slower on this CPU than the Add and LayerNormalization it replaces; the Sum form keeps
        // them apart (BERT-base at 32 tokens, by hand: the result alone 1.021x slower than the
        // input, with the Sum forms 1.015x faster; README.md, "Layout forms").
        formed_json = take_if_faster(*forms, "the optimized graph with the layout forms", measurer, verdict, best);
        formed_json["applied"] = result_forms_applied_;
      }
    }
    timer_.stop("guard");
    logger("cli")->info("{}", verdict.reason);
    outcome_.report["search"] = search_json(optimized_, request_, rules, true, unverified_);
    outcome_.report["measurement"] = measurement_json(measurer, stats, lookups_);
    Json written = {{"written", !verdict.keep_candidate                     ? "input"
                                : changed_by_search_or_narrowing(result) ? "optimized"
                                                                         : "folded input"},
                    {"reason", verdict.reason},
                    {"measured_before", timing_json(verdict.before)},
                    {"measured_after", timing_json(verdict.after)}};
    if (verdict.comparison) {
      written["measured_ratio"] = ratio_json(*verdict.comparison);
      written["measured_speedup"] = claimed_speedup(*verdict.comparison);
    }
    if (!bare_json.is_null()) written["without_value_info"] = bare_json;
    if (!lowered_json.is_null()) written["input_with_einsums_as_matmul"] = lowered_json;
    if (!before_json.is_null()) written["before_search"] = before_json;
    const bool before_search = verdict.keep_candidate && best == &folded;
    if (before_search) written["written"] = "before the search";
    if (!formed_json.is_null()) written["with_layout_forms"] = formed_json;
    if (verdict.keep_candidate && is_input_lowered(best)) written["written"] = "input with Einsums as MatMul";
    const bool formed_result = verdict.keep_candidate && result_forms_ && best == &*result_forms_;
    if (formed_result) written["written"] = "optimized with layout forms";
    outcome_.summary = summary(verdict, result.steps.size());
    if (best == &without_value_info_ && verdict.keep_candidate) outcome_.summary += " (written without value_info)";
    if (verdict.keep_candidate && is_input_lowered(best)) {
      outcome_.summary += fmt::format(" (written as the input with its {} Einsums as MatMul: that measured faster than "
                                      "the optimized graph)", einsums_lowered_);
    }
    if (before_search) {
      outcome_.summary += " (written as the graph before the search, its fixed rewrites alone: that measured faster "
                          "than the search's result)";
    }
    if (formed_result) {
      outcome_.summary += fmt::format(" (with {} layout form{}: the optimized graph alone was not measured faster)",
                                      result_forms_applied_, result_forms_applied_ == 1 ? "" : "s");
      written["layout_forms"] = {{"applied", result_forms_applied_}, {"kept", true}, {"reason", verdict.reason}};
      outcome_.report["result"] = written;
      return best;
    }
    const ir::Graph& chosen = verdict.keep_candidate ? *best : original_;
    const ir::Graph& formed = with_layout_forms(chosen, measurer, written);
    outcome_.report["result"] = written;
    return &formed;
  }

  /// Whether an alternative to the result (the graph before the search, the result without
  /// value_info, the input with its Einsums as MatMul), timed in the guard's request, already
  /// measured clearly faster than the input: then a gain of the result within the noise is not
  /// timed again, since timing it again could at most pick it over its alternative by a few
  /// tenths of a per cent.
  bool alternative_clearly_faster(const Measurer& measurer, const ir::Graph& folded) {
    std::vector<const ir::Graph*> alternatives;
    if (tries_before_search(folded)) alternatives.push_back(&folded);
    if (tries_without_value_info(optimized_.search.best)) alternatives.push_back(&without_value_info_);
    if (const std::optional<ir::Graph>& lowered = input_einsums_lowered()) alternatives.push_back(&*lowered);
    for (const ir::Graph* alternative : alternatives) {
      // Timed in the guard's request just before: read from the cache, not counted as a lookup.
      const std::optional<cost::Comparison> measured = measurer.cached_comparison(original_, *alternative, request_.input);
      if (measured && clearly_faster(*measured, request_.guard.min_gain)) return true;
    }
    return false;
  }

  /// Guards `alternative` against the input; when it is kept and measured faster than what
  /// `verdict` keeps, its verdict and it become `verdict` and `best`. When `verdict` already
  /// keeps a graph, a gain of the alternative within the noise is not timed again
  /// (GuardOptions::time_again). Returns what the report says of it: kept, the reason, the
  /// measured speedup.
  Json take_if_faster(const ir::Graph& alternative, const char* name, Measurer& measurer, GuardVerdict& verdict,
                      const ir::Graph*& best) {
    GuardOptions options = request_.guard;
    options.time_again = !verdict.keep_candidate;  // see GuardOptions::time_again
    GuardVerdict checked = guard(original_, alternative, measurer, options, {name, "the input"}, request_.input);
    const bool better = checked.keep_candidate &&
                        (!verdict.keep_candidate || checked.comparison->median_ratio < verdict.comparison->median_ratio);
    Json json = {{"kept", better}, {"reason", checked.reason}};
    if (checked.comparison) json["measured_speedup"] = claimed_speedup(*checked.comparison);
    if (better) {
      verdict = std::move(checked);
      best = &alternative;
    }
    return json;
  }

  /// The target's layout forms (rules/layout.rules, onnxruntime's CPU target only) applied to
  /// `chosen` wherever they match, kept when the whole graph then measures faster than `chosen`;
  /// else `chosen`. The search never picks them: each costs more as a single operator, and what
  /// it saves (the runtime keeping a blocked layout across it) only shows in the whole graph.
  /// Where forms of several kinds match and all of them together are not kept, each kind alone
  /// is timed (in one request), and the fastest of those measured faster is written
  /// (layout_forms.h, apply_each_kind).
  const ir::Graph& with_layout_forms(const ir::Graph& chosen, Measurer& measurer, Json& written) {
    int applied = 0;
    const bool result = &chosen == &optimized_.search.best || &chosen == &without_value_info_;
    std::optional<ir::Graph> formed = &chosen == &original_ ? input_layout_formed()
                                      : result               ? result_layout_formed()
                                                             : layout_formed(chosen, &applied);
    if (&chosen == &original_) applied = input_forms_applied_;  // counted when the input's forms were made
    if (result) applied = result_forms_applied_;
    if (!formed) return chosen;
    timer_.start();
    const std::string input_file = &chosen == &original_ ? request_.input : std::string{};
    GuardVerdict verdict = guard(chosen, *formed, measurer, request_.guard,
                                 {"the graph with the layout forms", "the graph without them"}, input_file);
    Json together = {{"applied", applied}, {"reason", verdict.reason}};
    if (verdict.comparison) together["measured_speedup"] = claimed_speedup(*verdict.comparison);
    // Where the forms all together were measured and not kept, and they are of several kinds,
    // each kind alone, on the graph the forms above were applied to (the result with its
    // value_info where `chosen` is the result without), timed in one request. Not where they
    // were kept: timing each kind alone every time cost the YOLO detectors 10-18 s of a cold
    // run with no measurable change in what they gained.
    std::vector<FormsOfKind> kinds;
    if (!verdict.keep_candidate && verdict.comparison) {
      kinds = apply_each_kind(result ? optimized_.search.best : chosen, rules::shipped_layout_rules());
      if (kinds.size() < 2) kinds.clear();
      for (FormsOfKind& kind : kinds) kind.graph = as_formed_is_written(std::move(kind.graph));
    }
    if (!kinds.empty()) {
      std::vector<const ir::Graph*> candidates;
      for (const FormsOfKind& kind : kinds) candidates.push_back(&kind.graph);
      measurer.compare_all(chosen, candidates, request_.guard.deciding(request_.guard.whole), input_file);
    }
    const FormsOfKind* alone = nullptr;  // the kind written alone, if one is
    Json each_kind = Json::array();
    for (const FormsOfKind& kind : kinds) {
      const std::string name = "the graph with the " + kind.kind + " forms alone";
      GuardVerdict checked = guard(chosen, kind.graph, measurer, request_.guard, {name.c_str(), "the graph without them"},
                                   input_file);
      Json json = {{"kind", kind.kind}, {"applied", kind.applied}, {"reason", checked.reason}};
      if (checked.comparison) json["measured_speedup"] = claimed_speedup(*checked.comparison);
      const bool better = checked.keep_candidate && (!verdict.keep_candidate || checked.comparison->median_ratio <
                                                                                     verdict.comparison->median_ratio);
      if (better) {
        verdict = std::move(checked);
        alone = &kind;
      }
      each_kind.push_back(std::move(json));
    }
    timer_.stop("layout forms");
    Json forms = {{"applied", applied}, {"kept", verdict.keep_candidate}, {"reason", verdict.reason}};
    if (verdict.comparison) forms["measured_speedup"] = claimed_speedup(*verdict.comparison);
    if (!kinds.empty()) {
      forms["all_kinds"] = together;
      forms["each_kind"] = each_kind;
      forms["kept_kind"] = alone ? Json(alone->kind) : Json();  // all together were not kept
      if (alone) forms["applied"] = alone->applied;
    }
    written["layout_forms"] = forms;
    if (alone) applied = alone->applied;
    logger("cli")->info("layout forms ({} applied{}): {}", applied, alone ? " of kind " + alone->kind : "",
                        verdict.reason);
    const std::string counted = fmt::format("{} layout form{}{}", applied, applied == 1 ? "" : "s",
                                            alone ? " (" + alone->kind + ")" : "");
    if (!verdict.keep_candidate) {
      const std::string kinds_too = kinds.empty() ? "" : fmt::format(", nor those of each of their {} kinds alone",
                                                                     kinds.size());
      outcome_.summary += verdict.comparison
                              ? fmt::format("; {} not kept (measured at {:.1f} % of the time without them{})", counted,
                                            100 * verdict.comparison->median_ratio, kinds_too)
                              : fmt::format("; {} not kept (not measured)", counted);
      return chosen;
    }
    layout_formed_ = alone ? alone->graph : std::move(*formed);
    const std::string measured = measured_text(verdict);
    if (&chosen == &original_) {  // what was measured against the input is the forms' check
      written["written"] = "input with layout forms";
      written["reason"] = "layout forms: " + verdict.reason;
      written["measured_before"] = timing_json(verdict.before);
      written["measured_after"] = timing_json(verdict.after);
      written["measured_ratio"] = ratio_json(*verdict.comparison);
      written["measured_speedup"] = claimed_speedup(*verdict.comparison);
      outcome_.summary = fmt::format("{}: the input with {}; measured in {}: {}", request_.output, counted,
                                     target_.spec.name, measured);
    } else {
      outcome_.summary += fmt::format("; then {}, measured against that: {}", counted, measured);
    }
    return layout_formed_;
  }

  /// `graph` with the target's layout forms applied wherever they match (counted in `applied`),
  /// as it would be written; nullopt when the target has none or none matches.
  std::optional<ir::Graph> layout_formed(const ir::Graph& graph, int* applied) const {
    if (!target_.spec.layout_forms) return std::nullopt;
    std::optional<ir::Graph> formed = apply_everywhere(graph, rules::shipped_layout_rules(), applied);
    if (formed) formed = as_formed_is_written(std::move(*formed));
    return formed;
  }

  /// A graph with layout forms as it is timed and written: with value_info, since the forms need
  /// their shapes declared (the runtime must see a resized scale's symbolic batch to keep the Mul
  /// blocked).
  static ir::Graph as_formed_is_written(ir::Graph formed) {
    return formed.model_info() ? with_value_info(formed, true) : std::move(formed);
  }

  /// The input with the layout forms (layout_formed), made once: the guard times it with the
  /// result, and with_layout_forms checks it when the input is kept.
  const std::optional<ir::Graph>& input_layout_formed() {
    if (!input_forms_made_) input_forms_ = layout_formed(original_, &input_forms_applied_);
    input_forms_made_ = true;
    return input_forms_;
  }

  /// The search's result with the layout forms (layout_formed), made once: the guard times it
  /// with the result, and with_layout_forms checks it when the result (or the result without
  /// value_info: the formed graph is written with value_info either way) is kept.
  const std::optional<ir::Graph>& result_layout_formed() {
    if (!result_forms_made_) result_forms_ = layout_formed(optimized_.search.best, &result_forms_applied_);
    result_forms_made_ = true;
    return result_forms_;
  }

  /// The input with its Einsums written as MatMul (rewrite/einsum_lowering.h) and nothing else
  /// changed, made once; nullopt when the search's graph has none lowered.
  const std::optional<ir::Graph>& input_einsums_lowered() {
    if (!input_lowered_made_ && einsums_lowered_ > 0) input_lowered_ = rewrite::lower_einsums(original_);
    input_lowered_made_ = true;
    return input_lowered_;
  }

  bool is_input_lowered(const ir::Graph* graph) const { return input_lowered_ && graph == &*input_lowered_; }

  /// Whether the guard also times the graph the search started from: when the fixed rewrites
  /// before the search changed something the export keeps and the search then changed more.
  /// Whether export keeps it is decided once per run (it exports the graph; every search of
  /// settled_search starts from the same one).
  bool tries_before_search(const ir::Graph& folded) {
    if (optimized_.search.steps.empty() || !rewritten_before_search()) return false;
    if (!folded_written_as_input_) folded_written_as_input_ = written_as_input(original_, folded);
    return !*folded_written_as_input_;
  }

  /// Whether the measured target times `graph` also exported without value_info.
  bool tries_without_value_info(const ir::Graph& graph) const {
    return graph.model_info() && target_.spec.reads_value_info;
  }

  /// `graph` (which has model info) to be exported with or without intermediate value_info.
  static ir::Graph with_value_info(const ir::Graph& graph, bool value_info) {
    ir::Graph copy = graph;
    auto info = std::make_shared<ir::ModelInfo>(*graph.model_info());
    info->value_info = value_info;
    copy.set_model_info(std::move(info));
    return copy;
  }

  static Json ratio_json(const cost::Comparison& comparison) {
    return {{"median", comparison.median_ratio}, {"spread", comparison.spread}, {"runs", comparison.runs}};
  }

  /// `graph` with the narrowing rules (rules/narrow.rules) applied wherever they match, counted
  /// in narrowings_, and what that leaves of weights folded. Each makes an op compute fewer
  /// elements, so they are applied before the search on every target rather than searched with;
  /// only those proved under the shipped axioms are used, as for the searched rules.
  ir::Graph narrowed(ir::Graph graph) {
    std::vector<rules::Rule> narrowing;
    for (rules::Rule& rule : rules::shipped_narrow_rules()) {
      if (rules::proved_under_shipped_axioms(rule)) narrowing.push_back(std::move(rule));
    }
    std::optional<ir::Graph> result = narrow(graph, narrowing, &narrowings_);
    logger("cli")->info("narrowing: {} rewrites moved a Gather above the ops that made its input", narrowings_);
    return result ? onnx_io::fold_weight_nodes(*result) : std::move(graph);
  }

  int shuffles_changed() const { return shuffles_.as_gather + shuffles_.into_convolutions; }

  bool rewritten_before_search() const {
    return narrowings_ > 0 || einsums_lowered_ > 0 || shuffles_changed() > 0 || view_chains_.chains > 0 ||
           activations_.total() > 0 || rsqrt_divisions_ > 0 || grouped_.repeats > 0;
  }

  bool changed_by_search_or_narrowing(const search::SearchResult& result) const {
    return !result.steps.empty() || rewritten_before_search();
  }

  /// "12 substitutions", and the shape arithmetic resolved and the narrowing before the search if any.
  std::string changes(std::size_t steps) const {
    std::string text = std::to_string(steps) + " substitutions";
    if (search_passes_ > 1) text += " in " + std::to_string(search_passes_) + " search passes";
    if (narrowings_ > 0) text += ", " + std::to_string(narrowings_) + " narrowing rewrites";
    if (einsums_lowered_ > 0) text += ", " + std::to_string(einsums_lowered_) + " Einsums as MatMul";
    if (shuffles_changed() > 0) text += ", " + std::to_string(shuffles_changed()) + " channel shuffles rewritten";
    if (view_chains_.chains > 0) text += ", " + std::to_string(view_chains_.chains) + " data-movement chains shortened";
    if (activations_.hard_sigmoid > 0) {
      text += fmt::format(", {} activation chains written as HardSigmoid ({} HardSwish)", activations_.hard_sigmoid,
                          activations_.hard_swish);
    }
    if (activations_.tanh_gelu > 0) {
      text += fmt::format(", {} tanh GELUs in the form onnxruntime fuses", activations_.tanh_gelu);
    }
    if (rsqrt_divisions_ > 0) text += ", " + std::to_string(rsqrt_divisions_) + " rsqrt written as Div(1, Sqrt)";
    if (grouped_.repeats > 0) text += ", " + std::to_string(grouped_.repeats) + " key/value head repetitions removed";
    if (shapes_.nodes_removed > 0) text += ", " + std::to_string(shapes_.nodes_removed) + " nodes of shape arithmetic resolved";
    return text;
  }

  /// "56.9 ms -> 18.07 ms, 3.03x faster (median of 60 alternated runs)" for a kept verdict.
  static std::string measured_text(const GuardVerdict& verdict) {
    std::string times;
    if (verdict.before && verdict.after) {
      times = fmt::format("{:.4g} ms -> {:.4g} ms, ", verdict.before->median_ms, verdict.after->median_ms);
    }
    return times + describe_speedup(*verdict.comparison);
  }

  std::string summary(const GuardVerdict& verdict, std::size_t steps) const {
    // The sizes of the inputs' symbolic dims it was timed at, where it has some.
    const std::string at = pipeline::sizes_text(measured_at_);
    if (verdict.keep_candidate) {
      const std::string where = " in " + target_.spec.name + (at.empty() ? "" : " at " + at);
      return request_.output + ": " + changes(steps) + "; measured" + where + ": " + measured_text(verdict);
    }
    const std::string measured_at = at.empty() || !verdict.comparison ? "" : " (measured at " + at + ")";
    return request_.output + ": the input, unchanged; " + verdict.reason + measured_at;
  }

  /// Writes the chosen graph. The input itself is copied byte for byte (unless its weights live
  /// in external data files, whose relative paths a copy elsewhere would break: then it is
  /// exported as it was read), so what the user gets back is exactly what they gave.
  void write(const ir::Graph& written) {
    const bool input = &written == &original_;
    const bool copy = input && import_stats_.external_tensors == 0;
    outcome_.report["result"]["copied_input"] = copy;
    if (!copy) {
      onnx_io::export_model(written, request_.output);
      return;
    }
    const std::string temporary = request_.output + ".tmp" + std::to_string(::getpid());
    std::error_code error;
    fs::copy_file(request_.input, temporary, fs::copy_options::overwrite_existing, error);
    if (!error) fs::rename(temporary, request_.output, error);
    if (error) {
      fs::remove(temporary);
      throw Error("cannot write '" + request_.output + "': " + error.message());
    }
  }

  /// The check in onnxruntime of a model the reference executor has no kernel for: the input file
  /// and the written one, on the reference check's random inputs.
  runtime::CheckReport check_in_onnxruntime(const std::vector<std::string>& missing) {
    std::string ops;
    for (const std::string& op : missing) ops += (ops.empty() ? "" : ", ") + op;
    const runtime::CheckOptions& options = request_.check;
    runtime::CheckReport check;
    check.executor = "onnxruntime (the reference executor has no kernel for " + ops + ")";
    try {
      profile::OrtWorker worker;
      for (const profile::OutputComparison& output :
           worker.compare_files(request_.input, request_.output, profile::OrtSettings{}, options.dims,
                                options.samples, options.seed, options.atol, options.rtol, {}, {},
                                options.index_bounds)) {
        check.outputs.push_back({output.name, output.max_abs_error, output.max_rel_error, output.passed});
      }
    } catch (const Error& e) {
      throw Error("the reference executor has no kernel for " + ops + ", and " + e.what());
    }
    return check;
  }

  /// The reference executor's runs of the input for --check, made before the search: an input
  /// that cannot run at the check's sizes stops here, with what to do, rather than after a search
  /// whose output could not be checked. Left empty when the reference has no kernel for an op
  /// (the check then runs in onnxruntime).
  void run_check_reference() {
    if (!runtime::CpuExecutor::unsupported_ops(original_).empty()) return;
    timer_.start();
    reference_runs_ = runtime::run_reference(original_, request_.check);
    timer_.stop("check");
    if (!reference_runs_->error.empty()) {
      throw Error("cannot check the output: " + cannot_run_at(original_, request_.check.dims, reference_runs_->error));
    }
  }

  void check_output() {
    timer_.start();
    runtime::CheckReport check;
    try {
      // Without the reference's runs (run_check_reference), it has no kernel for an op.
      check = reference_runs_ ? runtime::check_against(original_, *reference_runs_,
                                                       onnx_io::import_model(request_.output), request_.check)
                              : check_in_onnxruntime(runtime::CpuExecutor::unsupported_ops(original_));
    } catch (const Error& e) {
      fs::remove(request_.output);
      throw Error(std::string("cannot check the output, so it was not kept: ") + e.what());
    }
    std::optional<runtime::CheckReport> varied;
    if (!check.passed()) varied = check_against_runtime_variation(check.executor);
    const std::string first_failures = failures(check);
    if (varied && varied->passed()) {
      // Kept with what the failed check said, in the report and the summary.
      outcome_.report["check_failed_first"] = check_json(check);
      check = *varied;
    }
    timer_.stop("check");
    outcome_.report["check"] = check_json(check);
    outcome_.check = check;
    if (!check.passed()) {
      fs::remove(request_.output);
      throw Error(format("the output differs from the input beyond tolerance (atol %g, rtol %g): ", request_.check.atol,
                         request_.check.rtol) +
                  first_failures + "; run by " + check.executor + "; it was not kept" + rounding_note(varied));
    }
    if (!varied) return;
    std::string within;
    for (const runtime::OutputCheck& output : check.outputs) {
      if (output.passed) continue;
      within += (within.empty() ? "" : ", ") + output.name +
                format(" by up to %.3g, onnxruntime's own optimizations by %.3g", output.max_abs_error,
                       output.runtime_variation);
    }
    const std::string rechecked =
        "the check by " + with_article(outcome_.report["check_failed_first"]["executor"].get<std::string>()) +
        " failed: " + first_failures + "; in onnxruntime " +
        (within.empty() ? std::string("the outputs agree") : "they differ within its own variation: " + within);
    outcome_.summary += "; " + rechecked;
    logger("cli")->warn("{}", rechecked);
  }

  /// "the reference executor", "onnxruntime (...)": an executor's name as a sentence reads it.
  static std::string with_article(const std::string& executor) {
    return executor.rfind("reference", 0) == 0 ? "the " + executor : executor;
  }

  /// "y by up to 1 (relative 1)" for each output of `check` that failed.
  static std::string failures(const runtime::CheckReport& check) {
    std::string outputs;
    for (const runtime::OutputCheck& output : check.outputs) {
      if (output.passed) continue;
      outputs += (outputs.empty() ? "" : ", ") + output.name +
                 format(" by up to %.3g (relative %.3g)", output.max_abs_error, output.max_rel_error);
    }
    return outputs;
  }

  /// After a failed check: the check again in onnxruntime (the input file and the written one at
  /// the measured settings, on the same random inputs), each output's failures set against how
  /// much onnxruntime's own graph optimizations move the input's output on the same input set
  /// (the input at level all against itself at disabled). An output that selects among computed
  /// values (TopK, NonMaxSuppression: Faster R-CNN's boxes, labels and scores) can change by
  /// whole entries under any rounding change, onnxruntime's own fusions included; one whose
  /// failures all stay within that variation is no failure of the rewrite. nullopt when
  /// onnxruntime cannot run the two files.
  std::optional<runtime::CheckReport> check_against_runtime_variation(const std::string& failed) {
    const runtime::CheckOptions& options = request_.check;
    runtime::CheckReport check;
    check.executor = "onnxruntime, each output against its own variation (the check by " + with_article(failed) + " failed)";
    try {
      for (const profile::OutputComparison& output :
           profile::OrtWorker().compare_files(request_.input, request_.output, profile::OrtSettings{}, options.dims,
                                              options.samples, options.seed, options.atol, options.rtol, {},
                                              "disabled", options.index_bounds)) {
        check.outputs.push_back({output.name, output.max_abs_error, output.max_rel_error, output.passed,
                                 output.runtime_variation, output.within_runtime_variation});
      }
    } catch (const Error& error) {
      logger("cli")->debug("the check against onnxruntime's own variation could not run: {}", error.what());
      return std::nullopt;
    }
    return check;
  }

  /// For a failed check: why the outputs of this model may move under a rounding difference, and
  /// how much onnxruntime's own graph optimizations (level all against disabled) move each failed
  /// one on the same inputs (from check_against_runtime_variation, when it could run). A model
  /// that quantizes computed values (DynamicQuantizeLinear, QuantizeLinear of an activation)
  /// moves a value by a whole quantization step; one that selects among computed values (TopK,
  /// NonMaxSuppression, ArgMax, ArgMin, in subgraphs too: detection models' boxes and scores)
  /// can flip near-equal candidates. Empty when there is nothing to say.
  std::string rounding_note(const std::optional<runtime::CheckReport>& varied) const {
    std::set<std::string> quantizing, selecting;
    const std::vector<std::string> selections = {"ArgMax", "ArgMin", "NonMaxSuppression", "TopK"};
    for (ir::NodeId id : original_.node_ids()) {
      const ir::Node& node = original_.node(id);
      if (node.op == ir::OpKind::kArgMax) selecting.insert("ArgMax");
      if (node.op == ir::OpKind::kArgMin) selecting.insert("ArgMin");
      if (!node.opaque) continue;
      const std::string& op = node.opaque->op_type;
      if ((op == "DynamicQuantizeLinear" || op == "QuantizeLinear") && !node.inputs.empty() &&
          node.inputs[0] != ir::kNoValue && original_.value(node.inputs[0]).kind != ir::ValueKind::kWeight) {
        quantizing.insert(op);
      }
      for (const std::string& selection : selections) {
        // The node itself, or a node of its subgraphs (If's branches): their op types are strings
        // of its serialized NodeProto. A node name holding one only adds a sentence to a note.
        if (op == selection || node.opaque->onnx_node.find(selection) != std::string::npos) selecting.insert(selection);
      }
    }
    std::string note;
    if (!quantizing.empty()) {
      note += fmt::format(". The model quantizes computed values ({}), where a rounding difference moves a value by a "
                          "whole quantization step",
                          fmt::join(quantizing, ", "));
    }
    if (!selecting.empty()) {
      note += fmt::format(". The model selects among computed values ({}), where a rounding difference can flip "
                          "near-equal candidates and move an output by whole entries",
                          fmt::join(selecting, ", "));
    }
    std::string moved;
    if (varied) {
      for (const runtime::OutputCheck& output : varied->outputs) {
        if (output.passed || output.within_runtime_variation) continue;
        moved += (moved.empty() ? "" : ", ") + output.name +
                 format(" by up to %.3g (the written model's by %.3g)", output.runtime_variation, output.max_abs_error);
      }
    }
    if (!moved.empty()) {
      note += ". On the same inputs, onnxruntime's own graph optimizations (level all against disabled) move " + moved;
    }
    if (!note.empty()) note += "; --atol and --rtol set the tolerance";
    return note;
  }

  OptimizeRequest request_;  ///< A copy: --input-shape's sizes join its dims after import.
  /// The measured target's size of each symbolic dim of the inputs, and those the user did not
  /// give (sized 1).
  InputSizes measured_at_;
  std::vector<std::string> sizes_not_given_;
  PhaseTimer timer_;
  onnx_io::ImportStats import_stats_;
  ir::Graph original_;
  rewrite::ShapeArithmeticStats shapes_;
  std::size_t opaque_modelled_ = 0;  ///< Opaque nodes modelled once their operands were folded.
  int shape_rounds_ = 0;             ///< Rounds of resolve, model and fold until nothing changed.
  int narrowings_ = 0;  ///< Narrowing rewrites applied before the search.
  int search_passes_ = 1;  ///< Kept passes of the measured search, whose steps are counted.
  int einsums_lowered_ = 0;  ///< Einsums written as MatMul before the search.
  rewrite::ShuffleStats shuffles_;  ///< Channel shuffles rewritten before the search.
  rewrite::ViewChainStats view_chains_;  ///< Data-movement chains written anew before the search.
  rewrite::ActivationStats activations_;  ///< Activation chains written as one operator before the search.
  int rsqrt_divisions_ = 0;  ///< Reciprocal(Sqrt) written as Div(1, Sqrt) before the search.
  rewrite::GroupedAttentionStats grouped_;  ///< repeat_kv copies removed before the search.
  std::optional<bool> folded_written_as_input_;  ///< Whether the graph before the search exports as the input.
  Target target_;
  std::set<std::string> unverified_;  ///< Searched rules not proved (only with --allow-unverified).
  search::OptimizeResult optimized_;
  Lookups lookups_;  ///< Of every measured search of this run.
  ir::Graph without_value_info_;  ///< The search result to be exported without value_info (written when that measured faster).
  ir::Graph layout_formed_;  ///< The written graph when the layout forms were kept.
  std::optional<ir::Graph> input_forms_;  ///< The input with the layout forms, once made.
  bool input_forms_made_ = false;
  int input_forms_applied_ = 0;
  std::optional<ir::Graph> result_forms_;  ///< The search's result with the layout forms, once made.
  bool result_forms_made_ = false;
  int result_forms_applied_ = 0;
  std::optional<ir::Graph> input_lowered_;  ///< The input with its Einsums as MatMul, once made.
  bool input_lowered_made_ = false;
  /// Why the target cannot run the input at the measuring sizes (cannot_run_at); empty when it can.
  std::string input_error_;
  /// The reference executor's runs of the input for --check (run_check_reference).
  std::optional<runtime::ReferenceRuns> reference_runs_;
  OptimizeOutcome outcome_;
};

}  // namespace

std::vector<rules::Rule> load_rules(const OptimizeRequest& request) {
  std::vector<rules::Rule> rules = all_rules(request);
  for (const std::string& name : request.disabled_rules) {
    auto it = std::find_if(rules.begin(), rules.end(), [&](const rules::Rule& r) { return r.name == name; });
    if (it == rules.end()) throw Error("--disable-rule: no rule named '" + name + "'");
  }
  rules.erase(std::remove_if(rules.begin(), rules.end(),
                             [&](const rules::Rule& r) {
                               return std::count(request.disabled_rules.begin(), request.disabled_rules.end(),
                                                 r.name) > 0;
                             }),
              rules.end());
  return rules;
}

SearchRules search_rules(const OptimizeRequest& request) {
  SearchRules result;
  std::vector<rules::Rule> loaded = load_rules(request);
  const std::size_t count = loaded.size();
  for (rules::Rule& rule : loaded) {
    if (request.allow_unverified || rules::proved_under_shipped_axioms(rule)) {
      result.rules.push_back(std::move(rule));
    } else {
      result.unverified_left_out.push_back(rule.name);
    }
  }
  if (result.rules.empty() && count > 0) {
    throw Error("none of the " + std::to_string(count) + " rules is proved under the current axioms (" +
                rules::shipped_axioms_hash() + "); prove them with `graphsub verify-rules FILE --write`, " +
                "or search with them anyway with --allow-unverified");
  }
  if (!result.unverified_left_out.empty()) {
    const auto level = request.rule_files.empty() ? spdlog::level::info : spdlog::level::warn;
    logger("cli")->log(level, "{} of {} rules left out, not proved under the current axioms (--allow-unverified "
                       "searches with them): {}", result.unverified_left_out.size(), count,
                       fmt::join(result.unverified_left_out, ", "));
  }
  return result;
}

OptimizeOutcome optimize_model(const OptimizeRequest& request) { return Run(request).go(); }

}  // namespace graphsub::pipeline

// The whole optimize flow as one call: import, fold, search with the target's costs, measure and
// guard, export, check, report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/guard.h"
#include "pipeline/target.h"
#include "rules/rule.h"
#include "runtime/equivalence.h"
#include "search/optimizer.h"

namespace graphsub::pipeline {

/// Check options that run no check (samples 0).
inline runtime::CheckOptions no_check() {
  runtime::CheckOptions options;
  options.samples = 0;
  return options;
}

/// Everything `graphsub optimize` is asked to do.
struct OptimizeRequest {
  std::string input;
  std::string output;
  std::vector<std::string> rule_files;      ///< Empty: the shipped rules. A .pb file is TASO's format.
  std::vector<std::string> disabled_rules;  ///< Rule names left out.
  /// Search with rules whose proof line is not `proved` under the shipped axioms too.
  bool allow_unverified = false;
  search::OptimizerOptions optimizer;
  TargetOptions target;
  GuardOptions guard;
  /// The numeric check of the written model against the input; samples 0: none.
  runtime::CheckOptions check = no_check();
  /// `--input-shape NAME:D1,D2,...`: the sizes to measure and check an input at. Each symbolic dim
  /// of that input gets its size (as `--dim SYMBOL=SIZE` would: into check.dims and
  /// target.sizes); a known dim must agree. The written model keeps its symbolic dims.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

/// The symbol sizes that `input_shapes` give `graph`'s inputs. Throws graphsub::Error for an input
/// the graph lacks, a rank that differs, a known size that differs, a dim without a name, or one
/// symbol given two sizes (also against `dims`, the sizes already given).
std::map<std::string, int64_t> sizes_of_input_shapes(const ir::Graph& graph,
                                                     const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                     const std::map<std::string, int64_t>& dims);

/// For a model that failed to run with its symbolic dims at `sizes` (1 where not given): "; it ran
/// with batch=1, sequence=1: give the sizes it runs at with --dim ..." (an exporter may have
/// written a traced size into the model, as the TorchScript exporter writes the traced sequence
/// length into attention's reshapes). Empty when `graph`'s inputs have no symbolic dim, or when
/// `error` says the runtime could not load the model at all (no size would help).
std::string sizes_hint(const ir::Graph& graph, const std::map<std::string, int64_t>& sizes, const std::string& error);

/// Symbolic dims and their sizes, in the order a graph's inputs name them.
using InputSizes = std::vector<std::pair<std::string, int64_t>>;

/// The size each symbolic dim of the graph's inputs takes at `sizes` (1 where not given), in the
/// order the inputs name them: what a measured target or `bench` times the model at.
InputSizes input_sizes(const ir::Graph& graph, const std::map<std::string, int64_t>& sizes);

/// Warns ("--dim seq=32 names no symbolic dim of the inputs of model.onnx (they have batch,
/// sequence): ignored") for each size of `dims` that no input dim of any of `graphs` is named by;
/// the graphs' names are `paths`. A warning, not an error: a pipeline may pass the same --dim to
/// models that have the dim and models that do not. The dims that do not name one, in order.
std::vector<std::string> warn_unnamed_dims(const std::vector<const ir::Graph*>& graphs,
                                           const std::vector<std::string>& paths,
                                           const std::map<std::string, int64_t>& dims);

/// "batch=1, sequence=32": sizes as input_sizes gives them, for a line a person reads.
std::string sizes_text(const InputSizes& sizes);

/// {"batch": 1, "sequence": 32}: the same for a report.
nlohmann::json sizes_json(const InputSizes& sizes);

/// What was done.
struct OptimizeOutcome {
  nlohmann::json report;  ///< The --report document (README lists its fields).
  std::string summary;    ///< A few lines for a person: what was written and how fast it measured.
  std::optional<runtime::CheckReport> check;
};

/// Runs the whole flow and writes `request.output`. Throws graphsub::Error with one clear message
/// on bad input (unreadable model, output naming the input, bad rules, unusable target or cache);
/// a failed --check removes the output and throws.
OptimizeOutcome optimize_model(const OptimizeRequest& request);

/// The rules of the request: the shipped set, or exactly the request's files, less the disabled
/// ones. Throws graphsub::Error for a disabled name no rule has.
std::vector<rules::Rule> load_rules(const OptimizeRequest& request);

/// The rules a search may use, and the names of those it may not.
struct SearchRules {
  std::vector<rules::Rule> rules;
  std::vector<std::string> unverified_left_out;  ///< Not proved under the shipped axioms.
};

/// load_rules() less the rules not proved under the shipped axioms (rules::proved_under_shipped_axioms),
/// unless `request.allow_unverified`. Throws graphsub::Error when that leaves no rule out of some.
SearchRules search_rules(const OptimizeRequest& request);

}  // namespace graphsub::pipeline

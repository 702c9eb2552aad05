// Numeric equivalence of two graphs on seeded random inputs: the `--check` of optimize and the
// before-vs-after check of every rule and model test.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/cpu_executor.h"

namespace graphsub::runtime {

/// How to compare.
struct CheckOptions {
  int samples = 3;             ///< Number of random input sets.
  uint32_t seed = 0;           ///< Seed of the first set; set i uses seed + i.
  double atol = 1e-5;          ///< Element passes when |got - want| <= atol + rtol * |want|.
  double rtol = 1e-4;
  /// Sizes for symbolic dims by name; any other symbolic or unknown dim gets `default_dim`.
  std::map<std::string, int64_t> dims;
  int64_t default_dim = 1;
  /// Integer inputs that index a table, by name: the input's values are drawn below this bound
  /// (index_bounds), where it is under the usual 4. BERT's token_type_ids index a table of 2.
  std::map<std::string, int64_t> index_bounds;
};

/// The integer graph inputs that reach the indices of a Gather (through casts to an integer type
/// and the view and copy operators: Reshape, Unsqueeze, Squeeze, Flatten, Expand, Transpose,
/// Slice, Tile, Concat, Identity), with the smallest static length of the axes they index: what
/// random inputs must stay below for the model to run. An index path through arithmetic is not
/// followed (its values are the arithmetic's).
std::map<std::string, int64_t> index_bounds(const ir::Graph& graph);

/// Agreement of one output over all samples.
struct OutputCheck {
  std::string name;
  double max_abs_error = 0;
  double max_rel_error = 0;  ///< Max of |got - want| / |want| over elements whose reference is not 0.
  bool passed = true;  ///< Within atol + rtol·|want| everywhere.
  /// How much the runtime's own graph optimizations move the input's output on the same inputs
  /// (optimize's check after a failure; -1 when not measured).
  double runtime_variation = -1;
  /// Failed, but on every sample by at most what the runtime's own optimizations moved the
  /// input's output by on that sample (a selection among near-equal values flipping alike).
  bool within_runtime_variation = false;
};

/// The result of a check.
struct CheckReport {
  std::vector<OutputCheck> outputs;
  /// What ran both graphs: graphsub's reference executor, or (for `optimize --check` on a model
  /// with an operator it has no kernel for) onnxruntime, with the reason.
  std::string executor = "reference executor";
  /// Every output passed, or failed within the runtime's own variation.
  bool passed() const;
};

/// Random inputs for every graph input without a default: float types uniform in [-1, 1), integer
/// types in [0, 4) (below options.index_bounds' bound where that is smaller), bool uniform.
/// Deterministic for a seed.
TensorMap random_inputs(const ir::Graph& graph, uint32_t seed, const CheckOptions& options);

/// Runs `reference` and `candidate` on the same random inputs and compares their outputs by
/// position. Throws graphsub::Error when either graph cannot run (e.g. an op without a kernel) or
/// their interfaces differ.
CheckReport check_equivalent(const ir::Graph& reference, const ir::Graph& candidate,
                             const CheckOptions& options = {});

/// The reference's side of check_equivalent: each sample's random inputs and the reference's
/// outputs on them, or why the reference could not run. A caller that checks several candidates
/// against one reference (the rules of one source pattern) runs the reference once.
struct ReferenceRuns {
  std::vector<TensorMap> inputs;
  std::vector<TensorMap> outputs;
  std::string error;  ///< Not empty when the reference could not run: check_against throws it.
};

/// Runs `reference` on check_equivalent's inputs for `options`. Never throws graphsub::Error: the
/// failure is kept for check_against.
ReferenceRuns run_reference(const ir::Graph& reference, const CheckOptions& options = {});

/// check_equivalent(reference, candidate, options) with the reference's runs given (`runs` from
/// run_reference(reference, options)): the same report, the same errors.
CheckReport check_against(const ir::Graph& reference, const ReferenceRuns& runs, const ir::Graph& candidate,
                          const CheckOptions& options = {});

}  // namespace graphsub::runtime

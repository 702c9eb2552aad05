// The axiom-free proof path: a rule executed symbolically on small concrete instances.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"
#include "verify/instance_generator.h"

namespace graphsub::verify {

/// What the bounded check concluded about one rule.
enum class BoundedVerdict {
  kHolds,    ///< Source and target are equal as real functions on every instance tried.
  kRefuted,  ///< An instance and input values where the reference kernels disagree.
  kUnknown,  ///< No instance, an op without semantics, a timeout, or a difference that only
             ///< the properties of an uninterpreted function (relu, sqrt, ...) could settle.
};

/// Limits of the bounded check.
struct BoundedOptions {
  BoundedOptions() { instances.solve_dims = true; }
  /// With solved dims: a rule whose conditions equate sums of dims is checked where the parts
  /// do not line up too (instance_generator.h), and refuted there when it holds only where they do.
  InstanceOptions instances;
  unsigned timeout_ms = 10000;  ///< Per Z3 query.
};

/// The verdict, how many instances were checked, and a sentence for a person.
struct BoundedResult {
  BoundedVerdict verdict = BoundedVerdict::kUnknown;
  int instances = 0;
  std::string detail;
};

/// Checks `rule` on small instances: for every instance and mapped output element, source and
/// target terms are equal after polynomial normalisation, or Z3 shows `source != target`
/// unsatisfiable. A satisfying model is a counterexample only once the reference CPU kernels,
/// fed the model's values, disagree too (uninterpreted functions may be read wrongly by Z3).
BoundedResult check_bounded(const rules::Rule& rule, const BoundedOptions& options);

/// The same on instances already made (`why_none`: why there are none, when empty).
BoundedResult check_bounded(const std::vector<Instance>& instances, const std::string& why_none,
                            const BoundedOptions& options);

const char* to_string(BoundedVerdict verdict);

}  // namespace graphsub::verify

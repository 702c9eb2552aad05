// The bounded check: source and target of a rule run symbolically on small instances and compared.
#include "verify/bounded_check.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/cpu_executor.h"
#include "runtime/equivalence.h"
#include "verify/symbolic_executor.h"

namespace graphsub::verify {
namespace {

/// Most variable assignments a counterexample lists.
constexpr std::size_t kShownAssignments = 8;

/// A difference between source and target that the reference kernels confirm, in words.
using Finding = std::optional<std::string>;

/// True when `a - b` normalises to the number 0 (sum of monomials).
bool equal_terms(z3::context& context, const z3::expr& a, const z3::expr& b) {
  z3::params params(context);
  params.set("som", true);
  const z3::expr difference = (a - b).simplify(params);
  return difference.is_numeral() && difference.get_decimal_string(0) == "0";
}

/// Indices of the elements whose terms differ after normalisation.
std::vector<int64_t> differing(z3::context& context, const SymTensor& a, const SymTensor& b) {
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (!equal_terms(context, a.elements[i], b.elements[i])) indices.push_back(i);
  }
  return indices;
}

/// The double nearest a numeral, or nothing for another term (an algebraic number).
std::optional<double> numeral_value(const z3::expr& value) {
  if (!value.is_numeral()) return std::nullopt;
  return std::stod(value.get_decimal_string(17));
}

/// The value Z3's model gives `term`, as a double (0 for a term it leaves free).
double value_in(const z3::model& model, const z3::expr& term) {
  return numeral_value(model.eval(term, true)).value_or(0);
}

/// "[0,1,2]" of a flat index into `dims`.
std::string index_text(const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> index(dims.size());
  for (std::size_t k = dims.size(); k-- > 0;) {
    index[k] = flat % dims[k];
    flat /= dims[k];
  }
  std::string text = "[";
  for (std::size_t k = 0; k < index.size(); ++k) text += (k ? "," : "") + std::to_string(index[k]);
  return text + "]";
}

/// A float tensor of `dims` holding the model's values of `variables`.
ir::TensorPtr tensor_from_model(const z3::model& model, const SymTensor& variables) {
  std::vector<float> values;
  for (const z3::expr& term : variables.elements) values.push_back(static_cast<float>(value_in(model, term)));
  return ir::share(ir::Tensor::from_floats(variables.dims, values));
}

/// The symbolic variables of a graph input or free weight, as run_symbolic names them.
SymTensor variables_of(Semantics& semantics, const ir::Value& value) {
  return semantics.variables(value.name, value.type.shape.sizes().value_or(std::vector<int64_t>{}));
}

/// `graph` with each free weight's data replaced by the model's values for it.
ir::Graph with_model_weights(Semantics& semantics, const ir::Graph& graph, const Instance& instance,
                             const z3::model& model) {
  ir::Graph result = graph;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (!graph.has_value(id)) continue;
    const ir::Value& value = graph.value(id);
    if (value.kind != ir::ValueKind::kWeight || !instance.free_weights.count(value.name)) continue;
    const ir::ValueId replacement =
        result.add_weight(value.name, tensor_from_model(model, variables_of(semantics, value)));
    result.replace_all_uses(id, replacement);
  }
  return result;
}

/// Graph inputs of `graph` fed with the model's values.
runtime::TensorMap feeds_from_model(Semantics& semantics, const ir::Graph& graph, const z3::model& model) {
  runtime::TensorMap feeds;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& value = graph.value(id);
    if (!value.data) feeds[value.name] = tensor_from_model(model, variables_of(semantics, value));
  }
  return feeds;
}

/// "x[0,0,1,0] = 1": one assignment of Z3's model.
std::string assignment_text(const z3::func_decl& constant, const z3::expr& value) {
  std::ostringstream text;
  text << constant.name().str() << " = ";
  if (const std::optional<double> number = numeral_value(value)) {
    text << *number;
  } else {
    text << value.to_string();
  }
  return text.str();
}

/// "x[0,0,1,0] = 1, w[1,0,0,0] = -2": the model's non-zero inputs, the first few of them.
std::string assignments(const z3::model& model) {
  std::string text;
  std::size_t shown = 0, hidden = 0;
  for (unsigned i = 0; i < model.num_consts(); ++i) {
    const z3::func_decl constant = model.get_const_decl(i);
    const z3::expr value = model.get_const_interp(constant);
    if (numeral_value(value) == 0.0) continue;
    if (shown++ < kShownAssignments) {
      text += (text.empty() ? "" : ", ") + assignment_text(constant, value);
    } else {
      ++hidden;
    }
  }
  if (hidden) text += " and " + std::to_string(hidden) + " more";
  return (text.empty() ? "every input 0" : text) + " (every other input 0)";
}

/// Float value of output `name` element `index` of a run.
double output_element(const runtime::TensorMap& outputs, const std::string& name, int64_t index) {
  return outputs.at(name)->element_as_double(index);
}

/// Confirms Z3's counterexample with the reference kernels: both graphs run on the model's
/// values; says where they differ, or nothing when they agree (the model relied on an
/// uninterpreted function taking values the real one cannot).
Finding confirm(Semantics& semantics, const Instance& instance, const z3::model& model,
                const std::string& output, const std::vector<int64_t>& dims) {
  const ir::Graph source = with_model_weights(semantics, instance.source, instance, model);
  const ir::Graph target = with_model_weights(semantics, instance.target, instance, model);
  const runtime::TensorMap feeds = feeds_from_model(semantics, source, model);
  const runtime::TensorMap before = runtime::CpuExecutor::run(source, feeds);
  const runtime::TensorMap after = runtime::CpuExecutor::run(target, feeds);
  const int64_t size = before.at(output)->num_elements();
  for (int64_t i = 0; i < size; ++i) {
    const double a = output_element(before, output, i), b = output_element(after, output, i);
    // NaN (a negative variance under a square root) on either side settles nothing.
    if (std::isnan(a) || std::isnan(b) || std::fabs(a - b) <= 1e-4 * (1 + std::fabs(a))) continue;
    std::ostringstream text;
    text << "on " << instance.description << ": " << output << index_text(dims, i) << " is " << a
         << " before and " << b << " after, at " << assignments(model);
    return text.str();
  }
  return std::nullopt;
}

/// Where random inputs show source and target apart, in words; nothing when they agree.
Finding random_difference(const Instance& instance) {
  runtime::CheckOptions options;
  options.samples = 4;
  const runtime::CheckReport report = runtime::check_equivalent(instance.source, instance.target, options);
  for (const runtime::OutputCheck& output : report.outputs) {
    if (output.passed) continue;
    std::ostringstream text;
    text << "on " << instance.description << ": " << output.name << " differs on random inputs by up to "
         << output.max_abs_error;
    return text.str();
  }
  return std::nullopt;
}

/// The outcome of comparing one output of one instance.
struct Comparison {
  BoundedVerdict verdict = BoundedVerdict::kHolds;
  std::string detail;
};

/// Asks Z3 whether any differing element can differ; unsat means equal for all reals.
Comparison solve(Semantics& semantics, const Instance& instance, const std::string& output,
                 const SymTensor& before, const SymTensor& after, const std::vector<int64_t>& indices,
                 unsigned timeout_ms) {
  z3::context& context = semantics.context();
  z3::solver solver(context);
  z3::params params(context);
  params.set("timeout", timeout_ms);
  solver.set(params);
  z3::expr_vector differences(context);
  for (int64_t i : indices) differences.push_back(before.elements[i] != after.elements[i]);
  solver.add(z3::mk_or(differences));
  const z3::check_result result = solver.check();
  if (result == z3::unsat) return {};
  if (result == z3::unknown) {
    return {BoundedVerdict::kUnknown, "Z3 gave up on " + output + " (" + solver.reason_unknown() + ")"};
  }
  Finding finding = confirm(semantics, instance, solver.get_model(), output, before.dims);
  if (!finding) finding = random_difference(instance);
  if (finding) return {BoundedVerdict::kRefuted, *finding};
  return {BoundedVerdict::kUnknown,
          output + " differs as a term on " + instance.description +
              " but not on the values tried: it rests on properties of an uninterpreted function"};
}

/// Compares every mapped output of one instance.
Comparison compare(Semantics& semantics, const Instance& instance, unsigned timeout_ms) {
  const std::set<std::string>& free = instance.free_weights;
  const std::map<std::string, SymTensor> before = run_symbolic(semantics, instance.source, free);
  const std::map<std::string, SymTensor> after = run_symbolic(semantics, instance.target, free);
  for (const auto& [name, tensor] : before) {
    const SymTensor& other = after.at(name);
    if (other.dims != tensor.dims) return {BoundedVerdict::kRefuted, name + " changes shape on " + instance.description};
    const std::vector<int64_t> indices = differing(semantics.context(), tensor, other);
    if (indices.empty()) continue;
    Comparison comparison = solve(semantics, instance, name, tensor, other, indices, timeout_ms);
    if (comparison.verdict != BoundedVerdict::kHolds) return comparison;
  }
  return {};
}

}  // namespace

BoundedResult check_bounded(const rules::Rule& rule, const BoundedOptions& options) {
  std::string why_none;
  const std::vector<Instance> instances = make_instances(rule, options.instances, &why_none);
  return check_bounded(instances, why_none, options);
}

BoundedResult check_bounded(const std::vector<Instance>& instances, const std::string& why_none,
                            const BoundedOptions& options) {
  if (instances.empty()) return {BoundedVerdict::kUnknown, 0, why_none};
  Semantics semantics;
  BoundedResult result;
  for (const Instance& instance : instances) {
    Comparison comparison;
    try {
      comparison = compare(semantics, instance, options.timeout_ms);
    } catch (const NoSemantics& e) {
      comparison = {BoundedVerdict::kUnknown, e.what()};
    }
    if (comparison.verdict != BoundedVerdict::kHolds) return {comparison.verdict, result.instances, comparison.detail};
    ++result.instances;
  }
  result.verdict = BoundedVerdict::kHolds;
  result.detail = "equal for all real inputs and weights on " + std::to_string(result.instances) +
                  " instance(s), dims 1-" + std::to_string(options.instances.max_dim);
  return result;
}

const char* to_string(BoundedVerdict verdict) {
  switch (verdict) {
    case BoundedVerdict::kHolds: return "holds";
    case BoundedVerdict::kRefuted: return "refuted";
    case BoundedVerdict::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace graphsub::verify

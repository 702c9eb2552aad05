// The axiom path: a rule derived by Z3 from the operator axioms, over uninterpreted tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "rules/rule.h"
#include "verify/instance_generator.h"

namespace graphsub::verify {

/// Z3 resource units a query deriving a rule may use by default: every shipped rule the axioms
/// derive takes under 200,000 (2026-11-25); the queries that fail spend this in 4-5 s here.
inline constexpr uint64_t kAxiomRlimit = 2000000;

/// One axiom at one layout (an instance of it), with the functions each side applies: what
/// decides, before anything is translated for a rule, whether it can take part in its proof.
struct AxiomLayout {
  std::size_t axiom = 0;     ///< Index into AxiomSet::axioms.
  std::size_t instance = 0;  ///< Index into AxiomSet::instances[axiom].
  std::set<std::string> before;
  std::set<std::string> after;
  bool needs_values = false;  ///< Its conditions ask value(x), a tensor's constant value.
  bool closed = false;        ///< A closed axiom (rules::Rule::closed): joins only on the goal's own functions.
};

/// The operator axioms and their small instances, made once for every rule's proof (each
/// instance's match points into `axioms`, so the set is moved, never copied).
struct AxiomSet {
  std::vector<rules::Rule> axioms;
  std::vector<std::vector<Instance>> instances;  ///< Per axiom: the layouts it is stated at.
  std::vector<AxiomLayout> layouts;              ///< Every distinct axiom formula, in order.
  AxiomSet() = default;
  AxiomSet(const AxiomSet&) = delete;
  AxiomSet& operator=(const AxiomSet&) = delete;
  AxiomSet(AxiomSet&&) = default;
  AxiomSet& operator=(AxiomSet&&) = default;
};

/// Takes the axioms and finds the instances (ranks and list lengths) each is stated at.
AxiomSet prepare_axioms(std::vector<rules::Rule> axioms, const InstanceOptions& options);

/// What the axiom path concluded about one rule.
struct AxiomResult {
  bool proved = false;
  std::string detail;  ///< How many layouts were proved, or why not.
};

/// Tries to derive `rule` from the axioms at the layout of each of its instances (made from
/// `rule`): the axioms as quantified equations (E-matching on both sides), the rule's conditions
/// as hypotheses, and `source != target` asserted; proved when Z3 finds that unsatisfiable at
/// every layout. Each query is bounded by `rlimit` units of Z3's resource counter (deterministic:
/// the same verdict on any machine and load) and, as a safety net, by `timeout_ms`.
AxiomResult prove_from_axioms(const rules::Rule& rule, const std::vector<Instance>& instances,
                              const AxiomSet& axioms, unsigned timeout_ms, uint64_t rlimit = kAxiomRlimit);

/// Whether the axioms, all together, contradict each other.
enum class Consistency { kConsistent, kContradictory, kUnknown };

struct ConsistencyResult {
  Consistency verdict = Consistency::kUnknown;
  std::string detail;
};

/// Checks the whole axiom set at every layout it is stated at, together with two tensors that
/// differ: a model (Z3 with model-based instantiation) means no contradiction, since an
/// inconsistent set would equate every two tensors; unsat means the axioms contradict each
/// other. Bounded by `timeout_ms`.
ConsistencyResult check_consistency(const AxiomSet& axioms, unsigned timeout_ms);

}  // namespace graphsub::verify

// Proving rules from the axioms: quantified equations over uninterpreted tensors, checked by Z3.
#include "verify/axiom_prover.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "verify/semantics.h"
#include "verify/term_translator.h"

namespace graphsub::verify {
namespace {

/// Instances each axiom is drawn at, at least.
constexpr int kAxiomInstances = 32;

z3::expr all_of(z3::context& context, const std::vector<z3::expr>& terms) {
  z3::expr_vector vector(context);
  for (const z3::expr& term : terms) vector.push_back(term);
  return z3::mk_and(vector);
}

z3::expr sides_equal(z3::context& context, const Equation& equation) {
  std::vector<z3::expr> equalities;
  for (const auto& [before, after] : equation.sides) equalities.push_back(before == after);
  return all_of(context, equalities);
}

/// ∀ bound. hypotheses → sides equal. Z3 picks the triggers (E-matching patterns) itself:
/// patterns given through the C API made Z3 4.8.12 crash in the solver.
z3::expr quantified(z3::context& context, const Equation& equation) {
  const z3::expr body = z3::implies(all_of(context, equation.hypotheses), sides_equal(context, equation));
  if (equation.bound.empty()) return body;
  z3::expr_vector bound(context);
  for (const z3::expr& constant : equation.bound) bound.push_back(constant);
  return z3::forall(bound, body);
}

/// The functions (ops at a layout) a term applies, by name: those that make tensors, not dim(),
/// value() and the like, which only describe them.
void functions_in(const z3::expr& term, std::set<std::string>& names) {
  if (!term.is_app()) return;
  if (term.num_args() > 0 && term.decl().decl_kind() == Z3_OP_UNINTERPRETED &&
      term.get_sort().sort_kind() == Z3_UNINTERPRETED_SORT) {
    names.insert(term.decl().name().str());
  }
  for (unsigned i = 0; i < term.num_args(); ++i) functions_in(term.arg(i), names);
}

/// One axiom at one layout: its formula and the functions each side applies.
struct AxiomFormula {
  std::string axiom;  ///< Its name.
  z3::expr formula;
  std::set<std::string> before;
  std::set<std::string> after;
};

AxiomFormula formula_of(z3::context& context, const std::string& name, const Equation& equation) {
  AxiomFormula result{name, quantified(context, equation), {}, {}};
  for (const auto& [before, after] : equation.sides) {
    functions_in(before, result.before);
    functions_in(after, result.after);
  }
  return result;
}

/// Every axiom at every layout it has an instance of (duplicates once).
std::vector<AxiomFormula> axiom_formulas(TermTranslator& translator, const AxiomSet& axioms) {
  std::vector<AxiomFormula> formulas;
  std::set<unsigned> seen;  // Z3 shares equal terms, so an equal formula has the same id.
  for (std::size_t a = 0; a < axioms.axioms.size(); ++a) {
    for (const Instance& instance : axioms.instances[a]) {
      try {
        AxiomFormula formula = formula_of(translator.context(), axioms.axioms[a].name, translator.translate(axioms.axioms[a], instance));
        if (seen.insert(formula.formula.id()).second) formulas.push_back(std::move(formula));
      } catch (const NoSemantics&) {
        continue;  // An axiom the translation cannot state at this layout proves nothing there.
      }
    }
  }
  return formulas;
}

bool meets(const std::set<std::string>& some, const std::set<std::string>& known) {
  return std::any_of(some.begin(), some.end(), [&](const std::string& name) { return known.count(name) != 0; });
}

bool subset(const std::set<std::string>& part, const std::set<std::string>& whole) {
  return std::includes(whole.begin(), whole.end(), part.begin(), part.end());
}

/// The axioms that can take part in deriving `goal`: starting from the functions the goal
/// applies, an axiom joins when one side applies only functions known so far, and then brings
/// the other side's. Fewer axioms keep E-matching from spending its time on the irrelevant ones.
std::vector<z3::expr> relevant(const std::vector<AxiomFormula>& formulas, const Equation& goal,
                               std::set<std::string>& known) {
  for (const auto& [before, after] : goal.sides) {
    functions_in(before, known);
    functions_in(after, known);
  }
  std::vector<bool> taken(formulas.size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i < formulas.size(); ++i) {
      // A side that is a bare tensor (x * 1 -> x) applies nothing, so it cannot start the axiom;
      // the other side then can once any of its functions is known (concat(split(x)) -> x
      // fires on the split alone).
      const AxiomFormula& f = formulas[i];
      const bool by_before = !f.before.empty() && (subset(f.before, known) || (f.after.empty() && meets(f.before, known)));
      const bool by_after = !f.after.empty() && (subset(f.after, known) || (f.before.empty() && meets(f.after, known)));
      if (taken[i] || !(by_before || by_after)) continue;
      taken[i] = grew = true;
      known.insert(formulas[i].before.begin(), formulas[i].before.end());
      known.insert(formulas[i].after.begin(), formulas[i].after.end());
    }
  }
  std::vector<z3::expr> result;
  for (std::size_t i = 0; i < formulas.size(); ++i) {
    if (taken[i]) result.push_back(formulas[i].formula);
  }
  return result;
}

/// Appends the query, in SMT-LIB 2, to the file GRAPHSUB_SMT_DUMP names (for `z3 FILE` by hand).
void dump_query(z3::solver& solver) {
  if (const char* dump = std::getenv("GRAPHSUB_SMT_DUMP")) {
    std::ofstream(dump, std::ios::app) << solver.to_smt2() << "\n";
  }
}

/// Whether the axioms derive one translated rule: "" when proved, else why not.
std::string derive(z3::context& context, const std::vector<z3::expr>& axioms, const Equation& goal,
                   unsigned timeout_ms, uint64_t rlimit) {
  z3::solver solver(context);
  z3::params params(context);
  params.set("timeout", timeout_ms);
  params.set("rlimit", static_cast<unsigned>(rlimit));
  // E-matching only: model-based instantiation would spend the whole timeout on every rule the
  // axioms do not derive, and cannot prove more here (the goals are ground equations).
  params.set("smt.mbqi", false);
  solver.set(params);
  for (const z3::expr& axiom : axioms) solver.add(axiom);
  for (const z3::expr& hypothesis : goal.hypotheses) solver.add(hypothesis);
  solver.add(!sides_equal(context, goal));
  dump_query(solver);
  switch (solver.check()) {
    case z3::unsat: return {};
    case z3::sat: return "the axioms do not derive it";
    case z3::unknown: break;
  }
  const std::string reason = solver.reason_unknown();
  // Z3 4.8.12 reports the effort limit as "canceled" (as it does a timeout), sometimes as
  // "push canceled" or "max. resource limit exceeded".
  if (reason.find("canceled") != std::string::npos || reason.find("resource limit") != std::string::npos ||
      reason == "timeout") {
    return "Z3 gave up deriving it from the axioms (--axiom-effort or --axiom-timeout reached)";
  }
  return "the axioms do not derive it (" + reason + ")";
}

}  // namespace

AxiomSet prepare_axioms(std::vector<rules::Rule> axioms, const InstanceOptions& options) {
  AxiomSet set;
  set.axioms = std::move(axioms);
  // An axiom is stated only at the layouts (ranks, list lengths) its instances have, and a rule
  // needs each axiom at its own layouts: more instances than a rule's check cover more of them.
  InstanceOptions wide = options;
  wide.count = std::max(options.count, kAxiomInstances);
  for (const rules::Rule& axiom : set.axioms) set.instances.push_back(make_instances(axiom, wide));
  return set;
}

namespace {

/// A Z3 context with the axioms translated into it, made afresh for each rule: a context shared
/// between rules would make a verdict near the effort limit depend on which rules came before.
struct Prover {
  explicit Prover(const AxiomSet& set) : translator(context), formulas(axiom_formulas(translator, set)) {}
  z3::context context;
  TermTranslator translator;
  std::vector<AxiomFormula> formulas;
};

}  // namespace

ConsistencyResult check_consistency(const AxiomSet& axioms, unsigned timeout_ms) {
  Prover prover(axioms);
  z3::context& context = prover.context;
  TermTranslator& translator = prover.translator;
  const std::vector<AxiomFormula>& formulas = prover.formulas;
  z3::solver solver(context);
  z3::params params(context);
  params.set("timeout", timeout_ms);
  params.set("smt.mbqi", true);
  solver.set(params);
  // Each formula behind an indicator, so an unsat core names the axioms that contradict.
  std::map<std::string, std::string> indicators;
  for (std::size_t i = 0; i < formulas.size(); ++i) {
    const std::string indicator = "axiom!" + std::to_string(i);
    solver.add(formulas[i].formula, indicator.c_str());
    indicators.emplace(indicator, formulas[i].axiom);
  }
  std::set<std::string> functions;
  for (const AxiomFormula& formula : formulas) {
    functions.insert(formula.before.begin(), formula.before.end());
    functions.insert(formula.after.begin(), formula.after.end());
  }
  for (const z3::expr& fact : translator.dim_facts(functions)) solver.add(fact);
  const z3::expr a = context.constant("a", translator.tensor_sort());
  const z3::expr b = context.constant("b", translator.tensor_sort());
  solver.add(a != b);
  dump_query(solver);
  const std::string stated = std::to_string(formulas.size()) + " axiom formulas (every axiom at its layouts)";
  switch (solver.check()) {
    case z3::sat: return {Consistency::kConsistent, "Z3 found a model of the " + stated + " with two different tensors"};
    case z3::unsat: {
      std::set<std::string> names;
      const z3::expr_vector core = solver.unsat_core();
      for (unsigned i = 0; i < core.size(); ++i) {
        const auto it = indicators.find(core[i].to_string());
        if (it != indicators.end()) names.insert(it->second);
      }
      std::string list;
      for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
      return {Consistency::kContradictory, "the " + stated + " contradict each other (they equate every two "
                                           "tensors); the contradiction uses " + list};
    }
    case z3::unknown: break;
  }
  return {Consistency::kUnknown, "Z3 could not decide whether the " + stated + " are consistent (" +
                                     solver.reason_unknown() + ")"};
}

AxiomResult prove_from_axioms(const rules::Rule& rule, const std::vector<Instance>& instances,
                              const AxiomSet& axioms, unsigned timeout_ms, uint64_t rlimit) {
  Prover prover(axioms);
  z3::context& context = prover.context;
  TermTranslator& translator = prover.translator;
  const std::vector<AxiomFormula>& formulas = prover.formulas;
  std::set<std::string> layouts;
  for (const Instance& instance : instances) {
    Equation goal;
    try {
      goal = translator.translate(rule, instance);
    } catch (const NoSemantics& e) {
      return {false, e.what()};
    }
    if (!layouts.insert(sides_equal(context, goal).to_string()).second) continue;
    std::set<std::string> functions;
    std::vector<z3::expr> given = relevant(formulas, goal, functions);
    for (const z3::expr& fact : translator.dim_facts(functions)) given.push_back(fact);
    const std::string failure = derive(context, given, goal, timeout_ms, rlimit);
    if (!failure.empty()) return {false, failure + " (on " + instance.description + ")"};
  }
  if (layouts.empty()) return {false, "no instance to state it at"};
  return {true, "derived from the axioms at " + std::to_string(layouts.size()) + " layout(s)"};
}

}  // namespace graphsub::verify

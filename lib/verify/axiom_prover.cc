// Proving rules from the axioms: quantified equations over uninterpreted tensors, checked by Z3.
#include "verify/axiom_prover.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "verify/semantics.h"
#include "verify/term_translator.h"

namespace graphsub::verify {
namespace {

/// Instances each axiom is drawn at, at least.
constexpr int kAxiomInstances = 128;

/// Random seeds each query is tried with, one after another, until one proves it.
constexpr unsigned kAxiomSeeds = 4;

/// derive's failure where every seed ran out of effort (or time), as opposed to Z3 finding the
/// axioms do not derive the goal: only such a failure is worth deriving again case by case.
constexpr const char* kOutOfEffort = "Z3 gave up deriving it from the axioms (--axiom-effort or --axiom-timeout reached)";

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

/// The trigger of an axiom written from an Identity node (`x -> conv(x, I_conv)`: a rule's
/// source cannot be empty): its other side. Z3 otherwise triggers it on Identity(x), a term no
/// goal has, and the axiom never fires (an identity branch folded into a convolution, whose
/// proof starts from the convolution with the identity kernel, 2026-12-07).
std::optional<z3::expr> identity_trigger(const Equation& equation) {
  if (equation.sides.size() != 1) return std::nullopt;
  const auto& [before, after] = equation.sides.front();
  if (!before.is_app() || before.decl().name().str() != "Identity/1()#0") return std::nullopt;
  if (!after.is_app() || after.num_args() == 0) return std::nullopt;  // x -> x: nothing to trigger on
  return after;
}

/// ∀ bound. hypotheses → sides equal. Z3 picks the triggers (E-matching patterns) itself, but
/// for an Identity axiom's (identity_trigger): the queries are solved from their printed text,
/// parsed into a fresh context (derive), which is where the trigger takes effect.
/// The quantifier is named after the axiom (its `qid`, which Z3's `smt.qi.profile` prints).
z3::expr quantified(z3::context& context, const std::string& name, const Equation& equation) {
  const z3::expr body = z3::implies(all_of(context, equation.hypotheses), sides_equal(context, equation));
  if (equation.bound.empty()) return body;
  const std::optional<z3::expr> trigger = identity_trigger(equation);
  return named_forall(context, name, equation.bound, body, trigger ? &*trigger : nullptr);
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

/// Whether `term` applies the function named `name`.
bool applies(const z3::expr& term, const std::string& name) {
  if (!term.is_app()) return false;
  if (term.decl().name().str() == name) return true;
  for (unsigned i = 0; i < term.num_args(); ++i) {
    if (applies(term.arg(i), name)) return true;
  }
  return false;
}

bool any_applies(const std::vector<z3::expr>& terms, const std::string& name) {
  return std::any_of(terms.begin(), terms.end(), [&](const z3::expr& term) { return applies(term, name); });
}

/// One axiom at one layout, translated: its formula and where it came from.
struct AxiomFormula {
  std::string axiom;  ///< Its name.
  z3::expr formula;
};

/// The functions each side of `equation` applies, and whether its conditions ask value(x).
AxiomLayout layout_of(const Equation& equation) {
  AxiomLayout layout;
  for (const auto& [before, after] : equation.sides) {
    functions_in(before, layout.before);
    functions_in(after, layout.after);
  }
  layout.needs_values = any_applies(equation.hypotheses, "value");
  return layout;
}

/// The axiom formulas of `layouts` (indices into set.layouts), translated in `translator`'s context.
std::vector<AxiomFormula> axiom_formulas(TermTranslator& translator, const AxiomSet& set,
                                         const std::vector<std::size_t>& layouts) {
  std::vector<AxiomFormula> formulas;
  for (std::size_t i : layouts) {
    const AxiomLayout& layout = set.layouts[i];
    const rules::Rule& axiom = set.axioms[layout.axiom];
    const Equation equation = translator.translate(axiom, set.instances[layout.axiom][layout.instance]);
    formulas.push_back({axiom.name, quantified(translator.context(), axiom.name, equation)});
  }
  return formulas;
}

std::vector<z3::expr> formulas_only(const std::vector<AxiomFormula>& formulas) {
  std::vector<z3::expr> result;
  for (const AxiomFormula& formula : formulas) result.push_back(formula.formula);
  return result;
}

bool meets(const std::set<std::string>& some, const std::set<std::string>& known) {
  return std::any_of(some.begin(), some.end(), [&](const std::string& name) { return known.count(name) != 0; });
}

bool subset(const std::set<std::string>& part, const std::set<std::string>& whole) {
  return std::includes(whole.begin(), whole.end(), part.begin(), part.end());
}

/// The axiom layouts that can take part in deriving `goal`: starting from the functions the goal
/// applies, an axiom joins when one side applies only functions known so far, and then brings
/// the other side's. Fewer axioms keep E-matching from spending its time on the irrelevant ones.
std::vector<std::size_t> relevant(const std::vector<AxiomLayout>& layouts, const Equation& goal,
                                  std::set<std::string>& known) {
  for (const auto& [before, after] : goal.sides) {
    functions_in(before, known);
    functions_in(after, known);
  }
  // Only a rule's own conditions say what a tensor's value is (axioms equate tensors, never
  // give values), so an axiom that asks for one (x + 0 -> x) cannot apply to a rule that says
  // none, and would only make Z3 branch on every sum whether its operand is zero.
  const bool goal_values = any_applies(goal.hypotheses, "value");
  // A closed axiom joins only where the goal applies every function of both its sides, and
  // brings nothing new; elsewhere it is skipped like a value-asking one.
  const std::set<std::string> own = known;
  std::vector<bool> taken(layouts.size(), false);
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const AxiomLayout& f = layouts[i];
    const bool closed_out = f.closed && !(subset(f.before, own) && subset(f.after, own));
    taken[i] = (f.needs_values && !goal_values) || closed_out;
  }
  const std::vector<bool> skipped = taken;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i < layouts.size(); ++i) {
      // A side that is a bare tensor (x * 1 -> x) applies nothing, so it cannot start the axiom;
      // the other side then can once any of its functions is known (concat(split(x)) -> x
      // fires on the split alone).
      const AxiomLayout& f = layouts[i];
      const bool by_before = !f.before.empty() && (subset(f.before, known) || (f.after.empty() && meets(f.before, known)));
      const bool by_after = !f.after.empty() && (subset(f.after, known) || (f.before.empty() && meets(f.after, known)));
      if (taken[i] || !(by_before || by_after)) continue;
      taken[i] = grew = true;
      known.insert(f.before.begin(), f.before.end());
      known.insert(f.after.begin(), f.after.end());
    }
  }
  std::vector<std::size_t> result;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    if (taken[i] && !skipped[i]) result.push_back(i);
  }
  return result;
}

/// The solver's assertions in SMT-LIB 2; appended to the file GRAPHSUB_SMT_DUMP names, for
/// `z3 FILE` by hand.
std::string query_text(z3::solver& solver) {
  const std::string text = solver.to_smt2();
  if (const char* dump = std::getenv("GRAPHSUB_SMT_DUMP")) std::ofstream(dump, std::ios::app) << text << "\n";
  return text;
}

void dump_query(z3::solver& solver) { query_text(solver); }

/// Whether the axioms derive one translated rule: "" when proved, else why not. The query is
/// solved from its SMT-LIB text in a context of its own: E-matching follows the order in which
/// terms were made, and the translation's context made them rule by rule and axiom by axiom, so
/// a rule's verdict would hang on that history (one needing 1.1 M units from its text was not
/// found in 30 M in place). From the text, the verdict depends on the query alone, and `z3` on
/// the dumped query gives the same.
std::string derive(z3::context& context, const std::vector<z3::expr>& axioms, const Equation& goal,
                   unsigned timeout_ms, uint64_t rlimit) {
  z3::solver built(context);
  for (const z3::expr& axiom : axioms) built.add(axiom);
  for (const z3::expr& hypothesis : goal.hypotheses) built.add(hypothesis);
  built.add(!sides_equal(context, goal));
  std::string text = query_text(built);
  text = text.substr(0, text.rfind("(check-sat)"));
  z3::context own;
  z3::solver parsed(own);
  parsed.from_string(text.c_str());
  const z3::expr_vector assertions = parsed.assertions();
  if (assertions.size() != built.assertions().size()) {
    throw NoSemantics("axiom path: the query did not parse back from SMT-LIB (" + std::to_string(assertions.size()) +
                      " of " + std::to_string(built.assertions().size()) + " assertions)");
  }
  // Which instances E-matching tries first follows Z3's random seed, and a proof one seed finds
  // in 0.1 M units another may miss in 20 M: a few fixed seeds, each with the whole effort.
  std::string reason;
  for (unsigned seed = 0; seed < kAxiomSeeds; ++seed) {
    z3::solver solver(own);
    z3::params params(own);
    params.set("timeout", timeout_ms);
    params.set("rlimit", static_cast<unsigned>(rlimit));
    params.set("random_seed", seed);
    // E-matching only: model-based instantiation would spend the whole timeout on every rule the
    // axioms do not derive, and cannot prove more here (the goals are ground equations).
    params.set("smt.mbqi", false);
    solver.set(params);
    for (unsigned i = 0; i < assertions.size(); ++i) solver.add(assertions[i]);
    switch (solver.check()) {
      case z3::unsat: return {};
      case z3::sat: return "the axioms do not derive it";
      case z3::unknown: break;
    }
    reason = solver.reason_unknown();
  }
  // Z3 4.8.12 reports the effort limit as "canceled" (as it does a timeout), sometimes as
  // "push canceled" or "max. resource limit exceeded".
  if (reason.find("canceled") != std::string::npos || reason.find("resource limit") != std::string::npos ||
      reason == "timeout") {
    return kOutOfEffort;
  }
  return "the axioms do not derive it (" + reason + ")";
}

/// derive, once per case of the goal's first open fused activation (the goal with that case as
/// a hypothesis too), each with the whole effort: a query over all four cases at once can run
/// out of effort where each case alone is derived at once (pad-depthwise-conv-bias-to-16: each
/// case in under 1 s, all four together not at 10 times the default effort with some seeds).
/// Empty when every case is derived, else the first case's failure.
std::string derive_case_by_case(z3::context& context, const std::vector<z3::expr>& axioms, const Equation& goal,
                                unsigned timeout_ms, uint64_t rlimit) {
  for (const z3::expr& one_case : goal.activation_cases.front()) {
    Equation narrowed = goal;
    narrowed.hypotheses.push_back(one_case);
    const std::string failure = derive(context, axioms, narrowed, timeout_ms, rlimit);
    if (!failure.empty()) return failure + " (case by case, at " + one_case.to_string() + ")";
  }
  return {};
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
  // Each distinct formula once, with the functions its sides apply, found in a scratch context;
  // a rule's proof then translates only the ones that can take part in it.
  z3::context scratch;
  TermTranslator translator(scratch);
  // Z3 shares equal terms, so an equal formula has the same id (while it lives: ids are reused).
  std::set<unsigned> seen;
  z3::expr_vector kept(scratch);
  for (std::size_t a = 0; a < set.axioms.size(); ++a) {
    for (std::size_t i = 0; i < set.instances[a].size(); ++i) {
      try {
        const Equation equation = translator.translate(set.axioms[a], set.instances[a][i]);
        kept.push_back(quantified(scratch, set.axioms[a].name, equation));
        if (!seen.insert(kept.back().id()).second) continue;
        AxiomLayout layout = layout_of(equation);
        layout.axiom = a;
        layout.instance = i;
        layout.closed = set.axioms[a].closed;
        set.layouts.push_back(std::move(layout));
      } catch (const NoSemantics&) {
        continue;  // An axiom the translation cannot state at this layout proves nothing there.
      }
    }
  }
  return set;
}

namespace {

/// A Z3 context for one rule's proof (or the consistency check), with its translator.
struct Prover {
  z3::context context;
  TermTranslator translator{context};
};

}  // namespace

ConsistencyResult check_consistency(const AxiomSet& axioms, unsigned timeout_ms) {
  Prover prover;
  z3::context& context = prover.context;
  TermTranslator& translator = prover.translator;
  std::vector<std::size_t> every(axioms.layouts.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  const std::vector<AxiomFormula> formulas = axiom_formulas(translator, axioms, every);
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
  for (const AxiomLayout& layout : axioms.layouts) {
    functions.insert(layout.before.begin(), layout.before.end());
    functions.insert(layout.after.begin(), layout.after.end());
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
  Prover prover;
  z3::context& context = prover.context;
  TermTranslator& translator = prover.translator;
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
    std::vector<z3::expr> given = formulas_only(axiom_formulas(translator, axioms, relevant(axioms.layouts, goal, functions)));
    for (const z3::expr& fact : translator.dim_facts(functions)) given.push_back(fact);
    std::string failure = derive(context, given, goal, timeout_ms, rlimit);
    if (failure == kOutOfEffort && !goal.activation_cases.empty()) {
      failure = derive_case_by_case(context, given, goal, timeout_ms, rlimit);
    }
    if (!failure.empty()) return {false, failure + " (on " + instance.description + ")"};
  }
  if (layouts.empty()) return {false, "no instance to state it at"};
  return {true, "derived from the axioms at " + std::to_string(layouts.size()) + " layout(s)"};
}

}  // namespace graphsub::verify

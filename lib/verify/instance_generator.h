// Small concrete graphs a rule applies to: what the bounded check executes symbolically.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rewrite/match.h"
#include "rules/rule.h"

namespace graphsub::verify {

/// One place a rule applies: its source pattern built as a graph, and the graph the rewriter made.
struct Instance {
  /// The source pattern as a graph: each pattern input a graph input, or a weight where the rule
  /// needs one (`weight(x)`, `value(x)`); every source value the rule maps is a graph output,
  /// named after its pattern name.
  ir::Graph source;
  /// `source` after `rewrite::apply` of the rule's match (graph outputs keep their names).
  ir::Graph target;
  /// Weights whose values are universally quantified (all but those a `value(x)` fixes).
  std::set<std::string> free_weights;
  /// "x [1,2,3,3], w [2,2,1,1] weight, one [1] = 1; y: group=1 strides=[1,1] ...": the pattern
  /// inputs' shapes (weights and constants marked) and each source node's attributes by its first
  /// output, for reports.
  std::string description;
  /// The match of the rule's source that made `target` (it binds every node of `source`).
  rewrite::Match match;
  /// Which drawn source graph this is: instances with one id (from one InstanceCache) have the
  /// same `source`, weights and all, so its runs may be shared. 0 from make_instances.
  uint64_t source_id = 0;
};

/// How instances are searched for.
struct InstanceOptions {
  int count = 6;          ///< Distinct instances wanted.
  int attempts = 3000;    ///< Random candidate graphs tried at most.
  uint32_t seed = 1;
  int64_t max_dim = 3;    ///< Dims are drawn from 1..max_dim (kernels 1 and 3).
  /// Candidates with a larger tensor are dropped: every element becomes a Z3 term.
  int64_t max_elements = 256;
  /// For a rule whose conditions equate sums of dims, every attempt draws the pattern inputs'
  /// dims from the linear equalities of its conditions (`DimEquations`) before the nodes: parts
  /// whose sums must agree are rarely drawn so op by op, and where they are, they mostly line up
  /// (a product of concatenations whose blocks do not line up is where such a rule fails). The
  /// bounded check and the generator's float check set it; it changes nothing for other rules.
  bool solve_dims = false;
  /// Each attempt draws the limit of its dims from min_dim_limit..max_dim (most of its dims are
  /// drawn below that limit).
  int64_t min_dim_limit = 1;
  /// Rule variables and values: when not empty, an instance is kept only when it binds one of
  /// these variables to another value than the one given, and the search stops after
  /// `kMovedPatience` attempts in a row that find no such instance.
  std::vector<std::pair<std::string, ir::AttrValue>> other_than;
};

/// Whether `match` binds `variable` to another value than `value` (an instance that moves it off
/// the value, `InstanceOptions::other_than`).
bool moves_off(const rewrite::Match& match, const std::string& variable, const ir::AttrValue& value);

/// Up to `options.count` distinct instances of `rule`, found by drawing small random shapes and
/// attribute values for its source pattern, keeping those the Matcher matches whole and `apply`
/// rewrites. Deterministic for a seed. When none is found, returns empty and says why in
/// `*why_none`: of the reasons candidates failed for, the most common among those that got
/// furthest (built, then matched whole, then rewritten), e.g. "no small instance found in 3000
/// attempts: where 1 == 0 never held".
std::vector<Instance> make_instances(const rules::Rule& rule, const InstanceOptions& options,
                                     std::string* why_none = nullptr);

/// What of a rule an instance search reads before its target, as text: its source pattern,
/// conditions and mapped source values. Rules with equal keys draw the same source graphs.
std::string source_key(const rules::Rule& rule);

class InstanceSearch;

/// make_instances for many rules, several of which have one source: rules with the same source
/// pattern, conditions and mapped source values draw the same source graphs for the same
/// options, so the graphs one rule's search built and matched are kept and each other rule only
/// rewrites them. instances() gives exactly what make_instances gives. The rule generator's
/// candidates share their sources about two to one; what is kept grows with the searches asked
/// for, so one cache serves one group of rules with a common source.
class InstanceCache {
 public:
  InstanceCache();
  ~InstanceCache();
  InstanceCache(const InstanceCache&) = delete;
  InstanceCache& operator=(const InstanceCache&) = delete;

  /// make_instances(rule, options), without the reason for none.
  std::vector<Instance> instances(const rules::Rule& rule, const InstanceOptions& options);

 private:
  std::map<std::string, std::unique_ptr<InstanceSearch>> searches_;
};

}  // namespace graphsub::verify

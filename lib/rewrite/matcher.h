// Finding where rules' source patterns occur in a graph. Matching never changes the graph.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rewrite/match.h"
#include "rules/rule.h"

namespace graphsub::rewrite {

/// Finds every match of a set of rules (rules/README.md gives the semantics). Rules are indexed by
/// the op of their first source node, so a graph node is only tried as the anchor of rules that
/// can start there. The rules must outlive the Matcher and the matches it returns.
///
/// A match binds each source node to a distinct graph node of the same op with exactly as many
/// inputs, and each source value name to a graph value, distinct but for pattern inputs, which
/// may share one; attribute constraints and
/// `where` conditions hold; and every value the matched nodes produce that is used outside the
/// match (by another node, or as a graph output) is the source of a `map`. Opaque nodes never
/// match.
///
/// A source node of a commutative op (ops::is_commutative) with two named inputs also matches a
/// graph node whose two inputs are the other way round, unless the Matcher was made with
/// OperandOrder::kAsWritten: `Add(p, q)` in a rule matches `Add(b, a)` with p = b, q = a. A rule
/// states its computation for every binding of its inputs, and the swapped node computes the same.
class Matcher {
 public:
  /// How the operands of a commutative source node are matched.
  enum class OperandOrder {
    kEitherOrder,  ///< As written or swapped: what the optimizer searches with.
    kAsWritten,    ///< As written only: the verifier's instances, built from the source as written.
  };

  /// Prepares the rules; throws std::invalid_argument for a rule whose source is empty or not
  /// connected (the parser rejects both).
  explicit Matcher(const std::vector<rules::Rule>& rules, OperandOrder order = OperandOrder::kEitherOrder);
  /// The rules must outlive the Matcher: a temporary list is refused.
  explicit Matcher(std::vector<rules::Rule>&& rules, OperandOrder order = OperandOrder::kEitherOrder) = delete;

  /// This Matcher less the rules named in `names`: what a search without them matches.
  Matcher without(const std::vector<std::string>& names) const;

  /// Every match of every rule, ordered by anchor node id, then rule order, then the ids of the
  /// other nodes.
  std::vector<Match> find_all(const ir::Graph& graph) const;

  /// The matches of find_all that bind one of `nodes` (live nodes of `graph`), in the same order.
  /// Only anchors a source pattern's size away from those nodes are tried, so a search that knows
  /// the nodes a rewrite made finds the matches it enabled without matching the whole graph.
  std::vector<Match> find_touching(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) const;

  /// Every match of one rule (any rule, not only the Matcher's), in the same order; throws as the
  /// constructor does for a rule it would refuse.
  static std::vector<Match> find(const ir::Graph& graph, const rules::Rule& rule,
                                 OperandOrder order = OperandOrder::kEitherOrder);

  /// How a rule's source is matched: the order of its nodes, each after one it shares a value with.
  struct Plan {
    const rules::Rule* rule = nullptr;
    std::vector<std::size_t> order;  ///< Source node indices; order[0] == 0, the anchor.
    /// Per source node: its two operands may bind the other way round (a commutative op, two
    /// distinct named inputs, and OperandOrder::kEitherOrder).
    std::vector<char> either_order;
    /// Every value name of the source, each once: a search binds them by their index here (its
    /// slot), and names them only in a complete match.
    std::vector<std::string> names;
    std::vector<char> shares;   ///< Per slot: a pattern input other than a list: these may share a value.
    std::vector<char> is_list;  ///< Per slot: a value list (`xs...`).
    std::vector<char> mapped;   ///< Per slot: the source of a `map`.
    /// Per source node: the slots of its inputs and of its outputs, in order.
    std::vector<std::vector<int>> input_slots;
    std::vector<std::vector<int>> output_slots;
    /// Every bare attribute variable of the source (`axis = ?k`), each once: bound by index.
    std::vector<std::string> variables;
    /// Per source node, per attribute setting: the index of its bare variable, or -1 (a literal
    /// or another expression).
    std::vector<std::vector<int>> attr_variables;
  };

 private:
  std::vector<Plan> plans_;
  std::map<ir::OpKind, std::vector<std::size_t>> by_anchor_op_;  ///< Op → indices into plans_.
  std::size_t largest_source_ = 0;  ///< Nodes in the largest source pattern.

  Matcher() = default;
  void add(Plan plan);
};

}  // namespace graphsub::rewrite

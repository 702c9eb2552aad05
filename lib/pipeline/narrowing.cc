// Narrowing before the search: the narrowing rules and the merging of alike Gathers, in turn.
#include "pipeline/narrowing.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "pipeline/layout_forms.h"

namespace graphsub::pipeline {
namespace {

/// True when two index operands pick the same entries: one value, or two constants of equal data.
bool same_indices(const ir::Graph& graph, ir::ValueId a, ir::ValueId b) {
  if (a == b) return true;
  const ir::TensorPtr& x = graph.value(a).data;
  const ir::TensorPtr& y = graph.value(b).data;
  if (graph.value(a).kind != ir::ValueKind::kWeight || graph.value(b).kind != ir::ValueKind::kWeight || !x || !y) {
    return false;
  }
  return x->dtype() == y->dtype() && x->dims() == y->dims() && x->byte_size() == y->byte_size() &&
         std::memcmp(x->bytes(), y->bytes(), x->byte_size()) == 0;
}

}  // namespace

int merge_alike_gathers(ir::Graph& graph) {
  int merged = 0;
  const auto consumers = graph.consumers();
  for (std::size_t value = 0; value < consumers.size(); ++value) {
    std::vector<ir::NodeId> kept;
    for (const auto& [id, input] : consumers[value]) {
      if (input != 0 || !graph.has_node(id) || graph.node(id).op != ir::OpKind::kGather) continue;
      const int64_t axis = graph.node(id).attrs.get_int("axis", 0);
      const ir::ValueId indices = graph.node(id).inputs[1];
      const ir::ValueId output = graph.node(id).outputs[0];
      bool alike = false;
      for (ir::NodeId first : kept) {
        const ir::Node& other = graph.node(first);
        if (other.attrs.get_int("axis", 0) == axis && same_indices(graph, other.inputs[1], indices)) {
          const ir::ValueId into = other.outputs[0];
          graph.replace_all_uses(output, into);
          alike = true;
          ++merged;
          break;
        }
      }
      if (!alike) kept.push_back(id);
    }
  }
  if (merged > 0) graph.remove_dead_nodes();
  return merged;
}

std::optional<ir::Graph> narrow(const ir::Graph& graph, const std::vector<rules::Rule>& rules, int* rewrites) {
  std::optional<ir::Graph> current;
  int total = 0;
  for (;;) {
    int applied = 0;
    std::optional<ir::Graph> next = apply_everywhere(current ? *current : graph, rules, &applied);
    if (!next) next = current ? *current : graph;
    const int merged = merge_alike_gathers(*next);
    if (applied == 0 && merged == 0) break;
    total += applied;
    current = std::move(next);
  }
  if (rewrites) *rewrites = total;
  // Merged Gathers only serve the rules: a graph no rule narrowed is left as it was.
  if (total == 0) return std::nullopt;
  return current;
}

}  // namespace graphsub::pipeline

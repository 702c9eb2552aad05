// Einsum contractions written as the MatMul (and Transposes) they are.
#include "rewrite/einsum_lowering.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/einsum.h"
#include "ops/registry.h"
#include "rewrite/rewriter.h"

namespace graphsub::rewrite {
namespace {

/// How an equation's labels make a batched product, in the axis order of the product.
struct Product {
  std::vector<int64_t> left_perm;    ///< Left operand to [batch..., row, summed].
  std::vector<int64_t> right_perm;   ///< Right operand to [batch..., summed, column].
  std::vector<int64_t> output_perm;  ///< [batch..., row, column] to the output's order.
};

bool contains(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

bool has_repeats(const std::vector<int>& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (std::find(labels.begin() + static_cast<std::ptrdiff_t>(i) + 1, labels.end(), labels[i]) != labels.end()) {
      return true;
    }
  }
  return false;
}

/// The positions of `order`'s labels in `labels`.
std::vector<int64_t> positions(const std::vector<int>& labels, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int label : order) {
    perm.push_back(std::find(labels.begin(), labels.end(), label) - labels.begin());
  }
  return perm;
}

/// The product an equation is, or nullopt when it is not one (see lower_einsums).
std::optional<Product> product_of(const ops::EinsumTerms& terms) {
  if (terms.inputs.size() != 2) return std::nullopt;
  const std::vector<int>& left = terms.inputs[0];
  const std::vector<int>& right = terms.inputs[1];
  const std::vector<int>& out = terms.output;
  if (has_repeats(left) || has_repeats(right)) return std::nullopt;
  std::vector<int> batch;
  std::vector<int> rows;
  std::vector<int> columns;
  for (int label : out) {
    const bool in_left = contains(left, label);
    const bool in_right = contains(right, label);
    if (in_left && in_right) batch.push_back(label);
    else if (in_left) rows.push_back(label);
    else columns.push_back(label);
  }
  std::vector<int> summed;
  for (int label : left) {
    if (contains(out, label)) continue;
    if (!contains(right, label)) return std::nullopt;  // summed within one operand
    summed.push_back(label);
  }
  for (int label : right) {
    if (!contains(out, label) && !contains(left, label)) return std::nullopt;
  }
  // Several row labels only against a matrix (no batch labels): MatMul takes the left operand's
  // leading axes as a batch the right one broadcasts over, as `bnd,dh->bnh` reads.
  const bool rows_fit = rows.size() == 1 || (rows.size() > 1 && batch.empty());
  if (!rows_fit || columns.size() != 1 || summed.size() != 1) return std::nullopt;
  std::vector<int> left_order = batch;
  left_order.insert(left_order.end(), rows.begin(), rows.end());
  left_order.push_back(summed[0]);
  std::vector<int> right_order = batch;
  right_order.push_back(summed[0]);
  right_order.push_back(columns[0]);
  std::vector<int> product_order = batch;
  product_order.insert(product_order.end(), rows.begin(), rows.end());
  product_order.push_back(columns[0]);
  return Product{positions(left, left_order), positions(right, right_order), positions(product_order, out)};
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// `value` transposed by `perm`, or `value` itself when `perm` keeps its order.
std::optional<ir::ValueId> transposed(ir::Graph& graph, ir::ValueId value, const std::vector<int64_t>& perm,
                                      const std::string& name) {
  if (is_identity(perm)) return value;
  ir::Attributes attrs;
  attrs.set("perm", perm);
  return add_canonical_node(graph, ir::OpKind::kTranspose, {value}, std::move(attrs), name);
}

/// Rewrites the Einsum `id` as a product; false (the graph untouched but for dead nodes) when
/// it is not one.
bool lower(ir::Graph& graph, ir::NodeId id) {
  const ir::Node node = graph.node(id);
  const std::string equation = node.attrs.get_string("equation", "");
  if (equation.find("->") == std::string::npos || node.inputs.size() != 2) return false;
  const ir::TensorType& left = graph.value(node.inputs[0]).type;
  const ir::TensorType& right = graph.value(node.inputs[1]).type;
  if (!left.shape.rank_known || !right.shape.rank_known) return false;
  const std::optional<ops::EinsumTerms> terms = ops::parse_einsum(equation, {left.shape.rank(), right.shape.rank()});
  if (!terms) return false;
  const std::optional<Product> product = product_of(*terms);
  if (!product) return false;
  const std::optional<ir::ValueId> a = transposed(graph, node.inputs[0], product->left_perm, node.name + "/lhs");
  const std::optional<ir::ValueId> b = transposed(graph, node.inputs[1], product->right_perm, node.name + "/rhs");
  if (!a || !b) return false;
  const std::optional<ir::ValueId> matrix = add_canonical_node(graph, ir::OpKind::kMatMul, {*a, *b}, {}, node.name + "/MatMul");
  if (!matrix) return false;
  const std::optional<ir::ValueId> result = transposed(graph, *matrix, product->output_perm, node.name + "/out");
  if (!result) return false;
  graph.replace_all_uses(node.outputs[0], *result);
  graph.remove_node(id);
  return true;
}

}  // namespace

ir::Graph lower_einsums(const ir::Graph& graph, int* lowered) {
  ir::Graph result = graph;
  int count = 0;
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == ir::OpKind::kEinsum && lower(result, id)) ++count;
  }
  result.remove_dead_nodes();
  if (lowered) *lowered = count;
  return result;
}

}  // namespace graphsub::rewrite

// Einsums written as MatMul: which equations are products, the Transposes they need, and the same
// values after.
#include "rewrite/einsum_lowering.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;

/// A graph of one Einsum of `equation` on inputs of these dims ("N" symbolic, digits sizes).
ir::Graph einsum_graph(const std::string& equation, const std::vector<std::vector<ir::Dim>>& operands) {
  ir::Graph graph;
  std::vector<ir::ValueId> inputs;
  for (std::size_t i = 0; i < operands.size(); ++i) inputs.push_back(input(graph, "x" + std::to_string(i), operands[i]));
  graph.set_outputs({first(graph, add_inferred(graph, ir::OpKind::kEinsum, inputs, attr("equation", equation)))});
  return graph;
}

/// The op names of the graph's nodes in topological order, e.g. "Transpose MatMul".
std::string ops_of(const ir::Graph& graph) {
  std::string text;
  const std::vector<ir::NodeId> order = *graph.topological_order();
  for (ir::NodeId id : order) {
    text += (text.empty() ? "" : " ") + std::string(ops::kind_name(graph.node(id).op));
  }
  return text;
}

/// The graph lowered, with the count, after checking it computes what `graph` does.
std::string lowered_ops(const ir::Graph& graph, int expected_count) {
  int count = -1;
  const ir::Graph lowered = rewrite::lower_einsums(graph, &count);
  CHECK(count == expected_count);
  runtime::CheckOptions options;
  options.dims = {{"N", 3}};
  const runtime::CheckReport check = runtime::check_equivalent(graph, lowered, options);
  CHECK(check.passed());
  return ops_of(lowered);
}

const ir::Dim N = ir::Dim::named("N");
ir::Dim k(int64_t size) { return ir::Dim::known(size); }

}  // namespace

TEST_CASE("einsum lowering: attention scores and the weighted sum become MatMul", "[einsum_lowering]") {
  // MaxViT's two forms: q . k^T and scores . v, batch and window counts symbolic.
  const ir::Graph scores = einsum_graph("bghid,bghjd->bghij", {{N, k(2), k(3), k(5), k(4)}, {N, k(2), k(3), k(6), k(4)}});
  CHECK(lowered_ops(scores, 1) == "Transpose MatMul");
  const ir::Graph weighted = einsum_graph("bghij,bghjd->bghid", {{N, k(2), k(3), k(5), k(6)}, {N, k(2), k(3), k(6), k(4)}});
  CHECK(lowered_ops(weighted, 1) == "MatMul");
  const ir::Graph lowered = rewrite::lower_einsums(scores);
  CHECK(ir::to_string(lowered.value(lowered.outputs()[0]).type) == "float32[N,2,3,5,6]");
}

TEST_CASE("einsum lowering: operands and output in any order get Transposes", "[einsum_lowering]") {
  // Batch label last in the left operand, output as [column, batch, row].
  const ir::Graph graph = einsum_graph("kib,jbk->jbi", {{k(4), k(5), k(2)}, {k(3), k(2), k(4)}});
  CHECK(lowered_ops(graph, 1) == "Transpose Transpose MatMul Transpose");
  const ir::Graph plain = einsum_graph("ij,jk->ik", {{k(2), k(3)}, {k(3), k(4)}});
  CHECK(lowered_ops(plain, 1) == "MatMul");
  // Several row labels against a matrix: a linear layer, its weight either way round.
  const ir::Graph linear = einsum_graph("bnd,dh->bnh", {{N, k(5), k(4)}, {k(4), k(3)}});
  CHECK(lowered_ops(linear, 1) == "MatMul");
  const ir::Graph transposed_weight = einsum_graph("bld,hd->blh", {{N, k(5), k(4)}, {k(3), k(4)}});
  CHECK(lowered_ops(transposed_weight, 1) == "Transpose MatMul");
  const ir::Graph any_rank = einsum_graph("...d,dh->...h", {{N, k(2), k(5), k(4)}, {k(4), k(3)}});
  CHECK(lowered_ops(any_rank, 1) == "MatMul");
  const ir::Graph rows_apart = einsum_graph("bdn,dh->hbn", {{k(2), k(4), k(5)}, {k(4), k(3)}});
  CHECK(lowered_ops(rows_apart, 1) == "Transpose MatMul Transpose");
  // Ellipsis axes both operands cover are batch axes; a size of 1 broadcasts as in MatMul.
  const ir::Graph ellipsis = einsum_graph("...id,...jd->...ij", {{k(1), k(2), k(5), k(4)}, {k(3), k(2), k(6), k(4)}});
  CHECK(lowered_ops(ellipsis, 1) == "Transpose MatMul");
}

TEST_CASE("einsum lowering: what is not one product stays an Einsum", "[einsum_lowering]") {
  for (const auto& [equation, operands] : std::vector<std::pair<std::string, std::vector<std::vector<ir::Dim>>>>{
           {"ij,jk", {{k(2), k(3)}, {k(3), k(4)}}},                    // implicit output
           {"ii->i", {{k(3), k(3)}}},                                  // one operand
           {"ij,jk->i", {{k(2), k(3)}, {k(3), k(4)}}},                 // k summed within one operand
           {"bij,bjk->bijk", {{k(2), k(3), k(4)}, {k(2), k(4), k(5)}}},  // no summed label
           {"xabj,xjk->xabk", {{k(2), k(2), k(3), k(4)}, {k(2), k(4), k(5)}}},  // two rows and a batch
           {"i,i->", {{k(5)}, {k(5)}}},                                // inner product: no rows or columns
       }) {
    INFO(equation);
    const ir::Graph graph = einsum_graph(equation, operands);
    CHECK(lowered_ops(graph, 0) == "Einsum");
  }
}

}  // namespace graphsub

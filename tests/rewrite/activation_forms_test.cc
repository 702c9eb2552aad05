// Activation chains written as one operator: the chains exporters write for a hard sigmoid and a
// hard swish become HardSigmoid and HardSwish, computing the same values up to rounding, and the
// chains that are not one (other constants, a link read elsewhere, a shape the constants change)
// stay as they are.
#include "rewrite/activation_forms.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;
using testing::count_of;

/// A float constant of the given dims, every element `number`.
ir::ValueId constant(ir::Graph& graph, float number, std::vector<int64_t> dims = {}) {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  const std::vector<float> values(static_cast<std::size_t>(count), number);
  return graph.add_weight({}, ir::share(ir::Tensor::from_floats(std::move(dims), values)));
}

ir::ValueId binary(ir::Graph& graph, ir::OpKind op, ir::ValueId a, ir::ValueId b) {
  return first(graph, add_inferred(graph, op, {a, b}));
}

ir::ValueId clip(ir::Graph& graph, ir::ValueId x, float low, float high) {
  ir::Attributes attrs;
  attrs.set("min", low);
  attrs.set("max", high);
  return first(graph, add_inferred(graph, ir::OpKind::kClip, {x}, std::move(attrs)));
}

/// relu6(x + 3): the Clip(Add(x, 3), 0, 6) both hard activations start with.
ir::ValueId relu6_shifted(ir::Graph& graph, ir::ValueId x, float shift = 3, float low = 0) {
  return clip(graph, binary(graph, ir::OpKind::kAdd, x, constant(graph, shift)), low, 6);
}

/// A graph of x [N, 4, 3] scaled into [-5, 5] (past both bends of the activations), whose
/// output `build` makes from the scaled x.
template <class Build>
ir::Graph graph_of(Build build, int64_t opset = 17) {
  ir::Graph graph;
  auto info = std::make_shared<ir::ModelInfo>();
  info->opsets = {{"", opset}};
  graph.set_model_info(info);
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(3)});
  const ir::ValueId scaled = binary(graph, ir::OpKind::kMul, x, constant(graph, 5));
  graph.set_outputs({build(graph, scaled)});
  return graph;
}

/// The graph rewritten, after checking the counts and that it computes what `graph` does.
ir::Graph rewritten(const ir::Graph& graph, int hard_sigmoid, int hard_swish) {
  rewrite::ActivationStats stats;
  ir::Graph result = rewrite::write_activations(graph, &stats);
  CHECK(stats.hard_sigmoid == hard_sigmoid);
  CHECK(stats.hard_swish == hard_swish);
  runtime::CheckOptions options;
  options.dims = {{"N", 2}};
  options.atol = 1e-6;
  options.rtol = 1e-6;
  const runtime::CheckReport check = runtime::check_equivalent(graph, result, options);
  CHECK(check.passed());
  return result;
}

TEST_CASE("activations: Keras's hard swish, x * (relu6(x + 3) * 1/6), becomes HardSwish", "[activations]") {
  const ir::Graph graph = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId gate = binary(g, ir::OpKind::kMul, relu6_shifted(g, x), constant(g, 1.0f / 6));
    return binary(g, ir::OpKind::kMul, x, gate);
  });
  const ir::Graph result = rewritten(graph, 1, 1);
  CHECK(count_of(result, ir::OpKind::kHardSwish) == 1);
  CHECK(result.node_count() == 2);  // the scaling Mul and the HardSwish
}

TEST_CASE("activations: a hard sigmoid gating another tensor becomes HardSigmoid, with alpha and beta from the chain",
          "[activations]") {
  // Keras's squeeze-and-excitation: y * (relu6(g + 3) * 1/6), the operands in the other order.
  const ir::Graph graph = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId mean = binary(g, ir::OpKind::kAdd, x, constant(g, 0.5f));
    const ir::ValueId gate = binary(g, ir::OpKind::kMul, constant(g, 1.0f / 6), relu6_shifted(g, mean));
    return binary(g, ir::OpKind::kMul, x, gate);
  });
  const ir::Graph result = rewritten(graph, 1, 0);
  REQUIRE(count_of(result, ir::OpKind::kHardSigmoid) == 1);
  CHECK(count_of(result, ir::OpKind::kClip) == 0);
  for (ir::NodeId id : result.node_ids()) {
    const ir::Node& node = result.node(id);
    if (node.op != ir::OpKind::kHardSigmoid) continue;
    CHECK(node.attrs.get_float("alpha", 0) == Approx(1.0 / 6));
    CHECK(node.attrs.get_float("beta", 0) == Approx(0.5));
  }
}

TEST_CASE("activations: YOLOv5's hard swish, x * hardtanh(x + 3, 0, 6) / 6, becomes HardSwish", "[activations]") {
  const ir::Graph graph = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId product = binary(g, ir::OpKind::kMul, relu6_shifted(g, x), x);
    return binary(g, ir::OpKind::kDiv, product, constant(g, 6));
  });
  const ir::Graph result = rewritten(graph, 1, 1);
  CHECK(count_of(result, ir::OpKind::kHardSwish) == 1);
  CHECK(result.node_count() == 2);
}

TEST_CASE("activations: a division of relu6(x + 3) by 6 and older Keras's clip(0.2 x + 0.5, 0, 1) become HardSigmoid",
          "[activations]") {
  const ir::Graph divided = graph_of([](ir::Graph& g, ir::ValueId x) {
    return binary(g, ir::OpKind::kDiv, relu6_shifted(g, x), constant(g, 6));
  });
  CHECK(count_of(rewritten(divided, 1, 0), ir::OpKind::kHardSigmoid) == 1);

  const ir::Graph affine = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId scaled = binary(g, ir::OpKind::kMul, x, constant(g, 0.2f));
    return clip(g, binary(g, ir::OpKind::kAdd, constant(g, 0.5f, {1, 1, 1}), scaled), 0, 1);
  });
  const ir::Graph result = rewritten(affine, 1, 0);
  REQUIRE(count_of(result, ir::OpKind::kHardSigmoid) == 1);
  CHECK(result.node_count() == 2);
}

TEST_CASE("activations: before opset 14 a hard swish stays HardSigmoid and Mul", "[activations]") {
  const ir::Graph graph = graph_of(
      [](ir::Graph& g, ir::ValueId x) {
        const ir::ValueId gate = binary(g, ir::OpKind::kMul, relu6_shifted(g, x), constant(g, 1.0f / 6));
        return binary(g, ir::OpKind::kMul, x, gate);
      },
      13);
  const ir::Graph result = rewritten(graph, 1, 0);
  CHECK(count_of(result, ir::OpKind::kHardSwish) == 0);
  CHECK(count_of(result, ir::OpKind::kHardSigmoid) == 1);
}

TEST_CASE("activations: chains that are not a hard sigmoid stay as they are", "[activations]") {
  // relu6(x + 3) * 0.2: the product of the scale and the clip's bound is not 1.
  const ir::Graph other_scale = graph_of([](ir::Graph& g, ir::ValueId x) {
    return binary(g, ir::OpKind::kMul, relu6_shifted(g, x), constant(g, 0.2f));
  });
  CHECK(rewritten(other_scale, 0, 0).node_count() == other_scale.node_count());

  // A lower bound other than 0.
  const ir::Graph low_bound = graph_of([](ir::Graph& g, ir::ValueId x) {
    return binary(g, ir::OpKind::kMul, relu6_shifted(g, x, 3, -1), constant(g, 1.0f / 6));
  });
  CHECK(rewritten(low_bound, 0, 0).node_count() == low_bound.node_count());

  // A scale per element of the last axis, not one number.
  const ir::Graph per_channel = graph_of([](ir::Graph& g, ir::ValueId x) {
    return binary(g, ir::OpKind::kMul, relu6_shifted(g, x), constant(g, 1.0f / 6, {3}));
  });
  CHECK(rewritten(per_channel, 0, 0).node_count() == per_channel.node_count());

  // A one-element scale of higher rank than x broadcasts x into another shape.
  const ir::Graph broadcast = graph_of([](ir::Graph& g, ir::ValueId x) {
    return binary(g, ir::OpKind::kMul, relu6_shifted(g, x), constant(g, 1.0f / 6, {1, 1, 1, 1}));
  });
  CHECK(rewritten(broadcast, 0, 0).node_count() == broadcast.node_count());

  // The clip's output is read by a second node too: the chain is not the Mul's alone.
  const ir::Graph shared = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId clipped = relu6_shifted(g, x);
    const ir::ValueId gate = binary(g, ir::OpKind::kMul, clipped, constant(g, 1.0f / 6));
    return binary(g, ir::OpKind::kAdd, gate, clipped);
  });
  CHECK(rewritten(shared, 0, 0).node_count() == shared.node_count());
}

TEST_CASE("activations: a hard sigmoid with other constants times its input stays HardSigmoid and Mul",
          "[activations]") {
  // relu6(x + 2) / 6 has beta 1/3, not HardSwish's 1/2.
  const ir::Graph graph = graph_of([](ir::Graph& g, ir::ValueId x) {
    const ir::ValueId gate = binary(g, ir::OpKind::kDiv, relu6_shifted(g, x, 2), constant(g, 6));
    return binary(g, ir::OpKind::kMul, gate, x);
  });
  const ir::Graph result = rewritten(graph, 1, 0);
  CHECK(count_of(result, ir::OpKind::kHardSigmoid) == 1);
  CHECK(count_of(result, ir::OpKind::kMul) == 2);  // the scaling and the product
}

/// torch's gelu(approximate="tanh") as its TorchScript exporter writes it (Gemma's MLP), with the
/// cube either way round:  Mul(0.5, Mul(x, Add(1, Tanh(Mul(s, Add(x, Mul(a, x·x·x)))))))
ir::ValueId tanh_gelu(ir::Graph& g, ir::ValueId x, float a = 0.044715f, bool square_first = true) {
  const ir::ValueId square = binary(g, ir::OpKind::kMul, x, x);
  const ir::ValueId cube = square_first ? binary(g, ir::OpKind::kMul, square, x) : binary(g, ir::OpKind::kMul, x, square);
  const ir::ValueId inner_sum = binary(g, ir::OpKind::kAdd, x, binary(g, ir::OpKind::kMul, constant(g, a), cube));
  const ir::ValueId scaled = binary(g, ir::OpKind::kMul, constant(g, 0.7978845608f), inner_sum);
  const ir::ValueId tanh = first(g, add_inferred(g, ir::OpKind::kTanh, {scaled}));
  const ir::ValueId plus_one = binary(g, ir::OpKind::kAdd, constant(g, 1), tanh);
  return binary(g, ir::OpKind::kMul, constant(g, 0.5f), binary(g, ir::OpKind::kMul, x, plus_one));
}

/// The tanh GELUs of `graph` written anew, after checking their count and that the graph computes
/// what it did.
ir::Graph gelus_rewritten(const ir::Graph& graph, int tanh_gelus) {
  rewrite::ActivationStats stats;
  ir::Graph result = rewrite::write_activations(graph, &stats);
  CHECK(stats.tanh_gelu == tanh_gelus);
  runtime::CheckOptions options;
  options.dims = {{"N", 2}};
  options.atol = 1e-6;
  options.rtol = 1e-6;
  CHECK(runtime::check_equivalent(graph, result, options).passed());
  return result;
}

TEST_CASE("activations: a tanh GELU as TorchScript writes it gets the form onnxruntime fuses", "[activations]") {
  for (bool square_first : {true, false}) {
    INFO(square_first);
    const ir::Graph graph =
        graph_of([&](ir::Graph& g, ir::ValueId x) { return tanh_gelu(g, x, 0.044715f, square_first); });
    const ir::Graph result = gelus_rewritten(graph, 1);
    CHECK(count_of(result, ir::OpKind::kPow) == 1);
    CHECK(count_of(result, ir::OpKind::kTanh) == 1);
    CHECK(result.node_count() == 9);  // the scaling, then Mul(x, 0.5), Pow, Mul, Add, Mul, Tanh, Add, Mul
    // Its last node multiplies x * 0.5 by (1 + tanh): onnxruntime's FastGeluFusion's form.
    const ir::Node& last = result.node(result.value(result.outputs()[0]).producer);
    REQUIRE(last.op == ir::OpKind::kMul);
    const ir::Node& halved = result.node(result.value(last.inputs[0]).producer);
    CHECK(halved.op == ir::OpKind::kMul);
    CHECK(result.value(halved.inputs[1]).data->data<float>()[0] == 0.5f);
  }
}

TEST_CASE("activations: a GELU-like chain with another constant stays as it is", "[activations]") {
  const ir::Graph graph = graph_of([](ir::Graph& g, ir::ValueId x) { return tanh_gelu(g, x, 0.05f); });
  const ir::Graph result = gelus_rewritten(graph, 0);
  CHECK(count_of(result, ir::OpKind::kPow) == 0);
}

}  // namespace
}  // namespace graphsub

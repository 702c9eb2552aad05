// The onnxruntime CPU target's layout forms (rules/layout.rules): applied wherever they match,
// the graph computes what it did; they do not apply where the image's size is unknown or 1 x 1,
// nor to a residual sum that something besides its layer normalization reads, nor to a channel
// affine map after a convolution; and their proofs are current.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "pipeline/layout_forms.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "test_util.h"
#include "verify/proof_records.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::count_of;

ir::ValueId output_of(ir::Graph& graph, ir::OpKind op, const std::vector<ir::ValueId>& inputs) {
  return graph.node(add_inferred(graph, op, inputs)).outputs[0];
}

/// An image input "x" of [N, channels, height, width], N symbolic.
ir::ValueId image_input(ir::Graph& graph, int64_t channels, int64_t height, int64_t width) {
  return graph.add_input(
      "x", ir::TensorType{ir::DataType::kFloat, ir::Shape{true,
                                                          {ir::Dim::named("N"), ir::Dim::known(channels),
                                                           ir::Dim::known(height), ir::Dim::known(width)}}});
}

/// The reference executor's comparison of `before` and `after` at N = 2.
runtime::CheckReport checked(const ir::Graph& before, const ir::Graph& after) {
  runtime::CheckOptions check;
  check.dims = {{"N", 2}};
  return runtime::check_equivalent(before, after, check);
}

/// Two squeeze-and-excitation scalings of x [N, 8, h, w], N symbolic: sigmoid(mean(x)) * x (the
/// scale first, as torchvision writes it) and then x2 * scale (the scale second).
ir::Graph squeeze_excitation(ir::Dim h, ir::Dim w) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input(
      "x", ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(8), h, w}}});
  const ir::ValueId s = output_of(graph, ir::OpKind::kSigmoid, {output_of(graph, ir::OpKind::kGlobalAveragePool, {x})});
  const ir::ValueId first = output_of(graph, ir::OpKind::kMul, {s, x});
  const ir::ValueId x2 = output_of(graph, ir::OpKind::kRelu, {first});
  const ir::ValueId s2 = output_of(graph, ir::OpKind::kSigmoid, {output_of(graph, ir::OpKind::kGlobalAveragePool, {x2})});
  const ir::ValueId y = output_of(graph, ir::OpKind::kMul, {x2, s2});
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// Post-norm residual blocks as BERT writes them: y = LayerNorm(x + Relu(x)), twice, x of
/// [N, 4, 8]. With `shared`, the second block's sum is also added to the output (a pre-norm
/// block's residual path reads it besides its layer normalization).
ir::Graph residual_norms(bool shared) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input(
      "x", ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(8)}}});
  const ir::ValueId g = graph.add_weight("g", ir::share(testing::random_tensor({8}, 1, 0.5f, 1.5f)));
  const ir::ValueId b = graph.add_weight("b", ir::share(testing::random_tensor({8}, 2)));
  ir::Attributes norm;
  norm.set("axis", int64_t{2});
  norm.set("epsilon", 1e-5f);
  ir::ValueId sum = ir::kNoValue;
  for (int block = 0; block < 2; ++block) {
    sum = output_of(graph, ir::OpKind::kAdd, {x, output_of(graph, ir::OpKind::kRelu, {x})});
    x = graph.node(add_inferred(graph, ir::OpKind::kLayerNormalization, {sum, g, b}, norm)).outputs[0];
  }
  const ir::ValueId y = shared ? output_of(graph, ir::OpKind::kAdd, {x, sum}) : x;
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// Pre-activation batch norms as Keras exports them, x * s + b per channel with s and b of
/// [1, C, 1, 1], then Relu: after a Concat of x [N, 8, 5, 5] and relu(x) (the Concat also read by
/// the output, as a DenseNet's next block reads it), after an average pooling of that, after a
/// max pooling, after a residual sum, and after a convolution (which onnxruntime folds them into,
/// so no form applies there).
ir::Graph pre_activation_norms() {
  ir::Graph graph;
  const ir::ValueId x = image_input(graph, 8, 5, 5);
  uint32_t seed = 10;
  const auto affine_relu = [&](ir::ValueId in, int64_t channels) {
    const ir::ValueId s = graph.add_weight("s" + std::to_string(seed),
                                           ir::share(testing::random_tensor({1, channels, 1, 1}, seed, 0.5f, 1.5f)));
    const ir::ValueId b =
        graph.add_weight("b" + std::to_string(seed), ir::share(testing::random_tensor({1, channels, 1, 1}, seed + 1)));
    seed += 2;
    return output_of(graph, ir::OpKind::kRelu,
                     {output_of(graph, ir::OpKind::kAdd, {output_of(graph, ir::OpKind::kMul, {in, s}), b})});
  };
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::ValueId c =
      graph.node(add_inferred(graph, ir::OpKind::kConcat, {x, output_of(graph, ir::OpKind::kRelu, {x})}, axis))
          .outputs[0];
  const ir::ValueId after_concat = affine_relu(c, 16);
  ir::Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  const ir::ValueId p = graph.node(add_inferred(graph, ir::OpKind::kAveragePool, {after_concat}, pool)).outputs[0];
  const ir::ValueId after_pool = affine_relu(p, 16);
  ir::Attributes max_pool;
  max_pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  max_pool.set("pads", std::vector<int64_t>{0, 0, 1, 1});
  const ir::ValueId q = graph.node(add_inferred(graph, ir::OpKind::kMaxPool, {after_pool}, max_pool)).outputs[0];
  const ir::ValueId after_max = affine_relu(q, 16);
  const ir::ValueId sum = output_of(graph, ir::OpKind::kAdd, {after_max, q});
  const ir::ValueId after_sum = affine_relu(sum, 16);
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({16, 16, 1, 1}, 3)));
  ir::Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{1, 1});
  const ir::ValueId k = graph.node(add_inferred(graph, ir::OpKind::kConv, {after_sum, w}, conv)).outputs[0];
  const ir::ValueId y = affine_relu(k, 16);
  graph.set_name(c, "c");
  graph.set_name(y, "y");
  graph.set_outputs({y, c});
  return graph;
}

/// YOLOv8's C2f block on x [N, 8, 6, 6]: a 1x1 convolution and its SiLU split in two halves, a 3x3
/// convolution of the second, and a 1x1 convolution with bias of the three concatenated; with
/// `shared`, the concatenation is also an output.
ir::Graph c2f_block(bool shared) {
  ir::Graph graph;
  const ir::ValueId x = image_input(graph, 8, 6, 6);
  const auto conv = [&](ir::ValueId in, int64_t out, int64_t k, uint32_t seed, bool bias) {
    const int64_t channels = graph.value(in).type.shape.dims[1].value;
    std::vector<ir::ValueId> inputs = {
        in,
        graph.add_weight("w" + std::to_string(seed), ir::share(testing::random_tensor({out, channels, k, k}, seed)))};
    if (bias) {
      inputs.push_back(graph.add_weight("b" + std::to_string(seed), ir::share(testing::random_tensor({out}, seed + 1))));
    }
    const ir::Attributes attrs =
        testing::conv_attributes({k, k}, {1, 1}, {k / 2, k / 2, k / 2, k / 2}, {1, 1}, 1, "none");
    return graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, attrs)).outputs[0];
  };
  ir::Attributes halves;
  halves.set("axis", int64_t{1});
  halves.set("split", std::vector<int64_t>{4, 4});
  const ir::ValueId first = conv(x, 8, 1, 20, true);
  const ir::ValueId silu = output_of(graph, ir::OpKind::kMul, {first, output_of(graph, ir::OpKind::kSigmoid, {first})});
  const std::vector<ir::ValueId> parts = graph.node(add_inferred(graph, ir::OpKind::kSplit, {silu}, halves)).outputs;
  const ir::ValueId m = output_of(graph, ir::OpKind::kRelu, {conv(parts[1], 4, 3, 22, true)});
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::ValueId c = graph.node(add_inferred(graph, ir::OpKind::kConcat, {parts[0], parts[1], m}, axis)).outputs[0];
  const ir::ValueId y = conv(c, 6, 1, 24, true);
  graph.set_name(y, "y");
  graph.set_name(c, "c");
  graph.set_outputs(shared ? std::vector<ir::ValueId>{y, c} : std::vector<ir::ValueId>{y});
  return graph;
}

}  // namespace

TEST_CASE("a split SiLU becomes two convolutions, a convolution of a concatenation a sum of them", "[pipeline]") {
  const ir::Graph before = c2f_block(false);
  int applied = 0;
  const std::optional<ir::Graph> after = pipeline::apply_everywhere(before, rules::shipped_layout_rules(), &applied);
  REQUIRE(after);
  CHECK(applied == 4);  // the SiLU's split, the concatenation nested once, then two parts taken off
  CHECK(count_of(*after, ir::OpKind::kConcat) == 0);
  CHECK(count_of(*after, ir::OpKind::kConv) == 6);
  CHECK(count_of(*after, ir::OpKind::kSigmoid) == 2);
  CHECK(count_of(*after, ir::OpKind::kAdd) == 2);
  const runtime::CheckReport report = checked(before, *after);
  CHECK(report.passed());
  CHECK(report.outputs.at(0).max_abs_error < 1e-4);
  // A concatenation that is read elsewhere too stays, and so does its convolution.
  CHECK(pipeline::apply_everywhere(c2f_block(true), rules::shipped_layout_rules(), &applied));
  CHECK(applied == 1);  // the split SiLU only
}

TEST_CASE("each kind of layout form is applied alone too", "[pipeline]") {
  // The C2f block has forms of two kinds: its split SiLU and its concatenation before a
  // convolution. Each kind alone computes what the block computes.
  const ir::Graph before = c2f_block(false);
  const std::vector<pipeline::FormsOfKind> kinds = pipeline::apply_each_kind(before, rules::shipped_layout_rules());
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0].kind == "split-silu");  // in the order of rules/layout.rules
  CHECK(kinds[0].applied == 1);
  CHECK(count_of(kinds[0].graph, ir::OpKind::kSigmoid) == 2);  // the SiLU of each half
  CHECK(count_of(kinds[0].graph, ir::OpKind::kConcat) == 1);
  CHECK(kinds[1].kind == "concat-before-conv");
  CHECK(kinds[1].applied == 3);
  CHECK(count_of(kinds[1].graph, ir::OpKind::kSigmoid) == 1);
  CHECK(count_of(kinds[1].graph, ir::OpKind::kConcat) == 0);
  for (const pipeline::FormsOfKind& kind : kinds) {
    INFO(kind.kind);
    const runtime::CheckReport report = checked(before, kind.graph);
    CHECK(report.passed());
    CHECK(report.outputs.at(0).max_abs_error < 1e-4);
  }
  // One kind only: the channel affine maps.
  const std::vector<pipeline::FormsOfKind> affine =
      pipeline::apply_each_kind(pre_activation_norms(), rules::shipped_layout_rules());
  REQUIRE(affine.size() == 1);
  CHECK(affine[0].kind == "channel-affine");
  CHECK(affine[0].applied == 4);
  // A rule that names no kind is a kind of its own, named after it: the nesting of the
  // three-part concatenation then applies alone, and the pair's form, which needs it, not at all.
  std::vector<rules::Rule> unnamed = rules::shipped_layout_rules();
  for (rules::Rule& rule : unnamed) rule.kind.clear();
  const std::vector<pipeline::FormsOfKind> by_rule = pipeline::apply_each_kind(before, unnamed);
  REQUIRE(by_rule.size() == 2);
  CHECK(by_rule[0].kind == "silu-conv-split-as-convs");
  CHECK(by_rule[1].kind == "nest-concat-before-conv");
  CHECK(by_rule[1].applied == 1);
}

TEST_CASE("a channel affine map after a Concat, a pooling or a sum becomes a depthwise convolution",
          "[pipeline]") {
  const ir::Graph before = pre_activation_norms();
  int applied = 0;
  const std::optional<ir::Graph> after = pipeline::apply_everywhere(before, rules::shipped_layout_rules(), &applied);
  REQUIRE(after);
  CHECK(applied == 4);  // not after the convolution
  CHECK(count_of(*after, ir::OpKind::kConv) == 5);
  CHECK(count_of(*after, ir::OpKind::kMul) == 1);
  CHECK(count_of(*after, ir::OpKind::kAdd) == 2);  // the residual sum and the map after the convolution
  int depthwise = 0;
  for (ir::NodeId id : after->node_ids()) {
    const ir::Node& node = after->node(id);
    if (node.op == ir::OpKind::kConv && node.attrs.get_int("group", 1) == 16) ++depthwise;
  }
  CHECK(depthwise == 4);
  CHECK(after->outputs().size() == 2);  // the Concat still reaches the output
  const runtime::CheckReport report = checked(before, *after);
  CHECK(report.passed());
  CHECK(report.outputs.at(0).max_abs_error < 1e-5);
}

TEST_CASE("a residual sum read only by its layer normalization becomes a Sum", "[pipeline]") {
  const ir::Graph before = residual_norms(false);
  int applied = 0;
  const std::optional<ir::Graph> after = pipeline::apply_everywhere(before, rules::shipped_layout_rules(), &applied);
  REQUIRE(after);
  CHECK(applied == 2);
  CHECK(count_of(*after, ir::OpKind::kSum) == 2);
  CHECK(count_of(*after, ir::OpKind::kAdd) == 0);
  CHECK(count_of(*after, ir::OpKind::kLayerNormalization) == 2);
  const runtime::CheckReport report = checked(before, *after);
  CHECK(report.passed());
  CHECK(report.outputs.at(0).max_abs_error == 0);  // the same IEEE additions
  // Where the output reads the second sum too, only the first becomes a Sum.
  const std::optional<ir::Graph> shared =
      pipeline::apply_everywhere(residual_norms(true), rules::shipped_layout_rules(), &applied);
  REQUIRE(shared);
  CHECK(applied == 1);
  CHECK(count_of(*shared, ir::OpKind::kSum) == 1);
}

TEST_CASE("a channel scale becomes a nearest resize wherever it multiplies an image of known size",
          "[pipeline]") {
  const ir::Graph before = squeeze_excitation(ir::Dim::known(5), ir::Dim::known(6));
  int applied = 0;
  const std::optional<ir::Graph> after = pipeline::apply_everywhere(before, rules::shipped_layout_rules(), &applied);
  REQUIRE(after);
  CHECK(applied == 2);
  CHECK(count_of(*after, ir::OpKind::kResize) == 2);
  // The symbolic batch is kept through the resize, so the runtime sees the Mul's inputs alike.
  for (ir::NodeId id : after->node_ids()) {
    if (after->node(id).op != ir::OpKind::kResize) continue;
    CHECK(ir::to_string(after->value(after->node(id).outputs[0]).type.shape) == "[N,8,5,6]");
  }
  CHECK(after->value(after->outputs()[0]).type == before.value(before.outputs()[0]).type);
  CHECK(checked(before, *after).passed());
}

TEST_CASE("no layout form where the image is 1 x 1 or its size is unknown", "[pipeline]") {
  int applied = -1;
  CHECK_FALSE(pipeline::apply_everywhere(squeeze_excitation(ir::Dim::known(1), ir::Dim::known(1)),
                                         rules::shipped_layout_rules(), &applied));
  CHECK(applied == 0);
  CHECK_FALSE(pipeline::apply_everywhere(squeeze_excitation(ir::Dim::named("H"), ir::Dim::named("W")),
                                         rules::shipped_layout_rules()));
}

TEST_CASE("the layout forms record proofs under the current axioms", "[pipeline]") {
  // Edit rules/axioms.rules, and this fails until `graphsub verify-rules rules/layout.rules
  // --write` has recorded the proofs again.
  const std::string hash = verify::axioms_hash(rules::shipped_axiom_file().text);
  const std::vector<rules::Rule> layout = rules::shipped_layout_rules();
  CHECK(layout.size() == 9);
  for (const rules::Rule& rule : layout) {
    INFO(rule.name);
    CHECK_FALSE(rule.kind.empty());  // kept or dropped with the forms of its kind
    CHECK(rule.proof == rules::ProofStatus::kProved);
    CHECK(rule.proof_axioms == hash);
  }
}

}  // namespace graphsub

// Symbolic semantics: exact numbers, each op on constants against its reference kernel, the
// structure of the uninterpreted ops, and the algebraic facts rule proofs rest on.
#include <catch2/catch.hpp>
#include <random>

#include "ops/registry.h"
#include "test_util.h"
#include "verify/semantics.h"

using namespace graphsub;
using verify::NoSemantics;
using verify::Semantics;
using verify::SymTensor;

namespace {

using Ints = std::vector<int64_t>;

ir::Node node_of(ir::OpKind op, const ir::Attributes& attrs) {
  ir::Node node;
  node.op = op;
  node.attrs = attrs;
  return node;
}

ir::TensorType type_of(const ir::Tensor& tensor) {
  return ir::TensorType{tensor.dtype(), ir::Shape::of(tensor.dims())};
}

ir::TensorType type_of(const SymTensor& tensor) { return testing::float_type(tensor.dims); }

/// `op` run symbolically on `inputs`, with the output types shape inference gives.
std::vector<SymTensor> run(Semantics& semantics, ir::OpKind op, const ir::Attributes& attrs,
                           const std::vector<const SymTensor*>& inputs) {
  std::vector<ir::TensorType> types;
  for (const SymTensor* input : inputs) types.push_back(input ? type_of(*input) : ir::TensorType{});
  const ops::InferResult inferred = ops::op_def(op).infer(node_of(op, attrs), types);
  REQUIRE(inferred.ok());
  return semantics.run(node_of(op, attrs), inputs, inferred.outputs);
}

/// The one output of `op` on `inputs`.
SymTensor run1(Semantics& semantics, ir::OpKind op, const ir::Attributes& attrs,
               const std::vector<const SymTensor*>& inputs) {
  return run(semantics, op, attrs, inputs).at(0);
}

/// `op` on the constants of `inputs`: every output element simplifies to a number within 1e-4
/// (relative) of the reference kernel's.
void check_matches_kernel(ir::OpKind op, const ir::Attributes& attrs, const std::vector<ir::Tensor>& inputs) {
  INFO(ops::kind_name(op));
  Semantics semantics;
  std::vector<const ir::Tensor*> tensors;
  std::vector<SymTensor> constants;
  for (const ir::Tensor& input : inputs) constants.push_back(semantics.constant(input));
  std::vector<const SymTensor*> symbols;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    tensors.push_back(&inputs[i]);
    symbols.push_back(&constants[i]);
  }
  const std::vector<ir::Tensor> expected = testing::run_op(op, attrs, tensors);
  std::vector<ir::TensorType> types;
  for (const ir::Tensor& output : expected) types.push_back(type_of(output));
  const std::vector<SymTensor> outputs = semantics.run(node_of(op, attrs), symbols, types);
  REQUIRE(outputs.size() == expected.size());
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    REQUIRE(outputs[o].dims == expected[o].dims());
    for (int64_t i = 0; i < expected[o].num_elements(); ++i) {
      const z3::expr value = outputs[o].elements[i].simplify();
      REQUIRE(value.is_numeral());
      REQUIRE(value.as_double() == Approx(expected[o].element_as_double(i)).epsilon(1e-4).margin(1e-6));
    }
  }
}

/// Z3's verdict on "some element of `a` differs from `b`'s": unsat proves them equal. Elements
/// whose difference normalizes (sum of monomials) to 0 are equal without the solver.
z3::check_result differs(Semantics& semantics, const SymTensor& a, const SymTensor& b) {
  REQUIRE(a.dims == b.dims);
  z3::params normal(semantics.context());
  normal.set("som", true);
  z3::expr_vector differences(semantics.context());
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    const z3::expr difference = (a.elements[i] - b.elements[i]).simplify(normal);
    int64_t integer = 1;
    const bool is_zero = difference.is_numeral() && difference.is_numeral_i64(integer) && integer == 0;
    if (!is_zero) differences.push_back(difference != 0);
  }
  if (differences.empty()) return z3::unsat;
  z3::solver solver(semantics.context());
  z3::params limits(semantics.context());
  limits.set("timeout", 20000u);
  solver.set(limits);
  solver.add(z3::mk_or(differences));
  return solver.check();
}

bool provably_equal(Semantics& semantics, const SymTensor& a, const SymTensor& b) {
  return differs(semantics, a, b) == z3::unsat;
}

ir::Attributes attrs_of(std::initializer_list<std::pair<const char*, ir::AttrValue>> entries) {
  ir::Attributes attrs;
  for (const auto& [name, value] : entries) attrs.set(name, value);
  return attrs;
}

ir::Tensor ints(const Ints& dims, const Ints& values) { return ir::Tensor::from_int64s(dims, values); }

/// A random convolution: 1-d or 2-d, kernels 1 and 3, strides and dilations 1-2, pads 0-1, group
/// 1 or 2, with a bias and a residual Z at random.
struct ConvDraw {
  ir::Attributes attrs;
  Ints x;
  Ints w;
  bool bias;
  bool residual;
};

ConvDraw draw_conv(std::mt19937& rng) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  const std::size_t rank = static_cast<std::size_t>(pick(1, 2));
  const int64_t group = pick(1, 2);
  Ints kernel, strides, dilations, pads(2 * rank), x{pick(1, 2), group * pick(1, 2)};
  for (std::size_t axis = 0; axis < rank; ++axis) {
    kernel.push_back(pick(0, 1) ? 3 : 1);
    strides.push_back(pick(1, 2));
    dilations.push_back(pick(1, 2));
    pads[axis] = pick(0, 1);
    pads[axis + rank] = pick(0, 1);
    x.push_back((kernel.back() - 1) * dilations.back() + pick(1, 3));
  }
  Ints w{group * pick(1, 2), x[1] / group};
  w.insert(w.end(), kernel.begin(), kernel.end());
  const bool bias = pick(0, 1);
  return {testing::conv_attributes(kernel, strides, pads, dilations, group, "none"), x, w, bias,
          bias && pick(0, 1)};
}

/// The inputs of a drawn convolution: X, W, and B and Z when drawn.
std::vector<ir::Tensor> conv_inputs(const ConvDraw& conv, uint32_t seed) {
  std::vector<ir::Tensor> inputs{testing::random_tensor(conv.x, seed),
                                 testing::random_tensor(conv.w, seed + 1)};
  if (conv.bias) inputs.push_back(testing::random_tensor({conv.w[0]}, seed + 2));
  if (!conv.residual) return inputs;
  std::vector<const ir::Tensor*> operands{&inputs[0], &inputs[1], &inputs[2]};
  const ir::Tensor y = testing::run_op(ir::OpKind::kConv, conv.attrs, operands).at(0);
  inputs.push_back(testing::random_tensor(y.dims(), seed + 3));
  return inputs;
}

/// A random 2-d average pool: kernels 1-3, strides 1-2, pads below the kernel, either count.
ir::Attributes draw_pool(std::mt19937& rng, Ints& x) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  Ints kernel, strides, pads(4);
  x = {pick(1, 2), pick(1, 3)};
  for (std::size_t axis = 0; axis < 2; ++axis) {
    kernel.push_back(pick(1, 3));
    strides.push_back(pick(1, 2));
    pads[axis] = pick(0, kernel.back() - 1);
    pads[axis + 2] = pick(0, kernel.back() - 1);
    x.push_back(kernel.back() + pick(0, 2));
  }
  return attrs_of({{"kernel_shape", kernel},
                   {"strides", strides},
                   {"pads", pads},
                   {"ceil_mode", pick(0, 1)},
                   {"count_include_pad", pick(0, 1)}});
}

}  // namespace

TEST_CASE("number is the exact rational of a float or double", "[verify]") {
  Semantics semantics;
  z3::context& context = semantics.context();
  CHECK(z3::eq(semantics.number(0.0), context.real_val(0)));
  CHECK(z3::eq(semantics.number(-3.0), context.real_val(-3)));
  CHECK(z3::eq(semantics.number(0.75), context.real_val("3/4")));
  CHECK(z3::eq(semantics.number(0.1), context.real_val("3602879701896397/36028797018963968")));
  CHECK(z3::eq(semantics.number(0.1f), context.real_val("13421773/134217728")));
  CHECK(z3::eq(semantics.number(-1e20), context.real_val("-100000000000000000000")));
  CHECK(semantics.number(5e-324).get_decimal_string(400).find("494065645841246544") != std::string::npos);
  CHECK_THROWS_AS(semantics.number(INFINITY), NoSemantics);
  CHECK_THROWS_AS(semantics.number(NAN), NoSemantics);
}

TEST_CASE("variables are named by name and index, constants by value", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3});
  REQUIRE(x.size() == 6);
  CHECK(x.elements[5].to_string() == "|x[1,2]|");
  CHECK(z3::eq(x.elements[4], semantics.variables("x", {2, 3}).elements[4]));
  CHECK(!z3::eq(x.elements[4], semantics.variables("y", {2, 3}).elements[4]));
  CHECK(semantics.variables("s", {}).size() == 1);
  const SymTensor c = semantics.constant(ints({2}, {7, -2}));
  CHECK(z3::eq(c.elements[1], semantics.context().real_val(-2)));
}

TEST_CASE("apply makes one uninterpreted function per name", "[verify]") {
  Semantics semantics;
  const z3::expr a = semantics.context().real_const("a");
  CHECK(z3::eq(semantics.apply("relu", a), semantics.apply("relu", a)));
  CHECK(semantics.apply("relu", a).decl().name().str() == "relu");
  CHECK(!z3::eq(semantics.apply("relu", a), semantics.apply("tanh", a)));
  CHECK(!semantics.apply("relu", semantics.number(2)).simplify().is_numeral());
}

TEST_CASE("element-wise arithmetic matches the reference kernels", "[verify]") {
  const ir::Tensor a = testing::random_tensor({2, 3, 4}, 1);
  const ir::Tensor b = testing::random_tensor({3, 1}, 2);
  const ir::Tensor positive = testing::random_tensor({3, 1}, 3, 0.5f, 1.5f);
  for (ir::OpKind op :
       {ir::OpKind::kAdd, ir::OpKind::kSub, ir::OpKind::kMul, ir::OpKind::kMax, ir::OpKind::kMin}) {
    check_matches_kernel(op, {}, {a, b});
    check_matches_kernel(op, {}, {b, a});
  }
  check_matches_kernel(ir::OpKind::kDiv, {}, {a, positive});
  check_matches_kernel(ir::OpKind::kReciprocal, {}, {positive});
  const std::vector<ir::Tensor> three{testing::random_tensor({2, 3}, 4), testing::random_tensor({3}, 5),
                                      testing::random_tensor({1, 1}, 6)};
  check_matches_kernel(ir::OpKind::kSum, {}, three);
  check_matches_kernel(ir::OpKind::kMean, {}, three);
  check_matches_kernel(ir::OpKind::kMean, {}, {a});
  check_matches_kernel(ir::OpKind::kSMul, {}, {a, testing::random_tensor({1}, 7)});
  check_matches_kernel(ir::OpKind::kNeg, {}, {a});
  check_matches_kernel(ir::OpKind::kIdentity, {}, {a});
  check_matches_kernel(ir::OpKind::kDropout, attrs_of({{"mask", int64_t{1}}}), {a});
  check_matches_kernel(ir::OpKind::kDropout, attrs_of({{"mask", int64_t{0}}}), {a});
  check_matches_kernel(ir::OpKind::kCast, attrs_of({{"to", int64_t{1}}}), {a});
  check_matches_kernel(ir::OpKind::kCast, attrs_of({{"to", int64_t{7}}}),
                       {testing::random_tensor({5}, 8, -9, 9)});
  check_matches_kernel(ir::OpKind::kCast, attrs_of({{"to", int64_t{1}}}), {ints({3}, {4, -5, 6})});
}

TEST_CASE("division and the reciprocal are exact on numbers, uninterpreted otherwise", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2});
  const SymTensor y = semantics.variables("y", {2});
  const SymTensor four = semantics.constant(ir::Tensor::from_floats({1}, {4}));
  const SymTensor zero = semantics.constant(ir::Tensor::from_floats({1}, {0}));
  const SymTensor quarter = run1(semantics, ir::OpKind::kDiv, {}, {&x, &four});
  CHECK(provably_equal(semantics, quarter, {{2}, {x.elements[0] / 4, x.elements[1] / 4}}));
  const SymTensor ratio = run1(semantics, ir::OpKind::kDiv, {}, {&x, &y});
  CHECK(z3::eq(ratio.elements[1], x.elements[1] * semantics.apply("recip", y.elements[1])));
  const SymTensor by_zero = run1(semantics, ir::OpKind::kDiv, {}, {&x, &zero});
  CHECK(z3::eq(by_zero.elements[0], x.elements[0] * semantics.apply("recip", zero.elements[0])));
  const SymTensor inverse = run1(semantics, ir::OpKind::kReciprocal, {}, {&four});
  CHECK(z3::eq(inverse.elements[0], semantics.context().real_val("1/4")));
  CHECK(z3::eq(run1(semantics, ir::OpKind::kReciprocal, {}, {&y}).elements[0],
               semantics.apply("recip", y.elements[0])));
}

TEST_CASE("uninterpreted ops apply one function per op and attribute values", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {3});
  const std::vector<std::pair<ir::OpKind, std::string>> plain{
      {ir::OpKind::kRelu, "relu"}, {ir::OpKind::kSigmoid, "sigmoid"},  {ir::OpKind::kTanh, "tanh"},
      {ir::OpKind::kExp, "exp"},   {ir::OpKind::kLog, "log"},          {ir::OpKind::kSqrt, "sqrt"},
      {ir::OpKind::kErf, "erf"},   {ir::OpKind::kAbs, "abs"},          {ir::OpKind::kFloor, "floor"},
      {ir::OpKind::kCeil, "ceil"}, {ir::OpKind::kSin, "sin"},          {ir::OpKind::kCos, "cos"},
      {ir::OpKind::kSign, "sign"}, {ir::OpKind::kSoftplus, "softplus"}};
  for (const auto& [op, name] : plain) {
    INFO(name);
    CHECK(z3::eq(run1(semantics, op, {}, {&x}).elements[2], semantics.apply(name, x.elements[2])));
  }
  const std::vector<std::tuple<ir::OpKind, ir::Attributes, std::string>> with_attributes{
      {ir::OpKind::kLeakyRelu, attrs_of({{"alpha", 0.1f}}), "leaky_relu[alpha=0.1]"},
      {ir::OpKind::kElu, attrs_of({{"alpha", 1.0f}}), "elu[alpha=1]"},
      {ir::OpKind::kHardSigmoid, attrs_of({{"alpha", 0.2f}, {"beta", 0.5f}}),
       "hard_sigmoid[alpha=0.2,beta=0.5]"},
      {ir::OpKind::kClip, attrs_of({{"min", -1.0f}, {"max", 6.0f}}), "clip[min=-1,max=6]"},
      {ir::OpKind::kGelu, attrs_of({{"approximate", std::string("tanh")}}), "gelu[approximate=tanh]"}};
  for (const auto& [op, attrs, name] : with_attributes) {
    INFO(name);
    CHECK(z3::eq(run1(semantics, op, attrs, {&x}).elements[0], semantics.apply(name, x.elements[0])));
  }
  const SymTensor slow = run1(semantics, ir::OpKind::kLeakyRelu, attrs_of({{"alpha", 0.1f}}), {&x});
  const SymTensor fast = run1(semantics, ir::OpKind::kLeakyRelu, attrs_of({{"alpha", 0.2f}}), {&x});
  CHECK(differs(semantics, slow, fast) == z3::sat);
  const SymTensor two = semantics.constant(ir::Tensor::from_floats({1}, {2}));
  CHECK(!run1(semantics, ir::OpKind::kRelu, {}, {&two}).elements[0].simplify().is_numeral());
}

TEST_CASE("conv matches the reference kernel", "[verify]") {
  std::mt19937 rng(11);
  for (uint32_t draw = 0; draw < 40; ++draw) {
    const ConvDraw conv = draw_conv(rng);
    INFO("draw " << draw);
    check_matches_kernel(ir::OpKind::kConv, conv.attrs, conv_inputs(conv, 100 + 4 * draw));
  }
}

TEST_CASE("fused activations apply the activation ops' functions", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {1, 2, 3, 3});
  const SymTensor w = semantics.variables("w", {2, 2, 3, 3});
  const SymTensor b = semantics.variables("b", {2});
  const ir::Attributes plain = testing::conv_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "none");
  const SymTensor y = run1(semantics, ir::OpKind::kConv, plain, {&x, &w, &b});
  const std::vector<std::pair<std::string, ir::OpKind>> activations{
      {"relu", ir::OpKind::kRelu}, {"sigmoid", ir::OpKind::kSigmoid}, {"tanh", ir::OpKind::kTanh}};
  for (const auto& [activation, op] : activations) {
    INFO(activation);
    ir::Attributes fused = plain;
    fused.set("activation", activation);
    const SymTensor separate = run1(semantics, op, {}, {&y});
    CHECK(provably_equal(semantics, run1(semantics, ir::OpKind::kConv, fused, {&x, &w, &b}), separate));
  }
  const SymTensor a = semantics.variables("a", {2, 3});
  const SymTensor m = semantics.variables("m", {3, 4});
  const SymTensor c = semantics.variables("c", {4});
  const SymTensor product = run1(semantics, ir::OpKind::kMatMul, {}, {&a, &m});
  const SymTensor biased = run1(semantics, ir::OpKind::kAdd, {}, {&product, &c});
  const SymTensor fused =
      run1(semantics, ir::OpKind::kMatMul, attrs_of({{"activation", std::string("relu")}}), {&a, &m, &c});
  CHECK(provably_equal(semantics, fused, run1(semantics, ir::OpKind::kRelu, {}, {&biased})));
}

TEST_CASE("matmul and gemm match the reference kernels", "[verify]") {
  const std::vector<std::pair<Ints, Ints>> shapes{
      {{3}, {3}},         {{2, 3}, {3}}, {{3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 1, 2, 3}, {3, 3, 2}},
      {{4, 2, 3}, {3, 1}}};
  uint32_t seed = 20;
  for (const auto& [a, b] : shapes) {
    check_matches_kernel(ir::OpKind::kMatMul, {},
                         {testing::random_tensor(a, seed), testing::random_tensor(b, seed + 1)});
    seed += 2;
  }
  check_matches_kernel(ir::OpKind::kMatMul, {},
                       {testing::random_tensor({2, 3}, 30), testing::random_tensor({3, 4}, 31),
                        testing::random_tensor({4}, 32)});
  for (int64_t trans_a : {0, 1}) {
    for (int64_t trans_b : {0, 1}) {
      const ir::Attributes attrs =
          attrs_of({{"alpha", 0.5f}, {"beta", 2.0f}, {"transA", trans_a}, {"transB", trans_b}});
      const ir::Tensor a = testing::random_tensor(trans_a ? Ints{3, 2} : Ints{2, 3}, 40);
      const ir::Tensor b = testing::random_tensor(trans_b ? Ints{4, 3} : Ints{3, 4}, 41);
      check_matches_kernel(ir::OpKind::kGemm, attrs, {a, b});
      for (const Ints& c : {Ints{}, Ints{4}, Ints{2, 1}, Ints{2, 4}}) {
        check_matches_kernel(ir::OpKind::kGemm, attrs, {a, b, testing::random_tensor(c, 42)});
      }
    }
  }
}

TEST_CASE("pools and reductions match the reference kernels", "[verify]") {
  // Max pooling included: its ite chain over the taps is exact, so it folds to the number too.
  std::mt19937 rng(5);
  for (uint32_t draw = 0; draw < 30; ++draw) {
    Ints x;
    const ir::Attributes attrs = draw_pool(rng, x);
    INFO("draw " << draw);
    check_matches_kernel(ir::OpKind::kAveragePool, attrs, {testing::random_tensor(x, 200 + draw)});
    ir::Attributes max_attrs = attrs;
    max_attrs.erase("count_include_pad");
    check_matches_kernel(ir::OpKind::kMaxPool, max_attrs, {testing::random_tensor(x, 300 + draw)});
  }
  check_matches_kernel(ir::OpKind::kGlobalAveragePool, {}, {testing::random_tensor({2, 3, 3, 2}, 50)});
  const ir::Tensor x = testing::random_tensor({2, 3, 4}, 51);
  for (const Ints& axes : {Ints{1}, Ints{0, 2}, Ints{0, 1, 2}}) {
    for (int64_t keepdims : {0, 1}) {
      const ir::Attributes attrs = attrs_of({{"axes", axes}, {"keepdims", keepdims}});
      check_matches_kernel(ir::OpKind::kReduceSum, attrs, {x});
      check_matches_kernel(ir::OpKind::kReduceMean, attrs, {x});
      check_matches_kernel(ir::OpKind::kReduceMax, attrs, {x});
    }
  }
  const ir::Attributes noop =
      attrs_of({{"axes", Ints{}}, {"keepdims", int64_t{1}}, {"noop_with_empty_axes", int64_t{1}}});
  check_matches_kernel(ir::OpKind::kReduceSum, noop, {x});
}

TEST_CASE("batch normalization is (x - mean) * recip(sqrt(var + eps)) * scale + bias", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3, 2});
  const SymTensor scale = semantics.variables("scale", {3});
  const SymTensor bias = semantics.variables("bias", {3});
  const SymTensor mean = semantics.variables("mean", {3});
  const SymTensor var = semantics.variables("var", {3});
  const SymTensor y = run1(semantics, ir::OpKind::kBatchNormalization, attrs_of({{"epsilon", 1e-3f}}),
                           {&x, &scale, &bias, &mean, &var});
  std::vector<z3::expr> expected;
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t c = i / 2 % 3;
    const z3::expr root = semantics.apply("sqrt", var.elements[c] + semantics.number(1e-3f));
    const z3::expr factor = semantics.apply("recip", root);
    expected.push_back((x.elements[i] - mean.elements[c]) * factor * scale.elements[c] + bias.elements[c]);
  }
  CHECK(provably_equal(semantics, y, {x.dims, expected}));
}

TEST_CASE("layer normalization is (x - mean) * recip(sqrt(var + eps)) * scale + bias per row", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3});
  const SymTensor scale = semantics.variables("scale", {3});
  const SymTensor bias = semantics.variables("bias", {1});
  const SymTensor y = run1(semantics, ir::OpKind::kLayerNormalization,
                           attrs_of({{"axis", int64_t{1}}, {"epsilon", 1e-3f}, {"stash_type", int64_t{1}}}),
                           {&x, &scale, &bias});
  std::vector<z3::expr> expected;
  for (int64_t row = 0; row < 2; ++row) {
    const z3::expr* v = &x.elements[static_cast<std::size_t>(row * 3)];
    const z3::expr mean = (v[0] + v[1] + v[2]) * semantics.context().real_val(1, 3);
    const z3::expr var = ((v[0] - mean) * (v[0] - mean) + (v[1] - mean) * (v[1] - mean) + (v[2] - mean) * (v[2] - mean)) *
                         semantics.context().real_val(1, 3);
    const z3::expr factor = semantics.apply("recip", semantics.apply("sqrt", var + semantics.number(1e-3f)));
    for (int64_t i = 0; i < 3; ++i) expected.push_back((v[i] - mean) * factor * scale.elements[i] + bias.elements[0]);
  }
  CHECK(provably_equal(semantics, y, {x.dims, expected}));
}

TEST_CASE("Pow with a constant exponent: products for 2 and 3, a function of the base otherwise", "[verify]") {
  const ir::Tensor x = testing::random_tensor({2, 3}, 70);
  check_matches_kernel(ir::OpKind::kPow, {}, {x, ir::Tensor::from_floats({}, {2.0f})});
  check_matches_kernel(ir::OpKind::kPow, {}, {x, ir::Tensor::from_floats({3}, {3.0f, 3.0f, 3.0f})});
  Semantics semantics;
  const SymTensor v = semantics.variables("v", {2});
  const SymTensor half = semantics.constant(ir::Tensor::from_floats({}, {0.5f}));
  const SymTensor y = run1(semantics, ir::OpKind::kPow, {}, {&v, &half});
  CHECK(provably_equal(semantics, y, {v.dims, {semantics.apply("pow[0.5]", v.elements[0]),
                                               semantics.apply("pow[0.5]", v.elements[1])}}));
  const SymTensor mixed = semantics.constant(ir::Tensor::from_floats({2}, {2.0f, 3.0f}));
  CHECK_THROWS_AS(run1(semantics, ir::OpKind::kPow, {}, {&v, &mixed}), NoSemantics);
}

TEST_CASE("data movement matches the reference kernels", "[verify]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 4}, 60);
  const ir::Tensor m = testing::random_tensor({2, 3}, 61);
  check_matches_kernel(ir::OpKind::kTranspose, attrs_of({{"perm", Ints{2, 0, 1}}}), {x});
  check_matches_kernel(ir::OpKind::kConcat, attrs_of({{"axis", int64_t{1}}}),
                       {x, testing::random_tensor({2, 1, 4}, 62)});
  check_matches_kernel(ir::OpKind::kSplit, attrs_of({{"axis", int64_t{2}}, {"split", Ints{1, 3}}}), {x});
  check_matches_kernel(ir::OpKind::kReshape, attrs_of({{"shape", Ints{4, -1}}, {"allowzero", int64_t{0}}}),
                       {x});
  check_matches_kernel(ir::OpKind::kReshape, attrs_of({{"allowzero", int64_t{0}}}), {x, ints({2}, {3, -1})});
  check_matches_kernel(ir::OpKind::kFlatten, attrs_of({{"axis", int64_t{2}}}), {x});
  check_matches_kernel(ir::OpKind::kSqueeze, attrs_of({{"axes", Ints{1}}}),
                       {testing::random_tensor({2, 1, 3}, 63)});
  check_matches_kernel(ir::OpKind::kUnsqueeze, attrs_of({{"axes", Ints{0, 3}}}), {m});
  check_matches_kernel(ir::OpKind::kExpand, {}, {testing::random_tensor({3, 1}, 64), ints({3}, {2, 3, 4})});
  const ir::Attributes slice =
      attrs_of({{"starts", Ints{1, 0}}, {"ends", Ints{4, 5}}, {"axes", Ints{1, 2}}, {"steps", Ints{1, 2}}});
  check_matches_kernel(ir::OpKind::kSlice, slice, {x});
  check_matches_kernel(ir::OpKind::kSlice, {}, {x, ints({1}, {1}), ints({1}, {3}), ints({1}, {2})});
  for (const char* mode : {"constant", "edge", "reflect"}) {
    const ir::Attributes pad =
        attrs_of({{"mode", std::string(mode)}, {"pads", Ints{1, 0, 0, 2}}, {"value", 1.5f}});
    check_matches_kernel(ir::OpKind::kPad, pad, {m});
  }
  check_matches_kernel(ir::OpKind::kTile, attrs_of({{"repeats", Ints{2, 1}}}), {m});
  check_matches_kernel(ir::OpKind::kEnlarge, attrs_of({{"kernel_shape", Ints{3, 5}}}),
                       {testing::random_tensor({2, 1, 1, 3}, 65)});
  check_matches_kernel(ir::OpKind::kGather, attrs_of({{"axis", int64_t{1}}}),
                       {x, ints({2, 2}, {2, 0, -1, 1})});
  check_matches_kernel(ir::OpKind::kIdentity, {}, {m});
}

TEST_CASE("nearest Resize moves elements as its kernel does, interpolation has no semantics", "[verify]") {
  const ir::Tensor s = testing::random_tensor({1, 2, 1, 2}, 66);
  for (const char* transform : {"asymmetric", "half_pixel"}) {
    const ir::Attributes nearest = attrs_of({{"scales", std::vector<float>{1, 1, 3, 2}},
                                             {"mode", std::string("nearest")},
                                             {"coordinate_transformation_mode", std::string(transform)},
                                             {"nearest_mode", std::string("floor")}});
    check_matches_kernel(ir::OpKind::kResize, nearest, {s});
  }
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {1, 2, 1, 2});
  const ir::Attributes linear = attrs_of({{"scales", std::vector<float>{1, 1, 2, 2}}, {"mode", std::string("linear")}});
  CHECK_THROWS_AS(run(semantics, ir::OpKind::kResize, linear, {&x}), NoSemantics);
}

TEST_CASE("constant ops give the reference kernels' numbers", "[verify]") {
  const ir::Attributes kernel = attrs_of({{"channels", int64_t{2}}, {"kernel_shape", Ints{3, 3}}});
  check_matches_kernel(ir::OpKind::kConstIdentityConv, kernel, {});
  check_matches_kernel(ir::OpKind::kConstPool, kernel, {});
  check_matches_kernel(ir::OpKind::kConstIdentityMatrix, attrs_of({{"size", int64_t{3}}}), {});
  check_matches_kernel(ir::OpKind::kConstOnes, attrs_of({{"shape", Ints{2, 3}}}), {});
  const ir::TensorPtr value = ir::share(ir::Tensor::from_floats({1}, {2.5f}));
  check_matches_kernel(ir::OpKind::kConstantOfShape, attrs_of({{"value", value}}), {ints({2}, {2, 3})});
  check_matches_kernel(ir::OpKind::kRange, {}, {ints({}, {1}), ints({}, {10}), ints({}, {3})});
  check_matches_kernel(ir::OpKind::kRange, {},
                       {ir::Tensor::from_floats({}, {0.5f}), ir::Tensor::from_floats({}, {3}),
                        ir::Tensor::from_floats({}, {0.75f})});
  check_matches_kernel(ir::OpKind::kShape, attrs_of({{"start", int64_t{1}}, {"end", int64_t{3}}}),
                       {testing::random_tensor({2, 3, 4}, 70)});
  Semantics semantics;
  const SymTensor pool = run1(semantics, ir::OpKind::kConstPool, kernel, {});
  CHECK(z3::eq(pool.elements[0], semantics.context().real_val("1/9")));
}

TEST_CASE("operands read as numbers must be constants", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3});
  const SymTensor shape = semantics.variables("shape", {2});
  const std::vector<ir::TensorType> types{testing::float_type({3, 2})};
  CHECK_THROWS_AS(semantics.run(node_of(ir::OpKind::kReshape, {}), {&x, &shape}, types), NoSemantics);
  const SymTensor indices = semantics.variables("i", {1});
  CHECK_THROWS_AS(semantics.run(node_of(ir::OpKind::kGather, attrs_of({{"axis", int64_t{0}}})),
                                {&x, &indices}, {testing::float_type({1, 3})}),
                  NoSemantics);
  CHECK_THROWS_AS(run1(semantics, ir::OpKind::kCast, attrs_of({{"to", int64_t{7}}}), {&x}), NoSemantics);
}

TEST_CASE("ops without semantics throw NoSemantics, and covers says which have them", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3});
  for (ir::OpKind op :
       {ir::OpKind::kReduceMin, ir::OpKind::kPRelu, ir::OpKind::kGlobalMaxPool, ir::OpKind::kOpaque}) {
    CHECK_FALSE(Semantics::covers(op));
    CHECK_THROWS_AS(semantics.run(node_of(op, {}), {&x}, {testing::float_type({2, 3})}), NoSemantics);
  }
  for (ir::OpKind op :
       {ir::OpKind::kConv, ir::OpKind::kRelu, ir::OpKind::kConcat, ir::OpKind::kConstPool, ir::OpKind::kMaxPool}) {
    CHECK(Semantics::covers(op));
  }
}

TEST_CASE("conv is linear in its weights", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {1, 4, 4, 3});
  const SymTensor w1 = semantics.variables("w1", {4, 2, 3, 3});
  const SymTensor w2 = semantics.variables("w2", {4, 2, 3, 3});
  const ir::Attributes attrs = testing::conv_attributes({3, 3}, {2, 1}, {1, 0, 1, 1}, {1, 1}, 2, "none");
  const SymTensor y1 = run1(semantics, ir::OpKind::kConv, attrs, {&x, &w1});
  const SymTensor y2 = run1(semantics, ir::OpKind::kConv, attrs, {&x, &w2});
  const SymTensor w = run1(semantics, ir::OpKind::kAdd, {}, {&w1, &w2});
  CHECK(provably_equal(semantics, run1(semantics, ir::OpKind::kAdd, {}, {&y1, &y2}),
                       run1(semantics, ir::OpKind::kConv, attrs, {&x, &w})));
  CHECK(differs(semantics, y1, y2) == z3::sat);
}

TEST_CASE("split undoes concat", "[verify]") {
  Semantics semantics;
  const SymTensor a = semantics.variables("a", {2, 1, 3});
  const SymTensor b = semantics.variables("b", {2, 2, 3});
  const SymTensor joined = run1(semantics, ir::OpKind::kConcat, attrs_of({{"axis", int64_t{1}}}), {&a, &b});
  const std::vector<SymTensor> parts =
      run(semantics, ir::OpKind::kSplit, attrs_of({{"axis", int64_t{1}}, {"split", Ints{1, 2}}}), {&joined});
  REQUIRE(parts.size() == 2);
  CHECK(provably_equal(semantics, parts[0], a));
  CHECK(provably_equal(semantics, parts[1], b));
}

TEST_CASE("a transposed product is the product of the transposes", "[verify]") {
  Semantics semantics;
  const SymTensor a = semantics.variables("a", {2, 3});
  const SymTensor b = semantics.variables("b", {3, 4});
  const ir::Attributes swap = attrs_of({{"perm", Ints{1, 0}}});
  const SymTensor product = run1(semantics, ir::OpKind::kMatMul, {}, {&a, &b});
  const SymTensor a_t = run1(semantics, ir::OpKind::kTranspose, swap, {&a});
  const SymTensor b_t = run1(semantics, ir::OpKind::kTranspose, swap, {&b});
  CHECK(provably_equal(semantics, run1(semantics, ir::OpKind::kTranspose, swap, {&product}),
                       run1(semantics, ir::OpKind::kMatMul, {}, {&b_t, &a_t})));
}

TEST_CASE("an average pool counting pads is a depthwise conv with ConstPool", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {1, 2, 4, 4});
  const ir::Attributes pool = attrs_of({{"kernel_shape", Ints{3, 3}},
                                        {"strides", Ints{2, 2}},
                                        {"pads", Ints{1, 1, 1, 1}},
                                        {"ceil_mode", int64_t{0}},
                                        {"count_include_pad", int64_t{1}}});
  const SymTensor w = run1(semantics, ir::OpKind::kConstPool,
                           attrs_of({{"channels", int64_t{2}}, {"kernel_shape", Ints{3, 3}}}), {});
  const ir::Attributes conv = testing::conv_attributes({3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 2, "none");
  CHECK(provably_equal(semantics, run1(semantics, ir::OpKind::kAveragePool, pool, {&x}),
                       run1(semantics, ir::OpKind::kConv, conv, {&x, &w})));
}

TEST_CASE("softmax is exp(x - max) over the sum of those, along any axis", "[verify]") {
  Semantics semantics;
  const SymTensor x = semantics.variables("x", {2, 3, 2});
  for (int64_t axis : {0, 1, 2}) {
    INFO("axis " << axis);
    const ir::Attributes reduce = attrs_of({{"axes", Ints{axis}}, {"keepdims", int64_t{1}}});
    const SymTensor largest = run1(semantics, ir::OpKind::kReduceMax, reduce, {&x});
    const SymTensor shifted = run1(semantics, ir::OpKind::kSub, {}, {&x, &largest});
    const SymTensor exps = run1(semantics, ir::OpKind::kExp, {}, {&shifted});
    const SymTensor sums = run1(semantics, ir::OpKind::kReduceSum, reduce, {&exps});
    const SymTensor softmax = run1(semantics, ir::OpKind::kSoftmax, attrs_of({{"axis", axis}}), {&x});
    CHECK(provably_equal(semantics, softmax, run1(semantics, ir::OpKind::kDiv, {}, {&exps, &sums})));
    // Without the max taken off, exp (uninterpreted) of other arguments: not provably equal.
    const SymTensor raw = run1(semantics, ir::OpKind::kExp, {}, {&x});
    const SymTensor raw_sums = run1(semantics, ir::OpKind::kReduceSum, reduce, {&raw});
    CHECK_FALSE(provably_equal(semantics, softmax, run1(semantics, ir::OpKind::kDiv, {}, {&raw, &raw_sums})));
  }
}

TEST_CASE("relu does not distribute over addition", "[verify]") {
  Semantics semantics;
  const SymTensor a = semantics.variables("a", {2});
  const SymTensor b = semantics.variables("b", {2});
  const SymTensor sum = run1(semantics, ir::OpKind::kAdd, {}, {&a, &b});
  const SymTensor relu_a = run1(semantics, ir::OpKind::kRelu, {}, {&a});
  const SymTensor relu_b = run1(semantics, ir::OpKind::kRelu, {}, {&b});
  CHECK(differs(semantics, run1(semantics, ir::OpKind::kRelu, {}, {&sum}),
                run1(semantics, ir::OpKind::kAdd, {}, {&relu_a, &relu_b})) == z3::sat);
}

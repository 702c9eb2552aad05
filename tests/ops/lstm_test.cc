// LSTM: canonical attributes and the variants that stay opaque, inference in both layouts, the
// kernel against ONNX's equations by hand, and its directions, layouts and sequence lengths
// against one another; cost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::values_of;

namespace {

const ir::TensorType kOmitted{};

ir::Attributes lstm_attrs(int64_t hidden, const std::string& direction = "forward", int64_t layout = 0,
                          int64_t outputs = 3) {
  ir::Attributes attrs;
  attrs.set("hidden_size", hidden);
  attrs.set("direction", direction);
  attrs.set("layout", layout);
  attrs.set("input_forget", int64_t{0});
  attrs.set("num_outputs", outputs);
  return attrs;
}

/// X [3, N, 4], W and R of one direction, hidden size 2.
const std::vector<ir::TensorType> kForwardTypes = {floats({"3", "N", "4"}), floats({"1", "8", "4"}),
                                                   floats({"1", "8", "2"})};

testing::Canonicalized canonical(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs,
                                 int outputs = 3, int64_t opset = 14) {
  return testing::canonicalize_def(ops::lstm_op(), attrs, inputs, outputs, opset);
}

std::string reason(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs = kForwardTypes,
                   int outputs = 3, int64_t opset = 14) {
  return canonical(attrs, inputs, outputs, opset).reason;
}

ir::Attributes onnx_attrs(int64_t hidden) {
  ir::Attributes attrs;
  attrs.set("hidden_size", hidden);
  return attrs;
}

std::string infer(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs) {
  return testing::infer_text(ops::lstm_op(), attrs, inputs);
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

std::vector<ir::Tensor> run(const ir::Attributes& attrs, const std::vector<const ir::Tensor*>& inputs) {
  return testing::run_def(ops::lstm_op(), attrs, inputs);
}

ir::Tensor transposed(const ir::Tensor& tensor, const std::vector<int64_t>& perm) {
  ir::Attributes attrs;
  attrs.set("perm", perm);
  return testing::run_op(ir::OpKind::kTranspose, attrs, {&tensor})[0];
}

/// tensor[begin:end:step] along `axis`.
ir::Tensor sliced(const ir::Tensor& tensor, int64_t axis, int64_t begin, int64_t end, int64_t step = 1) {
  ir::Attributes attrs;
  attrs.set("starts", std::vector<int64_t>{begin});
  attrs.set("ends", std::vector<int64_t>{end});
  attrs.set("axes", std::vector<int64_t>{axis});
  attrs.set("steps", std::vector<int64_t>{step});
  return testing::run_op(ir::OpKind::kSlice, attrs, {&tensor})[0];
}

ir::Tensor reversed_in_time(const ir::Tensor& tensor) {
  return sliced(tensor, 0, -1, std::numeric_limits<int64_t>::min(), -1);
}

/// Every input of a layout-0 LSTM, random.
struct Operands {
  ir::Tensor x, w, r, b, h0, c0, p;
};

Operands random_operands(int64_t steps, int64_t batch, int64_t input, int64_t hidden, int64_t directions) {
  return {testing::random_tensor({steps, batch, input}, 1),
          testing::random_tensor({directions, 4 * hidden, input}, 2),
          testing::random_tensor({directions, 4 * hidden, hidden}, 3),
          testing::random_tensor({directions, 8 * hidden}, 4),
          testing::random_tensor({directions, batch, hidden}, 5),
          testing::random_tensor({directions, batch, hidden}, 6, -2, 2),
          testing::random_tensor({directions, 3 * hidden}, 7)};
}

/// The operands of direction `d` alone.
Operands direction_of(const Operands& all, int64_t d) {
  return {all.x,
          sliced(all.w, 0, d, d + 1),
          sliced(all.r, 0, d, d + 1),
          sliced(all.b, 0, d, d + 1),
          sliced(all.h0, 0, d, d + 1),
          sliced(all.c0, 0, d, d + 1),
          sliced(all.p, 0, d, d + 1)};
}

/// Runs with B, initial_h, initial_c and P; sequence_lens when given.
std::vector<ir::Tensor> run_all(const ir::Attributes& attrs, const Operands& in,
                                const ir::Tensor* lens = nullptr) {
  return run(attrs, {&in.x, &in.w, &in.r, &in.b, lens, &in.h0, &in.c0, &in.p});
}

void check_close(const ir::Tensor& got, const ir::Tensor& want) {
  REQUIRE(got.dims() == want.dims());
  CHECK_THAT(values_of(got), Catch::Matchers::Approx(values_of(want)).margin(1e-6));
}

}  // namespace

TEST_CASE("LSTM canonicalize fills every default", "[ops][lstm]") {
  const testing::Canonicalized defaults = canonical(onnx_attrs(2), kForwardTypes);
  REQUIRE(defaults.reason.empty());
  CHECK(defaults.attrs == lstm_attrs(2));
  CHECK(canonical({}, kForwardTypes).attrs == lstm_attrs(2));
  CHECK(canonical(onnx_attrs(2), kForwardTypes, 1, 7).attrs == lstm_attrs(2, "forward", 0, 1));

  const std::vector<ir::TensorType> bidirectional = {floats({"3", "N", "4"}), floats({"2", "8", "4"}),
                                                     floats({"2", "8", "2"})};
  ir::Attributes spelled = onnx_attrs(2);
  spelled.set("direction", std::string("bidirectional"));
  spelled.set("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Tanh", "sigmoid", "tanh", "tanh"});
  spelled.set("activation_alpha", std::vector<float>{});
  spelled.set("clip", std::numeric_limits<float>::infinity());
  CHECK(canonical(spelled, bidirectional, 2).attrs == lstm_attrs(2, "bidirectional", 0, 2));

  ir::Attributes clipped = onnx_attrs(2);
  clipped.set("clip", 3.0f);
  clipped.set("layout", int64_t{1});
  clipped.set("input_forget", int64_t{1});
  ir::Attributes expected = lstm_attrs(2, "forward", 1);
  expected.set("clip", 3.0f);
  expected.set("input_forget", int64_t{1});
  CHECK(canonical(clipped, kForwardTypes).attrs == expected);
}

TEST_CASE("LSTM keeps other activations and unmodelled forms opaque", "[ops][lstm]") {
  const auto with = [](const char* name, ir::AttrValue value) {
    ir::Attributes attrs = onnx_attrs(2);
    attrs.set(name, std::move(value));
    return attrs;
  };
  CHECK_FALSE(reason(with("activations", std::vector<std::string>{"Sigmoid", "Relu", "Tanh"})).empty());
  CHECK_FALSE(reason(with("activations", std::vector<std::string>{"Sigmoid", "Tanh"})).empty());
  CHECK_FALSE(reason(with("activation_alpha", std::vector<float>{0.2f})).empty());
  CHECK_FALSE(reason(with("direction", std::string("sideways"))).empty());
  CHECK_FALSE(reason(with("layout", int64_t{2})).empty());
  CHECK_FALSE(reason(with("layout", int64_t{1}), kForwardTypes, 3, 13).empty());
  CHECK_FALSE(reason(with("input_forget", int64_t{2})).empty());
  CHECK_FALSE(reason(with("clip", 0.0f)).empty());
  CHECK_FALSE(reason(with("hidden_size", int64_t{0})).empty());
  CHECK_FALSE(reason(with("hidden_size", 2.0f)).empty());
  CHECK_FALSE(reason(with("output_sequence", int64_t{1})).empty());
  CHECK_FALSE(reason({}, {kForwardTypes[0], kForwardTypes[1], floats({"1", "8", "?"})}).empty());

  const ir::TensorType half = testing::type_of(ir::DataType::kFloat16, {"3", "1", "4"});
  CHECK_FALSE(reason(onnx_attrs(2), {half, kForwardTypes[1], kForwardTypes[2]}).empty());
  const ir::TensorType doubles = testing::type_of(ir::DataType::kDouble, {"1", "8", "4"});
  CHECK_FALSE(reason(onnx_attrs(2), {kForwardTypes[0], doubles, kForwardTypes[2]}).empty());
  std::vector<ir::TensorType> int64_lens = kForwardTypes;
  int64_lens.insert(int64_lens.end(), {kOmitted, testing::int64s({"N"})});
  CHECK_FALSE(reason(onnx_attrs(2), int64_lens).empty());
  CHECK_FALSE(reason(onnx_attrs(2), {kForwardTypes[0], kForwardTypes[1]}).empty());
  CHECK_FALSE(reason(onnx_attrs(2), std::vector<ir::TensorType>(9, kForwardTypes[0])).empty());
  CHECK_FALSE(reason(onnx_attrs(2), kForwardTypes, 4).empty());
}

TEST_CASE("LSTM infers Y, Y_h and Y_c in both layouts with symbolic dims", "[ops][lstm]") {
  const std::vector<ir::TensorType> forward = {floats({"T", "N", "4"}), floats({"1", "8", "4"}),
                                               floats({"1", "8", "2"})};
  CHECK(infer(lstm_attrs(2), forward) == "float32[T,1,N,2] float32[1,N,2] float32[1,N,2]");
  CHECK(infer(lstm_attrs(2, "reverse", 0, 1), forward) == "float32[T,1,N,2]");

  const std::vector<ir::TensorType> batch_first = {floats({"N", "T", "4"}),
                                                   floats({"2", "8", "4"}),
                                                   floats({"2", "8", "2"}),
                                                   floats({"2", "16"}),
                                                   testing::type_of(ir::DataType::kInt32, {"N"}),
                                                   floats({"N", "2", "2"}),
                                                   kOmitted,
                                                   floats({"2", "6"})};
  CHECK(infer(lstm_attrs(2, "bidirectional", 1, 2), batch_first) == "float32[N,T,2,2] float32[N,2,2]");

  const std::vector<ir::TensorType> doubles = {testing::type_of(ir::DataType::kDouble, {"5", "3", "4"}),
                                               testing::type_of(ir::DataType::kDouble, {"1", "8", "4"}),
                                               testing::type_of(ir::DataType::kDouble, {"1", "8", "2"})};
  CHECK(infer(lstm_attrs(2, "forward", 0, 1), doubles) == "float64[5,1,3,2]");
  CHECK(infer(lstm_attrs(2, "forward", 0, 2), {testing::kUnknownRank, forward[1], forward[2]}) ==
        "float32[?,1,?,2] float32[1,?,2]");
}

TEST_CASE("LSTM inference rejects operands that do not fit", "[ops][lstm]") {
  const auto error_with = [](std::size_t input, const ir::TensorType& type, const ir::Attributes& attrs) {
    std::vector<ir::TensorType> inputs = {floats({"T", "3", "4"}),
                                          floats({"1", "8", "4"}),
                                          floats({"1", "8", "2"}),
                                          floats({"1", "16"}),
                                          testing::type_of(ir::DataType::kInt32, {"3"}),
                                          floats({"1", "3", "2"}),
                                          floats({"1", "3", "2"}),
                                          floats({"1", "6"})};
    inputs[input] = type;
    return infer(attrs, inputs).rfind("error: ", 0) == 0;
  };
  CHECK_FALSE(error_with(0, floats({"T", "3", "4"}), lstm_attrs(2)));
  CHECK(error_with(0, floats({"3", "4"}), lstm_attrs(2)));
  CHECK(error_with(1, floats({"1", "8", "5"}), lstm_attrs(2)));
  CHECK(error_with(1, floats({"2", "8", "4"}), lstm_attrs(2)));
  CHECK(error_with(1, floats({"1", "8", "4"}), lstm_attrs(2, "bidirectional")));
  CHECK(error_with(2, floats({"1", "8", "3"}), lstm_attrs(2)));
  CHECK(error_with(3, floats({"1", "8"}), lstm_attrs(2)));
  CHECK(error_with(4, testing::type_of(ir::DataType::kInt32, {"4"}), lstm_attrs(2)));
  CHECK(error_with(4, testing::int64s({"3"}), lstm_attrs(2)));
  CHECK(error_with(5, floats({"1", "3", "2"}), lstm_attrs(2, "forward", 1)));
  CHECK(error_with(6, floats({"1", "2", "2"}), lstm_attrs(2)));
  CHECK(error_with(7, floats({"1", "9"}), lstm_attrs(2)));
  CHECK(error_with(7, testing::type_of(ir::DataType::kDouble, {"1", "6"}), lstm_attrs(2)));
  CHECK(error_with(0, floats({"T", "3", "4"}), lstm_attrs(0)));
  CHECK(error_with(0, floats({"T", "3", "4"}), lstm_attrs(2, "forward", 0, 4)));
  CHECK(error_with(0, floats({"T", "3", "4"}), lstm_attrs(2, "sideways")));
}

TEST_CASE("LSTM runs two steps of ONNX's equations by hand", "[ops][lstm]") {
  // W and R are zero: the gates' pre-activations are Wb + Rb, i = [0.2, 0.3], o = [0.4, 0.5],
  // f = [0.6, 0.7], c = [0.8, 0.9].
  const ir::Tensor x = ir::Tensor::from_floats({2, 1, 1}, {5, -5});
  const ir::Tensor w = ir::Tensor::from_floats({1, 8, 1}, std::vector<float>(8, 0));
  const ir::Tensor r = ir::Tensor::from_floats({1, 8, 2}, std::vector<float>(16, 0));
  std::vector<float> bias = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  bias.resize(16, 0.1f);
  const ir::Tensor b = ir::Tensor::from_floats({1, 16}, bias);
  const std::vector<ir::Tensor> out = run(lstm_attrs(2), {&x, &w, &r, &b});

  std::vector<double> c1, h1, c2, h2;
  for (int j = 0; j < 2; ++j) {
    const double i = sigmoid(0.2 + 0.1 * j), o = sigmoid(0.4 + 0.1 * j), f = sigmoid(0.6 + 0.1 * j);
    const double g = std::tanh(0.8 + 0.1 * j);
    c1.push_back(i * g);
    h1.push_back(o * std::tanh(c1[j]));
    c2.push_back(f * c1[j] + i * g);
    h2.push_back(o * std::tanh(c2[j]));
  }
  REQUIRE(out.size() == 3);
  CHECK(out[0].dims() == std::vector<int64_t>{2, 1, 1, 2});
  CHECK_THAT(testing::elements(out[0]),
             Catch::Matchers::Approx(std::vector<double>{h1[0], h1[1], h2[0], h2[1]}).margin(1e-6));
  CHECK_THAT(testing::elements(out[1]), Catch::Matchers::Approx(h2).margin(1e-6));
  CHECK_THAT(testing::elements(out[2]), Catch::Matchers::Approx(c2).margin(1e-6));
}

TEST_CASE("LSTM applies X, the initial state, peepholes, clip and input_forget by hand", "[ops][lstm]") {
  // x = 2, h0 = [0.5, -0.5] and every row of R is [1, 0]: the pre-activations are 2 W + 0.5,
  // i = [0.7, 0.1], o = [1.1, -0.3], f = [1.5, -0.7], c = [1.9, -1.1].
  const ir::Tensor x = ir::Tensor::from_floats({1, 1, 1}, {2});
  const ir::Tensor w =
      ir::Tensor::from_floats({1, 8, 1}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f, 0.7f, -0.8f});
  const ir::Tensor r = ir::Tensor::from_floats({1, 8, 2}, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0});
  const ir::Tensor h0 = ir::Tensor::from_floats({1, 1, 2}, {0.5f, -0.5f});
  const ir::Tensor c0 = ir::Tensor::from_floats({1, 1, 2}, {1, -1});
  const ir::Tensor p = ir::Tensor::from_floats({1, 6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const double zi[] = {0.7, 0.1}, zo[] = {1.1, -0.3}, zf[] = {1.5, -0.7}, zc[] = {1.9, -1.1};
  const double pi[] = {0.1, 0.2}, po[] = {0.3, 0.4}, pf[] = {0.5, 0.6}, c_prev[] = {1, -1};

  const auto check = [&](double clip, bool input_forget) {
    const auto clipped = [&](double value) { return std::clamp(value, -clip, clip); };
    std::vector<double> h, c;
    for (int j = 0; j < 2; ++j) {
      const double i = sigmoid(clipped(zi[j] + pi[j] * c_prev[j]));
      const double f = input_forget ? 1 - i : sigmoid(clipped(zf[j] + pf[j] * c_prev[j]));
      c.push_back(f * c_prev[j] + i * std::tanh(clipped(zc[j])));
      h.push_back(sigmoid(clipped(zo[j] + po[j] * c[j])) * std::tanh(c[j]));
    }
    ir::Attributes attrs = lstm_attrs(2);
    if (std::isfinite(clip)) attrs.set("clip", static_cast<float>(clip));
    attrs.set("input_forget", int64_t{input_forget});
    const std::vector<ir::Tensor> out = run(attrs, {&x, &w, &r, nullptr, nullptr, &h0, &c0, &p});
    CHECK_THAT(testing::elements(out[0]), Catch::Matchers::Approx(h).margin(1e-6));
    CHECK_THAT(testing::elements(out[2]), Catch::Matchers::Approx(c).margin(1e-6));
  };
  check(std::numeric_limits<double>::infinity(), false);
  check(0.5, false);
  check(std::numeric_limits<double>::infinity(), true);
}

TEST_CASE("LSTM in reverse runs forward over the sequence reversed", "[ops][lstm]") {
  const Operands in = random_operands(4, 2, 3, 3, 1);
  Operands flipped = in;
  flipped.x = reversed_in_time(in.x);
  const std::vector<ir::Tensor> reverse = run_all(lstm_attrs(3, "reverse"), in);
  const std::vector<ir::Tensor> forward = run_all(lstm_attrs(3), flipped);
  check_close(reverse[0], reversed_in_time(forward[0]));
  check_close(reverse[1], forward[1]);
  check_close(reverse[2], forward[2]);
}

TEST_CASE("LSTM bidirectional stacks a forward and a reverse run", "[ops][lstm]") {
  const Operands in = random_operands(4, 2, 3, 3, 2);
  const std::vector<ir::Tensor> both = run_all(lstm_attrs(3, "bidirectional"), in);
  const std::vector<ir::Tensor> forward = run_all(lstm_attrs(3), direction_of(in, 0));
  const std::vector<ir::Tensor> reverse = run_all(lstm_attrs(3, "reverse"), direction_of(in, 1));
  check_close(sliced(both[0], 1, 0, 1), forward[0]);
  check_close(sliced(both[0], 1, 1, 2), reverse[0]);
  for (std::size_t state = 1; state < 3; ++state) {
    check_close(sliced(both[state], 0, 0, 1), forward[state]);
    check_close(sliced(both[state], 0, 1, 2), reverse[state]);
  }
}

/// An entry of length 0 ends in a zero state, as onnxruntime has it.
TEST_CASE("LSTM runs each batch entry over its own sequence length", "[ops][lstm]") {
  const std::vector<int64_t> lengths = {4, 1, 0, 3};
  const ir::Tensor lens = testing::int32_tensor({4}, {4, 1, 0, 3});
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    INFO(direction);
    const int64_t directions = std::string(direction) == "bidirectional" ? 2 : 1;
    const Operands in = random_operands(4, 4, 3, 2, directions);
    const std::vector<ir::Tensor> all = run_all(lstm_attrs(2, direction), in, &lens);
    for (int64_t b = 0; b < 4; ++b) {
      const int64_t length = lengths[static_cast<std::size_t>(b)];
      const ir::Tensor y = sliced(all[0], 2, b, b + 1);
      const ir::Tensor padding = sliced(y, 0, length, 4);
      CHECK(testing::elements(padding) ==
            std::vector<double>(static_cast<std::size_t>(padding.num_elements()), 0));
      if (length == 0) {
        const std::vector<double> zeros(static_cast<std::size_t>(2 * directions), 0);
        CHECK(testing::elements(sliced(all[1], 1, b, b + 1)) == zeros);
        CHECK(testing::elements(sliced(all[2], 1, b, b + 1)) == zeros);
        continue;
      }
      Operands alone = in;
      alone.x = sliced(sliced(in.x, 0, 0, length), 1, b, b + 1);
      alone.h0 = sliced(in.h0, 1, b, b + 1);
      alone.c0 = sliced(in.c0, 1, b, b + 1);
      const std::vector<ir::Tensor> own = run_all(lstm_attrs(2, direction), alone);
      check_close(sliced(y, 0, 0, length), own[0]);
      check_close(sliced(all[1], 1, b, b + 1), own[1]);
      check_close(sliced(all[2], 1, b, b + 1), own[2]);
    }
  }
}

TEST_CASE("LSTM in layout 1 is layout 0 with batch first", "[ops][lstm]") {
  const Operands in = random_operands(3, 2, 3, 2, 2);
  const ir::Tensor lens = testing::int32_tensor({2}, {2, 3});
  Operands batch_first = in;
  batch_first.x = transposed(in.x, {1, 0, 2});
  batch_first.h0 = transposed(in.h0, {1, 0, 2});
  batch_first.c0 = transposed(in.c0, {1, 0, 2});
  const std::vector<ir::Tensor> plain = run_all(lstm_attrs(2, "bidirectional"), in, &lens);
  const std::vector<ir::Tensor> swapped = run_all(lstm_attrs(2, "bidirectional", 1), batch_first, &lens);
  check_close(swapped[0], transposed(plain[0], {2, 0, 1, 3}));
  check_close(swapped[1], transposed(plain[1], {1, 0, 2}));
  check_close(swapped[2], transposed(plain[2], {1, 0, 2}));
}

TEST_CASE("LSTM computes double as float, and checks its sequence lengths", "[ops][lstm]") {
  const Operands in = random_operands(3, 2, 3, 2, 1);
  const auto as_double = [](const ir::Tensor& tensor) {
    return testing::tensor_of<double>(ir::DataType::kDouble, tensor.dims(), testing::elements(tensor));
  };
  const Operands doubles{as_double(in.x),  as_double(in.w),  as_double(in.r), as_double(in.b),
                         as_double(in.h0), as_double(in.c0), as_double(in.p)};
  const std::vector<ir::Tensor> single = run_all(lstm_attrs(2), in);
  const std::vector<ir::Tensor> twice = run_all(lstm_attrs(2), doubles);
  REQUIRE(twice[0].dtype() == ir::DataType::kDouble);
  CHECK_THAT(testing::elements(twice[0]), Catch::Matchers::Approx(testing::elements(single[0])).margin(1e-6));

  const ir::Tensor too_long = testing::int32_tensor({2}, {3, 4});
  CHECK_THROWS(run_all(lstm_attrs(2), in, &too_long));
}

TEST_CASE("LSTM costs its gate products and cell updates", "[ops][lstm]") {
  const ops::OpDef lstm = ops::lstm_op();
  const std::vector<ir::TensorType> inputs = {testing::float_type({5, 2, 3}), testing::float_type({2, 16, 3}),
                                              testing::float_type({2, 16, 4}), kOmitted,
                                              testing::type_of(ir::DataType::kInt32, {"2"})};
  const std::vector<ir::TensorType> outputs = {testing::float_type({5, 2, 2, 4}),
                                               testing::float_type({2, 2, 4})};
  const ops::CostFeatures cost =
      lstm.features(testing::node_of(lstm, lstm_attrs(4, "bidirectional", 0, 2)), inputs, outputs);
  CHECK(cost.flops == (2 * 4 * 4 * (3 + 4) + 20 * 4) * 5 * 2 * 2);
  CHECK(cost.bytes_read == 4 * (30 + 96 + 128 + 2));
  CHECK(cost.bytes_written == 4 * (80 + 16));
}

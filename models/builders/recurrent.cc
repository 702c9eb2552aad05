// The unrolled recurrent networks: NasRNN (TASO's examples/nasrnn.py) and SRU (OCGGS's
// examples/sru.py). Each time step has its own input x<t> [N, hidden]; the state starts from the
// input `state_in`.
#include <cmath>
#include <string>
#include <vector>

#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

/// x @ W with W [inputs, outputs] of variance 1 / inputs.
ir::ValueId project(ModelBuilder& b, ir::ValueId x, int64_t outputs) {
  const int64_t inputs = b.dim(x, 1);
  const ir::ValueId w = b.weight({inputs, outputs}, 1.0 / std::sqrt(static_cast<double>(inputs)));
  return b.op(ir::OpKind::kMatMul, {x, w});
}

ir::ValueId unary(ModelBuilder& b, ir::OpKind op, ir::ValueId x) { return b.op(op, {x}); }

ir::ValueId binary(ModelBuilder& b, ir::OpKind op, ir::ValueId x, ir::ValueId y) { return b.op(op, {x, y}); }

/// TASO's combine: x @ W1 + h @ W2.
ir::ValueId combine(ModelBuilder& b, ir::ValueId x, ir::ValueId h) {
  const ir::ValueId from_x = project(b, x, b.dim(h, 1));
  const ir::ValueId from_h = project(b, h, b.dim(h, 1));
  return add(b, from_x, from_h);
}

/// f(a) op g(b), with the two activations built in order.
ir::ValueId join(ModelBuilder& b, ir::OpKind op, ir::OpKind f, ir::ValueId x, ir::OpKind g, ir::ValueId y) {
  const ir::ValueId fx = unary(b, f, x);
  const ir::ValueId gy = unary(b, g, y);
  return binary(b, op, fx, gy);
}

/// One NasRNN cell (46 nodes): eight combinations of x and the state, joined pairwise through
/// Relu, Sigmoid and Tanh by Add and Mul, down to the new state.
ir::ValueId nas_cell(ModelBuilder& b, ir::ValueId state, ir::ValueId x) {
  using ir::OpKind;
  std::vector<ir::ValueId> t;
  for (int i = 0; i < 8; ++i) t.push_back(combine(b, x, state));
  const ir::ValueId m0 = join(b, OpKind::kAdd, OpKind::kRelu, t[0], OpKind::kSigmoid, t[3]);
  const ir::ValueId m1 = join(b, OpKind::kAdd, OpKind::kSigmoid, t[1], OpKind::kTanh, t[2]);
  const ir::ValueId m2 = join(b, OpKind::kMul, OpKind::kSigmoid, t[4], OpKind::kTanh, t[5]);
  const ir::ValueId m3 = join(b, OpKind::kMul, OpKind::kSigmoid, t[6], OpKind::kRelu, t[7]);
  const ir::ValueId m4 = join(b, OpKind::kAdd, OpKind::kSigmoid, m1, OpKind::kTanh, m2);
  const ir::ValueId m5 = join(b, OpKind::kMul, OpKind::kTanh, m0, OpKind::kTanh, m3);
  const ir::ValueId m6 = join(b, OpKind::kMul, OpKind::kTanh, m4, OpKind::kTanh, m5);
  return unary(b, OpKind::kTanh, m6);
}

/// The inputs x0 .. x<steps-1>, each [batch, hidden].
std::vector<ir::ValueId> step_inputs(ModelBuilder& b, int64_t steps, int64_t hidden) {
  std::vector<ir::ValueId> xs;
  for (int64_t t = 0; t < steps; ++t) xs.push_back(b.input("x" + std::to_string(t), {b.config().batch, hidden}));
  return xs;
}

/// The outputs of one SRU step.
struct SruStep {
  ir::ValueId state;
  ir::ValueId output;
};

/// One SRU step as OCGGS writes it (11 nodes): f = sigmoid(x Wf), r = sigmoid(x Wr),
/// c' = f * c + f * (x W), h = r * c' + r * x. (The SRU paper's gates take 1 - f and 1 - r on the
/// second terms; OCGGS's simplification is kept so the graph is the one Table 2 counts.)
SruStep sru_step(ModelBuilder& b, ir::ValueId x, ir::ValueId c) {
  using ir::OpKind;
  const int64_t hidden = b.dim(c, 1);
  const ir::ValueId candidate = project(b, x, hidden);
  const ir::ValueId forget = unary(b, OpKind::kSigmoid, project(b, x, hidden));
  const ir::ValueId reset = unary(b, OpKind::kSigmoid, project(b, x, hidden));
  const ir::ValueId kept = binary(b, OpKind::kMul, forget, c);
  const ir::ValueId added = binary(b, OpKind::kMul, forget, candidate);
  const ir::ValueId state = add(b, kept, added);
  const ir::ValueId from_state = binary(b, OpKind::kMul, reset, state);
  const ir::ValueId from_x = binary(b, OpKind::kMul, reset, x);
  return {state, add(b, from_state, from_x)};
}

}  // namespace

ir::Graph build_nasrnn(const ModelConfig& config) {
  ModelBuilder b(config);
  const int64_t hidden = or_default(config.hidden, 512);
  const std::vector<ir::ValueId> xs = step_inputs(b, or_default(config.seq_len, 5), hidden);
  ir::ValueId state = b.input("state_in", {config.batch, hidden});
  for (ir::ValueId x : xs) state = nas_cell(b, state, x);
  return b.finish({{"state_out", state}});
}

ir::Graph build_sru(const ModelConfig& config) {
  ModelBuilder b(config);
  const int64_t hidden = or_default(config.hidden, 1024);
  const std::vector<ir::ValueId> xs = step_inputs(b, or_default(config.seq_len, 1), hidden);
  ir::ValueId state = b.input("state_in", {config.batch, hidden});
  std::vector<std::pair<std::string, ir::ValueId>> outputs;
  for (std::size_t t = 0; t < xs.size(); ++t) {
    const SruStep step = sru_step(b, xs[t], state);
    outputs.emplace_back("h" + std::to_string(t), step.output);
    state = step.state;
  }
  outputs.emplace_back("state_out", state);
  return b.finish(outputs);
}

}  // namespace graphsub::models

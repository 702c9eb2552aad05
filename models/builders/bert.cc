// BERT's encoder stack as PyTorch (Hugging Face's BertModel) exports it: per layer, multi-head
// self-attention and a GELU feed-forward block, each with a residual Add and LayerNormalization.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

constexpr int64_t kHeadSize = 64;

/// Sizes of the encoder.
struct BertSizes {
  int64_t batch;
  int64_t seq;
  int64_t hidden;
  int64_t heads;
  int64_t head_size() const { return hidden / heads; }
};

/// x @ W + b, nn.Linear on a 3-d input: W [inputs, outputs] of variance gain / inputs.
ir::ValueId linear(ModelBuilder& b, ir::ValueId x, int64_t outputs, double gain = 1.0) {
  const int64_t inputs = b.dims(x).back();
  const ir::ValueId w = b.weight({inputs, outputs}, std::sqrt(gain / static_cast<double>(inputs)));
  const ir::ValueId bias = b.weight_around({outputs}, 0.0, 0.1);
  return add(b, b.op(ir::OpKind::kMatMul, {x, w}), bias);
}

/// A scalar weight.
ir::ValueId scalar(ModelBuilder& b, float value) { return b.constant({}, value); }

/// LayerNormalization over the hidden axis, scale near 1 and bias near 0.
ir::ValueId layer_norm(ModelBuilder& b, ir::ValueId x) {
  const std::vector<int64_t> hidden = {b.dims(x).back()};
  const ir::ValueId scale = b.weight_around(hidden, 1.0, 0.1);
  const ir::ValueId bias = b.weight_around(hidden, 0.0, 0.1);
  return b.op(ir::OpKind::kLayerNormalization, {x, scale, bias},
              attributes({{"axis", int64_t{-1}}, {"epsilon", 1e-12f}}));
}

/// GELU as PyTorch exports it before opset 20: x * 0.5 * (1 + erf(x / sqrt(2))), five nodes.
ir::ValueId gelu(ModelBuilder& b, ir::ValueId x) {
  ir::ValueId t = b.op(ir::OpKind::kDiv, {x, scalar(b, static_cast<float>(std::sqrt(2.0)))});
  t = b.op(ir::OpKind::kErf, {t});
  t = add(b, t, scalar(b, 1.0f));
  t = b.op(ir::OpKind::kMul, {x, t});
  return b.op(ir::OpKind::kMul, {t, scalar(b, 0.5f)});
}

/// [N, S, hidden] to the heads' [N, heads, S, head_size] (or [N, heads, head_size, S] with `perm`).
ir::ValueId split_heads(ModelBuilder& b, ir::ValueId x, const BertSizes& sizes, std::vector<int64_t> perm) {
  const std::vector<int64_t> shape = {sizes.batch, sizes.seq, sizes.heads, sizes.head_size()};
  const ir::ValueId t = b.op(ir::OpKind::kReshape, {x}, attributes({{"shape", shape}}));
  return b.op(ir::OpKind::kTranspose, {t}, attributes({{"perm", std::move(perm)}}));
}

/// Multi-head self-attention (without a mask): softmax(Q K^T / sqrt(d)) V, heads merged.
ir::ValueId self_attention(ModelBuilder& b, ir::ValueId x, const BertSizes& sizes) {
  const ir::ValueId q = split_heads(b, linear(b, x, sizes.hidden), sizes, {0, 2, 1, 3});
  const ir::ValueId k = split_heads(b, linear(b, x, sizes.hidden), sizes, {0, 2, 3, 1});
  const ir::ValueId v = split_heads(b, linear(b, x, sizes.hidden), sizes, {0, 2, 1, 3});
  ir::ValueId scores = b.op(ir::OpKind::kMatMul, {q, k});
  const auto scale = static_cast<float>(std::sqrt(static_cast<double>(sizes.head_size())));
  scores = b.op(ir::OpKind::kDiv, {scores, scalar(b, scale)});
  const ir::ValueId probs = b.op(ir::OpKind::kSoftmax, {scores}, attributes({{"axis", int64_t{-1}}}));
  ir::ValueId context = b.op(ir::OpKind::kMatMul, {probs, v});
  context = b.op(ir::OpKind::kTranspose, {context}, attributes({{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  const std::vector<int64_t> merged = {sizes.batch, sizes.seq, sizes.hidden};
  return b.op(ir::OpKind::kReshape, {context}, attributes({{"shape", merged}}));
}

/// One encoder layer (33 nodes).
ir::ValueId encoder_layer(ModelBuilder& b, ir::ValueId x, const BertSizes& sizes) {
  const ir::ValueId attention = linear(b, self_attention(b, x, sizes), sizes.hidden);
  const ir::ValueId attended = layer_norm(b, add(b, attention, x));
  const ir::ValueId intermediate = gelu(b, linear(b, attended, 4 * sizes.hidden, 2.0));
  const ir::ValueId output = linear(b, intermediate, sizes.hidden);
  return layer_norm(b, add(b, output, attended));
}

BertSizes bert_sizes(const ModelConfig& config) {
  BertSizes sizes{config.batch, or_default(config.seq_len, 128), or_default(config.hidden, 768), 0};
  sizes.heads = or_default(config.heads, std::max<int64_t>(1, sizes.hidden / kHeadSize));
  if (sizes.heads <= 0 || sizes.hidden % sizes.heads != 0) {
    throw Error("hidden size " + std::to_string(sizes.hidden) + " is not a multiple of " +
                std::to_string(sizes.heads) + " heads");
  }
  return sizes;
}

}  // namespace

ir::Graph build_bert(const ModelConfig& config) {
  const BertSizes sizes = bert_sizes(config);
  ModelBuilder b(config);
  ir::ValueId t = b.input("input", {sizes.batch, sizes.seq, sizes.hidden});
  const int64_t layers = or_default(config.blocks, 12);
  for (int64_t i = 0; i < layers; ++i) t = encoder_layer(b, t, sizes);
  return b.finish({{"output", t}});
}

}  // namespace graphsub::models

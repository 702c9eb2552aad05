// NasNet-A as TASO's examples/nasnet_a.py builds it, with the image stem of OCGGS's
// examples/nasneta.py: three stages of five normal cells and one reduction cell.
#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

constexpr int64_t kStages = 3;
constexpr int64_t kNormalCells = 5;
constexpr int64_t kFirstChannels = 128;

/// TASO's squeeze: a 1x1 convolution with Relu to `channels`. Its gain is 1, not He's 2: a cell's
/// outputs are sums of two branches, twice the second moment of one, and this halves it back.
/// (TASO's `fit` also has a strided 3x3 for a `prev` of another size; in this topology `prev`
/// always has `cur`'s size, so fitting is squeezing.)
ir::ValueId squeeze(ModelBuilder& b, ir::ValueId x, int64_t channels) {
  return conv(b, x, ConvLayer::square(channels, 1).with_gain(1.0));
}

/// TASO's separable convolution: a k x k convolution with one group per output channel, then a
/// 1x1 convolution; SAME padding, no Relu.
ir::ValueId separable(ModelBuilder& b, ir::ValueId x, int64_t channels, int64_t k, int64_t stride = 1) {
  const ir::ValueId t = conv(b, x, ConvLayer::square(channels, k, stride).same().grouped(channels).linear());
  return conv(b, t, ConvLayer::square(channels, 1).linear());
}

/// A 3x3 pool at `stride` with SAME padding (TASO's average pool leaves the padding out).
ir::ValueId pool3(ModelBuilder& b, ir::ValueId x, PoolLayer layer) { return pool(b, x, layer.same()); }

/// The normal cell: five sums of two branches over `cur` and `prev`, concatenated. Branches are
/// built one statement each, in TASO's order, so the weights are drawn in a fixed order.
ir::ValueId normal_cell(ModelBuilder& b, ir::ValueId prev, ir::ValueId cur, int64_t channels) {
  cur = squeeze(b, cur, channels);
  prev = squeeze(b, prev, channels);
  const ir::ValueId sep_cur_a = separable(b, cur, channels, 3);
  const ir::ValueId sep_prev_a = separable(b, prev, channels, 3);
  const ir::ValueId sep_cur_b = separable(b, cur, channels, 3);
  const ir::ValueId avg_cur = pool3(b, cur, PoolLayer::average(3, 1));
  const ir::ValueId avg_prev_a = pool3(b, prev, PoolLayer::average(3, 1));
  const ir::ValueId avg_prev_b = pool3(b, prev, PoolLayer::average(3, 1));
  const ir::ValueId sep_prev_b = separable(b, prev, channels, 3);
  const ir::ValueId sep_prev_c = separable(b, prev, channels, 3);
  return concat(b, {add(b, sep_cur_a, cur), add(b, sep_prev_a, sep_cur_b), add(b, avg_cur, prev),
                    add(b, avg_prev_a, avg_prev_b), add(b, sep_prev_b, sep_prev_c)});
}

/// The reduction cell: halves the size; two of its sums read earlier sums.
ir::ValueId reduction_cell(ModelBuilder& b, ir::ValueId prev, ir::ValueId cur, int64_t channels) {
  cur = squeeze(b, cur, channels);
  prev = squeeze(b, prev, channels);
  const ir::ValueId sep7_prev_a = separable(b, prev, channels, 7, 2);
  const ir::ValueId sep5_cur = separable(b, cur, channels, 5, 2);
  const ir::ValueId sum0 = add(b, sep7_prev_a, sep5_cur);
  const ir::ValueId max_cur_a = pool3(b, cur, PoolLayer::max(3, 2));
  const ir::ValueId sep7_prev_b = separable(b, prev, channels, 7, 2);
  const ir::ValueId sum1 = add(b, max_cur_a, sep7_prev_b);
  const ir::ValueId avg_cur = pool3(b, cur, PoolLayer::average(3, 2));
  const ir::ValueId sep5_prev = separable(b, prev, channels, 5, 2);
  const ir::ValueId sum2 = add(b, avg_cur, sep5_prev);
  const ir::ValueId max_cur_b = pool3(b, cur, PoolLayer::max(3, 2));
  const ir::ValueId sep3_sum0 = separable(b, sum0, channels, 3);
  const ir::ValueId sum3 = add(b, max_cur_b, sep3_sum0);
  const ir::ValueId avg_sum0 = pool3(b, sum0, PoolLayer::average(3, 1));
  const ir::ValueId sum4 = add(b, avg_sum0, sum1);
  return concat(b, {sum0, sum1, sum2, sum3, sum4});
}

}  // namespace

ir::Graph build_nasnet_a(const ModelConfig& config) {
  ModelBuilder b(config);
  const int64_t size = or_default(config.image_size, 224);
  ir::ValueId input = b.input("input", {config.batch, 3, size, size});
  input = conv(b, input, ConvLayer::square(64, 7, 2).same());
  input = pool3(b, input, PoolLayer::max(3, 2));
  int64_t channels = kFirstChannels;
  for (int64_t stage = 0; stage < kStages; ++stage) {
    ir::ValueId prev = input;
    ir::ValueId cur = input;
    for (int64_t cell = 0; cell < kNormalCells; ++cell) {
      const ir::ValueId next = normal_cell(b, prev, cur, channels);
      prev = cur;
      cur = next;
    }
    channels *= 2;
    input = reduction_cell(b, prev, cur, channels);
  }
  return b.finish({{"output", input}});
}

}  // namespace graphsub::models

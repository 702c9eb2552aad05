// The layers the benchmark CNNs are made of.
#include "models/builders/layers.h"

#include <cmath>
#include <utility>

namespace graphsub::models {
namespace {

constexpr int64_t kImageNetClasses = 1000;

/// Spread of the inference statistics and affine parameters around their neutral values.
constexpr double kNormNoise = 0.1;
/// Spread of a bias around 0.
constexpr double kBiasNoise = 0.1;

/// BatchNormalization of `x` with statistics near (mean 0, var 1) and parameters near (1, 0):
/// close to the identity, so the Conv's weight scale alone sets the activations' size.
ir::ValueId batch_norm(ModelBuilder& builder, ir::ValueId x) {
  const std::vector<int64_t> channels = {builder.dim(x, 1)};
  const ir::ValueId scale = builder.weight_around(channels, 1.0, kNormNoise);
  const ir::ValueId bias = builder.weight_around(channels, 0.0, kNormNoise);
  const ir::ValueId mean = builder.weight_around(channels, 0.0, kNormNoise);
  const ir::ValueId var = builder.weight_around(channels, 1.0, kNormNoise);
  return builder.op(ir::OpKind::kBatchNormalization, {x, scale, bias, mean, var},
                    attributes({{"epsilon", 1e-5f}}));
}

ir::Attributes conv_attributes(const ConvLayer& layer) {
  ir::Attributes attrs = attributes(
      {{"kernel_shape", layer.kernel}, {"strides", layer.strides}, {"group", layer.group}});
  if (layer.same_upper) {
    attrs.set("auto_pad", std::string("SAME_UPPER"));
  } else {
    attrs.set("pads", layer.pads);
  }
  return attrs;
}

}  // namespace

ConvLayer ConvLayer::square(int64_t filters, int64_t k, int64_t stride) {
  ConvLayer layer;
  layer.filters = filters;
  layer.kernel = {k, k};
  layer.strides = {stride, stride};
  layer.pads = {k / 2, k / 2, k / 2, k / 2};
  return layer;
}

ConvLayer ConvLayer::rect(int64_t filters, int64_t kh, int64_t kw) {
  ConvLayer layer;
  layer.filters = filters;
  layer.kernel = {kh, kw};
  layer.pads = {kh / 2, kw / 2, kh / 2, kw / 2};
  return layer;
}

ConvLayer& ConvLayer::padded(int64_t value) {
  pads = {value, value, value, value};
  return *this;
}

ConvLayer& ConvLayer::valid() { return padded(0); }

ConvLayer& ConvLayer::same() {
  same_upper = true;
  return *this;
}

ConvLayer& ConvLayer::grouped(int64_t groups) {
  group = groups;
  return *this;
}

ConvLayer& ConvLayer::linear() {
  relu = false;
  return *this;
}

ConvLayer& ConvLayer::with_gain(double value) {
  gain = value;
  return *this;
}

ir::ValueId conv(ModelBuilder& builder, ir::ValueId x, const ConvLayer& layer) {
  const int64_t channels_per_group = builder.dim(x, 1) / layer.group;
  const int64_t fan_in = channels_per_group * layer.kernel[0] * layer.kernel[1];
  const double gain = layer.gain != 0 ? layer.gain : (layer.relu ? 2.0 : 1.0);
  const ir::ValueId w = builder.weight({layer.filters, channels_per_group, layer.kernel[0], layer.kernel[1]},
                                       std::sqrt(gain / static_cast<double>(fan_in)));
  std::vector<ir::ValueId> inputs = {x, w};
  if (!builder.config().batch_norm) inputs.push_back(builder.weight_around({layer.filters}, 0.0, kBiasNoise));
  ir::ValueId y = builder.op(ir::OpKind::kConv, std::move(inputs), conv_attributes(layer));
  if (builder.config().batch_norm) y = batch_norm(builder, y);
  return layer.relu ? relu(builder, y) : y;
}

PoolLayer PoolLayer::max(int64_t kernel, int64_t stride) {
  PoolLayer layer;
  layer.kernel = kernel;
  layer.stride = stride;
  return layer;
}

PoolLayer PoolLayer::average(int64_t kernel, int64_t stride) {
  PoolLayer layer = max(kernel, stride);
  layer.op = ir::OpKind::kAveragePool;
  return layer;
}

PoolLayer& PoolLayer::padded(int64_t value) {
  pad = value;
  return *this;
}

PoolLayer& PoolLayer::same() {
  same_upper = true;
  return *this;
}

PoolLayer& PoolLayer::ceil() {
  ceil_mode = true;
  return *this;
}

PoolLayer& PoolLayer::counting_pads() {
  count_include_pad = true;
  return *this;
}

ir::ValueId pool(ModelBuilder& builder, ir::ValueId x, const PoolLayer& layer) {
  ir::Attributes attrs = attributes({{"kernel_shape", std::vector<int64_t>{layer.kernel, layer.kernel}},
                                     {"strides", std::vector<int64_t>{layer.stride, layer.stride}},
                                     {"ceil_mode", int64_t{layer.ceil_mode}}});
  if (layer.same_upper) {
    attrs.set("auto_pad", std::string("SAME_UPPER"));
  } else {
    attrs.set("pads", std::vector<int64_t>(4, layer.pad));
  }
  if (layer.op == ir::OpKind::kAveragePool) attrs.set("count_include_pad", int64_t{layer.count_include_pad});
  return builder.op(layer.op, {x}, std::move(attrs));
}

ir::ValueId fully_connected(ModelBuilder& builder, ir::ValueId x, int64_t outputs, double gain) {
  const int64_t inputs = builder.dim(x, 1);
  const ir::ValueId w = builder.weight({outputs, inputs}, std::sqrt(gain / static_cast<double>(inputs)));
  const ir::ValueId b = builder.weight_around({outputs}, 0.0, kBiasNoise);
  return builder.op(ir::OpKind::kGemm, {x, w, b}, attributes({{"transB", int64_t{1}}}));
}

ir::ValueId relu(ModelBuilder& builder, ir::ValueId x) { return builder.op(ir::OpKind::kRelu, {x}); }

ir::ValueId add(ModelBuilder& builder, ir::ValueId a, ir::ValueId b) {
  return builder.op(ir::OpKind::kAdd, {a, b});
}

ir::ValueId concat(ModelBuilder& builder, std::vector<ir::ValueId> parts) {
  return builder.op(ir::OpKind::kConcat, std::move(parts), attributes({{"axis", int64_t{1}}}));
}

ir::ValueId flatten(ModelBuilder& builder, ir::ValueId x) {
  return builder.op(ir::OpKind::kFlatten, {x}, attributes({{"axis", int64_t{1}}}));
}

ir::ValueId classifier(ModelBuilder& builder, ir::ValueId x) {
  const ir::ValueId pooled = builder.op(ir::OpKind::kGlobalAveragePool, {x});
  return fully_connected(builder, flatten(builder, pooled), kImageNetClasses, 1.0);
}

}  // namespace graphsub::models

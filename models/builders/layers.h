// The layers the benchmark CNNs are made of, as frameworks export them to ONNX.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "models/builders/model_builder.h"

namespace graphsub::models {

/// A 2-d convolution layer: Conv, then BatchNormalization when the config asks for it (else the
/// Conv carries a bias), then Relu unless `linear()`. Weights are drawn with variance
/// gain / fan-in: gain 2 (He) keeps an activation's second moment through a Relu, 1 through a
/// linear layer; a residual branch that adds onto an identity shortcut uses less.
struct ConvLayer {
  int64_t filters = 0;
  std::vector<int64_t> kernel = {1, 1};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};  ///< ONNX order: top, left, bottom, right.
  bool same_upper = false;                   ///< TASO's "SAME" (auto_pad SAME_UPPER) instead of pads.
  int64_t group = 1;
  bool relu = true;
  double gain = 0;  ///< 0: 2 with a Relu, 1 without.

  /// k x k filters at `stride`, padded by k / 2 on every side (the size is kept at stride 1).
  static ConvLayer square(int64_t filters, int64_t k, int64_t stride = 1);
  /// kh x kw filters at stride 1, padded by kh / 2 and kw / 2 (Inception's 1x7, 7x1, 1x3, 3x1).
  static ConvLayer rect(int64_t filters, int64_t kh, int64_t kw);
  ConvLayer& padded(int64_t value);    ///< `value` on every side.
  ConvLayer& valid();                  ///< No padding.
  ConvLayer& same();                   ///< TASO's SAME padding: output size ceil(input / stride).
  ConvLayer& grouped(int64_t groups);  ///< Grouped convolution.
  ConvLayer& linear();                 ///< No Relu.
  ConvLayer& with_gain(double value);  ///< Another weight scale (see `gain`).
};

/// Adds a convolution layer on `x` [N, C, H, W].
ir::ValueId conv(ModelBuilder& builder, ir::ValueId x, const ConvLayer& layer);

/// A pooling layer: MaxPool or AveragePool over a square window.
struct PoolLayer {
  ir::OpKind op = ir::OpKind::kMaxPool;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;
  bool same_upper = false;
  bool ceil_mode = false;
  bool count_include_pad = false;  ///< AveragePool only: PyTorch's default, not TASO's.

  static PoolLayer max(int64_t kernel, int64_t stride);
  static PoolLayer average(int64_t kernel, int64_t stride);
  PoolLayer& padded(int64_t value);  ///< `value` on every side.
  PoolLayer& same();                 ///< TASO's SAME padding.
  PoolLayer& ceil();                 ///< ceil_mode (SqueezeNet).
  PoolLayer& counting_pads();        ///< count_include_pad (PyTorch's avg_pool2d).
};

/// Adds a pooling layer on `x` [N, C, H, W].
ir::ValueId pool(ModelBuilder& builder, ir::ValueId x, const PoolLayer& layer);

/// Gemm(x, W, b) with W [outputs, inputs] and transB = 1, as PyTorch exports nn.Linear on a matrix;
/// `gain` as in ConvLayer.
ir::ValueId fully_connected(ModelBuilder& builder, ir::ValueId x, int64_t outputs, double gain);

/// Relu(x).
ir::ValueId relu(ModelBuilder& builder, ir::ValueId x);
/// a + b.
ir::ValueId add(ModelBuilder& builder, ir::ValueId a, ir::ValueId b);
/// Concat along the channel axis.
ir::ValueId concat(ModelBuilder& builder, std::vector<ir::ValueId> parts);
/// Flatten(x, axis = 1).
ir::ValueId flatten(ModelBuilder& builder, ir::ValueId x);

/// The ImageNet head of torchvision's CNNs: GlobalAveragePool, Flatten, a fully connected layer to
/// 1000 logits.
ir::ValueId classifier(ModelBuilder& builder, ir::ValueId x);

}  // namespace graphsub::models

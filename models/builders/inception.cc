// Inception-v3 as torchvision defines it, and its last module type alone (MetaFlow Fig. 6a).
#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

/// torchvision's InceptionA (Mixed_5b..5d): 1x1; 1x1, 5x5; 1x1, 3x3, 3x3; avg pool, 1x1.
ir::ValueId inception_a(ModelBuilder& b, ir::ValueId x, int64_t pool_features) {
  const ir::ValueId branch1x1 = conv(b, x, ConvLayer::square(64, 1));
  ir::ValueId branch5x5 = conv(b, x, ConvLayer::square(48, 1));
  branch5x5 = conv(b, branch5x5, ConvLayer::square(64, 5));
  ir::ValueId branch3x3dbl = conv(b, x, ConvLayer::square(64, 1));
  branch3x3dbl = conv(b, branch3x3dbl, ConvLayer::square(96, 3));
  branch3x3dbl = conv(b, branch3x3dbl, ConvLayer::square(96, 3));
  ir::ValueId branch_pool = pool(b, x, PoolLayer::average(3, 1).padded(1).counting_pads());
  branch_pool = conv(b, branch_pool, ConvLayer::square(pool_features, 1));
  return concat(b, {branch1x1, branch5x5, branch3x3dbl, branch_pool});
}

/// torchvision's InceptionB (Mixed_6a), the first grid reduction.
ir::ValueId inception_b(ModelBuilder& b, ir::ValueId x) {
  const ir::ValueId branch3x3 = conv(b, x, ConvLayer::square(384, 3, 2).valid());
  ir::ValueId branch3x3dbl = conv(b, x, ConvLayer::square(64, 1));
  branch3x3dbl = conv(b, branch3x3dbl, ConvLayer::square(96, 3));
  branch3x3dbl = conv(b, branch3x3dbl, ConvLayer::square(96, 3, 2).valid());
  const ir::ValueId branch_pool = pool(b, x, PoolLayer::max(3, 2));
  return concat(b, {branch3x3, branch3x3dbl, branch_pool});
}

/// torchvision's InceptionC (Mixed_6b..6e): factorized 7x7 convolutions with `c7` channels.
ir::ValueId inception_c(ModelBuilder& b, ir::ValueId x, int64_t c7) {
  const ir::ValueId branch1x1 = conv(b, x, ConvLayer::square(192, 1));
  ir::ValueId branch7x7 = conv(b, x, ConvLayer::square(c7, 1));
  branch7x7 = conv(b, branch7x7, ConvLayer::rect(c7, 1, 7));
  branch7x7 = conv(b, branch7x7, ConvLayer::rect(192, 7, 1));
  ir::ValueId branch7x7dbl = conv(b, x, ConvLayer::square(c7, 1));
  branch7x7dbl = conv(b, branch7x7dbl, ConvLayer::rect(c7, 7, 1));
  branch7x7dbl = conv(b, branch7x7dbl, ConvLayer::rect(c7, 1, 7));
  branch7x7dbl = conv(b, branch7x7dbl, ConvLayer::rect(c7, 7, 1));
  branch7x7dbl = conv(b, branch7x7dbl, ConvLayer::rect(192, 1, 7));
  ir::ValueId branch_pool = pool(b, x, PoolLayer::average(3, 1).padded(1).counting_pads());
  branch_pool = conv(b, branch_pool, ConvLayer::square(192, 1));
  return concat(b, {branch1x1, branch7x7, branch7x7dbl, branch_pool});
}

/// torchvision's InceptionD (Mixed_7a), the second grid reduction.
ir::ValueId inception_d(ModelBuilder& b, ir::ValueId x) {
  ir::ValueId branch3x3 = conv(b, x, ConvLayer::square(192, 1));
  branch3x3 = conv(b, branch3x3, ConvLayer::square(320, 3, 2).valid());
  ir::ValueId branch7x7x3 = conv(b, x, ConvLayer::square(192, 1));
  branch7x7x3 = conv(b, branch7x7x3, ConvLayer::rect(192, 1, 7));
  branch7x7x3 = conv(b, branch7x7x3, ConvLayer::rect(192, 7, 1));
  branch7x7x3 = conv(b, branch7x7x3, ConvLayer::square(192, 3, 2).valid());
  const ir::ValueId branch_pool = pool(b, x, PoolLayer::max(3, 2));
  return concat(b, {branch3x3, branch7x7x3, branch_pool});
}

/// A 1x3 and a 3x1 convolution of the same input, concatenated (InceptionE's split branches).
ir::ValueId split_3x3(ModelBuilder& b, ir::ValueId x) {
  const ir::ValueId a = conv(b, x, ConvLayer::rect(384, 1, 3));
  const ir::ValueId c = conv(b, x, ConvLayer::rect(384, 3, 1));
  return concat(b, {a, c});
}

/// torchvision's InceptionE (Mixed_7b, 7c): MetaFlow Fig. 6a's module.
ir::ValueId inception_e(ModelBuilder& b, ir::ValueId x) {
  const ir::ValueId branch1x1 = conv(b, x, ConvLayer::square(320, 1));
  const ir::ValueId branch3x3 = split_3x3(b, conv(b, x, ConvLayer::square(384, 1)));
  ir::ValueId branch3x3dbl = conv(b, x, ConvLayer::square(448, 1));
  branch3x3dbl = split_3x3(b, conv(b, branch3x3dbl, ConvLayer::square(384, 3)));
  ir::ValueId branch_pool = pool(b, x, PoolLayer::average(3, 1).padded(1).counting_pads());
  branch_pool = conv(b, branch_pool, ConvLayer::square(192, 1));
  return concat(b, {branch1x1, branch3x3, branch3x3dbl, branch_pool});
}

/// The stem: five convolutions and two max pools, 3 x 299 x 299 to 192 x 35 x 35.
ir::ValueId stem(ModelBuilder& b, ir::ValueId x) {
  ir::ValueId t = conv(b, x, ConvLayer::square(32, 3, 2).valid());
  t = conv(b, t, ConvLayer::square(32, 3).valid());
  t = conv(b, t, ConvLayer::square(64, 3));
  t = pool(b, t, PoolLayer::max(3, 2));
  t = conv(b, t, ConvLayer::square(80, 1));
  t = conv(b, t, ConvLayer::square(192, 3).valid());
  return pool(b, t, PoolLayer::max(3, 2));
}

}  // namespace

ir::Graph build_inception_v3(const ModelConfig& config) {
  ModelBuilder b(config);
  const int64_t size = or_default(config.image_size, 299);
  ir::ValueId t = stem(b, b.input("input", {config.batch, 3, size, size}));
  for (int64_t pool_features : {32, 64, 64}) t = inception_a(b, t, pool_features);
  t = inception_b(b, t);
  for (int64_t c7 : {128, 160, 160, 192}) t = inception_c(b, t, c7);
  t = inception_d(b, t);
  t = inception_e(b, inception_e(b, t));
  return b.finish({{"output", classifier(b, t)}});
}

ir::Graph build_inception_e(const ModelConfig& config) {
  ModelBuilder b(config);
  const int64_t size = or_default(config.image_size, 8);
  const ir::ValueId x = b.input("input", {config.batch, 1280, size, size});
  return b.finish({{"output", inception_e(b, x)}});
}

}  // namespace graphsub::models

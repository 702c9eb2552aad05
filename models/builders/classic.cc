// The CNNs defined without BatchNormalization: AlexNet, VGG-16 and SqueezeNet 1.1 as torchvision
// defines them. Their convolutions carry a bias whatever ModelConfig::batch_norm says.
#include <vector>

#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

constexpr int64_t kImageSize = 224;
constexpr int64_t kClasses = 1000;

/// The config with batch_norm off: these networks have none.
ModelConfig without_batch_norm(const ModelConfig& config) {
  ModelConfig plain = config;
  plain.batch_norm = false;
  return plain;
}

ir::ValueId image(ModelBuilder& b) {
  const int64_t size = or_default(b.config().image_size, kImageSize);
  return b.input("input", {b.config().batch, 3, size, size});
}

/// AlexNet's and VGG's classifier: Flatten, two 4096-wide layers with Relu, the logits. (Dropout
/// is the identity in inference, and the adaptive average pool before it is the identity at
/// 224 x 224, so neither is in the graph.)
ir::ValueId dense_classifier(ModelBuilder& b, ir::ValueId x) {
  ir::ValueId t = flatten(b, x);
  t = relu(b, fully_connected(b, t, 4096, 2.0));
  t = relu(b, fully_connected(b, t, 4096, 2.0));
  return fully_connected(b, t, kClasses, 1.0);
}

/// SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated.
ir::ValueId fire(ModelBuilder& b, ir::ValueId x, int64_t squeeze, int64_t expand) {
  const ir::ValueId s = conv(b, x, ConvLayer::square(squeeze, 1));
  const ir::ValueId e1 = conv(b, s, ConvLayer::square(expand, 1));
  const ir::ValueId e3 = conv(b, s, ConvLayer::square(expand, 3));
  return concat(b, {e1, e3});
}

}  // namespace

ir::Graph build_alexnet(const ModelConfig& config) {
  ModelBuilder b(without_batch_norm(config));
  ir::ValueId t = conv(b, image(b), ConvLayer::square(64, 11, 4).padded(2));
  t = pool(b, t, PoolLayer::max(3, 2));
  t = conv(b, t, ConvLayer::square(192, 5));
  t = pool(b, t, PoolLayer::max(3, 2));
  t = conv(b, t, ConvLayer::square(384, 3));
  t = conv(b, t, ConvLayer::square(256, 3));
  t = conv(b, t, ConvLayer::square(256, 3));
  t = pool(b, t, PoolLayer::max(3, 2));
  return b.finish({{"output", dense_classifier(b, t)}});
}

ir::Graph build_vgg16(const ModelConfig& config) {
  // Configuration D: 0 marks a 2x2 max pool.
  const std::vector<int64_t> layers = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                                       512, 512, 512, 0, 512, 512, 512, 0};
  ModelBuilder b(without_batch_norm(config));
  ir::ValueId t = image(b);
  for (int64_t filters : layers) {
    t = filters == 0 ? pool(b, t, PoolLayer::max(2, 2)) : conv(b, t, ConvLayer::square(filters, 3));
  }
  return b.finish({{"output", dense_classifier(b, t)}});
}

ir::Graph build_squeezenet(const ModelConfig& config) {
  ModelBuilder b(without_batch_norm(config));
  ir::ValueId t = conv(b, image(b), ConvLayer::square(64, 3, 2).valid());
  t = pool(b, t, PoolLayer::max(3, 2).ceil());
  t = fire(b, fire(b, t, 16, 64), 16, 64);
  t = pool(b, t, PoolLayer::max(3, 2).ceil());
  t = fire(b, fire(b, t, 32, 128), 32, 128);
  t = pool(b, t, PoolLayer::max(3, 2).ceil());
  t = fire(b, fire(b, t, 48, 192), 48, 192);
  t = fire(b, fire(b, t, 64, 256), 64, 256);
  // The final classifier: a 1x1 convolution to the classes with Relu, averaged over the image.
  t = conv(b, t, ConvLayer::square(kClasses, 1));
  t = flatten(b, b.op(ir::OpKind::kGlobalAveragePool, {t}));
  return b.finish({{"output", t}});
}

}  // namespace graphsub::models

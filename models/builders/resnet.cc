// The residual networks: ResNet-50, ResNeXt-50 and ResNet-18 as torchvision defines them, and
// OCGGS's ResNet of N blocks.
#include <vector>

#include "models/builders/builders.h"
#include "models/builders/layers.h"

namespace graphsub::models {
namespace {

constexpr int64_t kImageSize = 224;

/// Sizes of one residual block. An identity shortcut adds the branch onto its input, so such a
/// branch ends with a small weight scale (`identity_gain`, 1 / number of blocks): n blocks then
/// grow an activation's second moment by at most (1 + 1/n)^n < e.
struct Block {
  int64_t width;    ///< Channels inside the branch.
  int64_t outputs;  ///< Channels out of the block.
  int64_t stride;
  int64_t groups;
  double identity_gain;
};

/// One stage of a torchvision ResNet: `blocks` blocks, the first of which strides.
struct Stage {
  int64_t blocks;
  int64_t width;
  int64_t outputs;
  int64_t stride;
};

bool projects(const ModelBuilder& b, ir::ValueId x, const Block& block) {
  return block.stride != 1 || b.dim(x, 1) != block.outputs;
}

/// The shortcut: x itself, or a strided 1x1 projection where the shape changes.
ir::ValueId shortcut(ModelBuilder& b, ir::ValueId x, const Block& block) {
  if (!projects(b, x, block)) return x;
  return conv(b, x, ConvLayer::square(block.outputs, 1, block.stride).linear());
}

/// The gain of the branch's last convolution: 1 beside a projection (the two halves of the sum
/// then make up He's factor 2 for the Relu after it), `identity_gain` beside an identity.
double branch_gain(const ModelBuilder& b, ir::ValueId x, const Block& block) {
  return projects(b, x, block) ? 1.0 : block.identity_gain;
}

/// torchvision's Bottleneck: 1x1, 3x3 (strided, grouped), 1x1, plus the shortcut, then Relu.
ir::ValueId bottleneck(ModelBuilder& b, ir::ValueId x, const Block& block) {
  ir::ValueId t = conv(b, x, ConvLayer::square(block.width, 1));
  t = conv(b, t, ConvLayer::square(block.width, 3, block.stride).grouped(block.groups));
  t = conv(b, t, ConvLayer::square(block.outputs, 1).linear().with_gain(branch_gain(b, x, block)));
  return relu(b, add(b, t, shortcut(b, x, block)));
}

/// torchvision's BasicBlock: two 3x3 convolutions (the first strided), plus the shortcut, then Relu.
ir::ValueId basic_block(ModelBuilder& b, ir::ValueId x, const Block& block) {
  ir::ValueId t = conv(b, x, ConvLayer::square(block.width, 3, block.stride));
  t = conv(b, t, ConvLayer::square(block.outputs, 3).linear().with_gain(branch_gain(b, x, block)));
  return relu(b, add(b, t, shortcut(b, x, block)));
}

/// OCGGS's block (examples/resnet.py): two 3x3 convolutions and a 1x1 projection shortcut on every
/// block, as in MetaFlow's Fig. 1. OCGGS's script also puts a Relu on the shortcut; the ResNet
/// paper does not, and neither does this block.
ir::ValueId projected_block(ModelBuilder& b, ir::ValueId x, int64_t channels) {
  ir::ValueId t = conv(b, x, ConvLayer::square(channels, 3));
  t = conv(b, t, ConvLayer::square(channels, 3).linear());
  return relu(b, add(b, t, conv(b, x, ConvLayer::square(channels, 1).linear())));
}

using BlockFn = ir::ValueId (*)(ModelBuilder&, ir::ValueId, const Block&);

/// A torchvision ResNet: the 7x7 stem and max pool, the stages, the ImageNet classifier.
ir::Graph torchvision_resnet(const ModelConfig& config, const std::vector<Stage>& stages, BlockFn block,
                             int64_t groups) {
  ModelBuilder b(config);
  const int64_t size = or_default(config.image_size, kImageSize);
  ir::ValueId t = b.input("input", {config.batch, 3, size, size});
  t = conv(b, t, ConvLayer::square(64, 7, 2));
  t = pool(b, t, PoolLayer::max(3, 2).padded(1));
  int64_t total = 0;
  for (const Stage& stage : stages) total += stage.blocks;
  for (const Stage& stage : stages) {
    for (int64_t i = 0; i < stage.blocks; ++i) {
      const int64_t stride = i == 0 ? stage.stride : 1;
      t = block(b, t, Block{stage.width, stage.outputs, stride, groups, 1.0 / static_cast<double>(total)});
    }
  }
  return b.finish({{"output", classifier(b, t)}});
}

}  // namespace

ir::Graph build_resnet50(const ModelConfig& config) {
  return torchvision_resnet(config, {{3, 64, 256, 1}, {4, 128, 512, 2}, {6, 256, 1024, 2}, {3, 512, 2048, 2}},
                            bottleneck, 1);
}

ir::Graph build_resnext50(const ModelConfig& config) {
  // 32 groups of 4 channels at the first stage: each stage's branch is twice ResNet-50's width.
  return torchvision_resnet(config,
                            {{3, 128, 256, 1}, {4, 256, 512, 2}, {6, 512, 1024, 2}, {3, 1024, 2048, 2}},
                            bottleneck, 32);
}

ir::Graph build_resnet18(const ModelConfig& config) {
  return torchvision_resnet(config, {{2, 64, 64, 1}, {2, 128, 128, 2}, {2, 256, 256, 2}, {2, 512, 512, 2}},
                            basic_block, 1);
}

ir::Graph build_resnet(const ModelConfig& config) {
  constexpr int64_t kChannels = 256;
  ModelBuilder b(config);
  const int64_t size = or_default(config.image_size, 14);
  const int64_t blocks = or_default(config.blocks, 8);
  ir::ValueId t = b.input("input", {config.batch, kChannels, size, size});
  const Block bottleneck_block{kChannels / 4, kChannels, 1, 1, 1.0 / static_cast<double>(blocks)};
  for (int64_t i = 0; i < blocks; ++i) {
    t = config.bottleneck ? bottleneck(b, t, bottleneck_block) : projected_block(b, t, kChannels);
  }
  return b.finish({{"output", t}});
}

}  // namespace graphsub::models

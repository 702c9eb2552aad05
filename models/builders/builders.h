// One builder per benchmark model, listed in models.cc; each resolves its own default sizes.
#pragma once

#include "ir/graph.h"
#include "models/builders/models.h"

namespace graphsub::models {

/// ResNet-50: torchvision's resnet50 (bottleneck blocks [3, 4, 6, 3], stride on the 3x3).
ir::Graph build_resnet50(const ModelConfig& config);
/// ResNeXt-50 32x4d: torchvision's resnext50_32x4d.
ir::Graph build_resnext50(const ModelConfig& config);
/// ResNet-18: torchvision's resnet18 (basic blocks [2, 2, 2, 2]).
ir::Graph build_resnet18(const ModelConfig& config);
/// OCGGS's ResNet: `blocks` residual blocks at 256 channels, no stem and no head.
ir::Graph build_resnet(const ModelConfig& config);

/// Inception-v3: torchvision's inception_v3 in inference (no auxiliary head).
ir::Graph build_inception_v3(const ModelConfig& config);
/// Inception-v3's last module type (Mixed_7b), alone: MetaFlow Fig. 6a.
ir::Graph build_inception_e(const ModelConfig& config);

/// SqueezeNet 1.1: torchvision's squeezenet1_1.
ir::Graph build_squeezenet(const ModelConfig& config);
/// AlexNet: torchvision's alexnet.
ir::Graph build_alexnet(const ModelConfig& config);
/// VGG-16: torchvision's vgg16 (configuration D, no BatchNormalization).
ir::Graph build_vgg16(const ModelConfig& config);

/// NasNet-A as TASO's examples/nasnet_a.py builds it (with OCGGS's image stem).
ir::Graph build_nasnet_a(const ModelConfig& config);

/// NasRNN: TASO's examples/nasrnn.py, unrolled.
ir::Graph build_nasrnn(const ModelConfig& config);
/// SRU: OCGGS's examples/sru.py, unrolled.
ir::Graph build_sru(const ModelConfig& config);

/// BERT's encoder stack (BERT-base by default).
ir::Graph build_bert(const ModelConfig& config);

}  // namespace graphsub::models

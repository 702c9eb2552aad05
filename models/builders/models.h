// The benchmark model suite: the networks the MetaFlow, TASO and OCGGS papers evaluate, built as
// ir::Graph with seeded random weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub::models {

/// Sizes and options of a model. A zero size means the model's default (models/README.md lists
/// them); a model ignores the fields it has no use for.
struct ModelConfig {
  int64_t batch = 1;       ///< N of every input.
  int64_t image_size = 0;  ///< CNNs: input height and width (inception_e, resnet: of the feature map).
  int64_t seq_len = 0;     ///< bert: tokens; nasrnn, sru: unrolled time steps.
  int64_t blocks = 0;      ///< resnet: residual blocks; bert: encoder layers.
  int64_t hidden = 0;      ///< bert: hidden size; nasrnn, sru: state size.
  int64_t heads = 0;       ///< bert: attention heads (default hidden / 64).
  bool bottleneck = false;  ///< resnet: bottleneck blocks (1x1, 3x3, 1x1) instead of basic blocks.
  /// CNNs whose definition normalizes: a BatchNormalization after each Conv, as PyTorch exports
  /// them. Off: convolutions carry a bias instead, as in the papers' TASO graphs.
  bool batch_norm = true;
  uint32_t seed = 1;  ///< Seed of the weights (std::mt19937).
};

/// The model names, in a stable order.
std::vector<std::string> model_names();

/// One line saying what the model is and where its definition comes from.
/// Throws graphsub::Error for an unknown name.
std::string model_description(const std::string& name);

/// The smallest sizes (image size, sequence length) at which the model keeps its default topology:
/// what tests run on the reference executor in seconds. Throws graphsub::Error for an unknown name.
ModelConfig small_config(const std::string& name);

/// Builds the model: float32, named inputs and outputs, canonical attributes and inferred shapes on
/// every node, weights drawn from `config.seed` and scaled so activations stay O(1). Throws
/// graphsub::Error for an unknown name (listing the names) or sizes the model cannot take.
ir::Graph build_model(const std::string& name, const ModelConfig& config = {});

}  // namespace graphsub::models

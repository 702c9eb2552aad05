// The model list: one line per model (name, description, builder, small sizes).
#include "models/builders/models.h"

#include <algorithm>

#include "ir/error.h"
#include "models/builders/builders.h"

namespace graphsub::models {
namespace {

/// One model of the suite.
struct Entry {
  const char* name;
  const char* description;
  ir::Graph (*build)(const ModelConfig&);
  int64_t small_image_size;  ///< 0: the model has no image.
  int64_t small_seq_len;     ///< 0: the default is already small.
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = {
      {"resnet50", "ResNet-50 (torchvision), 224x224 image, 1000 classes", build_resnet50, 64, 0},
      {"resnext50", "ResNeXt-50 32x4d (torchvision): ResNet-50 with 32-group 3x3 convolutions", build_resnext50,
       64, 0},
      {"inception_v3", "Inception-v3 (torchvision, no auxiliary head), 299x299 image", build_inception_v3, 75, 0},
      {"squeezenet", "SqueezeNet 1.1 (torchvision): fire modules, no BatchNormalization", build_squeezenet, 64, 0},
      {"nasnet_a", "NasNet-A as TASO builds it: 3 stages of 5 normal + 1 reduction cell", build_nasnet_a, 64, 0},
      {"nasrnn", "NasRNN (TASO): 5 unrolled cells of 46 nodes, hidden 512", build_nasrnn, 0, 0},
      {"bert", "BERT encoder (BERT-base: 12 layers, hidden 768, 12 heads, seq 128)", build_bert, 0, 8},
      {"sru", "SRU as OCGGS writes it: 1 unrolled step of 11 nodes, hidden 1024", build_sru, 0, 0},
      {"alexnet", "AlexNet (torchvision), 224x224 image", build_alexnet, 64, 0},
      {"vgg16", "VGG-16 (torchvision, configuration D), 224x224 image", build_vgg16, 32, 0},
      {"inception_e", "Inception-v3's last module (Mixed_7b) alone: MetaFlow Fig. 6a, 1280x8x8 input",
       build_inception_e, 4, 0},
      {"resnet18", "ResNet-18 (torchvision), 224x224 image", build_resnet18, 64, 0},
      {"resnet", "OCGGS's ResNet: N residual blocks (default 8) at 256x14x14, no stem or head", build_resnet, 4, 0},
  };
  return list;
}

std::string joined_names() {
  std::string names;
  for (const Entry& entry : entries()) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

const Entry& entry_of(const std::string& name) {
  const auto& list = entries();
  auto found = std::find_if(list.begin(), list.end(), [&](const Entry& entry) { return name == entry.name; });
  if (found == list.end()) throw Error("unknown model '" + name + "'; the models are: " + joined_names());
  return *found;
}

/// Rejects negative sizes (zero means the default).
void check_config(const ModelConfig& config) {
  if (config.batch < 1) throw Error("the batch size must be at least 1");
  for (int64_t size : {config.image_size, config.seq_len, config.blocks, config.hidden, config.heads}) {
    if (size < 0) throw Error("sizes must not be negative (0 means the model's default)");
  }
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Entry& entry : entries()) names.emplace_back(entry.name);
  return names;
}

std::string model_description(const std::string& name) { return entry_of(name).description; }

ModelConfig small_config(const std::string& name) {
  const Entry& entry = entry_of(name);
  ModelConfig config;
  config.image_size = entry.small_image_size;
  config.seq_len = entry.small_seq_len;
  return config;
}

ir::Graph build_model(const std::string& name, const ModelConfig& config) {
  const Entry& entry = entry_of(name);
  check_config(config);
  try {
    ir::Graph graph = entry.build(config);
    graph.set_graph_name(name);
    return graph;
  } catch (const Error& e) {
    throw Error("cannot build " + name + " at these sizes: " + e.what());
  }
}

}  // namespace graphsub::models

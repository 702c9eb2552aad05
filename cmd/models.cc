// `graphsub models`: list the benchmark models, or write them as ONNX files.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cmd/commands.h"
#include "models/builders/models.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::cmd {
namespace {

/// Options of `models`.
struct ModelsOptions {
  std::string write_dir;            ///< Empty: list instead of writing.
  std::vector<std::string> names;   ///< Empty: every model.
  models::ModelConfig config;
};

/// Node counts do not depend on the image size or sequence length, so the list builds each model
/// at its small sizes unless sizes were given.
models::ModelConfig listing_config(const std::string& name, models::ModelConfig config) {
  const models::ModelConfig small = models::small_config(name);
  if (config.image_size == 0) config.image_size = small.image_size;
  if (config.seq_len == 0) config.seq_len = small.seq_len;
  return config;
}

void list_models(const ModelsOptions& options) {
  std::printf("%-14s %6s  %s\n", "model", "nodes", "description");
  for (const std::string& name : options.names) {
    const ir::Graph graph = models::build_model(name, listing_config(name, options.config));
    std::printf("%-14s %6zu  %s\n", name.c_str(), graph.node_count(), models::model_description(name).c_str());
  }
}

void write_models(const ModelsOptions& options) {
  std::filesystem::create_directories(options.write_dir);
  for (const std::string& name : options.names) {
    const std::string path = (std::filesystem::path(options.write_dir) / (name + ".onnx")).string();
    const ir::Graph graph = models::build_model(name, options.config);
    onnx_io::export_model(graph, path);
    std::printf("wrote %s (%zu nodes)\n", path.c_str(), graph.node_count());
  }
}

void run_models(ModelsOptions options) {
  if (options.names.empty()) options.names = models::model_names();
  for (const std::string& name : options.names) models::model_description(name);  // Unknown names fail first.
  if (options.write_dir.empty()) {
    list_models(options);
  } else {
    write_models(options);
  }
}

}  // namespace

Command setup_models(CLI::App& app) {
  auto options = std::make_shared<ModelsOptions>();
  models::ModelConfig& config = options->config;
  CLI::App* sub = app.add_subcommand("models", "List the benchmark models, or write them as ONNX files");
  sub->add_option("names", options->names, "Models to list or write (default: all)");
  sub->add_option("--write", options->write_dir, "Write DIR/NAME.onnx for each model")->type_name("DIR");
  sub->add_option("--batch", config.batch, "Batch size")->capture_default_str();
  sub->add_option("--image-size", config.image_size, "Image height and width (default: the model's)");
  sub->add_option("--seq-len", config.seq_len, "bert: tokens; nasrnn, sru: time steps (default: the model's)");
  sub->add_option("--blocks", config.blocks, "resnet: residual blocks; bert: layers (default: the model's)");
  sub->add_option("--hidden", config.hidden, "bert, nasrnn, sru: hidden size (default: the model's)");
  sub->add_option("--heads", config.heads, "bert: attention heads (default: hidden / 64)");
  sub->add_flag("--bottleneck", config.bottleneck, "resnet: bottleneck blocks instead of basic blocks");
  sub->add_flag_callback("--no-batch-norm", [options] { options->config.batch_norm = false; },
                         "CNNs: a bias on each Conv instead of a BatchNormalization after it");
  sub->add_option("--seed", config.seed, "Seed of the random weights")->capture_default_str();
  return {sub, [options] { run_models(*options); }};
}

}  // namespace graphsub::cmd

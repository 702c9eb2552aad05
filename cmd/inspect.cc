// `graphsub inspect`: the operators of a model, which of them graphsub models, FLOPs and weights.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "ir/graph.h"
#include "onnx_io/onnx_io.h"
#include "ops/registry.h"

namespace graphsub::cmd {
namespace {

/// Options of `inspect`.
struct InspectOptions {
  std::string input;
  bool json = false;
};

/// What inspect reports about a graph.
struct Summary {
  std::map<std::string, std::pair<int, bool>> histogram;  ///< op → (count, modelled)
  double flops = 0;
  double weight_bytes = 0;
  std::size_t weights = 0;
};

std::string op_label(const ir::Node& node) {
  return node.op == ir::OpKind::kOpaque ? node.opaque->op_type : ops::kind_name(node.op);
}

double node_flops(const ir::Graph& graph, const ir::Node& node) {
  if (node.op == ir::OpKind::kOpaque) return 0;
  std::vector<ir::TensorType> inputs, outputs;
  for (ir::ValueId id : node.inputs) {
    inputs.push_back(id == ir::kNoValue ? ir::TensorType{} : graph.value(id).type);
  }
  for (ir::ValueId id : node.outputs) outputs.push_back(graph.value(id).type);
  return ops::op_def(node.op).features(node, inputs, outputs).flops;
}

Summary summarize(const ir::Graph& graph) {
  Summary summary;
  std::vector<char> seen(graph.value_capacity(), 0);
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    auto& entry = summary.histogram[op_label(node)];
    entry.first += 1;
    entry.second = node.op != ir::OpKind::kOpaque;
    summary.flops += node_flops(graph, node);
    for (ir::ValueId input : node.inputs) {
      if (input == ir::kNoValue || seen[input] || !graph.value(input).data) continue;
      seen[input] = 1;
      summary.weights += 1;
      summary.weight_bytes += static_cast<double>(graph.value(input).data->byte_size());
    }
  }
  return summary;
}

nlohmann::json values_json(const ir::Graph& graph, const std::vector<ir::ValueId>& ids,
                           const std::vector<std::string>& names) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.push_back({{"name", names[i]}, {"type", ir::to_string(graph.value(ids[i]).type)}});
  }
  return out;
}

nlohmann::json summary_json(const ir::Graph& graph, const Summary& summary,
                            const onnx_io::ImportStats& stats) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [op, entry] : summary.histogram) {
    ops.push_back({{"op", op}, {"count", entry.first}, {"modelled", entry.second}});
  }
  std::vector<std::string> input_names;
  for (ir::ValueId id : graph.inputs()) input_names.push_back(graph.value(id).name);
  nlohmann::json opsets = nlohmann::json::object();
  if (graph.model_info()) {
    for (const auto& [domain, version] : graph.model_info()->opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  }
  return {{"opset", stats.opset},
          {"opsets", opsets},
          {"opaque_forms", stats.opaque_forms},
          {"inference_warning", stats.inference_error},
          {"nodes", graph.node_count()},
          {"modelled_nodes", stats.modelled_nodes},
          {"opaque_nodes", stats.opaque_nodes},
          {"opaque_reasons", stats.opaque_reasons},
          {"ops", ops},
          {"flops", summary.flops},
          {"weights", summary.weights},
          {"weight_bytes", summary.weight_bytes},
          {"inputs", values_json(graph, graph.inputs(), input_names)},
          {"outputs", values_json(graph, graph.outputs(), graph.output_names())}};
}

void print_text(const nlohmann::json& info) {
  std::printf("opset %lld, %zu nodes: %zu modelled, %zu opaque\n",
              static_cast<long long>(info["opset"].get<int64_t>()), info["nodes"].get<std::size_t>(),
              info["modelled_nodes"].get<std::size_t>(), info["opaque_nodes"].get<std::size_t>());
  std::string opsets;
  for (const auto& [domain, version] : info["opsets"].items()) {
    opsets += (opsets.empty() ? "" : ", ") + domain + " " + std::to_string(version.get<int64_t>());
  }
  std::printf("opsets: %s\n", opsets.empty() ? "none" : opsets.c_str());
  for (const char* side : {"inputs", "outputs"}) {
    for (const auto& value : info[side]) {
      std::printf("%-7s %s: %s\n", side, value["name"].get<std::string>().c_str(),
                  value["type"].get<std::string>().c_str());
    }
  }
  std::printf("FLOPs: %.4g (modelled ops; symbolic dims counted as 1)\n", info["flops"].get<double>());
  std::printf("weights: %zu tensors, %.4g MB\n", info["weights"].get<std::size_t>(),
              info["weight_bytes"].get<double>() / 1e6);
  std::printf("operators:\n");
  for (const auto& op : info["ops"]) {
    std::printf("  %-24s %6d  %s\n", op["op"].get<std::string>().c_str(), op["count"].get<int>(),
                op["modelled"].get<bool>() ? "modelled" : "opaque");
  }
  for (const auto& [op, reason] : info["opaque_reasons"].items()) {
    std::string form;
    if (info["opaque_forms"].contains(op)) form = " (its opset-" + std::to_string(info["opaque_forms"][op].get<int>()) + " form)";
    std::printf("  kept opaque: %s%s: %s\n", op.c_str(), form.c_str(), reason.get<std::string>().c_str());
  }
}

void run_inspect(const InspectOptions& options) {
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(options.input, {}, &stats);
  nlohmann::json info = summary_json(graph, summarize(graph), stats);
  if (options.json) {
    std::cout << info.dump(2) << "\n";
  } else {
    print_text(info);
  }
}

}  // namespace

Command setup_inspect(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Show the operators, FLOPs and weights of a model");
  sub->add_option("input", options->input, "ONNX model")->required();
  sub->add_flag("--json", options->json, "Print JSON instead of text");
  return {sub, [options] { run_inspect(*options); }};
}

}  // namespace graphsub::cmd

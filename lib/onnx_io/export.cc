// export_model: fold, write, check, and save an IR graph as ONNX.
#include <filesystem>
#include <optional>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/export_plan.h"
#include "onnx_io/model_file.h"
#include "onnx_io/model_writer.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::onnx_io {
namespace {

/// The lent initializers of SharedWeights' size, pointed at their place in its file, their
/// bytes taken out of the model while this lives and put back after (the DataLoan returns them).
class SharedPlacement {
 public:
  /// `hashes[i]` is the content hash of `lent[i]`'s tensor (0: too small to share).
  SharedPlacement(onnx::ModelProto& model, const std::vector<std::pair<int, ir::TensorPtr>>& lent,
                  const std::vector<uint64_t>& hashes, SharedWeights& shared)
      : graph_(*model.mutable_graph()) {
    try {
      for (std::size_t i = 0; i < lent.size(); ++i) {
        if (hashes[i] == 0) continue;
        onnx::TensorProto& tensor = *graph_.mutable_initializer(lent[i].first);
        const SharedWeights::Place place = shared.place(lent[i].second, hashes[i], tensor.raw_data());
        moved_.emplace_back(&tensor, std::string());
        moved_.back().second.swap(*tensor.mutable_raw_data());
        add_external_data_entry(tensor, "location", shared.file_name());
        add_external_data_entry(tensor, "offset", std::to_string(place.offset));
        add_external_data_entry(tensor, "length", std::to_string(place.length));
        tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      }
    } catch (...) {
      restore();  // the bytes go back to the model, and from it to their tensors
      throw;
    }
  }
  SharedPlacement(const SharedPlacement&) = delete;
  SharedPlacement& operator=(const SharedPlacement&) = delete;
  ~SharedPlacement() { restore(); }

 private:
  void restore() { put_back_raw_data(moved_); }

  onnx::GraphProto& graph_;
  std::vector<std::pair<onnx::TensorProto*, std::string>> moved_;
};

/// The content hash of each lent tensor SharedWeights takes (0 for the others), read before the
/// DataLoan lends their bytes out.
std::vector<uint64_t> shared_hashes(const std::vector<std::pair<int, ir::TensorPtr>>& lent,
                                    const SharedWeights& shared) {
  std::vector<uint64_t> hashes;
  for (const auto& entry : lent) {
    const ir::Tensor& tensor = *entry.second;
    const bool takes = tensor.dtype() != ir::DataType::kString && tensor.byte_size() >= shared.min_bytes();
    hashes.push_back(takes ? tensor.content_hash() | 1 : 0);
  }
  return hashes;
}

}  // namespace

void export_model(const ir::Graph& graph, const std::string& path, const ExportOptions& options) {
  const ExportPlan plan = plan_export(graph);
  ModelWriter writer(graph, plan);
  onnx::ModelProto model = writer.write();
  std::vector<uint64_t> hashes;
  if (options.shared_weights) {
    namespace fs = std::filesystem;
    if (fs::weakly_canonical(fs::absolute(path).parent_path()) !=
        fs::weakly_canonical(fs::absolute(options.shared_weights->folder()))) {
      throw Error("internal error: '" + path + "' is not in the folder of its shared weights");
    }
    hashes = shared_hashes(writer.lent(), *options.shared_weights);
  }
  const DataLoan loan(model, writer.lent());
  try {
    // ONNX's strict inference has bugs of its own (STFT with a constant frame_length, 1.12 to
    // 1.23): its failure is a warning, as on import; the checker's is an internal error.
    std::string inference_error;
    checked_copy(model, &inference_error);
    if (!inference_error.empty()) {
      logger("onnx_io")->warn("{}: ONNX's strict shape inference fails on the written model ({})", path,
                              inference_error);
    }
  } catch (const Error& error) {
    throw Error(std::string("internal error: the exported model ") + error.what());
  }
  std::optional<SharedPlacement> placed;
  if (options.shared_weights) placed.emplace(model, writer.lent(), hashes, *options.shared_weights);
  write_model_file(model, path, options.shared_weights ? 0 : options.external_data_threshold);
}

}  // namespace graphsub::onnx_io

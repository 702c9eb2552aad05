// export_model: fold, write, check, and save an IR graph as ONNX.
#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/export_plan.h"
#include "onnx_io/model_file.h"
#include "onnx_io/model_writer.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::onnx_io {

void export_model(const ir::Graph& graph, const std::string& path, const ExportOptions& options) {
  const ExportPlan plan = plan_export(graph);
  ModelWriter writer(graph, plan);
  onnx::ModelProto model = writer.write();
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
  write_model_file(model, path, options.external_data_threshold);
}

}  // namespace graphsub::onnx_io

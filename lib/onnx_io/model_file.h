// Reading, checking and atomically writing ONNX protobuf files.
#pragma once

#include <google/protobuf/message_lite.h>
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>

namespace graphsub::onnx_io {

/// Parses a whole file into `message`, with protobuf's total-size limit raised to its 2 GB
/// maximum. Throws graphsub::Error (a message without the path) when the file is missing,
/// unreadable, or does not parse; `what` names the expected content ("an ONNX model").
void parse_file(const std::string& path, google::protobuf::MessageLite& message, const std::string& what);

/// The message serialized deterministically (the same message always gives the same bytes).
std::string serialize_to_string(const google::protobuf::MessageLite& message);

/// Runs the ONNX checker and strict shape inference (node errors thrown; element types outside an
/// operator's type constraints accepted, as runtimes accept them) on a copy of `model`, whose
/// tensor data must be in memory, and returns the copy with the inferred value_info. The copy borrows the
/// initializers for the check (no weight is copied) and gives them back, so the returned copy has none and
/// `model` is left as it was. Throws graphsub::Error "fails the ONNX checker: ..." or "fails ONNX shape
/// inference: ..." on one line.
onnx::ModelProto checked_copy(onnx::ModelProto& model);

/// Writes `model` to `path` through a temporary file in the same folder that is renamed over
/// `path`, so a failure leaves no partial output. Main-graph initializers of more than
/// `threshold` bytes (0: none, unless the model would pass protobuf's 2 GB limit) are moved to
/// "<path>.data" and referenced as external data. Leaves the model as it was. Throws
/// graphsub::Error.
void write_model_file(onnx::ModelProto& model, const std::string& path, std::size_t threshold);

}  // namespace graphsub::onnx_io

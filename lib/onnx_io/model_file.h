// Reading, checking and atomically writing ONNX protobuf files.
#pragma once

#include <google/protobuf/message_lite.h>
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace graphsub::onnx_io {

/// Adds one key/value pair ("location", "offset", "length") to a tensor's external_data.
void add_external_data_entry(onnx::TensorProto& tensor, const std::string& key, const std::string& value);

/// Puts raw data taken out for an external-data write back into its tensors (each swapped back,
/// its external_data and data_location cleared) and empties `moved`.
void put_back_raw_data(std::vector<std::pair<onnx::TensorProto*, std::string>>& moved);

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
/// `model` is left as it was. Throws graphsub::Error "fails the ONNX checker: ..." on one line, and
/// "fails ONNX shape inference: ..." unless `inference_error` is given and only nodes of
/// operators graphsub does not model failed: then the failure is stored there (one line) and the
/// copy carries the types that lenient inference (node errors skipped) could still infer. ONNX's
/// inference has bugs of its own (1.23 fails on MeanVarianceNormalization with its default axes,
/// and on STFT with a constant frame_length, models onnxruntime runs), so a model the checker
/// accepts is not refused for a node that graphsub keeps opaque anyway; a failure in a modelled
/// operator (an Add of incompatible shapes) is still an error.
onnx::ModelProto checked_copy(onnx::ModelProto& model, std::string* inference_error = nullptr);

/// Writes `model` to `path` through a temporary file in the same folder that is renamed over
/// `path`, so a failure leaves no partial output. Main-graph initializers of more than
/// `threshold` bytes (0: none, unless the model would pass protobuf's 2 GB limit) are moved to
/// "<path>.data" and referenced as external data. Leaves the model as it was. Throws
/// graphsub::Error.
void write_model_file(onnx::ModelProto& model, const std::string& path, std::size_t threshold);

}  // namespace graphsub::onnx_io

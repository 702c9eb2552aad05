// Conversion between ONNX TensorProto and ir::Tensor, and loading of external tensor data.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

#include "ir/tensor.h"

namespace graphsub::onnx_io {

/// Converts a TensorProto whose data is in memory (raw_data or the typed fields) to a tensor.
/// Throws graphsub::Error naming the tensor when its dims, type or data size are invalid.
ir::Tensor tensor_from_proto(const onnx::TensorProto& proto);

/// Converts a sparse tensor (values and their indices, linear or per axis) to a dense tensor
/// with zeros elsewhere. Throws graphsub::Error for invalid indices or a string tensor.
ir::Tensor tensor_from_sparse(const onnx::SparseTensorProto& sparse);

/// Writes `tensor` into `proto`: dims, data type, and raw_data (string_data for strings).
/// The name is left to the caller.
void tensor_to_proto(const ir::Tensor& tensor, onnx::TensorProto& proto);

/// Writes dims and data type only.
void tensor_header_to_proto(const ir::Tensor& tensor, onnx::TensorProto& proto);

/// Replaces an EXTERNAL tensor's reference by its bytes, read from the file named by its
/// `location` (relative to `dir`), `offset` and `length`. Does nothing for in-memory tensors.
/// Throws graphsub::Error when the file is missing or too short. Returns 1 when it loaded, else 0.
int load_external_data(onnx::TensorProto& proto, const std::filesystem::path& dir);

/// Loads the external data of every tensor of a graph: initializers, sparse initializers and
/// tensor attributes, in subgraphs too. Returns how many tensors it loaded.
int load_external_data(onnx::GraphProto& graph, const std::filesystem::path& dir);

/// Frees the memory held by a tensor's data fields (once it has been converted).
void release_data(onnx::TensorProto& proto);

/// tensor_from_proto, then release_data, where raw_data moves into the tensor without a copy: a
/// model's weights are held once while it is read. References into `proto` (its name() too) do
/// not survive the call.
ir::Tensor take_tensor_from_proto(onnx::TensorProto& proto);

}  // namespace graphsub::onnx_io

// Conversion between ONNX AttributeProto and ir::AttrValue.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "ir/attributes.h"

namespace graphsub::onnx_io {

/// The IR value of an ONNX attribute; nullopt for the kinds the IR does not model (graphs,
/// sparse tensors, type protos, undefined). Throws graphsub::Error for an invalid tensor.
std::optional<ir::AttrValue> attr_from_proto(const onnx::AttributeProto& proto);

/// The attribute `name` holding `value`, converted to `type` (the type the operator's schema
/// declares) where the value allows it: a one-element list to a scalar, a scalar to a list, an
/// int to a float. UNDEFINED keeps the value's own type. Throws std::invalid_argument when the
/// value cannot take that type.
onnx::AttributeProto attr_to_proto(const std::string& name, const ir::AttrValue& value,
                                   onnx::AttributeProto::AttributeType type);

}  // namespace graphsub::onnx_io

// AttributeProto <-> AttrValue, typed by the operator schema on export.
#include "onnx_io/attribute_proto.h"

#include <stdexcept>

#include "onnx_io/tensor_proto.h"

namespace graphsub::onnx_io {
namespace {

using onnx::AttributeProto;

std::optional<int64_t> as_int(const ir::AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  const auto* list = std::get_if<std::vector<int64_t>>(&value);
  if (list && list->size() == 1) return list->front();
  return std::nullopt;
}

std::optional<float> as_float(const ir::AttrValue& value) {
  if (const auto* f = std::get_if<float>(&value)) return *f;
  const auto* list = std::get_if<std::vector<float>>(&value);
  if (list && list->size() == 1) return list->front();
  if (auto i = as_int(value)) return static_cast<float>(*i);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> as_ints(const ir::AttrValue& value) {
  if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) return *list;
  if (const auto* i = std::get_if<int64_t>(&value)) return std::vector<int64_t>{*i};
  return std::nullopt;
}

std::optional<std::vector<float>> as_floats(const ir::AttrValue& value) {
  if (const auto* list = std::get_if<std::vector<float>>(&value)) return *list;
  if (const auto* f = std::get_if<float>(&value)) return std::vector<float>{*f};
  return std::nullopt;
}

std::optional<std::vector<std::string>> as_strings(const ir::AttrValue& value) {
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) return *list;
  if (const auto* s = std::get_if<std::string>(&value)) return std::vector<std::string>{*s};
  return std::nullopt;
}

AttributeProto::AttributeType natural_type(const ir::AttrValue& value) {
  constexpr AttributeProto::AttributeType kByIndex[] = {
      AttributeProto::INT,    AttributeProto::FLOAT,   AttributeProto::STRING, AttributeProto::INTS,
      AttributeProto::FLOATS, AttributeProto::STRINGS, AttributeProto::TENSOR};
  return kByIndex[value.index()];
}

std::optional<std::string> as_string(const ir::AttrValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::nullopt;
}

std::optional<ir::TensorPtr> as_tensor(const ir::AttrValue& value) {
  const auto* tensor = std::get_if<ir::TensorPtr>(&value);
  if (tensor && *tensor) return *tensor;
  return std::nullopt;
}

/// Calls `set` with the converted value if there is one; true when there was.
template <class T, class Set>
bool set_if(const std::optional<T>& converted, Set&& set) {
  if (converted) set(*converted);
  return converted.has_value();
}

template <class Field, class List>
void assign(Field* field, const List& list) {
  *field = {list.begin(), list.end()};
}

/// Sets the field of `type` in `proto`; false when the value does not convert.
bool set_value(AttributeProto& proto, const ir::AttrValue& value, AttributeProto::AttributeType type) {
  switch (type) {
    case AttributeProto::INT:
      return set_if(as_int(value), [&](int64_t i) { proto.set_i(i); });
    case AttributeProto::FLOAT:
      return set_if(as_float(value), [&](float f) { proto.set_f(f); });
    case AttributeProto::STRING:
      return set_if(as_string(value), [&](const std::string& s) { proto.set_s(s); });
    case AttributeProto::INTS:
      return set_if(as_ints(value), [&](const auto& list) { assign(proto.mutable_ints(), list); });
    case AttributeProto::FLOATS:
      return set_if(as_floats(value), [&](const auto& list) { assign(proto.mutable_floats(), list); });
    case AttributeProto::STRINGS:
      return set_if(as_strings(value), [&](const auto& list) { assign(proto.mutable_strings(), list); });
    case AttributeProto::TENSOR:
      return set_if(as_tensor(value),
                    [&](const ir::TensorPtr& t) { tensor_to_proto(*t, *proto.mutable_t()); });
    default:
      return false;
  }
}

template <class Field>
auto list_of(const Field& field) {
  return std::vector<typename Field::value_type>(field.begin(), field.end());
}

}  // namespace

std::optional<ir::AttrValue> attr_from_proto(const AttributeProto& proto) {
  switch (proto.type()) {
    case AttributeProto::INT:
      return ir::AttrValue{static_cast<int64_t>(proto.i())};
    case AttributeProto::FLOAT:
      return ir::AttrValue{proto.f()};
    case AttributeProto::STRING:
      return ir::AttrValue{proto.s()};
    case AttributeProto::INTS:
      return ir::AttrValue{list_of(proto.ints())};
    case AttributeProto::FLOATS:
      return ir::AttrValue{list_of(proto.floats())};
    case AttributeProto::STRINGS:
      return ir::AttrValue{list_of(proto.strings())};
    case AttributeProto::TENSOR:
      return ir::AttrValue{ir::share(tensor_from_proto(proto.t()))};
    default:
      return std::nullopt;
  }
}

AttributeProto attr_to_proto(const std::string& name, const ir::AttrValue& value,
                             AttributeProto::AttributeType type) {
  if (type == AttributeProto::UNDEFINED) type = natural_type(value);
  AttributeProto proto;
  proto.set_name(name);
  proto.set_type(type);
  if (!set_value(proto, value, type)) {
    throw std::invalid_argument("attribute '" + name + "' holds " + ir::to_string(value) +
                                ", which is not a " + AttributeProto::AttributeType_Name(type));
  }
  return proto;
}

}  // namespace graphsub::onnx_io

// Reading attribute operands, at import (constants) and at run time (computed tensors).
#include "ops/operands.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "ir/error.h"

namespace graphsub::ops {

std::size_t first_operand_slot(const OpDef& def) {
  std::size_t first = SIZE_MAX;
  for (const AttrInput& entry : def.attr_inputs) {
    first = std::min(first, static_cast<std::size_t>(entry.input_index));
  }
  return first;
}

bool is_runtime_form(const OpDef& def, std::size_t num_inputs) {
  return num_inputs > first_operand_slot(def);
}

std::string read_operand(const ir::Tensor& data, const AttrInput& entry, ir::Attributes& attrs) {
  try {
    if (!entry.as_floats) {
      attrs.set(entry.attr, data.to_int64s());
      return {};
    }
    std::vector<float> values(static_cast<std::size_t>(data.num_elements()));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<float>(data.element_as_double(static_cast<int64_t>(i)));
    }
    attrs.set(entry.attr, std::move(values));
    return {};
  } catch (const std::exception& error) {
    return std::string("operand '") + entry.attr + "' cannot be read: " + error.what();
  }
}

BoundNode bind_operands(const OpDef& def, const ir::Node& node,
                        const std::vector<const ir::Tensor*>& inputs) {
  BoundNode bound{node, {}};
  std::vector<char> taken(inputs.size(), 0);
  for (const AttrInput& entry : def.attr_inputs) {
    const auto index = static_cast<std::size_t>(entry.input_index);
    if (index >= inputs.size()) continue;
    taken[index] = 1;
    if (!inputs[index]) continue;
    std::string reason = read_operand(*inputs[index], entry, bound.node.attrs);
    if (!reason.empty()) throw Error("node '" + node.name + "' (" + def.name + "): " + reason);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!taken[i]) bound.data_inputs.push_back(inputs[i]);
  }
  return bound;
}

}  // namespace graphsub::ops

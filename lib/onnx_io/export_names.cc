// Name tables for export.
#include "onnx_io/export_names.h"

namespace graphsub::onnx_io {

bool NameTable::claim(const std::string& name) { return !name.empty() && used_.insert(name).second; }

std::string NameTable::fresh(const std::string& prefix) {
  int64_t& next = next_[prefix];
  while (true) {
    std::string name = prefix + "_" + std::to_string(next++);
    if (!reserved_.count(name) && claim(name)) return name;
  }
}

std::string NameTable::keep_or_fresh(const std::string& name, const std::string& prefix) {
  return claim(name) ? name : fresh(prefix);
}

const std::string& ExportNames::value(ir::ValueId id) const {
  static const std::string kNone;
  return id == ir::kNoValue ? kNone : by_value_.at(id);
}

std::string ExportNames::node(const std::string& name, const std::string& op_type) {
  return nodes_.keep_or_fresh(name, op_type);
}

}  // namespace graphsub::onnx_io

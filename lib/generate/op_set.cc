// The default universes of the rule generator.
#include "generate/op_set.h"

#include <algorithm>

#include "ir/error.h"

namespace graphsub::generate {
namespace {

using ir::OpKind;

OpChoice binary(std::string name, OpKind kind, bool commutative) {
  return OpChoice{std::move(name), kind, 2, 1, 0, 0, false, commutative};
}

OpChoice unary(std::string name, OpKind kind) { return OpChoice{std::move(name), kind, 1, 1, 0, 0, false, false}; }

OpChoice concat(int axis) { return OpChoice{"concat" + std::to_string(axis), OpKind::kConcat, 2, 1, axis, 0, false, false}; }

OpChoice split(int axis) { return OpChoice{"split" + std::to_string(axis), OpKind::kSplit, 1, 2, axis, 0, false, false}; }

OpChoice window(std::string name, OpKind kind, int kernel) {
  return OpChoice{std::move(name), kind, 1, 1, 0, kernel, false, false};
}

OpChoice conv(bool relu) { return OpChoice{relu ? "conv-relu" : "conv", OpKind::kConv, 2, 1, 0, 0, relu, false}; }

Universe matrix_universe() {
  const std::vector<int64_t> square{3, 3};
  return Universe{"matrix",
                  {{"a", square, Role::kActivation}, {"b", square, Role::kActivation}, {"c", square, Role::kActivation}},
                  {binary("add", OpKind::kAdd, true), binary("mul", OpKind::kMul, true),
                   binary("matmul", OpKind::kMatMul, false), unary("transpose", OpKind::kTranspose),
                   unary("relu", OpKind::kRelu), concat(0), concat(1), split(0), split(1)}};
}

Universe conv_universe() {
  const std::vector<int64_t> activation{1, 4, 4, 4};
  const std::vector<int64_t> kernel3{4, 4, 3, 3};
  return Universe{"conv",
                  {{"x", activation, Role::kActivation},
                   {"y", activation, Role::kActivation},
                   {"w1", kernel3, Role::kWeight},
                   {"w2", kernel3, Role::kWeight},
                   {"v", {4, 4, 1, 1}, Role::kWeight}},
                  {conv(false), conv(true), window("enlarge3", OpKind::kEnlarge, 3),
                   window("avgpool3", OpKind::kAveragePool, 3), window("maxpool3", OpKind::kMaxPool, 3),
                   binary("add", OpKind::kAdd, true), unary("relu", OpKind::kRelu), concat(0), concat(1),
                   split(0), split(1)}};
}

}  // namespace

std::vector<Universe> default_universes() { return {matrix_universe(), conv_universe()}; }

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const Universe& universe : default_universes()) {
    for (const OpChoice& op : universe.ops) names.push_back(universe.name + "." + op.name);
  }
  return names;
}

std::vector<Universe> select_universes(const std::vector<std::string>& names) {
  std::vector<Universe> universes = default_universes();
  if (names.empty()) return universes;
  const std::vector<std::string> known = op_names();
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw Error("unknown op '" + name + "' for --ops (known: universe.op, e.g. matrix.add, conv.conv)");
    }
  }
  std::vector<Universe> selected;
  for (Universe& universe : universes) {
    std::vector<OpChoice> kept;
    for (OpChoice& op : universe.ops) {
      if (std::find(names.begin(), names.end(), universe.name + "." + op.name) != names.end()) kept.push_back(op);
    }
    universe.ops = std::move(kept);
    if (!universe.ops.empty()) selected.push_back(std::move(universe));
  }
  return selected;
}

}  // namespace graphsub::generate

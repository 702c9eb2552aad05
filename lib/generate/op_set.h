// What the rule generator enumerates: operators with fixed parameters, and the input tensors of
// each universe (TASO Alg. 1's P and I).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_kind.h"

namespace graphsub::generate {

/// The role of a tensor in the conv universe: convolutions read an activation and a weight, and
/// element-wise ops, pooling and concatenation combine tensors of one role. The matrix universe
/// has activations only.
enum class Role : uint8_t { kActivation, kWeight };

/// One operator the enumerator may add: an op kind with its parameters fixed. TASO fixed the
/// parameters the same way (one kernel size, SAME padding, stride 1).
struct OpChoice {
  std::string name;   ///< As `--ops` names it: "add", "concat0", "conv3-relu", ...
  ir::OpKind kind;
  int arity = 1;
  int outputs = 1;
  int axis = 0;          ///< Concat and Split: the axis.
  int kernel = 0;        ///< Conv: the kernel size the weight must have; pooling: the window.
  bool relu = false;     ///< Conv: the fused relu activation.
  bool commutative = false;  ///< Inputs enumerated in one order only (TASO: no duplicated computation).
};

/// One input tensor of a universe.
struct InputSpec {
  std::string name;  ///< Its name in the rules written.
  std::vector<int64_t> dims;
  Role role = Role::kActivation;
};

/// A family of graphs enumerated together: ops over inputs of fixed shapes.
struct Universe {
  std::string name;
  std::vector<InputSpec> inputs;
  std::vector<OpChoice> ops;
};

/// The universes of the default operator set: "matrix" (element-wise arithmetic, matmul,
/// transpose, relu, concat and split over 3 x 3 matrices) and "conv" (convolution, enlarge,
/// pooling, add, relu, concat and split over NCHW activations and OIHW weights).
std::vector<Universe> default_universes();

/// The default universes restricted to the ops `names` lists (all when empty); a universe left
/// without ops is dropped. Throws graphsub::Error naming an unknown op.
std::vector<Universe> select_universes(const std::vector<std::string>& names);

/// Every op name `--ops` accepts, in universe order.
std::vector<std::string> op_names();

}  // namespace graphsub::generate

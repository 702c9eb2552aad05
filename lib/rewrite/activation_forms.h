// Chains of element-wise nodes that compute a hard sigmoid or hard swish, written as that one ONNX operator,
// and tanh GELUs written in the form onnxruntime fuses.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// What write_activations did.
struct ActivationStats {
  int hard_sigmoid = 0;  ///< Chains written as HardSigmoid (those of a hard swish then taken by a HardSwish).
  int hard_swish = 0;    ///< x * HardSigmoid(x) with HardSwish's constants written as HardSwish.
  int tanh_gelu = 0;     ///< Tanh GELUs written in the form onnxruntime fuses into FastGelu.

  int total() const { return hard_sigmoid + hard_swish + tanh_gelu; }
};

/// The graph with the element-wise chains that compute a hard sigmoid written as HardSigmoid, and
/// x times the hard sigmoid of x with HardSwish's constants written as HardSwish (opset 14 and
/// later; before, it stays HardSigmoid and Mul). The chains are the ones exporters write:
///
///   Mul(Clip(Add(x, s), 0, h), k)   with k·h = 1      ->   HardSigmoid(x) [alpha = k, beta = s·k]
///   Div(Clip(Add(x, s), 0, h), h)                     ->   HardSigmoid(x) [alpha = 1/h, beta = s/h]
///   Clip(Add(Mul(x, a), b), 0, 1)                     ->   HardSigmoid(x) [alpha = a, beta = b]
///   Mul(x, Clip(Add(x, s), 0, h)) · k or / h          ->   Mul(x, HardSigmoid(x))
///   Mul(x, HardSigmoid(x) [1/6, 1/2])                 ->   HardSwish(x)
///
/// Keras writes relu6(x + 3) / 6 for its hard sigmoid and hard swish (tf2onnx folds the division
/// into a product by 1/6), older Keras clip(0.2·x + 0.5, 0, 1), and YOLOv5's export-friendly
/// hardswish is x · hardtanh(x + 3, 0, 6) / 6. onnxruntime fuses HardSigmoid and HardSwish into
/// the convolution before them, but not these chains (Keras's MobileNetV3-Large: 262 nodes after
/// onnxruntime's own optimizations, 121 with the chains written as operators; README,
/// "Activations written as one operator"). s, h, k, a and b are one-element float weights, Add
/// and Mul in either operand order; every node of a chain but its last must be read by the next
/// alone (not a graph output), and a chain must keep x's type (the constants broadcast into it).
/// The HardSigmoid forms compute (x + s)·k as x·k + s·k: the same values up to rounding; the last
/// form is HardSwish's definition.
///
/// Last, a tanh GELU in the form torch's TorchScript exporter writes for gelu(approximate="tanh")
/// (Gemma's MLP; float32):
///
///   Mul(0.5, Mul(x, Add(1, Tanh(Mul(s, Add(x, Mul(a, x·x·x)))))))
///     ->  Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), a)), s)), 1))
///
/// with s = sqrt(2/pi) and a = 0.044715: the form onnxruntime's FastGeluFusion matches (GPT-2's
/// gelu_new is written so already), where the exported one stays ten element-wise nodes. The
/// same arithmetic but the cube, a Pow (onnxruntime's computes x·x·x alike), and the halving,
/// exact either way.
ir::Graph write_activations(const ir::Graph& graph, ActivationStats* stats = nullptr);

}  // namespace graphsub::rewrite

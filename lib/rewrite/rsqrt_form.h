// The reciprocal of a square root written as the division onnxruntime recognises in RMSNorm.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// The graph with each Reciprocal(Sqrt(v)) of float32 or float64 written as Div(1, Sqrt(v)).
/// PyTorch's dynamo exporter writes `torch.rsqrt` as Reciprocal(Sqrt), and an RMSNorm (LLaMA,
/// Qwen2, Mistral, T5: x · rsqrt(mean(x²) + ε) · w) then stays seven element-wise nodes in
/// onnxruntime, whose SimplifiedLayerNormalization fusion matches Div(1, Sqrt) and Div(x, Sqrt)
/// but not Reciprocal. The two compute the same value: IEEE division and onnxruntime's and
/// graphsub's Reciprocal both round 1/s correctly. `rewritten`, when given, receives the count.
ir::Graph write_rsqrt_as_division(const ir::Graph& graph, int* rewritten = nullptr);

}  // namespace graphsub::rewrite

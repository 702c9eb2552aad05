// Grouped-query attention without copies of its keys and values: the queries grouped instead.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// What group_repeated_heads changed.
struct GroupedAttentionStats {
  int repeats = 0;   ///< Repeated key or value tensors no longer built (an Expand copy each).
  int products = 0;  ///< Matrix products that read the shared heads in groups instead.
};

/// The graph with the head repetition of grouped-query attention (LLaMA, Qwen2, Mistral, Phi-3,
/// Gemma: `repeat_kv` in Hugging Face's code) replaced by a grouping of the heads that read it.
/// Exporters write repeat_kv as
///
///   E = Reshape(Expand(Unsqueeze(X, [2]), [B, KV, R, S, D]), [B, KV * R, S, D])
///
/// which copies each of the KV key or value heads of X [B, KV, S, D] R times on every run, and
/// then a product per query head, A [B, KV * R, M, K] times f(E), where f is a chain of
/// transposes that keep the batch and head axes and multiplications or divisions by one number
/// (the key's transpose and scale). Query head h reads the shared head h / R, so the R query heads
/// of a group can be one product with R * M rows:
///
///   Reshape(MatMul(Reshape(A, [B, KV, R * M, K]), f(X)), [B, KV * R, M, N])
///
/// Same products, same sums; no copy of X. Reshapes copy no data in a runtime. A scalar
/// multiplication of A is kept next to its product (so a runtime still fuses the scale into it).
/// The reshape targets use 0 only where it copies the same dim, and never -1: M comes from a graph
/// input's dims (or A's), so empty tensors reshape as before. A Shape of E that reads no head
/// count reads X instead. Rewritten only where every reader of E is one of these; elsewhere the
/// graph stays as it is.
ir::Graph group_repeated_heads(const ir::Graph& graph, GroupedAttentionStats* stats = nullptr);

}  // namespace graphsub::rewrite

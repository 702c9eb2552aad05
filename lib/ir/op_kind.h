// The identity of every operator graphsub models; facts about each one live in lib/ops/.
#pragma once

#include <cstdint>

namespace graphsub::ir {

/// Operator kinds of the IR. ONNX operators keep their ONNX names; Enlarge, SMul and the Const*
/// kinds are graphsub's own (TASO Table 1) and are folded or lowered on export. kOpaque is any
/// ONNX operator the optimizer does not model: it passes through untouched and blocks rules.
enum class OpKind : uint8_t {
  kOpaque,
  // Convolution and its helpers.
  kConv,
  kConvTranspose,
  kEnlarge,
  kAveragePool,
  kMaxPool,
  kGlobalAveragePool,
  kGlobalMaxPool,
  kBatchNormalization,
  // Matrix products.
  kMatMul,
  kGemm,
  // Element-wise binary (numpy broadcasting) and scalar multiply.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kMax,
  kMin,
  kPRelu,
  kSMul,
  // Variadic element-wise (multidirectional broadcasting).
  kSum,
  kMean,
  // Element-wise unary.
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kNeg,
  kAbs,
  kSqrt,
  kReciprocal,
  kErf,
  kFloor,
  kCeil,
  kSin,
  kCos,
  kSign,
  kIdentity,
  kLeakyRelu,
  kElu,
  kSoftplus,
  kHardSigmoid,
  kHardSwish,
  kClip,
  kGelu,
  // Data movement.
  kTranspose,
  kConcat,
  kSplit,
  kReshape,
  kFlatten,
  kSqueeze,
  kUnsqueeze,
  kSoftmax,
  kResize,
  // Shape computation and indexing (what exporters emit around reshapes and attention).
  kShape,
  kGather,
  kGatherElements,
  kGatherND,
  kScatterND,
  kCast,
  kSlice,
  kPad,
  kExpand,
  kConstantOfShape,
  kRange,
  kWhere,
  kTile,
  kDropout,
  // Reductions, comparisons and logic.
  kReduceMean,
  kReduceSum,
  kReduceMax,
  kReduceMin,
  kArgMax,
  kArgMin,
  kEqual,
  kLess,
  kGreater,
  kGreaterOrEqual,
  kLessOrEqual,
  kNot,
  kAnd,
  kOr,
  // Normalization.
  kLayerNormalization,
  // Recurrent networks.
  kLSTM,
  // TASO's constant tensors (no inputs; folded into initializers on export).
  kConstIdentityConv,
  kConstIdentityMatrix,
  kConstOnes,
  kConstPool,
  // Appended after the others, so that the numbers of the earlier kinds (which structural hashes,
  // hence the keys of committed cost caches, are built from) stay as they were.
  kEinsum,
  kIsNaN,
  kIsInf,
  kCount,  ///< Number of kinds; not an operator.
};

}  // namespace graphsub::ir

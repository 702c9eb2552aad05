// Row-major positions mapped into a strided operand: the indexing of broadcasts and reductions.
#pragma once

#include <cstdint>
#include <vector>

namespace graphsub::ops {

/// The offset, in an operand with per-axis `strides`, of the element at row-major position `flat`
/// of a tensor of `sizes`. A stride of 0 (see broadcast_strides) repeats the operand along that
/// axis when broadcasting, or folds the axis away when reducing.
int64_t strided_offset(int64_t flat, const std::vector<int64_t>& sizes,
                       const std::vector<int64_t>& strides);

}  // namespace graphsub::ops

// Row-major positions mapped into a strided operand.
#include "ops/strided_offset.h"

namespace graphsub::ops {

int64_t strided_offset(int64_t flat, const std::vector<int64_t>& sizes,
                       const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (std::size_t axis = sizes.size(); axis-- > 0 && flat > 0;) {
    offset += flat % sizes[axis] * strides[axis];
    flat /= sizes[axis];
  }
  return offset;
}

}  // namespace graphsub::ops

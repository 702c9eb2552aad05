// IEEE half-precision (float16) and bfloat16 conversions, exact where the format allows.
#pragma once

#include <cstdint>

namespace graphsub::ir {

/// The IEEE half-precision bits nearest to `value` (ties to even; overflow to infinity).
uint16_t float16_from_double(double value);

/// The value of IEEE half-precision bits (exact).
double float16_to_double(uint16_t bits);

/// The value of bfloat16 bits (exact: the upper half of a float32).
double bfloat16_to_double(uint16_t bits);

}  // namespace graphsub::ir

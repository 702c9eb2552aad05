// IEEE half-precision (float16) and bfloat16 conversions.
#include "ir/float16.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace graphsub::ir {
namespace {

constexpr uint16_t kHalfSign = 0x8000;
constexpr uint16_t kHalfInfinity = 0x7c00;
constexpr uint16_t kHalfNan = 0x7e00;
constexpr int kHalfMantissaBits = 10;
constexpr int kHalfExponentBias = 15;
/// Half of the gap above the largest half (65504): values from here on round to infinity.
constexpr double kHalfOverflow = 65520.0;
/// The smallest normal half, 2^-14; below it halves are multiples of 2^-24.
constexpr double kHalfMinNormal = 0x1p-14;
constexpr int kHalfSubnormalScale = 24;
/// The biased exponent of infinities and NaNs.
constexpr int kHalfSpecialExponent = 0x1f;

}  // namespace

uint16_t float16_from_double(double value) {
  const uint16_t sign = std::signbit(value) ? kHalfSign : 0;
  if (std::isnan(value)) return sign | kHalfNan;
  const double magnitude = std::fabs(value);
  if (magnitude >= kHalfOverflow) return sign | kHalfInfinity;
  if (magnitude < kHalfMinNormal) {
    // Subnormal: a multiple of 2^-24; rounding up to 2^10 of them gives the smallest normal.
    // nearbyint rounds ties to even in the default floating-point environment.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, kHalfSubnormalScale)));
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1).
  exponent -= 1;
  // The significand scaled to [2^10, 2^11); scaling by a power of two is exact.
  const double scaled = std::ldexp(magnitude, kHalfMantissaBits - exponent);
  auto significand = static_cast<uint32_t>(std::nearbyint(scaled));
  if (significand == (2u << kHalfMantissaBits)) {
    significand >>= 1;
    ++exponent;
  }
  const auto biased = static_cast<uint32_t>(exponent + kHalfExponentBias);
  return sign | static_cast<uint16_t>((biased << kHalfMantissaBits) |
                                      (significand - (1u << kHalfMantissaBits)));
}

double float16_to_double(uint16_t bits) {
  const double sign = (bits & kHalfSign) ? -1.0 : 1.0;
  const int biased = (bits & kHalfInfinity) >> kHalfMantissaBits;
  const int mantissa = bits & ((1 << kHalfMantissaBits) - 1);
  if (biased == 0) return sign * std::ldexp(mantissa, -kHalfSubnormalScale);
  if (biased == kHalfSpecialExponent) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  const int exponent = biased - kHalfExponentBias - kHalfMantissaBits;
  return sign * std::ldexp(mantissa + (1 << kHalfMantissaBits), exponent);
}

double bfloat16_to_double(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

}  // namespace graphsub::ir

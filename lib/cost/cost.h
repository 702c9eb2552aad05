// The cost of a node or a graph: time, arithmetic, memory traffic and kernel launches.
#pragma once

#include <cstdint>
#include <limits>

namespace graphsub::cost {

/// What running a node (or a whole graph, as a sum) costs. The search minimizes `time_ms`; the
/// other dimensions are reported and let a caller build its own objective (MetaFlow §4.1).
struct Cost {
  double time_ms = 0;    ///< Estimated or measured execution time, in milliseconds.
  double flops = 0;      ///< Floating-point operations (a multiply-add counts 2).
  double bytes = 0;      ///< Bytes read plus bytes written in device memory.
  int64_t launches = 0;  ///< Kernel launches (0 for nodes that are views or folded away).

  /// The cost of a graph that may not run (it exceeds the memory cap): time, FLOPs and bytes are
  /// +infinity, launches 0. Adding anything to it stays infinite.
  static Cost infinite() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    return Cost{kInf, kInf, kInf, 0};
  }
  /// True for a cost derived from infinite().
  bool is_infinite() const { return time_ms == std::numeric_limits<double>::infinity(); }

  Cost& operator+=(const Cost& other) {
    time_ms += other.time_ms;
    flops += other.flops;
    bytes += other.bytes;
    launches += other.launches;
    return *this;
  }
};

/// Field-wise sum.
inline Cost operator+(Cost a, const Cost& b) { return a += b; }

}  // namespace graphsub::cost

// The named device table and the operator families with their efficiency factors.
#include "cost/device.h"

#include "ir/error.h"

namespace graphsub::cost {
namespace {

/// Sustained fraction of peak per family, shared by every named device (lib/cost/README.md says
/// where each number comes from). Indexed by OpFamily.
constexpr std::array<Efficiency, kNumFamilies> kEfficiency = {{
    {0.70, 0.80},  // convolution: cuDNN/oneDNN reach 60-80 % of fp32 peak on ResNet layers.
    {0.70, 0.80},  // matrix: cuBLAS/MKL SGEMM at moderate sizes.
    {0.25, 0.80},  // pooling: few FLOPs per byte, streaming reads.
    {0.25, 0.70},  // normalization: statistics need a second pass over the data.
    {0.25, 0.70},  // reduction: tree reductions, partial occupancy.
    {0.50, 0.85},  // elementwise: streaming, near STREAM bandwidth.
    {0.50, 0.60},  // data movement: strided or gathered accesses, uncoalesced in part.
    {0.50, 0.50},  // opaque: an unknown kernel, assumed mediocre.
}};

/// GPU kernel launch, host to device, about 5 microseconds.
constexpr double kGpuLaunchMs = 0.005;
/// A CPU runtime dispatching one operator to its thread pool, about half a microsecond.
constexpr double kCpuLaunchMs = 0.0005;

/// Output elements that fill a GPU: every SM holds 2,048 resident threads (CUDA occupancy limits
/// for compute capability 7.0-9.0) and a cuDNN/cuBLAS thread computes about 8 outputs, so 256
/// outputs per SM.
constexpr double gpu_fill(int streaming_multiprocessors) { return 256.0 * streaming_multiprocessors; }
/// 2 cores × 8 fp32 AVX2 lanes × 4 outputs in flight per lane.
constexpr double kCpuFill = 64;

const std::vector<DeviceSpec>& devices() {
  static const std::vector<DeviceSpec> table = {
      {"v100", "NVIDIA Tesla V100 SXM2 (V100 datasheet: 15.7 TFLOP/s fp32, 900 GB/s HBM2, 80 SMs)", 15.7e12,
       900e9, kGpuLaunchMs, gpu_fill(80), kEfficiency},
      {"a100", "NVIDIA A100 40GB (A100 datasheet: 19.5 TFLOP/s fp32, 1,555 GB/s HBM2, 108 SMs)", 19.5e12,
       1555e9, kGpuLaunchMs, gpu_fill(108), kEfficiency},
      {"h100", "NVIDIA H100 SXM5 (H100 datasheet: 67 TFLOP/s fp32, 3.35 TB/s HBM3, 132 SMs)", 67e12, 3.35e12,
       kGpuLaunchMs, gpu_fill(132), kEfficiency},
      {"cpu", "a generic 2-core AVX2 machine (~100 GFLOP/s fp32, ~20 GB/s DRAM)", 100e9, 20e9,
       kCpuLaunchMs, kCpuFill, kEfficiency},
  };
  return table;
}

}  // namespace

OpFamily op_family(ir::OpKind kind) {
  using K = ir::OpKind;
  switch (kind) {
    case K::kConv: case K::kConvTranspose:
      return OpFamily::kConvolution;
    case K::kMatMul: case K::kGemm: case K::kEinsum: case K::kLSTM:
      return OpFamily::kMatrix;
    case K::kAveragePool: case K::kMaxPool: case K::kGlobalAveragePool: case K::kGlobalMaxPool:
      return OpFamily::kPooling;
    case K::kBatchNormalization: case K::kLayerNormalization: case K::kSoftmax:
      return OpFamily::kNormalization;
    case K::kReduceMean: case K::kReduceSum: case K::kReduceMax: case K::kReduceMin:
    case K::kArgMax: case K::kArgMin:
      return OpFamily::kReduction;
    case K::kAdd: case K::kSub: case K::kMul: case K::kDiv: case K::kMod: case K::kPow:
    case K::kMax: case K::kMin: case K::kPRelu: case K::kSMul: case K::kSum: case K::kMean:
    case K::kRelu: case K::kSigmoid: case K::kTanh: case K::kExp: case K::kLog: case K::kNeg:
    case K::kAbs: case K::kSqrt: case K::kReciprocal: case K::kErf: case K::kFloor: case K::kCeil:
    case K::kSin: case K::kCos: case K::kSign: case K::kIdentity: case K::kLeakyRelu: case K::kElu:
    case K::kSoftplus: case K::kHardSigmoid: case K::kHardSwish: case K::kClip: case K::kGelu: case K::kCast: case K::kWhere:
    case K::kDropout: case K::kEqual: case K::kLess: case K::kGreater: case K::kGreaterOrEqual:
    case K::kLessOrEqual: case K::kNot: case K::kAnd: case K::kOr: case K::kIsNaN: case K::kIsInf:
      return OpFamily::kElementwise;
    case K::kEnlarge: case K::kTranspose: case K::kConcat: case K::kSplit: case K::kReshape:
    case K::kFlatten: case K::kSqueeze: case K::kUnsqueeze: case K::kResize: case K::kShape:
    case K::kGather: case K::kGatherElements: case K::kGatherND: case K::kScatterND: case K::kSlice: case K::kPad: case K::kExpand:
    case K::kConstantOfShape: case K::kRange: case K::kTile: case K::kConstIdentityConv:
    case K::kConstIdentityMatrix: case K::kConstOnes: case K::kConstPool:
      return OpFamily::kDataMovement;
    case K::kOpaque: case K::kCount:
      return OpFamily::kOpaque;
  }
  return OpFamily::kOpaque;
}

DeviceSpec device_by_name(std::string_view name) {
  for (const DeviceSpec& device : devices()) {
    if (device.name == name) return device;
  }
  std::string valid;
  for (const std::string& known : device_names()) valid += (valid.empty() ? "" : ", ") + known;
  throw Error("unknown device '" + std::string(name) + "' (valid devices: " + valid + ")");
}

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const DeviceSpec& device : devices()) names.push_back(device.name);
  return names;
}

}  // namespace graphsub::cost

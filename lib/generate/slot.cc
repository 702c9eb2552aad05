// Integer kernels of the enumerated operators and the dim facts they carry.
#include "generate/slot.h"

#include <algorithm>

#include "ir/error.h"

namespace graphsub::generate {
namespace {

using ir::OpKind;

__extension__ typedef unsigned __int128 Wide;  // GCC and Clang

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// TASO's hash1 of a slot: its dims, then its values in four interleaved lanes (one chain of
/// multiplications through every value was a tenth of the enumeration's time).
void finish(Slot& slot) {
  std::array<uint64_t, 4> lanes{0x51, 0x52, 0x53, 0x54};
  for (int64_t dim : slot.dims) lanes[0] = mix(lanes[0], static_cast<uint64_t>(dim));
  const std::vector<uint32_t>& values = slot.values;
  std::size_t i = 0;
  for (; i + 4 <= values.size(); i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) lanes[lane] = mix(lanes[lane], values[i + lane]);
  }
  for (; i < values.size(); ++i) lanes[i % 4] = mix(lanes[i % 4], values[i]);
  slot.hash = mix(mix(mix(lanes[0], lanes[1]), lanes[2]), lanes[3]);
}

using Dims = InlineVec<int64_t, kMaxRank>;

int64_t element_count(const int64_t* first, const int64_t* last) {
  int64_t count = 1;
  for (; first != last; ++first) count *= *first;
  return count;
}

int64_t element_count(const Dims& dims) { return element_count(dims.begin(), dims.end()); }

/// A computed tensor of `dims` and `role`, zero-filled, its dim facts to be set by the op.
Slot computed(const Dims& dims, Role role) {
  Slot slot;
  slot.values.assign(static_cast<std::size_t>(element_count(dims)), 0);
  slot.dims = dims;
  slot.splits.resize(slot.dims.size());
  slot.role = role;
  return slot;
}

/// The outputs of an operator with one.
Outputs one(Slot&& slot) {
  Outputs outputs;
  outputs.push_back(std::move(slot));
  return outputs;
}

/// Split points both tensors have on an axis survive an element-wise op or a concat elsewhere.
std::optional<SplitPoint> common_split(const Slot& a, const Slot& b, std::size_t axis) {
  if (a.splits[axis] && b.splits[axis] && *a.splits[axis] == *b.splits[axis]) return a.splits[axis];
  return std::nullopt;
}

uint32_t relu_stand_in(uint32_t x, const Field& field) { return field.add(field.mul(x, field.add(x, 1)), 1); }

std::optional<Outputs> elementwise(const OpChoice& op, const Slot& a, const Slot& b, const Field& field) {
  if (a.dims != b.dims || a.role != b.role) return std::nullopt;
  Slot out = computed(a.dims, a.role);
  out.dim_exprs = a.dim_exprs;
  for (std::size_t axis = 0; axis < a.dims.size(); ++axis) out.splits[axis] = common_split(a, b, axis);
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    out.values[i] = op.kind == OpKind::kAdd ? field.add(a.values[i], b.values[i]) : field.mul(a.values[i], b.values[i]);
  }
  return one(std::move(out));
}

std::optional<Outputs> relu(const Slot& a, const Field& field) {
  if (a.role != Role::kActivation) return std::nullopt;
  Slot out = a;
  out.is_input = false;
  for (uint32_t& value : out.values) value = relu_stand_in(value, field);
  return one(std::move(out));
}

std::optional<Outputs> mat_mul(const Slot& a, const Slot& b, const Field& field) {
  if (a.dims.size() != 2 || b.dims.size() != 2 || a.dims[1] != b.dims[0]) return std::nullopt;
  const int64_t m = a.dims[0], k = a.dims[1], n = b.dims[1];
  Slot out = computed({m, n}, Role::kActivation);
  out.dim_exprs = {a.dim_exprs[0], b.dim_exprs[1]};
  out.splits = {a.splits[0], b.splits[1]};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      uint32_t sum = 0;
      for (int64_t t = 0; t < k; ++t) sum = field.add(sum, field.mul(a.values[i * k + t], b.values[t * n + j]));
      out.values[i * n + j] = sum;
    }
  }
  return one(std::move(out));
}

std::optional<Outputs> transpose(const Slot& a) {
  if (a.dims.size() != 2) return std::nullopt;
  Slot out = computed({a.dims[1], a.dims[0]}, a.role);
  out.dim_exprs = {a.dim_exprs[1], a.dim_exprs[0]};
  out.splits = {a.splits[1], a.splits[0]};
  for (int64_t i = 0; i < a.dims[0]; ++i) {
    for (int64_t j = 0; j < a.dims[1]; ++j) out.values[j * a.dims[0] + i] = a.values[i * a.dims[1] + j];
  }
  return one(std::move(out));
}

std::optional<Outputs> concat(const OpChoice& op, const Slot& a, const Slot& b) {
  const auto axis = static_cast<std::size_t>(op.axis);
  if (a.dims.size() != b.dims.size() || a.dims.size() <= axis || a.role != b.role) return std::nullopt;
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    if (i != axis && a.dims[i] != b.dims[i]) return std::nullopt;
  }
  Dims dims = a.dims;
  dims[axis] += b.dims[axis];
  Slot out = computed(dims, a.role);
  out.dim_exprs = a.dim_exprs;
  out.dim_exprs[axis] = a.dim_exprs[axis] + b.dim_exprs[axis];
  for (std::size_t i = 0; i < dims.size(); ++i) out.splits[i] = common_split(a, b, i);
  out.splits[axis] = SplitPoint{a.dims[axis], a.dim_exprs[axis], b.dim_exprs[axis]};
  // Outer blocks (axes before `axis`) each hold a's block then b's.
  const int64_t outer = element_count(a.dims.begin(), a.dims.begin() + axis);
  const int64_t a_block = element_count(a.dims) / outer, b_block = element_count(b.dims) / outer;
  auto to = out.values.begin();
  for (int64_t o = 0; o < outer; ++o) {
    to = std::copy_n(a.values.begin() + o * a_block, a_block, to);
    to = std::copy_n(b.values.begin() + o * b_block, b_block, to);
  }
  return one(std::move(out));
}

std::optional<Outputs> split(const OpChoice& op, const Slot& a) {
  const auto axis = static_cast<std::size_t>(op.axis);
  if (a.dims.size() <= axis || !a.splits[axis]) return std::nullopt;
  const SplitPoint point = *a.splits[axis];
  const int64_t outer = element_count(a.dims.begin(), a.dims.begin() + axis);
  const int64_t inner = element_count(a.dims) / outer / a.dims[axis];
  Outputs parts;
  int64_t offset = 0;
  for (int part = 0; part < 2; ++part) {
    Dims dims = a.dims;
    dims[axis] = part == 0 ? point.first : a.dims[axis] - point.first;
    Slot out = computed(dims, a.role);
    out.dim_exprs = a.dim_exprs;
    out.dim_exprs[axis] = part == 0 ? point.first_expr : point.second_expr;
    out.splits = a.splits;
    out.splits[axis].reset();
    const int64_t block = dims[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      std::copy_n(a.values.begin() + o * a.dims[axis] * inner + offset, block, out.values.begin() + o * block);
    }
    offset += block;
    parts.push_back(std::move(out));
  }
  return parts;
}

/// Convolution with SAME padding and stride 1 (pads kernel / 2), the kernel given by the weight.
std::optional<Outputs> conv(const OpChoice& op, const Slot& x, const Slot& w, const Field& field) {
  if (x.role != Role::kActivation || w.role != Role::kWeight || x.dims.size() != 4 || w.dims.size() != 4) {
    return std::nullopt;
  }
  const int64_t k = w.dims[2];
  if (x.dims[1] != w.dims[1] || w.dims[3] != k || k % 2 == 0) return std::nullopt;
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3], o = w.dims[0], pad = k / 2;
  Slot out = computed({n, o, h, wd}, Role::kActivation);
  out.dim_exprs = {x.dim_exprs[0], w.dim_exprs[0], x.dim_exprs[2], x.dim_exprs[3]};
  out.splits[0] = x.splits[0];
  out.splits[1] = w.splits[0];
  // 2^64 in the field: a 128-bit sum is reduced as high * 2^64 + low without a 128-bit division.
  const uint64_t two_to_64 = field.reduce(uint64_t{field.reduce(uint64_t{1} << 63)} * 2);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      for (int64_t i = 0; i < h; ++i) {
        for (int64_t j = 0; j < wd; ++j) {
          // Products of residues below 2^32 summed exactly in 128 bits, reduced once.
          // The taps inside the image: di from di_first to di_last (exclusive), dj likewise.
          const int64_t di_first = std::max<int64_t>(0, pad - i), di_last = std::min(k, h + pad - i);
          const int64_t dj_first = std::max<int64_t>(0, pad - j), dj_last = std::min(k, wd + pad - j);
          Wide sum = 0;
          for (int64_t ic = 0; ic < c; ++ic) {
            for (int64_t di = di_first; di < di_last; ++di) {
              const uint32_t* x_row = x.values.data() + ((b * c + ic) * h + i + di - pad) * wd;
              const uint32_t* w_row = w.values.data() + ((oc * c + ic) * k + di) * k;
              for (int64_t dj = dj_first; dj < dj_last; ++dj) sum += uint64_t{x_row[j + dj - pad]} * w_row[dj];
            }
          }
          const uint32_t reduced = field.reduce(field.reduce(static_cast<uint64_t>(sum >> 64)) * two_to_64 +
                                                field.reduce(static_cast<uint64_t>(sum)));
          out.values[((b * o + oc) * h + i) * wd + j] = op.relu ? relu_stand_in(reduced, field) : reduced;
        }
      }
    }
  }
  return one(std::move(out));
}

/// Enlarge of a 1 x 1 input kernel to op.kernel (TASO: enlarge only applies to inputs).
std::optional<Outputs> enlarge(const OpChoice& op, const Slot& w) {
  if (!w.is_input || w.role != Role::kWeight || w.dims.size() != 4 || w.dims[2] != 1 || w.dims[3] != 1) {
    return std::nullopt;
  }
  const int64_t k = op.kernel, centre = k / 2;
  Slot out = computed({w.dims[0], w.dims[1], k, k}, Role::kWeight);
  out.dim_exprs = {w.dim_exprs[0], w.dim_exprs[1], DimExpr::of_constant(k), DimExpr::of_constant(k)};
  for (int64_t i = 0; i < w.dims[0] * w.dims[1]; ++i) out.values[(i * k + centre) * k + centre] = w.values[i];
  return one(std::move(out));
}

/// Pooling with SAME padding and stride 1: the average counts the padding (count_include_pad 1),
/// so it is the window sum times 1 / (k * k); max keeps the largest residue of the window.
std::optional<Outputs> pool(const OpChoice& op, const Slot& x, const Field& field) {
  if (x.role != Role::kActivation || x.dims.size() != 4) return std::nullopt;
  const int64_t planes = x.dims[0] * x.dims[1], h = x.dims[2], w = x.dims[3], k = op.kernel, pad = k / 2;
  Slot out = computed(x.dims, Role::kActivation);
  out.dim_exprs = x.dim_exprs;
  out.splits = {x.splits[0], x.splits[1], std::nullopt, std::nullopt};
  const uint32_t scale = field.inverse(static_cast<uint32_t>(k * k % field.modulus));
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) {
        uint32_t result = 0;
        for (int64_t di = -pad; di <= pad; ++di) {
          for (int64_t dj = -pad; dj <= pad; ++dj) {
            if (i + di < 0 || i + di >= h || j + dj < 0 || j + dj >= w) continue;
            const uint32_t value = x.values[(p * h + i + di) * w + j + dj];
            result = op.kind == OpKind::kMaxPool ? std::max(result, value) : field.add(result, value);
          }
        }
        out.values[(p * h + i) * w + j] = op.kind == OpKind::kMaxPool ? result : field.mul(result, scale);
      }
    }
  }
  return one(std::move(out));
}

std::optional<Outputs> dispatch(const OpChoice& op, const Inputs& in, const Field& field) {
  switch (op.kind) {
    case OpKind::kAdd:
    case OpKind::kMul: return elementwise(op, *in[0], *in[1], field);
    case OpKind::kRelu: return relu(*in[0], field);
    case OpKind::kMatMul: return mat_mul(*in[0], *in[1], field);
    case OpKind::kTranspose: return transpose(*in[0]);
    case OpKind::kConcat: return concat(op, *in[0], *in[1]);
    case OpKind::kSplit: return split(op, *in[0]);
    case OpKind::kConv: return conv(op, *in[0], *in[1], field);
    case OpKind::kEnlarge: return enlarge(op, *in[0]);
    case OpKind::kAveragePool:
    case OpKind::kMaxPool: return pool(op, *in[0], field);
    default: return std::nullopt;
  }
}

}  // namespace

uint32_t Field::inverse(uint32_t a) const {
  uint32_t result = 1, base = a % modulus;
  for (uint32_t exponent = modulus - 2; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result = mul(result, base);
    base = mul(base, base);
  }
  return result;
}

DimExpr DimExpr::of_input(int input, int axis) {
  DimExpr dim;
  dim.terms[0] = Term{static_cast<uint8_t>(input), static_cast<uint8_t>(axis), 1};
  dim.size = 1;
  return dim;
}

DimExpr DimExpr::of_constant(int64_t value) {
  DimExpr dim;
  dim.constant = value;
  return dim;
}

bool DimExpr::operator==(const DimExpr& other) const {
  if (size != other.size || constant != other.constant) return false;
  for (std::size_t i = 0; i < size; ++i) {
    if (terms[i].input != other.terms[i].input || terms[i].axis != other.terms[i].axis ||
        terms[i].count != other.terms[i].count) {
      return false;
    }
  }
  return true;
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  DimExpr sum = DimExpr::of_constant(a.constant + b.constant);
  const auto key = [](const DimExpr::Term& term) { return std::make_pair(term.input, term.axis); };
  std::size_t i = 0, j = 0;
  while (i < a.size || j < b.size) {
    DimExpr::Term next;
    if (j == b.size || (i < a.size && key(a.terms[i]) < key(b.terms[j]))) {
      next = a.terms[i++];
    } else if (i == a.size || key(b.terms[j]) < key(a.terms[i])) {
      next = b.terms[j++];
    } else {
      next = a.terms[i++];
      next.count = static_cast<uint16_t>(next.count + b.terms[j++].count);
    }
    if (sum.size == DimExpr::kCapacity) throw Error("generate: a dim sums more input dims than a DimExpr holds");
    sum.terms[sum.size++] = next;
  }
  return sum;
}

std::string to_rule_text(const DimExpr& dim, const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < dim.size; ++i) {
    const DimExpr::Term& term = dim.terms[i];
    for (int k = 0; k < term.count; ++k) {
      text += (text.empty() ? "" : " + ") + std::string("shape(") + names[term.input] + ")[" + std::to_string(term.axis) + "]";
    }
  }
  if (dim.constant != 0 || text.empty()) text += (text.empty() ? "" : " + ") + std::to_string(dim.constant);
  return text;
}

[[noreturn]] void throw_inline_full() { throw Error("generate: more elements than an inline vector holds"); }

Slot input_slot(const InputSpec& spec, int index, uint64_t seed, const Field& field) {
  Slot slot = computed(Dims(spec.dims.begin(), spec.dims.end()), spec.role);
  slot.is_input = true;
  for (std::size_t axis = 0; axis < spec.dims.size(); ++axis) {
    slot.dim_exprs.push_back(DimExpr::of_input(index, static_cast<int>(axis)));
  }
  uint64_t state = seed * 1000003ULL + static_cast<uint64_t>(index);
  for (uint32_t& value : slot.values) value = static_cast<uint32_t>(splitmix(state) % field.modulus);
  finish(slot);
  return slot;
}

std::optional<Outputs> apply(const OpChoice& op, const Inputs& inputs, const Field& field) {
  std::optional<Outputs> outputs = dispatch(op, inputs, field);
  if (outputs) {
    for (Slot& slot : *outputs) finish(slot);
  }
  return outputs;
}

}  // namespace graphsub::generate

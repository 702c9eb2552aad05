// LSTM (ONNX opsets 7 and 14): the long short-term memory layer with its default activations
// (sigmoid gates, tanh cell input and output), run forward, in reverse or both ways, with optional
// bias, sequence lengths, initial state, peepholes, clip and coupled input and forget gates. Other
// activation lists stay opaque. Computed in double, stored in the input's type (float or double).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The inputs in ONNX's order. An omitted one has an undefined type in import and inference and
/// is a null tensor in the kernel; trailing omitted ones are absent.
enum Input : std::size_t { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP, kInputCount };
constexpr const char* kInputNames[kInputCount] = {
    "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
constexpr std::size_t kRequiredInputs = 3;  ///< X, W and R.

constexpr int64_t kGates = 4;       ///< Row blocks of W and R, and of each half of B: i, o, f, c.
constexpr int64_t kPeepholes = 3;   ///< Blocks of P: i, o, f.
constexpr int64_t kMaxOutputs = 3;  ///< Y, Y_h, Y_c.
/// FLOPs per hidden unit and step besides the two matrix products: the bias, peephole and clip
/// terms, three sigmoids, two tanhs and the state update.
constexpr double kCellFlopsPerUnit = 20;

/// Empty when every attribute is one of LSTM's, with its ONNX type.
std::string check_attribute_types(const ir::Attributes& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const bool fits = ((name == "hidden_size" || name == "layout" || name == "input_forget") &&
                       std::holds_alternative<int64_t>(value)) ||
                      (name == "clip" && std::holds_alternative<float>(value)) ||
                      (name == "direction" && std::holds_alternative<std::string>(value)) ||
                      (name == "activations" && std::holds_alternative<std::vector<std::string>>(value)) ||
                      ((name == "activation_alpha" || name == "activation_beta") &&
                       std::holds_alternative<std::vector<float>>(value));
    if (!fits) return "attribute '" + name + "' is not modelled with that type";
  }
  return {};
}

/// 1 for "forward" and "reverse", 2 for "bidirectional", 0 for any other name.
int64_t directions_of(const std::string& direction) {
  if (direction == "forward" || direction == "reverse") return 1;
  return direction == "bidirectional" ? 2 : 0;
}

std::string lower_case(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

/// Empty when the activations are absent or spell the defaults, Sigmoid, Tanh, Tanh for each
/// direction in any letter case (runtimes compare them lower-cased), with no alpha or beta: the
/// only functions the kernel computes.
std::string check_activations(const ir::Attributes& attrs, int64_t directions) {
  if (!attrs.get_floats("activation_alpha", {}).empty() || !attrs.get_floats("activation_beta", {}).empty()) {
    return "activation_alpha and activation_beta are not modelled";
  }
  const ir::AttrValue* value = attrs.find("activations");
  if (!value) return {};
  const auto& names = std::get<std::vector<std::string>>(*value);
  if (names.empty()) return {};
  if (static_cast<int64_t>(names.size()) != 3 * directions) {
    return "activations needs three names per direction";
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (lower_case(names[i]) != (i % 3 == 0 ? "sigmoid" : "tanh")) {
      return "activation " + names[i] + " is not modelled (only Sigmoid, Tanh, Tanh)";
    }
  }
  return {};
}

/// Data inputs are every input but sequence_lens.
bool is_data_input(std::size_t index) { return index != kSequenceLens; }

/// The element type of the first data input whose type is known, else undefined.
ir::DataType data_type_of(const std::vector<ir::TensorType>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (is_data_input(i) && inputs[i].dtype != ir::DataType::kUndefined) return inputs[i].dtype;
  }
  return ir::DataType::kUndefined;
}

/// Empty when the data inputs share one element type the kernel computes in (float or double)
/// and sequence_lens is int32, as far as the types are known.
std::string check_dtypes(const std::vector<ir::TensorType>& inputs) {
  const ir::DataType dtype = data_type_of(inputs);
  if (dtype != ir::DataType::kUndefined && dtype != ir::DataType::kFloat && dtype != ir::DataType::kDouble) {
    return "element type " + ir::to_string(dtype) + " has no reference kernel";
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ir::DataType have = inputs[i].dtype;
    const ir::DataType want = is_data_input(i) ? dtype : ir::DataType::kInt32;
    if (have != ir::DataType::kUndefined && have != want) {
      return std::string(kInputNames[i]) + " is " + ir::to_string(have) + ", not " + ir::to_string(want);
    }
  }
  return {};
}

/// Empty when the node has X, W, R and up to five optional inputs, and one to three outputs.
std::string check_counts(const ImportContext& context) {
  if (context.input_types.size() < kRequiredInputs || context.input_types.size() > kInputCount) {
    return "LSTM takes X, W, R and up to five optional inputs";
  }
  return context.num_outputs <= kMaxOutputs ? "" : "LSTM has at most three outputs";
}

/// Takes hidden_size from R [directions, 4 hidden, hidden] when absent; it must be positive.
std::string fill_hidden_size(ImportContext& context) {
  const ir::Shape& r = context.input_types[kR].shape;
  if (!context.attrs.has("hidden_size") && r.rank_known && r.rank() == 3 && r.dims[2].is_known()) {
    context.attrs.set("hidden_size", r.dims[2].value);
  }
  if (!context.attrs.has("hidden_size")) return "hidden_size is absent and R's last dim is unknown";
  return context.attrs.get_int("hidden_size", 0) > 0 ? "" : "hidden_size must be positive";
}

/// Empty when layout and input_forget are 0 or 1, layout 1 only from opset 14 on.
std::string check_flags(const ImportContext& context) {
  const int64_t layout = context.attrs.get_int("layout", 0);
  const int64_t input_forget = context.attrs.get_int("input_forget", 0);
  if ((layout != 0 && layout != 1) || (input_forget != 0 && input_forget != 1)) {
    return "layout and input_forget must be 0 or 1";
  }
  return layout == 1 && context.opset < 14 ? "layout is an attribute from opset 14 on" : "";
}

/// Empty when clip is absent or positive.
std::string check_clip(const ir::Attributes& attrs) {
  return attrs.has("clip") && !(attrs.get_float("clip", 0) > 0) ? "clip must be positive" : "";
}

/// Fills hidden_size, direction ("forward"), layout (0) and input_forget (0); drops the default
/// activations and an infinite clip (no clipping is an absent clip); and records how many of Y,
/// Y_h and Y_c the node returns as graphsub's `num_outputs`.
std::string canonicalize(ImportContext& context) {
  ir::Attributes& attrs = context.attrs;
  std::string reason =
      first_reason({check_attribute_types(attrs), check_counts(context), check_dtypes(context.input_types)});
  if (!reason.empty()) return reason;
  const std::string direction = attrs.get_string("direction", "forward");
  const int64_t directions = directions_of(direction);
  if (directions == 0) return "unknown direction " + direction;
  reason = first_reason({fill_hidden_size(context), check_activations(attrs, directions),
                         check_flags(context), check_clip(attrs)});
  if (!reason.empty()) return reason;
  attrs.set("direction", direction);
  attrs.set("layout", attrs.get_int("layout", 0));
  attrs.set("input_forget", attrs.get_int("input_forget", 0));
  if (std::isinf(attrs.get_float("clip", 0))) attrs.erase("clip");
  for (const char* dropped : {"activations", "activation_alpha", "activation_beta"}) attrs.erase(dropped);
  attrs.set("num_outputs", int64_t{context.num_outputs});
  return {};
}

/// The canonical attributes, as inference and the kernel read them.
struct LstmConfig {
  int64_t hidden = 0;
  std::string direction;
  int64_t directions = 0;    ///< 2 when bidirectional, else 1; 0 for an unknown direction.
  bool batch_first = false;  ///< layout 1: X [batch, seq, input], Y [batch, seq, directions, hidden].
  bool input_forget = false;
  double clip = 0;  ///< Bound of the gates' pre-activations; infinity when the node does not clip.
  int64_t num_outputs = 0;

  static LstmConfig of(const ir::Attributes& attrs) {
    LstmConfig config;
    config.hidden = attrs.get_int("hidden_size", 0);
    config.direction = attrs.get_string("direction", "forward");
    config.directions = directions_of(config.direction);
    config.batch_first = attrs.get_int("layout", 0) == 1;
    config.input_forget = attrs.get_int("input_forget", 0) == 1;
    config.clip = attrs.get_float("clip", std::numeric_limits<float>::infinity());
    config.num_outputs = attrs.get_int("num_outputs", 1);
    return config;
  }

  /// Empty when the attributes describe an LSTM.
  std::string check() const {
    if (hidden <= 0) return "hidden_size must be positive";
    if (directions == 0) return "unknown direction " + direction;
    return num_outputs >= 1 && num_outputs <= kMaxOutputs ? "" : "num_outputs must be 1, 2 or 3";
  }
};

/// X's sequence length, batch size and input size; unknown dims when X's rank is unknown.
struct SequenceDims {
  ir::Dim steps;
  ir::Dim batch;
  ir::Dim input;
};

std::string sequence_dims(const ir::Shape& x, const LstmConfig& config, SequenceDims& dims) {
  if (!x.rank_known) return {};
  if (x.rank() != 3) return "X " + ir::to_string(x) + " must have rank 3";
  dims = config.batch_first ? SequenceDims{x.dims[1], x.dims[0], x.dims[2]}
                            : SequenceDims{x.dims[0], x.dims[1], x.dims[2]};
  return {};
}

/// The dims of Y_h, Y_c, initial_h and initial_c: [directions, batch, hidden], or
/// [batch, directions, hidden] in layout 1.
std::vector<ir::Dim> state_dims(const LstmConfig& config, const SequenceDims& dims) {
  const ir::Dim directions = ir::Dim::known(config.directions);
  const ir::Dim hidden = ir::Dim::known(config.hidden);
  if (config.batch_first) return {dims.batch, directions, hidden};
  return {directions, dims.batch, hidden};
}

/// The dims an operand must have, by its input position.
std::vector<ir::Dim> operand_dims(std::size_t input, const LstmConfig& config, const SequenceDims& dims) {
  const ir::Dim directions = ir::Dim::known(config.directions);
  const auto hidden_times = [&](int64_t blocks) { return ir::Dim::known(blocks * config.hidden); };
  switch (input) {
    case kW: return {directions, hidden_times(kGates), dims.input};
    case kR: return {directions, hidden_times(kGates), hidden_times(1)};
    case kB: return {directions, hidden_times(2 * kGates)};
    case kSequenceLens: return {dims.batch};
    case kP: return {directions, hidden_times(kPeepholes)};
    default: return state_dims(config, dims);
  }
}

/// Empty when `shape` has the rank of `expected` and no known dim differs from a known one there.
std::string check_shape(std::size_t input, const ir::Shape& shape, const std::vector<ir::Dim>& expected) {
  if (!shape.rank_known) return {};
  bool fits = shape.rank() == expected.size();
  for (std::size_t i = 0; fits && i < expected.size(); ++i) {
    const ir::Dim& have = shape.dims[i];
    fits = !have.is_known() || !expected[i].is_known() || have.value == expected[i].value;
  }
  if (fits) return {};
  return std::string(kInputNames[input]) + " " + ir::to_string(shape) + " does not fit " +
         ir::to_string(ir::Shape{true, expected});
}

std::string check_operands(const std::vector<ir::TensorType>& inputs, const LstmConfig& config,
                           const SequenceDims& dims) {
  for (std::size_t i = kW; i < inputs.size(); ++i) {
    if (inputs[i].dtype == ir::DataType::kUndefined) continue;
    if (std::string error = check_shape(i, inputs[i].shape, operand_dims(i, config, dims)); !error.empty()) {
      return error;
    }
  }
  return {};
}

/// Y [seq, directions, batch, hidden] (layout 1: [batch, seq, directions, hidden]), then Y_h and
/// Y_c, as many as the node returns.
std::vector<ir::TensorType> output_types(ir::DataType dtype, const LstmConfig& config,
                                         const SequenceDims& dims) {
  const ir::Dim directions = ir::Dim::known(config.directions);
  const ir::Dim hidden = ir::Dim::known(config.hidden);
  const std::vector<ir::Dim> y = config.batch_first
                                     ? std::vector<ir::Dim>{dims.batch, dims.steps, directions, hidden}
                                     : std::vector<ir::Dim>{dims.steps, directions, dims.batch, hidden};
  std::vector<ir::TensorType> outputs{{dtype, ir::Shape{true, y}}};
  for (int64_t i = 1; i < config.num_outputs; ++i) {
    outputs.push_back({dtype, ir::Shape{true, state_dims(config, dims)}});
  }
  return outputs;
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < kRequiredInputs || inputs.size() > kInputCount) {
    return InferResult::failure("LSTM takes X, W, R and up to five optional inputs");
  }
  const LstmConfig config = LstmConfig::of(node.attrs);
  SequenceDims dims;
  std::string error = first_reason({config.check(), check_dtypes(inputs)});
  if (error.empty()) error = sequence_dims(inputs[kX].shape, config, dims);
  if (error.empty()) error = check_operands(inputs, config, dims);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{output_types(data_type_of(inputs), config, dims), {}};
}

/// The sizes of one run, and where rows of X, Y and the states sit in memory in its layout.
struct RunSizes {
  int64_t steps = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int64_t hidden = 0;
  int64_t directions = 0;
  bool batch_first = false;

  /// Offset of X[t, b, :] (layout 0 indices).
  int64_t x_row(int64_t t, int64_t b) const { return (batch_first ? b * steps + t : t * batch + b) * input; }
  /// Offset of Y[t, d, b, :] (layout 0 indices).
  int64_t y_row(int64_t t, int64_t d, int64_t b) const {
    return (batch_first ? (b * steps + t) * directions + d : (t * directions + d) * batch + b) * hidden;
  }
  /// Offset of Y_h[d, b, :] in Y_h, Y_c, initial_h and initial_c (layout 0 indices).
  int64_t state_row(int64_t d, int64_t b) const {
    return (batch_first ? b * directions + d : d * batch + b) * hidden;
  }
};

RunSizes run_sizes(const std::vector<int64_t>& x, const LstmConfig& config) {
  const int64_t steps = config.batch_first ? x[1] : x[0];
  const int64_t batch = config.batch_first ? x[0] : x[1];
  return {steps, batch, x[2], config.hidden, config.directions, config.batch_first};
}

/// Input `index`, or null when omitted.
const ir::Tensor* operand(const std::vector<const ir::Tensor*>& inputs, std::size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

template <class T>
const T* data_or_null(const ir::Tensor* tensor) {
  return tensor ? tensor->data<T>() : nullptr;
}

/// The valid steps of each batch entry: sequence_lens, or every step when it is omitted.
std::vector<int64_t> sequence_lengths(const ir::Tensor* lens, const RunSizes& sizes) {
  if (!lens) return std::vector<int64_t>(static_cast<std::size_t>(sizes.batch), sizes.steps);
  std::vector<int64_t> lengths = lens->to_int64s();
  for (int64_t length : lengths) {
    if (length < 0 || length > sizes.steps) {
      throw std::invalid_argument("LSTM: sequence length " + std::to_string(length) + " is outside [0, " +
                                  std::to_string(sizes.steps) + "]");
    }
  }
  return lengths;
}

/// One direction's parameters: W [4 hidden, input] and R [4 hidden, hidden] in place, the bias
/// Wb + Rb and the peepholes as doubles (zeros when omitted).
template <class T>
struct DirectionWeights {
  const T* w;
  const T* r;
  std::vector<double> bias;       ///< [4 hidden], gates i, o, f, c.
  std::vector<double> peepholes;  ///< [3 hidden], gates i, o, f.
};

template <class T>
DirectionWeights<T> direction_weights(const std::vector<const ir::Tensor*>& inputs, const RunSizes& sizes,
                                      int64_t direction) {
  const int64_t rows = kGates * sizes.hidden;
  DirectionWeights<T> weights{inputs[kW]->data<T>() + direction * rows * sizes.input,
                              inputs[kR]->data<T>() + direction * rows * sizes.hidden,
                              std::vector<double>(static_cast<std::size_t>(rows)),
                              std::vector<double>(static_cast<std::size_t>(kPeepholes * sizes.hidden))};
  if (const T* bias = data_or_null<T>(operand(inputs, kB))) {
    const T* wb = bias + direction * 2 * rows;
    for (int64_t row = 0; row < rows; ++row) weights.bias[row] = double{wb[row]} + double{wb[rows + row]};
  }
  if (const T* peepholes = data_or_null<T>(operand(inputs, kP))) {
    const T* p = peepholes + direction * kPeepholes * sizes.hidden;
    weights.peepholes.assign(p, p + kPeepholes * sizes.hidden);
  }
  return weights;
}

/// W x + R h + Wb + Rb: the pre-activations of gates i, o, f and c, one block of `hidden` each.
template <class T>
std::vector<double> gate_inputs(const DirectionWeights<T>& weights, const T* x, const std::vector<double>& h,
                                const RunSizes& sizes) {
  std::vector<double> z = weights.bias;
  for (int64_t row = 0; row < kGates * sizes.hidden; ++row) {
    const T* w = weights.w + row * sizes.input;
    const T* r = weights.r + row * sizes.hidden;
    double sum = 0;
    for (int64_t k = 0; k < sizes.input; ++k) sum += double{w[k]} * double{x[k]};
    for (int64_t k = 0; k < sizes.hidden; ++k) sum += double{r[k]} * h[k];
    z[row] += sum;
  }
  return z;
}

/// The hidden and cell state of one batch entry in one direction.
struct CellState {
  std::vector<double> h;
  std::vector<double> c;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// One step of ONNX's equations from the gates' pre-activations z and peepholes p, each
/// pre-activation first clipped to [-clip, clip]:
///   i = σ(zi + pi ⊙ c), f = σ(zf + pf ⊙ c) (1 - i when coupled), c' = f ⊙ c + i ⊙ tanh(zc),
///   o = σ(zo + po ⊙ c'), h' = o ⊙ tanh(c').
void update_cell(const std::vector<double>& z, const std::vector<double>& p, const LstmConfig& config,
                 CellState& state) {
  const auto clipped = [&](double value) { return std::clamp(value, -config.clip, config.clip); };
  const std::size_t n = state.c.size();
  for (std::size_t j = 0; j < n; ++j) {
    const double input_gate = sigmoid(clipped(z[j] + p[j] * state.c[j]));
    const double forget_gate =
        config.input_forget ? 1 - input_gate : sigmoid(clipped(z[2 * n + j] + p[2 * n + j] * state.c[j]));
    const double cell = forget_gate * state.c[j] + input_gate * std::tanh(clipped(z[3 * n + j]));
    const double output_gate = sigmoid(clipped(z[n + j] + p[n + j] * cell));
    state.c[j] = cell;
    state.h[j] = output_gate * std::tanh(cell);
  }
}

/// The tensors of one run, its sizes and attributes. Optional inputs and outputs are null when
/// omitted.
template <class T>
struct LstmRun {
  LstmConfig config;
  RunSizes sizes;
  std::vector<int64_t> lengths;
  const T* x;
  const T* initial_h;
  const T* initial_c;
  T* y;
  T* y_h;
  T* y_c;
};

/// A state row read as doubles from an initial state, or zeros when it is omitted.
template <class T>
std::vector<double> initial_row(const T* initial, int64_t offset, int64_t hidden) {
  if (!initial) return std::vector<double>(static_cast<std::size_t>(hidden), 0.0);
  return std::vector<double>(initial + offset, initial + offset + hidden);
}

template <class T>
void store(const std::vector<double>& row, T* out) {
  std::transform(row.begin(), row.end(), out, [](double value) { return static_cast<T>(value); });
}

/// Runs batch entry `b` through direction `d`: its valid steps forward, or backward from its last
/// valid step in the reverse direction; Y is zero past its length, and Y_h and Y_c hold the state
/// after its last step. An entry of length 0 ends in a zero state, as in onnxruntime (ONNX does not
/// say).
template <class T>
void run_sequence(const LstmRun<T>& run, const DirectionWeights<T>& weights, int64_t d, int64_t b) {
  const RunSizes& sizes = run.sizes;
  const int64_t state_row = sizes.state_row(d, b);
  const int64_t length = run.lengths[b];
  const T* initial_h = length > 0 ? run.initial_h : nullptr;
  const T* initial_c = length > 0 ? run.initial_c : nullptr;
  CellState state{initial_row(initial_h, state_row, sizes.hidden),
                  initial_row(initial_c, state_row, sizes.hidden)};
  const bool backwards = run.config.direction == "reverse" || d == 1;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = backwards ? length - 1 - step : step;
    update_cell(gate_inputs(weights, run.x + sizes.x_row(t, b), state.h, sizes), weights.peepholes,
                run.config, state);
    store(state.h, run.y + sizes.y_row(t, d, b));
  }
  for (int64_t t = length; t < sizes.steps; ++t) {
    std::fill_n(run.y + sizes.y_row(t, d, b), sizes.hidden, T{0});
  }
  if (run.y_h) store(state.h, run.y_h + state_row);
  if (run.y_c) store(state.c, run.y_c + state_row);
}

template <class T>
void run_lstm(const LstmConfig& config, const std::vector<const ir::Tensor*>& inputs,
              std::vector<ir::Tensor>& outputs) {
  const RunSizes sizes = run_sizes(inputs[kX]->dims(), config);
  const LstmRun<T> run{config,
                       sizes,
                       sequence_lengths(operand(inputs, kSequenceLens), sizes),
                       inputs[kX]->data<T>(),
                       data_or_null<T>(operand(inputs, kInitialH)),
                       data_or_null<T>(operand(inputs, kInitialC)),
                       outputs[0].mutable_data<T>(),
                       outputs.size() > 1 ? outputs[1].mutable_data<T>() : nullptr,
                       outputs.size() > 2 ? outputs[2].mutable_data<T>() : nullptr};
  for (int64_t d = 0; d < sizes.directions; ++d) {
    const DirectionWeights<T> weights = direction_weights<T>(inputs, sizes, d);
    for (int64_t b = 0; b < sizes.batch; ++b) run_sequence(run, weights, d, b);
  }
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const LstmConfig config = LstmConfig::of(node.attrs);
  dispatch_floating(inputs[kX]->dtype(),
                    [&](auto zero) { run_lstm<decltype(zero)>(config, inputs, outputs); });
}

double dim_or_one(const ir::Shape& shape, std::size_t axis) {
  return axis < shape.rank() && shape.dims[axis].is_known() ? static_cast<double>(shape.dims[axis].value)
                                                            : 1.0;
}

/// Per step, batch entry and direction, the products W x and R h (2 FLOPs per multiply-add) and
/// the cell's elementwise work; every present input read and every output written once.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  const LstmConfig config = LstmConfig::of(node.attrs);
  const ir::Shape& x = inputs[kX].shape;
  const auto hidden = static_cast<double>(config.hidden);
  const double per_step = 2 * kGates * hidden * (dim_or_one(x, 2) + hidden) + kCellFlopsPerUnit * hidden;
  CostFeatures cost;
  cost.flops = per_step * dim_or_one(x, 0) * dim_or_one(x, 1) * static_cast<double>(config.directions);
  for (const ir::TensorType& input : inputs) {
    if (input.dtype != ir::DataType::kUndefined) cost.bytes_read += bytes_or_one(input);
  }
  for (const ir::TensorType& output : outputs) cost.bytes_written += bytes_or_one(output);
  return cost;
}

}  // namespace

OpDef lstm_op() {
  return OpDef{ir::OpKind::kLSTM, "LSTM", true, 7, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops

// Chains of data-movement nodes written in fewer nodes, read from the tensor they start at.
#include "rewrite/view_chains.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/data_type.h"
#include "rewrite/rewriter.h"

namespace graphsub::rewrite {
namespace {

using Consumers = std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>;

/// A size: a known positive factor times named symbols (a sorted multiset).
struct Size {
  int64_t known = 1;
  std::vector<std::string> symbols;

  bool operator==(const Size& other) const { return known == other.known && symbols == other.symbols; }
  bool is_known() const { return symbols.empty(); }
};

std::optional<Size> times(const Size& a, const Size& b) {
  Size out;
  if (__builtin_mul_overflow(a.known, b.known, &out.known)) return std::nullopt;
  std::merge(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end(), std::back_inserter(out.symbols));
  return out;
}

/// a / b when it is a size for every value of the symbols.
std::optional<Size> over(const Size& a, const Size& b) {
  if (a.known % b.known != 0) return std::nullopt;
  if (!std::includes(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end())) return std::nullopt;
  Size out{a.known / b.known, {}};
  std::set_difference(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end(),
                      std::back_inserter(out.symbols));
  return out;
}

/// A dim as a size; nullopt for an unknown dim, and for 0 (an empty tensor moves nothing).
std::optional<Size> size_of(const ir::Dim& dim) {
  if (dim.is_known()) return dim.value > 0 ? std::optional(Size{dim.value, {}}) : std::nullopt;
  if (dim.is_symbolic()) return Size{1, {dim.symbol}};
  return std::nullopt;
}

/// One factor of a dim of the chain's start x; a Gather fixes it to one index.
struct Atom {
  Size size;
  bool fixed = false;
  int64_t index = 0;
};

/// One entry of a computed Reshape target: a size, or Reshape's code 0 (copy) or -1 (the rest).
struct Entry {
  Size size;
  int64_t code = 1;  ///< 1: `size` holds; 0 or -1: the code.
};

/// Integer vectors longer than this are data, not shapes.
constexpr std::size_t kMaxEntries = 16;

/// The entries of a computed Reshape target, followed through the shape arithmetic exporters
/// write around a symbolic dim (Shape, Gather, Unsqueeze, Squeeze, Concat, Mul, exact Div, Cast,
/// Identity) down to dims and weights; nullopt when a step is anything else.
std::optional<std::vector<Entry>> entries_of(const ir::Graph& graph, ir::ValueId id, int depth = 0) {
  if (depth > 24 || id == ir::kNoValue) return std::nullopt;
  const ir::Value& value = graph.value(id);
  if (value.data) {
    const ir::DataType dtype = value.data->dtype();
    if ((dtype != ir::DataType::kInt64 && dtype != ir::DataType::kInt32) || value.data->rank() > 1 ||
        static_cast<std::size_t>(value.data->num_elements()) > kMaxEntries) {
      return std::nullopt;
    }
    std::vector<Entry> out;
    for (int64_t v : value.data->to_int64s()) {
      if (v < -1) return std::nullopt;
      out.push_back(v > 0 ? Entry{{v, {}}, 1} : Entry{{}, v});
    }
    return out;
  }
  if (value.producer < 0) return std::nullopt;
  const ir::Node& node = graph.node(value.producer);
  auto operand = [&](std::size_t i) { return entries_of(graph, node.inputs.at(i), depth + 1); };
  switch (node.op) {
    case ir::OpKind::kShape: {
      const ir::Shape& shape = graph.value(node.inputs[0]).type.shape;
      if (!shape.rank_known) return std::nullopt;
      const auto rank = static_cast<int64_t>(shape.rank());
      auto clamp = [rank](int64_t at) { return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank); };
      const int64_t start = clamp(node.attrs.get_int("start", 0));
      const int64_t end = std::max(start, clamp(node.attrs.get_int("end", rank)));
      std::vector<Entry> out;
      for (int64_t i = start; i < end; ++i) {
        const std::optional<Size> size = size_of(shape.dims[static_cast<std::size_t>(i)]);
        if (!size) return std::nullopt;
        out.push_back({*size, 1});
      }
      return out;
    }
    case ir::OpKind::kGather: {
      const std::optional<std::vector<Entry>> data = operand(0), indices = operand(1);
      if (node.attrs.get_int("axis", 0) != 0 || !data || !indices) return std::nullopt;
      std::vector<Entry> out;
      for (const Entry& index : *indices) {
        int64_t at = index.code == 1 ? index.size.known : index.code;
        if (index.code == 1 && !index.size.is_known()) return std::nullopt;
        if (at < 0) at += static_cast<int64_t>(data->size());
        if (at < 0 || at >= static_cast<int64_t>(data->size())) return std::nullopt;
        out.push_back((*data)[static_cast<std::size_t>(at)]);
      }
      return out;
    }
    case ir::OpKind::kUnsqueeze:
    case ir::OpKind::kSqueeze:
    case ir::OpKind::kIdentity:
    case ir::OpKind::kCast:
      return node.inputs.size() == 1 || node.op == ir::OpKind::kCast ? operand(0) : std::nullopt;
    case ir::OpKind::kReshape:
      return node.inputs.size() == 1 ? operand(0) : std::nullopt;
    case ir::OpKind::kConcat: {
      if (node.attrs.get_int("axis", 0) != 0 && node.attrs.get_int("axis", 0) != -1) return std::nullopt;
      std::vector<Entry> out;
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const std::optional<std::vector<Entry>> part = operand(i);
        if (!part) return std::nullopt;
        out.insert(out.end(), part->begin(), part->end());
      }
      return out.size() <= kMaxEntries ? std::optional(out) : std::nullopt;
    }
    case ir::OpKind::kMul:
    case ir::OpKind::kDiv: {
      const std::optional<std::vector<Entry>> a = operand(0), b = operand(1);
      if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
      std::vector<Entry> out;
      for (std::size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
        const Entry& x = (*a)[a->size() == 1 ? 0 : i];
        const Entry& y = (*b)[b->size() == 1 ? 0 : i];
        if (x.code != 1 || y.code != 1) return std::nullopt;
        const std::optional<Size> size = node.op == ir::OpKind::kMul ? times(x.size, y.size) : over(x.size, y.size);
        if (!size) return std::nullopt;
        out.push_back({*size, 1});
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

/// A value of a chain as a view of the chain's start x: x's dims split into atoms (outer to
/// inner), and the value's dims as the atoms they hold, in order. Dims of size 1 hold none.
class View {
 public:
  explicit View(const ir::Shape& x) {
    valid_ = x.rank_known;
    for (const ir::Dim& dim : x.dims) {
      const std::optional<Size> size = size_of(dim);
      if (!size) valid_ = false;
      source_.emplace_back();
      if (size && !(*size == Size{})) {
        source_.back().push_back(static_cast<int>(atoms_.size()));
        atoms_.push_back({*size});
      }
    }
    dims_ = source_;
  }

  const std::vector<Atom>& atoms() const { return atoms_; }
  const std::vector<std::vector<int>>& source() const { return source_; }
  const std::vector<std::vector<int>>& dims() const { return dims_; }

  /// Follows one data-movement node; false when it cannot be followed.
  bool apply(const ir::Graph& graph, const ir::Node& node) {
    if (!valid_) return false;
    switch (node.op) {
      case ir::OpKind::kIdentity: return true;
      case ir::OpKind::kTranspose: return transpose(node.attrs.get_ints("perm", {}));
      case ir::OpKind::kSqueeze: return squeeze(node.attrs.get_ints("axes", {}));
      case ir::OpKind::kUnsqueeze: return unsqueeze(node.attrs.get_ints("axes", {}));
      case ir::OpKind::kReshape:
        return node.inputs.size() == 1 ? reshape(graph.value(node.outputs[0]).type.shape)
                                       : reshape_to(entries_of(graph, node.inputs[1]), node.attrs.get_int("allowzero", 0));
      case ir::OpKind::kFlatten: return flatten(node.attrs.get_int("axis", 1));
      case ir::OpKind::kGather: return gather(graph, node);
      default: return false;
    }
  }

  /// The size of an atom list.
  std::optional<Size> size_of_atoms(const std::vector<int>& list) const {
    Size out;
    for (int atom : list) {
      const std::optional<Size> next = times(out, atoms_[static_cast<std::size_t>(atom)].size);
      if (!next) return std::nullopt;
      out = *next;
    }
    return out;
  }

 private:
  bool transpose(const std::vector<int64_t>& perm) {
    if (perm.size() != dims_.size()) return false;
    std::vector<std::vector<int>> out;
    for (int64_t axis : perm) {
      if (axis < 0 || axis >= static_cast<int64_t>(dims_.size())) return false;
      out.push_back(dims_[static_cast<std::size_t>(axis)]);
    }
    dims_ = std::move(out);
    return true;
  }

  bool squeeze(const std::vector<int64_t>& axes) {
    std::set<int64_t> drop(axes.begin(), axes.end());
    std::vector<std::vector<int>> out;
    for (std::size_t i = 0; i < dims_.size(); ++i) {
      if (!drop.count(static_cast<int64_t>(i))) {
        out.push_back(dims_[i]);
      } else if (!dims_[i].empty()) {
        return false;  // Not a dim of size 1 for every value of the symbols.
      }
    }
    if (out.size() + drop.size() != dims_.size()) return false;
    dims_ = std::move(out);
    return true;
  }

  bool unsqueeze(std::vector<int64_t> axes) {
    std::sort(axes.begin(), axes.end());
    const auto rank = static_cast<int64_t>(dims_.size() + axes.size());
    for (int64_t axis : axes) {
      if (axis < 0 || axis >= rank || axis > static_cast<int64_t>(dims_.size())) return false;
      dims_.insert(dims_.begin() + axis, std::vector<int>{});
    }
    return true;
  }

  bool flatten(int64_t axis) {
    const auto rank = static_cast<int64_t>(dims_.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return false;
    std::vector<int> outer, inner;
    for (int64_t i = 0; i < rank; ++i) {
      const std::vector<int>& dim = dims_[static_cast<std::size_t>(i)];
      (i < axis ? outer : inner).insert((i < axis ? outer : inner).end(), dim.begin(), dim.end());
    }
    const std::optional<Size> a = size_of_atoms(outer), b = size_of_atoms(inner);
    return a && b && regroup({*a, *b});
  }

  /// The Reshape's output dims as sizes: its type's, with at most one unknown dim worked out from
  /// the element count.
  bool reshape(const ir::Shape& out) {
    if (!out.rank_known) return false;
    std::vector<std::optional<Size>> sizes;
    for (const ir::Dim& dim : out.dims) {
      if (dim.is_known() && dim.value == 0) return false;  // Nothing to move.
      sizes.push_back(size_of(dim));
    }
    return regroup_sizes(std::move(sizes));
  }

  /// regroup with at most one size not given, worked out from the element count.
  bool regroup_sizes(std::vector<std::optional<Size>> sizes) {
    const auto unknown = std::count(sizes.begin(), sizes.end(), std::nullopt);
    if (unknown > 1) return false;
    if (unknown == 1) {
      std::vector<int> all;
      for (const std::vector<int>& dim : dims_) all.insert(all.end(), dim.begin(), dim.end());
      std::optional<Size> rest = size_of_atoms(all);
      for (const std::optional<Size>& size : sizes) {
        if (size && rest) rest = over(*rest, *size);
      }
      if (!rest) return false;
      *std::find(sizes.begin(), sizes.end(), std::nullopt) = rest;
    }
    std::vector<Size> targets;
    for (const std::optional<Size>& size : sizes) targets.push_back(*size);
    return regroup(targets);
  }

  /// A Reshape to a computed target: 0 copies the current dim at its position (without
  /// allowzero), one -1 takes the rest of the element count.
  bool reshape_to(const std::optional<std::vector<Entry>>& entries, int64_t allowzero) {
    if (!entries || allowzero != 0) return false;
    std::vector<std::optional<Size>> sizes;
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const Entry& entry = (*entries)[i];
      if (entry.code == 1) {
        sizes.push_back(entry.size);
      } else if (entry.code == 0) {
        if (i >= dims_.size()) return false;
        sizes.push_back(size_of_atoms(dims_[i]));
        if (!sizes.back()) return false;
      } else {
        sizes.push_back(std::nullopt);
      }
    }
    return regroup_sizes(std::move(sizes));
  }

  /// The current dims' atoms, in order, grouped into `targets`, splitting an atom where a target
  /// ends inside it.
  bool regroup(const std::vector<Size>& targets) {
    std::vector<int> flat;
    for (const std::vector<int>& dim : dims_) flat.insert(flat.end(), dim.begin(), dim.end());
    std::vector<std::vector<int>> out;
    std::size_t at = 0;
    for (const Size& target : targets) {
      std::vector<int> group;
      Size held;
      while (!(held == target)) {
        const std::optional<Size> rest = over(target, held);
        if (!rest || at == flat.size()) return false;
        const int atom = flat[at];
        const Size size = atoms_[static_cast<std::size_t>(atom)].size;
        if (over(*rest, size)) {
          group.push_back(atom);
          held = *times(held, size);
          ++at;
        } else {
          const std::optional<std::pair<int, int>> parts = split(atom, *rest);
          if (!parts) return false;
          flat[at] = parts->second;
          group.push_back(parts->first);
          held = target;
        }
      }
      out.push_back(std::move(group));
    }
    if (at != flat.size()) return false;
    dims_ = std::move(out);
    return true;
  }

  /// Splits `atom` into an outer atom of size `outer` and an inner one; their ids.
  std::optional<std::pair<int, int>> split(int atom, const Size& outer) {
    const Atom whole = atoms_[static_cast<std::size_t>(atom)];
    const std::optional<Size> inner = over(whole.size, outer);
    if (whole.fixed || !inner || *inner == Size{} || outer == Size{}) return std::nullopt;
    const int a = static_cast<int>(atoms_.size());
    atoms_.push_back({outer});
    atoms_.push_back({*inner});
    auto replace = [atom, a](std::vector<std::vector<int>>& lists) {
      for (std::vector<int>& list : lists) {
        auto found = std::find(list.begin(), list.end(), atom);
        if (found == list.end()) continue;
        *found = a + 1;
        list.insert(found, a);
      }
    };
    replace(source_);
    replace(dims_);
    return std::pair(a, a + 1);
  }

  /// Gather of one constant index along a dim that is one atom of known size.
  bool gather(const ir::Graph& graph, const ir::Node& node) {
    const ir::Value& indices = graph.value(node.inputs[1]);
    if (!indices.data || indices.data->num_elements() != 1 || indices.data->rank() > 1) return false;
    if (indices.data->dtype() != ir::DataType::kInt64 && indices.data->dtype() != ir::DataType::kInt32) return false;
    const auto rank = static_cast<int64_t>(dims_.size());
    int64_t axis = node.attrs.get_int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    std::vector<int>& dim = dims_[static_cast<std::size_t>(axis)];
    if (dim.size() != 1) return false;
    Atom& atom = atoms_[static_cast<std::size_t>(dim[0])];
    if (!atom.size.is_known()) return false;
    int64_t index = indices.data->to_int64s()[0];
    if (index < 0) index += atom.size.known;
    if (index < 0 || index >= atom.size.known) return false;
    atom.fixed = true;
    atom.index = index;
    if (indices.data->rank() == 0) {
      dims_.erase(dims_.begin() + axis);
    } else {
      dim.clear();
    }
    return true;
  }

  bool valid_ = true;
  std::vector<Atom> atoms_;
  std::vector<std::vector<int>> source_;
  std::vector<std::vector<int>> dims_;
};

/// How a view is written from x: a Reshape of x into runs of atoms (when x's dims are not
/// already those runs), a Gather per fixed atom (highest axis first), a Transpose into the view's
/// order, and a Reshape into the view's dims.
struct Plan {
  std::optional<std::vector<int64_t>> split;
  std::vector<std::pair<int64_t, int64_t>> gathers;  ///< (axis, index).
  std::optional<std::vector<int64_t>> perm;
  std::optional<std::vector<int64_t>> merge;
};

/// A literal Reshape target for dims of the given sizes; entry i is 0 where `copies[i]` (the
/// input's dim i is that very dim), else a known size, or one -1 beside known positive sizes.
std::optional<std::vector<int64_t>> literal_target(const std::vector<Size>& sizes, const std::vector<bool>& copies) {
  std::vector<int64_t> target;
  int open = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (copies[i]) {
      target.push_back(0);
    } else if (sizes[i].is_known()) {
      target.push_back(sizes[i].known);
    } else {
      if (open >= 0) return std::nullopt;
      open = static_cast<int>(i);
      target.push_back(-1);
    }
  }
  if (open >= 0 && std::count(target.begin(), target.end(), 0) > 0) return std::nullopt;
  return target;
}

/// A run of x's atoms that stays together up to the view: same dim of x, same dim of the view,
/// consecutive in both.
struct Run {
  std::vector<int> atoms;
  std::size_t axis = 0;
  bool fixed = false;
};

/// The plan of a view that keeps x's atoms in order and fixes none: nothing where its dims are
/// x's (a Squeeze of a dim of size 1 undone by a Reshape), else one Reshape of x. nullopt for any
/// other view, or where no literal target writes it.
std::optional<Plan> regrouping_plan(const View& view) {
  std::vector<int> in_order, viewed;
  for (const std::vector<int>& dim : view.source()) in_order.insert(in_order.end(), dim.begin(), dim.end());
  for (const std::vector<int>& dim : view.dims()) viewed.insert(viewed.end(), dim.begin(), dim.end());
  const std::vector<Atom>& atoms = view.atoms();
  const bool fixes = std::any_of(atoms.begin(), atoms.end(), [](const Atom& atom) { return atom.fixed; });
  if (fixes || in_order != viewed) return std::nullopt;
  if (view.dims() == view.source()) return Plan{};
  std::vector<Size> sizes;
  std::vector<bool> copies;
  for (std::size_t d = 0; d < view.dims().size(); ++d) {
    const std::optional<Size> size = view.size_of_atoms(view.dims()[d]);
    if (!size) return std::nullopt;
    sizes.push_back(*size);
    copies.push_back(d < view.source().size() && !view.dims()[d].empty() && view.dims()[d] == view.source()[d]);
  }
  Plan plan;
  plan.merge = literal_target(sizes, copies);
  if (!plan.merge) return std::nullopt;
  return plan;
}

std::optional<Plan> plan_of(const View& view) {
  if (std::optional<Plan> regrouped = regrouping_plan(view)) return regrouped;
  const std::vector<Atom>& atoms = view.atoms();
  std::map<int, std::pair<std::size_t, std::size_t>> place;  // atom -> (view dim, position in the view's order)
  std::size_t order = 0;
  for (std::size_t d = 0; d < view.dims().size(); ++d) {
    for (int atom : view.dims()[d]) place[atom] = {d, order++};
  }
  std::vector<Run> runs;
  for (std::size_t axis = 0; axis < view.source().size(); ++axis) {
    for (int atom : view.source()[axis]) {
      const bool fixed = atoms[static_cast<std::size_t>(atom)].fixed;
      if (!fixed && !place.count(atom)) return std::nullopt;
      if (!fixed && !runs.empty() && !runs.back().fixed && runs.back().axis == axis) {
        const auto [dim, at] = place.at(runs.back().atoms.back());
        if (place.at(atom).first == dim && place.at(atom).second == at + 1) {
          runs.back().atoms.push_back(atom);
          continue;
        }
      }
      runs.push_back({{atom}, axis, fixed});
    }
  }
  Plan plan;
  const std::size_t rank = view.source().size();
  bool same = runs.size() == rank;
  std::vector<Size> sizes;
  std::vector<bool> copies;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const bool whole = runs[i].axis == i && runs[i].atoms.size() == view.source()[i].size();
    same = same && whole;
    sizes.push_back(*view.size_of_atoms(runs[i].atoms));
    copies.push_back(whole);
  }
  if (!same) {
    plan.split = literal_target(sizes, copies);
    if (!plan.split) return std::nullopt;
  }
  std::vector<Run> kept;
  for (std::size_t i = runs.size(); i-- > 0;) {
    if (runs[i].fixed) plan.gathers.emplace_back(i, atoms[static_cast<std::size_t>(runs[i].atoms[0])].index);
  }
  for (const Run& run : runs) {
    if (!run.fixed) kept.push_back(run);
  }
  std::vector<int64_t> perm(kept.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return place.at(kept[static_cast<std::size_t>(a)].atoms[0]).second <
           place.at(kept[static_cast<std::size_t>(b)].atoms[0]).second;
  });
  if (!std::is_sorted(perm.begin(), perm.end())) plan.perm = perm;
  // The view's dims, each a run of the transposed runs (or none, for a dim of size 1).
  std::vector<Size> dims;
  std::vector<bool> dim_copies;
  std::size_t next = 0;
  bool merged = view.dims().size() == kept.size();
  for (std::size_t d = 0; d < view.dims().size(); ++d) {
    const std::optional<Size> size = view.size_of_atoms(view.dims()[d]);
    if (!size) return std::nullopt;
    std::size_t runs_here = 0;
    for (std::size_t held = 0; held < view.dims()[d].size(); ++runs_here) {
      if (next + runs_here >= perm.size()) return std::nullopt;
      held += kept[static_cast<std::size_t>(perm[next + runs_here])].atoms.size();
    }
    dims.push_back(*size);
    dim_copies.push_back(runs_here == 1 && next == d);
    merged = merged && runs_here == 1;
    next += runs_here;
  }
  if (!merged) {
    plan.merge = literal_target(dims, dim_copies);
    if (!plan.merge) return std::nullopt;
  }
  return plan;
}

/// The nodes a tree already wrote, so that its values share them.
using Written = std::map<std::pair<ir::ValueId, std::string>, ir::ValueId>;

std::string key_of(const std::string& op, const std::vector<int64_t>& values) {
  std::string key = op;
  for (int64_t v : values) key += " " + std::to_string(v);
  return key;
}

std::optional<ir::ValueId> reshaped(ir::Graph& graph, ir::ValueId x, const std::vector<int64_t>& target,
                                    const std::string& name, Written& written) {
  const auto key = std::pair(x, key_of("reshape", target));
  if (auto found = written.find(key); found != written.end()) return found->second;
  ir::Attributes attrs;
  attrs.set("shape", target);
  attrs.set("allowzero", int64_t{0});
  const std::optional<ir::ValueId> out = add_canonical_node(graph, ir::OpKind::kReshape, {x}, std::move(attrs), name + "/Reshape");
  if (out) written[key] = *out;
  return out;
}

/// The view written from x by `plan`; nullopt when an op refuses its operands.
std::optional<ir::ValueId> write(ir::Graph& graph, ir::ValueId x, const Plan& plan, const std::string& name,
                                 Written& written) {
  std::optional<ir::ValueId> value = x;
  if (plan.split) value = reshaped(graph, *value, *plan.split, name, written);
  for (const auto& [axis, index] : plan.gathers) {
    if (!value) return std::nullopt;
    const auto key = std::pair(*value, key_of("gather", {axis, index}));
    if (auto found = written.find(key); found != written.end()) {
      value = found->second;
      continue;
    }
    const ir::ValueId indices =
        graph.add_weight(name + "/index_" + std::to_string(index), ir::share(ir::Tensor::from_int64s({}, {index})));
    ir::Attributes attrs;
    attrs.set("axis", axis);
    const ir::ValueId from = *value;
    value = add_canonical_node(graph, ir::OpKind::kGather, {from, indices}, std::move(attrs), name + "/Gather");
    if (value) written[key] = *value;
  }
  if (plan.perm && value) {
    const auto key = std::pair(*value, key_of("transpose", *plan.perm));
    if (auto found = written.find(key); found != written.end()) {
      value = found->second;
    } else {
      ir::Attributes attrs;
      attrs.set("perm", *plan.perm);
      const ir::ValueId from = *value;
      value = add_canonical_node(graph, ir::OpKind::kTranspose, {from}, std::move(attrs), name + "/Transpose");
      if (value) written[key] = *value;
    }
  }
  if (plan.merge && value) value = reshaped(graph, *value, *plan.merge, name, written);
  return value;
}

/// Whether a dim names one size: a known size, or a symbol other than the placeholders ONNX's
/// shape inference makes up for a size it cannot work out ("unk__12": it says nothing about
/// which size that is).
bool names_size(const ir::Dim& dim) {
  return dim.is_known() || (dim.is_symbolic() && dim.symbol.rfind("unk__", 0) != 0);
}

/// Whether `written` can stand for `original`: the same dtype and rank, and the same size
/// wherever both name one.
bool fits(const ir::TensorType& written, const ir::TensorType& original) {
  if (written.dtype != original.dtype || !written.shape.rank_known || !original.shape.rank_known) return false;
  if (written.shape.rank() != original.shape.rank()) return false;
  for (std::size_t i = 0; i < written.shape.rank(); ++i) {
    const ir::Dim& a = written.shape.dims[i];
    const ir::Dim& b = original.shape.dims[i];
    if (names_size(a) && names_size(b) && a != b) return false;
  }
  return true;
}

bool is_view_node(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] == ir::kNoValue) return false;
  switch (node.op) {
    case ir::OpKind::kIdentity:
    case ir::OpKind::kTranspose:
    case ir::OpKind::kSqueeze:
    case ir::OpKind::kUnsqueeze:
    case ir::OpKind::kFlatten:
      return node.inputs.size() == 1;
    case ir::OpKind::kReshape:
      return node.inputs.size() <= 2;  // The run-time form is followed where its target's arithmetic is.
    case ir::OpKind::kGather: {
      if (node.inputs.size() != 2 || node.inputs[1] == ir::kNoValue) return false;
      const ir::Value& indices = graph.value(node.inputs[1]);
      return indices.data && indices.data->num_elements() == 1 && indices.data->rank() <= 1;
    }
    default:
      return false;
  }
}

/// Data moved: the nodes that copy (Transpose, Gather), the others relabel a buffer.
std::size_t copies_in(const ir::Graph& graph) {
  std::size_t count = 0;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::OpKind op = graph.node(id).op;
    count += op == ir::OpKind::kTranspose || op == ir::OpKind::kGather;
  }
  return count;
}

/// One chain tree: a start value and the data-movement nodes reached from it through their data input.
struct Tree {
  ir::ValueId start = ir::kNoValue;
  std::vector<ir::NodeId> nodes;  ///< In the order found (each after the node it reads).
};

/// The values of `tree` read outside it, each with the nodes from the start to it.
std::vector<std::pair<ir::ValueId, std::vector<ir::NodeId>>> ends_of(const ir::Graph& graph, const Consumers& consumers,
                                                                      const Tree& tree) {
  const std::set<ir::NodeId> inside(tree.nodes.begin(), tree.nodes.end());
  std::vector<std::pair<ir::ValueId, std::vector<ir::NodeId>>> ends;
  for (ir::NodeId id : tree.nodes) {
    const ir::ValueId out = graph.node(id).outputs[0];
    const bool outside = std::any_of(consumers[out].begin(), consumers[out].end(), [&](const auto& use) {
      return !inside.count(use.first) || use.second != 0;
    });
    if (!outside) continue;
    std::vector<ir::NodeId> path;
    for (ir::NodeId at = id; at >= 0;) {
      path.push_back(at);
      const ir::ValueId in = graph.node(at).inputs[0];
      at = in == tree.start ? -1 : graph.value(in).producer;
    }
    std::reverse(path.begin(), path.end());
    ends.emplace_back(out, std::move(path));
  }
  return ends;
}

/// Rewrites one tree in `graph`; false (the graph untouched) when that would not take fewer nodes
/// without more copies.
bool simplify_tree(ir::Graph& graph, const Consumers& consumers, const Tree& tree) {
  if (!graph.has_value(tree.start)) return false;
  for (ir::NodeId id : tree.nodes) {
    if (!graph.has_node(id)) return false;  // Gone with the readers an earlier tree's rewrite removed.
  }
  const ir::Shape& x = graph.value(tree.start).type.shape;
  ir::Graph candidate = graph;
  Written written;
  std::vector<std::pair<ir::ValueId, ir::ValueId>> replacements;
  for (const auto& [end, path] : ends_of(graph, consumers, tree)) {
    // The last value on the way to `end` that a plan can write.
    for (std::size_t length = path.size(); length > 0; --length) {
      View view(x);
      bool followed = true;
      for (std::size_t i = 0; i < length && followed; ++i) followed = view.apply(graph, graph.node(path[i]));
      const std::optional<Plan> plan = followed ? plan_of(view) : std::nullopt;
      if (!plan) continue;
      const ir::Node& last = graph.node(path[length - 1]);
      const ir::ValueId value = last.outputs[0];
      const std::string name = last.name.empty() ? "view_chain" : last.name;
      const std::optional<ir::ValueId> out = write(candidate, tree.start, *plan, name, written);
      if (!out || !fits(candidate.value(*out).type, graph.value(value).type)) continue;
      // The readers were typed from the value replaced: a new value keeps its type, so that the
      // graph's types stay consistent (its placeholder symbols included).
      if (*out != tree.start) candidate.set_type(*out, graph.value(value).type);
      if (*out != value) replacements.emplace_back(value, *out);
      break;
    }
  }
  for (const auto& [from, to] : replacements) candidate.replace_all_uses(from, to);
  candidate.remove_dead_nodes();
  if (candidate.node_count() >= graph.node_count() || copies_in(candidate) > copies_in(graph)) return false;
  graph = std::move(candidate);
  return true;
}

}  // namespace

ir::Graph simplify_view_chains(const ir::Graph& graph, ViewChainStats* stats) {
  ir::Graph result = graph;
  result.remove_dead_nodes();
  ViewChainStats counted;
  const Consumers consumers = graph.consumers();
  const std::vector<ir::ValueId>& outputs = graph.outputs();
  const std::set<ir::ValueId> named(outputs.begin(), outputs.end());
  const std::optional<std::vector<ir::NodeId>> order = graph.topological_order();
  if (!order) return result;
  std::map<ir::ValueId, Tree> trees;  // By start; a node joins the tree of the node it reads.
  std::map<ir::NodeId, ir::ValueId> start_of;
  for (ir::NodeId id : *order) {
    const ir::Node& node = graph.node(id);
    if (!is_view_node(graph, node)) continue;
    const ir::Value& input = graph.value(node.inputs[0]);
    const auto parent = input.producer >= 0 ? start_of.find(input.producer) : start_of.end();
    const ir::ValueId start = parent != start_of.end() ? parent->second : node.inputs[0];
    if (graph.value(start).kind == ir::ValueKind::kWeight) continue;
    start_of[id] = start;
    trees[start].start = start;
    trees[start].nodes.push_back(id);
  }
  for (const auto& [start, tree] : trees) {
    // A lone node is only ever replaced by none: a Reshape or Transpose that keeps every dim.
    const bool names_output = std::any_of(tree.nodes.begin(), tree.nodes.end(), [&](ir::NodeId id) {
      return named.count(graph.node(id).outputs[0]) > 0;
    });
    if (names_output || named.count(start)) continue;
    const std::size_t before = result.node_count();
    if (simplify_tree(result, consumers, tree)) {
      ++counted.chains;
      counted.nodes_removed += static_cast<int>(before - result.node_count());
    }
  }
  if (stats) *stats = counted;
  return result;
}

}  // namespace graphsub::rewrite

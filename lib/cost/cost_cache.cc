// Reading and writing the cost cache file, and the op signatures that key it.
#include "cost/cost_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/log.h"
#include "ops/registry.h"

namespace graphsub::cost {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

/// The member `key` of `object`, which must have the JSON type `check` accepts.
const Json& member(const Json& object, const char* key, bool (Json::*check)() const, const char* type) {
  const auto it = object.find(key);
  if (it == object.end()) throw Error(std::string("missing field '") + key + "'");
  if (!((*it).*check)()) throw Error(std::string("field '") + key + "' is not " + type);
  return *it;
}

std::string string_member(const Json& object, const char* key) {
  return member(object, key, &Json::is_string, "a string").get<std::string>();
}

double time_member(const Json& object, const char* key) {
  const double value = member(object, key, &Json::is_number, "a number").get<double>();
  if (!(value >= 0)) throw Error(std::string("field '") + key + "' is negative");
  return value;
}

std::map<std::string, std::string> strings_member(const Json& root, const char* key) {
  std::map<std::string, std::string> strings;
  for (const auto& [name, value] : member(root, key, &Json::is_object, "an object").items()) {
    if (!value.is_string()) throw Error(std::string("field '") + key + "." + name + "' is not a string");
    strings[name] = value.get<std::string>();
  }
  return strings;
}

CacheHeader header_from(const Json& root) {
  return CacheHeader{string_member(root, "target"), string_member(root, "device"), string_member(root, "driver"),
                     strings_member(root, "libraries"), strings_member(root, "settings")};
}

CacheEntry entry_from(const Json& item) {
  if (!item.is_object()) throw Error("an entry is not an object");
  CacheEntry entry{string_member(item, "signature"), string_member(item, "backend"), 0, 0, 0, {}};
  if (item.contains("error")) {
    entry.error = string_member(item, "error");
    if (entry.error.empty()) throw Error("entry '" + entry.signature + "' has an empty error");
    return entry;
  }
  entry.median_ms = time_member(item, "median_ms");
  entry.spread_ms = time_member(item, "spread_ms");
  entry.runs = member(item, "runs", &Json::is_number_integer, "an integer").get<int64_t>();
  if (entry.runs < 1) throw Error("entry '" + entry.signature + "' has no runs");
  if (item.contains("algorithm")) entry.algorithm = string_member(item, "algorithm");
  return entry;
}

Comparison comparison_from(const Json& item) {
  if (!item.is_object()) throw Error("a comparison is not an object");
  Comparison comparison{string_member(item, "original"), string_member(item, "candidate"),
                        string_member(item, "backend"), 1, 0, 0, {}};
  if (item.contains("error")) {
    comparison.error = string_member(item, "error");
    if (comparison.error.empty()) throw Error("a comparison has an empty error");
    return comparison;
  }
  comparison.median_ratio = time_member(item, "median_ratio");
  comparison.spread = time_member(item, "spread");
  comparison.runs = member(item, "runs", &Json::is_number_integer, "an integer").get<int64_t>();
  if (comparison.runs < 1) throw Error("a comparison has no runs");
  if (item.contains("original_ms")) {
    comparison.original_ms = time_member(item, "original_ms");
    comparison.original_spread_ms = time_member(item, "original_spread_ms");
    comparison.candidate_ms = time_member(item, "candidate_ms");
    comparison.candidate_spread_ms = time_member(item, "candidate_spread_ms");
  }
  return comparison;
}

std::vector<int64_t> integers_member(const Json& object, const char* key) {
  std::vector<int64_t> values;
  for (const Json& value : member(object, key, &Json::is_array, "an array")) {
    if (!value.is_number_integer()) throw Error(std::string("field '") + key + "' holds a non-integer");
    values.push_back(value.get<int64_t>());
  }
  return values;
}

Observation observation_from(const Json& item) {
  if (!item.is_object()) throw Error("an observation is not an object");
  Observation observation{string_member(item, "signature"), string_member(item, "backend"), {}};
  for (const auto& [name, value] : member(item, "values", &Json::is_object, "an object").items()) {
    if (!value.is_object()) throw Error("observed value '" + name + "' is not an object");
    ObservedValue& observed = observation.values[name];
    observed.shape = integers_member(value, "shape");
    if (value.contains("integers")) observed.integers = integers_member(value, "integers");
  }
  return observation;
}

void check_schema(const Json& root) {
  if (!root.is_object()) throw Error("not a JSON object");
  const Json& version = member(root, "schema_version", &Json::is_number_integer, "an integer");
  if (version.get<int64_t>() != CostCache::kSchemaVersion) {
    throw Error("schema_version " + version.dump() + " is not supported (this graphsub reads " +
                std::to_string(CostCache::kSchemaVersion) + ")");
  }
}

CostCache cache_from(const Json& root) {
  check_schema(root);
  CostCache cache(header_from(root));
  for (const Json& item : member(root, "entries", &Json::is_array, "an array")) {
    CacheEntry entry = entry_from(item);
    if (cache.find(entry.signature, entry.backend)) {
      throw Error("duplicate entry '" + entry.signature + "' on backend '" + entry.backend + "'");
    }
    cache.insert(std::move(entry));
  }
  if (root.contains("comparisons")) {
    for (const Json& item : member(root, "comparisons", &Json::is_array, "an array")) {
      Comparison comparison = comparison_from(item);
      if (cache.find_comparison(comparison.original, comparison.candidate, comparison.backend)) {
        throw Error("duplicate comparison of '" + comparison.candidate + "' with '" + comparison.original + "'");
      }
      cache.insert(std::move(comparison));
    }
  }
  if (root.contains("observations")) {  // since 2026-11-29; older caches have none
    for (const Json& item : member(root, "observations", &Json::is_array, "an array")) {
      Observation observation = observation_from(item);
      if (cache.find_observation(observation.signature)) {
        throw Error("duplicate observation '" + observation.signature + "'");
      }
      cache.insert(std::move(observation));
    }
  }
  return cache;
}

Json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read cost cache '" + path + "'");
  try {
    return Json::parse(in);
  } catch (const Json::parse_error& error) {
    throw Error("cost cache '" + path + "' is not valid JSON: " + error.what());
  }
}

OrderedJson entry_json(const CacheEntry& entry) {
  OrderedJson item{{"signature", entry.signature}, {"backend", entry.backend}};
  if (entry.failed()) {
    item["error"] = entry.error;
    return item;
  }
  item["median_ms"] = entry.median_ms;
  item["spread_ms"] = entry.spread_ms;
  item["runs"] = entry.runs;
  if (!entry.algorithm.empty()) item["algorithm"] = entry.algorithm;
  return item;
}

OrderedJson comparison_json(const Comparison& comparison) {
  OrderedJson item{{"original", comparison.original},
                   {"candidate", comparison.candidate},
                   {"backend", comparison.backend}};
  if (comparison.failed()) {
    item["error"] = comparison.error;
    return item;
  }
  item["median_ratio"] = comparison.median_ratio;
  item["spread"] = comparison.spread;
  item["runs"] = comparison.runs;
  if (comparison.has_times()) {
    item["original_ms"] = comparison.original_ms;
    item["original_spread_ms"] = comparison.original_spread_ms;
    item["candidate_ms"] = comparison.candidate_ms;
    item["candidate_spread_ms"] = comparison.candidate_spread_ms;
  }
  return item;
}

OrderedJson observation_json(const Observation& observation) {
  OrderedJson values = OrderedJson::object();
  for (const auto& [name, value] : observation.values) {
    OrderedJson item{{"shape", value.shape}};
    if (value.integers) item["integers"] = *value.integers;
    values[name] = std::move(item);
  }
  return OrderedJson{{"signature", observation.signature}, {"backend", observation.backend}, {"values", values}};
}

OrderedJson to_json(const CostCache& cache) {
  const CacheHeader& header = cache.header();
  OrderedJson root;
  root["schema_version"] = CostCache::kSchemaVersion;
  root["target"] = header.target;
  root["device"] = header.device;
  root["driver"] = header.driver;
  root["libraries"] = OrderedJson(header.libraries);
  root["settings"] = OrderedJson(header.settings);
  root["entries"] = OrderedJson::array();
  for (const CacheEntry& entry : cache.entries()) root["entries"].push_back(entry_json(entry));
  root["comparisons"] = OrderedJson::array();
  for (const Comparison& comparison : cache.comparisons()) root["comparisons"].push_back(comparison_json(comparison));
  if (const std::vector<Observation> observations = cache.observations(); !observations.empty()) {
    root["observations"] = OrderedJson::array();
    for (const Observation& observation : observations) {
      root["observations"].push_back(observation_json(observation));
    }
  }
  return root;
}

/// Writes `text` to `path` through a temporary file in the same directory and a rename.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      throw Error("cannot write cost cache '" + path + "'");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error("cannot write cost cache '" + path + "': " + error.message());
  }
}

/// The values of a map, in its order.
template <class Map>
std::vector<typename Map::mapped_type> values_of(const Map& map) {
  std::vector<typename Map::mapped_type> values;
  values.reserve(map.size());
  for (const auto& item : map) values.push_back(item.second);
  return values;
}

std::string hex64(uint64_t value) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(value));
  return hex;
}

std::string op_name(const ir::Node& node) {
  if (node.op != ir::OpKind::kOpaque) return ops::kind_name(node.op);
  const ir::OpaqueInfo& info = *node.opaque;
  return info.domain.empty() ? info.op_type : info.domain + "." + info.op_type;
}

std::string attributes_text(const ir::Node& node) {
  if (node.op == ir::OpKind::kOpaque) {
    return "onnx_node=" + hex64(ir::hash_string(ir::kHashSeed, node.opaque->onnx_node));
  }
  std::string text;
  for (const auto& [name, value] : node.attrs.items()) {
    text += (text.empty() ? "" : ",") + name + "=" + ir::to_string(value);
  }
  return text;
}

/// `type` with each symbolic dim replaced by its size in `sizes` (1 when it is not there).
ir::TensorType with_sizes(ir::TensorType type, const DimSizes& sizes) {
  for (ir::Dim& dim : type.shape.dims) {
    if (!dim.is_symbolic()) continue;
    const auto size = sizes.find(dim.symbol);
    dim = ir::Dim::known(size == sizes.end() ? 1 : size->second);
  }
  return type;
}

std::string input_types_text(const ir::Graph& graph, const ir::Node& node, const DimSizes* sizes) {
  std::string text;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (i) text += ",";
    if (node.inputs[i] == ir::kNoValue) {
      text += "none";
      continue;
    }
    const ir::Value& value = graph.value(node.inputs[i]);
    text += value.kind == ir::ValueKind::kWeight ? "const " : "";
    text += ir::to_string(sizes ? with_sizes(value.type, *sizes) : value.type);
  }
  return text;
}

}  // namespace

CostCache CostCache::read(const std::string& path) {
  const Json root = parse_file(path);
  try {
    CostCache cache = cache_from(root);
    logger("cost")->debug("read {} entries from cost cache '{}'", cache.size(), path);
    return cache;
  } catch (const Error& error) {
    throw Error("cost cache '" + path + "': " + error.what());
  }
}

void CostCache::write(const std::string& path) const {
  write_atomically(path, to_json(*this).dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n");
  logger("cost")->debug("wrote {} entries to cost cache '{}'", size(), path);
}

const CacheEntry* CostCache::find(const std::string& signature, const std::string& backend) const {
  const auto it = entries_.find({signature, backend});
  return it == entries_.end() ? nullptr : &it->second;
}

void CostCache::merge(const CostCache& other) {
  for (const auto& item : other.entries_) entries_.insert(item);
  for (const auto& item : other.comparisons_) comparisons_.insert(item);
  for (const auto& item : other.observations_) observations_.insert(item);
}

const Observation* CostCache::find_observation(const std::string& signature) const {
  const auto it = observations_.find(signature);
  return it == observations_.end() ? nullptr : &it->second;
}

void CostCache::insert(Observation observation) {
  std::string key = observation.signature;
  observations_.insert_or_assign(std::move(key), std::move(observation));
}

std::vector<Observation> CostCache::observations() const {
  return values_of(observations_);
}

const Comparison* CostCache::find_comparison(const std::string& original, const std::string& candidate,
                                             const std::string& backend) const {
  const auto it = comparisons_.find({original, candidate, backend});
  return it == comparisons_.end() ? nullptr : &it->second;
}

void CostCache::insert(Comparison comparison) {
  auto key = std::make_tuple(comparison.original, comparison.candidate, comparison.backend);
  comparisons_.insert_or_assign(std::move(key), std::move(comparison));
}

std::vector<Comparison> CostCache::comparisons() const {
  return values_of(comparisons_);
}

void CostCache::insert(CacheEntry entry) {
  auto key = std::make_pair(entry.signature, entry.backend);
  entries_.insert_or_assign(std::move(key), std::move(entry));
}

std::vector<CacheEntry> CostCache::entries() const {
  return values_of(entries_);
}

std::string op_signature(const ir::Graph& graph, ir::NodeId id, const DimSizes* sizes) {
  const ir::Node& node = graph.node(id);
  return op_name(node) + "(" + attributes_text(node) + ";" + input_types_text(graph, node, sizes) + ")";
}

namespace {

/// True when one of the graph's inputs has the symbolic dim `symbol`.
bool uses_symbol(const ir::Graph& graph, const std::string& symbol) {
  for (ir::ValueId id : graph.inputs()) {
    for (const ir::Dim& dim : graph.value(id).type.shape.dims) {
      if (dim.symbol == symbol) return true;
    }
  }
  return false;
}

/// `kind`(<hash>;nodes=...): the format of graph_signature and, without the sizes of symbols by
/// name (the inputs' types at those sizes say what runs), of timing_signature.
std::string signature_with(const char* kind, uint64_t hash, const ir::Graph& graph, const DimSizes& sizes,
                           bool symbols) {
  std::string text = std::string(kind) + "(" + hex64(hash) + ";nodes=" + std::to_string(graph.node_count()) + ";";
  for (std::size_t i = 0; i < graph.inputs().size(); ++i) {
    text += (i ? "," : "") + ir::to_string(with_sizes(graph.value(graph.inputs()[i]).type, sizes));
  }
  for (const auto& [name, size] : sizes) {
    if (symbols && uses_symbol(graph, name)) text += ";" + name + "=" + std::to_string(size);
  }
  if (graph.model_info() && !graph.model_info()->value_info) text += ";no value_info";  // exported without
  return text + ")";
}

}  // namespace

std::string graph_signature(const ir::Graph& graph, const DimSizes& sizes) {
  return signature_with("Graph", graph.structural_hash(), graph, sizes, true);
}

std::string observation_signature(const ir::Graph& instance, std::vector<std::string> names, const DimSizes& sizes) {
  std::sort(names.begin(), names.end());
  uint64_t hash = ir::kHashSeed;
  for (const std::string& name : names) hash = ir::hash_string(hash, name);
  return graph_signature(instance, sizes) + ";observing=" + hex64(hash);
}

std::string timing_signature(const ir::Graph& graph, const DimSizes& sizes) {
  return signature_with("Timing", graph.timing_hash(), graph, sizes, false);
}

std::string describe(const CacheHeader& header) {
  std::string text = header.target + " on " + (header.device.empty() ? "an unnamed device" : header.device);
  if (!header.driver.empty()) text += ", driver " + header.driver;
  for (const auto& [name, version] : header.libraries) text += ", " + name + " " + version;
  for (const auto& [name, value] : header.settings) text += ", " + name + "=" + value;
  return text;
}

}  // namespace graphsub::cost

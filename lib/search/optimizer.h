// The one entry point of the search: split the graph, search each part, stitch, search the seams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>

#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/matcher.h"
#include "search/backtracking.h"
#include "search/split.h"

namespace graphsub::search {

/// Which search runs on each part.
enum class SearchMode {
  kBacktrack,   ///< MetaFlow Alg. 1 / TASO Alg. 2 (backtracking.h).
  kSampling,    ///< OCGGS Alg. 3 (sampling.h).
  kExhaustive,  ///< Every reachable graph (exhaustive.h): the oracle, for small graphs only.
};

/// "backtrack", "sampling", "exhaustive".
const char* to_string(SearchMode mode);
/// The mode of that name; throws graphsub::Error on another.
SearchMode search_mode_by_name(const std::string& name);

/// Checks an optimized part before it replaces the original part. The search ranks by a cost
/// model (a sum of node costs); a judge can run both parts in the target, which sees what a sum
/// cannot (a runtime's own fusions and layout changes across nodes), and veto the rewrite.
class PartJudge {
 public:
  /// What the judge says of a candidate.
  struct Verdict {
    bool keep = false;  ///< Whether the candidate should replace the original.
    double ratio = 1;   ///< The candidate's measured time over the original's; 1 where not measured.
  };

  virtual ~PartJudge() = default;
  /// Whether `candidate` should replace `original`: two standalone graphs with the same inputs
  /// and outputs, the second derived from the first by the search. `predicted_ratio` is the
  /// search's cost model's time of the candidate over the original's, both as written
  /// (CostModel::written_cost; below 1). Called from one thread.
  virtual Verdict verdict(const ir::Graph& original, const ir::Graph& candidate, double predicted_ratio) = 0;
};

/// The split of one input graph, kept between optimize calls on that same graph with the same
/// rules and options: the split depends only on the graph and the rules, and the measured search
/// searches one graph several times as its costs improve (finding the matches that weigh the cuts
/// takes seconds on wide graphs).
struct SplitMemo {
  uint64_t graph_hash = 0;
  std::size_t threshold = 0;
  std::vector<rewrite::Match> matches;  ///< Every match of the graph, two-step ones included.
  Partition partition;
  bool valid = false;
};

/// Searches of parts and seam regions, kept for later searches of graphs that hash alike
/// (ir::Graph::replica_hash: the same graph but for names and the values of large non-uniform
/// weights), under the same options. Such a graph is the same part in a later round or pass of
/// the measured search, or another layer of the same shapes (MaxViT-T's or a BERT's blocks):
/// its search would make the same decisions, so its result is the kept one's steps applied to
/// it (replay) rather than a search. Only searches that ended on their own (not at the time
/// limit) and during which the cost model gave no provisional answer
/// (CostModel::provisional_answers) are kept, so that a later search would find the same. One
/// memo serves one matcher and one cost model whose answers do not change while it lives; the
/// pipeline keeps one per measured search (its passes and rounds).
class SearchMemo {
 public:
  /// The search kept under `key`, without its best graph, or nullopt.
  std::optional<SearchResult> find(uint64_t key) const;
  /// Keeps `found` under `key`, less its best graph (a hit replays its steps).
  void keep(uint64_t key, const SearchResult& found);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, SearchResult> found_;
};

/// How to optimize a whole graph.
struct OptimizerOptions {
  SearchMode mode = SearchMode::kBacktrack;
  /// MetaFlow's split threshold: parts of at most this many nodes are searched on their own
  /// (MetaFlow and OCGGS used 30). 0 searches the whole graph at once.
  std::size_t split_threshold = 30;
  /// Parts searched at once; 0: one per hardware thread. The result does not depend on it
  /// (unless a time limit cuts searches short).
  int threads = 0;
  /// Nodes around a seam searched again after stitching, at most this × the threshold; larger
  /// seam regions are left as stitched.
  double seam_region_factor = 2;
  /// Graphs a part's search (and a seam region's) may expand. A part whose search reaches it is
  /// bisected again and its halves searched instead: a part's search space grows with the
  /// relaxed substitutions it holds and with its cost (α's window), not with its node count, so
  /// a threshold in nodes alone lets a few parts run to the budget. At 1000 every benchmark
  /// model and PyTorch export gets the cost it gets at 5000, up to 4 times faster
  /// (lib/search/README.md). 0: parts are never split again. Unused when the graph is searched
  /// whole (split_threshold 0).
  int64_t part_budget = 1000;
  /// Limits of each part's search (the time limit is for the whole run).
  SearchOptions search;
  /// When set, every part and seam region the search changed is kept only if the judge agrees.
  /// Not used when the graph is searched as one part (its caller checks the whole result).
  PartJudge* judge = nullptr;
  /// Steps around a changed part whose cheap nodes the judge times with it (with_neighbours in
  /// subgraph.h), so that it sees the runtime's fusions across the part's boundary.
  int context_depth = 4;
  /// A changed part or seam region is put to the judge only where it costs at most this fraction
  /// of the original, both as written (CostModel::written_cost), and otherwise stays as it was.
  /// As written, a result whose rewrites are all fusions export writes back costs what the part
  /// costs; and the judge keeps a part only for a gain beyond its noise (1-1.3 % of the part's
  /// time here): of 42 results priced at 0.99 or more in eighteen cold runs (2026-12-07,
  /// eighteenth session: the zoo's CNNs and transformers, the block, MobileOne-S0, RepViT-M1,
  /// FastViT-T8), none was kept, and 16 of the BERT classifier's 25 judgings were such.
  double judge_below = 0.99;
  /// Where the judge refuses a part's result and measured it at least `retry_above` times the
  /// part's time (slower beyond noise: one of its rewrites loses, as one that stops a runtime's
  /// fusion does), the part is searched again less each rule that result used, in turn; at most
  /// this many of those alternatives are judged, from the lowest cost up. 0: a refused part stays
  /// as it is.
  int retries = 2;
  /// A refused result about even with its part (its rewrites win nothing measurable) is not
  /// searched again: ResNet-50's and ViT-B/16's refused parts measured 0.994-1.013 of their time,
  /// none of the alternatives judged for them was kept, and judging those took 10-15 s of a cold
  /// run.
  double retry_above = 1.02;
  /// An alternative is judged only where its cost is at most this fraction of the part's: the
  /// judge keeps a part only for a gain beyond its noise (1-1.3 % of the part's time here).
  double retry_below = 0.97;
  /// When set, the split of the input is taken from here if it was computed for the same graph
  /// and threshold, and stored here otherwise.
  SplitMemo* split_memo = nullptr;
  /// When set, part and seam region searches are taken from here where it kept one of a graph
  /// that hashes alike, and kept here when final.
  SearchMemo* search_memo = nullptr;
};

/// What the split did.
struct SplitStats {
  std::size_t parts = 1;
  std::size_t largest_part = 0;     ///< Nodes.
  std::size_t disabled_matches = 0; ///< Matches of the input graph that the cuts disabled.
  std::size_t resplit_parts = 0;    ///< Parts split again because their search reached the part budget.
  std::size_t reused_parts = 0;     ///< Part searches taken from the SearchMemo.
  std::size_t reused_seams = 0;     ///< Seam region searches taken from the SearchMemo.
  std::size_t seam_regions = 0;     ///< Regions around seams searched again.
  std::size_t seam_steps = 0;       ///< Substitutions found there.
  std::size_t judged = 0;           ///< Changed parts and seam regions the judge was asked about.
  std::size_t rejected = 0;         ///< Of those, the ones it refused.
  std::size_t retried = 0;          ///< Of those, alternatives judged after a refusal (less one rule).
  /// Changed parts and seam regions left as they were without asking the judge: as written
  /// (CostModel::written_cost) they cost more than OptimizerOptions::judge_below of the original.
  std::size_t unjudged = 0;
  double split_seconds = 0;
  double parts_seconds = 0;
  double seam_seconds = 0;
};

/// A search's result and, when the graph was split, how.
struct OptimizeResult {
  SearchResult search;  ///< Over the whole graph: costs, every step (parts in order, then seams), counters.
  SplitStats split;
};

/// Optimizes `input`: split into parts of at most the threshold (MetaFlow Alg. 2), each part
/// searched with the mode's search on its own thread, the optimized parts stitched back, and the
/// regions around the seams searched again for substitutions the cuts disabled. The result is
/// never costlier than the input and does not depend on the thread count or timing, except where
/// the time limit stops a search.
OptimizeResult optimize(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
                        const OptimizerOptions& options);

/// The mode's search on one graph, unsplit.
SearchResult run_search(SearchMode mode, const ir::Graph& input, const rewrite::Matcher& matcher,
                        const cost::CostModel& model, const SearchOptions& options);

}  // namespace graphsub::search

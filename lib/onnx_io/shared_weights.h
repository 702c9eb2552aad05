// One external data file that the models exported into a folder share, each weight written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace graphsub::onnx_io {

/// A data file in a folder, which the models exported there with ExportOptions::shared_weights
/// reference as ONNX external data: each weight of at least `min_bytes` is written to it once,
/// at an offset aligned to a memory page (onnxruntime maps such a tensor instead of copying it),
/// and every later model holding the same tensor, or one of equal content, points to those
/// bytes. The measured target writes dozens of candidates of one model for the worker to time;
/// with this, a BERT-base candidate is a 0.2 MB file instead of 440 MB, and onnxruntime creates
/// its session in 0.2 s instead of 0.5 s (its weights mapped, not read and copied). The timed
/// runs are the same within noise: bench measured a model with inline and with mapped weights
/// 1.000x-1.004x apart (models/README.md, 2026-12-06).
///
/// Not thread-safe: one exporter at a time, as the profiler exports.
class SharedWeights {
 public:
  /// The file `file_name` in `folder`, created empty (replacing any earlier one).
  SharedWeights(std::string folder, std::string file_name = "weights.data", std::size_t min_bytes = 64 << 10);
  SharedWeights(const SharedWeights&) = delete;
  SharedWeights& operator=(const SharedWeights&) = delete;
  ~SharedWeights();

  /// Where a weight's bytes are in the file.
  struct Place {
    std::size_t offset = 0;
    std::size_t length = 0;
  };

  const std::string& folder() const { return folder_; }
  const std::string& file_name() const { return file_name_; }
  std::size_t min_bytes() const { return min_bytes_; }
  /// Bytes written to the file so far, alignment padding included.
  std::size_t file_bytes() const { return end_; }
  /// How many weights were written, and how many placements found their bytes already there.
  int64_t written() const { return written_; }
  int64_t reused() const { return reused_; }

  /// The place of `tensor`'s bytes, which are `bytes` (the tensor's own may be lent out to the
  /// model being written: ModelWriter's DataLoan), written to the file unless the same tensor
  /// (still alive) or an equal one (same content hash `hash` and the same bytes on file) was.
  Place place(const ir::TensorPtr& tensor, uint64_t hash, const std::string& bytes);

 private:
  bool file_holds(const Place& place, const std::string& bytes) const;

  struct Known {
    std::weak_ptr<const ir::Tensor> tensor;
    Place place;
  };
  std::string folder_;
  std::string file_name_;
  std::size_t min_bytes_;
  int fd_ = -1;
  std::size_t end_ = 0;
  int64_t written_ = 0;
  int64_t reused_ = 0;
  std::map<const ir::Tensor*, Known> by_tensor_;
  std::multimap<std::pair<uint64_t, std::size_t>, Place> by_content_;
};

}  // namespace graphsub::onnx_io

// SharedWeights: a data file of weights written once, referenced by many exported models.
#include "onnx_io/shared_weights.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace graphsub::onnx_io {
namespace {

/// Offsets are aligned to this (a memory page), so that onnxruntime can map each tensor.
constexpr std::size_t kAlignment = 4096;

void write_all(int fd, const char* data, std::size_t size, std::size_t offset, const std::string& path) {
  while (size > 0) {
    const ssize_t done = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
    data += done;
    size -= static_cast<std::size_t>(done);
    offset += static_cast<std::size_t>(done);
  }
}

}  // namespace

SharedWeights::SharedWeights(std::string folder, std::string file_name, std::size_t min_bytes)
    : folder_(std::move(folder)), file_name_(std::move(file_name)), min_bytes_(min_bytes) {
  const std::string path = folder_ + "/" + file_name_;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
}

SharedWeights::~SharedWeights() {
  if (fd_ >= 0) ::close(fd_);
}

bool SharedWeights::file_holds(const Place& place, const std::string& bytes) const {
  if (place.length != bytes.size()) return false;
  std::string on_file(place.length, '\0');
  std::size_t done = 0;
  while (done < on_file.size()) {
    const ssize_t got = ::pread(fd_, on_file.data() + done, on_file.size() - done,
                                static_cast<off_t>(place.offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return on_file == bytes;
}

SharedWeights::Place SharedWeights::place(const ir::TensorPtr& tensor, uint64_t hash, const std::string& bytes) {
  const auto known = by_tensor_.find(tensor.get());
  // The same tensor, still alive (an expired entry's address may now hold another tensor).
  if (known != by_tensor_.end() && known->second.tensor.lock() == tensor) {
    ++reused_;
    return known->second.place;
  }
  const std::pair<uint64_t, std::size_t> key{hash, bytes.size()};
  for (auto [it, end] = by_content_.equal_range(key); it != end; ++it) {
    if (!file_holds(it->second, bytes)) continue;
    by_tensor_[tensor.get()] = Known{tensor, it->second};
    ++reused_;
    return it->second;
  }
  const Place place{(end_ + kAlignment - 1) / kAlignment * kAlignment, bytes.size()};
  write_all(fd_, bytes.data(), bytes.size(), place.offset, folder_ + "/" + file_name_);
  end_ = place.offset + place.length;
  by_tensor_[tensor.get()] = Known{tensor, place};
  by_content_.emplace(key, place);
  ++written_;
  return place;
}

}  // namespace graphsub::onnx_io

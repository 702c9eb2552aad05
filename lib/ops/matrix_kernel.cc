// Cache-blocked matrix multiply: B and A are packed into contiguous panels, which a register tile
// of C then streams through; every loop the compiler vectorizes runs over columns of C.
#include "ops/matrix_kernel.h"

#include <algorithm>
#include <vector>

namespace graphsub::ops {
namespace {

/// K per block: the products of one block are summed in a register before they reach C.
constexpr int64_t kBlockDepth = 256;
/// Rows of A packed at a time: a kBlockRows x kBlockDepth panel (128 KiB of float) stays in L2.
constexpr int64_t kBlockRows = 128;
/// Columns of B packed at a time: a kBlockDepth x kBlockCols panel (1 MiB of float).
constexpr int64_t kBlockCols = 1024;
/// Rows of C one register tile covers.
constexpr int64_t kTileRows = 4;
/// Columns of C one register tile covers: 32 bytes per row, so the 4 x 8 float (or 4 x 4 double)
/// accumulators take 8 of SSE2's 16 vector registers and leave room for the operands.
template <class T>
constexpr int64_t kTileCols = 32 / static_cast<int64_t>(sizeof(T));

/// Where one block of the product sits: rows [row, row + rows) of A and C, depths [depth, depth +
/// depths), columns [col, col + cols) of B and C.
struct Block {
  int64_t row, rows;
  int64_t depth, depths;
  int64_t col, cols;
};

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

/// Copies A's block into panels of kTileRows rows, each stored depth by depth (kTileRows values
/// per depth), zero-filling the rows past the block's end.
template <class T>
void pack_a(MatrixView<T> a, const Block& block, T* packed) {
  for (int64_t panel = 0; panel < block.rows; panel += kTileRows) {
    for (int64_t p = 0; p < block.depths; ++p) {
      for (int64_t r = 0; r < kTileRows; ++r) {
        const int64_t i = panel + r;
        *packed++ = i < block.rows ? a.data[(block.row + i) * a.row_stride + (block.depth + p) * a.col_stride]
                                   : T{0};
      }
    }
  }
}

/// Copies B's block into panels of kTileCols columns, each stored depth by depth (kTileCols values
/// per depth), zero-filling the columns past the block's end.
template <class T>
void pack_b(MatrixView<T> b, const Block& block, T* packed) {
  constexpr int64_t kCols = kTileCols<T>;
  for (int64_t panel = 0; panel < block.cols; panel += kCols) {
    const int64_t cols = std::min(kCols, block.cols - panel);
    for (int64_t p = 0; p < block.depths; ++p, packed += kCols) {
      const T* row = b.data + (block.depth + p) * b.row_stride + (block.col + panel) * b.col_stride;
      for (int64_t j = 0; j < cols; ++j) packed[j] = row[j * b.col_stride];
      std::fill(packed + cols, packed + kCols, T{0});
    }
  }
}

/// C[rows, cols] += the product of one packed A panel and one packed B panel over `depths`; the
/// tile is always computed whole (zero padding), then only its valid part is added to C.
template <class T>
void multiply_tile(const T* a_panel, const T* b_panel, int64_t depths, T* c, int64_t c_row_stride,
                   int64_t rows, int64_t cols) {
  constexpr int64_t kCols = kTileCols<T>;
  T sums[kTileRows][kCols] = {};
  for (int64_t p = 0; p < depths; ++p) {
    for (int64_t r = 0; r < kTileRows; ++r) {
      for (int64_t j = 0; j < kCols; ++j) sums[r][j] += a_panel[p * kTileRows + r] * b_panel[p * kCols + j];
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) c[r * c_row_stride + j] += sums[r][j];
  }
}

/// C's block += packed A block * packed B block, tile by tile.
template <class T>
void multiply_block(const T* packed_a, const T* packed_b, const Block& block, T* c, int64_t c_row_stride) {
  constexpr int64_t kCols = kTileCols<T>;
  for (int64_t j = 0; j < block.cols; j += kCols) {
    const T* b_panel = packed_b + j * block.depths;
    for (int64_t i = 0; i < block.rows; i += kTileRows) {
      multiply_tile(packed_a + i * block.depths, b_panel, block.depths,
                    c + (block.row + i) * c_row_stride + block.col + j, c_row_stride,
                    std::min(kTileRows, block.rows - i), std::min(kCols, block.cols - j));
    }
  }
}

/// Sets C[M, N] to zero.
template <class T>
void clear(ProductSizes sizes, T* c, int64_t c_row_stride) {
  for (int64_t i = 0; i < sizes.m; ++i) {
    std::fill(c + i * c_row_stride, c + i * c_row_stride + sizes.n, T{0});
  }
}

}  // namespace

template <class T>
void multiply_matrices(ProductSizes sizes, MatrixView<T> a, MatrixView<T> b, T* c, int64_t c_row_stride,
                       bool accumulate) {
  if (!accumulate) clear(sizes, c, c_row_stride);
  const int64_t depths = std::min(sizes.k, kBlockDepth);
  std::vector<T> packed_b(depths * round_up(std::min(sizes.n, kBlockCols), kTileCols<T>));
  std::vector<T> packed_a(depths * round_up(std::min(sizes.m, kBlockRows), kTileRows));
  for (int64_t col = 0; col < sizes.n; col += kBlockCols) {
    // K blocks in increasing order, so each C element sums its block sums in a fixed order.
    for (int64_t depth = 0; depth < sizes.k; depth += kBlockDepth) {
      Block block{0, 0, depth, std::min(kBlockDepth, sizes.k - depth),
                  col, std::min(kBlockCols, sizes.n - col)};
      pack_b(b, block, packed_b.data());
      for (; block.row < sizes.m; block.row += kBlockRows) {
        block.rows = std::min(kBlockRows, sizes.m - block.row);
        pack_a(a, block, packed_a.data());
        multiply_block(packed_a.data(), packed_b.data(), block, c, c_row_stride);
      }
    }
  }
}

template void multiply_matrices<float>(ProductSizes, MatrixView<float>, MatrixView<float>, float*,
                                       int64_t, bool);
template void multiply_matrices<double>(ProductSizes, MatrixView<double>, MatrixView<double>, double*,
                                        int64_t, bool);

}  // namespace graphsub::ops

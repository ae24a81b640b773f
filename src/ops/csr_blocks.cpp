// The row blocks of the CSR operator's rows (see RowBlocks in csr.hpp): the
// cut by dynamic programming, and the blocks filled column by column. Their
// kernels are in csr_blocks.hpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "csr_build.hpp"

namespace asyncsolve::ops::detail {

BlockCut cut_blocks(const CsrBlock& csr, const CsrBlock* also) {
  constexpr int lanes = RowBlocks::lanes;
  const int rows = csr.rows();
  std::int32_t columns = 0;  // csr's; also's come after them
  for (const std::int32_t c : csr.col) columns = std::max(columns, c + 1);
  std::int32_t also_columns = 0;
  if (also != nullptr)
    for (const std::int32_t c : also->col) also_columns = std::max(also_columns, c + 1);
  // unions[p]: how many columns rows p .. q - 1 hold together, for the
  // blocks [p, q) that may end at q; last[c]: the last row before q that
  // holds column c (-1: none). Adding row q - 1 adds column c to the
  // unions starting after last[c]: one update a non-zero, not one per
  // block that may hold it.
  std::vector<std::int64_t> unions(static_cast<std::size_t>(rows), 0);
  std::vector<std::int32_t> last(static_cast<std::size_t>(columns) + also_columns, -1);
  std::vector<std::int64_t> best(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<std::int32_t> cut(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<std::int32_t> width(static_cast<std::size_t>(rows) + 1, 0);
  for (const RowRun& run : csr.runs) {
    for (int q = run.position + 1; q <= run.position + run.count; ++q) {
      const int r = q - 1;
      const int first = std::max(run.position, q - lanes);  // the earliest start
      std::array<std::int64_t, lanes + 1> gained{};  // gained[t]: new from start first + t on
      const auto add = [&](std::int32_t c) {
        std::int32_t& l = last[c];
        ++gained[std::min(std::max(l + 1, first) - first, lanes)];  // (l == r: a repeat, ignored)
        l = r;
      };
      for (std::int32_t k = csr.ptr[r]; k < csr.ptr[r + 1]; ++k) add(csr.col[k]);
      if (also != nullptr)
        for (std::int32_t k = also->ptr[r]; k < also->ptr[r + 1]; ++k) add(columns + also->col[k]);
      unions[r] = 0;
      std::int64_t added = 0;
      best[q] = std::numeric_limits<std::int64_t>::max();
      for (int p = first; p < q; ++p) {
        added += gained[p - first];
        unions[p] += added;
        const std::int64_t cost = best[p] + lanes * (unions[p] + 1);
        if (cost < best[q]) {
          best[q] = cost;
          cut[q] = p;
          width[q] = static_cast<std::int32_t>(unions[p]);
        }
      }
    }
  }
  BlockCut out;
  for (int q = rows; q > 0; q = cut[q]) {
    out.ends.push_back(q);
    out.stored += static_cast<std::int64_t>(lanes) * width[q];
  }
  std::reverse(out.ends.begin(), out.ends.end());
  return out;
}

/// `csr`'s rows in the row blocks ending at `ends` (cut_blocks): the
/// blocks' columns first, then the values, allocated once.
RowBlocks fill_blocks(const CsrBlock& csr, const std::vector<std::int32_t>& ends) {
  constexpr int lanes = RowBlocks::lanes;
  std::int32_t columns = 0;
  for (const std::int32_t c : csr.col) columns = std::max(columns, c + 1);
  RowBlocks out;
  out.row.reserve(ends.size());
  out.position.reserve(ends.size() + 1);
  out.col_start.reserve(ends.size() + 1);
  std::vector<std::int32_t> mark(static_cast<std::size_t>(columns),
                                 -1);  // mark[c] == p: c in block p's
  std::vector<std::int32_t> scratch;
  auto run = csr.runs.begin();
  int p = 0;
  for (const int q : ends) {
    while (run->position + run->count <= p) ++run;
    scratch.resize(static_cast<std::size_t>(csr.ptr[q] - csr.ptr[p]) + 1);
    std::int32_t* u = scratch.data();
    for (std::int32_t k = csr.ptr[p]; k < csr.ptr[q]; ++k) {
      std::int32_t& m = mark[csr.col[k]];
      *u = csr.col[k];  // kept (u advances) only if new: branch-free
      u += m != p ? 1 : 0;
      m = p;
    }
    std::sort(scratch.data(), u);
    out.col.insert(out.col.end(), scratch.data(), u);
    out.row.push_back(run->first + (p - run->position));
    out.position.push_back(q);
    out.col_start.push_back(static_cast<std::int32_t>(out.col.size()));
    p = q;
  }
  out.val.assign(static_cast<std::size_t>(lanes) * out.col.size(), 0.0);
  std::vector<std::int32_t>& where = mark;  // column -> place in the block's union
  for (int b = 0; b < out.blocks(); ++b) {
    for (std::int32_t j = out.col_start[b]; j < out.col_start[b + 1]; ++j) where[out.col[j]] = j;
    for (int r = out.position[b]; r < out.position[b + 1]; ++r) {
      for (std::int32_t k = csr.ptr[r]; k < csr.ptr[r + 1]; ++k)
        out.val[static_cast<std::size_t>(lanes) * where[csr.col[k]] + (r - out.position[b])] =
            csr.val[k];
    }
  }
  return out;
}

}  // namespace asyncsolve::ops::detail

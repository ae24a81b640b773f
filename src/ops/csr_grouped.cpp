// The grouped CSR layout of the CSR operator's rows (see CsrBlock in
// csr.hpp): consecutive rows with identical columns grouped. Its kernels
// are in csr_grouped.hpp.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "csr_build.hpp"

namespace asyncsolve::ops::detail {
namespace {

/// Whether the rows at positions p and q of `block` have the same columns.
bool same_columns(const CsrBlock& block, int p, int q) noexcept {
  return block.ptr[p + 1] - block.ptr[p] == block.ptr[q + 1] - block.ptr[q] &&
         std::equal(block.col.begin() + block.ptr[p], block.col.begin() + block.ptr[p + 1],
                    block.col.begin() + block.ptr[q]);
}

}  // namespace

/// Groups `block`'s rows: consecutive rows of a run with the same columns
/// (in `also` as well, a block of the same rows, if given), up to
/// CsrBlock::max_group. Kept only where the groups average at least 1.5
/// rows (else the block stays ungrouped, multiplied row by row).
void group_rows(CsrBlock& block, const CsrBlock* also) {
  std::vector<std::int32_t> groups{0};
  for (const RowRun& run : block.runs) {
    for (int p = run.position; p < run.position + run.count;) {
      int q = p + 1;
      while (q < run.position + run.count && q - p < CsrBlock::max_group &&
             same_columns(block, p, q) && (also == nullptr || same_columns(*also, p, q)))
        ++q;
      groups.push_back(q);
      p = q;
    }
  }
  const auto count = static_cast<std::int64_t>(groups.size()) - 1;
  if (count > 0 && 2 * static_cast<std::int64_t>(block.rows()) >= 3 * count)
    block.groups = std::move(groups);
}

}  // namespace asyncsolve::ops::detail

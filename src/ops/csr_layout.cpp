// The CSR operator's layouts, chosen and built: the rows split into
// interior and boundary blocks, the named policy that picks each block's
// layout (choose_interior_layout, choose_boundary_layout), and the names
// the result documents use. The layouts themselves are built by
// csr_grouped.cpp, csr_sell.cpp and csr_blocks.cpp.
#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "csr_build.hpp"

namespace asyncsolve::ops {
namespace {

/// Appends local row `row` of `m` to `block` (entries whose local column
/// satisfies `keep`, shifted by `shift`), extending the last run or starting one.
template <class Keep>
void append_row(CsrBlock& block, const sparse::DistMatrix& m, int row, Keep&& keep, int shift) {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[row]; k < ptr[row + 1]; ++k) {
    const std::int32_t c = m.col()[k];
    if (!keep(c)) continue;
    block.col.push_back(c - shift);
    block.val.push_back(m.val()[k]);
  }
  if (block.val.size() > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("CsrOperator: more than 2^31 - 1 entries on one rank");
  block.ptr.push_back(static_cast<std::int32_t>(block.col.size()));
  const int position = block.rows() - 1;
  if (!block.runs.empty() && block.runs.back().first + block.runs.back().count == row) {
    ++block.runs.back().count;
  } else {
    block.runs.push_back({row, 1, position});
  }
}

/// `stored`, or nothing if it exceeds the layouts' 32-bit offsets.
std::optional<std::int64_t> within_offsets(std::int64_t stored) noexcept {
  return stored <= INT32_MAX ? std::optional<std::int64_t>(stored) : std::nullopt;
}

}  // namespace

std::string_view layout_name(InteriorLayout layout) noexcept {
  return core::enum_name(interior_layout_names, layout);
}

std::string_view layout_name(BoundaryLayout layout) noexcept {
  return core::enum_name(boundary_layout_names, layout);
}

InteriorLayout choose_interior_layout(
    std::int64_t nonzeros, std::optional<std::int64_t> sell_stored,
    const std::function<std::optional<std::int64_t>()>& blocks_stored) {
  const auto nnz = static_cast<double>(nonzeros);
  if (sell_stored && static_cast<double>(*sell_stored) <= (1.0 + sell_max_padding) * nnz)
    return InteriorLayout::sell8;
  const std::optional<std::int64_t> blocks = blocks_stored();
  if (blocks && static_cast<double>(*blocks) <= blocks_max_values_per_nonzero * nnz)
    return InteriorLayout::blocks;
  return InteriorLayout::csr;
}

BoundaryLayout choose_boundary_layout(std::int64_t nonzeros,
                                      std::optional<std::int64_t> blocks_stored) noexcept {
  return blocks_stored && static_cast<double>(*blocks_stored) <=
                              blocks_max_values_per_nonzero * static_cast<double>(nonzeros)
             ? BoundaryLayout::blocks
             : BoundaryLayout::csr;
}

namespace detail {

double diagonal_of(const sparse::DistMatrix& m, int i) noexcept {
  const auto& ptr = m.row_ptr();
  for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k)
    if (m.col()[k] == i) return m.val()[k];
  return 0.0;
}

}  // namespace detail

CsrOperator::CsrOperator(const sparse::DistMatrix& m, std::optional<InteriorLayout> layout,
                         bool compress_values)
    : rows_(m.local_rows()), ghosts_(m.plan().ghosts) {
  const int n = rows_;
  diagonal_.resize(static_cast<std::size_t>(n));
  const auto owned = [n](std::int32_t c) { return c < n; };
  const auto ghost = [n](std::int32_t c) { return c >= n; };
  interior_.col.reserve(m.col().size());
  interior_.val.reserve(m.val().size());
  interior_.ptr.reserve(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i < n; ++i) {
    diagonal_[i] = detail::diagonal_of(m, i);
    bool interior = true;
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      interior = interior && m.col()[k] < n;
    if (interior) {
      append_row(interior_, m, i, owned, 0);
    } else {
      append_row(boundary_local_, m, i, owned, 0);
      append_row(boundary_ghost_, m, i, ghost, n);
    }
  }
  interior_nnz_ = static_cast<std::int64_t>(interior_.val.size());
  lay_out_boundary();
  lay_out_interior(layout, compress_values);
}

void CsrOperator::lay_out_boundary() {
  // One cut for the owned and the ghost columns.
  const detail::BlockCut edge = detail::cut_blocks(boundary_local_, &boundary_ghost_);
  const auto nonzeros =
      static_cast<std::int64_t>(boundary_local_.val.size() + boundary_ghost_.val.size());
  boundary_layout_ = boundary_local_.rows() > 0
                         ? choose_boundary_layout(nonzeros, within_offsets(edge.stored))
                         : BoundaryLayout::csr;
  if (boundary_layout_ == BoundaryLayout::blocks) {
    boundary_local_blocks_ = detail::fill_blocks(boundary_local_, edge.ends);
    boundary_ghost_blocks_ = detail::fill_blocks(boundary_ghost_, edge.ends);
  } else {
    detail::group_rows(boundary_local_, &boundary_ghost_);
  }
}

void CsrOperator::lay_out_interior(std::optional<InteriorLayout> layout, bool compress_values) {
  std::optional<detail::SellShape> shape;
  std::optional<detail::BlockCut> cut;
  const auto blocks_stored = [&]() -> std::optional<std::int64_t> {
    cut = detail::cut_blocks(interior_, nullptr);
    return within_offsets(cut->stored);
  };
  if (!layout) {
    shape = detail::sell_shape(interior_);
    layout = choose_interior_layout(interior_nnz_, within_offsets(shape->stored), blocks_stored);
  }
  layout_ = *layout;
  switch (layout_) {
    case InteriorLayout::sell8:
      if (!shape) shape = detail::sell_shape(interior_);
      sell_ = detail::to_sell(interior_, *shape, compress_values);
      break;
    case InteriorLayout::blocks:
      if (!cut) cut = detail::cut_blocks(interior_, nullptr);
      if (!within_offsets(cut->stored)) {
        throw std::length_error(
            "CsrOperator: row blocks need more than 2^31 - 1 values on one rank");
      }
      blocks_ = detail::fill_blocks(interior_, cut->ends);
      break;
    case InteriorLayout::csr:
      detail::group_rows(interior_);
      return;
  }
  interior_.col = {};  // the entries live in sell_ or blocks_ now
  interior_.val = {};
}

}  // namespace asyncsolve::ops

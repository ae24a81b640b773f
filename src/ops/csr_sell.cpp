// The SELL-8 layout of the CSR operator's interior rows (see SellBlock in
// csr.hpp): the slices' widths, and the slices laid out step by step, each
// step's columns and values compressed where they allow. Its kernels are in
// csr_sell.hpp.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "csr_build.hpp"

namespace asyncsolve::ops::detail {
namespace {

/// Lays out the slice whose lane l is the row at position p[l] (-1: none)
/// and local row row0 + l, `width` steps long: entry[t * lanes + l] is the
/// CSR entry at step t of lane l, or -1 for padding. Aligned on the rows'
/// column offsets if there are no more than `width` of them, else entry j
/// of a lane at step j. `offsets` is scratch space, reused across slices.
void slice_entries(const CsrBlock& csr, const std::array<int, SellBlock::lanes>& p, int row0,
                   std::int32_t width, std::vector<std::int64_t>& offsets,
                   std::vector<std::int32_t>& entry) {
  constexpr int lanes = SellBlock::lanes;
  const auto offset = [&](int l, std::int32_t k) {
    return static_cast<std::int64_t>(csr.col[k]) - (row0 + l);
  };
  offsets.clear();
  for (int l = 0; l < lanes; ++l) {
    if (p[l] < 0) continue;
    for (std::int32_t k = csr.ptr[p[l]]; k < csr.ptr[p[l] + 1]; ++k)
      offsets.push_back(offset(l, k));
  }
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  const bool aligned = offsets.size() <= static_cast<std::size_t>(width);
  entry.assign(static_cast<std::size_t>(width) * lanes, -1);
  for (int l = 0; l < lanes; ++l) {
    if (p[l] < 0) continue;
    for (std::int32_t k = csr.ptr[p[l]], j = 0; k < csr.ptr[p[l] + 1]; ++k, ++j) {
      const auto t =
          aligned ? std::lower_bound(offsets.begin(), offsets.end(), offset(l, k)) - offsets.begin()
                  : j;
      entry[static_cast<std::size_t>(t) * lanes + l] = k;
    }
  }
}

/// Whether a and b are the same bits (-0.0 and 0.0 differ, a NaN equals
/// its own bits).
bool same_bits(double a, double b) noexcept {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

SellShape sell_shape(const CsrBlock& csr) {
  constexpr int lanes = SellBlock::lanes;
  SellShape shape;
  for (const RowRun& run : csr.runs) {
    for (int lane0 = 0; lane0 < run.count; lane0 += lanes) {
      std::int32_t width = 0;
      for (int l = 0; l < lanes && lane0 + l < run.count; ++l) {
        const int p = run.position + lane0 + l;
        width = std::max(width, csr.ptr[p + 1] - csr.ptr[p]);
      }
      shape.widths.push_back(width);
      shape.stored += static_cast<std::int64_t>(width) * lanes;
    }
  }
  return shape;
}

SellBlock to_sell(const CsrBlock& csr, const SellShape& shape, bool compress_values) {
  constexpr int lanes = SellBlock::lanes;
  if (shape.stored > INT32_MAX)
    throw std::length_error("CsrOperator: SELL-8 needs more than 2^31 - 1 entries on one rank");
  const std::vector<std::int32_t>& widths = shape.widths;
  const std::int64_t stored = shape.stored;
  SellBlock sell;
  sell.val.reserve(static_cast<std::size_t>(stored));
  sell.steps.reserve(static_cast<std::size_t>(stored / lanes));
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> entry;
  std::size_t slice = 0;
  for (const RowRun& run : csr.runs) {
    sell.run_slice.push_back(static_cast<int>(slice));
    for (int lane0 = 0; lane0 < run.count; lane0 += lanes, ++slice) {
      const std::int32_t width = widths[slice];
      const int row0 = run.first + lane0;
      std::array<int, lanes> p{};
      for (int l = 0; l < lanes; ++l) p[l] = lane0 + l < run.count ? run.position + lane0 + l : -1;
      slice_entries(csr, p, row0, width, offsets, entry);
      for (std::int32_t t = 0; t < width; ++t) {
        const std::int32_t* e = entry.data() + static_cast<std::ptrdiff_t>(t) * lanes;
        SellStep step;
        std::int64_t base = -1;  // the c of a consecutive step
        bool consecutive = true;
        std::int32_t first = -1;  // the first lane's entry
        bool uniform = compress_values;
        for (int l = 0; l < lanes; ++l) {
          if (e[l] < 0) continue;
          step.real = static_cast<std::uint8_t>(step.real | (1U << l));
          const std::int64_t c = static_cast<std::int64_t>(csr.col[e[l]]) - l;
          consecutive = consecutive && (base < 0 || c == base) && c >= 0;
          base = c;
          if (first < 0) first = e[l];
          uniform = uniform && same_bits(csr.val[e[l]], csr.val[first]);
        }
        step.consecutive = consecutive ? 1 : 0;
        step.uniform = uniform && first >= 0 ? 1 : 0;
        if (step.uniform != 0) {
          sell.val.push_back(csr.val[first]);
        } else {
          for (int l = 0; l < lanes; ++l) sell.val.push_back(e[l] < 0 ? 0.0 : csr.val[e[l]]);
        }
        if (consecutive) {
          sell.col.push_back(static_cast<std::int32_t>(base));
        } else {
          for (int l = 0; l < lanes; ++l) sell.col.push_back(e[l] < 0 ? 0 : csr.col[e[l]]);
        }
        sell.steps.push_back(step);
      }
      sell.start.push_back(sell.start.back() + width * lanes);
      sell.col_start.push_back(static_cast<std::int32_t>(sell.col.size()));
      sell.val_start.push_back(static_cast<std::int32_t>(sell.val.size()));
    }
  }
  return sell;
}

}  // namespace asyncsolve::ops::detail

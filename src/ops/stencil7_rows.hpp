#pragma once
// Internal to stencil7.cpp: what every pass of the 7-point stencil shares
// (the bytes it charges, the cache sizes that decide the row blocking, and
// the blocked traversal of a field's rows).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>

#include "asyncsolve/core/cost.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops::stencil7_detail {

using grid::Field;

constexpr double sixth = 1.0 / 6.0;

/// What a stencil pass writes besides (or instead of) the residual.
enum class Store {
  none,    ///< nothing: the residual alone
  normal,  ///< u_new through the cache
  stream,  ///< u_new with streaming stores past the cache (aligned vectors)
};

/// Reports `streams` passes over planes [k_begin, k_end) of `u`'s interior
/// (8 B per point each) to the cost meter (the simulation build's compute
/// model; the Jacobi sweep is 2 streams, 16 B per point).
inline void charge_planes(const Field& u, int k_begin, int k_end, int streams) noexcept {
  const auto& n = u.interior();
  core::charge_bytes(8.0 * streams * n[0] * n[1] * (k_end - k_begin));
}

/// Bytes of the largest data cache at `level` (2 or 3) that this process
/// sees: Linux's sysfs first (right inside virtual machines, where sysconf
/// may report the whole host's L3), then sysconf, then `fallback`.
inline std::size_t cache_bytes(int level, std::size_t fallback) noexcept {
  std::size_t best = 0;
  try {
    const std::string cpu0 = "/sys/devices/system/cpu/cpu0/cache/index";
    for (int index = 0; index < 16; ++index) {
      std::ifstream level_file(cpu0 + std::to_string(index) + "/level");
      if (!level_file) break;
      int found = 0;
      std::string type;
      level_file >> found;
      std::ifstream(cpu0 + std::to_string(index) + "/type") >> type;
      if (found != level || type == "Instruction") continue;
      std::size_t value = 0;
      char unit = 0;
      std::ifstream size_file(cpu0 + std::to_string(index) + "/size");
      if (!(size_file >> value)) continue;
      size_file >> unit;
      if (unit == 'K') value *= 1024;
      if (unit == 'M') value *= std::size_t{1024} * 1024;
      if (value > best) best = value;
    }
  } catch (...) {
    best = 0;
  }
  if (best == 0) {
    const long bytes = ::sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
    best = bytes > 0 ? static_cast<std::size_t>(bytes) : fallback;
  }
  return best;
}

/// Whether `bytes` of fields are too many to stay in the last-level cache
/// from one kernel call to the next. Conservative when ranks share the
/// cache: each rank compares its own fields with the whole cache.
[[maybe_unused]] inline bool out_of_cache(std::size_t bytes) noexcept {
  static const std::size_t l3 = cache_bytes(3, std::size_t{32} << 20);
  return bytes > l3;
}

/// Rows per block of the j loop (the loops run: blocks of rows, k, j). Each
/// value of u is read as the top neighbour of a row, then as the centre and
/// the north/south neighbours of rows one plane later, and as the bottom
/// neighbour two planes later: those reads hit the cache only while three
/// planes fit (the layer condition). Blocks of rows keep three planes of a
/// block within half of the L2 cache; a 200 x 200 plane does not fit whole
/// (3 x 202 x 202 x 8 bytes = 979 KiB against 1 MiB of L2 on the EPYC the
/// benchmark ran on). Blocks are balanced; two halo rows per block are read
/// twice (from cache, mostly).
inline int block_rows(std::ptrdiff_t stride_y, int ny) noexcept {
  static const std::size_t l2 = cache_bytes(2, std::size_t{512} << 10);
  const std::size_t row_bytes = static_cast<std::size_t>(stride_y) * sizeof(double);
  const std::size_t fit = l2 / 2 / (3 * row_bytes);
  const int most = fit > 3 ? static_cast<int>(std::min<std::size_t>(fit - 2, 1 << 20)) : 1;
  if (ny <= most) return ny > 0 ? ny : 1;
  const int blocks = (ny + most - 1) / most;
  return (ny + blocks - 1) / blocks;
}

/// Calls span(j0, j1, k) for every block of rows [j0, j1) (as block_rows()
/// cuts them) of every plane k in [k_begin, k_end) (all planes by default):
/// blocks outermost, then planes.
template <class Span>
void for_each_block_plane(const Field& u, Span&& span, int k_begin = 0, int k_end = -1) {
  const int ny = u.interior()[1];
  const int nz = k_end < 0 ? u.interior()[2] : k_end;
  const int rows = block_rows(u.stride_y(), ny);
  for (int j0 = 0; j0 < ny; j0 += rows) {
    const int j1 = std::min(ny, j0 + rows);
    for (int k = k_begin; k < nz; ++k) span(j0, j1, k);
  }
}

/// Calls row(j, k) for every interior row of planes [k_begin, k_end) (all
/// planes by default), blocked as block_rows() says.
template <class Row>
void for_each_row_blocked(const Field& u, Row&& row, int k_begin = 0, int k_end = -1) {
  for_each_block_plane(
      u,
      [&](int j0, int j1, int k) {
        for (int j = j0; j < j1; ++j) row(j, k);
      },
      k_begin, k_end);
}

}  // namespace asyncsolve::ops::stencil7_detail

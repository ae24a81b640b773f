// Stencil2D: the process grid, the block and its filter phases, the factory,
// and validation against the serial filter (include/asyncsolve/kernels/stencil2d.hpp).
#include "asyncsolve/kernels/stencil2d.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "stencil2d_impl.hpp"

namespace asyncsolve::kernels {
namespace {

constexpr std::array<int, stencil2d_directions> dx{1, -1, 0, 0, 1, -1, 1, -1};
constexpr std::array<int, stencil2d_directions> dy{0, 0, 1, -1, 1, 1, -1, -1};
constexpr std::array<int, stencil2d_directions> opposite{1, 0, 3, 2, 7, 6, 5, 4};

int wrap(int i, int n) noexcept { return ((i % n) + n) % n; }

}  // namespace

int dir2d_dx(int d) noexcept { return dx[d]; }
int dir2d_dy(int d) noexcept { return dy[d]; }
int dir2d_opposite(int d) noexcept { return opposite[d]; }

Stencil2dGrid Stencil2dGrid::create(int rank, int size) {
  int dims[2] = {0, 0};
  par::check_mpi(MPI_Dims_create(size, 2, dims), "MPI_Dims_create");
  Stencil2dGrid g;
  g.px = dims[0];
  g.py = dims[1];
  g.rank = rank;
  g.cx = rank / g.py;
  g.cy = rank % g.py;
  for (int d = 0; d < stencil2d_directions; ++d)
    g.neighbour[d] = g.rank_of(g.cx + dx[d], g.cy + dy[d]);
  return g;
}

int Stencil2dGrid::rank_of(int x, int y) const noexcept { return wrap(x, px) * py + wrap(y, py); }

// ---- the block ----------------------------------------------------------------

Stencil2d::Stencil2d(const Stencil2dGrid& grid, const Stencil2dSpec& spec)
    : grid_(grid), spec_(spec), dom_(static_cast<std::size_t>(spec.local) * spec.local) {
  reset();
}

void Stencil2d::reset() {
  const int n = spec_.local;
  const long x0 = static_cast<long>(grid_.cx) * n;
  const long y0 = static_cast<long>(grid_.cy) * n;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      dom_[static_cast<std::size_t>(y) * n + x] = kernels::stencil2d_initial(x0 + x, y0 + y);
}

long Stencil2d::halo_bytes() const noexcept {
  const long n = spec_.local;
  const long r = spec_.radius;
  return 8 * (4 * n * r + 4 * r * r);
}

namespace detail {

namespace {
/// The range along one axis for step s: border (what the neighbour at s
/// needs) or halo (where its data lands).
void axis_border(int s, int n, int r, int& a0, int& len) noexcept {
  if (s > 0) {
    a0 = n - r;
    len = r;
  } else if (s < 0) {
    a0 = 0;
    len = r;
  } else {
    a0 = 0;
    len = n;
  }
}
void axis_halo(int s, int n, int r, int& a0, int& len) noexcept {
  if (s > 0) {
    a0 = n;
    len = r;
  } else if (s < 0) {
    a0 = -r;
    len = r;
  } else {
    a0 = 0;
    len = n;
  }
}
}  // namespace

Rect2d Stencil2dLayout::border(int d) const noexcept {
  Rect2d b;
  axis_border(dx[d], n, r, b.x0, b.w);
  axis_border(dy[d], n, r, b.y0, b.h);
  return b;
}

Rect2d Stencil2dLayout::halo(int d) const noexcept {
  Rect2d h;
  axis_halo(dx[d], n, r, h.x0, h.w);
  axis_halo(dy[d], n, r, h.y0, h.h);
  return h;
}

Stencil2dBlock::Stencil2dBlock(const Stencil2dGrid& grid, const Stencil2dSpec& spec)
    : Stencil2d(grid, spec), layout_(spec.local, spec.radius), filter_(spec.radius) {}

void Stencil2dBlock::copy_in() noexcept {
  const int n = layout_.n;
  for (int y = 0; y < n; ++y) {
    std::copy_n(dom_.data() + static_cast<std::size_t>(y) * n, n, v_ + layout_.index(0, y));
  }
}

void Stencil2dBlock::filter_rect(int x0, int x1, int y0, int y1) noexcept {
  filter_.apply(v_ + layout_.index(0, 0), layout_.stride, dom_.data(), layout_.n, x0, x1, y0, y1);
}

void Stencil2dBlock::filter_inner() noexcept {
  const double t0 = core::now_s();
  const int n = layout_.n;
  const int r = layout_.r;
  if (n > 2 * r) filter_rect(r, n - r, r, n - r);
  filter_s_ += core::now_s() - t0;
}

void Stencil2dBlock::filter_border() noexcept {
  const double t0 = core::now_s();
  const int n = layout_.n;
  const int r = layout_.r;
  if (n > 2 * r) {
    filter_rect(0, n, 0, r);          // south rows
    filter_rect(0, n, n - r, n);      // north rows
    filter_rect(0, r, r, n - r);      // west columns
    filter_rect(n - r, n, r, n - r);  // east columns
  } else {
    filter_rect(0, n, 0, n);  // no inner region: all of it is border
  }
  filter_s_ += core::now_s() - t0;
}

void Stencil2dBlock::filter_all() noexcept {
  const double t0 = core::now_s();
  filter_rect(0, layout_.n, 0, layout_.n);
  filter_s_ += core::now_s() - t0;
}

void Stencil2dBlock::halo_complete() noexcept {
  if (spec_.corrupt_corner && grid_.rank == grid_.px * grid_.py - 1) {
    v_[layout_.index(layout_.n, layout_.n)] += 1.0;
  }
}

}  // namespace detail

// ---- names and the factory ----------------------------------------------------

bool is_stencil2d_variant(Stencil2dTransport transport, Stencil2dVariant variant) noexcept {
  const bool two_sided = variant == Stencil2dVariant::trivial ||
                         variant == Stencil2dVariant::sendrecv || variant == Stencil2dVariant::halo;
  return two_sided == (transport == Stencil2dTransport::mpi);
}

std::unique_ptr<Stencil2d> make_stencil2d(Stencil2dTransport transport, Stencil2dVariant variant,
                                          const par::Comm& comm, const Stencil2dSpec& spec) {
  if (!is_stencil2d_variant(transport, variant)) {
    throw std::invalid_argument(fmt::format("stencil2d: no variant '{}' over transport '{}'",
                                            core::enum_name(stencil2d_variant_table, variant),
                                            core::enum_name(stencil2d_transport_table, transport)));
  }
  if (spec.radius < 1 || spec.local <= spec.radius) {
    throw std::invalid_argument(
        fmt::format("stencil2d: radius {} with local size {}: expected 1 <= radius < local size",
                    spec.radius, spec.local));
  }
  const Stencil2dGrid grid = Stencil2dGrid::create(comm.rank(), comm.size());
  if (transport == Stencil2dTransport::mpi) {
    return detail::make_stencil2d_mpi(variant, comm, grid, spec);
  }
  const detail::Stencil2dLayout layout(spec.local, spec.radius);
  auto space = transport == Stencil2dTransport::rma ? detail::make_rma_space(comm, layout)
                                                    : detail::make_shmem_space(comm, layout);
  return detail::make_stencil2d_onesided(variant, std::move(space), grid, spec);
}

// ---- by name ---------------------------------------------------------------------

std::vector<std::string> stencil2d_transport_names() {
  return {stencil2d_transport_table.begin(), stencil2d_transport_table.end()};
}

std::vector<std::string> stencil2d_variant_names(std::string_view transport) {
  const auto t = core::enum_parse<Stencil2dTransport>(stencil2d_transport_table, transport);
  std::vector<std::string> out;
  if (!t) return out;
  for (std::size_t v = 0; v < stencil2d_variant_table.size(); ++v) {
    if (is_stencil2d_variant(*t, static_cast<Stencil2dVariant>(v))) {
      out.emplace_back(stencil2d_variant_table[v]);
    }
  }
  return out;
}

bool is_stencil2d_variant(std::string_view transport, std::string_view variant) {
  const auto t = core::enum_parse<Stencil2dTransport>(stencil2d_transport_table, transport);
  const auto v = core::enum_parse<Stencil2dVariant>(stencil2d_variant_table, variant);
  return t && v && is_stencil2d_variant(*t, *v);
}

std::unique_ptr<Stencil2d> make_stencil2d(std::string_view transport, std::string_view variant,
                                          const par::Comm& comm, const Stencil2dSpec& spec) {
  const auto t = core::enum_parse<Stencil2dTransport>(stencil2d_transport_table, transport);
  const auto v = core::enum_parse<Stencil2dVariant>(stencil2d_variant_table, variant);
  if (!t || !v) {
    throw std::invalid_argument(
        fmt::format("stencil2d: no variant '{}' over transport '{}'", variant, transport));
  }
  return make_stencil2d(*t, *v, comm, spec);
}

// ---- validation -----------------------------------------------------------------

std::vector<double> stencil2d_reference(const par::Comm& comm, const Stencil2dGrid& grid,
                                        const Stencil2dSpec& spec, long iterations) {
  const int n = spec.local;
  const std::size_t block = static_cast<std::size_t>(n) * n;
  std::vector<double> packed;
  if (comm.is_root()) {
    const int size_x = grid.px * n;
    const int size_y = grid.py * n;
    const std::vector<double> global =
        kernels::filter2d_serial(kernels::Filter2d(spec.radius), size_x, size_y, iterations);
    packed.resize(block * static_cast<std::size_t>(comm.size()));
    for (int q = 0; q < comm.size(); ++q) {
      const int qx = q / grid.py;
      const int qy = q % grid.py;
      double* dst = packed.data() + block * q;
      for (int y = 0; y < n; ++y) {
        const double* src = global.data() + (static_cast<std::size_t>(qy) * n + y) * size_x +
                            static_cast<std::size_t>(qx) * n;
        std::copy_n(src, n, dst + static_cast<std::size_t>(y) * n);
      }
    }
  }
  std::vector<double> mine(block);
  par::check_mpi(MPI_Scatter(packed.data(), static_cast<int>(block), MPI_DOUBLE, mine.data(),
                             static_cast<int>(block), MPI_DOUBLE, 0, comm.get()),
                 "MPI_Scatter");
  return mine;
}

Stencil2dCheck stencil2d_compare(const par::Comm& comm, const Stencil2dGrid& grid,
                                 const Stencil2dSpec& spec, std::span<const double> field,
                                 std::span<const double> reference, double tol) {
  const int n = spec.local;
  const long long size_x = static_cast<long long>(grid.px) * n;
  long long first = LLONG_MAX;
  long long wrong = 0;
  double values[2] = {0.0, 0.0};
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * n + x;
      const double expected = reference[i];
      const double got = field[i];
      if (std::abs(got - expected) <= tol * std::max(1.0, std::abs(expected))) continue;
      ++wrong;
      const long long gx = static_cast<long long>(grid.cx) * n + x;
      const long long gy = static_cast<long long>(grid.cy) * n + y;
      const long long linear = gy * size_x + gx;
      if (linear < first) {
        first = linear;
        values[0] = got;
        values[1] = expected;
      }
    }
  }
  long long global_first = LLONG_MAX;
  par::check_mpi(MPI_Allreduce(&first, &global_first, 1, MPI_LONG_LONG, MPI_MIN, comm.get()),
                 "MPI_Allreduce");
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  Stencil2dCheck check;
  if (global_first == LLONG_MAX) return check;
  if (first != global_first) values[0] = values[1] = 0.0;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  check.ok = false;
  check.gx = static_cast<long>(global_first % size_x);
  check.gy = static_cast<long>(global_first / size_x);
  check.got = values[0];
  check.expected = values[1];
  check.wrong_points = static_cast<long>(wrong);
  return check;
}

}  // namespace asyncsolve::kernels
